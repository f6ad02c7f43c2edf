/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL 2.28.9's ncclTopoTuneModel (src/graph/tuning.cc), re-implemented from its formulas: the
 * bandwidth and latency of every valid (collective, algorithm, protocol) from the search graphs
 * and the tuning constants. Plus the per-call filters of updateCollCostTable (src/enqueue.cc) that
 * depend only on the communicator, folded in as bandwidth 0. */
#include "model/cost_model_nccl.h"

#include <float.h>
#include <string.h>

#include "model/cost_model_constants.h"

int cm_nsteps(int coll, int nranks)
{
    if (coll == ncclFuncAllReduce)
        return 2 * (nranks - 1);
    if (coll == ncclFuncReduceScatter || coll == ncclFuncAllGather)
        return nranks - 1;
    return nranks;
}

static int log2i(long n)
{
    int l = -1;
    while (n > 0) {
        n >>= 1;
        l++;
    }
    return l;
}

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

/* Network post overhead (getNetOverhead): 1 µs on Intel x86 and others, 2 µs on AMD x86. */
static double net_overhead(int cpu_vendor)
{
    return cpu_vendor == RAIL_CPU_AMD ? 2.0 : 1.0;
}

static bool algo_valid(int coll, int a)
{
    if ((coll == ncclFuncBroadcast || coll == ncclFuncReduce) && a != NCCL_ALGO_RING)
        return false;
    if ((coll == ncclFuncReduceScatter || coll == ncclFuncAllGather) && a != NCCL_ALGO_PAT &&
        a != NCCL_ALGO_RING && a != NCCL_ALGO_NVLS && a != NCCL_ALGO_COLLNET_DIRECT)
        return false;
    if (coll == ncclFuncAllReduce && a == NCCL_ALGO_PAT)
        return false;
    return true;
}

struct caps {
    double ll_max, ring_ll128, tree_ll128, tree, nvls_tree;
};

static double bus_bw(const struct rail_model *m, const struct rail_model_graph *g,
                     const struct caps *k, int coll, int a, int p)
{
    int nnodes = m->shape.nnodes, nranks = m->shape.nranks;
    double ppn = (double)nranks / nnodes;
    bool collnet = a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
    double bw = (nnodes <= 2 || collnet) ? g->bw_intra : g->bw_inter;
    if (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) {
        if (g->nchannels < 2)
            return 0.0;
        double intra =
            g->bw_intra * cm_nvls_efficiency[m->compcap_idx] * (g->nchannels - 1) / g->nchannels;
        intra *= coll == ncclFuncAllReduce ? 2.0 : (ppn - 1) / ppn;
        double inter = g->bw_inter * ((nnodes <= 2 && a == NCCL_ALGO_NVLS_TREE) ? 2 : 1);
        bw = dmin(dmin(intra, inter), a == NCCL_ALGO_NVLS_TREE ? k->nvls_tree : DBL_MAX);
    }
    double bus = g->nchannels * bw;

    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL)
        bus = dmin(k->ll_max, bus * 0.5);
    if (a == NCCL_ALGO_RING && p == NCCL_PROTO_LL128)
        bus = dmin(bus * 0.92, g->nchannels * k->ring_ll128);
    if (a == NCCL_ALGO_TREE && coll == ncclFuncAllReduce)
        bus = dmin(bus * 0.92, g->nchannels * k->tree);
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL)
        bus = dmin(bus / 3.8, k->ll_max);
    if (a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL128)
        bus = dmin(bus * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g->nchannels * k->tree_ll128);
    /* maxTreePattern is assumed BALANCED_TREE (no x0.85), see docs/cost-model.md. */
    if (a == NCCL_ALGO_PAT)
        bus *= 0.75;
    if (collnet && p != NCCL_PROTO_SIMPLE)
        bus = 0.0;
    if (a == NCCL_ALGO_COLLNET_DIRECT && p == NCCL_PROTO_SIMPLE) {
        if (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter) {
            bus = ppn * dmin(g->bw_intra, g->bw_inter * 0.9);
        } else {
            double f = ppn / g->nchannels;
            f -= (f - 1) / 2;
            bus /= f;
            if (m->sm >= 90)
                bus *= 0.85;
        }
    }
    /* Multi-node NVLS/CollNetDirect AllGather/ReduceScatter need a CollNet plugin implementing
     * them and a head per local rank; the tuner cannot see that: unsupported. */
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_COLLNET_DIRECT) &&
        (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter) && nnodes > 1)
        bus = 0.0;

    if (!(a != NCCL_ALGO_RING && (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter))) {
        if (a == NCCL_ALGO_RING || a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE)
            bus *= (double)nranks / cm_nsteps(coll, nranks);
        else
            bus *= 0.5;
    }
    return bus;
}

