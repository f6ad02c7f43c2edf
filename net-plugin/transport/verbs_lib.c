/* SPDX-License-Identifier: Apache-2.0 */
/* The libibverbs provider of the verbs seam: the library loaded at run time (verbs_lib.h), the
 * functions resolved from it, and the default table that calls them (net_verbs.h). */
#include "transport/verbs_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "params.h"
#include "transport/net_verbs.h"

/* The functions the default table calls, as the loaded library exports them (NULL: not loaded,
 * or an optional function this library lacks). */
static struct {
    struct ibv_device **(*get_device_list)(int *n);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    /* The exported ibv_query_port: the pre-extension entry verbs.h's inline falls back to. */
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
    int (*query_pkey)(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                    struct ibv_qp_init_attr *init);
    int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
    int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
    int (*destroy_qp)(struct ibv_qp *qp);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
                                   unsigned int access);
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                    int fd, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *ev);
    void (*ack_async_event)(struct ibv_async_event *ev);
    const char *(*wc_status_str)(enum ibv_wc_status status);
    const char *(*event_type_str)(enum ibv_event_type type);
} g_lib;

/* One line per function: its exported name and symbol version (rdma-core's libibverbs.map), and
 * for an optional one what goes without it (NULL: required, a library without it is refused). */
struct verbs_sym {
    const char *name, *version;
    void *slot; /* &g_lib.x */
    const char *without;
};
#define NEED(fn, version)                                                                          \
    {                                                                                              \
        "ibv_" #fn, version, &g_lib.fn, NULL                                                       \
    }
#define WANT(fn, version, without)                                                                 \
    {                                                                                              \
        "ibv_" #fn, version, &g_lib.fn, without                                                    \
    }
static const struct verbs_sym k_syms[] = {
    NEED(get_device_list, "IBVERBS_1.1"),
    NEED(free_device_list, "IBVERBS_1.1"),
    NEED(get_device_name, "IBVERBS_1.1"),
    NEED(open_device, "IBVERBS_1.1"),
    NEED(close_device, "IBVERBS_1.1"),
    NEED(query_device, "IBVERBS_1.1"),
    NEED(query_port, "IBVERBS_1.1"),
    NEED(query_gid, "IBVERBS_1.1"),
    NEED(query_pkey, "IBVERBS_1.1"),
    NEED(alloc_pd, "IBVERBS_1.1"),
    NEED(dealloc_pd, "IBVERBS_1.1"),
    NEED(create_cq, "IBVERBS_1.1"),
    NEED(destroy_cq, "IBVERBS_1.1"),
    NEED(create_qp, "IBVERBS_1.1"),
    NEED(modify_qp, "IBVERBS_1.1"),
    NEED(query_qp, "IBVERBS_1.1"),
    NEED(destroy_qp, "IBVERBS_1.1"),
    NEED(reg_mr, "IBVERBS_1.1"),
    NEED(dereg_mr, "IBVERBS_1.1"),
    NEED(get_async_event, "IBVERBS_1.1"),
    NEED(ack_async_event, "IBVERBS_1.1"),
    NEED(wc_status_str, "IBVERBS_1.1"),
    NEED(event_type_str, "IBVERBS_1.1"),
    WANT(reg_mr_iova2, "IBVERBS_1.8", "registrations through ibv_reg_mr"),
    WANT(reg_dmabuf_mr, "IBVERBS_1.12", "no dma-buf registration (GPUDirect needs nvidia-peermem)"),
    WANT(query_ece, "IBVERBS_1.10", "no ECE: QPs connect without it"),
    WANT(set_ece, "IBVERBS_1.10", "no ECE: QPs connect without it"),
};
#undef NEED
#undef WANT

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rail_verbs_lib_info g_info = {.rc = 1};

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len, const char *fmt,
                                                         ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (used < len)
        vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* Resolves k_syms from h into g_lib: 0, or -ENOSYS with the first required function missing. */
