/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL 2.28.9's tuning constants and the v5 constant refinements (the names NCCL prints are
 * common/nccl_names.c).
 * Values are facts read from NCCL v2.28.9-1 src/graph/tuning.cc and src/graph/search.cc
 * (see docs/cost-model.md for the table and sources). */
#include "model/cost_model_constants.h"

#include <string.h>

static const ncclTunerConstants_v5_t k_defaults = {
    .baseLatencies =
        {
            {6.8, 14.0, 8.4}, /* Tree */
            {6.6, 14.0, 8.4}, /* Ring */
            {0, 0, 0},        /* CollNetDirect */
            {0, 0, 0},        /* CollNetChain */
            {0, 0, 0},        /* NVLS */
            {0, 0, 0},        /* NVLSTree */
            {8.0, 8.0, 8.0},  /* PAT */
        },
    .hwLatencies =
        {
            {
                /* NVLINK */
                {0.6, 1.25, 4.0},
                {0.6, 1.9, 3.4},
                {0, 0, 3.7},
                {0, 0, 2.8},
                {0, 0, 25},
                {0, 0, 25},
                {0, 0, 4.0},
            },
            {
                /* PCI */
                {1.0, 1.9, 4.0},
                {1.0, 2.5, 5.7},
                {0, 0, 3.7},
                {0, 0, 2.8},
                {0, 0, 0},
                {0, 0, 0},
                {0, 0, 4.0},
            },
            {
                /* NET */
                {5.0, 8.5, 14},
                {2.7, 4.0, 14.0},
                {0, 0, 31},
                {0, 0, 30},
                {0, 0, 18},
                {0, 0, 20.9},
                {0, 0, 14},
            },
        },
    /* Rows: single node = compcap; multi-node = CPU (row 0 Intel/other, row 1 AMD). */
    .llMaxBws = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}},
    .perChMaxRingLL128Bws = {{20.0, 20.0, 20.0},
                             {20.0, 20.0, 20.0},
                             {36.7, 36.7, 36.7},
                             {73.4, 34.6, 73.4}},
    .perChMaxTreeLL128Bws = {{20.0, 20.0, 20.0},
                             {20.0, 20.0, 20.0},
                             {36.7, 36.7, 29.0},
                             {55.6, 31.67, 20.0}},
    .perChMaxTreeBws = {{26.5, 18.5, 10.0},
                        {24.0, 23.6, 17.8},
                        {38.7, 41.4, 36.0},
                        {70.0, 42.8, 24.0}},
    .perChMaxNVLSTreeBws = {{26.5, 18.5, 10.0},
                            {24.0, 23.6, 17.8},
                            {0.0, 57.7, 45.5},
                            {0.0, 96.0, 43.8}},
};

/* nvlsEfficiency per compcap (not a tunable constant in NCCL). */
const float cm_nvls_efficiency[NCCL_NUM_COMPCAPS] = {0.0f, 0.0f, 0.85f, 0.74f};

/* Tree AllReduce correction, index floor(log2(nBytes >> 6)) = 0..22 (64 B .. 256 MiB). */
const float cm_tree_correction[NCCL_NUM_PROTOCOLS][CM_TREE_CORRECTION_SIZES] = {
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f,  .7f,  .7f,  .6f, .5f,
     .4f,  .4f,  .5f,  .6f,  .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f,  .6f, .6f,
     .6f,  .6f,  .6f,  .6f,  .8f,  .9f, .9f, .9f, .9f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
     .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f},
};

/* Speed ladders of ncclTopoCompute (GB/s per channel). */
static const float k_intra_old[] = {40.0f, 30.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f,
                                    9.0f,  7.0f,  6.0f,  5.0f,  4.0f,  3.0f};
static const float k_inter_old[] = {48.0f, 30.0f, 28.0f, 24.0f, 20.0f, 18.0f, 15.0f,
                                    12.0f, 10.0f, 9.0f,  7.0f,  6.0f,  5.0f,  4.0f,
                                    3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
static const float k_intra_sm90[] = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f,
                                     15.0f, 12.0f, 11.0f, 6.0f,  3.0f};
static const float k_inter_sm90[] = {48.0f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f,
                                     15.0f, 12.0f, 6.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};
