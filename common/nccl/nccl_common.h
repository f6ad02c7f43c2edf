/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL plugin ABI: the types shared by every plugin kind (NCCL 2.28.9 layouts; the values NCCL
 * added later are named below by the release that added them).
 * Written by the nccl-rail project from the field lists of the NCCL 2.28 ABI notes;
 * the project never includes NCCL's own headers so the plugins build without NCCL. */
#ifndef NCCL_RAIL_ABI_COMMON_H
#define NCCL_RAIL_ABI_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifndef NCCL_H_ /* nccl.h defines ncclResult_t with the same values */
typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
} ncclResult_t;
#endif

/* The number of ncclResult_t values is not one constant across releases: NCCL 2.30 added
 * ncclTimeout = 8, and ncclNumResults went from 8 to 9. A plugin never returns ncclTimeout:
 * NCCL 2.18-2.29 do not know the value (docs/compatibility.md, "Values that changed while
 * NCCL kept the name"). */
#define NCCL_NUM_RESULTS_2_18    8 /* ncclNumResults in NCCL 2.18 .. 2.29 */
#define NCCL_NUM_RESULTS_2_30    9 /* ncclNumResults from NCCL 2.30 */
#define NCCL_RESULT_TIMEOUT_2_30 8 /* ncclTimeout, NCCL 2.30 and later only */

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
    NCCL_INIT = 0x1,
    NCCL_COLL = 0x2,
    NCCL_P2P = 0x4,
    NCCL_SHM = 0x8,
    NCCL_NET = 0x10,
    NCCL_GRAPH = 0x20,
    NCCL_TUNING = 0x40,
    NCCL_ENV = 0x80,
    NCCL_ALLOC = 0x100,
    NCCL_CALL = 0x200,
    NCCL_PROXY = 0x400,
    NCCL_NVLS = 0x800,
    NCCL_BOOTSTRAP = 0x1000,
    NCCL_REG = 0x2000,
    NCCL_PROFILE = 0x4000,
    NCCL_RAS = 0x8000,
    NCCL_ALL = ~0
} ncclDebugLogSubSys;

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4,
    ncclFuncSendRecv = 5,
    ncclFuncSend = 6,
    ncclFuncRecv = 7,
    ncclFuncAlltoAll = 8,
    ncclFuncScatter = 9,
    ncclFuncGather = 10,
    /* NCCL 2.29 added ids 11..14 (AllGatherV, PutSignal, Signal, WaitSignal): a tuner handed
     * one of them (or any id it does not know) leaves the decision to NCCL. */
} ncclFunc_t;

/* ncclNumFuncs, by release: 11 up to NCCL 2.28, 15 from NCCL 2.29. No array of the project is
 * indexed by a function id beyond NCCL_NUM_FUNCTIONS (the tuned collectives). */
#define NCCL_NUM_FUNCS_2_18       11
#define NCCL_NUM_FUNCS_2_29       15
#define NCCL_FUNC_ALLGATHERV_2_29 11

/* Only functions 0..NCCL_NUM_FUNCTIONS-1 have tuning tables. */
#define NCCL_NUM_FUNCTIONS 5

typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *pHandle,
                                               int64_t pluginId, void *extData);

#endif
