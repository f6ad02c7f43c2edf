/* SPDX-License-Identifier: Apache-2.0 */
/* Data scenarios: every transfer is checked byte for byte, and the bytes after the received
 * size must stay untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_scenarios.h"

static const size_t k_sizes[] = {0, 1, 127, 4096, 65536 + 13, 1 << 20, 8 << 20};
#define NSIZES (sizeof(k_sizes) / sizeof(k_sizes[0]))
#define GUARD  4096

enum { RECV_FIRST = 0, SEND_FIRST = 1 };

/* The bytes [size, cap) of b must still be 0xEE. */
static int check_guard(const struct it_buf *b, size_t size, size_t cap)
{
    for (size_t i = size; i < cap; i++)
        if (b->p[i] != 0xEE)
            return it_fail("byte %zu after a %zu-byte receive was overwritten", i, size);
    return 0;
}

static int recv_one(struct it_side *s, void *rc, size_t cap, size_t want, int tag, uint64_t seed)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *req;
    int sz[64] = {0}, rc2;
    if (it_buf_alloc(p, rc, &b, cap + GUARD))
        return 1;
    void *data = b.p;
    size_t cap_arr = cap;
    if (it_irecv(p, rc, 1, &data, &cap_arr, &tag, &b.mh, &req))
        return 1;
    rc2 = it_wait(p, req, sz);
    if (rc2)
        return it_fail("receive of %zu bytes: test returned %d", want, rc2);
    if ((size_t)sz[0] != want)
        return it_fail("received size %d, sender sent %zu", sz[0], want);
    long bad = it_check(b.p, want, seed);
    if (bad >= 0)
        return it_fail("%zu-byte message differs at byte %ld", want, bad);
    if (check_guard(&b, want, cap + GUARD))
        return 1;
    it_buf_free(p, rc, &b);
    return 0;
}

static int send_one(struct it_side *s, void *sc, size_t size, int tag, uint64_t seed,
                    int first_try_signal)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *req = NULL;
    int sz[1] = {-1}, rc;
    if (it_buf_alloc(p, sc, &b, size))
        return 1;
    it_fill(b.p, size, seed);
    if (first_try_signal) {
        /* One attempt before the receiver posts: a small message must go out eagerly. */
        if (p->net->isend(sc, b.p, size, tag, b.mh, NULL, &req) != ncclSuccess)
            return it_fail("isend failed");
        if (it_ctl_signal(s->ctl, 'S'))
            return 1;
        /* (Adaptive routing caps eager at NCCL_IB_AR_THRESHOLD.) */
        const char *ar = getenv("NCCL_IB_AR_THRESHOLD");
        size_t eager = ar && getenv("NCCL_IB_ADAPTIVE_ROUTING") ? strtoul(ar, NULL, 10) : 8192;
        if (!req && size <= (eager < 8192 ? eager : 8192) && !getenv("NCCL_RAIL_EAGER_MAX"))
            return it_fail("a %zu-byte isend waited for the receiver (no eager send)", size);
    }
    if (!req && it_isend(p, sc, b.p, size, tag, b.mh, &req))
        return 1;
    rc = it_wait(p, req, sz);
    if (rc)
        return it_fail("send of %zu bytes: test returned %d", size, rc);
    if ((size_t)sz[0] != size)
        return it_fail("send completed with size %d, expected %zu", sz[0], size);
    it_buf_free(p, sc, &b);
    return 0;
}

