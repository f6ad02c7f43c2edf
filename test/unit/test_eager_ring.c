/* SPDX-License-Identifier: Apache-2.0 */
/* The eager credit ring (protocol/eager_ring.c) without verbs: chosen cases (in-order release,
 * credit batches, a lost credit write, duplicates, the unexpected list, the poll cursor of flagged
 * images, the sender's room), then a simulated stream of thousands of messages through a ring of
 * RAIL_EAGER_SLOTS slots (hundreds of wrap-arounds): seeded random delivery order, receives
 * consuming out of order, messages by completion and flagged images found by polling mixed, with
 * failover duplicate copies and writes lost with their rail, credit writes lost or landed. After
 * every step: no slot is reused before its release, the credit never exceeds what was sent nor the
 * ring size, and at the end every message was delivered exactly once. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/eager_ring.h"

static void chosen(void)
{
    struct rail_eager_ring g;
    rail_eager_ring_init(&g, 4);
    CHECK_EQ_INT(g.slots, 4);
    CHECK(!rail_eager_ring_credit_due(&g));
    /* Four arrivals fill the ring; the sender is starved. */
    for (unsigned b = 0; b < 4; b++) {
        CHECK(rail_eager_ring_slot_free(&g, b));
        CHECK(rail_eager_ring_in_window(&g, b, b));
        rail_eager_ring_arrive(&g, b);
    }
    CHECK(!rail_eager_ring_slot_free(&g, 0));
    CHECK(!rail_eager_ring_slot_free(&g, 4)); /* no such slot */
    CHECK(rail_eager_ring_starved(&g));
    CHECK(rail_eager_ring_stuck(&g));
    CHECK(!rail_eager_ring_in_window(&g, 0, 4)); /* message 4 needs slot 0 released first */
    CHECK(!rail_eager_ring_in_window(&g, 1, 0)); /* message 0 belongs in slot 0 */
    /* Consuming slot 2 first releases nothing: release is in ring order. */
    rail_eager_ring_consume(&g, 2);
    CHECK_EQ_INT(g.freed, 0);
    CHECK_EQ_INT(g.state[2], RAIL_BOUNCE_CONSUMED);
    CHECK(!rail_eager_ring_credit_due(&g));
    rail_eager_ring_consume(&g, 0);
    CHECK_EQ_INT(g.freed, 1);
    CHECK(rail_eager_ring_credit_due(&g)); /* starved: at once, below the batch of 3 */
    CHECK_EQ_INT(rail_eager_ring_credit_posted(&g), 1);
    CHECK(g.credit_busy);
    CHECK(!rail_eager_ring_credit_due(&g)); /* one write in flight at a time */
    rail_eager_ring_consume(&g, 1);
    CHECK_EQ_INT(g.freed, 3); /* 1 and the waiting 2 */
    CHECK_EQ_INT(g.state[2], RAIL_BOUNCE_EMPTY);
    /* The credit write is lost with its rail: the next one starts from the last acknowledged. */
    rail_eager_ring_credit_lost(&g);
    CHECK_EQ_INT(g.credit_sent, 0);
    CHECK(rail_eager_ring_credit_due(&g));
    CHECK_EQ_INT(rail_eager_ring_credit_posted(&g), 3);
    rail_eager_ring_credit_done(&g);
    CHECK_EQ_INT(g.credit_acked, 3);
    CHECK(!rail_eager_ring_credit_due(&g));
    /* A re-sent copy of message 3 (slot still held) and of message 0 (released) are duplicates. */
    CHECK(rail_eager_ring_duplicate(&g, 3, 3));
    CHECK(rail_eager_ring_duplicate(&g, 0, 0));
    CHECK(!rail_eager_ring_duplicate(&g, 0, 4));
    /* Batches: with 3 slots free and the sender not starved, one release is below the batch. */
    rail_eager_ring_consume(&g, 3);
    CHECK_EQ_INT(g.freed, 4);
    CHECK(!rail_eager_ring_credit_due(&g)); /* 1 < batch 3, sender has room */
    rail_eager_ring_arrive(&g, 0);
    rail_eager_ring_consume(&g, 0);
    CHECK(!rail_eager_ring_credit_due(&g)); /* 2 < batch 3: the sender still has a slot */
    rail_eager_ring_arrive(&g, 1);
    rail_eager_ring_consume(&g, 1);
    CHECK(rail_eager_ring_credit_due(&g));

    /* The unexpected list: by (tag, index), a second (tag, index) refused. */
    rail_eager_ring_init(&g, RAIL_EAGER_SLOTS);
    CHECK_EQ_INT(rail_eager_ring_unexp_add(&g, 3, 7, 0), 0);
    CHECK_EQ_INT(rail_eager_ring_unexp_add(&g, 4, 7, 1), 0);
    CHECK_EQ_INT(rail_eager_ring_unexp_add(&g, 5, 7, 1), -EEXIST);
    CHECK_EQ_INT(rail_eager_ring_unexp_take(&g, 7, 2), -1);
    CHECK_EQ_INT(rail_eager_ring_unexp_take(&g, 7, 1), 4);
    CHECK_EQ_INT(rail_eager_ring_unexp_take(&g, 7, 1), -1);
    CHECK_EQ_INT(rail_eager_ring_unexp_take(&g, 7, 0), 3);
    CHECK_EQ_INT(g.nunexp, 0);
    for (int k = 0; k < RAIL_EAGER_SLOTS; k++)
        CHECK_EQ_INT(rail_eager_ring_unexp_add(&g, (unsigned)k, 1, (uint32_t)k), 0);
    CHECK_EQ_INT(rail_eager_ring_unexp_add(&g, 0, 2, 0), -ENOSPC);

    /* The poll cursor for flagged images passes over messages that came by completion, even
     * when nobody consumed them yet, and stops at the end of the credit window. */
    rail_eager_ring_init(&g, 4);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 0);
    rail_eager_ring_arrive(&g, 0); /* message 0 by completion, its receive not posted */
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 1);
    CHECK_EQ_INT(g.poll_seq, 1);
    rail_eager_ring_poll_found(&g, 1);
    CHECK_EQ_INT(g.state[1], RAIL_BOUNCE_ARRIVED);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 2);
    rail_eager_ring_consume(&g, 1); /* not released: 0 comes first */
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 2);
    rail_eager_ring_arrive(&g, 2);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 3);
    rail_eager_ring_poll_found(&g, 3);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), -1); /* message 4 needs slot 0 released */
    rail_eager_ring_consume(&g, 0);
    CHECK_EQ_INT(g.freed, 2);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 0); /* message 4 */
    CHECK_EQ_INT(g.poll_seq, 4);
    /* Messages that came by completion and were released before the cursor got there. */
    rail_eager_ring_init(&g, 4);
    for (unsigned k = 0; k < 3; k++) {
        rail_eager_ring_arrive(&g, k);
        rail_eager_ring_consume(&g, k);
    }
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), 3);
    CHECK_EQ_INT(g.poll_seq, 3);
    rail_eager_ring_init(&g, 0);
    CHECK_EQ_INT(rail_eager_ring_poll_slot(&g), -1); /* no eager path */

    /* The sender's view. */
    CHECK_EQ_INT(rail_eager_sender_room(0, 0, 16), 1);
    CHECK_EQ_INT(rail_eager_sender_room(16, 0, 16), 0);
    CHECK_EQ_INT(rail_eager_sender_room(16, 1, 16), 1);
    CHECK_EQ_INT(rail_eager_sender_room(3, 4, 16), -EPROTO);
    CHECK_EQ_INT(rail_eager_sender_room(5, 5, 0), 0); /* no eager path */
    rail_eager_ring_init(&g, 99);
    CHECK_EQ_INT(g.slots, RAIL_EAGER_SLOTS);
    /* The credit batch, kept from init: the ring less one slot, at least 1. */
    for (int k = -1; k <= RAIL_EAGER_SLOTS + 1; k++) {
        rail_eager_ring_init(&g, k);
        CHECK_EQ_INT(g.batch, g.slots > 1 ? g.slots - 1 : 1);
    }
}

