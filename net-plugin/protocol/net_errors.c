/* SPDX-License-Identifier: Apache-2.0 */
/* Failure detection and reporting. A comm's first error is sticky: completion errors, fatal
 * asynchronous events, a peer that closed its out-of-band socket (process gone) and protocol
 * violations all land in comm->error with one WARN naming the device, the QP and the operation;
 * the next isend/irecv/test returns it (ncclRemoteError or ncclSystemError), so a dead peer
 * gives an error in bounded time instead of a hang. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "protocol/net_comm.h"
#include "transport/net_oob.h"
#include "transport/net_verbs.h"

#define HEALTH_PERIOD_NS 1000000ull /* 1 ms between socket and async-event checks */
#define PEER_GRACE_NS                                                                              \
    1000000000ull /* 1 s from a closed peer socket to the error: the last                          \
                   * completions of a peer that finished and closed                                \
                   * can lag its close on a loaded (emulated) host */

const char *rail_comm_kind(const struct rail_comm *c)
{
    return c->ops ? c->ops->kind : "?";
}

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
                   c->nqps, wr_name(kind), ibv_wc_status_str(wc->status), (int)wc->status,
                   wc->vendor_err,
                   remote ? ": the peer is unreachable, gone, or rejected the access"
                   : wc->status == IBV_WC_WR_FLUSH_ERR
                       ? ": the QP entered the error state (the peer reported an error, or the "
                         "connection was torn down)"
                       : "");
}

/* A QP_FATAL (transport error, not an access error) on a rail of a comm with failover costs that
 * rail only: the comm's own thread fails it over at its next health check (rail_rails_poll);
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

static void handle_event(struct rail_dev *d, struct ibv_async_event *ev)
{
    const char *what = rail_verbs_event_str(ev->event_type);
    struct rail_comm *c;

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
/* Calls between two reads of the clock: a busy poll loop calls test() back to back, and even the
 * coarse clock costs more than the rest of an idle test() under emulation. */
#define HEALTH_CALLS 16

void rail_comm_health(struct rail_comm *c, bool want_peer)
{
    if (++c->health_calls < HEALTH_CALLS && c->coarse_ns)
        return;
    c->health_calls = 0;
    uint64_t now = rail_coarse_ns(); /* every HEALTH_CALLS-th data-path call */
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
    rail_rails_poll(c, now);
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

int rail_comm_error(struct rail_comm *c)
{
    int err = atomic_load(&c->error);
    if (err && !c->error_warned) {
        c->error_warned = true;
        RAIL_WARN(NCCL_NET, "%s comm %p (peer %s): returning error %d (%s) to NCCL",
                  rail_comm_kind(c), (void *)c, c->peer[0] ? c->peer : "?", err, strerror(-err));
    }
    return err;
}
