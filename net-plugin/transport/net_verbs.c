/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/net_verbs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "params.h"

/* Live objects made through the wrappers below (and user registrations, net_reg.c): what the
 * scale benchmark (bench/scale.c) reads per connection. Relaxed atomics: counts, not ordering. */
static atomic_long g_count[RAIL_VERBS_NCOUNTS];

void rail_verbs_count(enum rail_verbs_counter which, long delta)
{
    atomic_fetch_add_explicit(&g_count[which], delta, memory_order_relaxed);
}

void rail_verbs_counts(long out[RAIL_VERBS_NCOUNTS])
{
    for (int i = 0; i < RAIL_VERBS_NCOUNTS; i++)
        out[i] = atomic_load_explicit(&g_count[i], memory_order_relaxed);
}

static int fail(int rc, char *err, size_t errlen, const char *dev, const char *what)
{
    if (rc == 0)
        rc = errno ? errno : EIO;
    if (rc < 0)
        rc = -rc;
    snprintf(err, errlen, "%s: %s failed: %s", dev, what, strerror(rc));
    return -rc;
}

/* A resource the HCA or the kernel ran out of: which limit, and the knob that lowers the need. */
static bool exhausted(int rc)
{
    return rc == -ENOMEM || rc == -ENOSPC || rc == -EAGAIN || rc == -EPERM || rc == -EMFILE;
}

static void hint(char *err, size_t errlen, const char *text)
{
    size_t used = strlen(err);
    if (used < errlen)
        snprintf(err + used, errlen - used, "%s", text);
}

int rail_verbs_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_cq **cq,
                         const char *dev, char *err, size_t errlen)
{
    errno = 0;
    *cq = rail_ibv->create_cq(ctx, cqe, cq_context, NULL, 0);
    if (!*cq) {
        char what[64];
        snprintf(what, sizeof(what), "ibv_create_cq(%d entries)", cqe);
        int rc = fail(0, err, errlen, dev, what);
        if (exhausted(rc))
            hint(err, errlen,
                 " (CQ limit of the HCA, max_cq, or RLIMIT_MEMLOCK for its queue: one CQ per "
                 "connection and rail; fewer connections: NCCL_NCHANNELS_PER_NET_PEER, "
                 "NCCL_MAX_NCHANNELS; or `ulimit -l unlimited`)");
        return rc;
    }
    rail_verbs_count(RAIL_VERBS_CQS, 1);
    rail_verbs_count(RAIL_VERBS_CQES, (*cq)->cqe);
    return 0;
}

int rail_verbs_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int send_wr, int recv_wr,
                         int send_sge, int *max_inline, void *qp_context, struct ibv_qp **qp,
                         const char *dev, char *err, size_t errlen)
{
    struct ibv_qp_init_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_context = qp_context;
    attr.send_cq = cq;
    attr.recv_cq = cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = (uint32_t)send_wr;
    attr.cap.max_recv_wr = (uint32_t)recv_wr;
    attr.cap.max_send_sge = (uint32_t)send_sge;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = max_inline && *max_inline > 0 ? (uint32_t)*max_inline : 0;
    errno = 0;
    *qp = rail_ibv->create_qp(pd, &attr);
    if (!*qp && attr.cap.max_inline_data) {
        /* Providers refuse an inline size above their limit: inline data is an optimisation. */
        attr.cap.max_inline_data = 0;
        errno = 0;
        *qp = rail_ibv->create_qp(pd, &attr);
    }
    if (max_inline)
        *max_inline = *qp ? (int)attr.cap.max_inline_data : 0;
    if (!*qp) {
        char what[96];
        snprintf(what, sizeof(what), "ibv_create_qp(RC, %d send / %d recv WRs)", send_wr, recv_wr);
        int rc = fail(0, err, errlen, dev, what);
        if (exhausted(rc))
            hint(err, errlen,
                 " (QP limit of the HCA, max_qp, or RLIMIT_MEMLOCK for its queues: each "
                 "connection takes NCCL_IB_QPS_PER_CONNECTION QPs per rail, +1 with "
                 "NCCL_RAIL_CONTROL_QP on several rails; fewer connections: "
                 "NCCL_NCHANNELS_PER_NET_PEER, NCCL_MAX_NCHANNELS)");
        return rc;
    }
    rail_verbs_count(RAIL_VERBS_QPS, 1);
    return 0;
}

