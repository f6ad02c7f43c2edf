/* SPDX-License-Identifier: Apache-2.0 */
/* Corrections trained on forced-(algorithm, protocol) measurements (docs/cost-model.md §12).
 *
 * NCCL's model (and the project's copy of it) is wrong across nodes in ways the measurements show
 * plainly: on EFA the network latency per step it assumes is several times what a ring step
 * costs, so it prefers PAT and Tree where rings are as fast; it gives LL and LL128 nearly Simple's
 * bandwidth when every step crosses the network, where they measure far less; PAT, Tree and
 * NVLSTree carry their own errors. Each correction is one number with a physical meaning, per
 * network family, applied only to communicators that span nodes, so the model still generalises
 * through its structure (steps, channels, link speeds) to other node counts and systems. The
 * numbers are fitted by bench/tuner_eval --fit (coordinate descent on mean regret from the prior,
 * checked leave-one-system-out and leave-one-node-count-out). */
#include "cost_model_internal.h"

static const char *const k_names[RAIL_FIT_NPARAMS] = {
    "net_lat", "ll_bw",  "ll128_bw_net", "ll128_bw_nvl", "simple_bw",
    "pat_lat", "pat_bw", "nvlstree_bw",  "tree_lat",     "defer_margin",
};

/* The prior: no deference (the project's model as validated on published measurements,
 * test_regret); the fit learns how far to trust it over NCCL per family. */
#define PRIOR_DEFER_MARGIN 0.0f

/* Fitted on all of test/fixtures/tuner-data by bench/tuner_eval --fit (docs/cost-model.md §12).
 * Columns: EFA (7 training systems), InfiniBand/RoCE (1 system: not enough to train, the prior). */
static const struct rail_model_fit k_trained = {{
    [RAIL_FIT_NET_LAT] = {2.0f, -1.0f},
    [RAIL_FIT_LL_BW] = {0.15f, 1.0f},
    [RAIL_FIT_LL128_BW_NET] = {0.9f, 1.0f},
    [RAIL_FIT_LL128_BW_NVL] = {1.5f, 1.0f},
    [RAIL_FIT_SIMPLE_BW] = {1.0f, 1.0f},
    [RAIL_FIT_PAT_LAT] = {2.0f, 1.0f},
    [RAIL_FIT_PAT_BW] = {1.1f, 1.0f},
    [RAIL_FIT_NVLSTREE_BW] = {1.1f, 1.0f},
    [RAIL_FIT_TREE_LAT] = {0.35f, 1.0f},
    [RAIL_FIT_DEFER_MARGIN] = {0.1f, 0.0f},
}};

const struct rail_model_fit *rail_model_fit_default(void)
{
    return &k_trained;
}

void rail_model_fit_prior(struct rail_model_fit *f)
{
    for (int i = 0; i < RAIL_FIT_NPARAMS; i++)
        for (int k = 0; k < RAIL_FIT_NFAMILIES; k++)
            f->v[i][k] = i == RAIL_FIT_NET_LAT        ? -1.0f
                         : i == RAIL_FIT_DEFER_MARGIN ? PRIOR_DEFER_MARGIN
                                                      : 1.0f;
}

const char *rail_fit_param_name(int p)
{
    return p >= 0 && p < RAIL_FIT_NPARAMS ? k_names[p] : "?";
}

const char *rail_fit_family_name(int f)
{
    return f == RAIL_FIT_EFA ? "efa" : (f == RAIL_FIT_IB_ROCE ? "ib_roce" : "?");
}

static int family(const struct cm_inputs *in)
{
    return in->efa ? RAIL_FIT_EFA : RAIL_FIT_IB_ROCE;
}

float cm_fit_lat_inter(const struct cm_inputs *in, const struct rail_model_fit *fit)
{
    float v = fit->v[RAIL_FIT_NET_LAT][family(in)];
    return v >= 0.0f ? v : in->lat_inter;
}

static void scale(cm_table t, int algo, int proto, float f)
{
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        t[c][algo][proto] *= f;
}

void cm_apply_fit(struct rail_model *m, const struct cm_inputs *in,
                  const struct rail_model_fit *fit)
{
    int k = family(in);
#define V(p) (fit->v[p][k])
    m->defer_margin = V(RAIL_FIT_DEFER_MARGIN);
    m->fit_family = k;
    if (m->shape.nnodes <= 1) {
        m->defer_margin = 0.0f; /* nothing trained inside a node: the model's refinements rule */
        return;
    }
    /* Share of a ring's steps that cross the network: 1 at one rank per node. */
    float net_share = (float)m->shape.nnodes / (float)m->shape.nranks;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        scale(m->bw, a, NCCL_PROTO_LL, V(RAIL_FIT_LL_BW));
    scale(m->bw, NCCL_ALGO_RING, NCCL_PROTO_LL128,
          V(RAIL_FIT_LL128_BW_NVL) +
              (V(RAIL_FIT_LL128_BW_NET) - V(RAIL_FIT_LL128_BW_NVL)) * net_share);
    scale(m->bw, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE,
          1.0f + (V(RAIL_FIT_SIMPLE_BW) - 1.0f) * net_share);
    scale(m->bw, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE,
          1.0f + (V(RAIL_FIT_SIMPLE_BW) - 1.0f) * net_share);
    scale(m->lat, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, V(RAIL_FIT_PAT_LAT));
    scale(m->bw, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, V(RAIL_FIT_PAT_BW));
    scale(m->bw, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, V(RAIL_FIT_NVLSTREE_BW));
    for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
        scale(m->lat, NCCL_ALGO_TREE, p, V(RAIL_FIT_TREE_LAT));
#undef V
}
