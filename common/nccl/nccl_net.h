/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL net plugin ABI: ncclNet_v6 .. v11 (NCCL 2.28.9) and ncclNet_v12 (NCCL 2.30).
 * Written by the nccl-rail project from the field lists and version table of the NCCL ABI notes
 * (nccl-plugin-abi.md §2); older layouts were checked against the NCCL sources for facts only.
 * Only the point-to-point net tables are declared here (no CollNet, no GIN).
 * Every size and offset below is asserted for x86_64 / LP64, the only ABI NCCL ships. */
#ifndef NCCL_RAIL_ABI_NET_H
#define NCCL_RAIL_ABI_NET_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include "nccl_common.h"

/* ---------------------------------------------------------------------------------------------
 * Constants
 * ------------------------------------------------------------------------------------------- */

#define NCCL_NET_HANDLE_MAXSIZE 128 /* bytes of the listen/connect handle NCCL exchanges */

/* ptrSupport bits in the properties, and the `type` argument of regMr. */
#define NCCL_PTR_HOST   0x1
#define NCCL_PTR_CUDA   0x2
#define NCCL_PTR_DMABUF 0x4

#define NCCL_NET_MAX_REQUESTS    32 /* requests in flight per comm (v7 and later) */
#define NCCL_NET_MAX_REQUESTS_V6 8  /* the same limit for v6 plugins */

#define NCCL_NET_MAX_DEVS_PER_NIC_V11 4 /* vProps.devs entries, v9 .. v11 (NCCL 2.28 .. 2.29) */
#define NCCL_NET_MAX_DEVS_PER_NIC_V12 8 /* vProps.devs entries, v12 (NCCL 2.30 and later) */

#define NCCL_MAX_NET_SIZE_BYTES                                                                    \
    (1L << 40)                      /* upper bound NCCL accepts for maxP2pBytes/maxCollBytes */
#define MAX_NET_SIZE     (1L << 30) /* maxP2pBytes NCCL assumes for v6..v8 plugins */
#define MAX_COLLNET_SIZE (1L << 29) /* maxCollBytes NCCL assumes for v6..v8 plugins */

/* Value NCCL may store in *request before irecv: the receive may complete early (LL/LL128). */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1
#define NCCL_NET_MULTI_REQUEST            0x2 /* defined by NCCL, unused by the 2.28 core */

#define NCCL_NET_TRAFFIC_CLASS_UNDEF -1 /* ncclNetCommConfig.trafficClass when unset */
#define NCCL_NET_ATTR_UNDEF          -1 /* any ncclNetAttr field without a hint */
#define NCCL_NET_ID_UNDEF            -1 /* v12 railId / planeId when unknown */

