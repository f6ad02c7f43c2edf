/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL tuner plugin ABI, versions 2..5 (NCCL 2.28.9), 6 (NCCL 2.30, 2.31) and 7 (NCCL 2.32.6).
 * Written by the nccl-rail project from the ABI field lists; sizes and offsets are asserted. */
#ifndef NCCL_RAIL_ABI_TUNER_H
#define NCCL_RAIL_ABI_TUNER_H

#include <assert.h>
#include <stddef.h>
#include "nccl_common.h"

#define NCCL_ALGO_UNDEF          -1
#define NCCL_ALGO_TREE           0
#define NCCL_ALGO_RING           1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN  3
#define NCCL_ALGO_NVLS           4
#define NCCL_ALGO_NVLS_TREE      5
#define NCCL_ALGO_PAT            6
#define NCCL_NUM_ALGORITHMS      7

#define NCCL_PROTO_UNDEF   -1
#define NCCL_PROTO_LL      0
#define NCCL_PROTO_LL128   1
#define NCCL_PROTO_SIMPLE  2
#define NCCL_NUM_PROTOCOLS 3

#define NCCL_ALGO_PROTO_IGNORE -1.0f

#define NCCL_HW_NVLINK    0
#define NCCL_HW_PCI       1
#define NCCL_HW_NET       2
#define NCCL_NUM_HW_LINKS 3

#define NCCL_VOLTA_COMPCAP_IDX     0
#define NCCL_AMPERE_COMPCAP_IDX    1
#define NCCL_HOPPER_COMPCAP_IDX    2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_RUBIN_COMPCAP_IDX     4 /* v7 constants only */
#define NCCL_NUM_COMPCAPS_V5       4 /* compute-capability rows of the v5/v6 constants */
#define NCCL_NUM_COMPCAPS_V7       5 /* v7 adds the Rubin row */
/* The rows the tuner's own model knows (Volta .. Blackwell): the v5 layout. */
#define NCCL_NUM_COMPCAPS NCCL_NUM_COMPCAPS_V5

#define NCCL_TUNING_SCALE_1NODE  0
#define NCCL_TUNING_SCALE_2NODES 1
#define NCCL_TUNING_SCALE_4NODES 2
#define NCCL_NUM_TUNING_SCALES   3

typedef struct {
    int nNvlDomains;          /* NCCL fills it with comm->nNodes */
    int minRanksPerNvlDomain; /* comm->minLocalRanks */
    int maxRanksPerNvlDomain; /* comm->maxLocalRanks */
} ncclNvlDomainInfo_v5_t;

typedef struct {
    double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double llMaxBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
    double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
    double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V5][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *ctx);
} ncclTuner_v5_t;

/* v6 (NCCL 2.30): the v5 fields plus an optional chunk-size hook (NULL allowed). */
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
                         ncclTunerConstants_v6_t *constants);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*getChunkSize)(void *ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                                 int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

/* v7 (NCCL 2.32.6): the v6 functions; the constants gain a fifth compute-capability row (Rubin)
 * in each of the five per-compcap tables, so every table after hwLatencies moves. NCCL converts
 * v7 <-> v5 constants around a v6 plugin's init: only a v7 plugin sees the Rubin row. */
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v7_t;
typedef struct {
    double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double llMaxBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
    double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
    double perChMaxTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
    double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS_V7][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v7_t;
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v7_t *nvlDomainInfo,
                         ncclTunerConstants_v7_t *constants);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*getChunkSize)(void *ctx, ncclFunc_t collType, size_t nBytes, int algo, int proto,
                                 int nChannels, size_t *chunkSize);
} ncclTuner_v7_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v4_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v3_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **ctx);
    ncclResult_t (*getCollInfo)(void *ctx, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                                int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
                                int *nChannels);
    ncclResult_t (*destroy)(void *ctx);
} ncclTuner_v2_t;

static_assert(sizeof(ncclNvlDomainInfo_v5_t) == 12, "nvlDomainInfo v5 is 12 bytes");
static_assert(sizeof(ncclTunerConstants_v5_t) == 1152, "tuner constants v5 are 1152 bytes");
static_assert(offsetof(ncclTunerConstants_v5_t, baseLatencies) == 0, "baseLatencies @0");
static_assert(offsetof(ncclTunerConstants_v5_t, hwLatencies) == 168, "hwLatencies @168");
static_assert(offsetof(ncclTunerConstants_v5_t, llMaxBws) == 672, "llMaxBws @672");
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws) == 768, "ringLL128 @768");
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws) == 864, "treeLL128 @864");
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws) == 960, "treeBws @960");
static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws) == 1056, "nvlsTree @1056");
static_assert(sizeof(ncclTuner_v5_t) == 32, "ncclTuner_v5_t is a name and 3 pointers");
static_assert(sizeof(ncclTuner_v6_t) == 40, "ncclTuner_v6_t adds getChunkSize");
static_assert(offsetof(ncclTuner_v6_t, getChunkSize) == 32, "getChunkSize is last");
static_assert(sizeof(ncclTunerConstants_v7_t) == 1272, "tuner constants v7 are 1272 bytes");
static_assert(offsetof(ncclTunerConstants_v7_t, baseLatencies) == 0, "v7 baseLatencies @0");
static_assert(offsetof(ncclTunerConstants_v7_t, hwLatencies) == 168, "v7 hwLatencies @168");
static_assert(offsetof(ncclTunerConstants_v7_t, llMaxBws) == 672, "v7 llMaxBws @672");
static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxRingLL128Bws) == 792, "v7 ringLL128 @792");
static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxTreeLL128Bws) == 912, "v7 treeLL128 @912");
static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxTreeBws) == 1032, "v7 treeBws @1032");
static_assert(offsetof(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws) == 1152, "v7 nvlsTree @1152");
static_assert(sizeof(ncclNvlDomainInfo_v7_t) == 12, "nvlDomainInfo v7 is the v5 struct");
static_assert(sizeof(ncclTuner_v7_t) == 40, "ncclTuner_v7_t: the v6 slots");
static_assert(offsetof(ncclTuner_v7_t, getChunkSize) == 32, "v7 getChunkSize is last");
static_assert(sizeof(ncclTuner_v4_t) == 32, "ncclTuner_v4_t");
static_assert(sizeof(ncclTuner_v3_t) == 32, "ncclTuner_v3_t");
static_assert(sizeof(ncclTuner_v2_t) == 32, "ncclTuner_v2_t");

/* The cost table NCCL passes as float** is really a contiguous float[7][3]. */
typedef float (*ncclCostTable_t)[NCCL_NUM_PROTOCOLS];
static inline ncclCostTable_t nccl_cost_table(float **collCostTable)
{
    return (ncclCostTable_t)(void *)collCostTable;
}

#endif
