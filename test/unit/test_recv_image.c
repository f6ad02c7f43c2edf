/* SPDX-License-Identifier: Apache-2.0 */
/* The receive test's lean path for a flagged eager image (rail_recv_image_lean,
 * protocol/net_recv_eager.h) against the general walk it stands for (rail_recv_poll_walk with
 * the receive under test), over 200,000 random states of a receive comm built by hand: rings of
 * 1-8 slots, the cursor anywhere in the credit window, the cursor's image slot holding this
 * message's image of 0-12 bytes with any of its words' flags wrong, or an older message's; eager
 * limits below and above the size; tags posted or not (the count below, at or above the index);
 * the receive under test live or not, with 1-3 entries, 0-3 of them left, entry 0 done or not,
 * its tag, index and capacity matching or not; other receives waiting for the same message; the
 * comm failed or not; the image slot's high water below or above this image; the sender starved
 * or not (the credit write posted through a fake verbs table), a credit in flight or not.
 *
 * Where the lean path takes the image, the comm (ring, image slots and their high water, sizes,
 * flags, every receive and its buffer, posts, the credit word, queue counts, error) must be
 * byte for byte what the walk leaves; where it declines, it must have changed nothing. Every
 * reason to decline occurs alone in some states, so the test fails with any condition of the
 * lean path dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_eager.h"
#include "transport/net_verbs.h"

#define XORSHIFT_SEED 0x9e3779b97f4a7c15ull
#include "xorshift.h"

#define SLOTS_MAX 8
#define NREQ      RAIL_RECV_REQ_BLOCK

static int g_posts;
static uint64_t g_credit_posted; /* the value the last credit write carried */

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)qp, (void)bad;
    g_posts++;
    g_credit_posted = *(const uint64_t *)(uintptr_t)wr->sg_list[0].addr;
    return 0;
}

static struct rail_recv_comm g_r;
static struct rail_recv_req_block g_blk;
static struct rail_qp g_qp;
static struct ibv_mr g_mr;
static uint64_t g_images[SLOTS_MAX * RAIL_IMAGE_STRIDE / 8];
static uint64_t g_staging[RAIL_STAGING_SIZE / 8];
static uint8_t g_data[NREQ][RAIL_MAX_RECVS][16];

/* What either path may change. */
struct snap {
    struct rail_eager_ring ring;
    bool polled[RAIL_EAGER_SLOTS];
    uint32_t msg_size[RAIL_EAGER_SLOTS];
    uint16_t image_hw[RAIL_EAGER_SLOTS];
    uint64_t images[sizeof(g_images) / 8];
    struct rail_recv_req req[NREQ];
    uint8_t data[NREQ][RAIL_MAX_RECVS][16];
    int error, posts, sq_out, sq_wrs;
    unsigned rr;
    uint64_t credit;
    bool repoll;
};

static void take(struct snap *s)
{
    memset(s, 0, sizeof(*s));
    s->ring = g_r.ring;
    memcpy(s->polled, g_r.polled, sizeof(s->polled));
    memcpy(s->msg_size, g_r.msg_size, sizeof(s->msg_size));
    memcpy(s->image_hw, g_r.image_hw, sizeof(s->image_hw));
    memcpy(s->images, g_images, sizeof(g_images));
    memcpy(s->req, g_blk.req, sizeof(s->req));
    memcpy(s->data, g_data, sizeof(g_data));
    s->error = atomic_load(&g_r.base.error);
    s->posts = g_posts;
    s->sq_out = g_qp.sq_out;
    s->sq_wrs = g_r.sq_wrs;
    s->rr = g_r.base.link[0].rr;
    s->credit = g_credit_posted;
    s->repoll = g_r.repoll;
}

