/* SPDX-License-Identifier: Apache-2.0 */
/* Runtime checks of the NCCL ABI layouts declared in common/nccl: sizes, byte offsets, the
 * function-table slot order and argument types of every tuner, profiler and net version, plus the
 * flat float[7][3] layout behind the tuner's float** cost table. The headers also static_assert
 * most of these; this test makes the same facts visible (and counted) in ctest. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "nccl/nccl_profiler.h"
#include "nccl/nccl_tuner.h"
#include "result.h"

#define CHECK_OFF(type, field, off) CHECK_EQ_INT(offsetof(type, field), (off))
#define CHECK_SIZE(type, size)      CHECK_EQ_INT(sizeof(type), (size))
/* A function-table member sits in pointer slot `slot` (the name is slot 0). */
#define CHECK_SLOT(type, field, slot) CHECK_EQ_INT(offsetof(type, field), (slot) * sizeof(void *))
/* True when `expr` (after lvalue conversion) has exactly the type `type`. */
#define HAS_TYPE(expr, type) _Generic((expr), type : 1, default : 0)
#define MEMBER(type, field)  (((type *)0)->field)

typedef ncclResult_t R;

/* Reads `size` bytes at byte `off` of `base` into an integer, independent of the field names. */
static uint64_t raw_at(const void *base, size_t off, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, (const char *)base + off, size);
    return v;
}

static void test_constants(void)
{
    CHECK_EQ_INT(NCCL_NET_HANDLE_MAXSIZE, 128);
    CHECK_EQ_INT(NCCL_PTR_HOST, 0x1);
    CHECK_EQ_INT(NCCL_PTR_CUDA, 0x2);
    CHECK_EQ_INT(NCCL_PTR_DMABUF, 0x4);
    CHECK_EQ_INT(NCCL_NET_MAX_REQUESTS, 32);
    CHECK_EQ_INT(NCCL_NET_MAX_REQUESTS_V6, 8);
    CHECK_EQ_INT(NCCL_NET_MAX_DEVS_PER_NIC_V11, 4);
    CHECK_EQ_INT(NCCL_NET_MAX_DEVS_PER_NIC_V12, 8);
    CHECK_EQ_INT(NCCL_MAX_NET_SIZE_BYTES, 1024LL * 1024 * 1024 * 1024);
    CHECK_EQ_INT(MAX_NET_SIZE, 1024LL * 1024 * 1024);
    CHECK_EQ_INT(MAX_COLLNET_SIZE, 512LL * 1024 * 1024);
    CHECK_EQ_INT(NCCL_NET_OPTIONAL_RECV_COMPLETION, 0x1);
    CHECK_EQ_INT(NCCL_NET_MULTI_REQUEST, 0x2);
    CHECK_EQ_INT(NCCL_NET_TRAFFIC_CLASS_UNDEF, -1);
    CHECK_EQ_INT(NCCL_NET_ATTR_UNDEF, -1);
    CHECK_EQ_INT(NCCL_NET_DEVICE_HOST, 0);
    CHECK_EQ_INT(NCCL_NET_DEVICE_UNPACK, 1);
    CHECK_EQ_INT(NCCL_NET_DEVICE_GIN_PROXY, 2);
    CHECK_EQ_INT(NCCL_NET_DEVICE_GIN_GDAKI, 3);
    CHECK_EQ_INT(NCCL_NET_DEVICE_INVALID_VERSION, 0);
    CHECK_EQ_INT(NCCL_NET_DEVICE_UNPACK_VERSION, 0x7);
    CHECK_EQ_INT(NCCL_NET_MTU_SIZE, 4096);
    /* The constants whose value changed while NCCL kept the name: one name per release. */
    CHECK_EQ_INT(NCCL_NUM_FUNCS_2_18, 11);
    CHECK_EQ_INT(NCCL_NUM_FUNCS_2_29, 15);
    CHECK_EQ_INT(NCCL_FUNC_ALLGATHERV_2_29, 11);
    CHECK_EQ_INT(ncclFuncGather + 1, NCCL_NUM_FUNCS_2_18);
    CHECK_EQ_INT(NCCL_NUM_RESULTS_2_18, 8);
    CHECK_EQ_INT(NCCL_NUM_RESULTS_2_30, 9);
    CHECK_EQ_INT(NCCL_RESULT_TIMEOUT_2_30, 8);
    CHECK_EQ_INT(ncclInProgress + 1, NCCL_NUM_RESULTS_2_18);
    CHECK_EQ_INT(sizeof(ncclNetDeviceType), 4);

    ncclNetAttr_v11_t attr = NCCL_NET_ATTR_INIT;
    CHECK_EQ_INT(attr.sendCommAttr.maxConcurrentPeers, -1);
    CHECK_EQ_INT(attr.sendCommAttr.minFlowsPerPeer, -1);
    CHECK_EQ_INT(attr.recvCommAttr.maxFlowsPerPeer, -1);
    CHECK_EQ_INT(attr.op, UINT32_MAX);
    CHECK_EQ_INT(attr.algo, UINT32_MAX);
    CHECK_EQ_INT(attr.proto, UINT32_MAX);
}

