/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler plugin around the core (prof_core.h): the knobs, one file per rank of each
 * communicator in NCCL_RAIL_PROFILE_DIR written at finalize (and every
 * NCCL_RAIL_PROFILE_INTERVAL seconds by one process-wide thread), the log lines. The versioned
 * NCCL tables (profiler_exports.c) call these; tests call them directly.
 *
 * Without NCCL_RAIL_PROFILE_DIR (the default) init asks NCCL for no event at all, so a process
 * that loads the library for its net or tuner plugin pays nothing: NCCL falls back to the net
 * plugin's library for the profiler when no other profiler library loads. */
#ifndef NCCL_RAIL_PROF_PLUGIN_H
#define NCCL_RAIL_PROF_PLUGIN_H

#include <stdint.h>

#include "nccl/nccl_profiler.h"

/* abi: the table NCCL picked (5, 6 or 7), for the log and the file. */
ncclResult_t rail_prof_plugin_init(int abi, void **context, uint64_t comm_id, int *mask,
                                   const char *comm_name, int nnodes, int nranks, int rank,
                                   ncclDebugLogger_t logfn);
ncclResult_t rail_prof_plugin_start(void *context, void **handle,
                                    const ncclProfilerEventDescr_v5_t *d);
ncclResult_t rail_prof_plugin_stop(void *handle);
ncclResult_t rail_prof_plugin_record(void *handle, ncclProfilerEventState_t state,
                                     const ncclProfilerEventStateArgs_v5_t *args);
/* Writes the file (last time), logs what was recorded and frees the context. */
ncclResult_t rail_prof_plugin_finalize(void *context);

/* Write every live context's file now (what the interval thread does). Returns the number of
 * files written. Tests. */
int rail_prof_plugin_flush_all(void);

/* Tests: called by the finalize of the last communicator after it has stopped the interval
 * thread's generation and released the registry, before it joins that thread: the window in
 * which another communicator's init may start the next thread. NULL: none. */
void rail_prof_plugin_set_join_hook(void (*hook)(void));

#endif
