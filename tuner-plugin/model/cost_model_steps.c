/* SPDX-License-Identifier: Apache-2.0 */
/* The step model (docs/cost-model.md §12): the time of a collective across nodes from what its
 * algorithm does step by step, with per-protocol costs trained on forced-pair measurements.
 *
 * A ring over n ranks on nn nodes (r = n/nn per node) takes n-1 steps (AllReduce 2(n-1)), nn-1
 * of which (2(nn-1)) cross the network; each step costs its protocol's latency on its link kind
 * (ai: NVLink, an: network), so a ring over 1,024 ranks pays a thousand NVLink steps and a
 * hundred and twenty-eight network steps whatever the size, and its 2 MiB AllGather moves 2 KiB
 * per step. The bytes cross the slower of a GPU's NVLinks (ei of their bandwidth) and its node's
 * NICs (r x NIC bandwidth per GPU x en); en moves from the all-network value (one rank per node)
 * to the NVLink-rich one as the share of network steps nn/n falls, since LL and LL128 move a
 * network step through host-side buffers differently from an NVLink one. A tree climbs its
 * node's chain (r-1 NVLink steps) and log2(nn) network levels, up and down; its network carries
 * tree_f2 x S per node on 2 nodes, 2 S from 4 on (docs/cost-model.md R4). NVLSTree is the NVLS
 * reduction inside the node and the same tree between nodes; PAT (one rank per node) grows with
 * ranks^pat_pow. All in NCCL's lat + bytes/bw form, so the table and the decision code are
 * unchanged; every value is a coefficient of model_table.txt, fitted by bench/tuner_eval --fit.
 * Combinations NCCL does not offer stay unoffered; CollNet and NVLS keep the prior's values. */
#include "model/cost_model_steps.h"

#include <math.h>

#define P(k) (c->v[k])

static int ceil_log2(int x)
{
    int l = 0;
    while ((1 << l) < x && l < 30)
        l++;
    return l;
}

/* Bytes a node moves over the network per AllReduce byte in a double binary tree. */
static float tree_bytes(const struct rail_step_coef *c, int nn)
{
    float f2 = P(RAIL_STEP_TREE_F2);
    return nn <= 2 ? f2 : nn == 3 ? 0.5f * (f2 + 2.0f) : 2.0f;
}

struct step_ctx {
    int n, nn, r;
    float share;  /* network steps / steps of a ring: nn / n */
    float bw_net; /* GB/s per GPU to the network */
    float bw_nvl; /* GB/s per GPU inside the node */
};

/* Network and NVLink bandwidth (GB/s) a protocol reaches for this communicator. */
static void link_bw(const struct rail_step_coef *c, const struct step_ctx *x, int p, float *bn,
                    float *bi)
{
    float envl = P(RAIL_STEP_ENVL_LL + p), enet = P(RAIL_STEP_ENET_LL + p);
    *bn = (float)x->r * x->bw_net * (envl + (enet - envl) * x->share);
    *bi = x->r > 1 ? x->bw_nvl * P(RAIL_STEP_EI_LL + p) : INFINITY;
}

static void ring(const struct rail_step_coef *c, const struct step_ctx *x, int coll, int p,
                 float *lat, float *bw)
{
    bool ar = coll == ncclFuncAllReduce;
    bool agrs = coll == ncclFuncAllGather || coll == ncclFuncReduceScatter;
    int k = ar ? 2 * (x->n - 1) : x->n - 1, kn = ar ? 2 * (x->nn - 1) : x->nn - 1;
    float traffic = ar ? 2.0f * (float)(x->n - 1) / (float)x->n
                       : (agrs ? (float)(x->n - 1) / (float)x->n : 1.0f);
    float bn, bi;
    link_bw(c, x, p, &bn, &bi);
    *lat = P(RAIL_STEP_BASE_LL + p) + (float)(k - kn) * P(RAIL_STEP_AI_LL + p) +
           (float)kn * P(RAIL_STEP_AN_LL + p);
    *bw = fminf(bn, bi) / traffic;
}

static void tree(const struct rail_step_coef *c, const struct step_ctx *x, int p, float *lat,
                 float *bw)
{
    float bn, bi;
    link_bw(c, x, p, &bn, &bi);
    float net = tree_bytes(c, x->nn) / (bn * P(RAIL_STEP_TREE_BW_LL + p));
    float intra = 1.0f / bi;
    *lat = P(RAIL_STEP_BASE_LL + p) +
           2.0f * (float)(x->r - 1) * P(RAIL_STEP_AI_LL + p) * P(RAIL_STEP_TREE_ILAT) +
           2.0f * (float)ceil_log2(x->nn) * P(RAIL_STEP_AN_LL + p) * P(RAIL_STEP_TREE_LAT);
    *bw = 1.0f / fmaxf(net, intra);
}

static void nvls_tree(const struct rail_step_coef *c, const struct step_ctx *x, float *lat,
                      float *bw)
{
    const int S = NCCL_PROTO_SIMPLE;
    float bn, bi;
    link_bw(c, x, S, &bn, &bi);
    *lat = P(RAIL_STEP_NVLSTREE_LAT) + 2.0f * (float)ceil_log2(x->nn) * P(RAIL_STEP_AN_LL + S);
    *bw = bn * P(RAIL_STEP_NVLSTREE_BW) / tree_bytes(c, x->nn);
}

static void pat(const struct rail_step_coef *c, const struct step_ctx *x, float *lat, float *bw)
{
    float bn, bi;
    link_bw(c, x, NCCL_PROTO_SIMPLE, &bn, &bi);
    *lat = P(RAIL_STEP_PAT_BASE) + P(RAIL_STEP_PAT_LAT) * powf((float)x->n, P(RAIL_STEP_PAT_POW));
    *bw = bn * P(RAIL_STEP_PAT_BW) * (float)x->n / (float)(x->n - 1);
}

void cm_step_tables(struct rail_model *m, const struct cm_inputs *in,
                    const struct rail_step_coef *c)
{
    struct step_ctx x = {.n = m->shape.nranks, .nn = m->shape.nnodes};
    if (x.nn < 2 || x.n < 2 || !(in->bw_inter > 0.0f) || !(in->bw_intra > 0.0f))
        return;
    x.r = x.n / x.nn > 0 ? x.n / x.nn : 1;
    x.share = (float)x.nn / (float)x.n;
    x.bw_net = in->bw_inter;
    x.bw_nvl = in->bw_intra;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                float lat = -1.0f, bw = 0.0f;
                if (!(m->bw[coll][a][p] > 0.0f))
                    continue; /* not offered: stays so */
                if (a == NCCL_ALGO_RING)
                    ring(c, &x, coll, p, &lat, &bw);
                else if (a == NCCL_ALGO_TREE && coll == ncclFuncAllReduce)
                    tree(c, &x, p, &lat, &bw);
                else if (a == NCCL_ALGO_NVLS_TREE && p == NCCL_PROTO_SIMPLE)
                    nvls_tree(c, &x, &lat, &bw);
                else if (a == NCCL_ALGO_PAT && p == NCCL_PROTO_SIMPLE)
                    pat(c, &x, &lat, &bw);
                if (lat >= 0.0f && bw > 0.0f && isfinite(lat) && isfinite(bw)) {
                    m->lat[coll][a][p] = lat;
                    m->bw[coll][a][p] = bw;
                }
            }
    m->trained = true;
}
