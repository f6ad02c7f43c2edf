/* SPDX-License-Identifier: Apache-2.0 */
/* When a striped (two-phase) send is done (net_send.c req_done): once every data piece has
 * completed at the sender and its size record is posted, not when the record's completion comes
 * back; the plugin keeps the request until then (held). Through the ABI on the shm verbs
 * provider, both ends in this process over two rails (send comm on shm0+shm2, receive comm on
 * shm1+shm3):
 *   - stream: 300 messages of mixed sizes (striped, one-piece, eager), one at a time and in
 *     bursts of 8 in flight, each received byte-exact with its size;
 *   - cable after done: a striped send tested until done while its receive is not tested at all,
 *     then rail 1's cable pulled before the receive is tested: every message still arrives
 *     exactly once, byte-exact (a record still out is re-posted on rail 0), also the messages
 *     after it on the one rail left;
 *   - close after done: closeSend right after a striped send is done, the receive never tested
 *     before: the close drains the record (on the shm provider data moves only in the sender's
 *     own calls: without the drain the receive never completes);
 *   - in a fault-injection build, the record held (NCCL_RAIL_FAULT=stall on shm2's writes with
 *     immediate: posted, never executed until its QP fails): the send must report done while
 *     its receive cannot have completed (fails on the old rule, done at the record's
 *     completion); then shm2's cable pulled: the record is flushed, re-posted on rail 0, and the
 *     message arrives byte-exact. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "shm_plugin.h"
#include "transport/shm_fabric.h"
#include "warn_capture.h"

#define MAXMSG (512u * 1024u)
#define BURST  8

struct pair {
    const ncclNet_v11_t *n;
    void *lc, *sc, *rc, *smh, *rmh;
    uint8_t *sbuf, *rbuf; /* BURST * MAXMSG each */
};

static void fill(uint8_t *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        p[i] = (uint8_t)(i * 13u + seed * 7u + (i >> 9));
}

static int open_pair(struct shm_plugin *pl, int sdev, int rdev, struct pair *p)
{
    p->n = pl->n;
    p->smh = p->rmh = NULL;
    if (shm_plugin_connect(pl, sdev, rdev, &p->lc, &p->sc, &p->rc) != 0)
        return -1;
    if (p->n->regMr(p->sc, p->sbuf, BURST * MAXMSG, NCCL_PTR_HOST, &p->smh) != ncclSuccess ||
        p->n->regMr(p->rc, p->rbuf, BURST * MAXMSG, NCCL_PTR_HOST, &p->rmh) != ncclSuccess)
        return -1;
    return 0;
}

static void close_pair(struct pair *p, int send_closed)
{
    if (p->rmh)
        p->n->deregMr(p->rc, p->rmh);
    if (p->smh && !send_closed)
        p->n->deregMr(p->sc, p->smh);
    if (!send_closed)
        CHECK(p->n->closeSend(p->sc) == ncclSuccess);
    CHECK(p->n->closeRecv(p->rc) == ncclSuccess);
    CHECK(p->n->closeListen(p->lc) == ncclSuccess);
}

/* k messages of sizes sz[0..k) in flight at once (buffer i at i * MAXMSG), seeds seed + i: all
 * irecvs, all isends, then the sends tested until done, then the receives. 0, or where it
 * failed. */
