/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL profiler plugin ABI, v5 (NCCL 2.28: symbol ncclProfiler_v5), v6 (NCCL 2.29 and 2.30:
 * ncclProfiler_v6, searched before v5) and v7 (NCCL 2.31 and 2.32: ncclProfiler_v7, searched
 * first). Written by the nccl-rail project from the field lists of NCCL's public profiler headers
 * (src/include/plugin/profiler/profiler_v5.h, profiler_v6.h at tags v2.28.9-1 and v2.30.7-1,
 * profiler_v7.h of the 2.31 release: the one with userTag and kernelPhase; a fork's v7 with a
 * string user-tag event on bit 15 is another ABI); only what the rail profiler reads is named,
 * the rest of each union is kept as padding so sizes and offsets match (static_asserts below,
 * x86_64 / LP64).
 *
 * What NCCL does with it (src/plugin/profiler.cc, src/transport/profiler.cc):
 *  - init once per communicator; *eActivationMask is one process-wide mask (the last init
 *    wins); with 0, NCCL calls nothing else but finalize.
 *  - a Coll event per collective task of a launched plan: started and stopped on the thread that
 *    launches the plan (host side, before the GPU ran it); its descriptor carries the function,
 *    count, datatype, channels, algorithm and protocol as NCCL's strings.
 *  - with ncclProfileKernelCh in the mask, NCCL adds a profiler proxy op per channel of each
 *    task; the proxy thread then starts one KernelCh event per channel (parentObj = the Coll
 *    event's handle, pTimer = the GPU globaltimer in ns when the channel started the work),
 *    records ncclProfilerKernelChStop with the stop pTimer and stops it. These arrive on another
 *    thread, before or after the Coll event's stop.
 *  - stopEvent and recordEventState get only the handle; a NULL handle means "not tracked". */
#ifndef NCCL_RAIL_ABI_PROFILER_H
#define NCCL_RAIL_ABI_PROFILER_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl_common.h"

/* Event type bits (eDescr->type, *eActivationMask). */
enum {
    ncclProfileGroup = 1 << 0,
    ncclProfileColl = 1 << 1,
    ncclProfileP2p = 1 << 2,
    ncclProfileProxyOp = 1 << 3,
    ncclProfileProxyStep = 1 << 4,
    ncclProfileProxyCtrl = 1 << 5,
    ncclProfileKernelCh = 1 << 6,
    ncclProfileNetPlugin = 1 << 7,
    ncclProfileGroupApi = 1 << 8,
    ncclProfileCollApi = 1 << 9,
    ncclProfileP2pApi = 1 << 10,
    ncclProfileKernelLaunch = 1 << 11,
    ncclProfileCeColl = 1 << 12, /* v6: copy-engine collectives (no algorithm or protocol) */
    ncclProfileCeSync = 1 << 13,
    ncclProfileCeBatch = 1 << 14,
    ncclProfileKernelPhase = 1 << 15, /* v7: barrier phases inside a KernelCh event */
};

/* Event states (recordEventState); the rail profiler uses only KernelChStop. */
typedef int ncclProfilerEventState_t;
#define ncclProfilerKernelChStop    22
#define ncclProfilerKernelPhaseStop 31 /* v7: the end of a kernelPhase event */

/* The Coll member of the descriptor union (88 bytes, the union's largest in v5 and v6). */
struct rail_nccl_prof_coll {
    uint64_t seqNumber; /* per communicator and function */
    const char *func;   /* "AllReduce", "AllGather", ... (ncclFuncToString) */
    const void *sendBuff;
    void *recvBuff;
    size_t count; /* per rank for AllGather (send) and ReduceScatter (receive) */
    int root;
    const char *datatype; /* "ncclFloat32", ... ("Unknown" for a type NCCL does not name) */
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;  /* "RING", "TREE", "NVLS_TREE", ... (ncclAlgoToString) */
    const char *proto; /* "LL", "LL128", "SIMPLE" */
    void *parentGroup;
};

struct rail_nccl_prof_kernel_ch {
    uint8_t channelId;
    uint64_t pTimer; /* GPU globaltimer, ns */
};

/* v5 and v6 descriptors: type, parent, rank, then a union of per-type members. The v6 union adds
 * copy-engine members no larger than Coll, so both are 112 bytes with the same offsets. */
typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct rail_nccl_prof_coll coll;
        struct rail_nccl_prof_kernel_ch kernelCh;
        unsigned char other[88]; /* the other members: API, launch, p2p, proxy, net events */
    };
} ncclProfilerEventDescr_v5_t;
typedef ncclProfilerEventDescr_v5_t ncclProfilerEventDescr_v6_t;

/* recordEventState arguments (v5 = v6): a union of 8 bytes. */
typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
} ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v6_t;

/* v5, v6 and v7 tables: the same function list (they differ in the descriptor type). */
#define RAIL_NCCL_PROFILER_TABLE(v)                                                                \
    typedef struct {                                                                               \
        const char *name;                                                                          \
        ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask,                \
                             const char *commName, int nNodes, int nranks, int rank,               \
                             ncclDebugLogger_t logfn);                                             \
        ncclResult_t (*startEvent)(void *context, void **eHandle,                                  \
                                   ncclProfilerEventDescr_##v##_t *eDescr);                        \
        ncclResult_t (*stopEvent)(void *eHandle);                                                  \
        ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_t eState,           \
                                         ncclProfilerEventStateArgs_##v##_t *eStateArgs);          \
        ncclResult_t (*finalize)(void *context);                                                   \
    } ncclProfiler_##v##_t;
RAIL_NCCL_PROFILER_TABLE(v5)
RAIL_NCCL_PROFILER_TABLE(v6)

