/* SPDX-License-Identifier: Apache-2.0 */
/* The receive side's inline fast answers against the general code they stand for, over many
 * seeded states of a receive comm built by hand:
 *   - rail_recv_flush_idle (protocol/net_recv_cts.h), the "nothing to flush" answer that lets
 *     irecv and the receive test skip rail_recv_flush_deferred, against the walk itself: one rail
 *     up, one QP whose posts go to a fake verbs table that counts them, 40,000 states around every
 *     boundary of the walk (held-back receives matched or not, their safety delay just over or
 *     not, the sender starved with or without credit to return, a CTS slot free or busy, the send
 *     queue full or not, the comm failed or not). Wherever the inline answer says idle, the walk
 *     must change nothing: no post, the same held-back list, the same FIFO tail.
 *   - rail_recv_image_at (protocol/net_recv_eager.h), the cursor's answer before the image walk,
 *     against rail_eager_ring_poll_slot and rail_image_peek: 40,000 ring states (cursor behind,
 *     inside and past the credit window, slots empty, arrived or consumed, the cursor's image slot
 *     holding this message's whole image, another message's, or zeros). A slot it returns is the
 *     one poll_slot returns, leaving the ring as it was; "none" means poll_slot returns the
 *     cursor's slot unchanged and peek finds nothing there.
 *   - rail_recv_irecv_quiet (protocol/net_recv.h), irecv's "no reason to poll", against what the
 *     progress it skips could do: every rail's every QP with no send WR out (the sum of sq_out
 *     over the QPs of 1-4 rails of 1-4 QPs, some rails without QPs, which the comm's sq_wrs
 *     counts; the CTS posts of the walk above check that count), and the retry hook with nothing
 *     to do (no CTS to write again, no query to answer, no image walk owed): 40,000 states, each
 *     reason alone in some of them.
 *   - a held-back receive's CTS entries, staged only when rail_recv_write_cts writes them (from
 *     the posted entries and the keys irecv kept), against rail_cts_stage + rail_cts_stage_seq
 *     (wire/cts_layout.c) of the same fields: 2,000 receives of 1-8 entries, 1-8 rails, both
 *     entry sizes, over a stage holding an older receive's entries; byte for byte. (Fails when
 *     rail_recv_write_cts does not stage.)
 *   - rail_recv_repost_owed (protocol/net_recv.h), the one-WR re-post in the caller's frame,
 *     against rail_recv_repost_walk, the general re-post it stands for: 100,000 states of 1-3
 *     rails of 1-3 QPs (some rails without QPs), each QP owing 0-3 receive WRs, rails up, ready
 *     (rejoining) or down, the owing QP recorded or not (-1: several), and the post failing
 *     (first post or none) on a fake verbs table; both run on copies of one state and must post
 *     the same WRs (QP and wr_id, in order) and leave the same counts, owes flag and comm error.
 *     Fails with the rq_owed == 1 or the rail-up condition dropped.
 *   - the receive test's completion handler on a one-rail comm (rail_recv_on_wc_one_rail: a
 *     direct rendezvous write taken in place) against the general handler alone
 *     (rail_recv_on_wc_general): 200,000 random completions (status, kind, opcode, flags,
 *     immediate: direct into a free, pending, done or too small entry, record, bad) on random
 *     states (rail up, ready or down; receive WRs owed up to the batch re-post; another QP or the
 *     same one owing; slots owned or not), each through both from the same state; the comm, its
 *     requests and the QP counters compared byte for byte. Fails with any condition of the
 *     in-place path dropped.
 * Each fails when any one condition of its fast answer is dropped; each checks that every answer
 * occurs. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XORSHIFT_SEED 0x2545f4914f6cdd1dull
#include "check.h"
#include "xorshift.h"
#include "fuzz.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_cts.h"
#include "protocol/net_recv_eager.h"
#include "transport/net_verbs.h"

static int g_posts;

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)qp, (void)wr, (void)bad;
    g_posts++;
    return 0;
}

static struct rail_recv_comm g_r;
static struct rail_recv_req_block g_blk;
static struct rail_qp g_qp;
static struct ibv_mr g_mr;
static uint8_t g_stage[RAIL_RECV_REQ_BLOCK * RAIL_RECV_STAGE(RAIL_CTS_COMPACT_BYTES)];

static void setup(void)
{
    g_r.base.nrails = 1;
    g_r.base.nqps = 1;
    g_r.base.link[0].qps = &g_qp;
    g_r.cts_bytes = RAIL_CTS_COMPACT_BYTES;
    g_r.blk[0] = &g_blk;
    g_blk.mr[0] = &g_mr;
    g_blk.stage = g_stage;
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
        g_blk.req[i].idx = (uint8_t)i;
        g_blk.req[i].blk = &g_blk;
        g_blk.req[i].stage = g_stage + (size_t)i * RAIL_RECV_STAGE(RAIL_CTS_COMPACT_BYTES);
    }
}

/* A random state of the held-back list, its receives, the eager ring, the FIFO and the QP. */
static void random_state(uint32_t *seed)
{
    uint32_t x = fuzz_step(seed) >> 8;
    const uint64_t now = 10 * RAIL_CTS_DEFER_NS;
    g_r.base.coarse_ns = now;
    atomic_store(&g_r.base.error, (x & 31) == 0 ? -5 : 0);
    g_r.base.link[0].rj.up = (x >> 5 & 15) != 0;
    g_qp.sq_max = 4;
    g_qp.sq_out = (x >> 9 & 7) == 0 ? 4 : 0;
    g_r.sq_wrs = g_qp.sq_out;
    memset(&g_r.fifo, 0, sizeof(g_r.fifo));
    g_r.fifo.tail = fuzz_step(seed) >> 20;
    if ((x >> 12 & 7) == 0) /* the next FIFO slot still taken */
        g_r.fifo.by_slot[g_r.fifo.tail % RAIL_FIFO_SLOTS] = &g_blk.req[RAIL_RECV_REQ_BLOCK - 1];
    /* The ring: 4 slots; arrived - credit_sent decides starved, freed == credit_sent stuck. */
    rail_eager_ring_init(&g_r.ring, 4);
    uint32_t y = fuzz_step(seed) >> 8;
    g_r.ring.credit_sent = y & 63;
    g_r.ring.arrived = g_r.ring.credit_sent + (y >> 6 & 7);
    g_r.ring.freed = g_r.ring.credit_sent + ((y >> 9 & 3) == 0 ? 1 : 0);
    if (g_r.ring.freed > g_r.ring.arrived)
        g_r.ring.freed = g_r.ring.arrived;
    /* 0..3 held-back receives, distinct, in posting order. */
    g_r.ndeferred = (int)(y >> 11 & 3);
    for (int k = 0; k < g_r.ndeferred; k++) {
        struct rail_recv_req *q = &g_blk.req[k];
        uint32_t z = fuzz_step(seed) >> 8;
        g_r.deferred[k] = (uint8_t)k;
        q->h.ops = (const struct rail_req_ops *)&g_r; /* live: any non-NULL table */
        q->n = 1;
        q->left = (z & 3) == 0 ? 0 : 1;
        q->has_slot = false;
        q->cts_pending = false;
        /* Posted within the delay, exactly at its end, just before, or long ago. */
        static const uint64_t age[] = {0,
                                       1,
                                       RAIL_CTS_DEFER_NS - 1,
                                       RAIL_CTS_DEFER_NS,
                                       RAIL_CTS_DEFER_NS + 1,
                                       5 * RAIL_CTS_DEFER_NS};
        q->defer_ns = now - age[(z >> 2) % 6];
    }
}

