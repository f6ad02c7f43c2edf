/* SPDX-License-Identifier: Apache-2.0 */
/* Built-in topology profiles (NCCL_RAIL_TOPO_PROFILE): 8-GPU NVSwitch servers described from
 * public facts, for offline analysis and for nodes whose discovery is poor (VMs).
 *
 * Every profile is a set of "groups": GPUs and the NICs that share their PCIe switch. A GPU's
 * path to the NICs of its own group is the profile's local class (PIX or PXB), to other NICs on
 * the same NUMA node PHB, and SYS across NUMA nodes, as NCCL would classify them. Bus ids and
 * NIC names are synthetic (GPU group k at bus 0x18 + 0x10 k, its NICs on the following buses):
 * the cost model does not use them. NVLink bandwidth follows from sm and link count through
 * NCCL's per-link numbers (rail_nvlink_bw_per_link). Inter-CPU bandwidth is NCCL's table. */
#include "strutil.h"
#include "topo.h"
#include "topo_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define PROFILE_GPUS 8

struct profile {
    const char *name;
    struct {
        int sm;
        int nvlinks;  /* per GPU, all to NVSwitches */
        int pcie_gen; /* x16 */
    } gpu;
    int gpus_per_group; /* GPUs sharing one PCIe switch complex */
    int local_path;     /* GPU -> NIC of its own group */
    struct {
        int per_group; /* NICs in a group's complex */
        int speed_mbps;
        int link_layer;
        int pcie_gen;     /* x16 */
        const char *name; /* "mlx5" -> mlx5_<n>; "rdmap" -> rdmap<bus>s0 (EFA naming) */
    } nic;
    struct {
        int vendor;
        int family, model; /* x86 CPUID, for NCCL's inter-CPU bandwidth table */
        int n_numa;
        int group_numa[PROFILE_GPUS]; /* NUMA node of each group */
    } cpu;
};

/* Parts several profiles share: H100 SXM (sm90, 18 NVLink4 links, PCIe Gen5 x16), one 400 Gb/s
 * InfiniBand ConnectX-7 (mlx5, Gen5 x16) per GPU, 2 NUMA nodes with 4 GPUs each. */
/* clang-format off */
#define GPU_H100_SXM        {.sm = 90, .nvlinks = 18, .pcie_gen = 5}
#define NIC_PER_GPU_400G_IB {.per_group = 1, .speed_mbps = 400000, .link_layer = RAIL_LINK_IB, \
                             .pcie_gen = 5, .name = "mlx5"}
#define NUMA_2_BY_4         .n_numa = 2, .group_numa = {0, 0, 0, 0, 1, 1, 1, 1}
/* clang-format on */

