/* SPDX-License-Identifier: Apache-2.0 */
/* Two-phase message state (protocol/twophase.c) without verbs: chosen cases (the record due on
 * the last piece, duplicate and late completions, failures of posted and unposted items, an empty
 * message, the eager write), then a simulated sender of thousands of striped messages over three
 * rails, driven the way net_send_post.c drives the core: completions in a seeded random order,
 * duplicate completions, rails lost mid-message (every write in flight on them completes with a
 * flush error, having landed or not) and coming back, pieces and records going again on the rails
 * that are up. Asserted: the record goes only after every piece completed, so every byte range
 * has landed when the receiver takes the message; every piece completes exactly once and the
 * completed pieces tile the message exactly once; the receiver takes each message exactly once;
 * the pending count matches the items waiting to go again; a duplicate completion changes
 * nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/twophase.h"

static void chosen(void)
{
    struct rail_twophase t;
    rail_2ph_plan(&t, 3);
    rail_2ph_start(&t, false);
    CHECK_EQ_INT(t.left, 3);
    CHECK(!rail_2ph_done(&t));
    for (int k = 0; k < 3; k++)
        rail_2ph_piece_posted(&t, k);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 1), 0);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 1), -1); /* duplicate */
    CHECK_EQ_INT(t.left, 2);
    /* Piece 0's rail fails: it waits; its late success (impossible, but) is ignored. */
    CHECK(rail_2ph_piece_failed(&t, 0));
    CHECK(!rail_2ph_piece_failed(&t, 0)); /* a second flush of the same piece */
    CHECK_EQ_INT(t.piece[0], RAIL_CH_PENDING);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 0), -1);
    CHECK(!rail_2ph_piece_failed(&t, 1)); /* done already: a late flush changes nothing */
    CHECK_EQ_INT(t.piece[1], RAIL_CH_DONE);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 2), 0);
    rail_2ph_piece_posted(&t, 0);              /* again, on another rail */
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 0), 1); /* the last: the record is due */
    CHECK_EQ_INT(t.left, 0);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 3), -1); /* out of range */
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, -1), -1);
    CHECK(!rail_2ph_done(&t));
    CHECK(!rail_2ph_record_ok(&t)); /* never posted */
    rail_2ph_record_wait(&t);       /* no rail up: waits */
    CHECK(!rail_2ph_record_failed(&t));
    rail_2ph_record_posted(&t);
    CHECK(rail_2ph_record_failed(&t));
    CHECK_EQ_INT(t.rec, RAIL_CH_PENDING);
    rail_2ph_record_posted(&t);
    CHECK(rail_2ph_record_ok(&t));
    CHECK(!rail_2ph_record_ok(&t)); /* duplicate */
    CHECK(rail_2ph_done(&t));
    /* An empty message: only the record. */
    rail_2ph_plan(&t, 1);
    rail_2ph_start(&t, true);
    CHECK(t.n == 0 && t.left == 0);
    CHECK_EQ_INT(rail_2ph_piece_ok(&t, 0), -1);
    rail_2ph_record_posted(&t);
    CHECK(rail_2ph_record_ok(&t) && rail_2ph_done(&t));
    /* The eager write: lost with its rail, but the receiver returned its slot. */
    rail_2ph_plan(&t, 0);
    rail_2ph_record_posted(&t);
    rail_2ph_record_settled(&t);
    CHECK(rail_2ph_done(&t));
    rail_2ph_plan(&t, 99);
    CHECK_EQ_INT(t.n, RAIL_REQ_CHUNKS);
}

/* ---- the simulated sender ---- */

#define NR    3
#define NMSG  3000
#define INFL  8 /* messages in flight */
#define MAXWR 512
#define REC   (-1)

struct msg {
    bool live;
    int id;
    uint64_t size;
    uint64_t off[RAIL_REQ_CHUNKS], len[RAIL_REQ_CHUNKS];
    int rail[RAIL_REQ_CHUNKS];
    uint8_t landed[RAIL_REQ_CHUNKS];   /* writes of the piece that reached the receiver */
    uint8_t done_cnt[RAIL_REQ_CHUNKS]; /* successful completions taken */
    struct rail_twophase t;
};

struct wr {
    int m, k, rail;
    bool flushed; /* its rail failed while it was in flight */
    bool dup;     /* a second delivery of the same completion */
};