static void test_tuner_layouts(void)
{
    CHECK_SIZE(ncclNvlDomainInfo_v5_t, 12);
    CHECK_OFF(ncclNvlDomainInfo_v5_t, nNvlDomains, 0);
    CHECK_OFF(ncclNvlDomainInfo_v5_t, minRanksPerNvlDomain, 4);
    CHECK_OFF(ncclNvlDomainInfo_v5_t, maxRanksPerNvlDomain, 8);

    CHECK_SIZE(ncclTunerConstants_v5_t, 1152);
    CHECK_OFF(ncclTunerConstants_v5_t, baseLatencies, 0);
    CHECK_OFF(ncclTunerConstants_v5_t, hwLatencies, 168);
    CHECK_OFF(ncclTunerConstants_v5_t, llMaxBws, 672);
    CHECK_OFF(ncclTunerConstants_v5_t, perChMaxRingLL128Bws, 768);
    CHECK_OFF(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws, 864);
    CHECK_OFF(ncclTunerConstants_v5_t, perChMaxTreeBws, 960);
    CHECK_OFF(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws, 1056);
    /* Inner strides: hwLatencies[hw][algo][proto], llMaxBws[compcap][scale]. */
    CHECK_OFF(ncclTunerConstants_v5_t, hwLatencies[1][0][0], 168 + 21 * 8);
    CHECK_OFF(ncclTunerConstants_v5_t, hwLatencies[NCCL_HW_NET][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE],
              168 + (2 * 21 + 4 * 3 + 2) * 8);
    CHECK_OFF(ncclTunerConstants_v5_t, llMaxBws[NCCL_BLACKWELL_COMPCAP_IDX][2], 672 + 11 * 8);

    CHECK_SIZE(ncclTuner_v5_t, 32);
    CHECK_SLOT(ncclTuner_v5_t, init, 1);
    CHECK_SLOT(ncclTuner_v5_t, getCollInfo, 2);
    CHECK_SLOT(ncclTuner_v5_t, finalize, 3);
    CHECK_SIZE(ncclTuner_v6_t, 40);
    CHECK_SLOT(ncclTuner_v6_t, finalize, 3);
    CHECK_SLOT(ncclTuner_v6_t, getChunkSize, 4);
    CHECK_SIZE(ncclTuner_v4_t, 32);
    CHECK_SLOT(ncclTuner_v4_t, destroy, 3);
    CHECK_SIZE(ncclTuner_v3_t, 32);
    CHECK_SIZE(ncclTuner_v2_t, 32);

    /* Signature differences between tuner versions. */
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v5_t, init),
                   R(*)(void **, uint64_t, size_t, size_t, ncclDebugLogger_t,
                        ncclNvlDomainInfo_v5_t *, ncclTunerConstants_v5_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v4_t, init), R(*)(size_t, size_t, ncclDebugLogger_t, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v5_t, getCollInfo),
                   R(*)(void *, ncclFunc_t, size_t, int, float **, int, int, int, int *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v3_t, getCollInfo),
                   R(*)(void *, ncclFunc_t, size_t, int, float **, int, int, int *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v2_t, getCollInfo),
                   R(*)(void *, ncclFunc_t, size_t, int, int, int, int *, int *, int *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v6_t, getChunkSize),
                   R(*)(void *, ncclFunc_t, size_t, int, int, int, size_t *)));
}