static const struct profile g_profiles[] = {
    /* NVIDIA DGX A100 (DGX A100 user guide and datasheet; NCCL dump and nvidia-smi topo -m in
     * NVIDIA/nccl#1505): 8x A100 SXM4 (sm80), 6 NVSwitches, 12 NVLink3 links per GPU (two to
     * each NVSwitch); 8 compute HCAs ConnectX-6 HDR 200 Gb/s InfiniBand, one per GPU, PCIe Gen4
     * x16. Each GPU pair shares a two-level Broadcom PEX88096 complex with two HCAs: GPU->HCA is
     * PXB for both HCAs of the pair. 2x AMD EPYC 7742 (Rome) in NPS4 mode: 8 NUMA nodes, the
     * GPU pairs sit on NUMA 3, 1, 7 and 5, so every other HCA is SYS. The two storage HCAs are
     * not modelled. */
    {.name = "dgx-a100",
     .gpu = {.sm = 80, .nvlinks = 12, .pcie_gen = 4},
     .gpus_per_group = 2,
     .local_path = RAIL_PATH_PXB,
     .nic = {.per_group = 2,
             .speed_mbps = 200000,
             .link_layer = RAIL_LINK_IB,
             .pcie_gen = 4,
             .name = "mlx5"},
     .cpu = {.vendor = RAIL_CPU_AMD,
             .family = 23,
             .model = 49,
             .n_numa = 8,
             .group_numa = {3, 1, 7, 5}}},
    /* NVIDIA DGX H100 (DGX H100 user guide): 8x H100 SXM5 (sm90), 4 NVSwitch chips, 18 NVLink4
     * links per GPU; 8x ConnectX-7 NDR 400 Gb/s InfiniBand, one per GPU behind the GPU's PCIe
     * Gen5 switch (PIX); 2x Intel Xeon Platinum 8480C (Sapphire Rapids, family 6 model 0x8F),
     * GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1. */
    {.name = "dgx-h100",
     .gpu = GPU_H100_SXM,
     .gpus_per_group = 1,
     .local_path = RAIL_PATH_PIX,
     .nic = NIC_PER_GPU_400G_IB,
     .cpu = {.vendor = RAIL_CPU_INTEL, .family = 6, .model = 0x8F, NUMA_2_BY_4}},
    /* NVIDIA HGX/DGX B200 (DGX B200 datasheet): 8x B200 (sm100), NVLink5 with 18 links per GPU
     * (1.8 TB/s) through NVSwitch; 8x ConnectX-7 400 Gb/s, one per GPU behind its PCIe Gen5
     * switch (PIX); 2x Intel Xeon Platinum 8570 (Emerald Rapids, family 6 model 0xCF), 4 GPUs
     * per NUMA node. */
    {.name = "hgx-b200",
     .gpu = {.sm = 100, .nvlinks = 18, .pcie_gen = 5},
     .gpus_per_group = 1,
     .local_path = RAIL_PATH_PIX,
     .nic = NIC_PER_GPU_400G_IB,
     .cpu = {.vendor = RAIL_CPU_INTEL, .family = 6, .model = 0xCF, NUMA_2_BY_4}},
    /* AWS p5.48xlarge (AWS instance documentation; aws-ofi-nccl topology/p5.48xl-topo.xml):
     * 8x H100 SXM (sm90) with NVSwitch, 18 NVLink4 links per GPU; 3200 Gb/s EFA as 32 EFA
     * devices of 100 Gb/s, four per GPU behind the GPU's PCIe switch (PIX, links at 32 GT/s x16
     * in the AWS file); EFA is neither IB nor Ethernet at the verbs level (link layer unknown)
     * but is a real PCI function. 2x AMD EPYC (Milan), 2 NUMA nodes with 4 switches each. */
    {.name = "aws-p5",
     .gpu = GPU_H100_SXM,
     .gpus_per_group = 1,
     .local_path = RAIL_PATH_PIX,
     .nic = {.per_group = 4,
             .speed_mbps = 100000,
             .link_layer = RAIL_LINK_UNKNOWN,
             .pcie_gen = 5,
             .name = "rdmap"},
     .cpu = {.vendor = RAIL_CPU_AMD, .family = 25, .model = 1, NUMA_2_BY_4}},
    /* Azure ND H100 v5 (Azure documentation; azhpc-images topology/ndv5-topo.xml): 8x H100 SXM
     * (sm90) with NVSwitch, 18 NVLink4 links per GPU; 8x NDR 400 Gb/s InfiniBand, one per GPU,
     * GPU and NIC under one virtual switch (PIX) at 32 GT/s x16; Intel Sapphire Rapids (family
     * 6 model 143 in the Azure file), 4 GPU/NIC pairs per NUMA node. */
    {.name = "azure-ndv5",
     .gpu = GPU_H100_SXM,
     .gpus_per_group = 1,
     .local_path = RAIL_PATH_PIX,
     .nic = NIC_PER_GPU_400G_IB,
     .cpu = {.vendor = RAIL_CPU_INTEL, .family = 6, .model = 143, NUMA_2_BY_4}},
};

#define N_PROFILES (sizeof(g_profiles) / sizeof(g_profiles[0]))