static int burst(struct pair *p, const size_t *sz, int k, unsigned seed)
{
    const ncclNet_v11_t *n = p->n;
    void *rreq[BURST] = {NULL}, *sreq[BURST] = {NULL};
    int done_r[BURST] = {0}, done_s[BURST] = {0}, size[BURST], tag = 3;
    double t0 = now_s();
    for (int i = 0; i < k; i++) {
        size[i] = -1;
        fill(p->sbuf + (size_t)i * MAXMSG, sz[i], seed + (unsigned)i);
        memset(p->rbuf + (size_t)i * MAXMSG, 0xA5, sz[i]);
        void *rb = p->rbuf + (size_t)i * MAXMSG;
        size_t rsize = MAXMSG;
        if (n->irecv(p->rc, 1, &rb, &rsize, &tag, &p->rmh, NULL, &rreq[i]) != ncclSuccess ||
            !rreq[i])
            return -1;
    }
    for (int i = 0; i < k; i++) {
        while (!sreq[i] && now_s() - t0 < 30) {
            if (n->isend(p->sc, p->sbuf + (size_t)i * MAXMSG, sz[i], tag, p->smh, NULL, &sreq[i]) !=
                ncclSuccess)
                return -2;
            for (int j = 0; !sreq[i] && j < k; j++) /* progress for the eager credits */
                if (!done_r[j] && n->test(rreq[j], &done_r[j], &size[j]) != ncclSuccess)
                    return -3;
        }
        if (!sreq[i])
            return -2;
    }
    int rc = shm_plugin_test_all(n, k, sreq, rreq, done_s, done_r, size, t0, 30);
    if (rc != 0)
        return rc;
    for (int i = 0; i < k; i++) {
        if (!done_r[i] || !done_s[i]) {
            fprintf(stderr, "burst: message %d of %d (%zu bytes): send done %d, receive done %d\n",
                    i, k, sz[i], done_s[i], done_r[i]);
            return -5;
        }
        if (size[i] != (int)sz[i])
            return -6;
        if (memcmp(p->rbuf + (size_t)i * MAXMSG, p->sbuf + (size_t)i * MAXMSG, sz[i]) != 0)
            return -7;
    }
    return 0;
}

/* One striped message whose send is tested until done before its receive is tested at all.
 * *rreq / *sdone: the receive (left to the caller) and whether the send reported done within
 * `polls` tests. 0, or where it failed. */
static int send_first(struct pair *p, unsigned seed, int polls, void **rreq, int *sdone)
{
    const ncclNet_v11_t *n = p->n;
    void *sreq = NULL, *rb = p->rbuf;
    size_t rsize = MAXMSG;
    int tag = 3;
    double t0 = now_s();
    fill(p->sbuf, MAXMSG, seed);
    memset(p->rbuf, 0xA5, MAXMSG);
    *rreq = NULL;
    *sdone = 0;
    if (n->irecv(p->rc, 1, &rb, &rsize, &tag, &p->rmh, NULL, rreq) != ncclSuccess || !*rreq)
        return -1;
    while (!sreq && now_s() - t0 < 30)
        if (n->isend(p->sc, p->sbuf, MAXMSG, tag, p->smh, NULL, &sreq) != ncclSuccess)
            return -2;
    if (!sreq)
        return -2;
    for (int i = 0; i < polls && !*sdone; i++)
        if (n->test(sreq, sdone, NULL) != ncclSuccess)
            return -4;
    return 0;
}

/* The receive of send_first's message, tested until done: 0 when byte-exact with its size. */
static int recv_rest(struct pair *p, void *rreq)
{
    int done = 0, size = -1;
    double t0 = now_s();
    while (!done && now_s() - t0 < 30)
        if (p->n->test(rreq, &done, &size) != ncclSuccess)
            return -3;
    if (!done)
        return -5;
    if (size != (int)MAXMSG)
        return -6;
    return memcmp(p->rbuf, p->sbuf, MAXMSG) == 0 ? 0 : -7;
}

static const size_t g_sizes[] = {MAXMSG, 256u << 10, (128u << 10) + 4096, 128u << 10, 300000,
                                 8,      4096,       64u << 10,           1,          MAXMSG - 1};
#define NSIZES (sizeof(g_sizes) / sizeof(g_sizes[0]))

static void stream(struct pair *p, unsigned seed)
{
    for (int m = 0; m < 200; m++) {
        size_t sz = g_sizes[m % NSIZES];
        CHECK_EQ_INT(burst(p, &sz, 1, seed + (unsigned)m), 0);
    }
    for (int b = 0; b < 12; b++) {
        size_t sz[BURST];
        for (int i = 0; i < BURST; i++)
            sz[i] = g_sizes[(b * 3 + i) % NSIZES];
        CHECK_EQ_INT(burst(p, sz, BURST, seed + 1000u + (unsigned)b * BURST), 0);
    }
}

