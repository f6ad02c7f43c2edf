/* SPDX-License-Identifier: Apache-2.0 */
/* The project's refinements on top of NCCL's model, each tied to a published measurement and a
 * physical reason (docs/cost-model.md §5 "Where we differ from NCCL and why", validated by
 * test/unit/test_regret.c). They only ever touch combinations NCCL itself offers (bandwidth > 0),
 * so they never revive an entry. */
#include "model/cost_model_refine.h"

#include "model/cost_model_constants.h"

/* R4: per byte of AllReduce, a node of a 3-node double binary tree sends and receives 1.5 bytes
 * over the network (the root of one tree, a leaf of the other). */
#define CM_TREE_NET_BYTES_3NODES 1.5f

/* R1: single-node NVLS AllReduce. Each GPU sends its whole buffer S to the switch reductions
 * (multimem.ld_reduce reads every GPU's data once) plus its reduced slice S/n (multimem.st), and
 * receives S/n + S: (n+1)/n x S per direction over its NVLinks, at NCCL's own NVLS efficiency. */
static void refine_nvls_allreduce(struct rail_model *m, const struct cm_inputs *in)
{
    const int AR = ncclFuncAllReduce, S = NCCL_PROTO_SIMPLE, n = m->shape.nranks;
    float *bw = &m->bw[AR][NCCL_ALGO_NVLS][S];
    if (*bw <= 0.0f)
        return;
    float want = in->bw_intra * cm_nvls_efficiency[m->compcap_idx] * (float)n / (float)(n + 1);
    if (want > 0.0f && want != *bw) {
        *bw = want;
        m->refinements |= RAIL_REFINE_NVLS_AR_BW;
    }
}

/* R2: single-node NVLS AllGather/ReduceScatter. A GPU receives (AllGather) or sends
 * (ReduceScatter) the whole buffer S through its NVLinks while a ring moves (n-1)/n x S each way:
 * the larger direction bounds the time, at the per-link rate a ring reaches (its bus bandwidth).
 * NCCL's formula multiplies by (n-1)/n twice and predicts about half of that. */
static void refine_nvls_allgather(struct rail_model *m)
{
    const struct rail_model_graph *ring = &m->graphs[NCCL_ALGO_RING];
    float want = (float)ring->nchannels * ring->bw_intra;
    const int colls[] = {ncclFuncAllGather, ncclFuncReduceScatter};
    for (int i = 0; i < 2; i++) {
        float *b = &m->bw[colls[i]][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE];
        if (*b > 0.0f && want > 0.0f && want != *b) {
            *b = want;
            m->refinements |= RAIL_REFINE_NVLS_AGRS_BW;
        }
    }
}

/* R5: NCCL's per-channel Tree cap (perChMaxTreeBws) where measurements show the Tree running at
 * the channel speed of NCCL's own search instead: Blackwell beyond 2 nodes (GB200 partitions on 3
 * nodes reach the NICs' full rate, nccl#1801: 252 GB/s algorithm bandwidth over 8x400G where the
 * 24 GB/s cap allows 96) and Ampere on 2 nodes (2x DGX A100: Tree faster than Ring for large
 * messages, nccl#812, which the 23.6 GB/s cap below the search's 30 GB/s channels rules out).
 * Simple only: LL and LL128 keep their protocol caps. */
static void refine_tree_cap(struct rail_model *m)
{
    const struct rail_model_graph *g = &m->graphs[NCCL_ALGO_TREE];
    float *tree = &m->bw[ncclFuncAllReduce][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE];
    float speed = m->shape.nnodes <= 2 ? g->bw_intra : g->bw_inter;
    float alg = 0.5f * 0.92f * (float)g->nchannels * speed;
    if (*tree > 0.0f && alg > *tree) {
        *tree = alg;
        m->refinements |= RAIL_REFINE_TREE_CAP;
    }
}