static void flush_idle(void)
{
    uint32_t seed = 27;
    int idle = 0, busy_posted = 0, busy_dropped = 0;
    for (int it = 0; it < 40000; it++) {
        random_state(&seed);
        bool said_idle = rail_recv_flush_idle(&g_r);
        int n0 = g_r.ndeferred;
        uint8_t list0[RAIL_RECV_REQS];
        memcpy(list0, g_r.deferred, sizeof(list0));
        uint64_t tail0 = g_r.fifo.tail;
        g_posts = 0;
        rail_recv_flush_deferred(&g_r);
        bool changed = g_posts != 0 || g_r.ndeferred != n0 || g_r.fifo.tail != tail0 ||
                       memcmp(list0, g_r.deferred, (size_t)n0) != 0;
        /* Every CTS posted is counted on its QP and on the comm (rail_recv_irecv_quiet). */
        CHECK_EQ_INT(g_r.sq_wrs, g_qp.sq_out);
        if (said_idle) {
            idle++;
            CHECK(!changed);
            if (changed) /* name the first state that breaks it */
                break;
        } else {
            busy_posted += g_posts != 0;
            busy_dropped += g_r.ndeferred < n0 && g_posts == 0;
        }
    }
    /* Both answers, and the walk at work where the inline answer leaves it. */
    CHECK(idle > 4000);
    CHECK(busy_posted > 1000);
    CHECK(busy_dropped > 500);
}

