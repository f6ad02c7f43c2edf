/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler tables NCCL looks up by name (dlsym): the only profiler symbols that leave
 * libnccl-tuner-rail.so and libnccl-net-rail.so (tuner-plugin/abi/exports.map,
 * net-plugin/abi/exports.map). */
#ifndef NCCL_RAIL_PROFILER_EXPORTS_H
#define NCCL_RAIL_PROFILER_EXPORTS_H

#include "nccl/nccl_profiler.h"

#define RAIL_PROF_EXPORT __attribute__((visibility("default")))

extern RAIL_PROF_EXPORT const ncclProfiler_v7_t ncclProfiler_v7;
extern RAIL_PROF_EXPORT const ncclProfiler_v6_t ncclProfiler_v6;
extern RAIL_PROF_EXPORT const ncclProfiler_v5_t ncclProfiler_v5;

#endif