static bool same(const struct snap *a, const struct snap *b)
{
    return memcmp(&a->ring, &b->ring, sizeof(a->ring)) == 0 &&
           memcmp(a->polled, b->polled, sizeof(a->polled)) == 0 &&
           memcmp(a->msg_size, b->msg_size, sizeof(a->msg_size)) == 0 &&
           memcmp(a->image_hw, b->image_hw, sizeof(a->image_hw)) == 0 &&
           memcmp(a->images, b->images, sizeof(a->images)) == 0 &&
           memcmp(a->req, b->req, sizeof(a->req)) == 0 &&
           memcmp(a->data, b->data, sizeof(a->data)) == 0 && a->error == b->error &&
           a->posts == b->posts && a->sq_out == b->sq_out && a->sq_wrs == b->sq_wrs &&
           a->rr == b->rr && a->credit == b->credit && a->repoll == b->repoll;
}

/* One in n. */
static bool one_in(unsigned n)
{
    return rnd(n) == 0;
}

/* The state of seed `seed` (built again from it for the second path). Returns the cursor's
 * slot as rail_recv_image_at gives it. */
static int build(uint64_t seed)
{
    g_rng = seed;
    rail_tagmap_free(&g_r.posted);
    rail_tagmap_init(&g_r.posted);
    static const int nslots[] = {1, 2, 3, 4, 4, 4, 8};
    rail_eager_ring_init(&g_r.ring, nslots[rnd(7)]);
    struct rail_eager_ring *g = &g_r.ring;
    int n = g->slots;
    g->freed = 1000 + rnd(50);
    g->free_b = (int)(g->freed % (uint64_t)n);
    g->poll_seq = g->freed + rnd((unsigned)n);
    g->poll_b = (int)(g->poll_seq % (uint64_t)n);
    for (int b = 0; b < n; b++) /* behind the cursor: found; after it: mostly nothing yet */
        g->state[b] = one_in(3) ? (uint8_t)(1 + rnd(2)) : RAIL_BOUNCE_EMPTY;
    g->state[g->poll_b] = RAIL_BOUNCE_EMPTY;
    g->arrived = g->freed + (g->poll_seq - g->freed) + rnd(2);
    g->credit_sent = g->freed - (one_in(2) ? 0 : rnd((unsigned)n + 1));
    g->credit_acked = g->credit_sent;
    g->credit_busy = one_in(4);
    g->nunexp = 0;
    g_r.eager_bytes = one_in(12) ? 4 : one_in(2) ? 8 : 64;
    atomic_store(&g_r.base.error, one_in(25) ? -EIO : 0);
    g_r.repoll = false;
    g_qp.sq_max = 4;
    g_qp.sq_out = one_in(8) ? 4 : 0;
    g_r.sq_wrs = g_qp.sq_out;
    g_r.base.link[0].rr = 0;
    g_posts = 0;
    g_credit_posted = 0;

    /* The images: every slot zeros or an old message's words; the cursor's mostly its own. */
    memset(g_images, 0, sizeof(g_images));
    for (int b = 0; b < n; b++) {
        g_r.polled[b] = one_in(8);
        g_r.msg_size[b] = rnd(100);
        g_r.image_hw[b] = (uint16_t)(8 * rnd(10));
    }
    uint8_t payload[12];
    for (int k = 0; k < 12; k++)
        payload[k] = (uint8_t)rnd(256);
    static const uint32_t sizes[] = {8, 8, 8, 8, 0, 1, 3, 4, 5, 7, 9, 12};
    uint32_t size = sizes[rnd(12)];
    int32_t tag = (int32_t)rnd(3);
    uint32_t index = rnd(4);
    uint64_t *img = g_images + (size_t)g->poll_b * RAIL_IMAGE_STRIDE / 8;
    uint64_t seq = one_in(15) ? g->poll_seq - (uint64_t)n : g->poll_seq;
    rail_image_encode(img, seq, tag, index, payload, size);
    if (one_in(15)) /* word 0 stays right (the cursor's answer), another one is not */
        img[1 + rnd(4)] &= 0xffffffffu;
    if (one_in(40)) /* a stale word 0 */
        img[0] &= 0xffffffffu;

    /* The posted counts of the three tags. */
    for (int32_t t = 0; t < 3; t++) {
        unsigned count = t == tag && !one_in(10) ? index + 1 + rnd(3) : rnd(6);
        for (unsigned k = 0; k < count; k++) {
            uint32_t ignored;
            CHECK_EQ_INT(rail_tagmap_next(&g_r.posted, t, &ignored), 0);
        }
    }
    if (one_in(2)) { /* the last tag counted is this one (the inline answer), or another */
        uint32_t ignored;
        (void)rail_tagmap_get(&g_r.posted, tag);
        rail_tagmap_next(&g_r.posted, tag, &ignored);
    }

    /* The receives: the one under test (0), others posted or free. */
    memset(g_data, 0xa5, sizeof(g_data));
    g_r.ndeferred = 0;
    for (int j = 0; j < NREQ; j++) {
        struct rail_recv_req *q = &g_blk.req[j];
        q->h.ops = j == 0 ? (one_in(30) ? NULL : (const struct rail_req_ops *)&g_r)
                          : (one_in(3) ? (const struct rail_req_ops *)&g_r : NULL);
        q->h.comm = &g_r.base;
        q->n = 1 + (one_in(4) ? (int)rnd(3) : 0);
        q->left = one_in(8) ? (int)rnd(4) : 1;
        q->error = 0;
        q->cts_pending = false;
        for (int i = 0; i < RAIL_MAX_RECVS; i++) {
            struct rail_recv_entry *e = &q->e[i];
            e->data = g_data[j][i];
            static const uint64_t caps[] = {0, 4, 7, 8, 16, 16};
            e->cap = one_in(6) ? caps[rnd(6)] : 16;
            e->size = 0;
            e->done = one_in(6);
            bool match = j == 0 ? !one_in(12) : one_in(4);
            e->tag = match ? tag : (int32_t)rnd(3);
            e->tag_index = match ? index : rnd(4);
        }
        if (j > 0 && q->h.ops && one_in(3))
            g_r.deferred[g_r.ndeferred++] = (uint8_t)j;
    }
    if (one_in(5)) /* the receive under test held back too */
        g_r.deferred[g_r.ndeferred++] = 0;
    return rail_recv_image_at(&g_r);
}