static uint64_t g_images[4 * RAIL_IMAGE_STRIDE / 8];

static void image_at(void)
{
    uint32_t seed = 2027;
    int answers[3] = {0, 0, 0}; /* none, walk, a slot */
    g_r.images = (uint8_t *)g_images;
    g_r.eager_bytes = 64;
    for (int it = 0; it < 40000; it++) {
        uint32_t x = fuzz_step(&seed) >> 4;
        rail_eager_ring_init(&g_r.ring, (x & 15) == 0 ? 0 : 4);
        struct rail_eager_ring *g = &g_r.ring;
        g->freed = 100 + (x >> 4 & 7);
        static const int off[] = {-2, -1, 0, 0, 1, 2, 3, 4, 5};
        g->poll_seq = g->freed + (uint64_t)(int64_t)off[(x >> 7) % 9];
        g->poll_b = g->slots ? (int)(g->poll_seq % (uint64_t)g->slots) : 0;
        for (int b = 0; b < g->slots; b++) {
            uint32_t y = fuzz_step(&seed) >> 8;
            g->state[b] = (y & 3) == 0   ? RAIL_BOUNCE_ARRIVED
                          : (y & 3) == 1 ? RAIL_BOUNCE_CONSUMED
                                         : RAIL_BOUNCE_EMPTY;
        }
        memset(g_images, 0, sizeof(g_images));
        uint32_t z = fuzz_step(&seed) >> 8;
        if (g->slots && (z & 3) != 0) { /* the cursor's image slot: this message, or another's */
            uint64_t seq = (z & 3) == 1 ? g->poll_seq + (uint64_t)g->slots : g->poll_seq;
            uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
            rail_image_encode(g_r.images + (size_t)g->poll_b * RAIL_IMAGE_STRIDE, seq, 7, 3,
                              payload, 1 + (z >> 2) % 8);
        }
        struct rail_eager_ring before = *g, walked = *g;
        int at = rail_recv_image_at(&g_r);
        int b = rail_eager_ring_poll_slot(&walked);
        bool same = memcmp(&walked, &before, sizeof(before)) == 0;
        if (at >= 0) {
            answers[2]++;
            CHECK(b == at && same);
        } else if (at == RAIL_IMAGE_NONE) {
            answers[0]++;
            struct rail_image_info in;
            char err[160];
            CHECK(g->slots == 0 ||
                  (b == before.poll_b && same &&
                   rail_image_peek(g_r.images + (size_t)b * RAIL_IMAGE_STRIDE, before.poll_seq,
                                   g_r.eager_bytes, &in, err, sizeof(err)) == 0));
        } else {
            CHECK_EQ_INT(at, RAIL_IMAGE_WALK);
            answers[1]++;
        }
    }
    CHECK(answers[0] > 4000 && answers[1] > 4000 && answers[2] > 4000);
}

