/* SPDX-License-Identifier: Apache-2.0 */
/* The fault-injecting verbs table (verbs_fault_ops.h). Decisions come from the pure trigger
 * (verbs_fault.c); this file applies them:
 *   post_send / post_recv faults return the errno without posting;
 *   reg_mr, create_qp and create_cq faults return NULL with errno set (an HCA limit reached);
 *   wc_* faults post the work request for real, remember (QP, wr_id) and rewrite the status of
 *     its completion when it is polled (the real QP keeps working: the plugin must treat the rail
 *     as broken on its own);
 *   cq_overrun posts for real, then the next poll of that QP's send CQ fails and a CQ_ERR event
 *     is queued;
 *   port_err / qp_fatal / device_fatal post for real and queue the event, which the plugin's
 *     non-blocking async-event poll (get_async_event) returns before the device's own events;
 *   stall holds the work requests without posting them; when the plugin moves their QP to the
 *     error state they complete (poll_cq) with a flush error, as stuck WRs of a dead link do.
 * Synthesized events are never passed to libibverbs' ack (it would count an event it never
 * delivered); queued ones naming a QP or CQ are dropped when it is destroyed. Every injection
 * logs one WARN "fault injection: ...". */
#include "transport/verbs_fault_ops.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "log.h"
#include "transport/net_verbs.h"
#include "transport/verbs_fault.h"

#define MAX_DOOMED   64
#define MAX_OVERRUNS 16
#define MAX_EVENTS   32
#define MAX_HELD     64
#define VENDOR_ERR   0xfa17u /* vendor_err of a rewritten completion */

struct doomed {
    struct ibv_qp *qp;
    uint64_t wr_id;
    enum ibv_wc_status status;
};

enum { EV_FREE = 0, EV_QUEUED, EV_DELIVERED };

/* A stalled work request: held until its QP enters the error state, then flushed. */
struct held_wr {
    struct ibv_qp *qp;
    uint64_t wr_id;
    enum ibv_wc_opcode opcode;
    int flushed;
};

struct synth_event {
    int state;
    struct ibv_context *ctx;
    struct ibv_async_event ev;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rail_fault_plan g_plan;
static const struct rail_verbs_ops *g_base;
static struct rail_verbs_ops g_ops;
static struct doomed g_doomed[MAX_DOOMED];
static int g_ndoomed;
static struct ibv_cq *g_overrun[MAX_OVERRUNS];
static struct synth_event g_events[MAX_EVENTS];
static struct held_wr g_held[MAX_HELD];
static int g_nheld;
static atomic_int g_pending; /* doomed + held completions and overruns: poll_cq's fast path */

static const char *dev_of(struct ibv_context *ctx)
{
    const char *n = ctx && ctx->device ? g_base->get_device_name(ctx->device) : NULL;
    return n ? n : "?";
}

static enum rail_fault_op op_class(const struct ibv_send_wr *wr)
{
    if (!wr)
        return RAIL_FOP_OTHER;
    if (wr->opcode == IBV_WR_RDMA_WRITE)
        return RAIL_FOP_WRITE;
    if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
        return RAIL_FOP_WRITE_IMM;
    if (wr->opcode == IBV_WR_RDMA_READ)
        return RAIL_FOP_READ;
    return RAIL_FOP_OTHER;
}

static uint64_t sge_bytes(const struct ibv_sge *sg, int n)
{
    uint64_t len = 0;
    for (int i = 0; sg && i < n; i++)
        len += sg[i].length;
    return len;
}

/* The rule (copied) that faults this call, or -1. */
static int decide(enum rail_fault_call call, const char *dev, enum rail_fault_op op, uint64_t len,
                  struct rail_fault_rule *rule)
{
    pthread_mutex_lock(&g_lock);
    int i = rail_fault_match(&g_plan, call, dev, op, len);
    if (i >= 0)
        *rule = g_plan.rule[i];
    pthread_mutex_unlock(&g_lock);
    if (i >= 0)
        RAIL_WARN(NCCL_NET,
                  "fault injection: rule %d (%s) fires on %s at a %s call (%s, %llu bytes)", i + 1,
                  rail_fault_kind_name(rule->kind), dev,
                  call == RAIL_FCALL_POST_SEND   ? "post_send"
                  : call == RAIL_FCALL_POST_RECV ? "post_recv"
                  : call == RAIL_FCALL_REG_MR    ? "reg_mr"
                  : call == RAIL_FCALL_CREATE_QP ? "create_qp"
                  : call == RAIL_FCALL_CREATE_CQ ? "create_cq"
                  : call == RAIL_FCALL_SET_ECE   ? "set_ece"
                                                 : "modify_qp",
                  rail_fault_op_name(op), (unsigned long long)len);
    return i;
}

static void queue_event(struct ibv_context *ctx, enum ibv_event_type type, struct ibv_qp *qp,
                        struct ibv_cq *cq, int port)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct synth_event *e = &g_events[i];
        if (e->state != EV_FREE)
            continue;
        memset(e, 0, sizeof(*e));
        e->state = EV_QUEUED;
        e->ctx = ctx;
        e->ev.event_type = type;
        if (qp)
            e->ev.element.qp = qp;
        else if (cq)
            e->ev.element.cq = cq;
        else
            e->ev.element.port_num = port;
        break;
    }
    pthread_mutex_unlock(&g_lock);
}