/* Bytes a node sends (and receives) over the network per byte of AllReduce in NCCL's double
 * binary tree between nodes: 1 on 2 nodes, 1.5 on 3, 2 from 4 nodes on. */
static float tree_net_bytes(int nnodes)
{
    return nnodes <= 2 ? 1.0f : nnodes == 3 ? CM_TREE_NET_BYTES_3NODES : 2.0f;
}

/* R4: network traffic of the trees across nodes (NVLink nodes, where the intra-node part is not
 * the bottleneck).
 *  - Tree: NCCL converts with x 0.5 (2 S per node) beyond 2 nodes; on 3 nodes the trees move
 *    1.5 S: Tree Simple bandwidth x 2/1.5.
 *  - NVLSTree: NCCL converts with the ring's nRanks/nSteps = N/(2(N-1)) and doubles the inter
 *    term on <= 2 nodes, i.e. it charges the network a ring's 2(N-1)/N S; the inter-node part is
 *    a tree moving tree_net_bytes() x S. The network-side term (min of bwInter and the channel
 *    cap) is scaled accordingly; the NVLS (intra) term stays NCCL's. */
static void refine_tree_traffic(struct rail_model *m, const ncclTunerConstants_v5_t *c)
{
    const int AR = ncclFuncAllReduce, S = NCCL_PROTO_SIMPLE;
    const int nn = m->shape.nnodes, n = m->shape.nranks;
    const float f = tree_net_bytes(nn);
    float *tree = &m->bw[AR][NCCL_ALGO_TREE][S];
    if (nn == 3 && *tree > 0.0f) {
        *tree *= 2.0f / f;
        m->refinements |= RAIL_REFINE_TREE_TRAFFIC;
    }
    float *nt = &m->bw[AR][NCCL_ALGO_NVLS_TREE][S];
    const struct rail_model_graph *g = &m->graphs[NCCL_ALGO_NVLS_TREE];
    if (*nt <= 0.0f || g->nchannels < 2)
        return;
    int scale = nn <= 2 ? NCCL_TUNING_SCALE_2NODES : NCCL_TUNING_SCALE_4NODES;
    float intra = g->bw_intra * cm_nvls_efficiency[m->compcap_idx] * (float)(g->nchannels - 1) /
                  (float)g->nchannels * 2.0f;
    float inter = g->bw_inter * (nn <= 2 ? 2.0f : 1.0f);
    float cap = (float)c->perChMaxNVLSTreeBws[m->compcap_idx][scale];
    float net = inter < cap ? inter : cap;
    /* NCCL's network term is worth net x N/(2(N-1)) of algorithm bandwidth; the tree's is
     * bwInter / f (with NCCL's own x2 on <= 2 nodes folded into net). */
    float k = (2.0f / f) / (nn <= 2 ? 2.0f : 1.0f) * (float)(n - 1) / (float)n;
    float before = intra < net ? intra : net;
    float after = intra < k * net ? intra : k * net;
    if (before > 0.0f && after != before) {
        *nt *= after / before;
        m->refinements |= RAIL_REFINE_TREE_TRAFFIC;
    }
}

void cm_refine(struct rail_model *m, const struct cm_inputs *in, const ncclTunerConstants_v5_t *c)
{
    const int nn = m->shape.nnodes;
    if (m->shape.nranks <= 1)
        return;
    bool hopper_plus = m->compcap_idx >= NCCL_HOPPER_COMPCAP_IDX;
    if (nn == 1 && m->nvls && hopper_plus) {
        refine_nvls_allreduce(m, in);
        refine_nvls_allgather(m);
    }
    if (m->nvlink && ((nn > 2 && m->compcap_idx == NCCL_BLACKWELL_COMPCAP_IDX) ||
                      (nn == 2 && m->compcap_idx == NCCL_AMPERE_COMPCAP_IDX)))
        refine_tree_cap(m);
    if (nn > 1 && m->nvlink)
        refine_tree_traffic(m, c);
}
