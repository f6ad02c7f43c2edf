/* SPDX-License-Identifier: Apache-2.0 */
/* Eager flow control with held-back clear-to-send. A receive no larger than the sender's eager
 * limit writes no CTS at first: the message is expected eagerly. Here the sender first fills
 * every bounce slot with messages nobody has posted a receive for, so the next small message
 * can go neither eagerly (no slot, no credit to return) nor by rendezvous (no CTS yet): the
 * receiver must notice and write the CTS at once. Then a ping-pong of small messages, each
 * receive posted before its send, checks that eager delivery and batched credits keep going. */
#include <stdlib.h>
#include <string.h>

#include "it_scenarios.h"
#include "wire/net_wire.h"

#define FILL     fill_count() /* messages that occupy every bounce slot */
#define MSG      100
#define PINGS    40
#define STARVE_S 1.0 /* the starved message must not wait for the 2 ms safety net many times */

/* The receiver's bounce slots: NCCL_RAIL_EAGER_SLOTS as the scenario sets it (both sides see
 * the same environment), else its default. */
static int fill_count(void)
{
    const char *v = getenv("NCCL_RAIL_EAGER_SLOTS");
    int n = v ? atoi(v) : 4;
    return n < 1 ? 1 : n > RAIL_EAGER_SLOTS ? RAIL_EAGER_SLOTS : n;
}

static int recv_check(struct it_side *s, void *rc, int tag, uint64_t seed, double *secs, int ping)
{
    struct it_plugin *p = s->p;
    struct it_buf b;
    void *req, *data;
    size_t cap = MSG;
    int sz[1] = {-1};
    if (it_buf_alloc(p, rc, &b, MSG))
        return 1;
    data = b.p;
    double t0 = it_now();
    if (it_irecv(p, rc, 1, &data, &cap, &tag, &b.mh, &req))
        return 1;
    if (ping && it_ctl_signal(s->ctl, 'P'))
        return 1;
    int r = it_wait(p, req, sz);
    if (secs)
        *secs = it_now() - t0;
    if (r)
        return it_fail("receive (tag %d): test returned %d", tag, r);
    if (sz[0] != MSG)
        return it_fail("receive (tag %d): %d bytes, %d were sent", tag, sz[0], MSG);
    long bad = it_check(b.p, MSG, seed);
    if (bad >= 0)
        return it_fail("message (tag %d, seed %llu) differs at byte %ld", tag,
                       (unsigned long long)seed, bad);
    it_buf_free(p, rc, &b);
    return 0;
}

int it_starved_recv(struct it_side *s)
{
    void *rc;
    double secs = 0;
    if (it_accept(s->p, s->dev, s->ctl, NULL, &rc) || it_ctl_wait(s->ctl, 'S'))
        return 1;
    /* The sender is out of bounce slots: this receive must write its CTS. */
    if (recv_check(s, rc, 2, FILL, &secs, 0))
        return 1;
    if (secs > STARVE_S)
        return it_fail("the receive after a full bounce ring took %.2f s", secs);
    for (int i = 0; i < FILL; i++) /* the unexpected ones, in order */
        if (recv_check(s, rc, 1, (uint64_t)i, NULL, 0))
            return 1;
    for (int i = 0; i < PINGS; i++)
        if (recv_check(s, rc, 3, 100 + (uint64_t)i, NULL, 1))
            return 1;
    return s->p->net->closeRecv(rc) != ncclSuccess;
}

int it_starved_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b[RAIL_EAGER_SLOTS + 1];
    void *sc, *req[RAIL_EAGER_SLOTS + 1] = {0};
    if (it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    for (int i = 0; i <= FILL; i++) {
        if (it_buf_alloc(p, sc, &b[i], MSG))
            return 1;
        it_fill(b[i].p, MSG, (uint64_t)i);
    }
    for (int i = 0; i < FILL; i++)
        if (p->net->isend(sc, b[i].p, MSG, 1, b[i].mh, NULL, &req[i]) != ncclSuccess || !req[i])
            return it_fail("eager send %d of %d before any receive was not accepted", i, FILL);
    for (int i = 0; i < FILL; i++)
        if (it_wait(p, req[i], NULL))
            return it_fail("eager send %d did not complete", i);
    if (p->net->isend(sc, b[FILL].p, MSG, 2, b[FILL].mh, NULL, &req[FILL]) != ncclSuccess)
        return it_fail("isend with a full bounce ring failed");
    if (req[FILL])
        return it_fail("a message went out eagerly with every bounce slot in use");
    if (it_ctl_signal(s->ctl, 'S') || it_isend(p, sc, b[FILL].p, MSG, 2, b[FILL].mh, &req[FILL]) ||
        it_wait(p, req[FILL], NULL))
        return 1;
    for (int i = 0; i < PINGS; i++) {
        void *r;
        it_fill(b[0].p, MSG, 100 + (uint64_t)i);
        if (it_ctl_wait(s->ctl, 'P') || it_isend(p, sc, b[0].p, MSG, 3, b[0].mh, &r) ||
            it_wait(p, r, NULL))
            return it_fail("ping %d", i);
    }
    for (int i = 0; i <= FILL; i++)
        it_buf_free(p, sc, &b[i]);
    return p->net->closeSend(sc) != ncclSuccess;
}
