/* SPDX-License-Identifier: Apache-2.0 */
/* A comm's failures and the health of its rails: one module for what goes wrong and what comes
 * back.
 *
 * Failure detection and reporting. A comm's first error is sticky: completion errors, fatal
 * asynchronous events, a peer that closed its out-of-band socket (process gone) and protocol
 * violations all land in comm->error with one WARN naming the device, the QP and the operation;
 * the next isend/irecv/test returns it (ncclRemoteError or ncclSystemError), so a dead peer
 * gives an error in bounded time instead of a hang.
 *
 * Rail failure and rejoin for multi-rail connections.
 *
 * Failure: a completion error, a refused post, a PORT_ERR event of the rail's port, or the peer's
 * DOWN frame marks a rail down on that comm. Its QPs are moved to the error state, so every WR
 * still in flight on it completes at once with a flush error and is re-sent on the rails that
 * are up (net_send_post.c, net_recv.c); the peer is told over the out-of-band socket so it stops
 * using the rail too instead of waiting for its own retry timeout. Losing the last rail (or any
 * rail without failover) fails the comm.
 *
 * Rejoin, driven by the send side once the rail's port is ACTIVE again and every WR of the old
 * QPs has completed here: new QPs, REJOIN_REQ with their numbers; the receive side (when its port
 * is ACTIVE and its old QPs drained) builds new QPs, connects them, posts receives and answers
 * REJOIN_ACK (or NAK: try again later); the send side connects, puts the rail back into the
 * stripe schedule and sends REJOIN_DONE, after which the receive side uses the rail for its own
 * writes too. Control frames (net_ctl.c) travel on the comm's TCP socket, the one that also
 * tells a dead peer. */
#include "protocol/net_health.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "params.h"
#include "protocol/net_clock.h"
#include "protocol/net_ctl.h"
#include "protocol/net_link.h"
#include "protocol/net_telemetry.h"
#include "transport/net_oob.h"
#include "transport/net_verbs.h"

#define HEALTH_PERIOD_NS 1000000ull /* 1 ms between socket and async-event checks */
#define PEER_GRACE_NS                                                                              \
    1000000000ull /* 1 s from a closed peer socket to the error: the last                          \
                   * completions of a peer that finished and closed                                \
                   * can lag its close on a loaded (emulated) host */

void rail_comm_fail(struct rail_comm *c, int err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    int expected = 0;

    if (err >= 0)
        err = -EIO;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (atomic_compare_exchange_strong(&c->error, &expected, err))
        RAIL_WARN(NCCL_NET, "%s comm %p (peer %s): %s", rail_comm_kind(c), (void *)c,
                  c->peer[0] ? c->peer : "?", msg);
}

static const char *wr_name(int kind)
{
    switch (kind) {
    case RAIL_WR_DATA:
        return "RDMA WRITE (data)";
    case RAIL_WR_LAST:
        return "RDMA WRITE WITH IMM (completion record / eager message)";
    case RAIL_WR_CTS:
        return "RDMA WRITE (clear-to-send)";
    case RAIL_WR_CREDIT:
        return "RDMA WRITE (eager credit)";
    case RAIL_WR_RECV:
        return "RECV (write with immediate)";
    }
    return "unknown operation";
}

static bool remote_status(enum ibv_wc_status st)
{
    switch (st) {
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
        return true;
    default:
        return false;
    }
}

bool rail_wc_rail_failure(enum ibv_wc_status st)
{
    switch (st) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
    case IBV_WC_WR_FLUSH_ERR:
    case IBV_WC_FATAL_ERR:
    case IBV_WC_GENERAL_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
        return true;
    default:
        return false;
    }
}

void rail_wc_error(struct rail_comm *c, int rail, const struct ibv_wc *wc)
{
    const struct rail_link *l = &c->link[rail];
    int kind = rail_wrid_kind(wc->wr_id), qp = rail_wrid_qp(wc->wr_id);
    bool remote = remote_status(wc->status);

    /* A flushed WR only repeats an earlier failure of the same QP. */
    if (wc->status == IBV_WC_WR_FLUSH_ERR && atomic_load(&c->error))
        return;
    rail_comm_fail(c, remote ? -EREMOTEIO : -EIO,
                   "%s port %d QP %#x (rail %d, QP %d of %d): %s completed with status '%s' (%d, "
                   "vendor error %#x)%s",
                   l->dev ? l->dev->name : "?", l->dev ? l->dev->port : 0, wc->qp_num, rail, qp,
                   c->nqps, wr_name(kind), rail_verbs_wc_status_str(wc->status), (int)wc->status,
                   wc->vendor_err,
                   remote ? ": the peer is unreachable, gone, or rejected the access"
                   : wc->status == IBV_WC_WR_FLUSH_ERR
                       ? ": the QP entered the error state (the peer reported an error, or the "
                         "connection was torn down)"
                       : "");
}