int main(void)
{
    struct shm_plugin pl;
    setenv("NCCL_IB_ADAPTIVE_ROUTING", "0", 1);
    setenv("NCCL_IB_TIMEOUT", "14", 1); /* a lost packet fails its rail in ~0.5 s, not 34 */
#ifdef RAIL_FAULT_INJECTION
    setenv("NCCL_RAIL_FAULT", "stall:dev=shm2,op=write_imm,count=1", 1);
#endif
    shm_plugin_open(&pl, "send-done", "shm0+shm2,shm1+shm3", capture);
    int sdev = shm_plugin_dev(&pl, "shm0+shm2"), rdev = shm_plugin_dev(&pl, "shm1+shm3");
    CHECK(sdev >= 0 && rdev >= 0);
    struct rail_shm_fabric *fab = NULL;
    char err[256] = "", fname[64];
    snprintf(fname, sizeof(fname), "send-done-%d", (int)getpid());
    CHECK_MSG(rail_shm_fabric_open(fname, &fab, err, sizeof(err)) == 0, "fabric: %s", err);
    if (!pl.n || sdev < 0 || rdev < 0 || !fab) {
        unlink(pl.shm);
        return check_report("test_send_done");
    }
    struct pair p;
    p.sbuf = aligned_alloc(4096, BURST * MAXMSG);
    p.rbuf = aligned_alloc(4096, BURST * MAXMSG);
    void *rreq;
    int sdone;

#ifdef RAIL_FAULT_INJECTION
    /* The first write with immediate on shm2 is held: striped messages until one's record goes
     * there (the record follows the rail of its last piece to complete: mostly rail 1's). */
    CHECK_EQ_INT(open_pair(&pl, sdev, rdev, &p), 0);
    int found = 0;
    for (int m = 0; m < 64 && !found; m++) {
        CHECK_EQ_INT(send_first(&p, 500u + (unsigned)m, 1000, &rreq, &sdone), 0);
        CHECK_MSG(sdone, "message %d: send not done after 1000 tests", m);
        /* Done at the sender; the receive is done too unless its record is the held one. */
        int done = 0;
        for (int i = 0; i < 2000 && !done; i++)
            if (pl.n->test(rreq, &done, NULL) != ncclSuccess)
                break;
        if (done) {
            CHECK(memcmp(p.rbuf, p.sbuf, MAXMSG) == 0);
            continue;
        }
        found = 1; /* done at the sender while its record never executed */
        rail_shm_set_down(fab, 2, true);
        CHECK_EQ_INT(recv_rest(&p, rreq), 0);
    }
    CHECK_MSG(found, "no striped send reported done while its size record was held: done waits "
                     "for the record's completion");
    for (int m = 0; m < 20; m++) { /* the one rail left */
        size_t sz = g_sizes[m % NSIZES];
        CHECK_EQ_INT(burst(&p, &sz, 1, 700u + (unsigned)m), 0);
    }
    close_pair(&p, 0);
    rail_shm_set_down(fab, 2, false);
#endif

    /* Stream: mixed sizes, one at a time and in bursts. */
    CHECK_EQ_INT(open_pair(&pl, sdev, rdev, &p), 0);
    stream(&p, 1);

    /* Cable after done: rail 1's cable pulled once the send is done, before the receive is
     * tested; then the one rail left. */
    CHECK_EQ_INT(send_first(&p, 900, 1000, &rreq, &sdone), 0);
    CHECK(sdone);
    rail_shm_set_down(fab, 2, true);
    CHECK_EQ_INT(recv_rest(&p, rreq), 0);
    for (int m = 0; m < 30; m++) {
        size_t sz = g_sizes[m % NSIZES];
        CHECK_EQ_INT(burst(&p, &sz, 1, 1000u + (unsigned)m), 0);
    }
    close_pair(&p, 0);
    rail_shm_set_down(fab, 2, false);

    /* Close after done: the receive tested only after closeSend. */
    CHECK_EQ_INT(open_pair(&pl, sdev, rdev, &p), 0);
    for (int m = 0; m < 8; m++) {
        size_t sz = MAXMSG;
        CHECK_EQ_INT(burst(&p, &sz, 1, 1200u + (unsigned)m), 0);
    }
    CHECK_EQ_INT(send_first(&p, 1300, 1000, &rreq, &sdone), 0);
    CHECK(sdone);
    CHECK(pl.n->deregMr(p.sc, p.smh) == ncclSuccess);
    CHECK(pl.n->closeSend(p.sc) == ncclSuccess);
    CHECK_EQ_INT(recv_rest(&p, rreq), 0);
    close_pair(&p, 1);

    CHECK(pl.n->finalize(pl.ctx) == ncclSuccess);
    rail_shm_fabric_close(fab);
    free(p.sbuf);
    free(p.rbuf);
    unlink(pl.shm);
    return check_report("test_send_done");
}
