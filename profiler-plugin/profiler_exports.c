/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL profiler ABI tables: ncclProfiler_v7 (NCCL 2.31, 2.32: searched first), ncclProfiler_v6
 * (NCCL 2.29, 2.30) and ncclProfiler_v5 (NCCL 2.28). Linked into both libnccl-tuner-rail.so and
 * libnccl-net-rail.so (NCCL looks for the profiler in the net plugin's library when no profiler
 * library of its own loads). The v5 and v6 descriptors are one layout; a v7 descriptor is read
 * through its own layout only and handed on as the v5 fields the core reads. */
#include "profiler_exports.h"

#include "prof_plugin.h"

#define PLUGIN_NAME "rail"

static ncclResult_t init_v7(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
                            int nnodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    return rail_prof_plugin_init(7, ctx, comm_id, mask, comm_name, nnodes, nranks, rank, logfn);
}

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

/* v7: the Coll and KernelCh events, field by field from the v7 layout. A symmetric-memory
 * collective (isSymColl) ran a kernel NCCL picked outside the (algorithm, protocol) choice the
 * tuner makes: it goes on without a name, which the core counts as "not a collective the tuner
 * decides". userTag is not kept (the profile file has no place for it, the calibration does not
 * group by it). Every other type, kernelPhase included, is not tracked (NULL handle). */
static ncclResult_t start_event_v7(void *ctx, void **handle, ncclProfilerEventDescr_v7_t *d)
{
    ncclProfilerEventDescr_v5_t v5 = {0};

    if (!handle)
        return ncclSuccess;
    *handle = NULL;
    if (!d)
        return ncclSuccess;
    v5.type = d->type;
    v5.parentObj = d->parentObj;
    v5.rank = d->rank;
    if (d->type == ncclProfileColl) {
        v5.coll = d->coll.v6;
        if (d->coll.isSymColl)
            v5.coll.func = NULL;
    } else if (d->type == ncclProfileKernelCh) {
        v5.kernelCh.channelId = d->kernelCh.channelId;
        v5.kernelCh.pTimer = d->kernelCh.pTimer;
    } else {
        return ncclSuccess;
    }
    return rail_prof_plugin_start(ctx, handle, &v5);
}

/* Only a KernelCh stop is recorded; a kernelPhase stop (31) never reaches the core, whatever the
 * handle. */
static ncclResult_t record_state_v7(void *handle, ncclProfilerEventState_t state,
                                    ncclProfilerEventStateArgs_v7_t *args)
{
    if (state != ncclProfilerKernelChStop)
        return ncclSuccess;
    return rail_prof_plugin_record(handle, state, args);
}

const ncclProfiler_v7_t ncclProfiler_v7 = {
    .name = PLUGIN_NAME,
    .init = init_v7,
    .startEvent = start_event_v7,
    .stopEvent = rail_prof_plugin_stop,
    .recordEventState = record_state_v7,
    .finalize = rail_prof_plugin_finalize,
};

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
