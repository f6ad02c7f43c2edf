/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-built node topologies for the cost-model tests (no loader involved). Numbers follow the
 * public system descriptions: DGX H100 (8 GPUs, 18 NVLink4 each through NVSwitch, 8x400G NDR IB,
 * one NIC per GPU behind the same PCIe switch), p4d.24xlarge (8 A100, NVSwitch, 4x100G EFA, two
 * GPUs per EFA), g5.48xlarge (8 A10G on PCIe Gen4, one 100G EFA, no GPUDirect RDMA), g4dn.12xlarge
 * (4 T4 on PCIe Gen3, one 50G EFA), a B200 node (NVLink5) and a 1-GPU node. */
#ifndef NCCL_RAIL_TEST_COST_MODEL_TOPOS_H
#define NCCL_RAIL_TEST_COST_MODEL_TOPOS_H

#include <stdio.h>
#include <string.h>

#include "model/cost_model.h"

static inline void topo_add_gpus(struct rail_topo *t, int n, int sm, int gen, float pcie_gbps)
{
    t->n_gpus = n;
    for (int g = 0; g < n; g++) {
        struct rail_gpu *gpu = &t->gpus[g];
        snprintf(gpu->busid, sizeof(gpu->busid), "0000:%02x:00.0",
                 (unsigned)(0x10 + g * 0x10) & 0xffu);
        gpu->sm = sm;
        gpu->numa = g < n / 2 ? 0 : 1;
        gpu->pcie_gen = gen;
        gpu->pcie_width = 16;
        gpu->pcie_gbps = pcie_gbps;
    }
}

static inline void topo_add_nic(struct rail_topo *t, const char *name, int speed_mbps, int link,
                                bool gdr, bool virt)
{
    struct rail_nic *nic = &t->nics[t->n_nics];
    snprintf(nic->name, sizeof(nic->name), "%s", name);
    snprintf(nic->busid, sizeof(nic->busid), "0000:%02x:00.1",
             (unsigned)(0x18 + t->n_nics * 0x10) & 0xffu);
    nic->port = 1;
    nic->speed_mbps = speed_mbps;
    nic->link_layer = link;
    nic->numa = -1;
    nic->active = true;
    nic->gdr = gdr;
    nic->virtual_nic = virt;
    t->n_nics++;
}

/* GPU g and NIC n: PIX when NIC n serves GPU g (gpus_per_nic GPUs per NIC), PHB on the same
 * socket, SYS across sockets. */
static inline void topo_set_paths(struct rail_topo *t, int gpus_per_nic)
{
    for (int g = 0; g < t->n_gpus; g++)
        for (int n = 0; n < t->n_nics; n++) {
            int same_socket = (g < t->n_gpus / 2) == (n < (t->n_nics + 1) / 2);
            if (t->n_nics == 1)
                same_socket = g < t->n_gpus / 2;
            t->path[g][n] = g / gpus_per_nic == n ? RAIL_PATH_PIX
                            : same_socket         ? RAIL_PATH_PHB
                                                  : RAIL_PATH_SYS;
        }
}

static inline void topo_nvswitch(struct rail_topo *t, int gen, int links, float per_link)
{
    t->nvswitch = true;
    t->nvlink_gen = gen;
    t->nvlink_bw = (float)links * per_link;
    for (int g = 0; g < t->n_gpus; g++)
        t->gpus[g].nvlinks = links;
}

static inline void topo_common(struct rail_topo *t, const char *origin)
{
    memset(t, 0, sizeof(*t));
    t->source = RAIL_TOPO_SRC_PROFILE;
    snprintf(t->origin, sizeof(t->origin), "%s", origin);
    t->cpu_vendor = RAIL_CPU_INTEL;
    t->n_numa = 2;
}

/* 8xH100 SXM, NVSwitch (18 NVLink4 x 20.6), 8x400G InfiniBand NICs, one per GPU at PIX. */
static inline void topo_h100(struct rail_topo *t)
{
    topo_common(t, "test-dgx-h100");
    topo_add_gpus(t, 8, 90, 5, 48.0f);
    topo_nvswitch(t, 4, 18, 20.6f);
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "mlx5_%d", i);
        topo_add_nic(t, name, 400000, RAIL_LINK_IB, true, false);
    }
    topo_set_paths(t, 1);
    t->gdr = true;
}

