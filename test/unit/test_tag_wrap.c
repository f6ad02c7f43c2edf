/* SPDX-License-Identifier: Apache-2.0 */
/* Per-tag message counters across their wrap (net_tagmap.h rail_tag_before): both ends count the
 * messages of a tag in a uint32_t, so the 2^32-th message of one tag takes index 0 again (at
 * 190,000 messages a second: after ~6 hours). Ordering by plain `<` there put a message whose
 * receive was already posted on the unexpected list (it then never completed) and left a
 * clear-to-send entry the sender had already answered eagerly unresolved. Through the ABI on the
 * shm verbs provider, both ends in this process: after one message of the tag, both counters are
 * set to 2^32 - 48 (the same on both ends, as after that many messages), then 96 messages cross
 * the wrap, on one rail and on two (striped), in random orders (receive posted first or the
 * send first, bursts of up to 4 in flight), with receive buffers that ask for a clear-to-send or
 * hold it back and messages that go eager or by rendezvous: each must arrive byte-exact with its
 * size within 20 s. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "protocol/net_comm.h"
#include "shm_plugin.h"

#define MAXMSG (512u * 1024u)
#define BURST  4
#define TAG    7

static unsigned rng = 12345u;
static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level != NCCL_LOG_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

struct pair {
    const ncclNet_v11_t *n;
    void *sc, *rc, *smh, *rmh;
    uint8_t *sbuf, *rbuf;
};

/* The receive of message i into its buffer (capacity cap[i]), its request in req[i]: 0, or -1
 * (an error or no request). */
static int post_recv(struct pair *p, int i, size_t *cap, void **req)
{
    void *rb = p->rbuf + (size_t)i * MAXMSG;
    int tag = TAG;
    return p->n->irecv(p->rc, 1, &rb, &cap[i], &tag, &p->rmh, NULL, &req[i]) == ncclSuccess &&
                   req[i]
               ? 0
               : -1;
}

/* k messages, each of combination `combo` (0..23: size, receive buffer, order; -1: random ones):
 * recv_first[i] 1 = its receive posted before its send. 0, or where it failed. */
static int burst(struct pair *p, int k, unsigned seed, int combo)
{
    static const size_t msg_sizes[] = {0, 8, 100, 4096, 65536, 300000};
    const ncclNet_v11_t *n = p->n;
    void *rreq[BURST] = {NULL}, *sreq[BURST] = {NULL};
    int done_r[BURST] = {0}, done_s[BURST] = {0}, size[BURST], tag = TAG, recv_first[BURST];
    size_t sz[BURST], cap[BURST];
    double t0 = now_s();
    for (int i = 0; i < k; i++) {
        unsigned c = combo >= 0 ? (unsigned)combo : rnd(24); /* size x buffer x order */
        sz[i] = msg_sizes[c % 6];
        cap[i] = c / 6 % 2 ? MAXMSG : (sz[i] < 128 ? 128 : sz[i]); /* a CTS posted or held back */
        recv_first[i] = (int)(c / 12);
        size[i] = -1;
        for (size_t j = 0; j < sz[i]; j++)
            p->sbuf[(size_t)i * MAXMSG + j] = (uint8_t)(j * 29u + seed + (unsigned)i);
        memset(p->rbuf + (size_t)i * MAXMSG, 0xA5, cap[i]);
    }
    /* Receives are posted in message order (matching is per tag, in order): those asked first,
     * up to the first that waits for its send; then the sends, each followed by the receives
     * that waited. */
    int posted = 0;
    while (posted < k && recv_first[posted])
        if (post_recv(p, posted++, cap, rreq) != 0)
            return -1;
    for (int i = 0; i < k; i++) {
        while (!sreq[i] && now_s() - t0 < 20) {
            if (n->isend(p->sc, p->sbuf + (size_t)i * MAXMSG, sz[i], tag, p->smh, NULL, &sreq[i]) !=
                ncclSuccess)
                return -2;
            for (int j = 0; !sreq[i] && j < posted; j++) /* progress: credits, clear-to-send */
                if (!done_r[j] && n->test(rreq[j], &done_r[j], &size[j]) != ncclSuccess)
                    return -3;
            if (!sreq[i] && posted < k && /* a send waiting for its clear-to-send */
                post_recv(p, posted++, cap, rreq) != 0)
                return -1;
        }
        if (!sreq[i])
            return -2;
    }
    while (posted < k)
        if (post_recv(p, posted++, cap, rreq) != 0)
            return -1;
    int rc = shm_plugin_test_all(n, k, sreq, rreq, done_s, done_r, size, t0, 20);
    if (rc != 0)
        return rc;
    for (int i = 0; i < k; i++) {
        if (!done_r[i] || !done_s[i]) {
            fprintf(stderr,
                    "message %d of %d (%zu bytes into %zu): send done %d, receive done %d\n", i, k,
                    sz[i], cap[i], done_s[i], done_r[i]);
            return -5;
        }
        if (size[i] != (int)sz[i] ||
            memcmp(p->rbuf + (size_t)i * MAXMSG, p->sbuf + (size_t)i * MAXMSG, sz[i]) != 0)
            return -6;
    }
    return 0;
}

