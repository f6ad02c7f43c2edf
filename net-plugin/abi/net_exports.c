/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL net ABI shims: the only file that knows the versioned signatures. ncclNetPlugin_v11 is
 * native; v12 (NCCL 2.30) differs only in the property layout; v6..v10 (NCCL 2.19..2.27) get a
 * process-wide context, int sizes where the ABI has them and older property structs. Every table
 * is complete at load time: NCCL reads the pointers before calling init. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "nccl/nccl_net.h"
#include "protocol/net_flush.h"
#include "abi/net_plugin.h"
#include "wire/net_wire.h"
#include "result.h"
#include "version.h"

#define RAIL_EXPORT __attribute__((visibility("default")))

static const struct rail_net_ctx *ctx_or_default(void *ctx)
{
    const struct rail_net_ctx *c = ctx;
    return c && c->magic == RAIL_CTX_MAGIC ? c : rail_net_default_ctx();
}

/* ---- calls shared by every version ---- */

static ncclResult_t devices(int *ndev)
{
    return rail_result(rail_net_devices(ndev));
}

static ncclResult_t accept_any(void *listen_comm, void **recv_comm)
{
    return rail_result(rail_net_accept(listen_comm, recv_comm));
}

static ncclResult_t reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    return rail_result(rail_net_reg_mr(comm, data, size, type, mhandle));
}

static ncclResult_t reg_mr_int(void *comm, void *data, int size, int type, void **mhandle)
{
    if (size < 0)
        return ncclInvalidArgument;
    return reg_mr(comm, data, (size_t)size, type, mhandle);
}

static ncclResult_t reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
                                  int fd, void **mhandle)
{
    return rail_result(rail_net_reg_mr_dmabuf(comm, data, size, type, offset, fd, mhandle));
}

static ncclResult_t dereg_mr(void *comm, void *mhandle)
{
    return rail_result(rail_net_dereg_mr(comm, mhandle));
}

static ncclResult_t isend(void *comm, void *data, size_t size, int tag, void *mhandle,
                          void **request)
{
    return rail_result(rail_net_isend(comm, data, size, tag, mhandle, request));
}

static ncclResult_t isend_int(void *comm, void *data, int size, int tag, void *mhandle,
                              void **request)
{
    if (request)
        *request = NULL;
    if (size < 0)
        return ncclInvalidArgument;
    return isend(comm, data, (size_t)size, tag, mhandle, request);
}

static ncclResult_t isend_v10(void *comm, void *data, size_t size, int tag, void *mhandle,
                              void *phandle, void **request)
{
    (void)phandle;
    return isend(comm, data, size, tag, mhandle, request);
}

static ncclResult_t irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
                          void **request)
{
    return rail_result(rail_net_irecv(comm, n, data, sizes, tags, mhandles, request));
}

static ncclResult_t irecv_int(void *comm, int n, void **data, int *sizes, int *tags,
                              void **mhandles, void **request)
{
    size_t wide[RAIL_MAX_RECVS];
    if (request)
        *request = NULL;
    if (n < 1 || n > RAIL_MAX_RECVS || !sizes)
        return ncclInvalidArgument;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0)
            return ncclInvalidArgument;
        wide[i] = (size_t)sizes[i];
    }
    return irecv(comm, n, data, wide, tags, mhandles, request);
}

static ncclResult_t irecv_v10(void *comm, int n, void **data, size_t *sizes, int *tags,
                              void **mhandles, void **phandles, void **request)
{
    (void)phandles;
    return irecv(comm, n, data, sizes, tags, mhandles, request);
}

static ncclResult_t iflush(void *comm, int n, void **data, int *sizes, void **mhandles,
                           void **request)
{
    return rail_result(rail_flush_iflush(comm, n, data, sizes, mhandles, request)); /* GDR */
}

static ncclResult_t test(void *request, int *done, int *sizes)
{
    return rail_result(rail_net_test(request, done, sizes));
}

static ncclResult_t close_send(void *comm)
{
    return rail_result(rail_net_close_send(comm));
}

static ncclResult_t close_recv(void *comm)
{
    return rail_result(rail_net_close_recv(comm));
}

static ncclResult_t close_listen(void *comm)
{
    return rail_result(rail_net_close_listen(comm));
}

/* ---- v11 / v12: per-communicator context ---- */

/* Each table's init logs the version banner with its ABI first (common/version.c). */
#define INIT_CTX(v)                                                                                \
    static ncclResult_t init_v##v(void **ctx, uint64_t comm_id, ncclNetCommConfig_v11_t *config,   \
                                  ncclDebugLogger_t logger, ncclProfilerCallback_t prof)           \
    {                                                                                              \
        (void)prof;                                                                                \
        rail_version_banner(logger, RAIL_PLUGIN_NET, v, NULL);                                     \
        return rail_result(                                                                        \
            rail_net_init(ctx, comm_id, config ? config->trafficClass : -1, logger));              \
    }