int it_sizes_recv(struct it_side *s)
{
    void *rc;
    if (it_accept(s->p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (int mode = RECV_FIRST; mode <= SEND_FIRST; mode++) {
        for (size_t i = 0; i < NSIZES; i++) {
            if (mode == SEND_FIRST && it_ctl_wait(s->ctl, 'S'))
                return 1;
            if (recv_one(s, rc, k_sizes[i], k_sizes[i], 7, k_sizes[i] * 2 + (size_t)mode))
                return it_fail("mode %d size %zu", mode, k_sizes[i]);
            if (it_ctl_signal(s->ctl, 'R'))
                return 1;
        }
    }
    return s->p->net->closeRecv(rc) != ncclSuccess;
}

int it_sizes_send(struct it_side *s)
{
    void *sc;
    if (it_connect(s->p, s->dev, s->ctl, &sc))
        return 1;
    for (int mode = RECV_FIRST; mode <= SEND_FIRST; mode++) {
        for (size_t i = 0; i < NSIZES; i++) {
            if (send_one(s, sc, k_sizes[i], 7, k_sizes[i] * 2 + (size_t)mode, mode == SEND_FIRST))
                return it_fail("mode %d size %zu", mode, k_sizes[i]);
            if (it_ctl_wait(s->ctl, 'R'))
                return 1;
        }
    }
    return s->p->net->closeSend(sc) != ncclSuccess;
}

/* ---- grouped receive of 8 tags, sends in shuffled order ---- */

static const size_t k_msz[8] = {0, 1, 100, 4096, 8192, 8193, 65536, 300000};
static const int k_order[8] = {7, 3, 0, 5, 1, 6, 2, 4};
#define MULTI_ROUNDS 4

int it_multi_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    void *rc;
    if (it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (int round = 0; round < MULTI_ROUNDS; round++) {
        struct it_buf b[8];
        void *data[8], *mh[8], *req;
        size_t cap[8];
        int tags[8], sz[64] = {0};
        for (int t = 0; t < 8; t++) {
            cap[t] = k_msz[t] + (t % 2 ? 1000 : 0); /* some buffers larger than the message */
            if (it_buf_alloc(p, rc, &b[t], cap[t] + GUARD))
                return 1;
            data[t] = b[t].p;
            mh[t] = b[t].mh;
            tags[t] = 100 + t;
        }
        if (round % 2 == SEND_FIRST && it_ctl_wait(s->ctl, 'S'))
            return 1;
        if (it_irecv(p, rc, 8, data, cap, tags, mh, &req))
            return 1;
        int r = it_wait(p, req, sz);
        if (r)
            return it_fail("round %d: grouped receive returned %d", round, r);
        for (int t = 0; t < 8; t++) {
            if ((size_t)sz[t] != k_msz[t])
                return it_fail("round %d tag %d: size %d, expected %zu", round, tags[t], sz[t],
                               k_msz[t]);
            long bad = it_check(b[t].p, k_msz[t], (uint64_t)(round * 100 + t));
            if (bad >= 0)
                return it_fail("round %d tag %d: byte %ld differs", round, tags[t], bad);
            if (check_guard(&b[t], k_msz[t], cap[t] + GUARD))
                return 1;
            it_buf_free(p, rc, &b[t]);
        }
        if (it_ctl_signal(s->ctl, 'R'))
            return 1;
    }
    return p->net->closeRecv(rc) != ncclSuccess;
}

int it_multi_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    void *sc;
    if (it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    for (int round = 0; round < MULTI_ROUNDS; round++) {
        struct it_buf b[8];
        void *req[8] = {0};
        for (int t = 0; t < 8; t++) {
            if (it_buf_alloc(p, sc, &b[t], k_msz[t]))
                return 1;
            it_fill(b[t].p, k_msz[t], (uint64_t)(round * 100 + t));
        }
        int pending = 8, signalled = round % 2 != SEND_FIRST;
        double end = it_now() + IT_DEADLINE_S;
        while (pending) {
            for (int k = 0; k < 8; k++) {
                int t = k_order[k];
                if (req[t])
                    continue;
                if (p->net->isend(sc, b[t].p, k_msz[t], 100 + t, b[t].mh, NULL, &req[t]) !=
                    ncclSuccess)
                    return it_fail("round %d tag %d: isend failed", round, 100 + t);
                if (req[t])
                    pending--;
            }
            if (!signalled) {
                signalled = 1;
                if (it_ctl_signal(s->ctl, 'S'))
                    return 1;
            }
            if (it_now() > end)
                return it_fail("round %d: %d sends never found their receive", round, pending);
        }
        for (int t = 0; t < 8; t++) {
            int sz[1];
            if (it_wait(p, req[t], sz) || (size_t)sz[0] != k_msz[t])
                return it_fail("round %d tag %d: send did not complete correctly", round, 100 + t);
            it_buf_free(p, sc, &b[t]);
        }
        if (it_ctl_wait(s->ctl, 'R'))
            return 1;
    }
    return p->net->closeSend(sc) != ncclSuccess;
}

/* ---- 32 requests in flight in both directions ---- */

#define NFLIGHT 32
static size_t flight_size(int i)
{
    return i % 4 == 0 ? (size_t)(100 + i) : (size_t)(4096 * (i % 7 + 1) + i);
}

/* Posts 32 receives on rc and 32 sends on sc, then drives everything to completion. */
static int flight(struct it_side *s, void *sc, void *rc, int dir, int round)
{
    struct it_plugin *p = s->p;
    struct it_buf sb[NFLIGHT], rb[NFLIGHT];
    void *sreq[NFLIGHT] = {0}, *rreq[NFLIGHT] = {0};
    int sdone[NFLIGHT] = {0}, rdone[NFLIGHT] = {0}, left = 2 * NFLIGHT;
    for (int i = 0; i < NFLIGHT; i++) {
        size_t sz = flight_size(i);
        if (it_buf_alloc(p, rc, &rb[i], sz + 64) || it_buf_alloc(p, sc, &sb[i], sz))
            return 1;
        it_fill(sb[i].p, sz, (uint64_t)(dir * 1000 + round * 100 + i));
        void *data = rb[i].p;
        size_t cap = sz + 64;
        int tag = i % 3;
        if (it_irecv(p, rc, 1, &data, &cap, &tag, &rb[i].mh, &rreq[i]))
            return it_fail("posting receive %d of %d", i, NFLIGHT);
    }
    double end = it_now() + IT_DEADLINE_S;
    int nsent = 0;
    while (left) {
        if (nsent < NFLIGHT) {
            int i = nsent;
            if (p->net->isend(sc, sb[i].p, flight_size(i), i % 3, sb[i].mh, NULL, &sreq[i]) !=
                ncclSuccess)
                return it_fail("isend %d failed", i);
            if (sreq[i])
                nsent++;
        }
        for (int i = 0; i < NFLIGHT; i++) {
            int done = 0, sz[64] = {0};
            if (i < nsent && !sdone[i]) {
                if (p->net->test(sreq[i], &done, sz) != ncclSuccess)
                    return it_fail("test of send %d failed", i);
                if (done) {
                    sdone[i] = 1;
                    left--;
                }
            }
            if (!rdone[i]) {
                done = 0;
                if (p->net->test(rreq[i], &done, sz) != ncclSuccess)
                    return it_fail("test of receive %d failed", i);
                if (done) {
                    rdone[i] = 1;
                    left--;
                    long bad = it_check(rb[i].p, flight_size(i),
                                        (uint64_t)((1 - dir) * 1000 + round * 100 + i));
                    if ((size_t)sz[0] != flight_size(i) || bad >= 0)
                        return it_fail("receive %d: size %d (want %zu), first bad byte %ld", i,
                                       sz[0], flight_size(i), bad);
                }
            }
        }
        if (it_now() > end)
            return it_fail("%d of %d operations still pending after %.0f s", left, 2 * NFLIGHT,
                           IT_DEADLINE_S);
    }
    for (int i = 0; i < NFLIGHT; i++) {
        it_buf_free(p, rc, &rb[i]);
        it_buf_free(p, sc, &sb[i]);
    }
    return 0;
}

/* Side A (recv device) and side B (send device) each own a send and a receive comm. */
static int inflight(struct it_side *s, int dir)
{
    void *sc = NULL, *rc = NULL;
    if (dir == 0) {
        if (it_accept(s->p, s->dev, s->ctl, NULL, &rc) || it_connect(s->p, s->dev, s->ctl, &sc))
            return 1;
    } else {
        if (it_connect(s->p, s->dev, s->ctl, &sc) || it_accept(s->p, s->dev, s->ctl, NULL, &rc))
            return 1;
    }
    for (int round = 0; round < 3; round++)
        if (flight(s, sc, rc, dir, round))
            return it_fail("round %d", round);
    if (it_ctl_signal(s->ctl, 'E') || it_ctl_wait(s->ctl, 'E'))
        return 1;
    return (s->p->net->closeSend(sc) != ncclSuccess) | (s->p->net->closeRecv(rc) != ncclSuccess);
}

int it_inflight_a(struct it_side *s)
{
    return inflight(s, 0);
}

int it_inflight_b(struct it_side *s)
{
    return inflight(s, 1);
}

/* ---- receive buffers larger than the message ---- */

static const size_t k_small[] = {1000, 20000, 0, 8192, 65535};

int it_larger_recv(struct it_side *s)
{
    void *rc;
    if (it_accept(s->p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (size_t i = 0; i < sizeof(k_small) / sizeof(k_small[0]); i++)
        if (recv_one(s, rc, 65536, k_small[i], 3, 500 + i))
            return it_fail("message %zu of %zu bytes into 64 KiB", i, k_small[i]);
    return s->p->net->closeRecv(rc) != ncclSuccess;
}

int it_larger_send(struct it_side *s)
{
    void *sc;
    if (it_connect(s->p, s->dev, s->ctl, &sc))
        return 1;
    for (size_t i = 0; i < sizeof(k_small) / sizeof(k_small[0]); i++)
        if (send_one(s, sc, k_small[i], 3, 500 + i, 0))
            return 1;
    return s->p->net->closeSend(sc) != ncclSuccess;
}

/* ---- one listen comm, three connections ---- */

int it_reuse_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    if (p->net->listen(p->ctx, s->dev, handle, &lc) != ncclSuccess)
        return it_fail("listen failed");
    if (it_ctl_send(s->ctl, handle, sizeof(handle)))
        return 1;
    for (int k = 0; k < 3; k++) {
        void *rc = NULL;
        double end = it_now() + IT_DEADLINE_S;
        while (!rc) {
            if (p->net->accept(lc, &rc, NULL) != ncclSuccess)
                return it_fail("accept %d failed", k);
            if (!rc && it_now() > end)
                return it_fail("accept %d timed out", k);
        }
        if (recv_one(s, rc, 5000 + 4096 * k, 5000 + 4096 * k, 9, 900 + k))
            return it_fail("connection %d", k);
        if (p->net->closeRecv(rc) != ncclSuccess)
            return it_fail("closeRecv %d", k);
    }
    return p->net->closeListen(lc) != ncclSuccess;
}

int it_reuse_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    if (it_ctl_recv(s->ctl, handle, sizeof(handle)))
        return 1;
    for (int k = 0; k < 3; k++) {
        void *sc = NULL;
        int r = it_connect_handle(p, s->dev, handle, &sc, IT_DEADLINE_S);
        if (r)
            return it_fail("connect %d returned %d", k, r);
        if (send_one(s, sc, 5000 + 4096 * k, 9, 900 + k, 0))
            return it_fail("connection %d", k);
        if (p->net->closeSend(sc) != ncclSuccess)
            return it_fail("closeSend %d", k);
    }
    return 0;
}

/* ---- receive buffers smaller than the message: an error, never an overflow ---- */

static const size_t k_too_big[] = {5000, 100000}; /* eager, rendezvous */

int it_smaller_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    void *rc;
    if (it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    for (int i = 0; i < 2; i++) {
        struct it_buf b;
        void *req, *data;
        size_t cap = 1000;
        int tag = 2, sz[64];
        if (it_buf_alloc(p, rc, &b, cap + GUARD))
            return 1;
        data = b.p;
        if (it_irecv(p, rc, 1, &data, &cap, &tag, &b.mh, &req))
            return 1;
        int r = it_wait(p, req, sz);
        if (r <= 0)
            return it_fail("%zu bytes into a 1000-byte buffer: test returned %d", k_too_big[i], r);
        if (check_guard(&b, 0, cap + GUARD))
            return 1;
        it_buf_free(p, rc, &b);
        if (it_ctl_signal(s->ctl, 'R'))
            return 1;
    }
    /* The connection still works afterwards. */
    if (recv_one(s, rc, 3000, 3000, 2, 33))
        return 1;
    return p->net->closeRecv(rc) != ncclSuccess;
}

int it_smaller_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    void *sc;
    if (it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    for (int i = 0; i < 2; i++) {
        struct it_buf b;
        void *req;
        int sz[1];
        if (it_buf_alloc(p, sc, &b, k_too_big[i]) ||
            it_isend(p, sc, b.p, k_too_big[i], 2, b.mh, &req))
            return 1;
        int r = it_wait(p, req, sz);
        /* An eager send cannot know; a rendezvous send reports the mismatch too. */
        if (i == 1 && r <= 0)
            return it_fail("rendezvous send into a smaller buffer: test returned %d", r);
        if (it_ctl_wait(s->ctl, 'R'))
            return 1;
        it_buf_free(p, sc, &b);
    }
    if (send_one(s, sc, 3000, 2, 33, 0))
        return 1;
    return p->net->closeSend(sc) != ncclSuccess;
}
