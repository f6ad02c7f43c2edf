/* SPDX-License-Identifier: Apache-2.0 */
/* An emulation of NCCL 2.28.9's topology search (src/graph/search.cc ncclTopoCompute) on the
 * per-GPU bandwidths the topology gives: how many channels NCCL would find, at which speed per
 * channel. NCCL searches real paths link by link; here every channel crosses each GPU's NVLink (or
 * PCIe) budget once and, across nodes, one NIC. docs/cost-model.md "Emulated search" lists what
 * this keeps and what it simplifies. */
#include "model/cost_model_search.h"

#include <math.h>
#include <string.h>

#include "model/cost_model_constants.h"

#define CM_RING_MAXCH (CM_MAXCHANNELS / 2) /* ringGraph/treeGraph maxChannels */
#define CM_EPS        1e-4f

struct sol {
    int n;
    float s;
};

static int fit(float budget, float s)
{
    return s > 0.0f ? (int)floorf(budget / s + CM_EPS) : 0;
}

/* Channels the node can carry at s_intra (GPU links) / s_inter (NICs) per channel. */
static int channels_at(const struct cm_inputs *in, bool multinode, float s_intra, float s_inter,
                       int maxch)
{
    int n = maxch;
    if (in->ngpus > 1) {
        int v = fit(in->bw_intra, s_intra);
        if (v < n)
            n = v;
    }
    if (multinode) {
        int k = 0;
        for (int i = 0; i < in->n_nics; i++)
            k += fit(in->nics[i].gbps, s_inter);
        if (k < n)
            n = k;
    }
    return n;
}

static float max_nic_gbps(const struct cm_inputs *in)
{
    float m = 0.0f;
    for (int i = 0; i < in->n_nics; i++)
        if (in->nics[i].gbps > m)
            m = in->nics[i].gbps;
    return m;
}

static int nics_at_least(const struct cm_inputs *in, float s)
{
    int k = 0;
    for (int i = 0; i < in->n_nics; i++)
        if (in->nics[i].gbps + CM_EPS >= s)
            k++;
    return k;
}

static int first_index_at_most(const float *ladder, int nl, float v)
{
    int i = 0;
    while (i < nl - 1 && ladder[i] > v + CM_EPS)
        i++;
    return i;
}

/* Pass 1: highest speed first, then lower speeds while they stay above 0.49x the best found;
 * the best is the largest nChannels x speed (first found on ties). */
static struct sol ring_pass1(const struct cm_inputs *in, bool multinode, const float *ladder,
                             int nl, bool tree)
{
    float max_bw = multinode ? max_nic_gbps(in) : in->bw_intra;
    float total = in->total_bw;
    float total_start = total;
    if (tree && in->ngpus > 1)
        total_start *= (float)in->ngpus / (float)(in->ngpus - 1);
    int i = 0;
    while (i < nl - 1 && (ladder[i] > max_bw + CM_EPS || ladder[i] > total_start + CM_EPS))
        i++;
    struct sol best = {0, 0.0f};
    for (; i < nl; i++) {
        float s = ladder[i];
        if (best.n > 0 && !(s / best.s > 0.49f))
            break;
        int n = channels_at(in, multinode, s, s, CM_RING_MAXCH);
        if (n > 0 && (float)n * s > (float)best.n * best.s + CM_EPS)
            best = (struct sol){n, s};
        if (best.n > 0 && (float)best.n * best.s + CM_EPS >= total)
            break;
    }
    return best;
}

/* ncclTopoDupChannels. */
static void dup_channels(struct sol *b, int sm)
{
    if (b->n == 0 || b->s < 25.0f)
        return;
    if (sm > 80 && b->s < 50.0f && b->n > 4)
        return;
    int dup = 2 * b->n < CM_RING_MAXCH ? 2 * b->n : CM_RING_MAXCH;
    if (dup <= b->n)
        return;
    b->s /= (float)((dup + b->n - 1) / b->n);
    b->n = dup;
}

static void ring_tree_graphs(const struct cm_inputs *in, bool multinode,
                             struct rail_model_graph *ring, struct rail_model_graph *tree)
{
    int nl;
    const float *ladder = cm_speed_ladder(in->sm_min, multinode, &nl);
    struct sol r = ring_pass1(in, multinode, ladder, nl, false);
    struct sol t = ring_pass1(in, multinode, ladder, nl, true);
    if (r.n == 0)
        r = (struct sol){1, 0.1f}; /* NCCL's "simple order" fallback */
    if (t.n == 0)
        t = (struct sol){1, 0.1f};
    dup_channels(&r, in->sm_min);
    dup_channels(&t, in->sm_min);

