/* SPDX-License-Identifier: Apache-2.0 */
/* A long stream: 3000 messages of pseudo-random sizes (0..24 KiB, so eager and rendezvous mix)
 * over three tags, received in groups of 1..4 with up to 32 receives and 128 sends in flight.
 * The FIFO and the eager bounce ring wrap many times; every byte is checked. */
#include <stdlib.h>
#include <string.h>

#include "it_scenarios.h"

#define NMSG     3000
#define RWINDOW  32
#define SWINDOW  128
#define MAXSZ    (24 * 1024)
#define MAXGROUP 4

static size_t msg_size(int k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    switch (x % 4) {
    case 0:
        return (size_t)(x >> 8) % 64; /* tiny */
    case 1:
        return (size_t)(x >> 8) % 8192; /* eager range */
    default:
        return (size_t)(x >> 8) % MAXSZ;
    }
}

static int group_size(int g)
{
    return 1 + (g * 7) % MAXGROUP;
}

struct rslot {
    void *req;
    int first, n;
    struct it_buf b[MAXGROUP];
};

int it_stream_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct rslot *w = calloc(RWINDOW, sizeof(*w));
    void *rc;
    int next = 0, group = 0, done_msgs = 0, head = 0, tail = 0;
    if (!w || it_accept(p, s->dev, s->ctl, NULL, &rc))
        return 1;
    double end = it_now() + 4 * IT_DEADLINE_S;
    while (done_msgs < NMSG) {
        if (next < NMSG && tail - head < RWINDOW) {
            struct rslot *r = &w[tail % RWINDOW];
            void *data[MAXGROUP], *mh[MAXGROUP];
            size_t cap[MAXGROUP];
            int tags[MAXGROUP];
            r->first = next;
            r->n = group_size(group);
            if (r->n > NMSG - next)
                r->n = NMSG - next;
            for (int i = 0; i < r->n; i++) {
                int k = next + i;
                cap[i] = msg_size(k) + (size_t)(k % 5) * 10;
                if (it_buf_alloc(p, rc, &r->b[i], cap[i]))
                    return 1;
                data[i] = r->b[i].p;
                mh[i] = r->b[i].mh;
                tags[i] = k % 3;
            }
            r->req = NULL;
            if (p->net->irecv(rc, r->n, data, cap, tags, mh, NULL, &r->req) != ncclSuccess)
                return it_fail("irecv of messages %d..%d failed", next, next + r->n - 1);
            if (r->req) {
                next += r->n;
                group++;
                tail++;
            } else {
                for (int i = 0; i < r->n; i++)
                    it_buf_free(p, rc, &r->b[i]);
            }
        }
        if (head < tail) {
            struct rslot *r = &w[head % RWINDOW];
            int done = 0, sz[64] = {0};
            if (p->net->test(r->req, &done, sz) != ncclSuccess)
                return it_fail("test of messages %d.. failed", r->first);
            if (done) {
                for (int i = 0; i < r->n; i++) {
                    int k = r->first + i;
                    long bad = it_check(r->b[i].p, msg_size(k), 7000 + (uint64_t)k);
                    if ((size_t)sz[i] != msg_size(k) || bad >= 0)
                        return it_fail("message %d: size %d (want %zu), first bad byte %ld", k,
                                       sz[i], msg_size(k), bad);
                    it_buf_free(p, rc, &r->b[i]);
                }
                done_msgs += r->n;
                head++;
            }
        }
        if (it_now() > end)
            return it_fail("stream stalled at %d of %d messages", done_msgs, NMSG);
    }
    free(w);
    return p->net->closeRecv(rc) != ncclSuccess || it_ctl_signal(s->ctl, 'E');
}

int it_stream_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf *b = calloc(SWINDOW, sizeof(*b));
    void **req = calloc(SWINDOW, sizeof(*req));
    void *sc;
    int next = 0, head = 0;
    if (!b || !req || it_connect(p, s->dev, s->ctl, &sc))
        return 1;
    double end = it_now() + 4 * IT_DEADLINE_S;
    while (head < NMSG) {
        if (next < NMSG && next - head < SWINDOW) {
            int k = next, slot = k % SWINDOW;
            if (!b[slot].p) {
                if (it_buf_alloc(p, sc, &b[slot], msg_size(k)))
                    return 1;
                it_fill(b[slot].p, msg_size(k), 7000 + (uint64_t)k);
            }
            if (p->net->isend(sc, b[slot].p, msg_size(k), k % 3, b[slot].mh, NULL, &req[slot]) !=
                ncclSuccess)
                return it_fail("isend of message %d failed", k);
            if (req[slot])
                next++;
        }
        if (head < next) {
            int slot = head % SWINDOW, done = 0, sz[1];
            if (p->net->test(req[slot], &done, sz) != ncclSuccess)
                return it_fail("test of send %d failed", head);
            if (done) {
                if ((size_t)sz[0] != msg_size(head))
                    return it_fail("send %d completed with %d bytes", head, sz[0]);
                it_buf_free(p, sc, &b[slot]);
                head++;
            }
        }
        if (it_now() > end)
            return it_fail("stream stalled at send %d of %d", head, NMSG);
    }
    /* Keep the connection until the receiver has checked everything. */
    if (it_ctl_wait(s->ctl, 'E'))
        return 1;
    free(b);
    free(req);
    return p->net->closeSend(sc) != ncclSuccess;
}