/* A QP_FATAL (transport error, not an access error) on a rail of a comm with failover costs that
 * rail only: the comm's own thread fails it over at its next health check (rails_poll);
 * this may run on any comm's thread. True when the event was handed over so. */
static bool qp_event_fails_rail(struct rail_comm *c, const struct rail_dev *d,
                                const struct ibv_async_event *ev, const char *what)
{
    if (!c->failover || ev->event_type != IBV_EVENT_QP_FATAL)
        return false;
    for (int r = 0; r < c->nrails; r++)
        for (int q = 0; q < c->nqps; q++)
            if (c->link[r].qps && c->link[r].qps[q].qp == ev->element.qp) {
                atomic_fetch_or(&c->qp_fatal_rails, 1u << r);
                RAIL_WARN(NCCL_NET,
                          "%s port %d QP %#x (rail %d): asynchronous event '%s': the rail "
                          "fails over",
                          d->name, d->port, ev->element.qp->qp_num, r, what);
                return true;
            }
    return false;
}

/* NCCL_IB_RETURN_ASYNC_EVENTS=0 (NCCL: the fatal-event count is kept but never returned): a
 * fatal device, QP or CQ event is logged and nothing fails because of it; whatever really broke
 * still surfaces as completion errors. True when the event was handled so. */
static bool logged_only(const struct rail_dev *d, const struct ibv_async_event *ev,
                        const char *what)
{
    switch (ev->event_type) {
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_CQ_ERR:
        break;
    default:
        return false;
    }
    if (rail_param_bool(RAIL_PARAM_IB_RETURN_ASYNC_EVENTS))
        return false;
    RAIL_WARN(NCCL_NET,
              "%s: asynchronous event '%s' (NCCL_IB_RETURN_ASYNC_EVENTS=0: logged only, the "
              "connections on it carry on)",
              d->name, what);
    return true;
}

static void handle_event(struct rail_dev *d, struct ibv_async_event *ev)
{
    const char *what = rail_verbs_event_str(ev->event_type);
    struct rail_comm *c;

    if (logged_only(d, ev, what))
        return;
    switch (ev->event_type) {
    case IBV_EVENT_DEVICE_FATAL:
        atomic_store(&d->fatal, 1);
        RAIL_WARN(NCCL_NET,
                  "%s: fatal device event (%s): every rail on it fails (connections with "
                  "failover carry on over their other rails)",
                  d->name, what);
        break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
        c = ev->element.qp ? ev->element.qp->qp_context : NULL;
        if (c && !qp_event_fails_rail(c, d, ev, what))
            rail_comm_fail(c, -EIO, "%s port %d QP %#x: asynchronous event '%s'", d->name, d->port,
                           ev->element.qp->qp_num, what);
        break;
    case IBV_EVENT_CQ_ERR:
        c = ev->element.cq ? ev->element.cq->cq_context : NULL;
        if (c)
            rail_comm_fail(c, -EIO, "%s: completion queue error (overrun?): '%s'", d->name, what);
        break;
    case IBV_EVENT_PORT_ERR:
        if (ev->element.port_num == d->port) {
            atomic_store(&d->port_down, 1);
            RAIL_WARN(NCCL_NET, "%s: port %d went down (%s): its rails fail over", d->name,
                      ev->element.port_num, what);
        }
        break;
    case IBV_EVENT_PORT_ACTIVE:
        if (ev->element.port_num == d->port && atomic_exchange(&d->port_down, 0))
            RAIL_INFO(NCCL_NET, "%s: port %d is active again: its rails may rejoin", d->name,
                      ev->element.port_num);
        break;
    default:
        RAIL_INFO(NCCL_NET, "%s: asynchronous event '%s'", d->name, what);
        break;
    }
}

static void poll_async(struct rail_dev *d, uint64_t now)
{
    struct ibv_async_event ev;
    if (now < atomic_load(&d->next_async_ns))
        return;
    atomic_store(&d->next_async_ns, now + HEALTH_PERIOD_NS);
    if (pthread_mutex_trylock(&d->async_lock) != 0)
        return;
    /* The async fd is non-blocking: this returns -1 once the queue is empty. */
    while (rail_ibv->get_async_event(d->ctx, &ev) == 0) {
        handle_event(d, &ev);
        rail_ibv->ack_async_event(&ev);
    }
    pthread_mutex_unlock(&d->async_lock);
}