INIT_CTX(12)
INIT_CTX(11)

static ncclResult_t finalize_v11(void *ctx)
{
    return rail_result(rail_net_finalize(ctx));
}

static ncclResult_t listen_v11(void *ctx, int dev, void *handle, void **listen_comm)
{
    return rail_result(rail_net_listen(ctx_or_default(ctx), dev, handle, listen_comm));
}

static ncclResult_t connect_v11(void *ctx, int dev, void *handle, void **send_comm,
                                ncclNetDeviceHandle_v11_t **dev_comm)
{
    (void)dev_comm; /* host plugin: no device offload */
    return rail_result(rail_net_connect(ctx_or_default(ctx), dev, handle, send_comm));
}

static ncclResult_t accept_v11(void *listen_comm, void **recv_comm,
                               ncclNetDeviceHandle_v11_t **dev_comm)
{
    (void)dev_comm;
    return accept_any(listen_comm, recv_comm);
}

static ncclResult_t set_net_attr(void *ctx, ncclNetAttr_v11_t *attr)
{
    (void)ctx;
    (void)attr; /* hints only; nothing to tune yet */
    return ncclSuccess;
}

#define FILL_COMMON(out, p)                                                                        \
    do {                                                                                           \
        (out)->name = (p).name;                                                                    \
        (out)->pciPath = (p).pci_path;                                                             \
        (out)->guid = (p).guid;                                                                    \
        (out)->ptrSupport = (p).ptr_support;                                                       \
        (out)->speed = (p).speed;                                                                  \
        (out)->port = (p).port;                                                                    \
        (out)->latency = (p).latency;                                                              \
        (out)->maxComms = (p).max_comms;                                                           \
        (out)->maxRecvs = (p).max_recvs;                                                           \
    } while (0)

#define FILL_V9(out, p)                                                                            \
    do {                                                                                           \
        FILL_COMMON(out, p);                                                                       \
        (out)->regIsGlobal = (p).reg_is_global;                                                    \
        (out)->forceFlush = (p).force_flush;                                                       \
        (out)->netDeviceType = NCCL_NET_DEVICE_HOST;                                               \
        (out)->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;                                 \
        (out)->vProps.ndevs = 1;                                                                   \
        (out)->vProps.devs[0] = (p).dev;                                                           \
        (out)->maxP2pBytes = (p).max_p2p_bytes;                                                    \
        (out)->maxCollBytes = (p).max_coll_bytes;                                                  \
    } while (0)

static ncclResult_t props_v11(int dev, ncclNetProperties_v11_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_V9(out, p);
    out->maxMultiRequestSize = 1;
    return ncclSuccess;
}

static ncclResult_t props_v12(int dev, ncclNetProperties_v12_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_V9(out, p);
    out->maxMultiRequestSize = 1;
    out->railId = (int16_t)p.rail_id;
    out->planeId = (int16_t)p.plane_id;
    return ncclSuccess;
}

/* ---- v6 .. v10: one process-wide context ---- */

static ncclResult_t init_v10(ncclDebugLogger_t logger, ncclProfilerCallback_t prof)
{
    (void)prof;
    rail_version_banner(logger, RAIL_PLUGIN_NET, 10, NULL);
    return rail_result(rail_net_init(NULL, 0, -1, logger));
}

#define INIT_PROCESS(v)                                                                            \
    static ncclResult_t init_v##v(ncclDebugLogger_t logger)                                        \
    {                                                                                              \
        rail_version_banner(logger, RAIL_PLUGIN_NET, v, NULL);                                     \
        return rail_result(rail_net_init(NULL, 0, -1, logger));                                    \
    }
INIT_PROCESS(9)
INIT_PROCESS(8)
INIT_PROCESS(7)
INIT_PROCESS(6)

static ncclResult_t listen_v6(int dev, void *handle, void **listen_comm)
{
    return listen_v11(NULL, dev, handle, listen_comm);
}

static ncclResult_t connect_v6(int dev, void *handle, void **send_comm)
{
    return connect_v11(NULL, dev, handle, send_comm, NULL);
}

static ncclResult_t connect_v7(int dev, void *handle, void **send_comm,
                               ncclNetDeviceHandle_v7_t **dev_comm)
{
    return connect_v11(NULL, dev, handle, send_comm, dev_comm);
}

static ncclResult_t connect_v10(int dev, ncclNetCommConfig_v10_t *config, void *handle,
                                void **send_comm, ncclNetDeviceHandle_v10_t **dev_comm)
{
    struct rail_net_ctx ctx = {RAIL_CTX_MAGIC, 0, config ? config->trafficClass : -1};
    (void)dev_comm;
    return rail_result(rail_net_connect(&ctx, dev, handle, send_comm));
}