static int resolve(void *h, const char *who)
{
    for (size_t i = 0; i < sizeof(k_syms) / sizeof(k_syms[0]); i++) {
        const struct verbs_sym *s = &k_syms[i];
        (void)dlerror();
        void *addr = dlvsym(h, s->name, s->version);
        if (!addr && !s->without) {
            snprintf(g_info.why, sizeof(g_info.why),
                     "%.280s: %.300s lacks %.40s (%.20s), which the net plugin needs (not "
                     "rdma-core's libibverbs, or older than it needs)",
                     who, g_info.path[0] ? g_info.path : g_info.name, s->name, s->version);
            return -ENOSYS;
        }
        if (!addr)
            append(g_info.missing, sizeof(g_info.missing), "%s%s (%s): %s",
                   g_info.missing[0] ? "; " : "", s->name, s->version, s->without);
        memcpy(s->slot, &addr, sizeof(addr)); /* a function's address, as dlvsym gives it */
    }
    return 0;
}

static void load_locked(void)
{
    static char value[4096]; /* PATH_MAX */
    const char *v = rail_param_str(RAIL_PARAM_IBVERBS_LIB);
    char who[300];
    snprintf(value, sizeof(value), "%s", v ? v : "");
    g_info.variable = value[0] ? value : NULL;
    g_info.name = g_info.variable ? g_info.variable : RAIL_VERBS_DEFAULT_LIB;
    if (g_info.variable)
        snprintf(who, sizeof(who), "NCCL_IBVERBS_LIB=%.250s", g_info.variable);
    else
        snprintf(who, sizeof(who), "%s (NCCL_IBVERBS_LIB unset)", RAIL_VERBS_DEFAULT_LIB);
    (void)dlerror();
    void *h = dlopen(g_info.name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(g_info.why, sizeof(g_info.why), "%.280s: cannot load: %.300s (%s)", who,
                 e ? e : "unknown error",
                 g_info.variable ? "set it to the path or soname of rdma-core's libibverbs"
                                 : "install rdma-core's libibverbs (libibverbs1, "
                                   "rdma-core), or set NCCL_IBVERBS_LIB to its path");
        g_info.rc = -ENOENT;
        return;
    }
    struct link_map *map = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        snprintf(g_info.path, sizeof(g_info.path), "%s", map->l_name);
    int rc = resolve(h, who);
    if (rc < 0) {
        memset(&g_lib, 0, sizeof(g_lib));
        g_info.missing[0] = '\0';
        dlclose(h);
        g_info.rc = rc;
        return;
    }
    g_info.rc = 0; /* h stays open for the life of the process */
    /* As NCCL: a line when the variable chose the library (the device line names it always). */
    if (g_info.variable)
        RAIL_INFO(NCCL_INIT | NCCL_ENV, "%s: loaded %s", who,
                  g_info.path[0] ? g_info.path : g_info.name);
    if (g_info.missing[0])
        RAIL_INFO(NCCL_INIT | NCCL_NET, "libibverbs %s lacks %s",
                  g_info.path[0] ? g_info.path : g_info.name, g_info.missing);
}

int rail_verbs_load(char *why, size_t whylen)
{
    pthread_mutex_lock(&g_lock);
    if (g_info.rc == 1)
        load_locked();
    int rc = g_info.rc;
    if (rc < 0 && why && whylen)
        snprintf(why, whylen, "%s", g_info.why);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void rail_verbs_lib_info(struct rail_verbs_lib_info *out)
{
    pthread_mutex_lock(&g_lock);
    *out = g_info;
    pthread_mutex_unlock(&g_lock);
}

/* ---- the default table: each entry calls the loaded function, or fails before a load ---- */

#define CALL(fn, failed, ...) (g_lib.fn ? g_lib.fn(__VA_ARGS__) : (errno = ENOSYS, failed))

static struct ibv_device **l_get_device_list(int *n)
{
    return CALL(get_device_list, NULL, n);
}

static void l_free_device_list(struct ibv_device **list)
{
    if (g_lib.free_device_list)
        g_lib.free_device_list(list);
}

static const char *l_get_device_name(struct ibv_device *dev)
{
    return CALL(get_device_name, "?", dev);
}

static struct ibv_context *l_open_device(struct ibv_device *dev)
{
    return CALL(open_device, NULL, dev);
}

static int l_close_device(struct ibv_context *ctx)
{
    return CALL(close_device, -ENOSYS, ctx);
}

static int l_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
    return CALL(query_device, ENOSYS, ctx, attr);
}

