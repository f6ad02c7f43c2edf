/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the topology loaders (topo_*.c). Not part of the public topology API. */
#ifndef NCCL_RAIL_TOPO_INTERNAL_H
#define NCCL_RAIL_TOPO_INTERNAL_H

#include "topo.h"

#include <stdint.h>

/* Deepest PCI switch chain the classifier follows (real servers have 1-3 levels). */
#define RAIL_TOPO_MAX_CHAIN 16

/* Where a GPU or NIC hangs in the PCI tree, NCCL's way: the PCI switches (switch upstream ports;
 * downstream and root ports are not nodes) from the nearest to the farthest, and the CPU/NUMA node
 * the tree is attached to. Switch identities are opaque keys (a tree-node pointer). */
struct rail_pci_chain {
    int n;
    uintptr_t sw[RAIL_TOPO_MAX_CHAIN];
    int cpu; /* key of the CPU (NUMA) node the chain ends at */
};

/* NCCL's path class between two devices: the first common switch at positions (i, j) gives PIX
 * when both sit directly under it (i == j == 0), PXB otherwise; without a common switch the path
 * crosses the CPU: PHB on the same CPU node, SYS across CPU nodes. */
enum rail_path rail_path_classify(const struct rail_pci_chain *a, const struct rail_pci_chain *b);

/* NCCL's flattening of Broadcom PEX switches that present one physical switch as two levels
 * (Gen4 PEX88xxx, Gen5 PEX89xxx): id = vendor<<48 | device<<32 | subvendor<<16 | subdevice.
 * Returns 4 or 5 when id matches at the given level (0 = parent, 1 = child), 0 otherwise. */
int rail_bcm_switch_gen(uint64_t id, int level);

/* Zero t and set the fields whose "unknown" is not 0. */
void rail_topo_reset(struct rail_topo *t, int source, const char *origin);

/* Derive the summary fields (nvlink_gen, nvlink_bw, gdr) from the per-device fields and paths. */
void rail_topo_finalize(struct rail_topo *t);

/* "16.0 GT/s PCIe", "8 GT/s", "32 GT/s PCIe/s" -> PCIe generation 1..6; 0 when unknown. */
int rail_pcie_gen_from_text(const char *s);
/* NCCL units from hwloc's aggregate link GB/s (lanes x GT/s x encoding / 8); 0 when unknown. */
float rail_pcie_gbps_from_hwloc(float hwloc_gbps);

/* NVLink generation from the compute capability (sm60 -> 1 ... sm100 -> 5); 0 when unknown. */
int rail_nvlink_gen_from_sm(int sm);

/* NCCL's inter-CPU bandwidth table (topo.h: BDW/SKL/SRP/ERP QPI, AMD, P9, ARM) in GB/s.
 * family/model are x86 CPUID values (-1 unknown). */
float rail_inter_cpu_bw(int vendor, int family, int model);
/* CPU vendor from NCCL XML / hwloc strings: arch "x86_64"/"ppc64le"/"aarch64"/"arm64" and vendor
 * "GenuineIntel"/"AuthenticAMD". Either may be NULL. */
int rail_cpu_vendor_from_strings(const char *arch, const char *vendor);

/* Canonical lower-case "dddd:bb:dd.f" from a bus id string; -EINVAL if malformed. */
int rail_busid_normalize(const char *in, char out[16]);
/* Unknown GPU compute capabilities (sm 0) filled from (bus id, sm) pairs, matched case-blind;
 * returns how many were filled (pure). */
int rail_topo_fill_sm(struct rail_topo *t, const char (*busid)[16], const int *sm, int n);
/* The same from the live CUDA driver: the count filled, or -errno when no driver is usable. */
int rail_topo_fill_sm_from_cuda(struct rail_topo *t);
/* libxml2's last error of a parser context (xmlParserCtxtPtr) as one line in msg ("malformed
 * XML" when it has none); returns its line number, 0 when unknown. */
int rail_xml_last_error(void *parser_ctxt, char *msg, size_t len);
/* NCCL's busIdToInt64 (hex digits, ':' and '.' skipped, never fails). */
uint64_t rail_busid_to_u64(const char *s);

/* rail_topo_load_nccl_xml that also reports which NICs had no gdr attribute (bit n = NIC n), so
 * that the caller can decide GDR for them from the node (peermem). */
int rail_topo_load_nccl_xml_ex(const char *path, struct rail_topo *t, uint64_t *nic_gdr_unknown,
                               char *err, size_t errlen);

#endif
