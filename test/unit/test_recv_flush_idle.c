/* SPDX-License-Identifier: Apache-2.0 */
/* rail_recv_flush_idle (protocol/net_recv_cts.h), the inline "nothing to flush" answer that lets
 * irecv and the receive test skip rail_recv_flush_deferred, against the walk itself: a receive
 * comm built by hand (one rail up, one QP whose posts go to a fake verbs table that counts them)
 * is put in 40,000 seeded states around every boundary of the walk (held-back receives matched or
 * not, their safety delay just over or not, the sender starved with or without credit to return,
 * a CTS slot free or busy, the send queue full or not, the comm failed or not). Wherever the
 * inline answer says idle, the walk must change nothing: no post, the same held-back list, the
 * same FIFO tail. It fails when any one of the answer's conditions is dropped, and it checks that
 * both answers occur and that the walk does post and drop receives in the states the answer
 * leaves to it. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/net_recv_cts.h"
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

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    setup();

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
    return check_report("test_recv_flush_idle");
}
