/* SPDX-License-Identifier: Apache-2.0 */
/* rail_send_on_wc (net_send_post.c) takes the common completion (a successful WR of a request in
 * flight, not a query) on a fast path and hands everything else to rail_send_on_wc_general. The
 * fast path must leave exactly the state the general path leaves: a send comm with one block of
 * requests in random states (kinds, pieces, records, unsure, freed) takes random completions
 * (kinds, request indexes in and out of range, chunks, statuses), each once through each path from
 * the same state, and the two results are compared byte for byte (comm, request block, QP
 * counters). Without failover and with no rail up nothing is posted (a due record waits), so no QP
 * is needed. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "protocol/net_comm.h"
#include "protocol/net_send_post.h"

#define XORSHIFT_SEED 0x9e3779b97f4a7c15ull
#include "xorshift.h"

static const struct rail_req_ops k_ops; /* any table: in flight */

#define NQPS 2

static struct rail_send_comm *g_s;
static struct rail_send_req_block *g_blk;
static struct rail_qp g_qps[NQPS];

static void randomize(void)
{
    struct rail_send_comm *s = g_s;
    for (int q = 0; q < NQPS; q++)
        g_qps[q].sq_out = (int)rnd(4) + 4;
    s->base.link[0].cq_work = (int)rnd(4) + 8;
    atomic_store(&s->base.error, rnd(4) == 0 ? -EIO : 0);
    s->n2ph = (int)rnd(4) + 4;
    s->npending = (int)rnd(3);
    s->nunsure = (int)rnd(3);
    for (int i = 0; i < RAIL_FIFO_SLOTS; i++)
        s->slot_busy[i] = (uint16_t)(rnd(3) + 3);
    for (int i = 0; i < RAIL_EAGER_SLOTS; i++)
        s->bounce_busy[i] = (uint16_t)rnd(3);
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        struct rail_send_req *q = &g_blk->req[i];
        static const uint8_t kinds[] = {0, RAIL_SREQ_PIPE, RAIL_SREQ_2PH, RAIL_SREQ_EAGER};
        q->h.ops = rnd(5) == 0 ? NULL : &k_ops;
        q->kind = kinds[rnd(4)];
        q->wrs_left = (int)rnd(3) + 1;
        q->error = rnd(5) == 0 ? -EIO : 0;
        q->unsure = (uint8_t)rnd(4);
        q->unsure_rail = 0;
        q->seq = rnd(1000);
        q->bounce = rnd(RAIL_EAGER_SLOTS);
        q->tp.n = (uint8_t)rnd(4);
        q->tp.left = (uint8_t)rnd(q->tp.n + 1u);
        q->tp.rec = (uint8_t)rnd(4);
        for (int k = 0; k < RAIL_REQ_CHUNKS; k++)
            q->tp.piece[k] = (uint8_t)rnd(4);
        for (int k = 0; k < RAIL_REQ_CHUNKS; k++)
            q->ch[k].post_ns = 0; /* no adaptive weights: the stripe scheduler is not set up */
    }
}

static struct ibv_wc random_wc(void)
{
    static const int kinds[] = {RAIL_WR_DATA, RAIL_WR_LAST, RAIL_WR_CTS, 0, 7};
    static const int chunks[] = {0, 1, 2, 3, RAIL_CHUNK_REC, RAIL_CHUNK_ASK, 20};
    static const enum ibv_wc_status st[] = {IBV_WC_SUCCESS, IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR,
                                            IBV_WC_REM_ACCESS_ERR, IBV_WC_RETRY_EXC_ERR};
    int idx = rnd(8) == 0 ? (rnd(2) ? 9 : 300) : (int)rnd(RAIL_SEND_REQ_BLOCK); /* 9: no block */
    struct ibv_wc wc;
    memset(&wc, 0, sizeof(wc));
    wc.wr_id = rail_wrid(kinds[rnd(5)], 0, (int)rnd(NQPS), idx | chunks[rnd(7)] << 16);
    wc.status = st[rnd(5)];
    return wc;
}

struct snap {
    struct rail_send_comm s;
    struct rail_send_req_block blk;
    struct rail_qp qps[NQPS];
};

static void take(struct snap *o)
{
    memcpy(&o->s, g_s, sizeof(*g_s));
    memcpy(&o->blk, g_blk, sizeof(*g_blk));
    memcpy(o->qps, g_qps, sizeof(g_qps));
}

static void put(const struct snap *o)
{
    memcpy(g_s, &o->s, sizeof(*g_s));
    memcpy(g_blk, &o->blk, sizeof(*g_blk));
    memcpy(g_qps, o->qps, sizeof(g_qps));
}

int main(void)
{
    static struct snap before, general, fast;
    g_s = calloc(1, sizeof(*g_s));
    g_blk = calloc(1, sizeof(*g_blk));
    if (!g_s || !g_blk)
        return 1;
    rail_log_set_logger(quiet); /* the failures log a WARN each */
    g_s->base.magic = RAIL_SEND_MAGIC;
    g_s->base.nrails = 1;
    g_s->base.nqps = NQPS;
    g_s->base.link[0].qps = g_qps;
    g_s->ndata = NQPS;
    g_s->ctl_qp = -1;
    g_s->blk[0] = g_blk;
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        g_blk->req[i].h.comm = &g_s->base;
        g_blk->req[i].idx = (uint16_t)i;
        g_blk->req[i].blk = g_blk;
    }

    int same = 0, fast_taken = 0, n = 200000;
    for (int it = 0; it < n; it++) {
        randomize();
        struct ibv_wc wc = random_wc();
        take(&before);
        rail_send_on_wc_general(g_s, 0, &wc);
        take(&general);
        put(&before);
        rail_send_on_wc(g_s, 0, &wc);
        take(&fast);
        bool eq = memcmp(&general, &fast, sizeof(fast)) == 0;
        same += eq;
        if (!eq && it - same < 3)
            fprintf(stderr, "differs: wr_id %#llx status %d\n", (unsigned long long)wc.wr_id,
                    (int)wc.status);
        /* How often the call-free cases came up (a successful PIPE WR or eager write). */
        int idx = rail_wrid_idx(wc.wr_id), k = rail_wrid_chunk(wc.wr_id);
        if (wc.status == IBV_WC_SUCCESS && idx < RAIL_SEND_REQ_BLOCK && before.blk.req[idx].h.ops &&
            k != RAIL_CHUNK_ASK &&
            (before.blk.req[idx].kind == RAIL_SREQ_PIPE ||
             (before.blk.req[idx].kind == RAIL_SREQ_EAGER && k == RAIL_CHUNK_REC)))
            fast_taken++;
    }
    CHECK_EQ_INT(same, n);
    CHECK(fast_taken > n / 20);
    rail_log_set_logger(NULL);
    free(g_blk);
    free(g_s);
    return check_report("test_send_on_wc");
}