struct sim {
    uint32_t seed;
    bool up[NR];
    struct msg m[INFL];
    struct wr wr[MAXWR];
    int nwr;
    int npending;
    int next_id, finished;
    uint8_t taken[NMSG]; /* records the receiver took */
    int bad, dups, flushes;
};

static uint32_t rnd(struct sim *s, uint32_t n)
{
    return (fuzz_step(&s->seed) >> 8) % n;
}

static int pick_up(struct sim *s, int from)
{
    for (int i = 0; i < NR; i++)
        if (s->up[(from + i) % NR])
            return (from + i) % NR;
    return -1;
}

static void add_wr(struct sim *s, int m, int k, int rail)
{
    if (s->nwr >= MAXWR) {
        s->bad++;
        return;
    }
    s->wr[s->nwr++] = (struct wr){m, k, rail, false, false};
}

/* The receiver gets the record: it takes the message once, and all of it must be there. */
static void record_lands(struct sim *s, struct msg *q)
{
    if (s->taken[q->id]++)
        return; /* a re-sent record: dropped by its sequence */
    for (int k = 0; k < q->t.n; k++)
        if (!q->landed[k]) {
            fprintf(stderr, "message %d taken before piece %d landed\n", q->id, k);
            s->bad++;
        }
}

static void record_now(struct sim *s, int mi, int prefer)
{
    int rail = pick_up(s, prefer);
    if (rail < 0) {
        rail_2ph_record_wait(&s->m[mi].t);
        s->npending++;
        return;
    }
    rail_2ph_record_posted(&s->m[mi].t);
    add_wr(s, mi, REC, rail);
}

static void start_msg(struct sim *s, int mi)
{
    struct msg *q = &s->m[mi];
    memset(q, 0, sizeof(*q));
    q->live = true;
    q->id = s->next_id++;
    int n = rnd(s, 8) == 0 ? 0 : 1 + (int)rnd(s, RAIL_REQ_CHUNKS);
    rail_2ph_plan(&q->t, n);
    uint64_t at = 0;
    for (int k = 0; k < n; k++) {
        q->off[k] = at;
        q->len[k] = 1 + rnd(s, 1 << 16);
        q->rail[k] = (int)rnd(s, NR);
        at += q->len[k];
    }
    q->size = at;
    rail_2ph_start(&q->t, n == 0);
    if (n == 0) {
        record_now(s, mi, 0);
        return;
    }
    for (int k = 0; k < n; k++) {
        if (s->up[q->rail[k]]) {
            rail_2ph_piece_posted(&q->t, k);
            add_wr(s, mi, k, q->rail[k]);
        } else { /* the post is refused: its rail is down */
            rail_2ph_piece_wait(&q->t, k);
            s->npending++;
        }
    }
}

static void complete(struct sim *s, struct wr w)
{
    struct msg *q = &s->m[w.m];
    bool ok = !w.flushed;
    if (w.k == REC) {
        if (ok || rnd(s, 2)) /* a flushed write may have landed or not */
            record_lands(s, q);
        if (ok) {
            bool taken = rail_2ph_record_ok(&q->t);
            if (taken == w.dup) /* a first completion is taken, a duplicate is not */
                s->bad++;
        } else if (rail_2ph_record_failed(&q->t)) {
            s->npending++;
        } else if (!w.dup) {
            s->bad++;
        }
        return;
    }
    if (ok || rnd(s, 2)) {
        /* Once the receiver took the message, NCCL may reuse its buffer: no data write may land
         * after that (only the record may be sent again). */
        if (s->taken[q->id]) {
            fprintf(stderr, "message %d: piece %d landed after the receiver took it\n", q->id, w.k);
            s->bad++;
        }
        q->landed[w.k]++;
    }
    if (ok) {
        int last = rail_2ph_piece_ok(&q->t, w.k);
        if ((last < 0) != w.dup)
            s->bad++;
        if (last < 0)
            return;
        q->done_cnt[w.k]++;
        if (last) {
            for (int k = 0; k < q->t.n; k++)
                if (q->t.piece[k] != RAIL_CH_DONE)
                    s->bad++; /* the record would go before a piece completed */
            record_now(s, w.m, w.rail);
        }
    } else if (rail_2ph_piece_failed(&q->t, w.k)) {
        s->npending++;
    } else if (!w.dup) {
        s->bad++;
    }
}