static void setup(void)
{
    g_r.base.ops = &rail_recv_comm_ops;
    g_r.base.nrails = 1;
    g_r.base.nqps = 1;
    g_r.base.link[0].qps = &g_qp;
    g_r.base.link[0].rj.up = true;
    g_r.base.link[0].mr[2] = &g_mr;
    g_r.images = (uint8_t *)g_images;
    g_r.staging = (uint8_t *)g_staging;
    g_r.cts_bytes = RAIL_CTS_COMPACT_BYTES;
    g_r.blk[0] = &g_blk;
    for (int i = 0; i < NREQ; i++) {
        g_blk.req[i].idx = (uint8_t)i;
        g_blk.req[i].blk = &g_blk;
    }
    rail_tagmap_init(&g_r.posted);
}

static void compare(void)
{
    int taken = 0, declined = 0, at_none = 0, credits = 0, fails = 0;
    for (int it = 0; it < 200000; it++) {
        uint64_t seed = 0x1234567ull + (uint64_t)it * 0x9e3779b97f4a7c15ull;
        int at = build(seed);
        if (at < 0) {
            at_none++;
            continue;
        }
        struct snap before, lean, walk;
        take(&before);
        bool took = rail_recv_image_lean(&g_r, &g_blk.req[0], at);
        take(&lean);
        if (!took) {
            declined++;
            bool unchanged = same(&before, &lean);
            CHECK(unchanged);
            if (!unchanged && ++fails > 3)
                break;
            continue;
        }
        taken++;
        credits += lean.posts;
        CHECK_EQ_INT(build(seed), at);
        rail_recv_poll_walk(&g_r, &g_blk.req[0], at);
        take(&walk);
        bool eq = same(&lean, &walk);
        CHECK(eq);
        CHECK_EQ_INT(walk.req[0].left, 0);
        if (!eq && ++fails > 3)
            break;
    }
    /* Both answers, the credit write on the lean path, and the cursor elsewhere. */
    CHECK(taken > 20000);
    CHECK(declined > 40000);
    CHECK(credits > 1000);
    CHECK(at_none > 1000);
}

