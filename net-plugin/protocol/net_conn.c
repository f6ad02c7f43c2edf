/* SPDX-License-Identifier: Apache-2.0 */
/* Connection establishment. The sender (connect) opens a TCP connection to the listener named in
 * the handle and sends its metadata (QPNs, GIDs, FIFO address and keys); the receiver (accept)
 * validates it, builds its QPs, answers with its own metadata (size records, eager bounce
 * slots); the sender moves its QPs to RTS and sends READY. Both calls are non-blocking state
 * machines: a NULL comm means "call again". The sender's progress lives in a registry keyed by a
 * cookie stored in the handle's local stage area, so a garbage handle is never dereferenced. */
#include "protocol/net_conn.h"
#include "protocol/net_conn_state.h"
#include "protocol/net_pieces.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "params.h"
#include "protocol/net_ctl.h"
#include "protocol/net_ece.h"
#include "protocol/net_link.h"
#include "protocol/net_send.h"
#include "protocol/net_telemetry.h"
#include "transport/net_oob.h"

static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rail_conn_state *g_connects;

void rail_conn_state_free(struct rail_conn_state *st)
{
    if (!st)
        return;
    rail_comm_free(st->comm);
    rail_oob_close(&st->fd);
    free(st);
}

/* ---- connect (sender) ---- */

/* Adaptive routing on d (every port InfiniBand for auto, as NCCL's fused NICs) and its
 * threshold; an eager message is a write with immediate that carries data, so with AR the
 * eager limit is at most the threshold (the receiver learns it from the meta frame). */
static void ar_setup(struct rail_send_comm *s, const struct rail_netdev *d)
{
    bool all_ib = true;
    for (int r = 0; r < d->nrails; r++)
        all_ib = all_ib && d->rail[r]->link_layer == IBV_LINK_LAYER_INFINIBAND;
    s->ar = rail_ar_enabled(rail_param_int(RAIL_PARAM_IB_ADAPTIVE_ROUTING), all_ib);
    s->ar_threshold = (uint64_t)rail_param_int(RAIL_PARAM_IB_AR_THRESHOLD);
}

static long long eager_max(const struct rail_send_comm *s)
{
    long long eager = rail_param_int(RAIL_PARAM_EAGER_MAX);
    if (s->ar && (uint64_t)eager > s->ar_threshold)
        eager = (long long)s->ar_threshold;
    return eager;
}

