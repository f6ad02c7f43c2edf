/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_COST_MODEL_NCCL_H
#define NCCL_RAIL_COST_MODEL_NCCL_H

#include "model/cost_model_internal.h"
#include "nccl/nccl_tuner.h"

/* cost_model_nccl.c: NCCL 2.28.9's ncclTopoTuneModel on graphs (latency µs, algorithm GB/s; bw 0
 * where NCCL would not offer the combination). Reads m's shape, sm, compcap, flags. */
void cm_tables(const struct rail_model *m, const ncclTunerConstants_v5_t *c,
               const struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], cm_table lat,
               cm_table bw);
/* Ring/tree algorithm-bandwidth conversion helpers shared by nccl and refine. */
int cm_nsteps(int coll, int nranks);

#endif
