/* SPDX-License-Identifier: Apache-2.0 */
/* The receive test's one-word image look-up (ring.watch, rail_recv_watch_set in
 * protocol/net_recv_eager.h) against the full look-up it stands for (rail_recv_image_at, which
 * rail_recv_poll_found runs when ring.watch is NULL). Two receive comms built by hand, A and B,
 * go through the same random run of steps: a sender writes eager messages into the credit window
 * (flagged images, sometimes with one word landing a step later, or bounce slots whose completion
 * comes a few steps later), receives are posted (irecv's matching of unexpected arrivals), receive
 * tests poll the images for a live receive or none (the progress of irecv and of the retry hook),
 * completions arrive (rail_recv_on_eager), and finished receives are freed. A keeps ring.watch as
 * the plugin does; B has it cleared before every step, so every look-up of B is the full one (the
 * path before ring.watch). After every step the two comms (ring less ring.watch and
 * ring.watch_flag, image slots and their high water, sizes, flags, receives and their buffers,
 * credit writes, error) must be byte for byte the same, and A's ring.watch must be NULL or what
 * rail_recv_watch_set writes for its ring as it is. Rings of 1-8 slots, 1,000 runs of 400 steps;
 * the look-ups by one word (none found, an image found) and the full ones must all occur. Runs go
 * apart with either term of rail_recv_watch_set's condition dropped, without the set after the
 * walk or after the take's general release, without the clear on an arrival by completion, and
 * with the take's usual release (net_recv_eager.h) taken with its slot-state term dropped or
 * setting the old slot or flag (its other term, and the rest of the take: test_recv_image). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_eager.h"
#include "transport/net_verbs.h"

#define XORSHIFT_SEED 0x5851f42d4c957f2dull
#include "xorshift.h"

#define SLOTS_MAX 8
#define NREQ      RAIL_RECV_REQ_BLOCK
#define EAGER_MAX 16 /* the eager limit: images of 0-12 bytes */
#define STRIDE    (RAIL_EAGER_HDR + EAGER_MAX)

struct world {
    struct rail_recv_comm r;
    struct rail_recv_req_block blk;
    struct rail_qp qp;
    struct ibv_mr mr;
    uint64_t bounce[(SLOTS_MAX * STRIDE + 63) / 8 + SLOTS_MAX * RAIL_IMAGE_STRIDE / 8 + 8];
    uint64_t staging[RAIL_STAGING_SIZE / 8];
    uint8_t data[NREQ][16];
    uint64_t order[NREQ]; /* when each receive was posted */
    uint64_t nposted;
    int posts;
    uint64_t credit;
};

static struct world g_w[2];
static struct world *g_cur; /* the world whose step runs (the fake post's owner) */

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)qp, (void)bad;
    g_cur->posts++;
    g_cur->credit = *(const uint64_t *)(uintptr_t)wr->sg_list[0].addr;
    return 0;
}

static void setup(struct world *w, int slots)
{
    rail_tagmap_free(&w->r.posted);
    memset(w, 0, sizeof(*w));
    struct rail_recv_comm *r = &w->r;
    r->base.ops = &rail_recv_comm_ops;
    r->base.nrails = 1;
    r->base.nqps = 1;
    r->base.link[0].qps = &w->qp;
    r->base.link[0].rj.up = true;
    r->base.link[0].mr[2] = &w->mr;
    w->qp.sq_max = 64;
    r->bounce = (uint8_t *)w->bounce;
    r->slot_stride = STRIDE;
    r->images = r->bounce + rail_image_region_off(slots, STRIDE);
    r->staging = (uint8_t *)w->staging;
    r->cts_bytes = RAIL_CTS_COMPACT_BYTES;
    r->eager_bytes = EAGER_MAX;
    r->peer_eager_limit = EAGER_MAX;
    r->blk[0] = &w->blk;
    r->nfree = NREQ;
    for (int i = 0; i < NREQ; i++) {
        w->blk.req[i].idx = (uint8_t)i;
        w->blk.req[i].blk = &w->blk;
        w->blk.req[i].h.comm = &r->base;
        r->free_list[i] = (uint8_t)(NREQ - 1 - i);
    }
    rail_tagmap_init(&r->posted);
    rail_eager_ring_init(&r->ring, slots);
}