/* verbs.h's ibv_query_port is an inline: the context's extended query_port when the provider
 * has one (the whole ibv_port_attr), else the exported function on a zeroed struct. */
static int l_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
    if (vctx)
        return vctx->query_port(ctx, port, attr, sizeof(*attr));
    memset(attr, 0, sizeof(*attr));
    return CALL(query_port, ENOSYS, ctx, port, attr);
}

static int l_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
    return CALL(query_gid, -ENOSYS, ctx, port, index, gid);
}

static int l_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
    return CALL(query_pkey, -ENOSYS, ctx, port, index, pkey);
}

static struct ibv_pd *l_alloc_pd(struct ibv_context *ctx)
{
    return CALL(alloc_pd, NULL, ctx);
}

static int l_dealloc_pd(struct ibv_pd *pd)
{
    return CALL(dealloc_pd, ENOSYS, pd);
}

static struct ibv_cq *l_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                  struct ibv_comp_channel *channel, int vector)
{
    return CALL(create_cq, NULL, ctx, cqe, cq_context, channel, vector);
}

static int l_destroy_cq(struct ibv_cq *cq)
{
    return CALL(destroy_cq, ENOSYS, cq);
}

static struct ibv_qp *l_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    return CALL(create_qp, NULL, pd, attr);
}

static int l_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    return CALL(modify_qp, ENOSYS, qp, attr, mask);
}

static int l_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                      struct ibv_qp_init_attr *init)
{
    return CALL(query_qp, ENOSYS, qp, attr, mask, init);
}

/* A library without ECE answers as a provider without it does. */
static int l_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    return g_lib.query_ece ? g_lib.query_ece(qp, ece) : EOPNOTSUPP;
}

static int l_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    return g_lib.set_ece ? g_lib.set_ece(qp, ece) : EOPNOTSUPP;
}

static int l_destroy_qp(struct ibv_qp *qp)
{
    return CALL(destroy_qp, ENOSYS, qp);
}

/* verbs.h's ibv_reg_mr macro registers through ibv_reg_mr_iova2 (iova = addr) when the access
 * flags are not a constant: that call where the library has it, the plain entry otherwise. */
static struct ibv_mr *l_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    if (g_lib.reg_mr_iova2)
        return g_lib.reg_mr_iova2(pd, addr, len, (uintptr_t)addr, (unsigned int)access);
    return CALL(reg_mr, NULL, pd, addr, len, access);
}

/* ibv_reg_dmabuf_mr (IBVERBS_1.12, rdma-core 34): ENOSYS where the library has none. */
static struct ibv_mr *l_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                      int fd, int access)
{
    return CALL(reg_dmabuf_mr, NULL, pd, offset, len, iova, fd, access);
}

static int l_dereg_mr(struct ibv_mr *mr)
{
    return CALL(dereg_mr, ENOSYS, mr);
}

static int l_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
    return CALL(get_async_event, -1, ctx, ev);
}

static void l_ack_async_event(struct ibv_async_event *ev)
{
    if (g_lib.ack_async_event)
        g_lib.ack_async_event(ev);
}

static const char *l_wc_status_str(enum ibv_wc_status status)
{
    return g_lib.wc_status_str ? g_lib.wc_status_str(status) : rail_verbs_wc_status_name(status);
}

static const char *l_event_type_str(enum ibv_event_type type)
{
    return g_lib.event_type_str ? g_lib.event_type_str(type) : rail_verbs_event_name(type);
}

/* The data path: verbs.h's inline functions call the provider through the QP's and CQ's
 * context; no library function is involved. */
static int l_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return ibv_post_send(qp, wr, bad);
}

static int l_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_recv(qp, wr, bad);
}

static int l_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    return ibv_poll_cq(cq, n, wc);
}