static double latency(const struct rail_model *m, const struct rail_model_graph *g,
                      const ncclTunerConstants_v5_t *c, int coll, int a, int p)
{
    int nnodes = m->shape.nnodes, nranks = m->shape.nranks;
    double ppn = (double)nranks / nnodes;
    int ppn_i = nranks / nnodes;
    int intra_hw = g->type_intra == RAIL_PATH_NVL ? NCCL_HW_NVLINK : NCCL_HW_PCI;
    int hw = nnodes == 1 ? intra_hw : NCCL_HW_NET;
    int nsteps = cm_nsteps(coll, nranks);

    double lat = c->baseLatencies[a][p];
    double intra_lat = c->hwLatencies[intra_hw][a][p];
    double inter_lat = (ppn == 1 ? c->hwLatencies[NCCL_HW_NET][NCCL_ALGO_TREE][p]
                                 : c->hwLatencies[NCCL_HW_NET][a][p]) +
                       g->lat_inter;
    if (p == NCCL_PROTO_SIMPLE)
        inter_lat += g->lat_inter; /* the flush */

    switch (a) {
    case NCCL_ALGO_RING:
        if (coll == ncclFuncReduce || coll == ncclFuncBroadcast) {
            lat += c->hwLatencies[hw][a][p]; /* sameChannels assumed */
        } else {
            double ovh = 0.0;
            if (nnodes > 1)
                ovh = net_overhead(m->cpu_vendor) * (p == NCCL_PROTO_SIMPLE ? 3 : 1);
            intra_lat = dmax(intra_lat, ovh);
            int ninter = nnodes == 1                 ? 0
                         : coll == ncclFuncAllReduce ? 2 * (nnodes - 1)
                                                     : nnodes - 1;
            lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
        }
        break;
    case NCCL_ALGO_TREE:
        if (coll == ncclFuncAllReduce)
            lat += 2 * ((ppn_i - 1) * intra_lat + log2i(nnodes) * inter_lat);
        break;
    case NCCL_ALGO_COLLNET_DIRECT:
        lat += 2 * ((ppn_i - 1 < 1 ? ppn_i - 1 : 1) * intra_lat + (ppn_i - 1) * 0.4) + inter_lat;
        break;
    case NCCL_ALGO_COLLNET_CHAIN:
        lat += 2 * (ppn_i - 1) * intra_lat + inter_lat;
        break;
    case NCCL_ALGO_NVLS:
        lat = intra_lat + (nnodes > 1 ? inter_lat : 0.0);
        break;
    case NCCL_ALGO_NVLS_TREE:
        lat += intra_lat + 2 * log2i(nnodes) * inter_lat;
        break;
    case NCCL_ALGO_PAT:
        if (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter)
            lat += log2i(nnodes) * (inter_lat / 3.5) + nranks * 2.8;
        break;
    default:
        break;
    }
    return lat;
}

/* LL128 default enablement (protoEnable == 2 in ncclTopoTuneModel, NCCL_LL128_C2C=1). */
static bool ll128_enabled(const struct rail_model *m, const struct rail_model_graph *g)
{
    bool ok = m->sm >= 90 ? g->type_inter <= RAIL_PATH_PXN : g->type_inter <= RAIL_PATH_PXB;
    ok = ok && g->type_intra <= RAIL_PATH_NVB;
    ok = ok && m->sm == m->sm_max;
    ok = ok && m->sm >= 70;
    return ok;
}

static bool algo_enabled(const struct rail_model *m, int coll, int a)
{
    int nnodes = m->shape.nnodes;
    bool collnet = a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
    if (nnodes == 1 && a == NCCL_ALGO_NVLS_TREE)
        return false;
    if (!m->shape.collnet && (collnet || (a == NCCL_ALGO_NVLS && nnodes > 1)))
        return false;
    if (a == NCCL_ALGO_COLLNET_DIRECT && !m->nvls_fabric)
        return false;
    /* updateCollCostTable: CollNet needs <= 8 local ranks; NVLS needs nvlsSupport and, except
     * for AllReduce, at most NCCL_MAX_NVLS_ARITY local ranks; PAT needs its enable. */
    if (collnet && m->shape.max_rpn > CM_MAX_DIRECT_ARITY + 1)
        return false;
    if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) &&
        (!m->nvls || (coll != ncclFuncAllReduce && m->shape.max_rpn > CM_MAX_NVLS_ARITY)))
        return false;
    if (a == NCCL_ALGO_PAT && !m->pat)
        return false;
    return true;
}

void cm_tables(const struct rail_model *m, const ncclTunerConstants_v5_t *c_in,
               const struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], cm_table lat, cm_table bw)
{
    memset(lat, 0, sizeof(cm_table));
    memset(bw, 0, sizeof(cm_table));
    int nnodes = m->shape.nnodes;
    if (m->shape.nranks <= 1)
        return;
    ncclTunerConstants_v5_t c = *c_in;
    if (m->cpu_vendor == RAIL_CPU_POWER) /* NCCL favours Tree on POWER */
        c.hwLatencies[NCCL_HW_PCI][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] =
            c.hwLatencies[NCCL_HW_PCI][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    int cc = m->compcap_idx;
    int scale = nnodes <= 2 ? nnodes - 1 : 2;
    int ll_row = nnodes == 1 ? cc : (m->cpu_vendor == RAIL_CPU_AMD ? 1 : 0);
    struct caps k = {
        .ll_max = c.llMaxBws[ll_row][scale],
        .ring_ll128 = c.perChMaxRingLL128Bws[cc][scale],
        .tree_ll128 = c.perChMaxTreeLL128Bws[cc][scale],
        .tree = c.perChMaxTreeBws[cc][scale],
        .nvls_tree = c.perChMaxNVLSTreeBws[cc][scale],
    };
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++) {
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
            if (!algo_valid(coll, a) || !algo_enabled(m, coll, a))
                continue;
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                if ((a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE || a == NCCL_ALGO_PAT) &&
                    p != NCCL_PROTO_SIMPLE)
                    continue;
                if (p == NCCL_PROTO_LL128 && !ll128_enabled(m, &graphs[a]))
                    continue;
                double b = bus_bw(m, &graphs[a], &k, coll, a, p);
                if (b <= 0.0)
                    continue;
                bw[coll][a][p] = (float)b;
                lat[coll][a][p] = (float)latency(m, &graphs[a], &c, coll, a, p);
            }
        }
    }
}
