/* SPDX-License-Identifier: Apache-2.0 */
/* Topology -> model inputs: intra-node bandwidth per GPU, the effective bandwidth of the NICs
 * nearest to each GPU (penalised when data has to cross the CPU), the network latency by NIC type,
 * and whether the topology is known well enough to act on. */
#include "model/cost_model_inputs.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Penalties on a NIC's bandwidth (project estimates, docs/cost-model.md "Inputs"). */
#define CM_NO_GDR_FACTOR 0.8f /* host-memory staging: one extra PCIe crossing through the CPU */
#define CM_SYS_FACTOR    0.5f /* path crosses the inter-CPU link, shared by the whole socket */

/* Network latency added per inter-node step, by NIC type (µs). */
#define CM_LAT_EFA_OLD   75.0f /* aws-ofi-nccl platform table: p4d/p5 (EFA < 200 Gb/s per NIC) */
#define CM_LAT_EFA_NEW   35.0f /* aws-ofi-nccl platform table: p5en/p6 (EFA >= 200 Gb/s) */
#define CM_LAT_UNKNOWN   75.0f /* aws-ofi-nccl's fall-through default for unknown platforms */
#define CM_LAT_SOFT_ROCE 20.0f /* project estimate: rxe runs the RoCE stack in the kernel */

static float nic_raw_gbps(const struct rail_nic *nic)
{
    /* NCCL's units: speed in Mb/s / 8000 = GB/s (NDR 400000 -> 50). */
    float g = nic->speed_mbps > 0 ? (float)nic->speed_mbps / 8000.0f : CM_NET_BW;
    if (nic->pcie_gbps > 0 && nic->pcie_gbps < g)
        g = nic->pcie_gbps;
    return g;
}

static bool nic_is_efa(const struct rail_nic *nic)
{
    if (strncmp(nic->name, "rdmap", 5) == 0 || strncmp(nic->name, "efa", 3) == 0 ||
        nic->pci_vendor == 0x1d0f /* Amazon */)
        return true;
    return nic->link_layer == RAIL_LINK_UNKNOWN && nic->virtual_nic;
}

/* What NCCL itself adds (the net plugin's props.latency): 0 for NCCL's IB/RoCE transport, the
 * aws-ofi-nccl platform value for EFA. */
static float nic_props_latency(const struct rail_nic *nic)
{
    if (nic_is_efa(nic))
        return nic->speed_mbps >= 200000 ? CM_LAT_EFA_NEW : CM_LAT_EFA_OLD;
    return 0.0f;
}

/* The project's estimate by NIC type. Hardware RoCE gets its extra latency through the tuned NET
 * constants instead (rail_model_tune_constants), so it is 0 here like InfiniBand. */
static float nic_model_latency(const struct rail_nic *nic)
{
    if (nic_is_efa(nic))
        return nic_props_latency(nic);
    if (nic->link_layer == RAIL_LINK_IB)
        return 0.0f;
    if (nic->link_layer == RAIL_LINK_ETH)
        return nic->virtual_nic ? CM_LAT_SOFT_ROCE : 0.0f;
    return CM_LAT_UNKNOWN;
}

static float path_factor(int path, bool gdr)
{
    float f = 1.0f;
    if (path >= RAIL_PATH_PHB)
        gdr = false; /* NCCL does not use GDR beyond PXB by default */
    if (!gdr)
        f *= CM_NO_GDR_FACTOR;
    if (path >= RAIL_PATH_SYS)
        f *= CM_SYS_FACTOR;
    return f;
}

static void derive_network(const struct rail_topo *t, int ngpus, struct cm_inputs *in)
{
    int share[RAIL_TOPO_MAX_NICS] = {0}; /* used GPUs for which the NIC is nearest */
    int best[RAIL_TOPO_MAX_GPUS];
    int nics = t->n_nics < RAIL_TOPO_MAX_NICS ? t->n_nics : RAIL_TOPO_MAX_NICS;
    in->type_inter = RAIL_PATH_LOC;
    for (int g = 0; g < ngpus; g++) {
        best[g] = rail_topo_gpu_best_path(t, g);
        if (best[g] > in->type_inter)
            in->type_inter = best[g];
        for (int n = 0; n < nics; n++)
            if (best[g] < RAIL_PATH_DIS && t->nics[n].active && t->path[g][n] == best[g])
                share[n]++;
    }
    float eff[RAIL_TOPO_MAX_NICS] = {0};
    uint64_t efa_group[RAIL_TOPO_MAX_NICS]; /* GPUs an EFA device is nearest to, per channel NIC */
    int efa_slot[RAIL_TOPO_MAX_NICS];
    int n_efa = 0;
    in->n_nics = 0;
    in->lat_inter = 0.0f;
    in->props_lat = 0.0f;
    in->efa = false;
    for (int n = 0; n < nics; n++) {
        if (!share[n])
            continue;
        const struct rail_nic *nic = &t->nics[n];
        int p = RAIL_PATH_DIS;
        uint64_t gpus = 0;
        for (int g = 0; g < ngpus; g++) {
            if (t->path[g][n] < p)
                p = t->path[g][n];
            if (best[g] < RAIL_PATH_DIS && t->path[g][n] == best[g])
                gpus |= 1ull << g;
        }
        eff[n] = nic_raw_gbps(nic) * path_factor(p, nic->gdr && t->gdr);
        /* aws-ofi-nccl shows NCCL one device per GPU that stripes over that GPU's EFA rails, so
         * EFA devices nearest to the same GPUs count as one NIC for the search. */
        int slot = -1;
        if (nic_is_efa(nic))
            for (int i = 0; i < n_efa; i++)
                if (efa_group[i] == gpus)
                    slot = efa_slot[i];
        if (slot >= 0) {
            in->nics[slot].gbps += eff[n];
        } else {
            if (nic_is_efa(nic)) {
                efa_group[n_efa] = gpus;
                efa_slot[n_efa++] = in->n_nics;
            }
            in->nics[in->n_nics].gbps = eff[n];
            in->nics[in->n_nics].best_path = p;
            in->n_nics++;
        }
        in->efa |= nic_is_efa(nic);
        if (nic_model_latency(nic) > in->lat_inter)
            in->lat_inter = nic_model_latency(nic);
        if (nic_props_latency(nic) > in->props_lat)
            in->props_lat = nic_props_latency(nic);
    }
    float sum = 0.0f;
    for (int g = 0; g < ngpus; g++)
        for (int n = 0; n < nics; n++)
            if (share[n] && best[g] < RAIL_PATH_DIS && t->nics[n].active &&
                t->path[g][n] == best[g])
                sum += eff[n] / (float)share[n];
    in->bw_inter = ngpus > 0 ? sum / (float)ngpus : 0.0f;
    if (in->n_nics == 0)
        in->type_inter = RAIL_PATH_DIS;
}