static void irecv_quiet(void)
{
    uint32_t seed = 4242;
    static struct rail_qp qps[RAIL_MAX_RAILS][4];
    struct rail_recv_comm r;
    int quiet = 0, alone[4] = {0, 0, 0, 0}; /* busy for one reason only: sq, retry, query, repoll */
    for (int it = 0; it < 40000; it++) {
        memset(&r, 0, sizeof(r));
        memset(qps, 0, sizeof(qps));
        uint32_t x = fuzz_step(&seed) >> 4;
        r.base.nrails = 1 + (int)(x & 3);
        r.base.nqps = 1 + (int)(x >> 2 & 3);
        long sq = 0;
        for (int k = 0; k < r.base.nrails; k++) {
            uint32_t y = fuzz_step(&seed) >> 4;
            r.base.link[k].qps = (y & 7) == 0 ? NULL : qps[k];
            for (int q = 0; q < 4; q++) { /* QPs past nqps hold WRs the check must not see */
                qps[k][q].sq_out = (y >> (3 + 3 * q) & 7) == 0 ? 1 + (int)(y >> 20 & 3) : 0;
                qps[k][q].sq_max = 63;
                if (r.base.link[k].qps && q < r.base.nqps)
                    sq += qps[k][q].sq_out;
            }
        }
        r.sq_wrs = (int)sq;
        uint32_t z = fuzz_step(&seed) >> 4;
        r.nretry = (z & 7) == 0 ? 1 + (int)(z >> 3 & 1) : 0;
        r.nquery = (z >> 4 & 7) == 0 ? 1 : 0;
        r.repoll = (z >> 7 & 7) == 0;
        bool want = sq == 0 && r.nretry == 0 && r.nquery == 0 && !r.repoll;
        bool got = rail_recv_irecv_quiet(&r);
        CHECK(got == want);
        if (got != want)
            break;
        quiet += got;
        int reasons = (sq != 0) + (r.nretry != 0) + (r.nquery != 0) + r.repoll;
        if (reasons == 1)
            alone[sq ? 0 : r.nretry ? 1 : r.nquery ? 2 : 3]++;
    }
    CHECK(quiet > 2000);
    CHECK(alone[0] > 1000 && alone[1] > 500 && alone[2] > 500 && alone[3] > 500);
}

static uint8_t g_big_stage[RAIL_RECV_STAGE(RAIL_CTS_BYTES)];

static void staged_late(void)
{
    uint32_t seed = 99;
    int checked = 0;
    for (int it = 0; it < 2000; it++) {
        uint32_t x = fuzz_step(&seed) >> 4;
        unsigned bytes = (x & 1) ? RAIL_CTS_BYTES : RAIL_CTS_COMPACT_BYTES;
        struct rail_recv_req *q = &g_blk.req[0];
        memset(&g_r.fifo, 0, sizeof(g_r.fifo));
        g_r.fifo.tail = x >> 8 & 0xffff;
        g_r.cts_bytes = bytes;
        g_r.base.nrails = 1 + (int)(x >> 1 & 7);
        g_r.base.link[0].rj.up = true;
        atomic_store(&g_r.base.error, 0);
        g_qp.sq_max = 4;
        g_qp.sq_out = g_r.sq_wrs = 0;
        q->stage = g_big_stage;
        q->n = 1 + (int)(x >> 4 & 7);
        q->staged = false;
        q->has_slot = false;
        /* An older receive's entries in the stage: a staged one overwrites every field. */
        for (size_t k = 0; k < sizeof(g_big_stage); k++)
            g_big_stage[k] = (uint8_t)(fuzz_step(&seed) >> 9);
        uint8_t want[sizeof(g_big_stage)];
        memcpy(want, g_big_stage, sizeof(want));
        for (int i = 0; i < q->n; i++) {
            struct rail_recv_entry *e = &q->e[i];
            e->data = (uint8_t *)(uintptr_t)((uint64_t)fuzz_step(&seed) << 20 | 0x40);
            e->cap = fuzz_step(&seed) >> 3;
            e->tag = (int32_t)fuzz_step(&seed);
            e->tag_index = fuzz_step(&seed);
            for (int rl = 0; rl < RAIL_MAX_RAILS; rl++)
                e->rkey[rl] = fuzz_step(&seed);
            struct rail_cts c;
            memset(&c, 0, sizeof(c));
            c.addr = (uintptr_t)e->data;
            c.size = e->cap;
            c.tag = e->tag;
            c.tag_index = e->tag_index;
            c.nreqs = (uint16_t)q->n;
            c.entry = (uint16_t)i;
            memcpy(c.rkey, e->rkey, sizeof(c.rkey));
            rail_cts_stage(want + (size_t)i * bytes, bytes, &c, g_r.base.nrails);
            rail_cts_stage_seq(want + (size_t)i * bytes, bytes, g_r.fifo.tail + 1);
        }
        g_posts = 0;
        CHECK_EQ_INT(rail_recv_write_cts(&g_r, q), 0);
        CHECK_EQ_INT(g_posts, 1);
        CHECK(q->staged && q->has_slot);
        bool same = memcmp(want, g_big_stage, (size_t)q->n * bytes) == 0;
        CHECK(same);
        if (!same)
            break;
        checked++;
    }
    CHECK_EQ_INT(checked, 2000);
    g_r.base.nrails = 1;
    g_r.cts_bytes = RAIL_CTS_COMPACT_BYTES;
    g_blk.req[0].stage = g_stage;
}