static ncclResult_t accept_v7(void *listen_comm, void **recv_comm,
                              ncclNetDeviceHandle_v7_t **dev_comm)
{
    (void)dev_comm;
    return accept_any(listen_comm, recv_comm);
}

static ncclResult_t props_v9(int dev, ncclNetProperties_v9_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_V9(out, p);
    return ncclSuccess;
}

static ncclResult_t props_v8(int dev, ncclNetProperties_v8_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_COMMON(out, p);
    out->regIsGlobal = p.reg_is_global;
    out->netDeviceType = NCCL_NET_DEVICE_HOST;
    out->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    return ncclSuccess;
}

static ncclResult_t props_v7(int dev, ncclNetProperties_v7_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_COMMON(out, p);
    out->netDeviceType = NCCL_NET_DEVICE_HOST;
    out->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    return ncclSuccess;
}

static ncclResult_t props_v6(int dev, ncclNetProperties_v6_t *out)
{
    struct rail_net_props p;
    int rc = out ? rail_net_get_props(dev, &p) : -EINVAL;
    if (rc < 0)
        return rail_result(rc);
    memset(out, 0, sizeof(*out));
    FILL_COMMON(out, p);
    return ncclSuccess;
}

/* ---- the exported tables ---- */

#define COMMON_FIELDS                                                                              \
    .name = RAIL_NET_NAME, .devices = devices, .regMrDmaBuf = reg_mr_dmabuf, .deregMr = dereg_mr,  \
    .iflush = iflush, .test = test, .closeSend = close_send, .closeRecv = close_recv,              \
    .closeListen = close_listen

RAIL_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {COMMON_FIELDS,
                                                     .init = init_v12,
                                                     .getProperties = props_v12,
                                                     .listen = listen_v11,
                                                     .connect = connect_v11,
                                                     .accept = accept_v11,
                                                     .regMr = reg_mr,
                                                     .isend = isend_v10,
                                                     .irecv = irecv_v10,
                                                     .getDeviceMr = NULL,
                                                     .irecvConsumed = NULL,
                                                     .makeVDevice = NULL,
                                                     .finalize = finalize_v11,
                                                     .setNetAttr = set_net_attr};

RAIL_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {COMMON_FIELDS,
                                                     .init = init_v11,
                                                     .getProperties = props_v11,
                                                     .listen = listen_v11,
                                                     .connect = connect_v11,
                                                     .accept = accept_v11,
                                                     .regMr = reg_mr,
                                                     .isend = isend_v10,
                                                     .irecv = irecv_v10,
                                                     .getDeviceMr = NULL,
                                                     .irecvConsumed = NULL,
                                                     .makeVDevice = NULL,
                                                     .finalize = finalize_v11,
                                                     .setNetAttr = set_net_attr};

RAIL_EXPORT const ncclNet_v10_t ncclNetPlugin_v10 = {
    COMMON_FIELDS,          .init = init_v10,    .getProperties = props_v9, .listen = listen_v6,
    .connect = connect_v10, .accept = accept_v7, .regMr = reg_mr,           .isend = isend_v10,
    .irecv = irecv_v10,     .getDeviceMr = NULL, .irecvConsumed = NULL,     .makeVDevice = NULL};

RAIL_EXPORT const ncclNet_v9_t ncclNetPlugin_v9 = {
    COMMON_FIELDS,         .init = init_v9,     .getProperties = props_v9, .listen = listen_v6,
    .connect = connect_v7, .accept = accept_v7, .regMr = reg_mr,           .isend = isend,
    .irecv = irecv,        .getDeviceMr = NULL, .irecvConsumed = NULL,     .makeVDevice = NULL};

RAIL_EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
    COMMON_FIELDS,         .init = init_v8,     .getProperties = props_v8, .listen = listen_v6,
    .connect = connect_v7, .accept = accept_v7, .regMr = reg_mr,           .isend = isend_int,
    .irecv = irecv_int,    .getDeviceMr = NULL, .irecvConsumed = NULL};

RAIL_EXPORT const ncclNet_v7_t ncclNetPlugin_v7 = {
    COMMON_FIELDS,         .init = init_v7,     .getProperties = props_v7, .listen = listen_v6,
    .connect = connect_v7, .accept = accept_v7, .regMr = reg_mr_int,       .isend = isend_int,
    .irecv = irecv_int,    .getDeviceMr = NULL, .irecvConsumed = NULL};

RAIL_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
    COMMON_FIELDS,       .init = init_v6,       .getProperties = props_v6,
    .listen = listen_v6, .connect = connect_v6, .accept = accept_any,
    .regMr = reg_mr_int, .isend = isend_int,    .irecv = irecv_int};