/* The state both comms must share (ring.watch aside). */
static bool same(struct world *a, struct world *b)
{
    struct rail_eager_ring ga = a->r.ring, gb = b->r.ring;
    ga.watch = gb.watch = NULL;
    ga.watch_flag = gb.watch_flag = 0;
    for (int i = 0; i < NREQ; i++) /* the only pointers: into each world */
        if (!a->blk.req[i].h.ops != !b->blk.req[i].h.ops || a->blk.req[i].n != b->blk.req[i].n ||
            a->blk.req[i].left != b->blk.req[i].left ||
            a->blk.req[i].error != b->blk.req[i].error ||
            a->blk.req[i].e[0].size != b->blk.req[i].e[0].size ||
            a->blk.req[i].e[0].done != b->blk.req[i].e[0].done ||
            a->blk.req[i].e[0].tag != b->blk.req[i].e[0].tag ||
            a->blk.req[i].e[0].tag_index != b->blk.req[i].e[0].tag_index)
            return false;
    return memcmp(&ga, &gb, sizeof(ga)) == 0 &&
           memcmp(a->r.polled, b->r.polled, sizeof(a->r.polled)) == 0 &&
           memcmp(a->r.msg_size, b->r.msg_size, sizeof(a->r.msg_size)) == 0 &&
           memcmp(a->r.image_hw, b->r.image_hw, sizeof(a->r.image_hw)) == 0 &&
           memcmp(a->bounce, b->bounce, sizeof(a->bounce)) == 0 &&
           memcmp(a->data, b->data, sizeof(a->data)) == 0 && a->r.nfree == b->r.nfree &&
           memcmp(a->r.free_list, b->r.free_list, sizeof(a->r.free_list)) == 0 &&
           a->r.repoll == b->r.repoll && a->posts == b->posts && a->credit == b->credit &&
           atomic_load(&a->r.base.error) == atomic_load(&b->r.base.error);
}

/* ring.watch NULL or what rail_recv_watch_set writes now. */
static bool watch_ok(struct world *w)
{
    struct rail_eager_ring *g = &w->r.ring;
    if (!g->watch)
        return true;
    const uint64_t *watch = g->watch;
    uint32_t flag = g->watch_flag;
    rail_recv_watch_set(&w->r);
    bool ok = g->watch == watch && g->watch_flag == flag;
    g->watch = watch;
    g->watch_flag = flag;
    return ok;
}

/* The sender: message numbers sent, per-tag counts, bounce completions not delivered yet, and a
 * word of an image still to land. */
struct sender {
    uint64_t sent;
    uint32_t count[3];
    unsigned pending[64];
    int npending;
    int late_slot, late_word;
    uint64_t late_value;
};

static int g_none_fast, g_found_fast, g_full, g_taken, g_taken_behind;