static void doom(struct ibv_qp *qp, struct ibv_send_wr *wr, enum ibv_wc_status st)
{
    while (wr && !(wr->send_flags & IBV_SEND_SIGNALED))
        wr = wr->next;
    if (!wr)
        return;
    pthread_mutex_lock(&g_lock);
    if (g_ndoomed < MAX_DOOMED) {
        g_doomed[g_ndoomed++] = (struct doomed){qp, wr->wr_id, st};
        atomic_fetch_add(&g_pending, 1);
    }
    pthread_mutex_unlock(&g_lock);
}

/* Holds every WR of the chain (all or none): 0, or ENOMEM when the table is full. */
static int hold(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    int n = 0;
    for (struct ibv_send_wr *w = wr; w; w = w->next)
        n++;
    pthread_mutex_lock(&g_lock);
    if (g_nheld + n > MAX_HELD) {
        pthread_mutex_unlock(&g_lock);
        if (bad)
            *bad = wr;
        return ENOMEM;
    }
    for (struct ibv_send_wr *w = wr; w; w = w->next)
        g_held[g_nheld++] = (struct held_wr){
            qp, w->wr_id, w->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, 0};
    atomic_fetch_add(&g_pending, n);
    pthread_mutex_unlock(&g_lock);
    return 0;
}

static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct rail_fault_rule r;
    enum rail_fault_op op = op_class(wr);
    uint64_t len = wr ? sge_bytes(wr->sg_list, wr->num_sge) : 0;
    if (decide(RAIL_FCALL_POST_SEND, dev_of(qp->context), op, len, &r) < 0)
        return g_base->post_send(qp, wr, bad);
    if (r.kind == RAIL_FAULT_POST_SEND) {
        if (bad)
            *bad = wr;
        return r.err;
    }
    if (r.kind == RAIL_FAULT_STALL)
        return hold(qp, wr, bad);
    int rc = g_base->post_send(qp, wr, bad);
    if (rc)
        return rc;
    switch (r.kind) {
    case RAIL_FAULT_WC_RETRY:
        doom(qp, wr, IBV_WC_RETRY_EXC_ERR);
        break;
    case RAIL_FAULT_WC_REM_ACCESS:
        doom(qp, wr, IBV_WC_REM_ACCESS_ERR);
        break;
    case RAIL_FAULT_WC_FLUSH:
        doom(qp, wr, IBV_WC_WR_FLUSH_ERR);
        break;
    case RAIL_FAULT_CQ_OVERRUN:
        pthread_mutex_lock(&g_lock);
        for (int i = 0; i < MAX_OVERRUNS; i++) {
            if (!g_overrun[i]) {
                g_overrun[i] = qp->send_cq;
                atomic_fetch_add(&g_pending, 1);
                break;
            }
        }
        pthread_mutex_unlock(&g_lock);
        break;
    case RAIL_FAULT_PORT_ERR:
        queue_event(qp->context, IBV_EVENT_PORT_ERR, NULL, NULL, r.port);
        break;
    case RAIL_FAULT_QP_FATAL:
        queue_event(qp->context, IBV_EVENT_QP_FATAL, qp, NULL, 0);
        break;
    case RAIL_FAULT_DEVICE_FATAL:
        queue_event(qp->context, IBV_EVENT_DEVICE_FATAL, NULL, NULL, 0);
        break;
    default:
        break;
    }
    return 0;
}