/* The counter of TAG on each end, after one message: set both to `to`. */
static int set_counters(struct pair *p, uint32_t to)
{
    struct rail_send_comm *s = p->sc;
    struct rail_recv_comm *r = p->rc;
    if (s->base.magic != RAIL_SEND_MAGIC || r->base.magic != RAIL_RECV_MAGIC || !s->sent.last ||
        s->sent.last->tag != TAG || !r->posted.last || r->posted.last->tag != TAG ||
        s->sent.last->count != r->posted.last->count)
        return -1;
    s->sent.last->count = to;
    r->posted.last->count = to;
    return 0;
}

/* One connection: a first message, both counters set to `base`, then three messages of `combo`
 * (-1: none) and random bursts of `nrandom` messages in all, all from index base on. A connection
 * each: a clear-to-send entry answered eagerly can still be on its way when a burst ends, and it
 * names its message's index, so the counters are never set back on a connection. */
static void run_one(const struct shm_plugin *pl, int sdev, int rdev, const char *sname,
                    uint32_t base, int combo, int nrandom)
{
    struct pair p = {pl->n, NULL, NULL, NULL, NULL, NULL, NULL};
    void *lc = NULL;
    p.sbuf = aligned_alloc(4096, BURST * MAXMSG);
    p.rbuf = aligned_alloc(4096, BURST * MAXMSG);
    int ok = shm_plugin_connect(pl, sdev, rdev, &lc, &p.sc, &p.rc) == 0 &&
             p.n->regMr(p.sc, p.sbuf, BURST * MAXMSG, NCCL_PTR_HOST, &p.smh) == ncclSuccess &&
             p.n->regMr(p.rc, p.rbuf, BURST * MAXMSG, NCCL_PTR_HOST, &p.rmh) == ncclSuccess;
    CHECK_MSG(ok, "%s: connect and register", sname);
    int rc = ok ? burst(&p, 1, 1, 0) : -1;
    CHECK_MSG(rc == 0, "%s: first message: %d", sname, rc);
    if (rc == 0) {
        CHECK_MSG(set_counters(&p, base) == 0, "%s: counters", sname);
        if (combo >= 0) {
            rc = burst(&p, 3, (unsigned)combo, combo);
            CHECK_MSG(rc == 0,
                      "%s: combination %d (size #%d, %s buffer, %s first) across the wrap: %d",
                      sname, combo, combo % 6, combo / 6 % 2 ? "large" : "exact",
                      combo / 12 ? "receive" : "send", rc);
        }
        for (int m = 0, b = 0; rc == 0 && m < nrandom; b++) {
            int k = 1 + (int)rnd(BURST);
            rc = burst(&p, k, (unsigned)b, -1);
            CHECK_MSG(rc == 0, "%s: random messages %d..%d from index %u: %d", sname, m, m + k - 1,
                      (unsigned)base, rc);
            m += k;
        }
        CHECK_MSG(rc != 0 || ((struct rail_send_comm *)p.sc)->sent.last->count < 128u,
                  "%s: the counter wrapped", sname);
    }
    if (p.rmh)
        p.n->deregMr(p.rc, p.rmh);
    if (p.smh)
        p.n->deregMr(p.sc, p.smh);
    if (p.sc)
        CHECK(p.n->closeSend(p.sc) == ncclSuccess);
    if (p.rc)
        CHECK(p.n->closeRecv(p.rc) == ncclSuccess);
    if (lc)
        CHECK(p.n->closeListen(lc) == ncclSuccess);
    free(p.sbuf);
    free(p.rbuf);
}

/* Each combination from index 2^32 - 2 (three messages: 2^32 - 2, 2^32 - 1, 0, then 8 random
 * ones), and 96 random messages from 2^32 - 48. */
static void run(const struct shm_plugin *pl, const char *sname, const char *rname)
{
    int sdev = shm_plugin_dev(pl, sname), rdev = shm_plugin_dev(pl, rname);
    CHECK_MSG(sdev >= 0 && rdev >= 0, "devices %s, %s", sname, rname);
    if (sdev < 0 || rdev < 0)
        return;
    for (int c = 0; c < 24; c++)
        run_one(pl, sdev, rdev, sname, UINT32_MAX - 1u, c, 8);
    run_one(pl, sdev, rdev, sname, UINT32_MAX - 47u, -1, 96);
}

/* One process per layout (the shm fabric has four ports): its exit status, 0 when it passed. */
static int in_child(const char *rails, const char *sname, const char *rname)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct shm_plugin pl;
        setenv("NCCL_IB_ADAPTIVE_ROUTING", "0", 1);
        shm_plugin_open(&pl, "tag-wrap", rails, logger);
        if (pl.n)
            run(&pl, sname, rname);
        unlink(pl.shm);
        int failed = check_report(sname) != 0;
        fflush(NULL);
        _exit(failed);
    }
    int st = -1;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(void)
{
    CHECK_MSG(in_child("shm0,shm1,shm2,shm3", "shm0", "shm1") == 0, "one rail");
    CHECK_MSG(in_child("shm0+shm2,shm1+shm3", "shm0+shm2", "shm1+shm3") == 0, "two rails");
    return check_report("test_tag_wrap");
}
