/* SPDX-License-Identifier: Apache-2.0 */
#include "decide/extrapolate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_table.h"

#define MAX_NODECNT 64

static int comm_rpn(const struct rail_model *m)
{
    const struct rail_comm_shape *s = &m->shape;
    return s->min_rpn == s->max_rpn && s->nranks % s->nnodes == 0 ? s->nranks / s->nnodes : 0;
}

/* The node counts of the training systems (records naming no pair) of m's family, generation
 * and ranks per node for coll, sorted; their number. */
static int trained_nodes(const struct rail_model *m, int coll, int nodes[MAX_NODECNT])
{
    const struct rail_model_table *t = m ? m->table : NULL;
    int rpn = m ? comm_rpn(m) : 0, nc = 0;

    if (!t || rpn < 1 || m->shape.nnodes < 2 || m->family == RAIL_FAM_NODE)
        return 0;
    for (int i = 0; i < t->ncover; i++) {
        const struct rail_table_cover *c = &t->cover[i];
        int k = 0;
        if (c->algo != RAIL_COVER_ANY || c->family != m->family || c->gen != m->compcap_idx ||
            c->coll != coll || c->rpn != rpn)
            continue;
        while (k < nc && nodes[k] < c->nnodes)
            k++;
        if ((k < nc && nodes[k] == c->nnodes) || nc == MAX_NODECNT)
            continue;
        memmove(&nodes[k + 1], &nodes[k], sizeof(int) * (size_t)(nc - k));
        nodes[k] = c->nnodes;
        nc++;
    }
    return nc;
}

int rail_extrap_ring_edges(const struct rail_model *m, int coll, int *edge, int *next)
{
    int nodes[MAX_NODECNT], nc = trained_nodes(m, coll, nodes), nn = m ? m->shape.nnodes : 0;

    if (nc < 1 || (nn >= nodes[0] && nn <= nodes[nc - 1]))
        return 0;
    bool above = nn > nodes[nc - 1];
    *edge = above ? nodes[nc - 1] : nodes[0];
    *next = nc < 2 ? 0 : above ? nodes[nc - 2] : nodes[1];
    return 1;
}

int rail_extrap_edges(const struct rail_model *m, int coll, int *edge, int *next, float *dist)
{
    int e, n;

    /* The ring rule's edges, when there is a next trained node count beside the nearest. */
    if (!rail_extrap_ring_edges(m, coll, &e, &n) || n == 0)
        return 0;
    *edge = e;
    *next = n;
    *dist = (float)fabs(log2((double)m->shape.nnodes / (double)e));
    return 1;
}

float rail_extrap_margin(const struct rail_model *m, float dist)
{
    return m->table->margin0 + 2.0f * m->table->margin_slope * dist;
}

/* The model of the same communicator at nnodes (same ranks per node), built once per distinct
 * node count. */
static const struct rail_model *edge_model(struct rail_extrap *x, const struct rail_model *m,
                                           const struct rail_topo *topo,
                                           const ncclTunerConstants_v5_t *constants, int nnodes)
{
    for (int i = 0; i < x->nmodels; i++)
        if (x->models[i]->shape.nnodes == nnodes)
            return x->models[i];
    if (x->nmodels == RAIL_EXTRAP_MAX_MODELS)
        return NULL;
    struct rail_model *e = malloc(sizeof(*e));
    if (!e)
        return NULL;
    int rpn = comm_rpn(m);
    struct rail_comm_shape s = {
        .nranks = rpn * nnodes, .nnodes = nnodes, .min_rpn = rpn, .max_rpn = rpn};
    if (rail_model_build_with(e, topo, &s, constants, m->table) < 0 || !e->confident ||
        e->family != m->family || e->compcap_idx != m->compcap_idx) {
        free(e);
        return NULL;
    }
    x->models[x->nmodels++] = e;
    return e;
}

int rail_extrap_init(struct rail_extrap *x, const struct rail_model *m,
                     const struct rail_topo *topo, const ncclTunerConstants_v5_t *constants)
{
    int n = 0;
    memset(x, 0, sizeof(*x));
    if (!m || !m->confident || !topo)
        return 0;
    for (int c = 0; c < RAIL_NUM_COLLS; c++) {
        struct rail_extrap_coll *xc = &x->coll[c];
        if (!rail_extrap_edges(m, c, &xc->edge, &xc->next, &xc->dist) ||
            xc->dist > RAIL_EXTRAP_MAX_OCTAVES + 1e-4f)
            continue;
        xc->m_edge = edge_model(x, m, topo, constants, xc->edge);
        xc->m_next = edge_model(x, m, topo, constants, xc->next);
        /* No model there (out of memory, or the topology builds another class at that node
         * count): nothing is carried for this collective. */
        xc->active = xc->m_edge && xc->m_next;
    }
    for (int c = 0; c < RAIL_NUM_COLLS; c++) {
        struct rail_extrap_coll *xc = &x->coll[c];
        int edge, next;
        if (!rail_extrap_ring_edges(m, c, &edge, &next))
            continue;
        xc->r_edge = edge_model(x, m, topo, constants, edge);
        xc->r_next = next ? edge_model(x, m, topo, constants, next) : NULL;
        xc->ring = xc->r_edge && (!next || xc->r_next);
        xc->ring_from[0] = next && next < edge ? next : edge;
        xc->ring_from[1] = next && next < edge ? edge : next;
    }
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        n += x->coll[c].active || x->coll[c].ring;
    return n;
}

void rail_extrap_fini(struct rail_extrap *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->nmodels; i++)
        free(x->models[i]);
    memset(x, 0, sizeof(*x));
}
