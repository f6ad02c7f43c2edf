/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model: predicted time of every (collective, algorithm, protocol) for a communicator on
 * a topology. Pure C, no I/O, deterministic (no timing, no randomness), so every rank agrees.
 * Every constant and its source is documented in docs/cost-model.md.
 *
 * Two tables are built from the same topology-derived inputs:
 *  - nccl_lat/nccl_bw: NCCL 2.28.9's own model (src/graph/tuning.cc), re-implemented faithfully
 *    and fed with an emulation of NCCL's topology search (what NCCL would predict);
 *  - lat/bw: the project's model = the NCCL table plus documented refinements where the topology
 *    says more than NCCL's model (what the tuner acts on). */
#ifndef NCCL_RAIL_COST_MODEL_H
#define NCCL_RAIL_COST_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "model/cost_model_constants.h"
#include "model/cost_model_measured.h"
#include "model/cost_model_types.h"
#include "nccl/nccl_tuner.h"
#include "nccl_names.h"
#include "topo.h"

/* Build the model. constants may be NULL (NCCL's 2.28.9 defaults are used). Returns 0, or -EINVAL
 * when m or shape is NULL (t may be NULL: the model is then built, not confident). */
int rail_model_build(struct rail_model *m, const struct rail_topo *t,
                     const struct rail_comm_shape *shape, const ncclTunerConstants_v5_t *constants);
/* The same with an explicit table (NULL: the embedded one). */
int rail_model_build_with(struct rail_model *m, const struct rail_topo *t,
                          const struct rail_comm_shape *shape,
                          const ncclTunerConstants_v5_t *constants,
                          const struct rail_model_table *table);

/* Predicted time in µs, or -1 when the model considers the combination impossible: the step
 * model (or the prior) times the measured residual of the table where one applies. */
float rail_model_time(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes,
                      int num_pipe_ops);
/* The physical prior's time (prior_lat/prior_bw), no residual. */
float rail_model_prior_time(const struct rail_model *m, int coll, int algo, int proto,
                            size_t nbytes, int num_pipe_ops);
/* The same for NCCL 2.28.9's own model (nccl_lat/nccl_bw) fed with the same inputs. */
float rail_model_nccl_time(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes,
                           int num_pipe_ops);

/* The fastest combination by rail_model_time (ties: first in algo, proto order, as NCCL).
 * Returns its time, or -1 (algo/proto set to -1) when none is possible. */
float rail_model_pick(const struct rail_model *m, int coll, size_t nbytes, int num_pipe_ops,
                      int *algo, int *proto);
/* The same with NCCL's own model. */
float rail_model_nccl_pick(const struct rail_model *m, int coll, size_t nbytes, int num_pipe_ops,
                           int *algo, int *proto);

#endif
