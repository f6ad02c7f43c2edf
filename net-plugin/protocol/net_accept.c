/* SPDX-License-Identifier: Apache-2.0 */
/* The receiving end of connection setup: listen, accept and close of a listen comm. accept
 * takes the sender's metadata (through the accept pool, which drops strays), builds the receive
 * comm's QPs, answers with its own metadata and waits for READY; non-blocking like connect
 * (net_conn.c), a NULL comm means "call again". */
#include "protocol/net_accept.h"
#include "protocol/net_conn.h"
#include "protocol/net_conn_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "protocol/net_accept_pool.h"
#include "protocol/net_ece.h"
#include "protocol/net_flush.h"
#include "protocol/net_link.h"
#include "protocol/net_qsize.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_comm.h"
#include "transport/net_oob.h"

struct rail_listen_comm {
    uint32_t magic;
    struct rail_netdev *dev;
    int fd;
    uint64_t nonce;
    struct rail_accept_pool *pool; /* connections not yet known to be the peer */
    struct rail_conn_state *pending;
};

/* ---- listen ---- */

int rail_net_listen(const struct rail_net_ctx *ctx, int dev, void *handle, void **listen_comm)
{
    struct rail_netdev *d = rail_device_group(dev);
    struct rail_listen_comm *lc;
    struct rail_handle h;
    char err[256] = "";
    int rc;

    (void)ctx;
    if (!listen_comm || !handle)
        return -EINVAL;
    *listen_comm = NULL;
    if (!d) {
        RAIL_WARN(NCCL_NET, "listen: device %d does not exist (%d devices)", dev,
                  rail_devices_count());
        return -EINVAL;
    }
    lc = calloc(1, sizeof(*lc));
    if (lc)
        lc->pool = rail_accept_pool_new();
    if (!lc || !lc->pool) {
        free(lc);
        return -ENOMEM;
    }
    rc = rail_oob_listen(&h, &lc->fd, err, sizeof(err));
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "listen on %s: %s", d->name, err);
        rail_accept_pool_free(lc->pool);
        free(lc);
        return rc;
    }
    lc->magic = RAIL_LSTN_MAGIC;
    lc->dev = d;
    lc->nonce = h.nonce;
    rail_handle_encode(&h, handle);
    *listen_comm = lc;
    return 0;
}

int rail_net_close_listen(void *listen_comm)
{
    struct rail_listen_comm *lc = listen_comm;
    if (!lc)
        return 0;
    if (lc->magic != RAIL_LSTN_MAGIC)
        return -EINVAL;
    rail_conn_state_free(lc->pending);
    rail_accept_pool_free(lc->pool);
    rail_oob_close(&lc->fd);
    lc->magic = RAIL_DEAD_MAGIC;
    free(lc);
    return 0;
}

/* ---- accept (receiver) ---- */