/* Device offload kinds reported in netDeviceType; a host plugin reports HOST. */
typedef enum {
    NCCL_NET_DEVICE_HOST = 0,
    NCCL_NET_DEVICE_UNPACK = 1,
    NCCL_NET_DEVICE_GIN_PROXY = 2,
    NCCL_NET_DEVICE_GIN_GDAKI = 3
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_DEVICE_UNPACK_VERSION  0x7 /* the only UNPACK version NCCL 2.28 accepts */
#define NCCL_NET_MTU_SIZE               4096

/* ---------------------------------------------------------------------------------------------
 * Shared structs
 * ------------------------------------------------------------------------------------------- */

/* Device-offload handle that connect/accept may be asked to fill (v7 layout, unchanged since). */
typedef struct {
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    void *handle;
    size_t size;
    int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v12_t;

/* Physical devices fused into one virtual NIC (v9 .. v11: up to 4). */
typedef struct {
    int ndevs;
    int devs[NCCL_NET_MAX_DEVS_PER_NIC_V11];
} ncclNetVDeviceProps_v9_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v10_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v11_t;

/* v12 doubles the number of fused devices to 8. */
typedef struct {
    int ndevs;
    int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
} ncclNetVDeviceProps_v12_t;

/* Per-communicator network configuration (v10: passed to connect; v11+: passed to init). */
typedef struct {
    int trafficClass; /* NCCL_NET_TRAFFIC_CLASS_UNDEF when the user set none */
} ncclNetCommConfig_v10_t;
typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v11_t;
typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v12_t;

/* Communication-pattern hints given to setNetAttr (v11+); every field may be NCCL_NET_ATTR_UNDEF.
 */
typedef struct {
    int32_t maxConcurrentPeers;
    int32_t minConcurrentPeers;
    int32_t maxFlowsPerPeer;
    int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;
typedef ncclNetCommAttr_v11_t ncclNetCommAttr_v12_t;

typedef struct {
    ncclNetCommAttr_v11_t sendCommAttr;
    ncclNetCommAttr_v11_t recvCommAttr;
    uint32_t op;    /* bit (1 << ncclFunc_t) per collective */
    uint32_t algo;  /* bit (1 << NCCL_ALGO_*) */
    uint32_t proto; /* bit (1 << NCCL_PROTO_*) */
} ncclNetAttr_v11_t;
typedef ncclNetAttr_v11_t ncclNetAttr_v12_t;

/* Initializer giving every ncclNetAttr field the "no hint" value. */
#define NCCL_NET_ATTR_INIT                                                                         \
    {                                                                                              \
        {NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF},      \
            {NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF, NCCL_NET_ATTR_UNDEF},  \
            (uint32_t)NCCL_NET_ATTR_UNDEF, (uint32_t)NCCL_NET_ATTR_UNDEF,                          \
            (uint32_t)NCCL_NET_ATTR_UNDEF                                                          \
    }

/* ---------------------------------------------------------------------------------------------
 * Device properties, one layout per version
 * ------------------------------------------------------------------------------------------- */

/* v6: the baseline property set. */
typedef struct {
    char *name;     /* log name; also NCCL's topology-XML key, so unique per device */
    char *pciPath;  /* realpath of the /sys PCI device, NULL if none */
    uint64_t guid;  /* same guid + port = same physical port */
    int ptrSupport; /* NCCL_PTR_* bits */
    int speed;      /* Mbps */
    int port;
    float latency; /* us, 0 = NCCL default */
    int maxComms;
    int maxRecvs; /* largest n accepted by a grouped irecv */
} ncclNetProperties_v6_t;

/* v7: v6 plus the device-offload type and version at the end. */
typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v7_t;

/* v8: v7 plus regIsGlobal right after ptrSupport. */
typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal; /* registrations are not tied to one comm */
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v8_t;

/* v9 (and v10, identical): v8 plus forceFlush, the virtual-NIC children and transfer limits. */
typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush; /* 1 = NCCL always flushes GPU receives */
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v9_t vProps;
    size_t maxP2pBytes; /* in (0, NCCL_MAX_NET_SIZE_BYTES] */
    size_t maxCollBytes;
} ncclNetProperties_v9_t;
typedef ncclNetProperties_v9_t ncclNetProperties_v10_t;

/* v11: v9 plus maxMultiRequestSize at the end. */
typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v11_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize; /* everyone reports 1 */
} ncclNetProperties_v11_t;

/* v12: v11 with an 8-entry vProps (so later offsets move) plus rail and plane ids. */
typedef struct {
    char *name;
    char *pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    ncclNetDeviceType netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v12_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize;
    int16_t railId;  /* NCCL_NET_ID_UNDEF when unknown */
    int16_t planeId; /* NCCL_NET_ID_UNDEF when unknown */
} ncclNetProperties_v12_t;

/* ---------------------------------------------------------------------------------------------
 * Function tables (exported as const data symbols ncclNetPlugin_vN)
 * ------------------------------------------------------------------------------------------- */

/* v6: global init(logger); int sizes for regMr/isend/irecv; no device offload. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm);
    ncclResult_t (*regMr)(void *comm, void *data, int size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
} ncclNet_v6_t;

/* v7: connect/accept take a device-handle request; adds getDeviceMr and irecvConsumed. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v7_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v7_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v7_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, int size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v7_t;

/* v8: regMr takes a size_t size; isend/irecv sizes stay int. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v8_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v8_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

/* v9: size_t isend size and irecv sizes (iflush/test keep int); adds makeVDevice. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v9_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v9_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v9_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v9_t;

/* v10: init gains the profiler callback, connect gains the comm config, and isend/irecv carry
 * profiler handles. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t *props);
    ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t *config, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v10_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v10_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **phandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v10_t *props);
} ncclNet_v10_t;

/* v11: init/finalize once per communicator with a plugin context that listen and connect
 * receive; the comm config moves to init; adds finalize and the optional setNetAttr. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                         ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v11_t *props);
    ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v11_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v11_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **phandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v11_t *props);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *netAttr);
} ncclNet_v11_t;

/* v12 (NCCL 2.30): the v11 function list with the v12 property and vProps types. */
typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v12_t *config,
                         ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int *ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
    ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
    ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
                            ncclNetDeviceHandle_v12_t **sendDevComm);
    ncclResult_t (*accept)(void *listenComm, void **recvComm,
                           ncclNetDeviceHandle_v12_t **recvDevComm);
    ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
    ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
                                int fd, void **mhandle);
    ncclResult_t (*deregMr)(void *comm, void *mhandle);
    ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
                          void *phandle, void **request);
    ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
                          void **mhandles, void **phandles, void **request);
    ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
                           void **request);
    ncclResult_t (*test)(void *request, int *done, int *sizes);
    ncclResult_t (*closeSend)(void *sendComm);
    ncclResult_t (*closeRecv)(void *recvComm);
    ncclResult_t (*closeListen)(void *listenComm);
    ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
    ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v12_t *props);
    ncclResult_t (*finalize)(void *ctx);
    ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v12_t *netAttr);
} ncclNet_v12_t;