/* ---- the simulated stream ---- */

#define NMSG 6000
#define NTAG 5
#define MAXF 256 /* writes in flight */

enum { EV_DATA, EV_CREDIT };

struct ev {
    int kind;
    uint64_t v; /* EV_DATA: message number; EV_CREDIT: the credit value */
};

struct sim {
    uint32_t seed;
    bool failover;
    struct rail_eager_ring g;
    /* sender */
    uint64_t posted, word;      /* messages sent; the credit word as landed in its memory */
    int busy[RAIL_EAGER_SLOTS]; /* copies of the slot's last message still in flight */
    /* network */
    struct ev fl[MAXF];
    int nfl;
    bool images;                    /* some messages go as flagged images, found by polling */
    uint8_t image[NMSG];            /* message k goes as an image */
    uint64_t img[RAIL_EAGER_SLOTS]; /* image slot memory: 1 + the message last written there */
    int found;                      /* images found by polling */
    /* receiver */
    uint8_t delivered[NMSG];
    uint8_t arrived_pending[NMSG]; /* arrived, not consumed yet */
    int dup_dropped;
    int bad; /* invariant violations */
};

static uint32_t rnd(struct sim *s, uint32_t n)
{
    return (fuzz_step(&s->seed) >> 8) % n;
}

static void inflight(struct sim *s, int kind, uint64_t v)
{
    if (s->nfl < MAXF)
        s->fl[s->nfl++] = (struct ev){kind, v};
    else
        s->bad++;
}