static const float k_intra_sm100[] = {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f,
                                      30.0f, 24.0f, 20.0f, 19.0f, 18.0f};
static const float k_inter_sm100[] = {96.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f,
                                      24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f,
                                      6.0f,  3.0f,  2.4f,  1.2f,  0.24f, 0.12f};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

const float *cm_speed_ladder(int sm, bool inter, int *n)
{
    if (sm >= 100) {
        *n = inter ? NELEM(k_inter_sm100) : NELEM(k_intra_sm100);
        return inter ? k_inter_sm100 : k_intra_sm100;
    }
    if (sm >= 90) {
        *n = inter ? NELEM(k_inter_sm90) : NELEM(k_intra_sm90);
        return inter ? k_inter_sm90 : k_intra_sm90;
    }
    *n = inter ? NELEM(k_inter_old) : NELEM(k_intra_old);
    return inter ? k_inter_old : k_intra_old;
}

int cm_compcap_index(int sm)
{
    if (sm >= 100)
        return NCCL_BLACKWELL_COMPCAP_IDX;
    if (sm >= 90)
        return NCCL_HOPPER_COMPCAP_IDX;
    if (sm >= 80)
        return NCCL_AMPERE_COMPCAP_IDX;
    return NCCL_VOLTA_COMPCAP_IDX;
}

void rail_model_default_constants(ncclTunerConstants_v5_t *c)
{
    if (c)
        memcpy(c, &k_defaults, sizeof(*c));
}

/* ---- v5 constant refinements (docs/cost-model.md, "Constants the tuner changes") ---- */

/* Set *v to want only when it still holds NCCL's default; returns 1 when it changed. */
static int set_if_default(double *v, double def, double want)
{
    if (*v != def || def == want)
        return 0;
    *v = want;
    return 1;
}

/* Extra per-message latency of hardware RoCE over InfiniBand, added to the NET latencies that
 * NCCL calibrated on InfiniBand (project estimate, docs/cost-model.md). */
#define CM_ROCE_EXTRA_LAT_US 1.0

static bool all_nics_hw_roce(const struct rail_topo *t)
{
    int n = 0;
    for (int i = 0; i < t->n_nics; i++) {
        const struct rail_nic *nic = &t->nics[i];
        if (!nic->active)
            continue;
        if (nic->link_layer != RAIL_LINK_ETH || nic->virtual_nic)
            return false;
        n++;
    }
    return n > 0;
}

int rail_model_tune_constants(const struct rail_model *m, const struct rail_topo *t,
                              ncclTunerConstants_v5_t *c)
{
    if (!m || !t || !c || !m->confident)
        return 0;
    int changed = 0;
    const int cc = m->compcap_idx;

    if (cc == NCCL_BLACKWELL_COMPCAP_IDX) {
        /* NCCL 2.29.7 recalibrated Blackwell Ring LL128 to 40 GB/s per channel at every scale. */
        static const double ll128_new[NCCL_NUM_TUNING_SCALES] = {40.0, 40.0, 40.0};
        for (int s = 0; s < NCCL_NUM_TUNING_SCALES; s++)
            changed += set_if_default(&c->perChMaxRingLL128Bws[cc][s],
                                      k_defaults.perChMaxRingLL128Bws[cc][s], ll128_new[s]);
        /* NCCL 2.30 raised Blackwell NVLSTree (> 2 nodes) to 80 GB/s per channel. */
        changed +=
            set_if_default(&c->perChMaxNVLSTreeBws[cc][NCCL_TUNING_SCALE_4NODES],
                           k_defaults.perChMaxNVLSTreeBws[cc][NCCL_TUNING_SCALE_4NODES], 80.0);
    }

    if (m->shape.nnodes > 1 && all_nics_hw_roce(t)) {
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
            if (a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN)
                continue; /* SHARP CollNet is InfiniBand-only */
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                double def = k_defaults.hwLatencies[NCCL_HW_NET][a][p];
                if (def > 0)
                    changed += set_if_default(&c->hwLatencies[NCCL_HW_NET][a][p], def,
                                              def + CM_ROCE_EXTRA_LAT_US);
            }
        }
    }
    return changed;
}