bool rail_mqp_retryable(int err, int retries, int max_retries, bool all)
{
    if (err < 0)
        err = -err;
    if (err == 0 || retries >= max_retries)
        return false;
    return all || err == ETIMEDOUT;
}

/* One QP transition with NCCL's retries: 0 or a positive errno. */
static int modify_retry(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *dev,
                        const char *what)
{
    int max = (int)rail_param_int(RAIL_PARAM_IB_MQP_RETRY_CNT);
    long long ms = rail_param_int(RAIL_PARAM_IB_MQP_RETRY_SLEEP_MSEC);
    bool all = rail_param_bool(RAIL_PARAM_IB_MQP_RETRY_ALL);
    for (int retries = 0;; retries++) {
        int rc = rail_ibv->modify_qp(qp, a, mask);
        if (rc < 0)
            rc = -rc;
        if (!rail_mqp_retryable(rc, retries, max, all))
            return rc;
        long long wait = ms * (retries + 1);
        RAIL_INFO(NCCL_NET,
                  "%s: %s of QP %#x failed: %s; retry %d/%d in %lld ms (NCCL_IB_MQP_RETRY_CNT, "
                  "NCCL_IB_MQP_RETRY_SLEEP_MSEC%s)",
                  dev, what, qp->qp_num, strerror(rc), retries + 1, max, wait,
                  all ? ", NCCL_IB_MQP_RETRY_ALL=1" : "");
        struct timespec ts = {.tv_sec = (time_t)(wait / 1000),
                              .tv_nsec = (long)(wait % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

int rail_verbs_qp_connect(struct ibv_qp *qp, const struct rail_qp_path *path,
                          const struct rail_qp_remote *remote, const char *dev, char *err,
                          size_t errlen)
{
    struct ibv_qp_attr a;
    int rc;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = (uint16_t)path->pkey_index;
    a.port_num = (uint8_t)path->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    rc = modify_retry(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                      dev, "ibv_modify_qp(INIT)");
    if (rc)
        return fail(rc, err, errlen, dev, "ibv_modify_qp(INIT)");

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = remote->mtu;
    a.dest_qp_num = remote->qpn;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = (uint8_t)path->port;
    a.ah_attr.sl = (uint8_t)path->sl;
    if (remote->link_layer == IBV_LINK_LAYER_ETHERNET) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = remote->gid;
        a.ah_attr.grh.sgid_index = (uint8_t)path->gid_index;
        a.ah_attr.grh.hop_limit = 255;
        a.ah_attr.grh.traffic_class = (uint8_t)path->tc;
    } else {
        a.ah_attr.dlid = remote->lid;
    }
    rc = modify_retry(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                      dev, "ibv_modify_qp(RTR)");
    if (rc)
        return fail(rc, err, errlen, dev, "ibv_modify_qp(RTR)");

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)path->timeout;
    a.retry_cnt = (uint8_t)path->retry_cnt;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    rc = modify_retry(qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                      dev, "ibv_modify_qp(RTS)");
    if (rc)
        return fail(rc, err, errlen, dev, "ibv_modify_qp(RTS)");
    return 0;
}

int rail_verbs_qp_readback(struct ibv_qp *qp, const struct rail_qp_path *path, bool roce, char *got,
                           size_t gotlen)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr init;
    memset(&a, 0, sizeof(a));
    memset(&init, 0, sizeof(init));
    int rc = rail_ibv->query_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_AV, &init);
    if (rc != 0) {
        rc = rc < 0 ? -rc : rc;
        snprintf(got, gotlen, "ibv_query_qp failed: %s", strerror(rc));
        return -rc;
    }
    bool pkey_ok = a.pkey_index == (uint16_t)path->pkey_index;
    bool tc_ok = !roce || a.ah_attr.grh.traffic_class == (uint8_t)path->tc;
    if (roce)
        snprintf(got, gotlen, "pkey index %u%s, traffic class %u%s", a.pkey_index,
                 pkey_ok ? "" : " (asked for another)", a.ah_attr.grh.traffic_class,
                 tc_ok ? "" : " (asked for another)");
    else
        snprintf(got, gotlen, "pkey index %u%s (InfiniBand: no GRH, no traffic class)",
                 a.pkey_index, pkey_ok ? "" : " (asked for another)");
    return pkey_ok && tc_ok ? 0 : 1;
}

