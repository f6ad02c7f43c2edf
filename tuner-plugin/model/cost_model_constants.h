/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL 2.28.9's tuning constants as the cost model reads them (cost_model_constants.c), and the
 * v5 constant refinements. */
#ifndef NCCL_RAIL_COST_MODEL_CONSTANTS_H
#define NCCL_RAIL_COST_MODEL_CONSTANTS_H

#include <stdbool.h>

#include "model/cost_model_types.h"
#include "nccl/nccl_tuner.h"
#include "topo.h"

#define CM_TREE_CORRECTION_SIZES 23

extern const float cm_nvls_efficiency[NCCL_NUM_COMPCAPS];
extern const float cm_tree_correction[NCCL_NUM_PROTOCOLS][CM_TREE_CORRECTION_SIZES];
int cm_compcap_index(int sm);
/* Speed ladders of NCCL's search (src/graph/search.cc). */
const float *cm_speed_ladder(int sm, bool inter, int *n);

/* NCCL 2.28.9's default tuning constants (what v5 init receives). */
void rail_model_default_constants(ncclTunerConstants_v5_t *c);

/* v5 init: refine NCCL's own constants where the topology says more and doing so is safe
 * (documented in docs/cost-model.md). Only entries still holding NCCL's default are changed, so
 * calling it twice changes nothing more. Returns the number of entries changed. */
int rail_model_tune_constants(const struct rail_model *m, const struct rail_topo *t,
                              ncclTunerConstants_v5_t *c);

#endif