static int32_t tag_of(uint64_t seq)
{
    return (int32_t)(seq % NTAG);
}

static void check_invariants(struct sim *s)
{
    const struct rail_eager_ring *g = &s->g;
    bool ok = g->freed <= g->arrived && g->arrived - g->freed <= (uint64_t)g->slots &&
              g->credit_acked <= g->credit_sent && g->credit_sent <= g->freed &&
              s->word <= s->posted && s->posted - s->word <= (uint64_t)g->slots &&
              s->word <= g->freed && (uint64_t)g->free_b == g->freed % (uint64_t)g->slots;
    if (!ok) {
        fprintf(stderr,
                "invariant: arrived %llu freed %llu sent %llu acked %llu word %llu "
                "posted %llu\n",
                (unsigned long long)g->arrived, (unsigned long long)g->freed,
                (unsigned long long)g->credit_sent, (unsigned long long)g->credit_acked,
                (unsigned long long)s->word, (unsigned long long)s->posted);
        s->bad++;
    }
}

/* A fresh arrival (by completion or found by polling) into slot b. */
static bool fresh_ok(struct sim *s, uint64_t seq, unsigned b)
{
    if (!rail_eager_ring_slot_free(&s->g, b) || !rail_eager_ring_in_window(&s->g, b, seq) ||
        s->delivered[seq] || s->arrived_pending[seq]) {
        fprintf(stderr, "message %llu into slot %u refused or seen twice\n",
                (unsigned long long)seq, b);
        return false;
    }
    /* Independent of the core's own slot state: the slot's previous occupant must have been
     * consumed by the receiver before the sender could write this message into it. */
    if (seq >= (uint64_t)s->g.slots && !s->delivered[seq - (uint64_t)s->g.slots]) {
        fprintf(stderr, "message %llu overwrote slot %u before message %llu was consumed\n",
                (unsigned long long)seq, b, (unsigned long long)(seq - (uint64_t)s->g.slots));
        return false;
    }
    return true;
}

/* The receiver polls the image slots the way net_recv_eager.c does: a slot holds message
 * poll_seq when its memory carries that message's flag (here: 1 + its number). */
static void poll_images(struct sim *s)
{
    int b;
    while ((b = rail_eager_ring_poll_slot(&s->g)) >= 0) {
        uint64_t seq = s->g.poll_seq;
        if ((uint64_t)b != seq % (uint64_t)s->g.slots) {
            fprintf(stderr, "poll cursor at message %llu names slot %d\n", (unsigned long long)seq,
                    b);
            s->bad++;
            return;
        }
        if ((unsigned)b != seq % (uint64_t)s->g.slots || s->img[b] != seq + 1)
            return; /* not here yet (or a wrong slot: the check below never runs then) */
        if (!s->image[seq] || !fresh_ok(s, seq, (unsigned)b)) {
            s->bad++;
            return;
        }
        rail_eager_ring_poll_found(&s->g, (unsigned)b);
        if (rail_eager_ring_unexp_add(&s->g, (unsigned)b, tag_of(seq), (uint32_t)(seq / NTAG)))
            s->bad++;
        s->arrived_pending[seq] = 1;
        s->found++;
    }
}

static void on_data(struct sim *s, uint64_t seq)
{
    unsigned b = (unsigned)(seq % (uint64_t)s->g.slots);
    s->busy[b]--;
    if (s->image[seq]) { /* lands in its image slot: no completion at the receiver */
        s->img[b] = seq + 1;
        return;
    }
    if (s->failover && rail_eager_ring_duplicate(&s->g, b, seq)) {
        /* Only a copy of a message that already arrived may be dropped. */
        if (!(s->delivered[seq] || s->arrived_pending[seq]))
            s->bad++;
        s->dup_dropped++;
        return;
    }
    /* A fresh message: its slot must have been released (no reuse before release). */
    if (!fresh_ok(s, seq, b)) {
        s->bad++;
        return;
    }
    rail_eager_ring_arrive(&s->g, b);
    if (rail_eager_ring_unexp_add(&s->g, b, tag_of(seq), (uint32_t)(seq / NTAG)) != 0)
        s->bad++;
    s->arrived_pending[seq] = 1;
}