/* The same node with RoCE (Ethernet link layer) NICs. */
static inline void topo_h100_roce(struct rail_topo *t)
{
    topo_h100(t);
    for (int i = 0; i < t->n_nics; i++)
        t->nics[i].link_layer = RAIL_LINK_ETH;
}

/* 8xB200, NVSwitch (18 NVLink5 x 40.1), 8x400G InfiniBand. */
static inline void topo_b200(struct rail_topo *t)
{
    topo_h100(t);
    snprintf(t->origin, sizeof(t->origin), "test-b200");
    for (int g = 0; g < t->n_gpus; g++)
        t->gpus[g].sm = 100;
    topo_nvswitch(t, 5, 18, 40.1f);
}

/* 8xA100 (p4d.24xlarge): NVSwitch (12 NVLink3 x 20), 4x100G EFA, two GPUs per EFA. */
static inline void topo_p4d(struct rail_topo *t)
{
    topo_common(t, "test-p4d");
    topo_add_gpus(t, 8, 80, 4, 24.0f);
    topo_nvswitch(t, 3, 12, 20.0f);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "rdmap%ds0", 16 + i * 16);
        topo_add_nic(t, name, 100000, RAIL_LINK_UNKNOWN, true, false);
    }
    topo_set_paths(t, 2);
    t->gdr = true;
}

/* 8xH100 (p5.48xlarge): NVSwitch, 32x100G EFA, four per GPU at PIX. */
static inline void topo_p5(struct rail_topo *t)
{
    topo_common(t, "test-p5");
    topo_add_gpus(t, 8, 90, 5, 48.0f);
    topo_nvswitch(t, 4, 18, 20.6f);
    for (int i = 0; i < 32; i++) {
        char name[16];
        snprintf(name, sizeof(name), "rdmap%ds0", 16 + i);
        topo_add_nic(t, name, 100000, RAIL_LINK_UNKNOWN, true, false);
    }
    topo_set_paths(t, 1);
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 32; n++)
            t->path[g][n] = n / 4 == g ? RAIL_PATH_PIX : t->path[g][n / 4];
    t->gdr = true;
}

/* 8xA10G (g5.48xlarge): PCIe Gen4 only, one 100G EFA, no GPUDirect RDMA. */
static inline void topo_a10g(struct rail_topo *t)
{
    topo_common(t, "test-g5");
    topo_add_gpus(t, 8, 86, 4, 24.0f);
    topo_add_nic(t, "rdmap0s31", 100000, RAIL_LINK_UNKNOWN, false, false);
    for (int g = 0; g < 8; g++)
        t->path[g][0] = g < 4 ? RAIL_PATH_PHB : RAIL_PATH_SYS;
    t->inter_cpu_bw = 10.0f;
}

/* 4xT4 (g4dn.12xlarge): PCIe Gen3 only, one 50G EFA. */
static inline void topo_t4(struct rail_topo *t)
{
    topo_common(t, "test-g4dn");
    topo_add_gpus(t, 4, 75, 3, 12.0f);
    for (int g = 0; g < 4; g++)
        t->gpus[g].numa = 0;
    topo_add_nic(t, "rdmap0s31", 50000, RAIL_LINK_UNKNOWN, false, false);
    for (int g = 0; g < 4; g++)
        t->path[g][0] = RAIL_PATH_PHB;
}

/* One H100 per node with one 400G InfiniBand NIC at PIX. */
static inline void topo_one_gpu(struct rail_topo *t)
{
    topo_common(t, "test-1gpu");
    topo_add_gpus(t, 1, 90, 5, 48.0f);
    t->gpus[0].numa = 0;
    topo_add_nic(t, "mlx5_0", 400000, RAIL_LINK_IB, true, false);
    t->path[0][0] = RAIL_PATH_PIX;
    t->gdr = true;
}

static inline struct rail_comm_shape shape_of(int nnodes, int rpn)
{
    struct rail_comm_shape s = {nnodes * rpn, nnodes, rpn, rpn, false};
    return s;
}

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)
#define GiB ((size_t)1024 * 1024 * 1024)

#endif