/* ---------------------------------------------------------------------------------------------
 * Layout checks (LP64). Reference values come from the ABI notes; v6..v9 are derived from the
 * field order with natural alignment.
 * ------------------------------------------------------------------------------------------- */

#define NCCL_NET_ASSERT_OFF(type, field, off)                                                      \
    static_assert(offsetof(type, field) == (off), #type "." #field " must be at byte " #off)
#define NCCL_NET_ASSERT_SIZE(type, size)                                                           \
    static_assert(sizeof(type) == (size), #type " must be " #size " bytes")
/* Function-table slot: name is slot 0, each function pointer takes 8 bytes. */
#define NCCL_NET_ASSERT_SLOT(type, field, slot) NCCL_NET_ASSERT_OFF(type, field, (slot)*8)

static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8 && sizeof(int) == 4,
              "the NCCL net ABI is declared for LP64 targets only");
static_assert(sizeof(ncclNetDeviceType) == 4, "ncclNetDeviceType is int-sized");
static_assert(NCCL_MAX_NET_SIZE_BYTES == 1099511627776L, "1 TiB");
static_assert(MAX_NET_SIZE == 1073741824L && MAX_COLLNET_SIZE == 536870912L, "1 GiB / 512 MiB");

NCCL_NET_ASSERT_SIZE(ncclNetDeviceHandle_v7_t, 32);
NCCL_NET_ASSERT_OFF(ncclNetDeviceHandle_v7_t, netDeviceType, 0);
NCCL_NET_ASSERT_OFF(ncclNetDeviceHandle_v7_t, netDeviceVersion, 4);
NCCL_NET_ASSERT_OFF(ncclNetDeviceHandle_v7_t, handle, 8);
NCCL_NET_ASSERT_OFF(ncclNetDeviceHandle_v7_t, size, 16);
NCCL_NET_ASSERT_OFF(ncclNetDeviceHandle_v7_t, needsProxyProgress, 24);

NCCL_NET_ASSERT_SIZE(ncclNetVDeviceProps_v9_t, 20);
NCCL_NET_ASSERT_OFF(ncclNetVDeviceProps_v9_t, devs, 4);
NCCL_NET_ASSERT_SIZE(ncclNetVDeviceProps_v12_t, 36);
NCCL_NET_ASSERT_OFF(ncclNetVDeviceProps_v12_t, devs, 4);
NCCL_NET_ASSERT_SIZE(ncclNetCommConfig_v10_t, 4);

NCCL_NET_ASSERT_SIZE(ncclNetCommAttr_v11_t, 16);
NCCL_NET_ASSERT_OFF(ncclNetCommAttr_v11_t, maxConcurrentPeers, 0);
NCCL_NET_ASSERT_OFF(ncclNetCommAttr_v11_t, minConcurrentPeers, 4);
NCCL_NET_ASSERT_OFF(ncclNetCommAttr_v11_t, maxFlowsPerPeer, 8);
NCCL_NET_ASSERT_OFF(ncclNetCommAttr_v11_t, minFlowsPerPeer, 12);
NCCL_NET_ASSERT_SIZE(ncclNetAttr_v11_t, 44);
NCCL_NET_ASSERT_OFF(ncclNetAttr_v11_t, sendCommAttr, 0);
NCCL_NET_ASSERT_OFF(ncclNetAttr_v11_t, recvCommAttr, 16);
NCCL_NET_ASSERT_OFF(ncclNetAttr_v11_t, op, 32);
NCCL_NET_ASSERT_OFF(ncclNetAttr_v11_t, algo, 36);
NCCL_NET_ASSERT_OFF(ncclNetAttr_v11_t, proto, 40);

/* v6 properties: 48 bytes. */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v6_t, 48);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, name, 0);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, pciPath, 8);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, guid, 16);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, speed, 28);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, port, 32);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, latency, 36);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, maxComms, 40);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v6_t, maxRecvs, 44);

/* v7 properties: 56 bytes. */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v7_t, 56);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, speed, 28);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, latency, 36);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, maxRecvs, 44);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, netDeviceType, 48);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v7_t, netDeviceVersion, 52);