const struct rail_verbs_ops rail_verbs_default_ops = {
    .provider = "libibverbs",
    .kernel_devices = true,
    .host_memory_only = false,
    .get_device_list = l_get_device_list,
    .free_device_list = l_free_device_list,
    .get_device_name = l_get_device_name,
    .open_device = l_open_device,
    .close_device = l_close_device,
    .query_device = l_query_device,
    .query_port = l_query_port,
    .query_gid = l_query_gid,
    .query_pkey = l_query_pkey,
    .alloc_pd = l_alloc_pd,
    .dealloc_pd = l_dealloc_pd,
    .create_cq = l_create_cq,
    .destroy_cq = l_destroy_cq,
    .create_qp = l_create_qp,
    .modify_qp = l_modify_qp,
    .query_qp = l_query_qp,
    .query_ece = l_query_ece,
    .set_ece = l_set_ece,
    .destroy_qp = l_destroy_qp,
    .reg_mr = l_reg_mr,
    .dereg_mr = l_dereg_mr,
    .reg_dmabuf_mr = l_reg_dmabuf_mr,
    .post_send = l_post_send,
    .post_recv = l_post_recv,
    .poll_cq = l_poll_cq,
    .get_async_event = l_get_async_event,
    .ack_async_event = l_ack_async_event,
    .wc_status_str = l_wc_status_str,
    .event_type_str = l_event_type_str,
};

/* ---- names without a library ---- */

const char *rail_verbs_wc_status_name(enum ibv_wc_status status)
{
    static const char *const names[] = {
        [IBV_WC_SUCCESS] = "success",
        [IBV_WC_LOC_LEN_ERR] = "local length error",
        [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
        [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
        [IBV_WC_LOC_PROT_ERR] = "local protection error",
        [IBV_WC_WR_FLUSH_ERR] = "work request flushed",
        [IBV_WC_MW_BIND_ERR] = "memory window bind error",
        [IBV_WC_BAD_RESP_ERR] = "bad response error",
        [IBV_WC_LOC_ACCESS_ERR] = "local access error",
        [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
        [IBV_WC_REM_ACCESS_ERR] = "remote access error",
        [IBV_WC_REM_OP_ERR] = "remote operation error",
        [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
        [IBV_WC_RNR_RETRY_EXC_ERR] = "receiver-not-ready retry counter exceeded",
        [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
        [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
        [IBV_WC_REM_ABORT_ERR] = "remote operation aborted",
        [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
        [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
        [IBV_WC_FATAL_ERR] = "fatal error",
        [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout",
        [IBV_WC_GENERAL_ERR] = "general error",
    };
    unsigned i = (unsigned)status;
    return i < sizeof(names) / sizeof(names[0]) && names[i] ? names[i] : "unknown status";
}

const char *rail_verbs_event_name(enum ibv_event_type type)
{
    static const char *const names[] = {
        [IBV_EVENT_CQ_ERR] = "CQ error",
        [IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
        [IBV_EVENT_QP_REQ_ERR] = "QP request error",
        [IBV_EVENT_QP_ACCESS_ERR] = "QP access error",
        [IBV_EVENT_COMM_EST] = "communication established",
        [IBV_EVENT_SQ_DRAINED] = "send queue drained",
        [IBV_EVENT_PATH_MIG] = "path migrated",
        [IBV_EVENT_PATH_MIG_ERR] = "path migration error",
        [IBV_EVENT_DEVICE_FATAL] = "device fatal error",
        [IBV_EVENT_PORT_ACTIVE] = "port active",
        [IBV_EVENT_PORT_ERR] = "port error",
        [IBV_EVENT_LID_CHANGE] = "LID changed",
        [IBV_EVENT_PKEY_CHANGE] = "PKey table changed",
        [IBV_EVENT_SM_CHANGE] = "subnet manager changed",
        [IBV_EVENT_SRQ_ERR] = "SRQ error",
        [IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
        [IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
        [IBV_EVENT_CLIENT_REREGISTER] = "client reregistration requested",
        [IBV_EVENT_GID_CHANGE] = "GID table changed",
        [IBV_EVENT_WQ_FATAL] = "WQ fatal error",
    };
    unsigned i = (unsigned)type;
    return i < sizeof(names) / sizeof(names[0]) && names[i] ? names[i] : "unknown event";
}