static int accept_meta(struct rail_listen_comm *lc, struct rail_conn_state *st, char *err,
                       size_t errlen)
{
    struct rail_meta *m = &st->meta;
    struct rail_recv_comm *r = NULL;
    struct rail_wire_ece accepted[RAIL_MAX_RAILS];
    int rc =
        rail_meta_decode_version(RAIL_FRAME_META_S, st->rx.version, st->rx.buf + RAIL_FRAME_HDR,
                                 st->rx.body_len, st->rx.checksum, m, err, errlen);
    if (rc < 0)
        return rc;
    int version = m->version; /* the answer's: an older peer gets what it sent */
    if (m->nonce != lc->nonce) {
        snprintf(err, errlen, "peer connected with the handle of another listener");
        return -EPROTO;
    }
    /* Rail i pairs with the peer's rail i; extra rails of either side stay unused. */
    int nrails = m->nrails < lc->dev->nrails ? m->nrails : lc->dev->nrails;
    unsigned cts_bytes = m->cts_bytes; /* RAIL_CTS_BYTES from a sender older than version 6 */
    /* Receive WRs per QP (docs/scale.md §1): a version 6 sender says how many work requests one
     * of its QPs keeps in flight, which bounds the writes with immediate landing on one QP of
     * this side while it keeps polling; what may land before it polls is what it allowed (its
     * clear-to-send entries, 64 for NCCL's 8 receives of up to 8, and its eager slots). An
     * older sender (send_depth 0) gets the full RAIL_RECV_RQ. A write that finds the queue
     * empty is retried by the sender's NIC (RNR, rnr_retry 7: no limit): a delay, not an error.
     * The QP facing the sender's control QP (the last one, when it announces ctl_depth) is
     * sized by that QP's depth the same way (net_qsize.h). */
    int rq = rail_qsize_recv_rq(m->send_depth);
    int ctl_rq = m->ctl_depth > 0 ? rail_qsize_recv_rq(m->ctl_depth) : 0;
    rc = rail_recv_comm_create(lc->dev, nrails, m->nqps, cts_bytes, rq, ctl_rq, &r, err, errlen);
    if (rc < 0)
        return rc;
    st->comm = &r->base;
    int peer_rails = m->nrails;
    m->nrails = nrails; /* the peer's first nrails rails */
    rc = rail_link_check_peer(&r->base, m, err, errlen);
    for (int rl = 0; rc == 0 && rl < nrails; rl++) /* before RTR */
        rail_ece_accept(&r->base, rl, version >= RAIL_WIRE_VERSION_ECE, &m->rails[rl].ece,
                        &accepted[rl]);
    if (rc == 0)
        rc = rail_link_connect(&r->base, m, m->sl, m->tc, err, errlen);
    if (rc == 0)
        rc = rail_conn_setup_rails(&r->base, err, errlen);
    if (rc == 0 && peer_rails != lc->dev->nrails)
        RAIL_INFO(NCCL_NET, "%s: the peer has %d rail(s), this device %d: using %d", lc->dev->name,
                  peer_rails, lc->dev->nrails, nrails);
    for (int rl = 0; rc == 0 && rl < r->base.nrails; rl++)
        for (int q = 0; rc == 0 && q < r->base.nqps; q++)
            rc = rail_post_recvs(&r->base, rl, q, r->base.link[rl].qps[q].rq_max);
    if (rc == 0)
        rc = rail_flush_setup(r, err, errlen); /* GPUDirect flush QPs: net_flush.c */
    if (rc < 0) {
        if (!err[0])
            snprintf(err, errlen, "posting the initial receives (ibv_post_recv) failed: %s",
                     strerror(-rc));
        return rc;
    }
    r->base.peer_addr1 = m->addr1;
    /* The sender's own eager limit is min(our bounce size, its NCCL_RAIL_EAGER_MAX). */
    r->peer_eager_limit = r->ring.slots ? m->eager_bytes : 0;
    if (r->peer_eager_limit > r->eager_bytes)
        r->peer_eager_limit = r->eager_bytes;
    uint64_t nonce = m->nonce;
    int sl = m->sl, tc = m->tc;
    memset(m, 0, sizeof(*m));
    m->version = version;
    m->nonce = nonce;
    m->nrails = r->base.nrails;
    m->nqps = r->base.nqps;
    m->sl = sl;
    m->tc = tc;
    m->eager_slots = r->ring.slots;
    m->eager_bytes = r->eager_bytes;
    m->addr1 = (uintptr_t)r->records;
    m->addr2 = (uintptr_t)r->bounce;
    m->cts_bytes = cts_bytes; /* echoed: the layout this side writes (send_depth, ctl_depth 0) */
    for (int rl = 0; rl < r->base.nrails; rl++) {
        rail_link_describe(&r->base, rl, &m->rails[rl]);
        m->rails[rl].rkey1 = r->base.link[rl].mr[0]->rkey;
        m->rails[rl].rkey2 = r->base.link[rl].mr[1] ? r->base.link[rl].mr[1]->rkey : 0;
        m->rails[rl].ece = accepted[rl];
    }
    rc = rail_meta_encode(RAIL_FRAME_META_R, m, st->tx.buf, sizeof(st->tx.buf));
    if (rc < 0)
        return rc;
    st->tx.len = (size_t)rc;
    st->tx.off = 0;
    return 1;
}