/* Tuner v7 (NCCL 2.32.6): a fifth compcap row in each per-compcap table, the v6 slots. */
static void test_tuner_v7_layouts(void)
{
    CHECK_EQ_INT(NCCL_NUM_COMPCAPS_V5, 4);
    CHECK_EQ_INT(NCCL_NUM_COMPCAPS_V7, 5);
    CHECK_EQ_INT(NCCL_RUBIN_COMPCAP_IDX, 4);
    CHECK_SIZE(ncclTunerConstants_v7_t, 1272);
    CHECK_OFF(ncclTunerConstants_v7_t, baseLatencies, 0);
    CHECK_OFF(ncclTunerConstants_v7_t, hwLatencies, 168);
    CHECK_OFF(ncclTunerConstants_v7_t, llMaxBws, 672);
    CHECK_OFF(ncclTunerConstants_v7_t, perChMaxRingLL128Bws, 792);
    CHECK_OFF(ncclTunerConstants_v7_t, perChMaxTreeLL128Bws, 912);
    CHECK_OFF(ncclTunerConstants_v7_t, perChMaxTreeBws, 1032);
    CHECK_OFF(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws, 1152);
    CHECK_OFF(ncclTunerConstants_v7_t, llMaxBws[NCCL_RUBIN_COMPCAP_IDX][0], 672 + 12 * 8);
    CHECK_OFF(ncclTunerConstants_v7_t, perChMaxNVLSTreeBws[NCCL_RUBIN_COMPCAP_IDX][2], 1264);
    CHECK_SIZE(ncclNvlDomainInfo_v7_t, 12);
    CHECK_SIZE(ncclTuner_v7_t, 40);
    CHECK_SLOT(ncclTuner_v7_t, init, 1);
    CHECK_SLOT(ncclTuner_v7_t, getCollInfo, 2);
    CHECK_SLOT(ncclTuner_v7_t, finalize, 3);
    CHECK_SLOT(ncclTuner_v7_t, getChunkSize, 4);
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v7_t, init),
                   R(*)(void **, uint64_t, size_t, size_t, ncclDebugLogger_t,
                        ncclNvlDomainInfo_v7_t *, ncclTunerConstants_v7_t *)));
    /* Negative control: a v7 init does not take the v5 constants. */
    CHECK(!HAS_TYPE(MEMBER(ncclTuner_v7_t, init),
                    R(*)(void **, uint64_t, size_t, size_t, ncclDebugLogger_t,
                         ncclNvlDomainInfo_v5_t *, ncclTunerConstants_v5_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v7_t, getCollInfo),
                   R(*)(void *, ncclFunc_t, size_t, int, float **, int, int, int, int *)));
    CHECK(HAS_TYPE(MEMBER(ncclTuner_v7_t, getChunkSize),
                   R(*)(void *, ncclFunc_t, size_t, int, int, int, size_t *)));
}

/* Profiler v5/v6 (112-byte descriptor) and v7 (136 bytes, NCCL 2.31). */
static void test_profiler_layouts(void)
{
    CHECK_EQ_INT(ncclProfileKernelCh, 1 << 6);
    CHECK_EQ_INT(ncclProfileCeBatch, 1 << 14);
    CHECK_EQ_INT(ncclProfileKernelPhase, 1 << 15);
    CHECK_EQ_INT(ncclProfilerKernelChStop, 22);
    CHECK_EQ_INT(ncclProfilerKernelPhaseStop, 31);

    CHECK_SIZE(ncclProfilerEventDescr_v5_t, 112);
    CHECK_SIZE(ncclProfilerEventDescr_v6_t, 112);
    CHECK_OFF(ncclProfilerEventDescr_v5_t, coll.algo, 88);
    CHECK_OFF(ncclProfilerEventDescr_v5_t, kernelCh.pTimer, 32);

    CHECK_SIZE(ncclProfilerEventDescr_v7_t, 136);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, type, 0);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, parentObj, 8);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, rank, 16);
    /* coll: the v6 fields where v6 has them, then the v7 ones. */
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.seqNumber, 24);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.func, 32);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.count, 56);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.datatype, 72);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.nChannels, 80);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.algo, 88);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.proto, 96);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.v6.parentGroup, 104);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.kernelVariant, 112);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.isSymColl, 120);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, coll.userTag, 128);
    CHECK_EQ_INT(sizeof(((ncclProfilerEventDescr_v7_t *)0)->coll), 112);
    CHECK_EQ_INT(sizeof(((ncclProfilerEventDescr_v7_t *)0)->collApi), 56);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, collApi.graphCaptured, 64);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, collApi.userTag, 72);
    CHECK_EQ_INT(sizeof(((ncclProfilerEventDescr_v7_t *)0)->p2pApi), 48);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, p2pApi.userTag, 64);
    CHECK_EQ_INT(sizeof(((ncclProfilerEventDescr_v7_t *)0)->p2p), 56);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, p2p.nChannels, 60);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, p2p.userTag, 72);
    CHECK_EQ_INT(sizeof(((ncclProfilerEventDescr_v7_t *)0)->ceColl), 96);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, ceColl.ceSeqNum, 100);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, ceColl.userTag, 112);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelCh.channelId, 24);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelCh.pTimer, 32);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelPhase.channelId, 24);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelPhase.phaseId, 25);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelPhase.phaseName, 32);
    CHECK_OFF(ncclProfilerEventDescr_v7_t, kernelPhase.pTimer, 40);
    CHECK_SIZE(ncclProfilerEventStateArgs_v7_t, 8);
    CHECK_SIZE(ncclProfiler_v7_t, 48);
    CHECK_SLOT(ncclProfiler_v7_t, init, 1);
    CHECK_SLOT(ncclProfiler_v7_t, startEvent, 2);
    CHECK_SLOT(ncclProfiler_v7_t, stopEvent, 3);
    CHECK_SLOT(ncclProfiler_v7_t, recordEventState, 4);
    CHECK_SLOT(ncclProfiler_v7_t, finalize, 5);
    CHECK(HAS_TYPE(MEMBER(ncclProfiler_v7_t, startEvent),
                   R(*)(void *, void **, ncclProfilerEventDescr_v7_t *)));
    CHECK(!HAS_TYPE(MEMBER(ncclProfiler_v7_t, startEvent),
                    R(*)(void *, void **, ncclProfilerEventDescr_v6_t *)));

    /* The same bytes read through the v7 layout (independent of the field names). */
    ncclProfilerEventDescr_v7_t d;
    memset(&d, 0, sizeof(d));
    d.coll.userTag = 0x1122334455667788ull;
    d.coll.isSymColl = true;
    d.kernelPhase.phaseId = 2; /* shares bytes with coll.v6.seqNumber */
    CHECK_EQ_INT(raw_at(&d, 128, 8), 0x1122334455667788ull);
    CHECK_EQ_INT(raw_at(&d, 120, 1), 1);
    CHECK_EQ_INT(raw_at(&d, 25, 1), 2);
}

