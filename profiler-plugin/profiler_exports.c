/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL profiler ABI tables: ncclProfiler_v6 (NCCL 2.29, 2.30: searched first) and ncclProfiler_v5
 * (NCCL 2.28). Linked into both libnccl-tuner-rail.so and libnccl-net-rail.so (NCCL looks for the
 * profiler in the net plugin's library when no profiler library of its own loads). The two
 * descriptors share every field the profiler reads (nccl/nccl_profiler.h). */
#include "profiler_exports.h"

#include "prof_plugin.h"

#define PLUGIN_NAME "rail"

static ncclResult_t init_v6(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
                            int nnodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    return rail_prof_plugin_init(6, ctx, comm_id, mask, comm_name, nnodes, nranks, rank, logfn);
}

static ncclResult_t init_v5(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
                            int nnodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    return rail_prof_plugin_init(5, ctx, comm_id, mask, comm_name, nnodes, nranks, rank, logfn);
}

static ncclResult_t start_event(void *ctx, void **handle, ncclProfilerEventDescr_v5_t *d)
{
    return rail_prof_plugin_start(ctx, handle, d);
}

static ncclResult_t record_state(void *handle, ncclProfilerEventState_t state,
                                 ncclProfilerEventStateArgs_v5_t *args)
{
    return rail_prof_plugin_record(handle, state, args);
}

const ncclProfiler_v6_t ncclProfiler_v6 = {
    .name = PLUGIN_NAME,
    .init = init_v6,
    .startEvent = start_event,
    .stopEvent = rail_prof_plugin_stop,
    .recordEventState = record_state,
    .finalize = rail_prof_plugin_finalize,
};

const ncclProfiler_v5_t ncclProfiler_v5 = {
    .name = PLUGIN_NAME,
    .init = init_v5,
    .startEvent = start_event,
    .stopEvent = rail_prof_plugin_stop,
    .recordEventState = record_state,
    .finalize = rail_prof_plugin_finalize,
};
