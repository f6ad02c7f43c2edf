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

#define REJOIN_PERIOD_NS 200000000ull  /* between rejoin attempts of a rail */
#define REJOIN_NAK_NS    1000000000ull /* after the peer said "not now" */
#define CTL_TXQ          8192

enum { RJ_IDLE = 0, RJ_WAIT_ACK };

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
        if (c->link[r].up)
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

bool rail_link_fail(struct rail_comm *c, int rail, const char *why)
{
    struct rail_link *l = &c->link[rail];
    if (!c->failover)
        return false;
    if (!l->up && !l->ready)
        return c->nup > 0; /* already down: a late completion of the same failure */
    bool was_up = l->up;
    l->up = l->ready = false;
    l->rejoin_stage = RJ_IDLE;
    l->epoch++;
    l->next_try_ns = rail_coarse_ns() + REJOIN_PERIOD_NS;
    if (was_up)
        c->nup--;
    for (int q = 0; q < c->nqps; q++)
        (void)rail_verbs_qp_to_error(l->qps[q].qp);
    struct rail_stripe *sched = c->ops->sched(c);
    if (sched)
        (void)rail_stripe_set_rail_state(sched, rail, false);
    rail_tel_failover(c, rail);
    if (c->nup == 0) {
        rail_comm_fail(c, -ENETDOWN, "rail %d (%s) failed (%s) and it was the last rail up", rail,
                       l->dev->name, why);
        return false;
    }
    RAIL_WARN(NCCL_NET,
              "%s comm %p (peer %s): rail %d (%s) failed: %s; %d of %d rail(s) carry on, its "
              "work in flight is sent again on them",
              rail_comm_kind(c), (void *)c, c->peer[0] ? c->peer : "?", rail, l->dev->name, why,
              c->nup, c->nrails);
    ctl_send(c, RAIL_CTL_DOWN, rail);
    return true;
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
        int rc = rail_verbs_create_qp(d->pd, l->cq, l->qps[q].sq_max, l->rq_depth, sge, c, &qp,
                                      d->name, err, errlen);
        if (rc < 0)
            return rc;
        rail_verbs_destroy_qp(l->qps[q].qp);
        l->qps[q].qp = qp;
        l->qps[q].sq_out = l->qps[q].rq_posted = 0;
    }
    return 0;
}

static void rail_back(struct rail_comm *c, int rail)
{
    struct rail_link *l = &c->link[rail];
    l->up = true;
    l->ready = false;
    l->rejoin_stage = RJ_IDLE;
    c->nup++;
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
    if (l->rejoin_stage != RJ_IDLE || now < l->next_try_ns || !drained(c, rail) || c->rejoin_hold)
        return;
    l->next_try_ns = now + REJOIN_PERIOD_NS;
    if (!port_ok(l))
        return;
    if (renew_qps(c, rail, err, sizeof(err)) < 0) {
        RAIL_WARN(NCCL_NET, "rail %d (%s): cannot rebuild its QPs for a rejoin: %s", rail,
                  l->dev->name, err);
        return;
    }
    l->rejoin_stage = RJ_WAIT_ACK;
    ctl_send(c, RAIL_CTL_REJOIN_REQ, rail);
}

/* Receive side: the sender's new QPs of rail. */
static void on_rejoin_req(struct rail_comm *c, int rail, const struct rail_meta_rail *pr)
{
    struct rail_link *l = &c->link[rail];
    char err[256] = "";
    if (l->up || l->ready) /* it failed on the other side only: fail it here too, then rejoin */
        rail_link_fail(c, rail, "the peer rebuilds it");
    if (!drained(c, rail) || !port_ok(l)) {
        ctl_send(c, RAIL_CTL_REJOIN_NAK, rail);
        return;
    }
    int rc = renew_qps(c, rail, err, sizeof(err));
    if (rc == 0)
        rc = rail_link_connect_one(c, rail, pr, l->sl, l->tc, err, sizeof(err));
    for (int q = 0; rc == 0 && q < c->nqps; q++)
        rc = rail_post_recvs(c, rail, q, l->rq_depth);
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "rail %d (%s): rejoin refused: %s", rail, l->dev->name,
                  err[0] ? err : strerror(-rc));
        for (int q = 0; q < c->nqps; q++)
            (void)rail_verbs_qp_to_error(l->qps[q].qp);
        ctl_send(c, RAIL_CTL_REJOIN_NAK, rail);
        return;
    }
    l->ready = true; /* receives posted; our own writes wait for REJOIN_DONE */
    ctl_send(c, RAIL_CTL_REJOIN_ACK, rail);
}

static void on_rejoin_ack(struct rail_comm *c, int rail, const struct rail_meta_rail *pr)
{
    struct rail_link *l = &c->link[rail];
    char err[256] = "";
    if (l->rejoin_stage != RJ_WAIT_ACK)
        return;
    int rc = rail_link_connect_one(c, rail, pr, l->sl, l->tc, err, sizeof(err));
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "rail %d (%s): rejoin failed: %s", rail, l->dev->name, err);
        l->rejoin_stage = RJ_IDLE;
        for (int q = 0; q < c->nqps; q++)
            (void)rail_verbs_qp_to_error(l->qps[q].qp);
        return;
    }
    rail_back(c, rail);
    ctl_send(c, RAIL_CTL_REJOIN_DONE, rail);
}

static void on_frame(struct rail_comm *c, const struct rail_meta *m)
{
    int kind = (int)(m->nonce >> 32), rail = (int)(m->nonce & 0xFFFFFFFFu);
    bool sender = c->ops->drives_rejoin;
    if (rail < 0 || rail >= c->nrails || m->nqps != c->nqps) {
        rail_comm_fail(c, -EPROTO, "control frame for rail %d with %d QPs (comm: %d x %d)", rail,
                       m->nqps, c->nrails, c->nqps);
        return;
    }
    struct rail_link *l = &c->link[rail];
    switch (kind) {
    case RAIL_CTL_DOWN:
        if (l->up || l->ready)
            rail_link_fail(c, rail, "the peer saw it fail");
        return;
    case RAIL_CTL_REJOIN_REQ:
        if (!sender)
            on_rejoin_req(c, rail, &m->rails[0]);
        return;
    case RAIL_CTL_REJOIN_ACK:
        if (sender)
            on_rejoin_ack(c, rail, &m->rails[0]);
        return;
    case RAIL_CTL_REJOIN_NAK:
        if (sender && l->rejoin_stage == RJ_WAIT_ACK) {
            l->rejoin_stage = RJ_IDLE;
            for (int q = 0; q < c->nqps; q++)
                (void)rail_verbs_qp_to_error(l->qps[q].qp);
            l->next_try_ns = rail_coarse_ns() + REJOIN_NAK_NS;
        }
        return;
    case RAIL_CTL_REJOIN_DONE:
        if (!sender && l->ready)
            rail_back(c, rail);
        return;
    }
    rail_comm_fail(c, -EPROTO, "unknown control frame kind %d", kind);
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
    for (int r = 0; r < c->nrails; r++) {
        struct rail_link *l = &c->link[r];
        if ((l->up || l->ready) && atomic_load(&l->dev->port_down))
            rail_link_fail(c, r, "its port went down");
    }
    ctl_flush(c);
    ctl_read(c);
    if (!c->ops->drives_rejoin || c->nup == c->nrails)
        return;
    for (int r = 0; r < c->nrails; r++)
        if (!c->link[r].up)
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
