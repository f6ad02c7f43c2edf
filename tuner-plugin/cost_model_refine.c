/* The project's refinements on top of NCCL's model, each tied to a published measurement or a
 * documented project estimate (docs/cost-model.md "Where we differ from NCCL and why"). They only
 * ever touch combinations NCCL itself offers (bandwidth > 0), so they never revive an entry. */
#include "cost_model_internal.h"

/* R1: single-node NVLS AllReduce reaches ~450-480 GB/s busbw on 8xH100 (18 NVLink4 links, 370.8
 * GB/s in NCCL's units): busbw = 1.25 x NVLink bandwidth (465 / 370.8). Blackwell scaled by NCCL's
 * own NVLS efficiency ratio (0.74 / 0.85): project estimate. */
#define CM_NVLS_AR_PER_NVLINK_HOPPER    1.25f
#define CM_NVLS_AR_PER_NVLINK_BLACKWELL (1.25f * 0.74f / 0.85f)
/* R2: NVLS AllGather/ReduceScatter: multicast stores / switch reductions move the same bytes per
 * GPU as Ring, without the n-1 store-and-forward steps: 5% above Ring Simple (project estimate). */
#define CM_NVLS_AGRS_GAIN 1.05f
/* R3: Ring LL128 latency on an all-NVLink node = Ring LL latency + 0.3 µs (project estimate,
 * calibrated so LL128 takes over from LL between 32 and 64 KiB on 8xH100/8xA100). */
#define CM_LL128_NVLINK_EXTRA_US 0.3f
/* R4: Blackwell multi-node Tree AllReduce measured ~1.2x Ring for large messages. */
#define CM_BW_TREE_GAIN 1.2f

void cm_refine(struct rail_model *m, const struct cm_inputs *in)
{
    const int nn = m->shape.nnodes, nr = m->shape.nranks;
    const int AR = ncclFuncAllReduce, S = NCCL_PROTO_SIMPLE;
    if (nr <= 1)
        return;
    bool hopper_plus = m->compcap_idx >= NCCL_HOPPER_COMPCAP_IDX;

    if (nn == 1 && m->nvls && hopper_plus && m->bw[AR][NCCL_ALGO_NVLS][S] > 0) {
        float k = m->compcap_idx == NCCL_BLACKWELL_COMPCAP_IDX ? CM_NVLS_AR_PER_NVLINK_BLACKWELL
                                                               : CM_NVLS_AR_PER_NVLINK_HOPPER;
        float alg = k * in->bw_intra * (float)nr / (float)cm_nsteps(AR, nr);
        if (alg > m->bw[AR][NCCL_ALGO_NVLS][S]) {
            m->bw[AR][NCCL_ALGO_NVLS][S] = alg;
            m->refinements |= RAIL_REFINE_NVLS_AR_BW;
        }
    }

    if (nn == 1 && m->nvls && hopper_plus) {
        const struct rail_model_graph *ring = &m->graphs[NCCL_ALGO_RING];
        float ring_bus = (float)ring->nchannels * ring->bw_intra;
        /* NVLS AG/RS bandwidth applies to the full buffer (no bus->alg conversion in NCCL). */
        float want = CM_NVLS_AGRS_GAIN * ring_bus * (float)nr / (float)(nr - 1);
        const int colls[] = {ncclFuncAllGather, ncclFuncReduceScatter};
        for (int i = 0; i < 2; i++) {
            float *b = &m->bw[colls[i]][NCCL_ALGO_NVLS][S];
            if (*b > 0 && want > *b) {
                *b = want;
                m->refinements |= RAIL_REFINE_NVLS_AGRS_BW;
            }
        }
    }

    if (nn == 1 && m->nvlink) {
        for (int c = 0; c < RAIL_NUM_COLLS; c++) {
            const float ll = m->lat[c][NCCL_ALGO_RING][NCCL_PROTO_LL];
            float *ll128 = &m->lat[c][NCCL_ALGO_RING][NCCL_PROTO_LL128];
            if (m->bw[c][NCCL_ALGO_RING][NCCL_PROTO_LL128] <= 0 ||
                m->bw[c][NCCL_ALGO_RING][NCCL_PROTO_LL] <= 0)
                continue;
            if (ll + CM_LL128_NVLINK_EXTRA_US < *ll128) {
                *ll128 = ll + CM_LL128_NVLINK_EXTRA_US;
                m->refinements |= RAIL_REFINE_LL128_NVLINK;
            }
        }
    }

    if (nn > 1 && m->compcap_idx == NCCL_BLACKWELL_COMPCAP_IDX && m->nvlink) {
        float ring = m->bw[AR][NCCL_ALGO_RING][S];
        float *tree = &m->bw[AR][NCCL_ALGO_TREE][S];
        if (*tree > 0 && ring > 0 && CM_BW_TREE_GAIN * ring > *tree) {
            *tree = CM_BW_TREE_GAIN * ring;
            m->refinements |= RAIL_REFINE_BW_TREE;
        }
    }
}