int rail_verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access, struct ibv_mr **mr,
                      const char *dev, char *err, size_t errlen)
{
    errno = 0;
    *mr = rail_ibv->reg_mr(pd, addr, len, access);
    if (!*mr) {
        char what[96];
        snprintf(what, sizeof(what), "ibv_reg_mr(%p, %zu bytes)", addr, len);
        int rc = fail(0, err, errlen, dev, what);
        if (exhausted(rc))
            hint(err, errlen,
                 " (locked-memory limit RLIMIT_MEMLOCK: `ulimit -l unlimited`, or docker "
                 "--ulimit memlock=-1; or the HCA's max_mr)");
        return rc;
    }
    rail_verbs_count(RAIL_VERBS_MRS, 1);
    rail_verbs_count(RAIL_VERBS_MR_BYTES, (long)(*mr)->length);
    return 0;
}

static int ece_result(int rc)
{
    rc = rc < 0 ? -rc : rc;
    return rc == ENOTSUP || rc == EOPNOTSUPP ? -EOPNOTSUPP : -rc;
}

int rail_verbs_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    memset(ece, 0, sizeof(*ece));
    return rail_ibv->query_ece ? ece_result(rail_ibv->query_ece(qp, ece)) : -EOPNOTSUPP;
}

int rail_verbs_set_ece(struct ibv_qp *qp, const struct ibv_ece *ece)
{
    struct ibv_ece copy = *ece; /* ibv_set_ece takes a non-const pointer */
    return rail_ibv->set_ece ? ece_result(rail_ibv->set_ece(qp, &copy)) : -EOPNOTSUPP;
}

int rail_verbs_qp_to_error(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_ERR;
    int rc = rail_ibv->modify_qp(qp, &a, IBV_QP_STATE);
    return rc > 0 ? -rc : rc;
}

int rail_verbs_port_active(struct ibv_context *ctx, int port)
{
    struct ibv_port_attr pa;
    if (rail_ibv->query_port(ctx, (uint8_t)port, &pa) != 0)
        return 0;
    return pa.state == IBV_PORT_ACTIVE;
}

void rail_verbs_destroy_qp(struct ibv_qp *qp)
{
    if (qp && rail_ibv->destroy_qp(qp) == 0)
        rail_verbs_count(RAIL_VERBS_QPS, -1);
}

void rail_verbs_destroy_cq(struct ibv_cq *cq)
{
    if (!cq)
        return;
    int cqe = cq->cqe;
    if (rail_ibv->destroy_cq(cq) == 0) {
        rail_verbs_count(RAIL_VERBS_CQS, -1);
        rail_verbs_count(RAIL_VERBS_CQES, -cqe);
    }
}

void rail_verbs_dereg_mr(struct ibv_mr *mr)
{
    if (!mr)
        return;
    long len = (long)mr->length;
    if (rail_ibv->dereg_mr(mr) == 0) {
        rail_verbs_count(RAIL_VERBS_MRS, -1);
        rail_verbs_count(RAIL_VERBS_MR_BYTES, -len);
    }
}

const char *rail_verbs_mtu_str(enum ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256:
        return "256";
    case IBV_MTU_512:
        return "512";
    case IBV_MTU_1024:
        return "1024";
    case IBV_MTU_2048:
        return "2048";
    case IBV_MTU_4096:
        return "4096";
    }
    return "?";
}

const char *rail_verbs_event_str(enum ibv_event_type type)
{
    return rail_ibv->event_type_str ? rail_ibv->event_type_str(type) : "unknown event";
}

const char *rail_verbs_wc_status_str(enum ibv_wc_status status)
{
    return rail_ibv->wc_status_str ? rail_ibv->wc_status_str(status) : "unknown status";
}

const struct rail_verbs_ops *rail_ibv = &rail_verbs_default_ops;

const struct rail_verbs_ops *rail_verbs_set_ops(const struct rail_verbs_ops *ops)
{
    const struct rail_verbs_ops *prev = rail_ibv;
    rail_ibv = ops ? ops : &rail_verbs_default_ops;
    return prev;
}