static int connect_begin(const struct rail_net_ctx *ctx, struct rail_netdev *d,
                         const struct rail_handle *h, struct rail_conn_state **out, char *err,
                         size_t errlen)
{
    struct rail_conn_state *st = calloc(1, sizeof(*st));
    struct rail_send_comm *s = NULL;
    int nqps = (int)rail_param_int(RAIL_PARAM_IB_QPS_PER_CONNECTION);
    long long sl = rail_param_int(RAIL_PARAM_IB_SL), tc = rail_param_int(RAIL_PARAM_IB_TC);
    int rc;

    if (!st)
        return -ENOMEM;
    st->fd = -1;
    st->sl = sl >= 0 ? (int)sl : 0;
    st->tc = tc >= 0 ? (int)tc : (ctx && ctx->traffic_class >= 0 ? ctx->traffic_class & 255 : 0);
    /* Compact clear-to-send entries (half the FIFO) to a listener that reads them. */
    unsigned cts_bytes =
        h->meta_version >= RAIL_WIRE_VERSION_FIFO ? RAIL_CTS_COMPACT_BYTES : RAIL_CTS_BYTES;
    rc = rail_send_comm_create(d, nqps, cts_bytes, &s, err, errlen);
    if (rc < 0) {
        free(st);
        return rc;
    }
    st->comm = &s->base;
    ar_setup(s, d);
    rail_oob_handle_name(h, st->peer, sizeof(st->peer));
    rc = rail_oob_connect_start(h, &st->fd, err, errlen);
    if (rc < 0) {
        rail_conn_state_free(st);
        return rc;
    }
    struct rail_meta *m = &st->meta;
    memset(m, 0, sizeof(*m));
    m->version = h->meta_version; /* ECE frames only to a listener that takes them */
    m->nonce = h->nonce;
    m->nrails = s->base.nrails;
    m->nqps = s->base.nqps; /* data QPs and the control QP alike */
    m->sl = st->sl;
    m->tc = st->tc;
    m->addr1 = (uintptr_t)s->fifo;
    m->cts_bytes = cts_bytes;
    /* What one of its QPs keeps in flight: sizes the receiver's receive queues (version 6);
     * the control QP, the last of each rail, apart (the receiver sizes its peer QP by it). */
    for (int r = 0; r < s->base.nrails; r++)
        for (int q = 0; q < s->base.nqps; q++) {
            int *depth = q == s->ctl_qp ? &m->ctl_depth : &m->send_depth;
            if (s->base.link[r].qps[q].sq_max > *depth)
                *depth = s->base.link[r].qps[q].sq_max;
        }
    if (m->send_depth > 65535)
        m->send_depth = 65535;
    if (m->ctl_depth > 65535)
        m->ctl_depth = 65535;
    if (m->version < RAIL_WIRE_VERSION_FIFO)
        m->ctl_depth = 0; /* an older listener has no field for it: serves every QP alike */
    /* The receiver defers the clear-to-send of receives this small: they come eagerly. */
    long long eager = eager_max(s);
    m->eager_bytes = eager > 0 ? (uint32_t)eager : 0;
    for (int r = 0; r < s->base.nrails; r++) {
        rail_link_describe(&s->base, r, &m->rails[r]);
        m->rails[r].rkey1 = s->base.link[r].mr[0]->rkey;
        rail_ece_offer(&s->base, r, m->version >= RAIL_WIRE_VERSION_ECE, &st->ece_offered[r]);
        m->rails[r].ece = st->ece_offered[r];
    }
    rc = rail_meta_encode(RAIL_FRAME_META_S, m, st->tx.buf, sizeof(st->tx.buf));
    if (rc < 0) {
        rail_conn_state_free(st);
        return rc;
    }
    st->tx.len = (size_t)rc;
    st->stage = ST_CONNECTING;
    st->deadline_ns = rail_oob_now_ns() + RAIL_OOB_HANDSHAKE_NS;
    do
        st->cookie = rail_random64();
    while (st->cookie == 0);
    *out = st;
    return 0;
}

/* After the QPs are connected (connect and accept): failover mode, control channel, the kind's
 * own rail setup (stripe scheduler). */
int rail_conn_setup_rails(struct rail_comm *c, char *err, size_t errlen)
{
    c->failover = c->nrails > 1 && rail_param_bool(RAIL_PARAM_FAILOVER);
    int rc = rail_ctl_init(c);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory for the control channel");
        return rc;
    }
    return c->ops->setup_rails ? c->ops->setup_rails(c, err, errlen) : 0;
}