/* NCCL builds `float table[7][3]` and passes it as float**: element [a][p] must be flat a*3+p. */
static void test_cost_table(void)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float *flat = &table[0][0];
    for (int i = 0; i < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; i++)
        flat[i] = (float)(100 + i);

    ncclCostTable_t t = nccl_cost_table((float **)table);
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++) {
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            CHECK_MSG(&t[a][p] == flat + a * 3 + p, "address of [%d][%d]", a, p);
            CHECK_NEAR(t[a][p], 100 + a * 3 + p, 0.0);
        }
    }
    t[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] = 0.0f;
    CHECK_NEAR(flat[6 * 3 + 2], 0.0, 0.0);
    t[NCCL_ALGO_RING][NCCL_PROTO_LL128] = NCCL_ALGO_PROTO_IGNORE;
    CHECK_NEAR(flat[1 * 3 + 1], -1.0, 0.0);
    CHECK_EQ_INT(sizeof(table), 21 * sizeof(float));
}

static void test_net_small_structs(void)
{
    CHECK_SIZE(ncclNetDeviceHandle_v7_t, 32);
    CHECK_SIZE(ncclNetDeviceHandle_v11_t, 32);
    CHECK_SIZE(ncclNetDeviceHandle_v12_t, 32);
    CHECK_OFF(ncclNetDeviceHandle_v7_t, netDeviceType, 0);
    CHECK_OFF(ncclNetDeviceHandle_v7_t, netDeviceVersion, 4);
    CHECK_OFF(ncclNetDeviceHandle_v7_t, handle, 8);
    CHECK_OFF(ncclNetDeviceHandle_v7_t, size, 16);
    CHECK_OFF(ncclNetDeviceHandle_v7_t, needsProxyProgress, 24);

    CHECK_SIZE(ncclNetVDeviceProps_v9_t, 20);
    CHECK_SIZE(ncclNetVDeviceProps_v10_t, 20);
    CHECK_SIZE(ncclNetVDeviceProps_v11_t, 20);
    CHECK_SIZE(ncclNetVDeviceProps_v12_t, 36);
    CHECK_OFF(ncclNetVDeviceProps_v11_t, devs[3], 16);
    CHECK_OFF(ncclNetVDeviceProps_v12_t, devs[7], 32);

    CHECK_SIZE(ncclNetCommConfig_v10_t, 4);
    CHECK_SIZE(ncclNetCommConfig_v11_t, 4);
    CHECK_SIZE(ncclNetCommConfig_v12_t, 4);

    CHECK_SIZE(ncclNetCommAttr_v11_t, 16);
    CHECK_OFF(ncclNetCommAttr_v11_t, minConcurrentPeers, 4);
    CHECK_OFF(ncclNetCommAttr_v11_t, minFlowsPerPeer, 12);
    CHECK_SIZE(ncclNetAttr_v11_t, 44);
    CHECK_SIZE(ncclNetAttr_v12_t, 44);
    CHECK_OFF(ncclNetAttr_v11_t, sendCommAttr, 0);
    CHECK_OFF(ncclNetAttr_v11_t, recvCommAttr, 16);
    CHECK_OFF(ncclNetAttr_v11_t, recvCommAttr.maxFlowsPerPeer, 24);
    CHECK_OFF(ncclNetAttr_v11_t, op, 32);
    CHECK_OFF(ncclNetAttr_v11_t, algo, 36);
    CHECK_OFF(ncclNetAttr_v11_t, proto, 40);
}