static void derive_intra(const struct rail_topo *t, int ngpus, struct cm_inputs *in)
{
    in->nvswitch = t->nvswitch;
    in->nvlink = ngpus > 1 && t->nvlink_gen > 0 && t->nvlink_bw > 0;
    float pcie = 0.0f;
    bool cross_numa = false;
    for (int g = 0; g < ngpus; g++) {
        float b = t->gpus[g].pcie_gbps > 0 ? t->gpus[g].pcie_gbps : CM_PCI_BW;
        if (pcie == 0.0f || b < pcie)
            pcie = b;
        if (t->gpus[g].numa >= 0 && t->gpus[0].numa >= 0 && t->gpus[g].numa != t->gpus[0].numa)
            cross_numa = true;
    }
    if (ngpus <= 1) {
        in->type_intra = RAIL_PATH_LOC;
        in->bw_intra = pcie;
    } else if (in->nvlink) {
        in->type_intra = RAIL_PATH_NVL;
        in->bw_intra = t->nvlink_bw;
    } else {
        in->type_intra = cross_numa ? RAIL_PATH_SYS : RAIL_PATH_PXB;
        in->bw_intra = pcie;
        if (cross_numa && t->inter_cpu_bw > 0 && t->inter_cpu_bw < in->bw_intra)
            in->bw_intra = t->inter_cpu_bw;
    }
    in->total_bw = in->nvlink && t->nvlink_bw > pcie ? t->nvlink_bw : pcie;
}

bool cm_derive_inputs(const struct rail_topo *t, const struct rail_comm_shape *shape,
                      struct cm_inputs *in, char *why, size_t whylen)
{
    memset(in, 0, sizeof(*in));
    in->ngpus = shape->max_rpn > 0 ? shape->max_rpn : 1;
    in->bw_intra = in->total_bw = CM_PCI_BW;
    in->bw_inter = CM_NET_BW;
    in->type_intra = in->ngpus > 1 ? RAIL_PATH_PXB : RAIL_PATH_LOC;
    in->type_inter = RAIL_PATH_PXB;
    in->n_nics = 1;
    in->nics[0].gbps = CM_NET_BW;
    in->nics[0].best_path = RAIL_PATH_PXB;

    if (!t) {
        snprintf(why, whylen, "no topology");
        return false;
    }
    in->cpu_vendor = t->cpu_vendor;
    if (t->n_gpus <= 0 || t->n_gpus > RAIL_TOPO_MAX_GPUS) {
        snprintf(why, whylen, "topology has no GPUs (source %d)", t->source);
        return false;
    }
    if (in->ngpus > t->n_gpus) {
        snprintf(why, whylen, "communicator has %d ranks per node but the topology %d GPUs",
                 in->ngpus, t->n_gpus);
        return false;
    }
    /* Local ranks use GPUs 0..ppn-1 (CUDA device order without CUDA_VISIBLE_DEVICES). */
    in->sm_min = in->sm_max = t->gpus[0].sm;
    for (int g = 0; g < in->ngpus; g++) {
        if (t->gpus[g].sm < in->sm_min)
            in->sm_min = t->gpus[g].sm;
        if (t->gpus[g].sm > in->sm_max)
            in->sm_max = t->gpus[g].sm;
    }
    derive_intra(t, in->ngpus, in);
    if (shape->nnodes > 1) {
        if (t->n_nics <= 0) {
            snprintf(why, whylen, "multi-node communicator but the topology has no NIC");
            return false;
        }
        struct cm_inputs net = *in;
        derive_network(t, in->ngpus, &net);
        if (net.n_nics == 0 || net.bw_inter <= 0.0f) {
            snprintf(why, whylen, "multi-node communicator but no active NIC reachable");
            return false;
        }
        *in = net;
    } else {
        /* Single node: the network does not matter to NCCL's model; kept for explain. */
        in->n_nics = 0;
        in->bw_inter = 0.0f;
        in->type_inter = RAIL_PATH_DIS;
        if (t->n_nics > 0) {
            struct cm_inputs net = *in;
            derive_network(t, in->ngpus, &net);
            if (net.n_nics > 0)
                *in = net;
        }
    }
    if (in->sm_min <= 0) {
        snprintf(why, whylen, "GPU compute capability unknown");
        return false;
    }
    snprintf(why, whylen,
             "sm%d, %d GPU/node, intra %.1f GB/s (%s), net %.1f GB/s/GPU over %d NIC%s", in->sm_min,
             in->ngpus, (double)in->bw_intra, in->nvlink ? "NVLink" : "PCIe", (double)in->bw_inter,
             in->n_nics, in->n_nics == 1 ? "" : "s");
    return true;
}
