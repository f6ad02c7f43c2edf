/* SPDX-License-Identifier: Apache-2.0 */
/* The node topology as the cost model and the net plugin read it: a plain C struct, filled from
 * NCCL's topology XML (NCCL_TOPO_FILE), from hwloc plus sysfs (live node or fixtures), or from a
 * built-in profile. No I/O happens after it is filled. */
#ifndef NCCL_RAIL_TOPO_H
#define NCCL_RAIL_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAIL_TOPO_MAX_GPUS 64
#define RAIL_TOPO_MAX_NICS 64
#define RAIL_TOPO_NAME_LEN 64

/* NCCL's path classes (src/include/graph.h), same numbers. */
enum rail_path {
    RAIL_PATH_LOC = 0,
    RAIL_PATH_NVL = 1,
    RAIL_PATH_NVB = 2,
    RAIL_PATH_C2C = 3,
    RAIL_PATH_PIX = 4,
    RAIL_PATH_PXB = 5,
    RAIL_PATH_P2C = 6,
    RAIL_PATH_PXN = 7,
    RAIL_PATH_PHB = 8,
    RAIL_PATH_SYS = 9,
    RAIL_PATH_NET = 10,
    RAIL_PATH_DIS = 11,
};
const char *rail_path_name(enum rail_path p);
/* Accepts NCCL's names (LOC..DIS, case-insensitive) and legacy integers 0..4; -1 if invalid. */
int rail_path_parse(const char *s);

enum rail_link_layer { RAIL_LINK_UNKNOWN = 0, RAIL_LINK_IB = 1, RAIL_LINK_ETH = 2 };
enum rail_cpu_vendor {
    RAIL_CPU_UNKNOWN = 0,
    RAIL_CPU_INTEL,
    RAIL_CPU_AMD,
    RAIL_CPU_ARM,
    RAIL_CPU_POWER,
};
enum rail_topo_source {
    RAIL_TOPO_SRC_NONE = 0,
    RAIL_TOPO_SRC_NCCL_XML,
    RAIL_TOPO_SRC_HWLOC,
    RAIL_TOPO_SRC_PROFILE,
};

struct rail_gpu {
    char busid[16];  /* "0000:4e:00.0", lower case */
    int sm;          /* compute capability ×10 (90 = Hopper); 0 when unknown */
    int numa;        /* NUMA node, -1 unknown */
    int nvlinks;     /* NVLink links leaving this GPU (to GPUs or NVSwitches) */
    int pcie_gen;    /* 1..6, 0 unknown: negotiated max of GPU link and its upstream port */
    int pcie_width;  /* lanes, 0 unknown */
    float pcie_gbps; /* GB/s of that link, NCCL units (Gen4 x16 = 24) */
    bool gdr;        /* GPU allows GPUDirect RDMA (NCCL XML gpu gdr attr); unknown counts as true */
    uint16_t pci_vendor, pci_device; /* 0 when the source does not say */
};

struct rail_nic {
    char name[RAIL_TOPO_NAME_LEN]; /* "mlx5_0" */
    char busid[16];
    int port;         /* 1-based, 0 unknown */
    int speed_mbps;   /* port speed in Mb/s (NCCL units, NDR 4x = 400000), 0 unknown */
    int link_layer;   /* enum rail_link_layer */
    int numa;         /* -1 unknown */
    int pcie_gen;     /* 0 unknown */
    int pcie_width;   /* 0 unknown */
    float pcie_gbps;  /* 0 unknown */
    bool active;      /* port ACTIVE (unknown counts as active) */
    bool gdr;         /* GPUDirect RDMA possible for this NIC (peermem/dma-buf) */
    bool virtual_nic; /* not a PCI device (EFA in a VM XML, rxe, ...) */
    uint16_t pci_vendor, pci_device; /* 0 when the source does not say */
};

struct rail_topo {
    int source;       /* enum rail_topo_source */
    char origin[256]; /* file or profile name, for logs */
    int n_gpus;
    struct rail_gpu gpus[RAIL_TOPO_MAX_GPUS];
    int n_nics;
    struct rail_nic nics[RAIL_TOPO_MAX_NICS];
    /* path[g][n]: NCCL path class from GPU g to NIC n (enum rail_path). */
    uint8_t path[RAIL_TOPO_MAX_GPUS][RAIL_TOPO_MAX_NICS];
    bool nvswitch;   /* GPUs are connected through NVSwitch (NVLS-capable fabric) */
    int nvlink_gen;  /* 1..5, 0 = no NVLink */
    float nvlink_bw; /* GB/s per GPU over NVLink, one direction (links × per-link bw), 0 if none */
    int cpu_vendor;  /* enum rail_cpu_vendor */
    int n_numa;      /* NUMA nodes seen, 0 unknown */
    float inter_cpu_bw; /* GB/s of the CPU-CPU link (NCCL's table), 0 unknown */
    bool gdr;           /* GDR possible for at least one GPU/NIC pair at <= PXB */
    unsigned inferred;  /* RAIL_TOPO_INFERRED_*: facts completed from PCI ids (topo_complete.c) */
};

/* Facts a source left out and rail_topo_complete() filled in from PCI device ids. */
#define RAIL_TOPO_INFERRED_NVLINK    0x1u /* NVLink count / NVSwitch of a known baseboard */
#define RAIL_TOPO_INFERRED_NIC_SPEED 0x2u /* NIC port speed of a known adapter */
/* Fill facts the source did not give, from PCI ids of known products; returns what was filled.
 * Called by every loader; never overrides a fact the source gave. */
unsigned rail_topo_complete(struct rail_topo *t);

/* Derived per-GPU network facts the cost model uses. */
struct rail_gpu_net {
    int n_nearest;      /* NICs at the best path class of this GPU */
    int best_path;      /* enum rail_path of the nearest NIC, RAIL_PATH_DIS if none */
    float nearest_gbps; /* sum of nearest NICs' speed in GB/s, divided by GPUs sharing them */
};

/* Best (lowest) path class from GPU g to any active NIC; RAIL_PATH_DIS when none. */
int rail_topo_gpu_best_path(const struct rail_topo *t, int g);

/* Fill out[gpu] for every GPU; a NIC shared by k GPUs counts 1/k for each. Returns 0 or -EINVAL. */
int rail_topo_gpu_net(const struct rail_topo *t, int gpu, struct rail_gpu_net *out);

/* Loaders. All return 0 on success or a negative errno, with a reason in err.
 * No loader keeps a pointer into its input. */
int rail_topo_load_nccl_xml(const char *path, struct rail_topo *t, char *err, size_t errlen);
int rail_topo_load_hwloc(const char *xml_path_or_null, const char *sysfs_root, struct rail_topo *t,
                         char *err, size_t errlen);
int rail_topo_load_profile(const char *name, struct rail_topo *t, char *err, size_t errlen);
/* Names of the built-in profiles, NULL-terminated. */
const char *const *rail_topo_profile_names(void);

/* The plugin's order: NCCL_RAIL_TOPO_PROFILE, then NCCL_TOPO_FILE, then hwloc (HWLOC_XMLFILE or
 * live) with NCCL_RAIL_SYSFS_ROOT. Logs which source was used and why others were skipped. */
int rail_topo_discover(struct rail_topo *t, char *err, size_t errlen);

/* Helpers used by the loaders and tests. */
int rail_sm_from_pci_device(uint16_t vendor, uint16_t device); /* 0 if unknown */
float rail_pcie_gbps(int gen, int width);                      /* NCCL's units */
float rail_nvlink_bw_per_link(int sm);                         /* NCCL's units, GB/s */

#endif
