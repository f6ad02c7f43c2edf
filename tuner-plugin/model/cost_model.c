/* SPDX-License-Identifier: Apache-2.0 */
/* Building the model and predicting times (ncclTopoGetAlgoTime's formula). */
#include "model/cost_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/cost_model_inputs.h"
#include "model/cost_model_internal.h"
#include "model/cost_model_nccl.h"
#include "model/cost_model_refine.h"
#include "model/cost_model_search.h"
#include "model/cost_model_steps.h"
#include "model/model_table.h"

static bool sanitize_shape(struct rail_comm_shape *s)
{
    bool ok = true;
    if (s->nranks < 1) {
        s->nranks = 1;
        ok = false;
    }
    if (s->nnodes < 1 || s->nnodes > s->nranks) {
        s->nnodes = s->nnodes < 1 ? 1 : s->nranks;
        ok = false;
    }
    int avg = s->nranks / s->nnodes;
    if (s->min_rpn <= 0 || s->min_rpn > s->nranks)
        s->min_rpn = avg;
    if (s->max_rpn < s->min_rpn || s->max_rpn > s->nranks)
        s->max_rpn = s->min_rpn > avg ? s->min_rpn : avg;
    return ok;
}

int rail_model_build(struct rail_model *m, const struct rail_topo *t,
                     const struct rail_comm_shape *shape, const ncclTunerConstants_v5_t *constants)
{
    return rail_model_build_with(m, t, shape, constants, NULL);
}

int rail_model_build_with(struct rail_model *m, const struct rail_topo *t,
                          const struct rail_comm_shape *shape,
                          const ncclTunerConstants_v5_t *constants,
                          const struct rail_model_table *table)
{
    if (!m || !shape)
        return -EINVAL;
    memset(m, 0, sizeof(*m));
    /* Field by field: the padding stays zero, so two builds compare equal byte for byte. */
    m->shape.nranks = shape->nranks;
    m->shape.nnodes = shape->nnodes;
    m->shape.min_rpn = shape->min_rpn;
    m->shape.max_rpn = shape->max_rpn;
    m->shape.collnet = shape->collnet;
    bool shape_ok = sanitize_shape(&m->shape);
    ncclTunerConstants_v5_t defaults;
    if (!constants) {
        rail_model_default_constants(&defaults);
        constants = &defaults;
    }

    struct cm_inputs in;
    m->confident = cm_derive_inputs(t, &m->shape, &in, m->why, sizeof(m->why));
    if (!shape_ok) {
        m->confident = false;
        snprintf(m->why, sizeof(m->why), "invalid communicator shape (nranks %d, nnodes %d)",
                 shape->nranks, shape->nnodes);
    }
    m->sm = in.sm_min;
    m->sm_max = in.sm_max;
    m->compcap_idx = cm_compcap_index(in.sm_min);
    m->cpu_vendor = in.cpu_vendor;
    m->nvlink = in.nvlink;
    m->nvls_fabric = in.nvswitch;
    m->bw_intra = in.bw_intra;
    m->bw_inter = in.bw_inter;
    m->lat_inter_us = in.lat_inter;

    cm_emulate_graphs(&in, &m->shape, m->graphs, &m->comm_nchannels);
    /* nvlsSupport also needs CUDA multicast, which NVSwitch Hopper/Blackwell nodes have. */
    m->nvls = m->graphs[NCCL_ALGO_NVLS].nchannels >= 2;
    /* ncclPatEnable with NCCL_PAT_ENABLE=2: sm60+, one GPU per node, a host-side net device. */
    m->pat = m->sm >= 60 && m->shape.nnodes == m->shape.nranks;

    /* What NCCL would predict with the constants it passed. */
    cm_tables(m, constants, m->graphs, m->nccl_lat, m->nccl_bw);

    /* The physical prior: the constants as the tuner will leave them, the network latency by
     * NIC type, then the refinements. */
    ncclTunerConstants_v5_t tuned = *constants;
    if (t)
        rail_model_tune_constants(m, t, &tuned);
    struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS];
    memcpy(graphs, m->graphs, sizeof(graphs));
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        graphs[a].lat_inter = in.lat_inter;
    cm_tables(m, &tuned, graphs, m->lat, m->bw);
    cm_refine(m, &in, &tuned);
    memcpy(m->prior_lat, m->lat, sizeof(m->prior_lat));
    memcpy(m->prior_bw, m->bw, sizeof(m->prior_bw));

    /* What the measurements taught (docs/cost-model.md §12): the step model where the table is
     * trained for this network family and GPU generation, and the measured residuals. */
    m->table = table ? table : rail_model_table_builtin();
    m->family = m->shape.nnodes <= 1 ? RAIL_FAM_NODE : (in.efa ? RAIL_FAM_EFA : RAIL_FAM_IB);
    if (m->shape.nnodes > 1 && m->table->has_coef[m->family][m->compcap_idx])
        cm_step_tables(m, &in, &m->table->coef[m->family][m->compcap_idx]);
    cm_resolve_residuals(m);
    /* Channel suggestions stay 0 (keep NCCL's): see docs/cost-model.md "Channels". */
    return 0;
}