/* Offsets of the properties structs of all versions; -1 = field absent in that version. */
static void test_net_properties_offsets(void)
{
    CHECK_SIZE(ncclNetProperties_v6_t, 48);
    CHECK_SIZE(ncclNetProperties_v7_t, 56);
    CHECK_SIZE(ncclNetProperties_v8_t, 64);
    CHECK_SIZE(ncclNetProperties_v9_t, 104);
    CHECK_SIZE(ncclNetProperties_v10_t, 104);
    CHECK_SIZE(ncclNetProperties_v11_t, 112);
    CHECK_SIZE(ncclNetProperties_v12_t, 128);

    /* Fields common to all versions: name, pciPath, guid, ptrSupport. */
#define COMMON_HEAD(T)                                                                             \
    do {                                                                                           \
        CHECK_OFF(T, name, 0);                                                                     \
        CHECK_OFF(T, pciPath, 8);                                                                  \
        CHECK_OFF(T, guid, 16);                                                                    \
        CHECK_OFF(T, ptrSupport, 24);                                                              \
    } while (0)
    COMMON_HEAD(ncclNetProperties_v6_t);
    COMMON_HEAD(ncclNetProperties_v7_t);
    COMMON_HEAD(ncclNetProperties_v8_t);
    COMMON_HEAD(ncclNetProperties_v9_t);
    COMMON_HEAD(ncclNetProperties_v11_t);
    COMMON_HEAD(ncclNetProperties_v12_t);
#undef COMMON_HEAD

    /* v6 and v7 (no regIsGlobal / forceFlush). */
    CHECK_OFF(ncclNetProperties_v6_t, speed, 28);
    CHECK_OFF(ncclNetProperties_v6_t, port, 32);
    CHECK_OFF(ncclNetProperties_v6_t, latency, 36);
    CHECK_OFF(ncclNetProperties_v6_t, maxComms, 40);
    CHECK_OFF(ncclNetProperties_v6_t, maxRecvs, 44);
    CHECK_OFF(ncclNetProperties_v7_t, speed, 28);
    CHECK_OFF(ncclNetProperties_v7_t, maxRecvs, 44);
    CHECK_OFF(ncclNetProperties_v7_t, netDeviceType, 48);
    CHECK_OFF(ncclNetProperties_v7_t, netDeviceVersion, 52);

    /* v8: regIsGlobal pushes the rest by 4. */
    CHECK_OFF(ncclNetProperties_v8_t, regIsGlobal, 28);
    CHECK_OFF(ncclNetProperties_v8_t, speed, 32);
    CHECK_OFF(ncclNetProperties_v8_t, port, 36);
    CHECK_OFF(ncclNetProperties_v8_t, latency, 40);
    CHECK_OFF(ncclNetProperties_v8_t, maxComms, 44);
    CHECK_OFF(ncclNetProperties_v8_t, maxRecvs, 48);
    CHECK_OFF(ncclNetProperties_v8_t, netDeviceType, 52);
    CHECK_OFF(ncclNetProperties_v8_t, netDeviceVersion, 56);

    /* v9..v12 share everything up to vProps. */
#define V9_HEAD(T)                                                                                 \
    do {                                                                                           \
        CHECK_OFF(T, regIsGlobal, 28);                                                             \
        CHECK_OFF(T, forceFlush, 32);                                                              \
        CHECK_OFF(T, speed, 36);                                                                   \
        CHECK_OFF(T, port, 40);                                                                    \
        CHECK_OFF(T, latency, 44);                                                                 \
        CHECK_OFF(T, maxComms, 48);                                                                \
        CHECK_OFF(T, maxRecvs, 52);                                                                \
        CHECK_OFF(T, netDeviceType, 56);                                                           \
        CHECK_OFF(T, netDeviceVersion, 60);                                                        \
        CHECK_OFF(T, vProps, 64);                                                                  \
    } while (0)
    V9_HEAD(ncclNetProperties_v9_t);
    V9_HEAD(ncclNetProperties_v10_t);
    V9_HEAD(ncclNetProperties_v11_t);
    V9_HEAD(ncclNetProperties_v12_t);
#undef V9_HEAD

    CHECK_OFF(ncclNetProperties_v9_t, maxP2pBytes, 88);
    CHECK_OFF(ncclNetProperties_v9_t, maxCollBytes, 96);
    CHECK_OFF(ncclNetProperties_v11_t, maxP2pBytes, 88);
    CHECK_OFF(ncclNetProperties_v11_t, maxCollBytes, 96);
    CHECK_OFF(ncclNetProperties_v11_t, maxMultiRequestSize, 104);
    CHECK_OFF(ncclNetProperties_v12_t, maxP2pBytes, 104);
    CHECK_OFF(ncclNetProperties_v12_t, maxCollBytes, 112);
    CHECK_OFF(ncclNetProperties_v12_t, maxMultiRequestSize, 120);
    CHECK_OFF(ncclNetProperties_v12_t, railId, 124);
    CHECK_OFF(ncclNetProperties_v12_t, planeId, 126);
}