static int f_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct rail_fault_rule r;
    uint64_t len = wr ? sge_bytes(wr->sg_list, wr->num_sge) : 0;
    if (decide(RAIL_FCALL_POST_RECV, dev_of(qp->context), RAIL_FOP_ANY, len, &r) < 0)
        return g_base->post_recv(qp, wr, bad);
    if (bad)
        *bad = wr;
    return r.err;
}

static struct ibv_mr *f_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct rail_fault_rule r;
    if (decide(RAIL_FCALL_REG_MR, dev_of(pd->context), RAIL_FOP_ANY, len, &r) < 0)
        return g_base->reg_mr(pd, addr, len, access);
    errno = r.err;
    return NULL;
}

/* HCA limits reached (max_qp, max_cq, queue memory): NULL with errno. len: the send queue depth
 * of the QP, the entries of the CQ. */
static struct ibv_qp *f_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    struct rail_fault_rule r;
    if (decide(RAIL_FCALL_CREATE_QP, dev_of(pd->context), RAIL_FOP_ANY, attr->cap.max_send_wr, &r) <
        0)
        return g_base->create_qp(pd, attr);
    errno = r.err;
    return NULL;
}

static struct ibv_cq *f_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                  struct ibv_comp_channel *channel, int vector)
{
    struct rail_fault_rule r;
    if (decide(RAIL_FCALL_CREATE_CQ, dev_of(ctx), RAIL_FOP_ANY, (uint64_t)(cqe > 0 ? cqe : 0), &r) <
        0)
        return g_base->create_cq(ctx, cqe, cq_context, channel, vector);
    errno = r.err;
    return NULL;
}

/* Moves flushed held WRs of cq into wc: how many. Called locked. */
static int take_flushed(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int got = 0;
    for (int i = 0; i < g_nheld && got < n;) {
        struct held_wr *h = &g_held[i];
        if (!h->flushed || h->qp->send_cq != cq) {
            i++;
            continue;
        }
        memset(&wc[got], 0, sizeof(wc[got]));
        wc[got].wr_id = h->wr_id;
        wc[got].status = IBV_WC_WR_FLUSH_ERR;
        wc[got].opcode = h->opcode;
        wc[got].qp_num = h->qp->qp_num;
        wc[got].vendor_err = VENDOR_ERR;
        got++;
        *h = g_held[--g_nheld];
        atomic_fetch_sub(&g_pending, 1);
    }
    return got;
}

static int f_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    if (atomic_load_explicit(&g_pending, memory_order_relaxed) == 0)
        return g_base->poll_cq(cq, n, wc);
    int overrun = 0;
    pthread_mutex_lock(&g_lock);
    int flushed = n > 0 ? take_flushed(cq, n, wc) : 0;
    if (flushed) {
        pthread_mutex_unlock(&g_lock);
        return flushed;
    }
    for (int i = 0; i < MAX_OVERRUNS; i++) {
        if (g_overrun[i] == cq) {
            g_overrun[i] = NULL;
            atomic_fetch_sub(&g_pending, 1);
            overrun = 1;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (overrun) {
        RAIL_WARN(NCCL_NET, "fault injection: CQ %p of %s overruns (poll fails, CQ_ERR queued)",
                  (void *)cq, dev_of(cq->context));
        queue_event(cq->context, IBV_EVENT_CQ_ERR, NULL, cq, 0);
        return -1;
    }
    int got = g_base->poll_cq(cq, n, wc);
    if (got <= 0)
        return got;
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < got && g_ndoomed; k++) {
        for (int i = 0; i < g_ndoomed; i++) {
            if (g_doomed[i].qp->qp_num != wc[k].qp_num || g_doomed[i].wr_id != wc[k].wr_id)
                continue;
            wc[k].status = g_doomed[i].status;
            wc[k].vendor_err = VENDOR_ERR;
            g_doomed[i] = g_doomed[--g_ndoomed];
            atomic_fetch_sub(&g_pending, 1);
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return got;
}

static int f_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct synth_event *e = &g_events[i];
        if (e->state == EV_QUEUED && e->ctx == ctx) {
            e->state = EV_DELIVERED;
            *ev = e->ev;
            pthread_mutex_unlock(&g_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return g_base->get_async_event(ctx, ev);
}

static void f_ack_async_event(struct ibv_async_event *ev)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct synth_event *e = &g_events[i];
        if (e->state == EV_DELIVERED && e->ev.event_type == ev->event_type &&
            !memcmp(&e->ev.element, &ev->element, sizeof(ev->element))) {
            e->state = EV_FREE;
            pthread_mutex_unlock(&g_lock);
            return;
        }
    }
    pthread_mutex_unlock(&g_lock);
    g_base->ack_async_event(ev);
}

/* Forgets everything queued that names qp or cq (about to be destroyed). */
static void forget(struct ibv_qp *qp, struct ibv_cq *cq)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_nheld;) {
        if ((qp && g_held[i].qp == qp) || (cq && g_held[i].qp->send_cq == cq)) {
            g_held[i] = g_held[--g_nheld];
            atomic_fetch_sub(&g_pending, 1);
        } else {
            i++;
        }
    }
    for (int i = 0; i < g_ndoomed;) {
        if (qp && g_doomed[i].qp == qp) {
            g_doomed[i] = g_doomed[--g_ndoomed];
            atomic_fetch_sub(&g_pending, 1);
        } else {
            i++;
        }
    }
    for (int i = 0; cq && i < MAX_OVERRUNS; i++) {
        if (g_overrun[i] == cq) {
            g_overrun[i] = NULL;
            atomic_fetch_sub(&g_pending, 1);
        }
    }
    for (int i = 0; i < MAX_EVENTS; i++) {
        struct synth_event *e = &g_events[i];
        if (e->state == EV_QUEUED &&
            ((qp && e->ev.event_type == IBV_EVENT_QP_FATAL && e->ev.element.qp == qp) ||
             (cq && e->ev.event_type == IBV_EVENT_CQ_ERR && e->ev.element.cq == cq)))
            e->state = EV_FREE;
    }
    pthread_mutex_unlock(&g_lock);
}