/* ---- the lean re-post against the walk ---- */

#define RP_RAILS 3
#define RP_QPS   3
static struct {
    struct ibv_qp *qp; /* which QP (its fake handle) */
    uint64_t wr_id;
} g_rp_log[64];
static int g_rp_n, g_rp_fail_at; /* post number that fails (-1: none) */
static struct ibv_qp g_rp_handle[RP_RAILS][RP_QPS];

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    if (g_rp_n == g_rp_fail_at) {
        *bad = wr;
        return 5; /* EIO */
    }
    if (g_rp_n < 64) {
        g_rp_log[g_rp_n].qp = qp;
        g_rp_log[g_rp_n].wr_id = wr->wr_id;
    }
    g_rp_n++;
    return wr->next == NULL && wr->num_sge == 0 ? 0 : 22; /* one WR, no buffer */
}

struct rp_state {
    struct rail_recv_comm r;
    struct rail_qp qps[RP_RAILS][RP_QPS];
    struct rail_dev dev;
};

static void rp_fix(struct rp_state *s)
{
    for (int k = 0; k < RP_RAILS; k++) {
        if (s->r.base.link[k].qps)
            s->r.base.link[k].qps = s->qps[k];
        s->r.base.link[k].dev = &s->dev;
    }
}

static void repost_lean(void)
{
    static struct rp_state a, b;
    int lean = 0, walked = 0, failed = 0, posted_lean = 0;
    rail_log_set_logger(quiet); /* a failed re-post fails the comm with a WARN */
    for (int it = 0; it < 100000; it++) {
        memset(&a, 0, sizeof(a));
        snprintf(a.dev.name, sizeof(a.dev.name), "shm9");
        a.r.base.ops = &rail_recv_comm_ops;
        a.r.base.nrails = 1 + (int)rnd(RP_RAILS);
        a.r.base.nqps = 1 + (int)rnd(RP_QPS);
        for (int k = 0; k < a.r.base.nrails; k++) {
            struct rail_link *l = &a.r.base.link[k];
            l->qps = rnd(8) == 0 ? NULL : a.qps[k];
            unsigned st = rnd(6);
            l->rj.up = st < 4;
            l->rj.ready = st == 4;
            for (int q = 0; q < RP_QPS; q++) {
                a.qps[k][q].qp = &g_rp_handle[k][q];
                unsigned o = rnd(8);
                a.qps[k][q].rq_owed = o < 4 ? 1 : o < 6 ? 0 : (int)o - 4; /* mostly 1 */
                a.qps[k][q].rq_posted = (int)rnd(100);
            }
        }
        a.r.owes = rnd(6) != 0;
        a.r.owes_at = rnd(5) == 0 ? -1
                                  : (int)rnd((unsigned)a.r.base.nrails) * RAIL_MAX_QPS +
                                        (int)rnd((unsigned)a.r.base.nqps);
        int fail_at = rnd(6) == 0 ? 0 : -1;
        rp_fix(&a);
        b = a;
        rp_fix(&b);

        g_rp_fail_at = fail_at;
        g_rp_n = 0;
        rail_recv_repost_owed(&a.r);
        int na = g_rp_n;
        __typeof__(g_rp_log) log_a;
        memcpy(log_a, g_rp_log, sizeof(log_a));
        g_rp_n = 0;
        rail_recv_repost_walk(&b.r);
        int nb = g_rp_n;

        bool same = na == nb && a.r.owes == b.r.owes &&
                    atomic_load(&a.r.base.error) == atomic_load(&b.r.base.error) &&
                    memcmp(a.qps, b.qps, sizeof(a.qps)) == 0;
        for (int i = 0; same && i < na && i < 64; i++)
            same = log_a[i].qp == g_rp_log[i].qp && log_a[i].wr_id == g_rp_log[i].wr_id;
        for (int k = 0; same && k < RP_RAILS; k++)
            same = a.r.base.link[k].rj.up == b.r.base.link[k].rj.up &&
                   a.r.base.link[k].rj.ready == b.r.base.link[k].rj.ready;
        CHECK(same);
        if (!same) {
            fprintf(stderr, "repost_lean: state %d differs (posts %d / %d)\n", it, na, nb);
            break;
        }
        /* Coverage: one WR posted on the recorded QP (the lean path's case), or anything else. */
        int at = b.r.owes_at;
        posted_lean += na > 0;
        failed += atomic_load(&a.r.base.error) != 0;
        if (at >= 0 && na == 1 &&
            g_rp_log[0].qp == &g_rp_handle[at / RAIL_MAX_QPS][at % RAIL_MAX_QPS])
            lean++;
        else
            walked++;
    }
    CHECK(lean > 20000);
    CHECK(walked > 20000);
    CHECK(failed > 1000);
    CHECK(posted_lean > 30000);
    rail_log_set_logger(NULL);
}

