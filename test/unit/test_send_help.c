/* SPDX-License-Identifier: Apache-2.0 */
/* The help list (net_data.c) through the ABI on the shm verbs provider, both ends in this
 * process over two rails (send comm on shm0+shm2, receive comm on shm1+shm3): a striped message
 * goes two-phase, and its size record leaves only once the sender's completions are polled. A
 * caller that waits on the receive alone, never testing the send, must still see it complete:
 * the receive comm's progress polls the listed send comm (help_pass), also when its owner was
 * active just before (a pass skips a comm whose owner entered it since the pass before, so a
 * later one must poll it). Then the usual alternation; and the comms closed and opened again
 * (a closed comm leaves the list: under ASan a pass that touched it would be a use after
 * free); two send comms helped at once. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "shm_plugin.h"
#include "warn_capture.h"

#define MSG (512u * 1024u)

/* One MSG-byte message sc -> rc. recv_only: the receive is tested until done (at most `polls`
 * calls) before the send is tested at all; else both alternately. 0, or where it failed. */
static int one_message(const ncclNet_v11_t *n, void *sc, void *rc, uint8_t *sbuf, void *smh,
                       uint8_t *rbuf, void *rmh, int seed, int recv_only, int polls)
{
    void *rreq = NULL, *sreq = NULL;
    size_t rsize = MSG;
    int tag = 7, done_r = 0, done_s = 0;
    double t0 = now_s();
    for (unsigned i = 0; i < MSG; i++)
        sbuf[i] = (uint8_t)(i * 7u + (unsigned)seed);
    memset(rbuf, 0, MSG);
    if (n->irecv(rc, 1, (void **)&rbuf, &rsize, &tag, &rmh, NULL, &rreq) != ncclSuccess || !rreq)
        return -1;
    while (!sreq && now_s() - t0 < 30)
        if (n->isend(sc, sbuf, MSG, tag, smh, NULL, &sreq) != ncclSuccess)
            return -2;
    if (!sreq)
        return -2;
    if (recv_only) {
        for (int i = 0; i < polls && !done_r; i++)
            if (n->test(rreq, &done_r, NULL) != ncclSuccess)
                return -3;
        if (!done_r)
            return -6; /* the send comm was never polled for its record */
    }
    while ((!done_r || !done_s) && now_s() - t0 < 30) {
        if (!done_r && n->test(rreq, &done_r, NULL) != ncclSuccess)
            return -3;
        if (!done_s && n->test(sreq, &done_s, NULL) != ncclSuccess)
            return -4;
    }
    return done_r && done_s && memcmp(rbuf, sbuf, MSG) == 0 ? 0 : -5;
}