/* Writes every field by name and reads it back from the raw bytes at the reference offsets. */
static void test_net_properties_bytes(void)
{
    ncclNetProperties_v11_t p;
    memset(&p, 0xee, sizeof p);
    p.name = (char *)(uintptr_t)0x1111;
    p.pciPath = (char *)(uintptr_t)0x2222;
    p.guid = 0x0102030405060708ULL;
    p.ptrSupport = NCCL_PTR_HOST | NCCL_PTR_DMABUF;
    p.regIsGlobal = 1;
    p.forceFlush = 2;
    p.speed = 400000;
    p.port = 3;
    p.latency = 1.5f;
    p.maxComms = 65536;
    p.maxRecvs = 8;
    p.netDeviceType = NCCL_NET_DEVICE_UNPACK;
    p.netDeviceVersion = NCCL_NET_DEVICE_UNPACK_VERSION;
    p.vProps.ndevs = 2;
    p.vProps.devs[0] = 5;
    p.vProps.devs[3] = 9;
    p.maxP2pBytes = (size_t)1 << 30;
    p.maxCollBytes = (size_t)1 << 29;
    p.maxMultiRequestSize = 1;

    CHECK_EQ_INT(raw_at(&p, 0, 8), 0x1111);
    CHECK_EQ_INT(raw_at(&p, 8, 8), 0x2222);
    CHECK_EQ_INT(raw_at(&p, 16, 8), 0x0102030405060708LL);
    CHECK_EQ_INT(raw_at(&p, 24, 4), 0x5);
    CHECK_EQ_INT(raw_at(&p, 28, 4), 1);
    CHECK_EQ_INT(raw_at(&p, 32, 4), 2);
    CHECK_EQ_INT(raw_at(&p, 36, 4), 400000);
    CHECK_EQ_INT(raw_at(&p, 40, 4), 3);
    float lat;
    memcpy(&lat, (char *)&p + 44, sizeof lat);
    CHECK_NEAR(lat, 1.5, 0.0);
    CHECK_EQ_INT(raw_at(&p, 48, 4), 65536);
    CHECK_EQ_INT(raw_at(&p, 52, 4), 8);
    CHECK_EQ_INT(raw_at(&p, 56, 4), 1);
    CHECK_EQ_INT(raw_at(&p, 60, 4), 7);
    CHECK_EQ_INT(raw_at(&p, 64, 4), 2);
    CHECK_EQ_INT(raw_at(&p, 68, 4), 5);
    CHECK_EQ_INT(raw_at(&p, 80, 4), 9);
    CHECK_EQ_INT(raw_at(&p, 88, 8), 1LL << 30);
    CHECK_EQ_INT(raw_at(&p, 96, 8), 1LL << 29);
    CHECK_EQ_INT(raw_at(&p, 104, 4), 1);

    ncclNetProperties_v12_t q;
    memset(&q, 0xee, sizeof q);
    q.vProps.ndevs = 8;
    q.vProps.devs[7] = 42;
    q.maxP2pBytes = 12345;
    q.maxCollBytes = 67890;
    q.maxMultiRequestSize = 1;
    q.railId = 3;
    q.planeId = NCCL_NET_ID_UNDEF;
    CHECK_EQ_INT(raw_at(&q, 64, 4), 8);
    CHECK_EQ_INT(raw_at(&q, 96, 4), 42);
    CHECK_EQ_INT(raw_at(&q, 104, 8), 12345);
    CHECK_EQ_INT(raw_at(&q, 112, 8), 67890);
    CHECK_EQ_INT(raw_at(&q, 120, 4), 1);
    CHECK_EQ_INT(raw_at(&q, 124, 2), 3);
    CHECK_EQ_INT(raw_at(&q, 126, 2), 0xffff);
}