/* The out-of-band socket says the peer is gone: one reason per way of going. */
static void peer_lost(struct rail_comm *c, int why)
{
    if (why == -EPIPE)
        rail_comm_fail(c, -ECONNRESET,
                       "the peer closed its connection (process exited, crashed or closed "
                       "the comm) with operations still pending");
    else if (why == -ETIMEDOUT || why == -EHOSTUNREACH)
        rail_comm_fail(c, -ECONNRESET,
                       "the peer's host stopped answering (TCP keepalive: %s) with operations "
                       "still pending",
                       strerror(-why));
    else
        rail_comm_fail(c, -ECONNRESET,
                       "the connection to the peer failed (%s) with operations still pending",
                       strerror(-why));
}

static void rails_poll(struct rail_comm *c, uint64_t now);

void rail_health_tick_due(struct rail_comm *c, bool want_peer)
{
    c->health_calls = 0;
    uint64_t now = rail_coarse_ns(); /* every RAIL_HEALTH_CALLS-th tick */
    c->coarse_ns = now;
    if (now < c->next_check_ns)
        return;
    c->next_check_ns = now + HEALTH_PERIOD_NS;
    for (int r = 0; r < c->nrails; r++) {
        struct rail_dev *d = c->link[r].dev;
        if (!d)
            continue;
        poll_async(d, now);
        /* With failover a fatal device costs its rails only (the others carry on). */
        if (atomic_load(&d->fatal) &&
            !(c->failover && rail_link_fail(c, r, "its device had a fatal event")))
            rail_comm_fail(c, -EIO, "%s had a fatal device event", d->name);
    }
    rails_poll(c, now);
    /* A peer that completed our last transfer and then closed may be seen closed a moment
     * before that transfer's completion is visible here: wait a short grace period (while
     * the callers keep polling completions) before failing. */
    int alive = want_peer ? rail_oob_peer_alive(c->fd) : 0;
    if (alive < 0) {
        if (!c->peer_gone_ns)
            c->peer_gone_ns = now;
        else if (now - c->peer_gone_ns >= PEER_GRACE_NS)
            peer_lost(c, alive);
    }
}

int rail_comm_error_warn(struct rail_comm *c, int err)
{
    c->error_warned = true;
    RAIL_WARN(NCCL_NET, "%s comm %p (peer %s): returning error %d (%s) to NCCL", rail_comm_kind(c),
              (void *)c, c->peer[0] ? c->peer : "?", err, strerror(-err));
    return err;
}

/* ---- rails: failure and rejoin ---- */

int rail_pick_up(struct rail_comm *c, unsigned from)
{
    for (int i = 0; i < c->nrails; i++) {
        int r = (int)((from + (unsigned)i) % (unsigned)c->nrails);
        if (c->link[r].rj.up)
            return r;
    }
    return -1;
}

/* ---- control frames (carried by net_ctl.c) ---- */

static void ctl_send(struct rail_comm *c, int kind, int rail)
{
    struct rail_meta_rail desc;
    if (!c->ctl)
        return; /* no failover: no control channel */
    memset(&desc, 0, sizeof(desc));
    rail_link_describe(c, rail, &desc);
    rail_ctl_send(c, kind, rail, &desc);
}

/* ---- failure ---- */

static void qps_to_error(struct rail_comm *c, int rail)
{
    for (int q = 0; q < c->nqps; q++)
        (void)rail_verbs_qp_to_error(c->link[rail].qps[q].qp);
}

bool rail_link_fail(struct rail_comm *c, int rail, const char *why)
{
    struct rail_link *l = &c->link[rail];
    bool carry_on;
    unsigned act = rail_rejoin_fail(&l->rj, &c->nup, c->failover, rail_coarse_ns(), &carry_on);
    if (!act)
        return carry_on; /* no failover, or already down (a late completion of that failure) */
    /* Carry out what the state machine (rejoin.c) decided, in its order. */
    if (act & RAIL_RJ_DO_QPS_ERROR)
        qps_to_error(c, rail);
    if (act & RAIL_RJ_DO_SCHED_DOWN) {
        struct rail_stripe *sched = c->ops->sched(c);
        if (sched)
            (void)rail_stripe_set_rail_state(sched, rail, false);
        rail_tel_failover(c, rail);
    }
    if (act & RAIL_RJ_DO_COMM_FAIL) {
        rail_comm_fail(c, -ENETDOWN, "rail %d (%s) failed (%s) and it was the last rail up", rail,
                       l->dev->name, why);
        return false;
    }
    if (act & RAIL_RJ_DO_SEND_DOWN) {
        RAIL_WARN(NCCL_NET,
                  "%s comm %p (peer %s): rail %d (%s) failed: %s; %d of %d rail(s) carry on, its "
                  "work in flight is sent again on them",
                  rail_comm_kind(c), (void *)c, c->peer[0] ? c->peer : "?", rail, l->dev->name, why,
                  c->nup, c->nrails);
        ctl_send(c, RAIL_CTL_DOWN, rail);
    }
    return carry_on;
}