static int log2_floor(size_t n)
{
    int l = -1;
    while (n > 0) {
        n >>= 1;
        l++;
    }
    return l;
}

/* ncclTopoGetAlgoTime's formula; corrections: NCCL's tree correction factor and ring plateau
 * (the step model has neither: it is fitted on measured times without them). */
static float time_of(const struct rail_model *m, const cm_table lat, const cm_table bw, int coll,
                     int algo, int proto, size_t nbytes, int num_pipe_ops, bool corrections)
{
    if (!m || coll < 0 || coll >= RAIL_NUM_COLLS || algo < 0 || algo >= NCCL_NUM_ALGORITHMS ||
        proto < 0 || proto >= NCCL_NUM_PROTOCOLS)
        return -1.0f;
    if (m->shape.nranks <= 1)
        return algo == NCCL_ALGO_RING && proto == NCCL_PROTO_SIMPLE ? 0.0f : -1.0f;
    double b = bw[coll][algo][proto];
    if (!(b > 0.0))
        return -1.0f;
    double l = lat[coll][algo][proto];
    int log_size = log2_floor(nbytes >> 6);
    if (corrections && algo == NCCL_ALGO_TREE && coll == ncclFuncAllReduce && log_size >= 0 &&
        log_size < CM_TREE_CORRECTION_SIZES)
        b *= cm_tree_correction[proto][log_size];
    if (corrections && algo == NCCL_ALGO_RING && proto == NCCL_PROTO_SIMPLE &&
        m->shape.nnodes > 1 && coll == ncclFuncAllReduce &&
        nbytes / ((size_t)m->comm_nchannels * (size_t)m->shape.nranks) >= 64)
        l *= m->sm < 80 ? 1.9 : 1.4; /* ring plateau */
    int pipe = num_pipe_ops > 0 ? num_pipe_ops : 1;
    int lat_count =
        algo == NCCL_ALGO_RING ? pipe : (pipe + CM_MAX_DEV_WORK_BATCH - 1) / CM_MAX_DEV_WORK_BATCH;
    return (float)(l * lat_count + (double)nbytes / (1000.0 * b));
}

float rail_model_time(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes,
                      int num_pipe_ops)
{
    if (!m)
        return -1.0f;
    float t = time_of(m, m->lat, m->bw, coll, algo, proto, nbytes, num_pipe_ops, !m->trained);
    if (t > 0.0f) {
        float r = rail_model_residual(m, coll, algo, proto, nbytes);
        if (r != 0.0f)
            t *= expf(r);
    }
    return t;
}

float rail_model_prior_time(const struct rail_model *m, int coll, int algo, int proto,
                            size_t nbytes, int num_pipe_ops)
{
    if (!m)
        return -1.0f;
    return time_of(m, m->prior_lat, m->prior_bw, coll, algo, proto, nbytes, num_pipe_ops, true);
}

float rail_model_nccl_time(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes,
                           int num_pipe_ops)
{
    if (!m)
        return -1.0f;
    return time_of(m, m->nccl_lat, m->nccl_bw, coll, algo, proto, nbytes, num_pipe_ops, true);
}

static float pick(const struct rail_model *m, bool nccl, int coll, size_t nbytes, int pipe,
                  int *algo, int *proto)
{
    float best = -1.0f;
    int ba = -1, bp = -1;
    for (int a = 0; m && a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            float t = nccl ? rail_model_nccl_time(m, coll, a, p, nbytes, pipe)
                           : rail_model_time(m, coll, a, p, nbytes, pipe);
            if (t >= 0.0f && (best < 0.0f || t < best)) {
                best = t;
                ba = a;
                bp = p;
            }
        }
    if (algo)
        *algo = ba;
    if (proto)
        *proto = bp;
    return best;
}

float rail_model_pick(const struct rail_model *m, int coll, size_t nbytes, int num_pipe_ops,
                      int *algo, int *proto)
{
    return pick(m, false, coll, nbytes, num_pipe_ops, algo, proto);
}

float rail_model_nccl_pick(const struct rail_model *m, int coll, size_t nbytes, int num_pipe_ops,
                           int *algo, int *proto)
{
    return pick(m, true, coll, nbytes, num_pipe_ops, algo, proto);
}