/* ---- the one-rail completion handler against the general one ---- */

static struct rail_recv_comm g_w;
static struct rail_recv_req_block g_wblk;
static struct rail_qp g_wqps[2];
static struct rail_dev g_wdev;
static uint8_t g_wrec[RAIL_RECORDS_SIZE];

static void on_data(void)
{
    static struct rail_recv_comm c0, c1;
    static struct rail_recv_req_block b0, b1;
    struct rail_qp q0[2], q1[2];
    int inplace = 0, general = 0, failed = 0, completed = 0;
    rail_log_set_logger(quiet);
    g_rp_fail_at = -1;
    for (int it = 0; it < 200000; it++) {
        memset(&g_w, 0, sizeof(g_w));
        memset(&g_wblk, 0, sizeof(g_wblk));
        memset(g_wqps, 0, sizeof(g_wqps));
        snprintf(g_wdev.name, sizeof(g_wdev.name), "shm8");
        g_w.base.ops = &rail_recv_comm_ops;
        g_w.base.nrails = 1;
        g_w.base.nqps = 2;
        g_w.base.link[0].qps = g_wqps;
        g_w.base.link[0].dev = &g_wdev;
        unsigned st = rnd(8);
        g_w.base.link[0].rj.up = st < 6;
        g_w.base.link[0].rj.ready = st == 6;
        g_w.records = g_wrec;
        g_w.blk[0] = &g_wblk;
        for (int q = 0; q < 2; q++) {
            g_wqps[q].qp = &g_rp_handle[0][q];
            unsigned o = rnd(8);
            g_wqps[q].rq_owed = o < 5    ? (int)rnd(3)
                                : o == 5 ? RAIL_REPOST_BATCH - 1
                                         : RAIL_REPOST_BATCH - 2;
            g_wqps[q].rq_posted = 10 + (int)rnd(50);
            g_wqps[q].sq_out = (int)rnd(3);
            g_wqps[q].sq_max = 63;
        }
        g_w.sq_wrs = g_wqps[0].sq_out + g_wqps[1].sq_out;
        g_w.owes = rnd(2);
        g_w.owes_at = rnd(4) == 0 ? -1 : (int)rnd(2);
        for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
            struct rail_recv_req *q = &g_wblk.req[i];
            q->idx = (uint8_t)i;
            q->blk = &g_wblk;
            q->h.ops = rnd(4) ? (const struct rail_req_ops *)&g_w : NULL;
            q->n = 1 + (int)rnd(3);
            q->left = 0;
            for (int e = 0; e < q->n; e++) {
                q->e[e].done = rnd(4) == 0;
                q->e[e].cap = rnd(3) == 0 ? rnd(64) : 1u << 20;
                q->left += !q->e[e].done;
            }
            q->cts_pending = rnd(2);
        }
        for (int sl = 0; sl < 4; sl++) /* slots 0..3 owned by requests 0..3 or free */
            g_w.fifo.by_slot[sl] = rnd(4) ? &g_wblk.req[sl] : NULL;
        struct ibv_wc wc;
        memset(&wc, 0, sizeof(wc));
        unsigned k = rnd(16);
        int kind = k < 12 ? RAIL_WR_RECV : k < 14 ? RAIL_WR_CTS : k < 15 ? RAIL_WR_CREDIT : 77;
        int qp = (int)rnd(2);
        wc.wr_id = rail_wrid(kind, 0, qp, (int)rnd(RAIL_RECV_REQ_BLOCK + 1));
        wc.status =
            rnd(16) == 0 ? (rnd(2) ? IBV_WC_WR_FLUSH_ERR : IBV_WC_LOC_PROT_ERR) : IBV_WC_SUCCESS;
        wc.opcode = rnd(16) == 0 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
        wc.wc_flags = rnd(16) == 0 ? 0 : IBV_WC_WITH_IMM;
        unsigned slot = rnd(5), entry = rnd(4);
        unsigned im = rnd(8);
        uint32_t imm = im < 5    ? rail_imm_direct(slot, entry, 1 + rnd(100))
                       : im == 5 ? rail_imm_rdv(slot, entry)
                       : im == 6 ? (RAIL_IMM_DIRECT | slot << 3 | entry) /* size 0 */
                                 : (uint32_t)rnd(0x7fffffff);
        wc.imm_data = htonl(imm);
        /* From the same state through each handler. */
        c0 = g_w;
        b0 = g_wblk;
        memcpy(q0, g_wqps, sizeof(q0));
        rail_recv_on_wc_one_rail(&g_w, 0, &wc);
        c1 = g_w;
        b1 = g_wblk;
        memcpy(q1, g_wqps, sizeof(q1));
        bool took_inplace = g_w.base.link[0].rj.up && kind == RAIL_WR_RECV &&
                            wc.status == IBV_WC_SUCCESS && im < 5 && wc.opcode != IBV_WC_RECV &&
                            wc.wc_flags && q0[qp].rq_owed + 1 < RAIL_REPOST_BATCH &&
                            (!c0.owes || c0.owes_at == qp);
        g_w = c0;
        g_wblk = b0;
        memcpy(g_wqps, q0, sizeof(q0));
        rail_recv_on_wc_general(&g_w, 0, &wc);
        bool same = memcmp(&c1, &g_w, sizeof(g_w)) == 0 && memcmp(&b1, &g_wblk, sizeof(b1)) == 0 &&
                    memcmp(q1, g_wqps, sizeof(q1)) == 0;
        CHECK(same);
        if (!same) {
            fprintf(stderr, "on_data: completion %d differs (kind %d, imm %#x)\n", it, kind, imm);
            break;
        }
        inplace += took_inplace;
        general += !took_inplace;
        failed += atomic_load(&g_w.base.error) != 0;
        completed += took_inplace && !atomic_load(&g_w.base.error);
    }
    fprintf(stderr,
            "on_data: %d in place (%d completing an entry), %d general, %d failing the comm\n",
            inplace, completed, general, failed);
    CHECK(inplace > 30000 && general > 30000 && failed > 10000 && completed > 4000);
    rail_log_set_logger(NULL);
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    ops.post_recv = fake_post_recv;
    rail_verbs_set_ops(&ops);
    setup();
    flush_idle();
    image_at();
    irecv_quiet();
    staged_late();
    repost_lean();
    on_data();
    return check_report("test_recv_fast");
}