int main(void)
{
    struct shm_plugin pl;
    setenv("NCCL_IB_ADAPTIVE_ROUTING", "0", 1);
    shm_plugin_open(&pl, "send-help", "shm0+shm2,shm1+shm3", capture);
    const ncclNet_v11_t *n = pl.n;
    void *ctx = pl.ctx;
    const char *shm = pl.shm;
    int sdev = shm_plugin_dev(&pl, "shm0+shm2"), rdev = shm_plugin_dev(&pl, "shm1+shm3");
    CHECK(sdev >= 0 && rdev >= 0);
    if (!n || sdev < 0 || rdev < 0) {
        unlink(shm);
        return check_report("test_send_help");
    }
    uint8_t *sbuf = aligned_alloc(4096, MSG), *rbuf = aligned_alloc(4096, MSG);
    for (int round = 0; round < 2; round++) { /* the second after closing the first pair */
        void *lc, *sc, *rc, *smh = NULL, *rmh = NULL;
        CHECK_EQ_INT(shm_plugin_connect(&pl, sdev, rdev, &lc, &sc, &rc), 0);
        if (!sc || !rc)
            break;
        CHECK(n->regMr(sc, sbuf, MSG, NCCL_PTR_HOST, &smh) == ncclSuccess);
        CHECK(n->regMr(rc, rbuf, MSG, NCCL_PTR_HOST, &rmh) == ncclSuccess);
        for (int i = 0; i < 8; i++) {
            /* Alternating, the receive alone, alternating again: the owner was active before
             * each receive-only stretch. */
            CHECK_EQ_INT(one_message(n, sc, rc, sbuf, smh, rbuf, rmh, i, 0, 0), 0);
            CHECK_EQ_INT(one_message(n, sc, rc, sbuf, smh, rbuf, rmh, 100 + i, 1, 1000), 0);
        }
        CHECK(n->deregMr(rc, rmh) == ncclSuccess);
        CHECK(n->deregMr(sc, smh) == ncclSuccess);
        CHECK(n->closeSend(sc) == ncclSuccess);
        CHECK(n->closeRecv(rc) == ncclSuccess);
        CHECK(n->closeListen(lc) == ncclSuccess);
    }
    /* Two send comms helped at once (the pass walks the list; no look without the lock): two
     * pairs, one striped message each, only the receives tested until both are done. */
    void *lc[2] = {NULL}, *sc[2] = {NULL}, *rc[2] = {NULL}, *smh[2] = {NULL}, *rmh[2] = {NULL};
    void *sreq[2] = {NULL}, *rreq[2] = {NULL};
    uint8_t *rb[2] = {rbuf, aligned_alloc(4096, MSG)};
    int done_r[2] = {0}, done_s[2] = {0}, ok = 1;
    for (int p = 0; p < 2 && ok; p++) {
        ok = shm_plugin_connect(&pl, sdev, rdev, &lc[p], &sc[p], &rc[p]) == 0 &&
             n->regMr(sc[p], sbuf, MSG, NCCL_PTR_HOST, &smh[p]) == ncclSuccess &&
             n->regMr(rc[p], rb[p], MSG, NCCL_PTR_HOST, &rmh[p]) == ncclSuccess;
        size_t rsize = MSG;
        int tag = 9;
        ok = ok &&
             n->irecv(rc[p], 1, (void **)&rb[p], &rsize, &tag, &rmh[p], NULL, &rreq[p]) ==
                 ncclSuccess &&
             rreq[p];
    }
    CHECK(ok);
    for (int p = 0; p < 2 && ok; p++) {
        double t0 = now_s();
        while (!sreq[p] && now_s() - t0 < 30)
            if (n->isend(sc[p], sbuf, MSG, 9, smh[p], NULL, &sreq[p]) != ncclSuccess)
                break;
        ok = sreq[p] != NULL;
    }
    CHECK(ok);
    for (int i = 0; ok && i < 2000 && (!done_r[0] || !done_r[1]); i++)
        for (int p = 0; p < 2; p++)
            if (!done_r[p] && n->test(rreq[p], &done_r[p], NULL) != ncclSuccess)
                ok = 0;
    CHECK_MSG(done_r[0] && done_r[1], "receives done %d %d: a helped send comm was not polled",
              done_r[0], done_r[1]);
    double t0 = now_s();
    while (ok && (!done_s[0] || !done_s[1]) && now_s() - t0 < 30)
        for (int p = 0; p < 2; p++)
            if (!done_s[p] && n->test(sreq[p], &done_s[p], NULL) != ncclSuccess)
                ok = 0;
    CHECK(done_s[0] && done_s[1]);
    CHECK(memcmp(rb[0], sbuf, MSG) == 0 && memcmp(rb[1], sbuf, MSG) == 0);
    for (int p = 0; p < 2; p++) {
        if (rmh[p])
            n->deregMr(rc[p], rmh[p]);
        if (smh[p])
            n->deregMr(sc[p], smh[p]);
        if (sc[p])
            n->closeSend(sc[p]);
        if (rc[p])
            n->closeRecv(rc[p]);
        if (lc[p])
            n->closeListen(lc[p]);
    }
    CHECK(n->finalize(ctx) == ncclSuccess);
    free(sbuf);
    free(rbuf);
    free(rb[1]);
    unlink(shm);
    return check_report("test_send_help");
}