    /* Pass 2, ring: raise the speed while at least as many channels still fit. */
    for (int i = first_index_at_most(ladder, nl, r.s); i > 0; i--) {
        float s = ladder[i - 1];
        int n = channels_at(in, multinode, s, s, CM_RING_MAXCH);
        if (n >= r.n && (float)n * s > (float)r.n * r.s)
            r = (struct sol){n, s};
    }
    /* Pass 2, tree: raise bwIntra only, up to twice bwInter, stop at the first failure. */
    float t_intra = t.s;
    for (int i = first_index_at_most(ladder, nl, t.s); i > 0 && t_intra < 2.0f * t.s; i--) {
        float s = ladder[i - 1];
        if (channels_at(in, multinode, s, t.s, CM_RING_MAXCH) < t.n)
            break;
        t_intra = s;
    }

    ring->nchannels = r.n;
    ring->bw_intra = ring->bw_inter = r.s;
    tree->nchannels = t.n;
    tree->bw_intra = t_intra;
    tree->bw_inter = t.s;
}

/* NVLS: every GPU pulls through the NVSwitch; a channel's head GPU carries twice the traffic. */
static void nvls_graph(const struct cm_inputs *in, bool multinode, struct rail_model_graph *g)
{
    g->nchannels = 0;
    g->bw_intra = g->bw_inter = 0.0f;
    if (!(in->nvswitch && in->nvlink && in->sm_min >= 90 && in->ngpus >= 2))
        return;
    int nl;
    const float *ladder = cm_speed_ladder(in->sm_min, multinode, &nl);
    struct sol best = {0, 0.0f};
    if (!multinode) {
        int heads = in->ngpus < CM_MAX_NVLS_ARITY ? in->ngpus : CM_MAX_NVLS_ARITY;
        float total = in->total_bw * (float)in->ngpus / (float)(in->ngpus - 1);
        int i = 0;
        while (i < nl - 1 &&
               (ladder[i] > in->bw_intra + CM_EPS || ladder[i] * (float)heads > total + CM_EPS))
            i++;
        for (; i < nl; i++)
            if ((float)(heads + 1) * ladder[i] <= in->bw_intra + CM_EPS) {
                best = (struct sol){heads, ladder[i]};
                break;
            }
    } else {
        float max_bw = max_nic_gbps(in);
        int i = 0;
        while (i < nl - 1 && ladder[i] > max_bw + CM_EPS)
            i++;
        for (; i < nl; i++) {
            float s = ladder[i];
            if (best.n > 0 && !(s / best.s > 0.49f))
                break;
            int heads = nics_at_least(in, s);
            if (heads > in->ngpus)
                heads = in->ngpus;
            if (heads < 1 || (float)(heads + 1) * s > in->bw_intra + CM_EPS)
                continue;
            if (heads > best.n || (float)heads * s > (float)best.n * best.s + CM_EPS)
                best = (struct sol){heads, s};
        }
    }
    if (best.n == 0)
        return;
    /* Pass 2: raise bwInter while it is below twice bwIntra (and the heads' NICs carry it). */
    float inter = best.s;
    for (int i = first_index_at_most(ladder, nl, best.s); i > 0 && inter < 2.0f * best.s; i--) {
        float s = ladder[i - 1];
        if (multinode && nics_at_least(in, s) < best.n)
            break;
        inter = s;
    }
    g->nchannels = best.n;
    g->bw_intra = best.s;
    g->bw_inter = inter;
}

void cm_emulate_graphs(const struct cm_inputs *in, const struct rail_comm_shape *shape,
                       struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], int *comm_nchannels)
{
    bool multinode = shape->nnodes > 1;
    memset(graphs, 0, sizeof(graphs[0]) * NCCL_NUM_ALGORITHMS);
    struct rail_model_graph ring = {0}, tree = {0}, nvls = {0};
    ring_tree_graphs(in, multinode, &ring, &tree);
    nvls_graph(in, multinode, &nvls);

    int type_inter = multinode ? in->type_inter : RAIL_PATH_PIX;
    struct rail_model_graph *all[] = {&ring, &tree, &nvls};
    for (int i = 0; i < 3; i++) {
        all[i]->type_intra = in->type_intra;
        all[i]->type_inter = type_inter;
        all[i]->lat_inter = in->props_lat;
    }
    graphs[NCCL_ALGO_TREE] = tree;
    graphs[NCCL_ALGO_RING] = ring;
    graphs[NCCL_ALGO_COLLNET_DIRECT] = tree; /* not emulated: CollNet is off unless declared */
    graphs[NCCL_ALGO_COLLNET_CHAIN] = tree;
    graphs[NCCL_ALGO_NVLS] = nvls;
    graphs[NCCL_ALGO_NVLS_TREE] = nvls;
    graphs[NCCL_ALGO_PAT] = tree;

    int n = ring.nchannels < tree.nchannels ? ring.nchannels : tree.nchannels;
    n = 2 * n < CM_MAXCHANNELS ? 2 * n : CM_MAXCHANNELS;
    if (in->sm_min >= 90 && multinode && ring.bw_intra > 45.0f && n < 16)
        n = 2 * n < CM_MAXCHANNELS ? 2 * n : CM_MAXCHANNELS;
    *comm_nchannels = n > 0 ? n : 1;
}