static void consume_one(struct sim *s)
{
    /* A receive for a random message that is here: out of ring order on purpose. */
    uint64_t lo = s->g.freed, n = s->g.arrived - s->g.freed + 1;
    for (int tries = 0; tries < 4; tries++) {
        uint64_t seq = lo + rnd(s, (uint32_t)n);
        if (seq >= NMSG || !s->arrived_pending[seq])
            continue;
        int b = rail_eager_ring_unexp_take(&s->g, tag_of(seq), (uint32_t)(seq / NTAG));
        if (b != (int)(seq % (uint64_t)s->g.slots)) {
            s->bad++;
            return;
        }
        s->arrived_pending[seq] = 0;
        s->delivered[seq]++;
        rail_eager_ring_consume(&s->g, (unsigned)b);
        return;
    }
}

static void step(struct sim *s)
{
    /* Sender: the next message when there is room and its slot's old copies are done. */
    int room = rail_eager_sender_room(s->posted, s->word, s->g.slots);
    if (room < 0)
        s->bad++;
    if (room > 0 && s->posted < NMSG && !s->busy[s->posted % (uint64_t)s->g.slots] &&
        rnd(s, 4) != 0) {
        s->busy[s->posted % (uint64_t)s->g.slots]++;
        s->image[s->posted] = s->images && rnd(s, 2) == 0;
        inflight(s, EV_DATA, s->posted++);
    }
    /* Network: one write in flight, picked at random, lands (or is lost with its rail). */
    if (s->nfl && rnd(s, 3) != 0) {
        int i = (int)rnd(s, (uint32_t)s->nfl);
        struct ev e = s->fl[i];
        s->fl[i] = s->fl[--s->nfl];
        if (e.kind == EV_DATA) {
            uint32_t fate = s->failover ? rnd(s, 10) : 9;
            unsigned b = (unsigned)(e.v % (uint64_t)s->g.slots);
            if (fate == 0) { /* lost with its rail before landing: the sender writes it again */
                inflight(s, EV_DATA, e.v);
            } else if (fate == 1) { /* landed, but its completion was lost: a second copy */
                s->busy[b]++;
                inflight(s, EV_DATA, e.v);
                on_data(s, e.v);
            } else {
                on_data(s, e.v);
            }
        } else {
            uint32_t fate = rnd(s, 8);
            if (fate == 0) { /* lost with its rail, did not land */
                rail_eager_ring_credit_lost(&s->g);
            } else if (fate == 1) { /* landed, completion flushed */
                s->word = e.v;
                rail_eager_ring_credit_lost(&s->g);
            } else {
                s->word = e.v;
                rail_eager_ring_credit_done(&s->g);
            }
        }
    }
    if (rnd(s, 2) == 0)
        poll_images(s);
    if (rnd(s, 2) == 0)
        consume_one(s);
    if (rail_eager_ring_credit_due(&s->g))
        inflight(s, EV_CREDIT, rail_eager_ring_credit_posted(&s->g));
    check_invariants(s);
}

static void stream(uint32_t seed, bool failover, int slots, bool images)
{
    static struct sim sim; /* large: not on the stack */
    struct sim *s = &sim;
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    s->failover = failover;
    s->images = images;
    rail_eager_ring_init(&s->g, slots);
    long steps = 0;
    while ((s->g.freed < NMSG || s->nfl) && steps < 40L * NMSG && s->bad == 0) {
        step(s);
        steps++;
    }
    int once = 0;
    for (int k = 0; k < NMSG; k++)
        once += s->delivered[k] == 1;
    CHECK_MSG(s->bad == 0, "seed %u failover %d: %d invariant violation(s)", seed, failover,
              s->bad);
    CHECK_MSG(once == NMSG && s->g.freed == NMSG && s->g.arrived == NMSG,
              "seed %u failover %d slots %d: %d of %d delivered exactly once, %llu freed after "
              "%ld steps",
              seed, failover, slots, once, NMSG, (unsigned long long)s->g.freed, steps);
    if (failover)
        CHECK_MSG(s->dup_dropped > 0, "seed %u: no duplicate was exercised", seed);
    if (images)
        CHECK_MSG(s->found > NMSG / 4, "seed %u: only %d images found", seed, s->found);
}

int main(void)
{
    chosen();
    for (uint32_t seed = 1; seed <= 12; seed++) {
        stream(seed, false, RAIL_EAGER_SLOTS, seed % 2 == 0);
        stream(seed * 7919u, true, RAIL_EAGER_SLOTS, seed % 2 == 0);
        stream(seed * 104729u, true, RAIL_EAGER_SLOTS, true);
    }
    stream(5, true, 1, false); /* one slot: every credit is due at once */
    stream(6, false, 3, false);
    stream(7, true, 1, true);
    stream(8, true, 3, true);
    return check_report("test_eager_ring");
}