static int accept_step(struct rail_listen_comm *lc, struct rail_conn_state *st, char *err,
                       size_t errlen)
{
    int rc = 1;
    while (rc == 1) {
        switch (st->stage) {
        case ST_CONNECTING:
            /* Strays (a scanner, a health check, junk, a wrong nonce, silence) are dropped
             * there; only the peer's valid metadata frame comes out. */
            rc =
                rail_accept_pool_step(lc->pool, lc->fd, lc->nonce, lc->dev->name, rail_oob_now_ns(),
                                      &st->fd, st->peer, sizeof(st->peer), &st->rx, err, errlen);
            if (rc == 1) {
                st->deadline_ns = rail_oob_now_ns() + RAIL_OOB_HANDSHAKE_NS;
                rc = accept_meta(lc, st, err, errlen);
            }
            if (rc == 1)
                st->stage = ST_SEND_META;
            continue;
        case ST_SEND_META:
            rc = rail_oob_send(st->fd, &st->tx, err, errlen);
            if (rc == 1) {
                memset(&st->rx, 0, sizeof(st->rx));
                st->stage = ST_RECV_READY;
            }
            continue;
        case ST_RECV_READY:
            rc = rail_oob_recv(st->fd, &st->rx, RAIL_FRAME_READY, err, errlen);
            if (rc == 1 && (st->rx.body_len != 8 || rail_wire_checksum(st->rx.buf + RAIL_FRAME_HDR,
                                                                       8) != st->rx.checksum)) {
                snprintf(err, errlen, "malformed READY frame");
                rc = -EPROTO;
            }
            if (rc == 1)
                return 1;
            continue;
        default:
            return -EINVAL;
        }
    }
    if (st->stage == ST_CONNECTING) /* nobody connected yet: nothing to wait for */
        return rc;
    return rail_oob_deadline(rc, rail_oob_now_ns(), st->deadline_ns, "accept", err, errlen);
}

int rail_net_accept(void *listen_comm, void **recv_comm)
{
    struct rail_listen_comm *lc = listen_comm;
    struct rail_conn_state *st;
    char err[640] = "";
    int rc;

    if (!recv_comm)
        return -EINVAL;
    *recv_comm = NULL;
    if (!lc || lc->magic != RAIL_LSTN_MAGIC) {
        RAIL_WARN(NCCL_NET, "accept: %p is not a listen comm of this plugin", listen_comm);
        return -EINVAL;
    }
    if (!lc->pending) {
        lc->pending = calloc(1, sizeof(*lc->pending));
        if (!lc->pending)
            return -ENOMEM;
        lc->pending->fd = -1;
        lc->pending->stage = ST_CONNECTING;
    }
    st = lc->pending;
    rc = accept_step(lc, st, err, sizeof(err));
    if (rc == 0)
        return 0;
    lc->pending = NULL;
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "accept on %s from %s: %s", lc->dev->name, st->fd >= 0 ? st->peer : "?",
                  err);
        rail_conn_state_free(st);
        return rc;
    }
    struct rail_comm *c = st->comm;
    c->fd = st->fd;
    st->fd = -1;
    st->comm = NULL;
    snprintf(c->peer, sizeof(c->peer), "%s", st->peer);
    char ctl[64] = "";
    if (c->link[0].qps[c->nqps - 1].rq_max != c->link[0].rq_depth)
        snprintf(ctl, sizeof(ctl), " (the last, facing a control QP, of %d)",
                 c->link[0].qps[c->nqps - 1].rq_max);
    RAIL_INFO(NCCL_NET,
              "recv comm %p: %s <- %s, %d rail(s) x %d QP(s) of %d receive WRs%s, %d eager slots "
              "of %u bytes, %u-byte clear-to-send entries%s",
              (void *)c, lc->dev->name, c->peer, c->nrails, c->nqps, c->link[0].rq_depth, ctl,
              ((struct rail_recv_comm *)c)->ring.slots, ((struct rail_recv_comm *)c)->eager_bytes,
              ((struct rail_recv_comm *)c)->cts_bytes, c->failover ? ", failover on" : "");
    rail_conn_state_free(st);
    *recv_comm = c;
    return 0;
}