/* ---- v7 (NCCL 2.31): every union member keeps its v6 start (24) and grows; coll is now the
 * largest (112 bytes), so the descriptor is 136 bytes. The members the layout test names: ---- */
struct rail_nccl_prof_coll_v7 {
    struct rail_nccl_prof_coll v6; /* the v5/v6 fields at their v5/v6 places */
    const char *kernelVariant;     /* NCCL's name of the kernel it launched */
    bool isSymColl;                /* a symmetric-memory kernel: not an (algorithm, protocol) run */
    uint64_t userTag;              /* the caller's per-call tag, 0 = untagged */
};

struct rail_nccl_prof_coll_api_v7 {
    const char *func;
    size_t count;
    const char *datatype;
    int root;
    void *stream;
    bool graphCaptured;
    uint64_t userTag;
};

struct rail_nccl_prof_p2p_api_v7 {
    const char *func;
    size_t count;
    const char *datatype;
    void *stream;
    bool graphCaptured;
    uint64_t userTag;
};

struct rail_nccl_prof_p2p_v7 {
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void *parentGroup;
    uint64_t userTag;
};

struct rail_nccl_prof_ce_coll_v7 {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    const char *syncStrategy;
    bool intraBatchSync;
    uint32_t batchSize, numBatches, ceSeqNum;
    void *stream;
    uint64_t userTag;
};

struct rail_nccl_prof_kernel_phase_v7 {
    uint8_t channelId;
    uint8_t phaseId; /* 0 initial sync, 1 compute, 2 final sync */
    const char *phaseName;
    uint64_t pTimer; /* GPU globaltimer at the phase start, ns */
};

typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct rail_nccl_prof_coll_v7 coll;
        struct rail_nccl_prof_kernel_ch kernelCh;
        struct rail_nccl_prof_kernel_phase_v7 kernelPhase;
        struct rail_nccl_prof_coll_api_v7 collApi;
        struct rail_nccl_prof_p2p_api_v7 p2pApi;
        struct rail_nccl_prof_p2p_v7 p2p;
        struct rail_nccl_prof_ce_coll_v7 ceColl;
    };
} ncclProfilerEventDescr_v7_t;

/* v7 state arguments: the v5 union (a kernelPhase stop reuses kernelCh.pTimer). */
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v7_t;
RAIL_NCCL_PROFILER_TABLE(v7)
#undef RAIL_NCCL_PROFILER_TABLE

static_assert(sizeof(struct rail_nccl_prof_coll) == 88, "coll member is 88 bytes");
static_assert(offsetof(struct rail_nccl_prof_coll, count) == 32, "coll.count @32");
static_assert(offsetof(struct rail_nccl_prof_coll, datatype) == 48, "coll.datatype @48");
static_assert(offsetof(struct rail_nccl_prof_coll, nChannels) == 56, "coll.nChannels @56");
static_assert(offsetof(struct rail_nccl_prof_coll, algo) == 64, "coll.algo @64");
static_assert(offsetof(struct rail_nccl_prof_coll, proto) == 72, "coll.proto @72");
static_assert(sizeof(ncclProfilerEventDescr_v5_t) == 112, "descriptor v5/v6 is 112 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, rank) == 16, "rank @16");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll) == 24, "union @24");
static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh.pTimer) == 32, "kernelCh.pTimer @32");
static_assert(sizeof(ncclProfilerEventStateArgs_v5_t) == 8, "state args are 8 bytes");
static_assert(sizeof(ncclProfiler_v5_t) == 48, "profiler v5 table is 48 bytes");
static_assert(offsetof(ncclProfiler_v5_t, finalize) == 40, "finalize @40");
static_assert(sizeof(ncclProfiler_v6_t) == 48, "profiler v6 table is 48 bytes");

static_assert(sizeof(ncclProfilerEventDescr_v7_t) == 136, "descriptor v7 is 136 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll) == 24, "v7 union @24");
static_assert(sizeof(struct rail_nccl_prof_coll_v7) == 112, "v7 coll member is 112 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll.v6.count) == 56, "v7 coll.count @56");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll.v6.algo) == 88, "v7 coll.algo @88");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll.kernelVariant) == 112, "kernelVariant");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll.isSymColl) == 120, "isSymColl @120");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, coll.userTag) == 128, "coll.userTag @128");
static_assert(sizeof(struct rail_nccl_prof_coll_api_v7) == 56, "v7 collApi is 56 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, collApi.userTag) == 72, "collApi.userTag");
static_assert(sizeof(struct rail_nccl_prof_p2p_api_v7) == 48, "v7 p2pApi is 48 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, p2pApi.userTag) == 64, "p2pApi.userTag");
static_assert(sizeof(struct rail_nccl_prof_p2p_v7) == 56, "v7 p2p is 56 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, p2p.userTag) == 72, "p2p.userTag @72");
static_assert(sizeof(struct rail_nccl_prof_ce_coll_v7) == 96, "v7 ceColl is 96 bytes");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, ceColl.userTag) == 112, "ceColl.userTag");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, kernelCh.channelId) == 24, "v7 kernelCh @24");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, kernelCh.pTimer) == 32, "v7 kernelCh.pTimer");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, kernelPhase.phaseId) == 25, "phaseId @25");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, kernelPhase.phaseName) == 32, "phaseName");
static_assert(offsetof(ncclProfilerEventDescr_v7_t, kernelPhase.pTimer) == 40, "phase pTimer");
static_assert(sizeof(ncclProfilerEventStateArgs_v7_t) == 8, "v7 state args are 8 bytes");
static_assert(sizeof(ncclProfiler_v7_t) == 48, "profiler v7 table is 48 bytes");
static_assert(offsetof(ncclProfiler_v7_t, finalize) == 40, "v7 finalize @40");

#endif
