/* SPDX-License-Identifier: Apache-2.0 */
/* Rail failure and rejoin for multi-rail connections.
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
 * writes too. Control frames travel on the comm's TCP socket, the one that also tells a dead
 * peer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "protocol/net_comm.h"
#include "protocol/net_link.h"
#include "transport/net_oob.h"
#include "protocol/net_telemetry.h"
#include "transport/net_verbs.h"
#include "params.h"

#define CTL_TXQ 8192

struct rail_ctl {
    struct rail_oob_rx rx;
    uint8_t txq[CTL_TXQ];
    size_t txlen;
    bool dead; /* the socket failed: control frames are off, the health check reports the peer */
};

int rail_pick_up(struct rail_comm *c, unsigned from)
{
    for (int i = 0; i < c->nrails; i++) {
        int r = (int)((from + (unsigned)i) % (unsigned)c->nrails);
        if (c->link[r].rj.up)
            return r;
    }
    return -1;
}

int rail_ctl_init(struct rail_comm *c)
{
    if (!c->failover || c->ctl)
        return 0;
    c->ctl = calloc(1, sizeof(*c->ctl));
    return c->ctl ? 0 : -ENOMEM;
}

void rail_ctl_free(struct rail_comm *c)
{
    free(c->ctl);
    c->ctl = NULL;
}

/* ---- control frames ---- */

static void ctl_flush(struct rail_comm *c)
{
    struct rail_ctl *k = c->ctl;
    while (k && !k->dead && k->txlen) {
        ssize_t n = send(c->fd, k->txq, k->txlen, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                k->dead = true;
            return;
        }
        memmove(k->txq, k->txq + n, k->txlen - (size_t)n);
        k->txlen -= (size_t)n;
    }
}

static void ctl_send(struct rail_comm *c, int kind, int rail)
{
    struct rail_ctl *k = c->ctl;
    struct rail_meta m;
    if (!k || k->dead)
        return;
    memset(&m, 0, sizeof(m));
    m.nonce = (uint64_t)kind << 32 | (uint64_t)rail;
    m.nrails = 1;
    m.nqps = c->nqps;
    m.sl = c->link[rail].sl;
    m.tc = c->link[rail].tc;
    m.addr1 = 1;
    rail_link_describe(c, rail, &m.rails[0]);
    int n = rail_meta_encode(RAIL_FRAME_CTL, &m, k->txq + k->txlen, CTL_TXQ - k->txlen);
    if (n < 0) {
        RAIL_WARN(NCCL_NET, "%s comm %p: control frame for rail %d dropped (queue full)",
                  rail_comm_kind(c), (void *)c, rail);
        return;
    }
    k->txlen += (size_t)n;
    ctl_flush(c);
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
        int got = l->inline_want;
        int rc = rail_verbs_create_qp(d->pd, l->cq, l->qps[q].sq_max, l->rq_depth, sge, &got, c,
                                      &qp, d->name, err, errlen);
        if (rc < 0)
            return rc;
        if (got < l->max_inline)
            l->max_inline = got; /* what every QP of the rail has */
        rail_verbs_destroy_qp(l->qps[q].qp);
        l->qps[q].qp = qp;
        l->qps[q].sq_out = l->qps[q].rq_posted = l->qps[q].rq_owed = 0;
    }
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
        rc = rail_post_recvs(c, rail, q, l->rq_depth);
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
    struct rail_ctl *k = c->ctl;
    char err[200] = "";
    while (!k->dead) {
        int rc = rail_oob_recv(c->fd, &k->rx, RAIL_FRAME_CTL, err, sizeof(err));
        if (rc == 0)
            return;
        if (rc < 0) {
            /* A closed socket is the peer-health check's business (it has a grace period). */
            if (rc == -EPROTO)
                rail_comm_fail(c, rc, "control channel: %s", err);
            k->dead = true;
            return;
        }
        struct rail_meta m;
        rc = rail_meta_decode(RAIL_FRAME_CTL, k->rx.buf + RAIL_FRAME_HDR, k->rx.body_len,
                              k->rx.checksum, &m, err, sizeof(err));
        memset(&k->rx, 0, sizeof(k->rx));
        if (rc < 0) {
            rail_comm_fail(c, rc, "control frame: %s", err);
            return;
        }
        on_frame(c, &m);
    }
}

void rail_rails_poll(struct rail_comm *c, uint64_t now)
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
    ctl_flush(c);
    ctl_read(c);
    if (!c->ops->drives_rejoin || c->nup == c->nrails)
        return;
    for (int r = 0; r < c->nrails; r++)
        if (!c->link[r].rj.up)
            try_rejoin(c, r, now);
}

/* ---- setup ---- */

int rail_comm_setup_rails(struct rail_comm *c, char *err, size_t errlen)
{
    c->failover = c->nrails > 1 && rail_param_bool(RAIL_PARAM_FAILOVER);
    int rc = rail_ctl_init(c);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory for the control channel");
        return rc;
    }
    return c->ops->setup_rails ? c->ops->setup_rails(c, err, errlen) : 0;
}

void rail_comm_stats_open(struct rail_comm *c)
{
    struct rail_stripe *sched = c->ops->sched(c);
    c->stats = rail_stats_open((enum rail_stats_dir)c->ops->stats_dir,
                               c->group ? c->group->name : "?", c->peer, c->nrails);
    for (int r = 0; r < c->nrails; r++)
        rail_stats_set_rail_dev(c->stats, r, c->link[r].dev->name);
    if (sched)
        rail_stats_sync_stripe(c->stats, sched);
}