/* 1 when connected, 0 to be called again, -errno. */
static int connect_step(struct rail_conn_state *st, char *err, size_t errlen)
{
    struct rail_send_comm *s = (struct rail_send_comm *)st->comm;
    int rc = 1;

    while (rc == 1) {
        switch (st->stage) {
        case ST_CONNECTING:
            /* No poll for the TCP connection: send() says EAGAIN while it is being set up and
             * the connect's own error (refused, unreachable) when it failed, and on loopback or
             * a LAN the metadata goes out in the same call as the connect. */
            rc = rail_oob_send(st->fd, &st->tx, err, errlen);
            if (rc < 0 && st->tx.off == 0)
                snprintf(err, errlen, "connect: %s", strerror(-rc));
            break;
        case ST_SEND_META:
        case ST_SEND_READY:
            rc = rail_oob_send(st->fd, &st->tx, err, errlen);
            break;
        case ST_RECV_META:
            rc = rail_oob_recv(st->fd, &st->rx, RAIL_FRAME_META_R, err, errlen);
            if (rc == 1) {
                uint64_t nonce = st->meta.nonce;
                int sent = st->meta.version;
                rc = rail_meta_decode_version(RAIL_FRAME_META_R, st->rx.version,
                                              st->rx.buf + RAIL_FRAME_HDR, st->rx.body_len,
                                              st->rx.checksum, &st->meta, err, errlen);
                if (rc == 0 && st->meta.nonce != nonce) {
                    snprintf(err, errlen, "peer answered for another listener");
                    rc = -EPROTO;
                }
                if (rc == 0 && st->meta.version != sent) {
                    snprintf(err, errlen,
                             "peer answered metadata version %d to version %d (this plugin "
                             "speaks %d..%d)",
                             st->meta.version, sent, RAIL_WIRE_VERSION, RAIL_WIRE_VERSION_MAX);
                    rc = -EPROTO;
                }
                if (rc == 0 && st->meta.cts_bytes != s->cts.entry_bytes) {
                    snprintf(err, errlen,
                             "peer answered %u-byte clear-to-send entries to a FIFO of %u-byte "
                             "entries",
                             st->meta.cts_bytes, s->cts.entry_bytes);
                    rc = -EPROTO;
                }
                if (rc == 0)
                    rc = rail_link_check_peer(&s->base, &st->meta, err, errlen);
                if (rc == 0) {
                    s->base.nrails = st->meta.nrails; /* the receiver's choice: min of both */
                    for (int r = 0; r < s->base.nrails; r++) /* before RTR */
                        rail_ece_apply(&s->base, r, sent >= RAIL_WIRE_VERSION_ECE,
                                       &st->ece_offered[r], &st->meta.rails[r].ece);
                    rc = rail_link_connect(&s->base, &st->meta, st->sl, st->tc, err, errlen);
                }
                if (rc == 0)
                    rc = rail_conn_setup_rails(&s->base, err, errlen);
                if (rc == 0) {
                    long long mine = eager_max(s);
                    s->base.peer_addr1 = st->meta.addr1;
                    s->base.peer_addr2 = st->meta.addr2;
                    s->eager_slots = st->meta.eager_slots;
                    s->eager_bytes = st->meta.eager_bytes;
                    s->eager_limit = s->eager_slots && mine > 0 ? (uint32_t)mine : 0;
                    if (s->eager_limit > s->eager_bytes)
                        s->eager_limit = s->eager_bytes;
                    long long poll = rail_param_int(RAIL_PARAM_EAGER_POLL_MAX);
                    s->poll_max = poll < s->eager_limit ? (uint32_t)poll : s->eager_limit;
                    rc = rail_send_images_alloc(s, err, errlen);
                }
                if (rc == 0) {
                    rc = rail_ready_encode(st->tx.buf, sizeof(st->tx.buf));
                    st->tx.len = rc > 0 ? (size_t)rc : 0;
                    st->tx.off = 0;
                    rc = rc > 0 ? 1 : rc;
                }
            }
            break;
        default:
            return 1;
        }
        if (rc == 1 && ++st->stage > ST_SEND_READY)
            return 1;
    }
    /* Bounded like the accept side: a listener that takes the TCP connection (the kernel
     * does, from its backlog) and never answers cannot keep NCCL calling connect forever. */
    return rail_oob_deadline(rc, rail_oob_now_ns(), st->deadline_ns, "connect", err, errlen);
}

static struct rail_conn_state *registry_take(uint64_t cookie)
{
    struct rail_conn_state **pp, *st = NULL;
    pthread_mutex_lock(&g_reg_lock);
    for (pp = &g_connects; *pp; pp = &(*pp)->next) {
        if ((*pp)->cookie == cookie) {
            st = *pp;
            *pp = st->next;
            break;
        }
    }
    pthread_mutex_unlock(&g_reg_lock);
    return st;
}