/* One step on world w (all choices from the seed: the same for both worlds). */
static void step(struct world *w, struct sender *s, uint64_t seed, bool clear)
{
    struct rail_recv_comm *r = &w->r;
    g_cur = w;
    g_rng = seed;
    if (clear)
        r->ring.watch = NULL;
    unsigned kind = rnd(10);
    int slots = r->ring.slots;
    if (kind < 3) { /* the sender writes the next message, if the window has room */
        if (s->late_slot >= 0 || s->sent >= r->ring.freed + (uint64_t)slots)
            return;
        uint64_t seq = s->sent++;
        unsigned b = (unsigned)(seq % (uint64_t)slots);
        int32_t tag = rnd(4) ? 0 : (int32_t)rnd(3); /* mostly one tag, as NCCL's */
        uint32_t index = s->count[tag]++;
        static const uint32_t sizes[] = {8, 8, 8, 0, 1, 4, 5, 12};
        uint32_t size = sizes[rnd(8)];
        uint8_t payload[12];
        for (int k = 0; k < 12; k++)
            payload[k] = (uint8_t)rnd(256);
        if (rnd(4) == 0) { /* by a bounce slot: its completion comes later */
            struct rail_eager_hdr *h = (struct rail_eager_hdr *)(r->bounce + (size_t)b * STRIDE);
            h->tag = tag;
            h->tag_index = index;
            h->size = size;
            h->seq = seq;
            memcpy((uint8_t *)h + RAIL_EAGER_HDR, payload, size);
            s->pending[s->npending++] = b;
            return;
        }
        uint64_t *img = (uint64_t *)(r->images + (size_t)b * RAIL_IMAGE_STRIDE);
        uint64_t words[RAIL_IMAGE_HDR_WORDS + 3];
        rail_image_encode_any(words, seq, tag, index, payload, size);
        int n = (int)(rail_image_bytes(size) / 8);
        int late = rnd(3) == 0 ? (int)rnd((unsigned)n) : -1; /* one word lands a step later */
        for (int k = 0; k < n; k++)
            if (k != late)
                __atomic_store_n(&img[k], words[k], __ATOMIC_RELAXED);
        if (late >= 0) {
            s->late_slot = (int)b;
            s->late_word = late;
            s->late_value = words[late];
        }
    } else if (kind == 3) { /* the late word lands */
        if (s->late_slot < 0)
            return;
        uint64_t *img = (uint64_t *)(r->images + (size_t)s->late_slot * RAIL_IMAGE_STRIDE);
        __atomic_store_n(&img[s->late_word], s->late_value, __ATOMIC_RELAXED);
        s->late_slot = -1;
    } else if (kind == 4) { /* a bounce completion */
        if (!s->npending)
            return;
        unsigned b = s->pending[0];
        memmove(s->pending, s->pending + 1, sizeof(s->pending[0]) * (size_t)--s->npending);
        rail_recv_on_eager(r, b);
    } else if (kind < 7) { /* irecv: a receive posted, unexpected arrivals matched */
        if (r->nfree == 0)
            return;
        int32_t tag = rnd(4) ? 0 : (int32_t)rnd(3);
        struct rail_recv_req *q = rail_recv_req_at(r, r->free_list[--r->nfree]);
        w->order[q->idx] = w->nposted++;
        q->h.ops = (const struct rail_req_ops *)r; /* live */
        q->n = q->left = 1;
        q->error = 0;
        struct rail_recv_entry *e = &q->e[0];
        e->data = w->data[q->idx];
        e->cap = 16;
        e->size = 0;
        e->tag = tag;
        e->done = false;
        CHECK_EQ_INT(rail_tagmap_next(&r->posted, tag, &e->tag_index), 0);
        if (r->ring.nunexp)
            rail_recv_match_unexpected(r, q, 0);
    } else { /* a receive test (its look-up), or the progress with no receive (NULL) */
        struct rail_recv_req *q = NULL;
        unsigned j = rnd(NREQ + 2);
        if (j < NREQ && w->blk.req[j].h.ops)
            q = &w->blk.req[j];
        if (rnd(4)) /* mostly the oldest receive, as NCCL tests them */
            for (int i = 0; i < NREQ; i++)
                if (w->blk.req[i].h.ops && (!q || w->order[i] < w->order[q->idx]))
                    q = &w->blk.req[i];
        if (!clear) {
            const uint64_t *wa = r->ring.watch;
            if (!wa)
                g_full++;
            else if ((uint32_t)(__atomic_load_n(wa, __ATOMIC_RELAXED) >> 32) != r->ring.watch_flag)
                g_none_fast++;
            else
                g_found_fast++;
            /* The one-word answer is rail_recv_image_at's. */
            if (wa) {
                int at = rail_recv_image_at(r);
                bool none =
                    (uint32_t)(__atomic_load_n(wa, __ATOMIC_RELAXED) >> 32) != r->ring.watch_flag;
                CHECK(none ? at == RAIL_IMAGE_NONE : at == r->ring.poll_b);
            }
        }
        int left = q ? q->left : 0;
        bool behind = r->ring.free_b != r->ring.poll_b; /* an older message not released */
        rail_recv_poll_images(r, q);
        if (q && left && !q->left && !clear) {
            g_taken++;
            g_taken_behind += behind;
        }
        if (q && q->left == 0) { /* its test reports it: freed */
            q->h.ops = NULL;
            r->free_list[r->nfree++] = q->idx;
        }
    }
}

static void run(uint64_t seed, int *fails)
{
    g_rng = seed;
    static const int nslots[] = {1, 2, 3, 4, 4, 8};
    int slots = nslots[rnd(6)];
    struct sender sa, sb;
    memset(&sa, 0, sizeof(sa));
    sa.late_slot = -1;
    sb = sa;
    setup(&g_w[0], slots);
    setup(&g_w[1], slots);
    for (int k = 0; k < 400; k++) {
        uint64_t s = seed * 0x2545f4914f6cdd1dull + (uint64_t)k * 0x9e3779b97f4a7c15ull + 1;
        step(&g_w[0], &sa, s, false);
        step(&g_w[1], &sb, s, true);
        bool eq = same(&g_w[0], &g_w[1]), ok = watch_ok(&g_w[0]);
        if (!eq || !ok) { /* the rest of the run follows from here: on to the next */
            if (++*fails <= 3)
                fprintf(stderr, "run %llu step %d: states %s, watch %s\n", (unsigned long long)seed,
                        k, eq ? "same" : "differ", ok ? "ok" : "stale");
            return;
        }
    }
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet);
    int fails = 0;
    for (uint64_t it = 0; it < 1000; it++)
        run(0x1234 + it, &fails);
    fprintf(stderr,
            "look-ups: %d none by one word, %d found by one word, %d full; %d taken (%d with an "
            "older message not released)\n",
            g_none_fast, g_found_fast, g_full, g_taken, g_taken_behind);
    fprintf(stderr, "runs that went apart: %d of 1000\n", fails);
    CHECK_EQ_INT(fails, 0);
    CHECK(g_none_fast > 10000);
    CHECK(g_found_fast > 2000);
    CHECK(g_full > 2000);
    CHECK(g_taken > 1000);
    CHECK(g_taken_behind > 100);
    rail_tagmap_free(&g_w[0].r.posted);
    rail_tagmap_free(&g_w[1].r.posted);
    rail_log_set_logger(NULL);
    return check_report("test_recv_watch");
}