/* Slots shared by every net table version: name and the 16 v6 functions. */
#define CHECK_V6_SLOTS(T)                                                                          \
    do {                                                                                           \
        CHECK_SLOT(T, name, 0);                                                                    \
        CHECK_SLOT(T, init, 1);                                                                    \
        CHECK_SLOT(T, devices, 2);                                                                 \
        CHECK_SLOT(T, getProperties, 3);                                                           \
        CHECK_SLOT(T, listen, 4);                                                                  \
        CHECK_SLOT(T, connect, 5);                                                                 \
        CHECK_SLOT(T, accept, 6);                                                                  \
        CHECK_SLOT(T, regMr, 7);                                                                   \
        CHECK_SLOT(T, regMrDmaBuf, 8);                                                             \
        CHECK_SLOT(T, deregMr, 9);                                                                 \
        CHECK_SLOT(T, isend, 10);                                                                  \
        CHECK_SLOT(T, irecv, 11);                                                                  \
        CHECK_SLOT(T, iflush, 12);                                                                 \
        CHECK_SLOT(T, test, 13);                                                                   \
        CHECK_SLOT(T, closeSend, 14);                                                              \
        CHECK_SLOT(T, closeRecv, 15);                                                              \
        CHECK_SLOT(T, closeListen, 16);                                                            \
    } while (0)
#define CHECK_V7_SLOTS(T)                                                                          \
    do {                                                                                           \
        CHECK_V6_SLOTS(T);                                                                         \
        CHECK_SLOT(T, getDeviceMr, 17);                                                            \
        CHECK_SLOT(T, irecvConsumed, 18);                                                          \
    } while (0)
#define CHECK_V9_SLOTS(T)                                                                          \
    do {                                                                                           \
        CHECK_V7_SLOTS(T);                                                                         \
        CHECK_SLOT(T, makeVDevice, 19);                                                            \
    } while (0)
#define CHECK_V11_SLOTS(T)                                                                         \
    do {                                                                                           \
        CHECK_V9_SLOTS(T);                                                                         \
        CHECK_SLOT(T, finalize, 20);                                                               \
        CHECK_SLOT(T, setNetAttr, 21);                                                             \
    } while (0)

static void test_net_table_slots(void)
{
    CHECK_SIZE(ncclNet_v6_t, 8 * 17);
    CHECK_SIZE(ncclNet_v7_t, 8 * 19);
    CHECK_SIZE(ncclNet_v8_t, 8 * 19);
    CHECK_SIZE(ncclNet_v9_t, 8 * 20);
    CHECK_SIZE(ncclNet_v10_t, 8 * 20);
    CHECK_SIZE(ncclNet_v11_t, 176);
    CHECK_SIZE(ncclNet_v12_t, 176);
    CHECK_V6_SLOTS(ncclNet_v6_t);
    CHECK_V7_SLOTS(ncclNet_v7_t);
    CHECK_V7_SLOTS(ncclNet_v8_t);
    CHECK_V9_SLOTS(ncclNet_v9_t);
    CHECK_V9_SLOTS(ncclNet_v10_t);
    CHECK_V11_SLOTS(ncclNet_v11_t);
    CHECK_V11_SLOTS(ncclNet_v12_t);
}

