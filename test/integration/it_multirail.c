/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-rail scenarios: they run only when both devices are rail groups ("rxe0+rxe2") inside the
 * fabric VM as root, and pass with a note otherwise.
 *   mr_stream    batches of sizes around the eager, stripe and chunk limits, byte-exact;
 *   mr_failover  rail A's link goes down with a batch in flight: every message still completes
 *                byte-exact and no call fails (the rail's work is re-sent on rail B);
 *   mr_alldown   both links go down: the next batch ends with an error in bounded time;
 *   mr_alldown_inflight  the same with the links going down under a batch in flight;
 *   mr_rejoin    rail A goes down, then up again: traffic returns to it (its veth tx counter
 *                grows again).
 * The send side pulls the cables (it_link.c: `ip link set`, or the shm fabric's port states) and
 * restores them before it returns.
 * Protocol per batch: the send side writes 'B' (a batch follows) or 'E' (end) on the control
 * channel; both sides post the whole batch, then wait for every request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it_link.h"
#include "it_scenarios.h"

#define NSIZES     10
#define BOUNDED_S  30.0       /* an error must come within this */
#define REJOIN_S   60.0       /* traffic must return to rail A within this after the link is up */
#define REJOIN_MIN (2u << 20) /* bytes on rail A's veth that show traffic is back */

static const size_t k_sizes[NSIZES] = {0,    1,      127,    128,      129,
                                       4096, 131071, 131072, 1048589u, 8u << 20};

struct mr_batch {
    struct it_buf b[NSIZES];
    void *req[NSIZES];
};

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* 1 when the scenario can run; prints why not otherwise. */
int it_mr_applicable(struct it_side *s)
{
    ncclNetProperties_v11_t a, b;
    if (s->peer_dev < 0 || s->p->net->getProperties(s->dev, &a) != ncclSuccess ||
        s->p->net->getProperties(s->peer_dev, &b) != ncclSuccess)
        return 0;
    if (!strchr(a.name, '+') || !strchr(b.name, '+')) {
        fprintf(stderr, "[%s] note: %s / %s are not multi-rail devices: skipped\n", g_it_role,
                a.name, b.name);
        return 0;
    }
    if (!it_links_usable()) {
        fprintf(stderr,
                "[%s] note: needs root in the fabric VM or the shm provider (links go down): "
                "skipped\n",
                g_it_role);
        return 0;
    }
    return 1;
}

/* Brings every fabric link up and waits until the ports of both rail groups are ACTIVE (the
 * device names are "rxeA+rxeB" lists). */
int it_links_restore(struct it_side *s)
{
    static const char *ifs[] = {"FABRIC_IF0", "FABRIC_IF1", "FABRIC_IF2", "FABRIC_IF3"};
    static const char *ifd[] = {"veth0", "veth1", "veth2", "veth3"};
    char names[512] = "";
    ncclNetProperties_v11_t a, b;
    int rc = 0;
    for (int i = 0; i < 4; i++)
        rc |= it_link_set(env_or(ifs[i], ifd[i]), "up");
    if (s->p->net->getProperties(s->dev, &a) != ncclSuccess ||
        s->p->net->getProperties(s->peer_dev, &b) != ncclSuccess)
        return it_fail("getProperties failed");
    snprintf(names, sizeof(names), "%s+%s", a.name, b.name);
    double end = it_now() + 20.0;
    for (char *save = NULL, *dev = strtok_r(names, "+", &save); dev;
         dev = strtok_r(NULL, "+", &save)) {
        while (!it_dev_port_active(dev) && it_now() < end)
            usleep(50000);
        if (!it_dev_port_active(dev))
            rc |= it_fail("port of %s not ACTIVE 20 s after its link came up", dev);
    }
    return rc;
}

static int batch_alloc(struct it_plugin *p, void *comm, struct mr_batch *m)
{
    memset(m, 0, sizeof(*m));
    for (int i = 0; i < NSIZES; i++)
        if (it_buf_alloc(p, comm, &m->b[i], k_sizes[i] ? k_sizes[i] : 1))
            return 1;
    return 0;
}

static void batch_free(struct it_plugin *p, struct mr_batch *m)
{
    for (int i = 0; i < NSIZES; i++)
        it_buf_free(p, NULL, &m->b[i]);
}

static uint64_t seed_of(int batch, int i)
{
    return 90000 + (uint64_t)batch * 64 + (uint64_t)i;
}

/* Waits for every request of the batch. Returns 0, or the first error (its text printed). With
 * expect_error, an error is the wanted outcome: returns 0 on error, 1 on success or timeout. */
static int batch_wait(struct it_plugin *p, struct mr_batch *m, int batch, int recv,
                      int expect_error)
{
    double t0 = it_now(), limit = expect_error ? BOUNDED_S : 2 * IT_DEADLINE_S;
    int left = NSIZES;
    while (left) {
        for (int i = 0; i < NSIZES; i++) {
            int done = 0, sz[64] = {0};
            if (!m->req[i])
                continue;
            ncclResult_t r = p->net->test(m->req[i], &done, sz);
            if (r != ncclSuccess) {
                if (expect_error) {
                    fprintf(stderr, "[%s] batch %d message %d: error %d after %.2f s (expected)\n",
                            g_it_role, batch, i, r, it_now() - t0);
                    return 0;
                }
                return it_fail("batch %d message %d (%zu B): test gave error %d", batch, i,
                               k_sizes[i], r);
            }
            if (!done)
                continue;
            m->req[i] = NULL;
            left--;
            if ((size_t)sz[0] != k_sizes[i])
                return it_fail("batch %d message %d: %d bytes, want %zu", batch, i, sz[0],
                               k_sizes[i]);
            long bad = recv ? it_check(m->b[i].p, k_sizes[i], seed_of(batch, i)) : -1;
            if (bad >= 0)
                return it_fail("batch %d message %d (%zu B): first wrong byte at %ld", batch, i,
                               k_sizes[i], bad);
        }
        if (it_now() - t0 > limit) {
            if (expect_error)
                return it_fail("batch %d: no error %.0f s after both links went down (%d of %d "
                               "pending)",
                               batch, BOUNDED_S, left, NSIZES);
            return it_fail("batch %d: %d of %d messages pending after %.0f s", batch, left, NSIZES,
                           limit);
        }
    }
    if (expect_error)
        return it_fail("batch %d completed although both links were down", batch);
    return 0;
}

static int batch_post_send(struct it_plugin *p, void *sc, struct mr_batch *m, int batch)
{
    for (int i = 0; i < NSIZES; i++) {
        it_fill(m->b[i].p, k_sizes[i], seed_of(batch, i));
        if (it_isend(p, sc, m->b[i].p, k_sizes[i], i, m->b[i].mh, &m->req[i]))
            return it_fail("batch %d: isend %d failed", batch, i);
    }
    return 0;
}

static int batch_post_recv(struct it_plugin *p, void *rc, struct mr_batch *m, int batch)
{
    for (int i = 0; i < NSIZES; i++) {
        void *data = m->b[i].p;
        size_t cap = k_sizes[i];
        int tag = i;
        memset(m->b[i].p, 0xA5, k_sizes[i]);
        if (it_irecv(p, rc, 1, &data, &cap, &tag, &m->b[i].mh, &m->req[i]))
            return it_fail("batch %d: irecv %d failed", batch, i);
    }
    return 0;
}

/* The receive side of every scenario: batches until 'E'. A batch announced with 'X' must end in
 * an error (both links down); the side then waits for 'E' and returns. */
static int mr_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct mr_batch m;
    void *rc;
    if (!it_mr_applicable(s))
        return 0;
    if (it_accept(p, s->dev, s->ctl, NULL, &rc) || batch_alloc(p, rc, &m))
        return 1;
    for (int batch = 0;; batch++) {
        uint8_t cmd = 0;
        if (it_ctl_recv(s->ctl, &cmd, 1))
            return 1;
        if (cmd == 'E')
            break;
        if (cmd == 'X') {
            /* Posting may already fail: the comm knows its rails are gone. */
            int posted = 0, rc2 = 0;
            for (int i = 0; i < NSIZES; i++) {
                void *data = m.b[i].p;
                size_t cap = k_sizes[i];
                int tag = i;
                m.req[i] = NULL;
                if (p->net->irecv(rc, 1, &data, &cap, &tag, &m.b[i].mh, NULL, &m.req[i]) !=
                    ncclSuccess) {
                    fprintf(stderr, "[recv] batch %d: irecv %d refused (expected)\n", batch, i);
                    break;
                }
                posted += m.req[i] != NULL;
            }
            if (posted)
                rc2 = batch_wait(p, &m, batch, 1, 1);
            if (rc2 || it_ctl_signal(s->ctl, 'R') || it_ctl_wait(s->ctl, 'E'))
                return 1;
            p->net->closeRecv(rc);
            batch_free(p, &m);
            return 0;
        }
        if (batch_post_recv(p, rc, &m, batch) || batch_wait(p, &m, batch, 1, 0))
            return 1;
        if (it_ctl_signal(s->ctl, 'R'))
            return 1;
    }
    batch_free(p, &m);
    return p->net->closeRecv(rc) != ncclSuccess;
}

int it_mr_recv(struct it_side *s)
{
    return mr_recv(s);
}

/* One batch from the send side: announce, post, optionally run `during` with the batch in
 * flight, wait, and wait for the receiver's verdict. */
static int send_batch(struct it_side *s, void *sc, struct mr_batch *m, int batch, const char *down1,
                      const char *down2)
{
    struct it_plugin *p = s->p;
    if (it_ctl_signal(s->ctl, 'B') || batch_post_send(p, sc, m, batch))
        return 1;
    if (down1 && it_link_set(down1, "down"))
        return 1;
    if (down2 && it_link_set(down2, "down"))
        return 1;
    if (batch_wait(p, m, batch, 0, 0))
        return 1;
    return it_ctl_wait(s->ctl, 'R');
}

enum mr_kind { MR_STREAM, MR_FAILOVER, MR_ALLDOWN, MR_ALLDOWN_INFLIGHT, MR_REJOIN };

static int mr_send(struct it_side *s, enum mr_kind kind)
{
    struct it_plugin *p = s->p;
    const char *if_a = env_or("FABRIC_IF0", "veth0"), *if_b = env_or("FABRIC_IF2", "veth2");
    struct mr_batch m;
    void *sc;
    int rc = 1, batch = 0;
    if (!it_mr_applicable(s))
        return 0;
    if (it_connect(p, s->dev, s->ctl, &sc) || batch_alloc(p, sc, &m))
        return 1;
    switch (kind) {
    case MR_STREAM:
        for (; batch < 4; batch++)
            if (send_batch(s, sc, &m, batch, NULL, NULL))
                goto out;
        break;
    case MR_FAILOVER:
        for (; batch < 8; batch++)
            if (send_batch(s, sc, &m, batch, batch == 2 ? if_a : NULL, NULL))
                goto out;
        break;
    case MR_ALLDOWN:
        if (send_batch(s, sc, &m, batch++, NULL, NULL))
            goto out;
        /* Down before the posts: otherwise small messages may finish before the links go. */
        if (it_link_set(if_a, "down") || it_link_set(if_b, "down") || it_ctl_signal(s->ctl, 'X'))
            goto out;
        /* isend may already refuse (the ports' events came first): that is the error too. */
        int refused = 0;
        double tpost = it_now();
        for (int i = 0; i < NSIZES && !refused; i++) {
            ncclResult_t r;
            m.req[i] = NULL;
            do
                r = p->net->isend(sc, m.b[i].p, k_sizes[i], i, m.b[i].mh, NULL, &m.req[i]);
            while (r == ncclSuccess && !m.req[i] && it_now() - tpost < BOUNDED_S);
            if (r != ncclSuccess) {
                fprintf(stderr,
                        "[send] batch %d: isend %d refused with error %d after %.2f s "
                        "(expected)\n",
                        batch, i, r, it_now() - tpost);
                refused = 1;
            } else if (!m.req[i]) {
                it_fail("batch %d: isend %d neither posted nor failed in %.0f s", batch, i,
                        BOUNDED_S);
                goto out;
            }
        }
        if (!refused && batch_wait(p, &m, batch, 0, 1))
            goto out;
        /* The receiver reports its own outcome ('R') before the links come back. */
        if (it_ctl_wait(s->ctl, 'R'))
            goto out;
        rc = it_links_restore(s) || it_ctl_signal(s->ctl, 'E');
        p->net->closeSend(sc);
        batch_free(p, &m);
        return rc;
    case MR_ALLDOWN_INFLIGHT:
        /* The links go while a batch with an 8 MiB message is on the wire: the error comes from
         * the ports' events or the RC retry timeout, through test(). */
        if (send_batch(s, sc, &m, batch++, NULL, NULL) || it_ctl_signal(s->ctl, 'X') ||
            batch_post_send(p, sc, &m, batch) || it_link_set(if_a, "down") ||
            it_link_set(if_b, "down") || batch_wait(p, &m, batch, 0, 1) || it_ctl_wait(s->ctl, 'R'))
            goto out;
        rc = it_links_restore(s) || it_ctl_signal(s->ctl, 'E');
        p->net->closeSend(sc);
        batch_free(p, &m);
        return rc;
    case MR_REJOIN: {
        if (send_batch(s, sc, &m, batch++, if_a, NULL) ||
            send_batch(s, sc, &m, batch++, NULL, NULL) || it_links_restore(s))
            goto out;
        unsigned long long tx0 = it_link_tx_bytes(if_a), grown = 0;
        double t0 = it_now();
        while (grown < REJOIN_MIN) {
            if (it_now() - t0 > REJOIN_S) {
                it_fail("%s sent only %llu bytes in %.0f s after it came back up", if_a, grown,
                        REJOIN_S);
                goto out;
            }
            if (send_batch(s, sc, &m, batch++, NULL, NULL))
                goto out;
            grown = it_link_tx_bytes(if_a) - tx0;
        }
        fprintf(stderr, "[send] traffic back on %s: %llu bytes within %.2f s (%d batches)\n", if_a,
                grown, it_now() - t0, batch);
        break;
    }
    }
    rc = 0;
out:
    if (kind != MR_STREAM && it_links_restore(s))
        rc = 1;
    if (it_ctl_signal(s->ctl, 'E'))
        rc = 1;
    if (p->net->closeSend(sc) != ncclSuccess)
        rc = rc ? rc : it_fail("closeSend failed");
    batch_free(p, &m);
    return rc;
}

int it_mr_stream_send(struct it_side *s)
{
    return mr_send(s, MR_STREAM);
}

int it_mr_failover_send(struct it_side *s)
{
    return mr_send(s, MR_FAILOVER);
}

int it_mr_alldown_send(struct it_side *s)
{
    return mr_send(s, MR_ALLDOWN);
}

int it_mr_alldown_inflight_send(struct it_side *s)
{
    return mr_send(s, MR_ALLDOWN_INFLIGHT);
}

int it_mr_rejoin_send(struct it_side *s)
{
    return mr_send(s, MR_REJOIN);
}
