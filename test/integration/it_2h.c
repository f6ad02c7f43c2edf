/* SPDX-License-Identifier: Apache-2.0 */
/* rail_net_2h PLUGIN [SCENARIO...]: the net plugin between two hosts (two VMs of
 * test/fabric/run-two-hosts.sh, separate kernels). Rank 0 runs in VM A (FABRIC_HOST=0), rank 1
 * in VM B; both get the same scenario list and meet over a TCP control channel on the
 * management network. Each rank has one plugin device, the rail group rxe0+rxe1 (rail0, rail1).
 *   exchange   byte-exact batches both ways; each sender's two rails both carry bytes
 *   cut_rail   rail 0's cable is cut (qemu set_link, from the host) once it has carried 8 MiB of
 *              rank 0's 32 x 4 MiB: every message completes byte-exact over rail 1 and the
 *              plugin logs the failover (an attempt where every send completed before the cut
 *              landed runs again, up to 3)
 *   cut_both   both cables cut mid-transfer: both ranks get an error in bounded time
 *   dead_peer  VM B is killed (SIGKILL to its qemu) mid-transfer in both directions: rank 0's
 *              send and receive comms both report an error in bounded time (must be last)
 * Rank 0 prints "PASS name" / "FAIL name" (both ranks' verdicts) and "N passed, M failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "it_host.h"

#define CTL_PORT      7471
#define MEET_S        300.0 /* VM B boots after A: wait this long for the control channel */
#define CUT_BOUND_S   60.0  /* both rails cut: an error within this */
#define DEAD_BOUND_S  120.0 /* peer host dead: an error within this (defaults, TCG) */
#define CLOSE_MAX_S   5.0
#define CTL_TIMEOUT_S 600
#define MAXN          32
#define BIG           (4u << 20)

struct h2 {
    struct it_plugin *p;
    int dev, rank, ctl;
};

struct batch {
    int n, posted; /* requests [0, posted) were handed to the plugin */
    void *lazy_sc; /* post_sends(lazy): sends still to post, by poll_batch */
    size_t size[MAXN];
    struct it_buf b[MAXN];
    void *req[MAXN];
    int state[MAXN]; /* 0 pending, 1 done, 2 error */
    int got[MAXN];
    int nerr, ndone;
    double first_err; /* it_now() of the first error */
};

