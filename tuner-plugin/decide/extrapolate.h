/* SPDX-License-Identifier: Apache-2.0 */
/* Carrying a stable ranking past the trained node range (docs/cost-model.md §12.5).
 *
 * Beyond the node counts a table measured for a collective (the same network family, GPU
 * generation and ranks per node), the residuals fade and the model alone would decide. A pair
 * may still be chosen there when:
 *  - the table's measurements at the two trained node counts nearest to the communicator (the
 *    edge, the one next to it) both rank it first at the same bytes per rank, ahead of each pick
 *    NCCL makes at this node count by the extrapolation margin; and
 *  - the model at this node count predicts the same gain (the physical reason: a ring's
 *    bandwidth term, a tree's latency, still dominates there);
 *  - the communicator is at most RAIL_EXTRAP_MAX_OCTAVES of nodes beyond the edge.
 * The margin grows with the distance, twice as fast as inside the range (margin0 + 2 x slope x
 * octaves of the table). The edge models are built once per communicator, at init. */
#ifndef NCCL_RAIL_EXTRAPOLATE_H
#define NCCL_RAIL_EXTRAPOLATE_H

#include <stdbool.h>

#include "model/cost_model.h"

/* Farthest a ranking is carried: two octaves of nodes beyond the last trained node count. */
#define RAIL_EXTRAP_MAX_OCTAVES 2.0f
#define RAIL_EXTRAP_MAX_MODELS  6 /* distinct edge node counts over the collectives */

/* docs/cost-model.md §12.6: beyond the trained node range, a ring protocol replaces NCCL's ring
 * protocol when the trained node counts nearest to the communicator (the same family, generation,
 * collective and ranks per node) measured it faster at the same bytes per rank by this margin:
 * the median disagreement (10.6%) of two P5 node counts' measured ring-protocol ratios at the
 * same bytes per rank, over the 902 pairs of the fixtures. */
#define RAIL_SAME_STEP_MARGIN 0.10f

struct rail_topo;

struct rail_extrap_coll {
    bool active;
    int edge, next; /* the nearest trained node count and the one after it (away from us) */
    float dist;     /* octaves of nodes from the communicator to edge */
    const struct rail_model *m_edge, *m_next;
    /* §12.6: the models at the nearest trained node count and the next one (NULL when the table
     * trained only one), whose measured ring protocols are read at the same bytes per rank. */
    bool ring;
    int ring_from[2]; /* their node counts, ascending; 0 for none */
    const struct rail_model *r_edge, *r_next;
};

struct rail_extrap {
    struct rail_extrap_coll coll[RAIL_NUM_COLLS];
    int nmodels;
    struct rail_model *models[RAIL_EXTRAP_MAX_MODELS];
};

/* Trained node counts of m's (family, generation, ranks per node) for coll, from the table's
 * training records: which two are the edge beyond which m lies, and how far (pure; no model
 * built). Returns 1 and fills edge/next/dist when m is beyond the range (above or below) with at
 * least two trained node counts, 0 otherwise (inside the range, or fewer than two). */
int rail_extrap_edges(const struct rail_model *m, int coll, int *edge, int *next, float *dist);

/* The same for the ring rule of §12.6: 1 when m is beyond the range of at least one trained node
 * count; *next is 0 when only one was trained. */
int rail_extrap_ring_edges(const struct rail_model *m, int coll, int *edge, int *next);

/* Fill x for m (built from topo with constants, which may be NULL): the edge models of each
 * collective whose communicator lies at most RAIL_EXTRAP_MAX_OCTAVES beyond its trained range,
 * and those of the ring rule (§12.6) at any distance beyond it. A collective whose edge models
 * cannot be built (out of memory) carries nothing. Returns the number of collectives carried
 * by either rule. */
int rail_extrap_init(struct rail_extrap *x, const struct rail_model *m,
                     const struct rail_topo *topo, const ncclTunerConstants_v5_t *constants);
void rail_extrap_fini(struct rail_extrap *x);

/* The margin a carried ranking must clear at dist octaves beyond the trained range. */
float rail_extrap_margin(const struct rail_model *m, float dist);

#endif