static void retry(struct sim *s)
{
    for (int mi = 0; mi < INFL && s->npending; mi++) {
        struct msg *q = &s->m[mi];
        if (!q->live)
            continue;
        for (int k = 0; k < q->t.n; k++) {
            if (q->t.piece[k] != RAIL_CH_PENDING)
                continue;
            int rail = pick_up(s, q->rail[k] + 1);
            if (rail < 0)
                return;
            q->rail[k] = rail;
            rail_2ph_piece_posted(&q->t, k);
            add_wr(s, mi, k, rail);
            s->npending--;
        }
        if (q->t.rec == RAIL_CH_PENDING) {
            int rail = pick_up(s, (int)rnd(s, NR));
            if (rail < 0)
                return;
            rail_2ph_record_posted(&q->t);
            add_wr(s, mi, REC, rail);
            s->npending--;
        }
    }
}

static void check_pending(struct sim *s)
{
    int n = 0;
    for (int mi = 0; mi < INFL; mi++) {
        const struct msg *q = &s->m[mi];
        if (!q->live)
            continue;
        for (int k = 0; k < q->t.n; k++)
            n += q->t.piece[k] == RAIL_CH_PENDING;
        n += q->t.rec == RAIL_CH_PENDING;
    }
    if (n != s->npending) {
        fprintf(stderr, "pending count %d, items pending %d\n", s->npending, n);
        s->bad++;
    }
}

static void finish(struct sim *s, int mi)
{
    struct msg *q = &s->m[mi];
    uint64_t at = 0;
    bool ok = s->taken[q->id] >= 1;
    for (int k = 0; k < q->t.n; k++) {
        ok = ok && q->done_cnt[k] == 1;
        at += q->len[k];
    }
    if (!ok || at != q->size) {
        fprintf(stderr, "message %d done but not delivered exactly once\n", q->id);
        s->bad++;
    }
    q->live = false;
    s->finished++;
}

static void step(struct sim *s)
{
    for (int mi = 0; mi < INFL; mi++)
        if (!s->m[mi].live && s->next_id < NMSG && rnd(s, 2) == 0)
            start_msg(s, mi);
    /* A rail fails: every write in flight on it completes with a flush error. */
    uint32_t ev = rnd(s, 200);
    int r = (int)rnd(s, NR);
    int nup = 0;
    for (int i = 0; i < NR; i++)
        nup += s->up[i];
    if (ev == 0 && s->up[r] && nup > 1) {
        s->up[r] = false;
        for (int i = 0; i < s->nwr; i++)
            if (s->wr[i].rail == r) {
                s->wr[i].flushed = true;
                s->flushes++;
            }
    } else if (ev < 4 && !s->up[r]) {
        s->up[r] = true; /* rejoined */
    }
    /* Completions in random order, sometimes twice in a row (before the item could be posted
     * again: a completion carries no attempt number, so a copy arriving after the re-post could
     * not be told from the new one's). */
    for (int c = (int)rnd(s, 4); c > 0 && s->nwr; c--) {
        int i = (int)rnd(s, (uint32_t)s->nwr);
        struct wr w = s->wr[i];
        s->wr[i] = s->wr[--s->nwr];
        complete(s, w);
        if (rnd(s, 16) == 0) {
            w.dup = true;
            s->dups++;
            complete(s, w);
        }
    }
    retry(s);
    check_pending(s);
    for (int mi = 0; mi < INFL; mi++) {
        struct msg *q = &s->m[mi];
        bool inflight = false;
        for (int i = 0; i < s->nwr && !inflight; i++)
            inflight = s->wr[i].m == mi;
        if (q->live && rail_2ph_done(&q->t) && !inflight)
            finish(s, mi);
    }
}

static void run(uint32_t seed)
{
    static struct sim sim; /* large: not on the stack */
    struct sim *s = &sim;
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    for (int r = 0; r < NR; r++)
        s->up[r] = true;
    long steps = 0;
    while (s->finished < NMSG && steps < 200L * NMSG && !s->bad) {
        step(s);
        steps++;
    }
    int once = 0;
    for (int i = 0; i < NMSG; i++)
        once += s->taken[i] >= 1;
    CHECK_MSG(s->bad == 0, "seed %u: %d violation(s)", seed, s->bad);
    CHECK_MSG(s->finished == NMSG && once == NMSG, "seed %u: %d of %d messages done (%ld steps)",
              seed, s->finished, NMSG, steps);
    CHECK_MSG(s->dups > 0 && s->flushes > 0, "seed %u: %d duplicates, %d flushes exercised", seed,
              s->dups, s->flushes);
}

int main(void)
{
    chosen();
    fuzz_seeds(run, 10, 2246822519u);
    return check_report("test_twophase");
}