static void host_request(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void host_request(const char *fmt, ...)
{
    va_list ap;
    fflush(stderr);
    printf("@@fabric-host: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static int barrier(struct h2 *h)
{
    return it_ctl_signal(h->ctl, 'S') || it_ctl_wait(h->ctl, 'S');
}

/* rank 0 -> rank 1 is *sc at rank 0 and *rc at rank 1; the reverse direction likewise. */
static int connect_pair(struct h2 *h, void **sc, void **rc)
{
    if (h->rank == 0)
        return it_connect(h->p, h->dev, h->ctl, sc) || it_accept(h->p, h->dev, h->ctl, NULL, rc);
    return it_accept(h->p, h->dev, h->ctl, NULL, rc) || it_connect(h->p, h->dev, h->ctl, sc);
}

/* lazy: only fills the buffers; poll_batch posts each send once the plugin takes it (no
 * isend loop that could outlive the peer). */
static int post_sends_how(struct h2 *h, void *sc, struct batch *m, const size_t *sizes, int n,
                          uint64_t seed, int lazy)
{
    memset(m, 0, sizeof(*m));
    m->n = n;
    for (int i = 0; i < n; i++) {
        m->size[i] = sizes[i];
        if (it_buf_alloc(h->p, sc, &m->b[i], sizes[i] ? sizes[i] : 1))
            return 1;
        it_fill(m->b[i].p, sizes[i], seed + (uint64_t)i);
        if (lazy)
            continue;
        if (it_isend(h->p, sc, m->b[i].p, sizes[i], 1, m->b[i].mh, &m->req[i]))
            return 1;
        m->posted++;
    }
    m->lazy_sc = lazy ? sc : NULL;
    return 0;
}

static int post_sends(struct h2 *h, void *sc, struct batch *m, const size_t *sizes, int n,
                      uint64_t seed)
{
    return post_sends_how(h, sc, m, sizes, n, seed, 0);
}

static void failed_at(struct batch *m, int i)
{
    m->state[i] = 2;
    if (!m->nerr++)
        m->first_err = it_now();
}

static void post_more(struct h2 *h, struct batch *m)
{
    while (m->lazy_sc && m->posted < m->n) {
        int i = m->posted;
        m->req[i] = NULL;
        if (h->p->net->isend(m->lazy_sc, m->b[i].p, m->size[i], 1, m->b[i].mh, NULL, &m->req[i]) !=
            ncclSuccess)
            failed_at(m, i);
        else if (!m->req[i])
            return; /* no clear-to-send yet */
        m->posted++;
    }
}

static int post_recvs(struct h2 *h, void *rc, struct batch *m, const size_t *sizes, int n)
{
    memset(m, 0, sizeof(*m));
    m->n = n;
    for (int i = 0; i < n; i++) {
        size_t cap = sizes[i];
        int tag = 1;
        void *data;
        if (it_buf_alloc(h->p, rc, &m->b[i], sizes[i] ? sizes[i] : 1))
            return 1;
        data = m->b[i].p;
        if (it_irecv(h->p, rc, 1, &data, &cap, &tag, &m->b[i].mh, &m->req[i]))
            return 1;
        m->posted++;
    }
    return 0;
}

/* Tests every pending request once; returns how many are still pending. */
static int poll_batch(struct h2 *h, struct batch *m)
{
    post_more(h, m);
    int pending = m->n - m->posted;
    for (int i = 0; i < m->posted; i++) {
        int done = 0, sz[8] = {0};
        if (m->state[i])
            continue;
        ncclResult_t r = h->p->net->test(m->req[i], &done, sz);
        if (r != ncclSuccess) {
            failed_at(m, i);
        } else if (done) {
            m->state[i] = 1;
            m->got[i] = sz[0];
            m->ndone++;
        } else {
            pending++;
        }
    }
    return pending;
}

/* Polls until nothing is pending or timeout_s passes: 0, or -1 on timeout. */
static int drain(struct h2 *h, struct batch *m, double timeout_s)
{
    double end = it_now() + timeout_s;
    while (poll_batch(h, m))
        if (it_now() > end)
            return -1;
    return 0;
}

static int check_recvs(struct batch *m, const size_t *sizes, uint64_t seed, const char *what)
{
    for (int i = 0; i < m->n; i++) {
        if (m->state[i] != 1)
            return it_fail("%s: receive %d %s", what, i, m->state[i] ? "failed" : "pending");
        if ((size_t)m->got[i] != sizes[i])
            return it_fail("%s: receive %d got %d bytes, expected %zu", what, i, m->got[i],
                           sizes[i]);
        long bad = it_check(m->b[i].p, sizes[i], seed + (uint64_t)i);
        if (bad >= 0)
            return it_fail("%s: receive %d (%zu bytes) wrong at byte %ld", what, i, sizes[i], bad);
    }
    return 0;
}

static void free_batch(struct h2 *h, struct batch *m)
{
    for (int i = 0; i < m->n; i++)
        it_buf_free(h->p, NULL, &m->b[i]);
    m->n = 0;
}

static int close_both(struct h2 *h, void *sc, void *rc)
{
    double t0 = it_now();
    int bad = 0;
    if (sc && h->p->net->closeSend(sc) != ncclSuccess)
        bad = 1;
    if (rc && h->p->net->closeRecv(rc) != ncclSuccess)
        bad = 1;
    if (bad)
        return it_fail("close failed");
    if (it_now() - t0 > CLOSE_MAX_S)
        return it_fail("closing took %.1f s", it_now() - t0);
    return 0;
}

static int links_back(struct h2 *h, const char *which)
{
    int rc = 0;
    if (h->rank == 0)
        for (const char *r = which; *r; r++)
            host_request("link %c on", *r);
    for (const char *r = which; *r; r++) {
        char ifn[8], dev[8];
        snprintf(ifn, sizeof(ifn), "rail%c", *r);
        snprintf(dev, sizeof(dev), "rxe%c", *r);
        if (it_wait_carrier(ifn, 1, 30.0) || it_wait_port(dev, 30.0))
            rc |= it_fail("%s / %s not back up 30 s after the link was restored", ifn, dev);
    }
    return rc;
}

/* ---- exchange ---- */

static const size_t k_mixed[] = {0, 1, 4095, 65536, 1048589u, 4u << 20, 8u << 20, 8u << 20};
#define NMIXED (int)(sizeof(k_mixed) / sizeof(k_mixed[0]))

/* One direction: `sender` sends k_mixed; the sender checks that both rails carried bytes. */
static int one_way(struct h2 *h, void *sc, void *rc, int sender, uint64_t seed)
{
    struct batch m;
    if (h->rank != sender) {
        if (post_recvs(h, rc, &m, k_mixed, NMIXED) || it_ctl_signal(h->ctl, 'P'))
            return 1;
        if (drain(h, &m, 120.0))
            return it_fail("receives pending after 120 s");
        int bad = check_recvs(&m, k_mixed, seed, "exchange");
        free_batch(h, &m);
        return bad;
    }
    unsigned long long a0 = it_tx_bytes("rail0"), b0 = it_tx_bytes("rail1"), total = 0;
    for (int i = 0; i < NMIXED; i++)
        total += k_mixed[i];
    if (it_ctl_wait(h->ctl, 'P') || post_sends(h, sc, &m, k_mixed, NMIXED, seed))
        return 1;
    if (drain(h, &m, 120.0) || m.nerr)
        return it_fail("sends: %d errors, %d pending", m.nerr, m.n - m.ndone - m.nerr);
    unsigned long long da = it_tx_bytes("rail0") - a0, db = it_tx_bytes("rail1") - b0;
    fprintf(stderr, "[rank %d] sent %llu B: rail0 +%llu B, rail1 +%llu B\n", h->rank, total, da,
            db);
    free_batch(h, &m);
    if (da < total / 5 || db < total / 5)
        return it_fail("a rail carried less than 20 %% of %llu B (rail0 %llu, rail1 %llu)", total,
                       da, db);
    return 0;
}

static int sc_exchange(struct h2 *h)
{
    void *sc = NULL, *rc = NULL;
    if (connect_pair(h, &sc, &rc) || one_way(h, sc, rc, 0, 1000) || barrier(h) ||
        one_way(h, sc, rc, 1, 2000))
        return 1;
    return close_both(h, sc, rc);
}

/* ---- cut_rail ---- */

static size_t k_big[MAXN];

#define CUT_ATTEMPTS 3
#define CUT_AFTER    (8u << 20) /* bytes on rail 0 before the cut: 1/8 of its half of the batch */

/* Polls m until rail 0 has carried CUT_AFTER bytes since a0 (its tx counter before the
 * batch), an error, the batch's end or 120 s; 0 when the bytes went. The cut scenarios cut then,
 * not at the first completion: the sender may complete its messages in any order (the first one
 * can be done near the end of the batch), while the bytes on rail 0 show the data moving. */
static int wait_rail0_carried(struct h2 *h, struct batch *m, unsigned long long a0)
{
    double end = it_now() + 120.0;
    while (poll_batch(h, m) && !m->nerr && it_tx_bytes("rail0") - a0 < CUT_AFTER && it_now() < end)
        ;
    return m->nerr || it_tx_bytes("rail0") - a0 < CUT_AFTER;
}

/* One attempt. Rank 0 ends it with 'R' (a verdict) or 'A' (*again: every send had completed
 * before the cut landed, so nothing was in flight and the attempt showed nothing: a stalled vCPU
 * or a slow console on a loaded host can outlast the transfer). Both ranks restore the link and
 * close the comms either way. */
static int cut_rail_once(struct h2 *h, int *again)
{
    void *sc = NULL, *rc = NULL;
    struct batch m;
    const int n = MAXN;
    *again = 0;
    if (connect_pair(h, &sc, &rc))
        return 1;
    if (h->rank == 1) {
        if (post_recvs(h, rc, &m, k_big, n) || it_ctl_signal(h->ctl, 'P'))
            return 1;
        if (drain(h, &m, 300.0))
            return it_fail("receives pending after 300 s");
        int bad = check_recvs(&m, k_big, 3000, "cut_rail");
        if (!bad)
            fprintf(stderr, "[rank 1] %d x %u B received byte-exact across the cut\n", n, BIG);
        free_batch(h, &m);
        uint8_t v = 0;
        bad |= it_ctl_recv(h->ctl, &v, 1);
        if (v != 'R' && v != 'A')
            bad |= it_fail("control channel: got %u, expected R or A", v);
        *again = v == 'A';
        return bad | links_back(h, "0") | close_both(h, sc, rc);
    }
    it_log_count_start();
    unsigned long long a0 = it_tx_bytes("rail0");
    if (it_ctl_wait(h->ctl, 'P') || post_sends(h, sc, &m, k_big, n, 3000))
        return 1;
    if (wait_rail0_carried(h, &m, a0))
        return it_fail("rail0 carried %llu of the %u bytes it waits for before the cut (%d "
                       "errors, %d of %d sends done)",
                       it_tx_bytes("rail0") - a0, CUT_AFTER, m.nerr, m.ndone, n);
    unsigned long long b1 = it_tx_bytes("rail1");
    host_request("link 0 off");
    double t0 = it_now();
    int pending = 1;
    while (it_carrier("rail0") != 0 && it_now() - t0 < 20.0)
        pending = poll_batch(h, &m);
    if (it_carrier("rail0") != 0)
        return it_fail("rail0 still has carrier 20 s after the cut was requested");
    fprintf(stderr, "[rank 0] rail0 cut %.2f s after the request, %d of %d sends pending\n",
            it_now() - t0, pending, n);
    int rc0 = 0;
    if (!pending) {
        fprintf(stderr, "[rank 0] every send completed before the cut landed: nothing was in "
                        "flight, the attempt proves nothing\n");
        *again = 1;
    } else {
        if (drain(h, &m, 300.0) || m.nerr)
            return it_fail("after the cut: %d errors, %d pending", m.nerr, m.n - m.ndone - m.nerr);
        fprintf(stderr,
                "[rank 0] all %d sends completed %.2f s after the cut; rail1 +%llu B; "
                "failover lines logged: %u\n",
                n, it_now() - t0, it_tx_bytes("rail1") - b1, g_it_logs.failovers);
        if (g_it_logs.failovers < 1)
            rc0 = it_fail("the plugin logged no failover");
    }
    free_batch(h, &m);
    return rc0 | it_ctl_signal(h->ctl, *again ? 'A' : 'R') | links_back(h, "0") |
           close_both(h, sc, rc);
}

static int sc_cut_rail(struct h2 *h)
{
    for (int k = 1; k <= CUT_ATTEMPTS; k++) {
        int again = 0, bad = cut_rail_once(h, &again);
        if (bad || !again)
            return bad;
        if (k < CUT_ATTEMPTS)
            fprintf(stderr, "[%s] cut_rail: attempt %d of %d showed nothing: again\n", g_it_role, k,
                    CUT_ATTEMPTS);
    }
    return it_fail("every send completed before the cut landed in all %d attempts: nothing "
                   "was in flight",
                   CUT_ATTEMPTS);
}

/* ---- cut_both ---- */

static int sc_cut_both(struct h2 *h)
{
    void *sc = NULL, *rc = NULL;
    struct batch m;
    const int n = 16;
    int bad = 0;
    if (connect_pair(h, &sc, &rc))
        return 1;
    if (h->rank == 1) {
        if (post_recvs(h, rc, &m, k_big, n) || it_ctl_signal(h->ctl, 'P'))
            return 1;
        double t_cut = 0;
        for (;;) {
            int pending = poll_batch(h, &m);
            if (!t_cut && it_ctl_ready(h->ctl)) {
                if (it_ctl_wait(h->ctl, 'C'))
                    return 1;
                t_cut = it_now();
            }
            if (!pending && t_cut)
                break;
            if (t_cut && it_now() - t_cut > CUT_BOUND_S)
                return it_fail("receives still pending %.0f s after both links were cut",
                               CUT_BOUND_S);
        }
        if (!m.nerr)
            bad = it_fail("every receive completed although both links were cut");
        else
            fprintf(stderr, "[rank 1] receive comm: error %.2f s after the cut was seen\n",
                    m.first_err > t_cut ? m.first_err - t_cut : 0.0);
    } else {
        unsigned long long a0 = it_tx_bytes("rail0");
        if (it_ctl_wait(h->ctl, 'P') || post_sends(h, sc, &m, k_big, n, 4000))
            return 1;
        (void)wait_rail0_carried(h, &m, a0); /* cut anyway: an error shows below */
        host_request("link 0 off");
        host_request("link 1 off");
        double t0 = it_now();
        if (it_wait_carrier("rail0", 0, 20.0) || it_wait_carrier("rail1", 0, 20.0))
            return it_fail("the rails still have carrier 20 s after the cut was requested");
        int pending = poll_batch(h, &m);
        if (it_ctl_signal(h->ctl, 'C'))
            return 1;
        if (!pending)
            return it_fail("every send completed before the cut landed: nothing was in flight");
        if (drain(h, &m, CUT_BOUND_S))
            return it_fail("sends still pending %.0f s after both links were cut", CUT_BOUND_S);
        if (!m.nerr)
            bad = it_fail("every send completed although both links were cut");
        else
            fprintf(stderr, "[rank 0] send comm: error %.2f s after both links were cut\n",
                    m.first_err - t0);
    }
    free_batch(h, &m);
    bad |= close_both(h, sc, rc) | barrier(h) | links_back(h, "01");
    return bad;
}

/* ---- dead_peer ---- */

static int sc_dead_peer(struct h2 *h)
{
    void *sc = NULL, *rc = NULL;
    struct batch in, out;
    const int n = 32;
    if (connect_pair(h, &sc, &rc) || post_recvs(h, rc, &in, k_big, h->rank ? 4 : n) ||
        it_ctl_signal(h->ctl, 'P') || it_ctl_wait(h->ctl, 'P') ||
        post_sends_how(h, sc, &out, k_big, n, 5000 + (uint64_t)h->rank * 100, 1))
        return 1;
    /* Rank 1 takes only 4 of rank 0's 32 messages: the other 28 sends cannot complete, so they
     * must end with an error once the peer host is gone (isend itself fails then). */
    if (h->rank == 1) { /* keeps the traffic going until its VM is killed */
        double end = it_now() + 300.0;
        while (it_now() < end) {
            int pending = poll_batch(h, &in);
            pending += poll_batch(h, &out);
            if (!pending)
                break;
        }
        return it_fail("rank 1 was not killed (or its transfers ended first)");
    }
    /* kill as soon as data has moved, so that both directions still have most of it pending */
    double end = it_now() + 120.0;
    while (!in.ndone && !out.ndone && !in.nerr && !out.nerr && it_now() < end) {
        poll_batch(h, &in);
        poll_batch(h, &out);
    }
    if ((!in.ndone && !out.ndone) || in.nerr || out.nerr)
        return it_fail("no traffic flowed before the kill (%d / %d errors)", in.nerr, out.nerr);
    host_request("kill B");
    double t0 = it_now();
    while (poll_batch(h, &in) + poll_batch(h, &out) && it_now() - t0 < DEAD_BOUND_S)
        ;
    double t1 = it_now();
    fprintf(stderr,
            "[rank 0] peer host killed: send comm %d done / %d errors (first after %.2f s), "
            "receive comm %d done / %d errors (first after %.2f s), all ended after %.2f s\n",
            out.ndone, out.nerr, out.nerr ? out.first_err - t0 : -1.0, in.ndone, in.nerr,
            in.nerr ? in.first_err - t0 : -1.0, t1 - t0);
    if (in.ndone + in.nerr < n || out.ndone + out.nerr < n)
        return it_fail("requests still pending %.0f s after the peer host died", DEAD_BOUND_S);
    if (!in.nerr || !out.nerr)
        return it_fail("a comm finished without an error although its peer host died");
    int bad = close_both(h, sc, rc);
    free_batch(h, &in);
    free_batch(h, &out);
    return bad;
}

/* ---- main ---- */

static const struct {
    const char *name;
    int (*fn)(struct h2 *h);
} k_sc[] = {{"exchange", sc_exchange},
            {"cut_rail", sc_cut_rail},
            {"cut_both", sc_cut_both},
            {"dead_peer", sc_dead_peer}};
#define NSC (int)(sizeof(k_sc) / sizeof(k_sc[0]))

int main(int argc, char **argv)
{
    const char *host = getenv("FABRIC_HOST"), *mgmt = getenv("FABRIC_MGMT"),
               *peer = getenv("FABRIC_PEER_MGMT");
    struct it_plugin p;
    struct h2 h = {.p = &p};
    int passed = 0, failed = 0;
    if (argc < 2 || !host || !mgmt || !peer) {
        fprintf(stderr, "usage: rail_net_2h PLUGIN [SCENARIO...] (inside run-two-hosts.sh)\n");
        printf("0 passed, 1 failed\n");
        return 2;
    }
    for (int i = 0; i < MAXN; i++)
        k_big[i] = BIG;
    setvbuf(stdout, NULL, _IOLBF, 0);
    h.rank = atoi(host) ? 1 : 0;
    g_it_role = h.rank ? "rank 1" : "rank 0";
    setenv("NCCL_RAIL_RAILS", "rxe0+rxe1", 0);
    setenv("NCCL_SOCKET_IFNAME", "mgmt", 0);
    setenv("NCCL_RAIL_STRIPE_POLICY", "equal", 0); /* exchange checks that both rails carry */
    h.ctl = h.rank ? it_tcp_connect(peer, CTL_PORT, MEET_S)
                   : it_tcp_listen_accept(mgmt, CTL_PORT, MEET_S);
    struct timeval tv = {CTL_TIMEOUT_S, 0}; /* no read on the control channel blocks forever */
    if (h.ctl >= 0)
        setsockopt(h.ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (h.ctl < 0 || it_load(&p, argv[1])) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    h.dev = it_dev(&p, "rxe0+rxe1");
    if (h.dev < 0) {
        it_fail("no device rxe0+rxe1 among %d", p.ndev);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    const char *all[NSC];
    for (int k = 0; k < NSC; k++)
        all[k] = k_sc[k].name;
    const char **names = argc > 2 ? (const char **)argv + 2 : all;
    int nnames = argc > 2 ? argc - 2 : NSC;
    int stop = 0; /* after a failure the two ranks may be out of step: run nothing more */
    for (int a = 0; a < nnames; a++) {
        const char *name = names[a];
        int k = 0;
        while (k < NSC && strcmp(k_sc[k].name, name) != 0)
            k++;
        if (stop || k == NSC) {
            if (h.rank == 0)
                printf("FAIL %s (%s)\n", name,
                       stop ? "not run: an earlier scenario failed" : "unknown scenario");
            failed++;
            stop = 1;
            continue;
        }
        double t0 = it_now();
        if (barrier(&h)) {
            failed++;
            stop = 1;
            continue;
        }
        int rc = k_sc[k].fn(&h);
        uint8_t peer_rc = 'K';
        if (k_sc[k].fn == sc_dead_peer) /* rank 1 is gone: rank 0 judges alone */
            peer_rc = 'K';
        else if (h.rank == 1)
            it_ctl_signal(h.ctl, (uint8_t)(rc ? 'F' : 'K'));
        else if (it_ctl_recv(h.ctl, &peer_rc, 1))
            peer_rc = 'F';
        int ok = !rc && peer_rc == 'K';
        if (h.rank == 0)
            printf("%s %s (%.1f s)%s\n", ok ? "PASS" : "FAIL", name, it_now() - t0,
                   peer_rc != 'K' ? " [rank 1 failed]" : "");
        ok ? passed++ : failed++;
        stop = !ok;
    }
    it_unload(&p);
    if (h.rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    else
        printf("rank 1: %d scenario(s) failed\n", failed);
    return failed ? 1 : 0;
}