/* A transition to INIT, RTR or RTS fails as a modify_qp rule says; a QP moved to the error state
 * flushes its held WRs. */
static int f_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    struct rail_fault_rule r;
    if ((mask & IBV_QP_STATE) && attr->qp_state >= IBV_QPS_INIT && attr->qp_state <= IBV_QPS_RTS &&
        decide(RAIL_FCALL_MODIFY_QP, dev_of(qp->context), RAIL_FOP_ANY, (uint64_t)attr->qp_state,
               &r) >= 0)
        return r.err; /* as ibv_modify_qp: a positive errno, the QP unchanged */
    int rc = g_base->modify_qp(qp, attr, mask);
    if (rc == 0 && (mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_ERR) {
        pthread_mutex_lock(&g_lock);
        for (int i = 0; i < g_nheld; i++)
            if (g_held[i].qp == qp)
                g_held[i].flushed = 1;
        pthread_mutex_unlock(&g_lock);
    }
    return rc;
}

/* ibv_set_ece fails as a set_ece rule says (the QP keeps no ECE). */
static int f_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    struct rail_fault_rule r;
    if (decide(RAIL_FCALL_SET_ECE, dev_of(qp->context), RAIL_FOP_ANY, 0, &r) >= 0)
        return r.err;
    return g_base->set_ece ? g_base->set_ece(qp, ece) : EOPNOTSUPP;
}

static int f_destroy_qp(struct ibv_qp *qp)
{
    forget(qp, NULL);
    return g_base->destroy_qp(qp);
}

static int f_destroy_cq(struct ibv_cq *cq)
{
    forget(NULL, cq);
    return g_base->destroy_cq(cq);
}

int rail_fault_install(const char *spec, int *nrules, char *err, size_t errlen)
{
    struct rail_fault_plan plan;
    int rc = rail_fault_parse(spec, &plan, err, errlen);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&g_lock);
    g_plan = plan;
    pthread_mutex_unlock(&g_lock);
    g_base = rail_ibv;
    g_ops = *g_base;
    g_ops.post_send = f_post_send;
    g_ops.post_recv = f_post_recv;
    g_ops.reg_mr = f_reg_mr;
    g_ops.create_qp = f_create_qp;
    g_ops.create_cq = f_create_cq;
    g_ops.poll_cq = f_poll_cq;
    g_ops.get_async_event = f_get_async_event;
    g_ops.ack_async_event = f_ack_async_event;
    g_ops.destroy_qp = f_destroy_qp;
    g_ops.modify_qp = f_modify_qp;
    g_ops.set_ece = f_set_ece;
    g_ops.destroy_cq = f_destroy_cq;
    (void)rail_verbs_set_ops(&g_ops);
    if (nrules)
        *nrules = plan.nrules;
    return 0;
}