/* ---- rejoin ---- */

static bool drained(const struct rail_comm *c, int rail)
{
    const struct rail_link *l = &c->link[rail];
    for (int q = 0; q < c->nqps; q++)
        if (l->qps[q].sq_out || l->qps[q].rq_posted)
            return false;
    return true;
}

bool rail_link_drained(const struct rail_comm *c, int rail)
{
    return drained(c, rail);
}

/* Replaces the rail's QPs (all WRs completed) by new ones in RESET state. */
static int renew_qps(struct rail_comm *c, int rail, char *err, size_t errlen)
{
    struct rail_link *l = &c->link[rail];
    struct rail_dev *d = l->dev;
    int sge = d->max_sge > 0 && d->max_sge < 2 ? d->max_sge : 2;
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_qp *qp = NULL;
        int got = l->qps[q].inline_want;
        int rc = rail_verbs_create_qp(d->pd, l->cq, l->qps[q].sq_max, l->qps[q].rq_max, sge, &got,
                                      c, &qp, d->name, err, errlen);
        if (rc < 0)
            return rc;
        if (l->qps[q].inline_want > 0 && got < l->max_inline)
            l->max_inline = got; /* what every QP of the rail that carries eager writes has */
        rail_verbs_destroy_qp(l->qps[q].qp);
        l->qps[q].qp = qp;
        l->qps[q].sq_out = l->qps[q].rq_posted = l->qps[q].rq_owed = 0;
    }
    l->cq_work = rail_comm_is_send(c) ? 0 : 1; /* as the send and receive comms keep it */
    return 0;
}

static void rail_back(struct rail_comm *c, int rail)
{
    struct rail_link *l = &c->link[rail];
    rail_rejoin_back(&l->rj, &c->nup);
    struct rail_stripe *sched = c->ops->sched(c);
    if (sched)
        (void)rail_stripe_set_rail_state(sched, rail, true);
    rail_tel_rejoin(c, rail);
    RAIL_INFO(NCCL_NET, "%s comm %p (peer %s): rail %d (%s) rejoined; %d of %d rail(s) up",
              rail_comm_kind(c), (void *)c, c->peer, rail, l->dev->name, c->nup, c->nrails);
}

static bool port_ok(const struct rail_link *l)
{
    return !atomic_load(&l->dev->port_down) && !atomic_load(&l->dev->fatal) &&
           rail_verbs_port_active(l->dev->ctx, l->dev->port);
}

/* Send side: start a rejoin of a rail that is down, when it can work again. */
static void try_rejoin(struct rail_comm *c, int rail, uint64_t now)
{
    struct rail_link *l = &c->link[rail];
    char err[256] = "";
    if (c->rejoin_hold || !rail_rejoin_due(&l->rj, now, drained(c, rail)))
        return;
    if (!port_ok(l))
        return;
    if (renew_qps(c, rail, err, sizeof(err)) < 0) {
        RAIL_WARN(NCCL_NET, "rail %d (%s): cannot rebuild its QPs for a rejoin: %s", rail,
                  l->dev->name, err);
        return;
    }
    rail_rejoin_requested(&l->rj);
    ctl_send(c, RAIL_CTL_REJOIN_REQ, rail);
}

/* Receive side: the sender's new QPs of rail (the rail is down here by now). */
static void on_rejoin_req(struct rail_comm *c, int rail, const struct rail_meta_rail *pr)
{
    struct rail_link *l = &c->link[rail];
    char err[256] = "";
    if (!drained(c, rail) || !port_ok(l)) {
        ctl_send(c, RAIL_CTL_REJOIN_NAK, rail);
        return;
    }
    int rc = renew_qps(c, rail, err, sizeof(err));
    if (rc == 0)
        rc = rail_link_connect_one(c, rail, pr, l->sl, l->tc, err, sizeof(err));
    for (int q = 0; rc == 0 && q < c->nqps; q++)
        rc = rail_post_recvs(c, rail, q, l->qps[q].rq_max);
    rail_rejoin_answered(&l->rj, rc == 0); /* ready: our own writes wait for REJOIN_DONE */
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "rail %d (%s): rejoin refused: %s", rail, l->dev->name,
                  err[0] ? err : strerror(-rc));
        qps_to_error(c, rail);
        ctl_send(c, RAIL_CTL_REJOIN_NAK, rail);
        return;
    }
    ctl_send(c, RAIL_CTL_REJOIN_ACK, rail);
}

