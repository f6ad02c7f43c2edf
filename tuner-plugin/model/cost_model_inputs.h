/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_COST_MODEL_INPUTS_H
#define NCCL_RAIL_COST_MODEL_INPUTS_H

#include "model/cost_model_internal.h"

/* cost_model_inputs.c: fills in and the model's inputs; returns false with a reason when the
 * topology is too unknown for the model to be trusted. */
bool cm_derive_inputs(const struct rail_topo *t, const struct rail_comm_shape *shape,
                      struct cm_inputs *in, char *why, size_t whylen);

#endif