static void registry_put(struct rail_conn_state *st)
{
    pthread_mutex_lock(&g_reg_lock);
    st->next = g_connects;
    g_connects = st;
    pthread_mutex_unlock(&g_reg_lock);
}

int rail_net_connect(const struct rail_net_ctx *ctx, int dev, void *handle, void **send_comm)
{
    struct rail_netdev *d = rail_device_group(dev);
    struct rail_conn_state *st;
    struct rail_handle h;
    char err[640] = "";
    uint64_t cookie;
    int rc;

    if (!send_comm || !handle)
        return -EINVAL;
    *send_comm = NULL;
    if (!d) {
        RAIL_WARN(NCCL_NET, "connect: device %d does not exist (%d devices)", dev,
                  rail_devices_count());
        return -EINVAL;
    }
    rc = rail_handle_decode(handle, &h, err, sizeof(err));
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "connect on %s: invalid handle: %s", d->name, err);
        return rc;
    }
    cookie = rail_handle_stage_get(handle);
    if (cookie) {
        st = registry_take(cookie);
        if (!st) {
            RAIL_WARN(NCCL_NET,
                      "connect on %s: the handle refers to an unknown connection "
                      "attempt (reused or corrupted handle)",
                      d->name);
            return -EINVAL;
        }
    } else {
        rc = connect_begin(ctx, d, &h, &st, err, sizeof(err));
        if (rc < 0) {
            RAIL_WARN(NCCL_NET, "connect on %s: %s", d->name, err);
            return rc;
        }
    }
    rc = connect_step(st, err, sizeof(err));
    if (rc < 0) {
        RAIL_WARN(NCCL_NET, "connect on %s to %s: %s", d->name, st->peer, err);
        rail_handle_stage_set(handle, 0);
        rail_conn_state_free(st);
        return rc;
    }
    if (rc == 0) {
        registry_put(st);
        rail_handle_stage_set(handle, st->cookie);
        return 0;
    }
    struct rail_comm *c = st->comm;
    c->fd = st->fd;
    st->fd = -1;
    st->comm = NULL;
    snprintf(c->peer, sizeof(c->peer), "%s", st->peer);
    rail_comm_stats_open(c);
    const struct rail_send_comm *sc = (const struct rail_send_comm *)c;
    char ctl[48] = "";
    if (sc->ctl_qp >= 0)
        snprintf(ctl, sizeof(ctl), " + 1 control QP of %d send WRs",
                 c->link[0].qps[sc->ctl_qp].sq_max);
    RAIL_INFO(NCCL_NET,
              "send comm %p: %s -> %s, %d rail(s) x %d data QP(s) of %d send WRs%s, eager <= %u "
              "bytes (flagged images <= %u), %u-byte clear-to-send entries%s%s",
              (void *)c, d->name, c->peer, c->nrails, sc->ndata, c->link[0].qps[0].sq_max, ctl,
              sc->eager_limit, sc->poll_max, sc->cts.entry_bytes,
              c->failover ? ", failover on" : "",
              sc->ar ? ", adaptive routing (no data in a write with immediate above "
                       "NCCL_IB_AR_THRESHOLD)"
                     : "");
    rail_handle_stage_set(handle, 0);
    rail_conn_state_free(st);
    *send_comm = c;
    return 0;
}

/* ---- close ---- */

int rail_net_close_send(void *send_comm)
{
    struct rail_comm *c = send_comm;
    if (!c)
        return 0;
    if (!rail_comm_is_send(c)) {
        RAIL_WARN(NCCL_NET, "closeSend: %p is not a send comm of this plugin", send_comm);
        return -EINVAL;
    }
    rail_comm_free(c);
    return 0;
}

int rail_net_close_recv(void *recv_comm)
{
    struct rail_comm *c = recv_comm;
    if (!c)
        return 0;
    if (!rail_comm_is_recv(c)) {
        RAIL_WARN(NCCL_NET, "closeRecv: %p is not a receive comm of this plugin", recv_comm);
        return -EINVAL;
    }
    rail_comm_free(c);
    return 0;
}
