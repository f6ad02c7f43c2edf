/* SPDX-License-Identifier: Apache-2.0 */
/* Completing a topology whose source left facts out.
 * Cloud NCCL topology files (AWS p4d/p4de, Azure NDv4...) and hwloc exports made without NVML
 * list GPUs and NICs as bare PCI devices: NCCL fills NVLinks (NVML) and NIC speeds (its net
 * plugin) from the live node. When the PCI ids name a product whose baseboard or port speed is
 * fixed, the same facts follow from the ids; anything else stays unknown. */
#include "topo.h"

#include <stddef.h>

struct gpu_board {
    uint16_t device;
    int links;         /* NVLink links per GPU on its baseboard */
    bool switch_board; /* 8- and 16-GPU baseboards connect the GPUs through NVSwitch */
};

/* Product facts (NVIDIA data sheets): links per GPU of each SXM part. 4-GPU baseboards connect
 * the GPUs directly (all links spread over the 3 peers); V100 SXM2 and P100 boards are meshes. */
static const struct gpu_board g_boards[] = {
    {0x15f9, 4, false}, /* P100 SXM2: NVLink1 mesh */
    {0x1db1, 6, false}, /* V100 SXM2 16GB: hybrid cube mesh (DGX-1, NDv2) */
    {0x1db5, 6, false}, /* V100 SXM2 32GB */
    {0x1df5, 6, false}, /* V100 SXM2 16GB */
    {0x1db8, 6, true},  /* V100 SXM3 32GB: DGX-2 / HGX-2 NVSwitch */
    {0x20b0, 12, true}, /* A100 SXM4 40GB */
    {0x20b2, 12, true}, /* A100 SXM4 80GB */
    {0x20b3, 12, true}, /* A100 SXM 64GB */
    {0x20f3, 8, true},  /* A800 SXM4 80GB: 8 links */
    {0x2330, 18, true}, /* H100 SXM5 80GB */
    {0x2324, 8, true},  /* H800 SXM5: 8 links */
    {0x2329, 18, true}, /* H20 */
    {0x2335, 18, true}, /* H200 SXM 141GB */
    {0x2901, 18, true}, /* B200 */
};

struct nic_part {
    uint16_t vendor, device;
    int speed_mbps; /* port speed of the part at its highest rate */
};

static const struct nic_part g_nics[] = {
    {0x15b3, 0x1013, 100000}, /* ConnectX-4 (EDR / 100GbE) */
    {0x15b3, 0x1014, 100000}, /* ConnectX-4 VF */
    {0x15b3, 0x1017, 100000}, /* ConnectX-5 */
    {0x15b3, 0x1018, 100000}, /* ConnectX-5 VF */
    {0x15b3, 0x1019, 100000}, /* ConnectX-5 Ex */
    {0x15b3, 0x101a, 100000}, /* ConnectX-5 Ex VF */
    {0x15b3, 0x101b, 200000}, /* ConnectX-6 (HDR / 200GbE) */
    {0x15b3, 0x101c, 200000}, /* ConnectX-6 VF */
    {0x15b3, 0x101d, 100000}, /* ConnectX-6 Dx (100GbE per port) */
    {0x15b3, 0x1021, 400000}, /* ConnectX-7 (NDR / 400GbE) */
    {0x15b3, 0x1023, 800000}, /* ConnectX-8 (XDR) */
    {0x15b3, 0xa2d6, 100000}, /* BlueField-2 */
    {0x15b3, 0xa2dc, 400000}, /* BlueField-3 */
    {0x1d0f, 0xefa0, 100000}, /* EFA gen 1 (p4d: 4 x 100 Gb/s) */
    {0x1d0f, 0xefa1, 100000}, /* EFA gen 2 (p5: 32 x 100 Gb/s) */
    {0x1d0f, 0xefa2, 200000}, /* EFA gen 3 (p5en: 16 x 200 Gb/s) */
};

static const struct gpu_board *board_of(uint16_t vendor, uint16_t device)
{
    if (vendor != 0x10de)
        return NULL;
    for (size_t i = 0; i < sizeof(g_boards) / sizeof(g_boards[0]); i++)
        if (g_boards[i].device == device)
            return &g_boards[i];
    return NULL;
}

static unsigned complete_nvlink(struct rail_topo *t)
{
    const struct gpu_board *b;
    if (t->n_gpus < 2 || t->n_gpus > RAIL_TOPO_MAX_GPUS)
        return 0;
    b = board_of(t->gpus[0].pci_vendor, t->gpus[0].pci_device);
    if (!b)
        return 0;
    for (int g = 0; g < t->n_gpus; g++)
        if (t->gpus[g].nvlinks != 0 || t->gpus[g].pci_vendor != t->gpus[0].pci_vendor ||
            t->gpus[g].pci_device != t->gpus[0].pci_device)
            return 0; /* the source gave NVLinks, or the GPUs differ: nothing to infer */
    /* Mesh parts: only the 8-GPU x86 baseboard (DGX-1 layout) has a fixed wiring; 4-GPU POWER
     * systems (AC922) spend half their links on the CPU. */
    if (!b->switch_board && (t->n_gpus != 8 || t->cpu_vendor == RAIL_CPU_POWER))
        return 0;
    if (b->switch_board && !t->nvswitch) {
        /* SXM boards come with 4 GPUs (direct links) or 8/16 GPUs (NVSwitch). */
        if (t->n_gpus != 4 && t->n_gpus != 8 && t->n_gpus != 16)
            return 0;
        t->nvswitch = t->n_gpus >= 8;
    }
    for (int g = 0; g < t->n_gpus; g++)
        t->gpus[g].nvlinks = b->links;
    return RAIL_TOPO_INFERRED_NVLINK;
}

static unsigned complete_nic_speed(struct rail_topo *t)
{
    unsigned done = 0;
    for (int n = 0; n < t->n_nics && n < RAIL_TOPO_MAX_NICS; n++) {
        struct rail_nic *nic = &t->nics[n];
        if (nic->speed_mbps > 0 || !nic->pci_vendor)
            continue;
        for (size_t i = 0; i < sizeof(g_nics) / sizeof(g_nics[0]); i++)
            if (g_nics[i].vendor == nic->pci_vendor && g_nics[i].device == nic->pci_device) {
                nic->speed_mbps = g_nics[i].speed_mbps;
                done = RAIL_TOPO_INFERRED_NIC_SPEED;
                break;
            }
    }
    return done;
}

unsigned rail_topo_complete(struct rail_topo *t)
{
    if (!t)
        return 0;
    return complete_nvlink(t) | complete_nic_speed(t);
}
