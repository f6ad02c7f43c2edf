/* SPDX-License-Identifier: Apache-2.0 */
/* What the measurements behind the trained table say about one communicator
 * (cost_model_measured.c): residuals, trust, the platform class. */
#ifndef NCCL_RAIL_COST_MODEL_MEASURED_H
#define NCCL_RAIL_COST_MODEL_MEASURED_H

#include <stdbool.h>
#include <stddef.h>

#include "model/cost_model_types.h"

/* cost_model_measured.c: the measured residuals of the table resolved for this communicator. */
void cm_resolve_residuals(struct rail_model *m);

/* From this many bytes per rank PAT's residual is read, between and beyond measured node counts,
 * at the size with the same bytes per rank (as a ring's), below it at the same size. PAT's
 * measured times on P5 (1 GPU per node, EFA) have two features that line up differently across
 * node counts: a bump at 32 KiB that lines up by size (8, 32 and 128 nodes; NCCL picks PAT's
 * channels by size), and a bandwidth knee where the time per byte doubles, between 256 KiB and
 * 1 MiB per rank at every node count 2-512 (2 nodes: 75 -> 135 us from 512 KiB to 1 MiB, 8
 * nodes: 227 -> 635 us from 2 to 4 MiB). 64 KiB per rank lies between the two (32 KiB is 4 KiB
 * per rank on 8 nodes, the knee 256 KiB per rank); docs/cost-model.md §12.3. */
#define RAIL_PAT_PER_RANK_FROM ((size_t)64 << 10)

/* The measured residual log(measured / model) the table gives this communicator (0: none). */
float rail_model_residual(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes);

/* How far the measurements behind the table back a change of NCCL's choice for (coll, nbytes)
 * on this communicator (docs/cost-model.md §12, "Do no harm"): 1 inside the covered range, with
 * *margin = the predicted gain a change must clear (grows with the distance in octaves of nodes
 * and ranks per node from the nearest covered shape, *distance); 0 outside it, with *margin =
 * the table's outside margin (the prior must then predict the gain too). */
int rail_model_trust(const struct rail_model *m, int coll, size_t nbytes, float *margin,
                     float *distance);
/* Whether the table holds any measurement of this communicator's platform class: a record of
 * its network family ("node" for one node) and GPU generation (docs/cost-model.md §12.1). */
bool rail_model_class_seen(const struct rail_model *m);
/* Whether (algo, proto) was measured near this communicator for coll at nbytes: a residual of the
 * table for this family, generation and ranks per node, or a published set at this very shape. */
bool rail_model_pair_measured(const struct rail_model *m, int coll, int algo, int proto,
                              size_t nbytes);

#endif
