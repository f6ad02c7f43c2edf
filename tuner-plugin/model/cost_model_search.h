/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_COST_MODEL_SEARCH_H
#define NCCL_RAIL_COST_MODEL_SEARCH_H

#include "model/cost_model_internal.h"

/* cost_model_search.c: emulation of NCCL's search for ring/tree and NVLS graphs. */
void cm_emulate_graphs(const struct cm_inputs *in, const struct rail_comm_shape *shape,
                       struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], int *comm_nchannels);

#endif
