/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_COST_MODEL_STEPS_H
#define NCCL_RAIL_COST_MODEL_STEPS_H

#include "model/cost_model_internal.h"
#include "model/model_table.h"

/* cost_model_steps.c: the trained step model (docs/cost-model.md §12) replaces the project
 * table's Ring, Tree, NVLSTree and PAT entries of a communicator that spans nodes, where NCCL
 * offers them. */
void cm_step_tables(struct rail_model *m, const struct cm_inputs *in,
                    const struct rail_step_coef *k);

#endif