/* Send side: the receive side's new QPs of rail, in answer to our REJOIN_REQ. */
static void on_rejoin_ack(struct rail_comm *c, int rail, const struct rail_meta_rail *pr)
{
    struct rail_link *l = &c->link[rail];
    char err[256] = "";
    int rc = rail_link_connect_one(c, rail, pr, l->sl, l->tc, err, sizeof(err));
    if (rc < 0)
        RAIL_WARN(NCCL_NET, "rail %d (%s): rejoin failed: %s", rail, l->dev->name, err);
    unsigned act = rail_rejoin_connected(&l->rj, rc == 0);
    if (act & RAIL_RJ_DO_QPS_ERROR)
        qps_to_error(c, rail);
    if (act & RAIL_RJ_DO_BACK) {
        rail_back(c, rail);
        ctl_send(c, RAIL_CTL_REJOIN_DONE, rail);
    }
}

static void on_frame(struct rail_comm *c, const struct rail_meta *m)
{
    int kind = (int)(m->nonce >> 32), rail = (int)(m->nonce & 0xFFFFFFFFu);
    if (rail < 0 || rail >= c->nrails || m->nqps != c->nqps) {
        rail_comm_fail(c, -EPROTO, "control frame for rail %d with %d QPs (comm: %d x %d)", rail,
                       m->nqps, c->nrails, c->nqps);
        return;
    }
    struct rail_link *l = &c->link[rail];
    unsigned act = rail_rejoin_on_frame(&l->rj, kind, c->ops->drives_rejoin, rail_coarse_ns());
    if (act & RAIL_RJ_DO_PROTO) {
        rail_comm_fail(c, -EPROTO, "unknown control frame kind %d", kind);
        return;
    }
    if (act & RAIL_RJ_DO_FAIL) /* DOWN, or a REQ for a rail that failed on the other side only */
        rail_link_fail(c, rail,
                       kind == RAIL_CTL_DOWN ? "the peer saw it fail" : "the peer rebuilds it");
    if (act & RAIL_RJ_DO_ANSWER)
        on_rejoin_req(c, rail, &m->rails[0]);
    if (act & RAIL_RJ_DO_CONNECT)
        on_rejoin_ack(c, rail, &m->rails[0]);
    if (act & RAIL_RJ_DO_QPS_ERROR) /* NAK: the rebuilt QPs wait for the next attempt */
        qps_to_error(c, rail);
    if (act & RAIL_RJ_DO_BACK) /* DONE */
        rail_back(c, rail);
}

static void ctl_read(struct rail_comm *c)
{
    struct rail_meta m;
    char err[256] = "";
    int rc;
    while ((rc = rail_ctl_next(c, &m, err, sizeof(err))) > 0)
        on_frame(c, &m);
    if (rc < 0)
        rail_comm_fail(c, rc, "%s", err);
}

static void rails_poll(struct rail_comm *c, uint64_t now)
{
    struct rail_stripe *sched = c->nrails > 1 ? c->ops->sched(c) : NULL;
    if (sched)
        rail_stats_sync_stripe(c->stats, sched);
    if (!c->failover || !c->ctl || atomic_load(&c->error))
        return;
    unsigned fatal = atomic_exchange(&c->qp_fatal_rails, 0u); /* set by the async-event check */
    for (int r = 0; r < c->nrails; r++) {
        struct rail_link *l = &c->link[r];
        if ((l->rj.up || l->rj.ready) && atomic_load(&l->dev->port_down))
            rail_link_fail(c, r, "its port went down");
        if ((fatal >> r & 1u) && (l->rj.up || l->rj.ready) &&
            !rail_link_fail(c, r, "a QP of it reported a fatal asynchronous event"))
            return;
    }
    rail_ctl_flush(c);
    ctl_read(c);
    if (!c->ops->drives_rejoin || c->nup == c->nrails)
        return;
    for (int r = 0; r < c->nrails; r++)
        if (!c->link[r].rj.up)
            try_rejoin(c, r, now);
}