static const char *const g_names[] = {"dgx-a100", "dgx-h100",   "hgx-b200",
                                      "aws-p5",   "azure-ndv5", NULL};
_Static_assert(sizeof(g_names) / sizeof(g_names[0]) == N_PROFILES + 1,
               "one name per profile, NULL-terminated");

const char *const *rail_topo_profile_names(void)
{
    return g_names;
}

static void build(const struct profile *p, struct rail_topo *t)
{
    int groups = PROFILE_GPUS / p->gpus_per_group;
    rail_topo_reset(t, RAIL_TOPO_SRC_PROFILE, p->name);
    t->n_gpus = PROFILE_GPUS;
    t->n_nics = groups * p->nic.per_group;
    for (int g = 0; g < PROFILE_GPUS; g++) {
        struct rail_gpu *gpu = &t->gpus[g];
        int group = g / p->gpus_per_group;
        snprintf(gpu->busid, sizeof(gpu->busid), "0000:%02x:00.0",
                 0x18 + 0x10 * group + g % p->gpus_per_group);
        gpu->sm = p->gpu.sm;
        gpu->numa = p->cpu.group_numa[group];
        gpu->nvlinks = p->gpu.nvlinks;
        gpu->pcie_gen = p->gpu.pcie_gen;
        gpu->pcie_width = 16;
        gpu->pcie_gbps = rail_pcie_gbps(gpu->pcie_gen, 16);
        gpu->gdr = true;
    }
    for (int n = 0; n < t->n_nics; n++) {
        struct rail_nic *nic = &t->nics[n];
        int group = n / p->nic.per_group;
        int bus = 0x18 + 0x10 * group + p->gpus_per_group + n % p->nic.per_group;
        snprintf(nic->busid, sizeof(nic->busid), "0000:%02x:00.0", bus);
        if (strcmp(p->nic.name, "rdmap") == 0)
            snprintf(nic->name, sizeof(nic->name), "rdmap%ds0", bus);
        else
            snprintf(nic->name, sizeof(nic->name), "%s_%d", p->nic.name, n);
        nic->port = 1;
        nic->speed_mbps = p->nic.speed_mbps;
        nic->link_layer = p->nic.link_layer;
        nic->numa = p->cpu.group_numa[group];
        nic->pcie_gen = p->nic.pcie_gen;
        nic->pcie_width = 16;
        nic->pcie_gbps = rail_pcie_gbps(nic->pcie_gen, 16);
        nic->active = true;
        nic->gdr = true;
        nic->virtual_nic = false;
    }
    for (int g = 0; g < t->n_gpus; g++)
        for (int n = 0; n < t->n_nics; n++) {
            int gg = g / p->gpus_per_group, ng = n / p->nic.per_group;
            t->path[g][n] = (uint8_t)(gg == ng                             ? p->local_path
                                      : t->gpus[g].numa == t->nics[n].numa ? RAIL_PATH_PHB
                                                                           : RAIL_PATH_SYS);
        }
    t->nvswitch = true;
    t->cpu_vendor = p->cpu.vendor;
    t->n_numa = p->cpu.n_numa;
    t->inter_cpu_bw = rail_inter_cpu_bw(p->cpu.vendor, p->cpu.family, p->cpu.model);
    rail_topo_finalize(t);
}

int rail_topo_load_profile(const char *name, struct rail_topo *t, char *err, size_t errlen)
{
    char known[128] = "";
    if (!t)
        return rail_fail(err, errlen, "no topology to fill");
    for (size_t i = 0; name && i < N_PROFILES; i++)
        if (strcasecmp(name, g_profiles[i].name) == 0) {
            build(&g_profiles[i], t);
            return 0;
        }
    for (size_t i = 0; i < N_PROFILES; i++) {
        size_t l = strlen(known);
        snprintf(known + l, sizeof(known) - l, "%s%s", i ? ", " : "", g_profiles[i].name);
    }
    return rail_fail(err, errlen, "unknown topology profile '%s' (known: %s)",
                     name ? name : "(null)", known);
}