/* v8 properties: 60 bytes of fields, padded to 64. */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v8_t, 64);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, regIsGlobal, 28);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, speed, 32);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, port, 36);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, latency, 40);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, maxComms, 44);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, maxRecvs, 48);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, netDeviceType, 52);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v8_t, netDeviceVersion, 56);

/* v9/v10 properties: 104 bytes. */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v9_t, 104);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, regIsGlobal, 28);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, forceFlush, 32);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, speed, 36);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, port, 40);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, latency, 44);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, maxComms, 48);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, maxRecvs, 52);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, netDeviceType, 56);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, netDeviceVersion, 60);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, vProps, 64);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, maxP2pBytes, 88);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v9_t, maxCollBytes, 96);

/* v11 properties: 112 bytes (the reference layout). */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v11_t, 112);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, name, 0);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, pciPath, 8);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, guid, 16);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, regIsGlobal, 28);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, forceFlush, 32);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, speed, 36);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, port, 40);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, latency, 44);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, maxComms, 48);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, maxRecvs, 52);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, netDeviceType, 56);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, netDeviceVersion, 60);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, vProps, 64);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, maxP2pBytes, 88);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, maxCollBytes, 96);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v11_t, maxMultiRequestSize, 104);

/* v12 properties: 128 bytes; everything from maxP2pBytes on moves by 16. */
NCCL_NET_ASSERT_SIZE(ncclNetProperties_v12_t, 128);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, ptrSupport, 24);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, forceFlush, 32);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, latency, 44);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, netDeviceType, 56);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, netDeviceVersion, 60);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, vProps, 64);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, maxP2pBytes, 104);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, maxCollBytes, 112);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, maxMultiRequestSize, 120);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, railId, 124);
NCCL_NET_ASSERT_OFF(ncclNetProperties_v12_t, planeId, 126);

/* Function tables: name + 16 (v6), 18 (v7, v8), 19 (v9, v10), 21 (v11, v12) pointers. */
NCCL_NET_ASSERT_SIZE(ncclNet_v6_t, 136);
NCCL_NET_ASSERT_SLOT(ncclNet_v6_t, regMr, 7);
NCCL_NET_ASSERT_SLOT(ncclNet_v6_t, isend, 10);
NCCL_NET_ASSERT_SLOT(ncclNet_v6_t, closeListen, 16);
NCCL_NET_ASSERT_SIZE(ncclNet_v7_t, 152);
NCCL_NET_ASSERT_SLOT(ncclNet_v7_t, getDeviceMr, 17);
NCCL_NET_ASSERT_SLOT(ncclNet_v7_t, irecvConsumed, 18);
NCCL_NET_ASSERT_SIZE(ncclNet_v8_t, 152);
NCCL_NET_ASSERT_SLOT(ncclNet_v8_t, irecvConsumed, 18);
NCCL_NET_ASSERT_SIZE(ncclNet_v9_t, 160);
NCCL_NET_ASSERT_SLOT(ncclNet_v9_t, makeVDevice, 19);
NCCL_NET_ASSERT_SIZE(ncclNet_v10_t, 160);
NCCL_NET_ASSERT_SLOT(ncclNet_v10_t, connect, 5);
NCCL_NET_ASSERT_SLOT(ncclNet_v10_t, makeVDevice, 19);

NCCL_NET_ASSERT_SIZE(ncclNet_v11_t, 176);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, name, 0);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, init, 1);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, devices, 2);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, getProperties, 3);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, listen, 4);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, connect, 5);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, accept, 6);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, regMr, 7);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, regMrDmaBuf, 8);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, deregMr, 9);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, isend, 10);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, irecv, 11);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, iflush, 12);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, test, 13);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, closeSend, 14);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, closeRecv, 15);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, closeListen, 16);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, getDeviceMr, 17);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, irecvConsumed, 18);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, makeVDevice, 19);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, finalize, 20);
NCCL_NET_ASSERT_SLOT(ncclNet_v11_t, setNetAttr, 21);

NCCL_NET_ASSERT_SIZE(ncclNet_v12_t, 176);
NCCL_NET_ASSERT_SLOT(ncclNet_v12_t, makeVDevice, 19);
NCCL_NET_ASSERT_SLOT(ncclNet_v12_t, finalize, 20);
NCCL_NET_ASSERT_SLOT(ncclNet_v12_t, setNetAttr, 21);

#undef NCCL_NET_ASSERT_OFF
#undef NCCL_NET_ASSERT_SIZE
#undef NCCL_NET_ASSERT_SLOT

#endif
