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
    char peer[64] = "?";
    if (where) {
        rail_oob_peer_name(c->fd, peer, sizeof(peer));
        RAIL_INFO(NCCL_NET,
                  "accept on %s: dropped a connection from %s (%s); still waiting for the peer",
                  where, peer, why);
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

/* Takes every connection waiting in the backlog. */
static int take_new(struct rail_accept_pool *p, int lfd, const char *where, uint64_t now_ns,
                    char *err, size_t errlen)
{
    for (;;) {
        int fd = -1, rc = rail_oob_accept(lfd, &fd, err, errlen);
        if (rc <= 0)
            return rc;
        struct rail_accept_cand *c = calloc(1, sizeof(*c));
        if (!c) {
            rail_oob_close(&fd);
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
        c->fd = fd;
        c->deadline_ns = now_ns + RAIL_ACCEPT_STRAY_NS;
        p->cand[p->n++] = c;
    }
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

int rail_accept_pool_step(struct rail_accept_pool *p, int lfd, uint64_t nonce, const char *where,
                          uint64_t now_ns, int *fd, struct rail_oob_rx *rx, char *err,
                          size_t errlen)
{
    int rc = take_new(p, lfd, where, now_ns, err, errlen);
    if (rc < 0)
        return rc;
    for (int i = 0; i < p->n;) {
        struct rail_accept_cand *c = p->cand[i];
        char why[256] = "";
        rc = read_cand(p, c, nonce, why, sizeof(why));
        if (rc == 1) {
            *fd = c->fd;
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
        if (rc < 0)
            drop(p, i, where, why); /* the last candidate moved to i: read it next */
        else
            i++;
    }
    return 0;
}
