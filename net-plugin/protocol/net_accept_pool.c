/* SPDX-License-Identifier: Apache-2.0 */
/* Candidates of a listen socket (net_accept_pool.h). */
#include "protocol/net_accept_pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "wire/net_wire.h"

struct rail_accept_cand {
    int fd;
    uint64_t deadline_ns;
    char peer[64]; /* "a.b.c.d:port", from accept */
    struct rail_oob_rx rx;
};

struct rail_accept_pool {
    int n;
    unsigned dropped;
    struct rail_accept_cand *cand[RAIL_ACCEPT_POOL_MAX];
    struct rail_meta scratch; /* the decoded frame of a candidate, checked for the nonce */
};

struct rail_accept_pool *rail_accept_pool_new(void)
{
    return calloc(1, sizeof(struct rail_accept_pool));
}

static void drop(struct rail_accept_pool *p, int i, const char *where, const char *why)
{
    struct rail_accept_cand *c = p->cand[i];
    if (where) {
        RAIL_INFO(NCCL_NET,
                  "accept on %s: dropped a connection from %s (%s); still waiting for the peer",
                  where, c->peer, why);
        p->dropped++;
    }
    rail_oob_close(&c->fd);
    free(c);
    p->cand[i] = p->cand[--p->n];
    p->cand[p->n] = NULL;
}

void rail_accept_pool_free(struct rail_accept_pool *p)
{
    if (!p)
        return;
    while (p->n > 0)
        drop(p, p->n - 1, NULL, NULL);
    free(p);
}

unsigned rail_accept_pool_dropped(const struct rail_accept_pool *p)
{
    return p ? p->dropped : 0;
}

/* 1 the candidate's frame is complete and for this listener, 0 not yet, -errno drop it. */
static int read_cand(struct rail_accept_pool *p, struct rail_accept_cand *c, uint64_t nonce,
                     char *why, size_t whylen)
{
    int rc = rail_oob_recv(c->fd, &c->rx, RAIL_FRAME_META_S, why, whylen);
    if (rc <= 0)
        return rc;
    rc = rail_meta_decode_version(RAIL_FRAME_META_S, c->rx.version, c->rx.buf + RAIL_FRAME_HDR,
                                  c->rx.body_len, c->rx.checksum, &p->scratch, why, whylen);
    if (rc < 0)
        return rc;
    if (p->scratch.nonce != nonce) {
        snprintf(why, whylen, "it named the handle of another listener");
        return -EPROTO;
    }
    return 1;
}

/* Reads candidate i: 1 it delivered (handed over through fd, peer, rx, and gone from the pool),
 * 0 it stays (at i), -1 it was dropped (the last candidate moved to i). */
static int visit(struct rail_accept_pool *p, int i, uint64_t nonce, const char *where,
                 uint64_t now_ns, int *fd, char *peer, size_t peerlen, struct rail_oob_rx *rx)
{
    struct rail_accept_cand *c = p->cand[i];
    char why[256] = "";
    int rc = read_cand(p, c, nonce, why, sizeof(why));
    if (rc == 1) {
        *fd = c->fd;
        snprintf(peer, peerlen, "%s", c->peer);
        *rx = c->rx;
        c->fd = -1;
        drop(p, i, NULL, NULL);
        return 1;
    }
    if (rc == 0 && now_ns > c->deadline_ns) {
        snprintf(why, sizeof(why), "no handshake within %llu s",
                 RAIL_ACCEPT_STRAY_NS / 1000000000ull);
        rc = -ETIMEDOUT;
    }
    if (rc < 0) {
        drop(p, i, where, why);
        return -1;
    }
    return 0;
}

/* Takes the connections waiting in the backlog one by one, each read at once: the peer sends its
 * frame as soon as its TCP connection is up, so it is usually there already. Stops at the first
 * that delivers (a later one stays in the backlog for the next step), or when the backlog is
 * empty. */
static int take_new(struct rail_accept_pool *p, int lfd, uint64_t nonce, const char *where,
                    uint64_t now_ns, int *fd, char *peer, size_t peerlen, struct rail_oob_rx *rx,
                    char *err, size_t errlen)
{
    for (;;) {
        char name[64] = "?";
        int nfd = -1, rc = rail_oob_accept(lfd, &nfd, name, sizeof(name), err, errlen);
        if (rc <= 0)
            return rc;
        struct rail_accept_cand *c = calloc(1, sizeof(*c));
        if (!c) {
            rail_oob_close(&nfd);
            snprintf(err, errlen, "out of memory for an incoming connection");
            return -ENOMEM;
        }
        if (p->n == RAIL_ACCEPT_POOL_MAX) { /* full: the oldest candidate makes room */
            int oldest = 0;
            for (int i = 1; i < p->n; i++)
                if (p->cand[i]->deadline_ns < p->cand[oldest]->deadline_ns)
                    oldest = i;
            drop(p, oldest, where, "too many connections waiting; the oldest goes");
        }
        c->fd = nfd;
        c->deadline_ns = now_ns + RAIL_ACCEPT_STRAY_NS;
        memcpy(c->peer, name, sizeof(c->peer));
        p->cand[p->n++] = c;
        if (visit(p, p->n - 1, nonce, where, now_ns, fd, peer, peerlen, rx) == 1)
            return 1;
    }
}

int rail_accept_pool_step(struct rail_accept_pool *p, int lfd, uint64_t nonce, const char *where,
                          uint64_t now_ns, int *fd, char *peer, size_t peerlen,
                          struct rail_oob_rx *rx, char *err, size_t errlen)
{
    /* The candidates first: one whose frame has come needs no accept() call. */
    for (int i = 0; i < p->n;) {
        int rc = visit(p, i, nonce, where, now_ns, fd, peer, peerlen, rx);
        if (rc == 1)
            return 1;
        if (rc == 0)
            i++; /* else dropped: the last candidate moved to i, read it next */
    }
    return take_new(p, lfd, nonce, where, now_ns, fd, peer, peerlen, rx, err, errlen);
}