/* Every reason to decline alone: a state the lean path would take, then one thing changed. */
static void each_reason(void)
{
    static const char *const why[] = {
        "word 1 flag", "word 2 flag",  "word 3 flag",   "size cap",
        "eager limit", "request dead", "not last left", "entry done",
        "tag",         "index",        "capacity",      "failed",
        "unposted",    "word 0 flag",  "word 4 flag",   "tag not counted last"};
    enum { NWHY = sizeof(why) / sizeof(why[0]) };
    for (int w = 0; w < NWHY; w++) {
        int checked = 0;
        for (int it = 0; it < 20000 && checked < 50; it++) {
            uint64_t seed = 0xabcdefull + (uint64_t)it * 0x2545f4914f6cdd1dull;
            int at = build(seed);
            if (at < 0)
                continue;
            uint32_t size = (uint32_t)g_images[(size_t)at * RAIL_IMAGE_STRIDE / 8];
            if (!rail_recv_image_lean(&g_r, &g_blk.req[0], at))
                continue;
            struct snap before;
            /* Rebuild and break one condition. */
            CHECK_EQ_INT(build(seed), at);
            uint64_t *img = g_images + (size_t)at * RAIL_IMAGE_STRIDE / 8;
            struct rail_recv_req *q = &g_blk.req[0];
            switch (w) {
            case 0:
                img[1] &= 0xffffffffu;
                break;
            case 1:
                img[2] &= 0xffffffffu;
                break;
            case 2:
                if (size == 0)
                    continue;
                img[3] &= 0xffffffffu;
                break;
            case 13: /* rail_recv_image_at saw it whole; the lean path reads it again */
                img[0] &= 0xffffffffu;
                break;
            case 14:
                if (size <= 4)
                    continue;
                img[4] &= 0xffffffffu;
                break;
            case 3: {
                uint8_t p[12] = {0};
                rail_image_encode(img, g_r.ring.poll_seq, q->e[0].tag, q->e[0].tag_index, p, 12);
                g_r.eager_bytes = 64;
                q->e[0].cap = 16;
                break;
            }
            case 4:
                if (size == 0)
                    continue;
                g_r.eager_bytes = size - 1;
                break;
            case 5:
                q->h.ops = NULL;
                break;
            case 6:
                q->left = 2;
                break;
            case 7:
                q->e[0].done = true;
                break;
            case 8:
                q->e[0].tag ^= 8;
                break;
            case 9:
                q->e[0].tag_index ^= 8;
                break;
            case 10:
                if (size == 0)
                    continue;
                q->e[0].cap = size - 1;
                break;
            case 11:
                atomic_store(&g_r.base.error, -EIO);
                break;
            case 15: { /* posted, but another tag counted since: only the walk looks it up */
                uint32_t ignored;
                rail_tagmap_next(&g_r.posted, q->e[0].tag ^ 4, &ignored);
                break;
            }
            case 12: {
                /* The index at the posted count: an unexpected message. */
                rail_tagmap_free(&g_r.posted);
                rail_tagmap_init(&g_r.posted);
                uint32_t ignored;
                for (uint32_t k = 0; k < q->e[0].tag_index; k++)
                    rail_tagmap_next(&g_r.posted, q->e[0].tag, &ignored);
                break;
            }
            }
            take(&before);
            bool declined = !rail_recv_image_lean(&g_r, q, at);
            struct snap after;
            take(&after);
            if (!declined || !same(&before, &after)) {
                CHECK(declined);
                fprintf(stderr, "lean path took an image with its %s condition broken\n", why[w]);
                break;
            }
            checked++;
        }
        if (checked < 50)
            fprintf(stderr, "%s: %d states\n", why[w], checked);
        CHECK(checked >= 50);
    }
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet); /* the walk's failures log a line each */
    setup();
    compare();
    each_reason();
    rail_tagmap_free(&g_r.posted);
    rail_log_set_logger(NULL);
    return check_report("test_recv_image");
}
