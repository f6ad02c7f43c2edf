/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_COST_MODEL_REFINE_H
#define NCCL_RAIL_COST_MODEL_REFINE_H

#include "model/cost_model_internal.h"
#include "nccl/nccl_tuner.h"

/* cost_model_refine.c: the project's refinements on top of the NCCL tables (c: the constants the
 * project table was computed with). */
void cm_refine(struct rail_model *m, const struct cm_inputs *in, const ncclTunerConstants_v5_t *c);

#endif