/* The argument lists that change between net versions. */
static void test_net_signatures(void)
{
    /* Identical in every version. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, regMrDmaBuf),
                   R(*)(void *, void *, size_t, int, uint64_t, int, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v12_t, regMrDmaBuf),
                   R(*)(void *, void *, size_t, int, uint64_t, int, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, iflush),
                   R(*)(void *, int, void **, int *, void **, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, iflush),
                   R(*)(void *, int, void **, int *, void **, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, test), R(*)(void *, int *, int *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, test), R(*)(void *, int *, int *)));

    /* v6: global init(logger), int sizes, no device handles. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, init), R(*)(ncclDebugLogger_t)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, getProperties), R(*)(int, ncclNetProperties_v6_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, listen), R(*)(int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, connect), R(*)(int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, accept), R(*)(void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, regMr), R(*)(void *, void *, int, int, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, isend), R(*)(void *, void *, int, int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v6_t, irecv),
                   R(*)(void *, int, void **, int *, int *, void **, void **)));

    /* v7: device handles on connect/accept, device MR and consumed hooks; sizes still int. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v7_t, connect),
                   R(*)(int, void *, void **, ncclNetDeviceHandle_v7_t **)));
    CHECK(
        HAS_TYPE(MEMBER(ncclNet_v7_t, accept), R(*)(void *, void **, ncclNetDeviceHandle_v7_t **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v7_t, regMr), R(*)(void *, void *, int, int, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v7_t, getDeviceMr), R(*)(void *, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v7_t, irecvConsumed), R(*)(void *, int, void *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v7_t, getProperties), R(*)(int, ncclNetProperties_v7_t *)));

    /* v8: regMr size_t, isend/irecv still int. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v8_t, regMr), R(*)(void *, void *, size_t, int, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v8_t, isend), R(*)(void *, void *, int, int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v8_t, irecv),
                   R(*)(void *, int, void **, int *, int *, void **, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v8_t, getProperties), R(*)(int, ncclNetProperties_v8_t *)));

    /* v9: size_t isend/irecv sizes without profiler handles; makeVDevice. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v9_t, init), R(*)(ncclDebugLogger_t)));
    CHECK(
        HAS_TYPE(MEMBER(ncclNet_v9_t, isend), R(*)(void *, void *, size_t, int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v9_t, irecv),
                   R(*)(void *, int, void **, size_t *, int *, void **, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v9_t, makeVDevice), R(*)(int *, ncclNetVDeviceProps_v9_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v9_t, getProperties), R(*)(int, ncclNetProperties_v9_t *)));

    /* v10: profiler callback in init, config in connect, profiler handles in isend/irecv. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v10_t, init), R(*)(ncclDebugLogger_t, ncclProfilerCallback_t)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v10_t, listen), R(*)(int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v10_t, connect), R(*)(int, ncclNetCommConfig_v10_t *, void *,
                                                        void **, ncclNetDeviceHandle_v10_t **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v10_t, isend),
                   R(*)(void *, void *, size_t, int, void *, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v10_t, irecv),
                   R(*)(void *, int, void **, size_t *, int *, void **, void **, void **)));

    /* v11: per-communicator context. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, init), R(*)(void **, uint64_t, ncclNetCommConfig_v11_t *,
                                                     ncclDebugLogger_t, ncclProfilerCallback_t)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, getProperties), R(*)(int, ncclNetProperties_v11_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, listen), R(*)(void *, int, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, connect),
                   R(*)(void *, int, void *, void **, ncclNetDeviceHandle_v11_t **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, isend),
                   R(*)(void *, void *, size_t, int, void *, void *, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, irecv),
                   R(*)(void *, int, void **, size_t *, int *, void **, void **, void **)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, makeVDevice), R(*)(int *, ncclNetVDeviceProps_v11_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, finalize), R(*)(void *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v11_t, setNetAttr), R(*)(void *, ncclNetAttr_v11_t *)));

    /* v12: the v11 list with v12 types. */
    CHECK(HAS_TYPE(MEMBER(ncclNet_v12_t, init), R(*)(void **, uint64_t, ncclNetCommConfig_v12_t *,
                                                     ncclDebugLogger_t, ncclProfilerCallback_t)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v12_t, getProperties), R(*)(int, ncclNetProperties_v12_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v12_t, makeVDevice), R(*)(int *, ncclNetVDeviceProps_v12_t *)));
    CHECK(HAS_TYPE(MEMBER(ncclNet_v12_t, setNetAttr), R(*)(void *, ncclNetAttr_v12_t *)));
    /* Negative control: the v12 getter must not accept v11 properties. */
    CHECK(!HAS_TYPE(MEMBER(ncclNet_v12_t, getProperties), R(*)(int, ncclNetProperties_v11_t *)));
}

/* The one mapping to ncclResult_t never yields a code NCCL 2.18 - 2.29 do not know (such as
 * 2.30's ncclTimeout = 8): a timeout is a remote error. */
static void test_result_codes(void)
{
    int bad = 0;
    for (int e = 0; e <= 4096; e++) {
        ncclResult_t r = rail_result(-e);
        if ((int)r < 0 || (int)r >= NCCL_NUM_RESULTS_2_18 || (int)r == NCCL_RESULT_TIMEOUT_2_30)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(rail_result(-ETIMEDOUT), ncclRemoteError);
    CHECK_EQ_INT(rail_result(0), ncclSuccess);
}

int main(void)
{
    test_result_codes();
    test_constants();
    test_tuner_layouts();
    test_tuner_v7_layouts();
    test_profiler_layouts();
    test_cost_table();
    test_net_small_structs();
    test_net_properties_offsets();
    test_net_properties_bytes();
    test_net_table_slots();
    test_net_signatures();
    return check_report("test_abi_layout");
}
