/* SPDX-License-Identifier: Apache-2.0 */
/* The multi-rail receive progress's in-place size record (rail_recv_record_lean,
 * protocol/net_recv_wc.h, in the handler rail_recv_on_wc_rails) against the general completion
 * handler (rail_recv_on_wc_general), over 200,000 random completions on random two-rail comms:
 * failover on or off; each rail up, rejoining (ready) or down; receive WRs owed up to the batch
 * re-post, by the same QP or another (or several); FIFO slots held by a receive or free; the
 * receive of 1-3 entries, entries done or not, buffers large or small; the record in the slot's
 * entry with the slot's seq or another, its entry field right or wrong, its size within the
 * buffer, above it or "too big"; completions failed, of other kinds (CTS writes), other opcodes,
 * without immediate, with direct, eager, record-shaped or random immediates.
 *
 * From one state: the lean path alone, where it takes the record, must leave exactly what the
 * general handler leaves; where it declines it must change nothing; and the handler of the
 * progress must always leave what the general one leaves (comm, receives, QP counters byte for
 * byte; the receive WR posts of a batch re-post counted). Every answer occurs; the test fails
 * with any condition of the lean path dropped (each checked by hand when it was written). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XORSHIFT_SEED 0x5851f42d4c957f2dull
#include "check.h"
#include "xorshift.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_wc.h"
#include "transport/net_verbs.h"

#define RAILS 2
#define QPS   2

static int g_posts;

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    (void)qp, (void)bad;
    for (; wr; wr = wr->next)
        g_posts++;
    return 0;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    (void)qp, (void)wr, (void)bad;
    g_posts += 1000;
    return 0;
}

static struct rail_recv_comm g_w;
static struct rail_recv_req_block g_blk;
static struct rail_qp g_qps[RAILS][QPS];
static struct rail_dev g_dev;
static struct ibv_qp g_handle[RAILS][QPS];
static uint8_t g_rec[RAIL_RECORDS_SIZE];

struct snap {
    struct rail_recv_comm c;
    struct rail_recv_req_block b;
    struct rail_qp q[RAILS][QPS];
    int posts;
};

static void take(struct snap *s)
{
    s->c = g_w;
    s->b = g_blk;
    memcpy(s->q, g_qps, sizeof(g_qps));
    s->posts = g_posts;
    for (int k = 0; k < RAILS; k++) /* a failed rail's next rejoin try: the clock's */
        s->c.base.link[k].rj.next_try_ns = 0;
}

static void put(const struct snap *s)
{
    g_w = s->c;
    g_blk = s->b;
    memcpy(g_qps, s->q, sizeof(g_qps));
    g_posts = s->posts;
}

static bool same(const struct snap *a, const struct snap *b)
{
    return memcmp(&a->c, &b->c, sizeof(a->c)) == 0 && memcmp(&a->b, &b->b, sizeof(a->b)) == 0 &&
           memcmp(a->q, b->q, sizeof(a->q)) == 0 && a->posts == b->posts;
}

/* A random comm and completion; *rail gets the completion's rail. */
static void build(struct ibv_wc *wc, int *rail)
{
    memset(&g_w, 0, sizeof(g_w));
    memset(&g_blk, 0, sizeof(g_blk));
    memset(g_qps, 0, sizeof(g_qps));
    memset(g_rec, 0, sizeof(g_rec));
    g_posts = 0;
    snprintf(g_dev.name, sizeof(g_dev.name), "shm8");
    g_w.base.ops = &rail_recv_comm_ops;
    g_w.base.nrails = RAILS;
    g_w.base.nqps = QPS;
    g_w.base.failover = rnd(2);
    g_w.records = g_rec;
    g_w.blk[0] = &g_blk;
    for (int k = 0; k < RAILS; k++) {
        struct rail_link *l = &g_w.base.link[k];
        l->qps = g_qps[k];
        l->dev = &g_dev;
        unsigned st = rnd(8);
        l->rj.up = st < 6;
        l->rj.ready = st == 6;
        for (int q = 0; q < QPS; q++) {
            g_qps[k][q].qp = &g_handle[k][q];
            unsigned o = rnd(8);
            g_qps[k][q].rq_owed = o < 5    ? (int)rnd(3)
                                  : o == 5 ? RAIL_REPOST_BATCH - 1
                                           : RAIL_REPOST_BATCH - 2;
            g_qps[k][q].rq_posted = 10 + (int)rnd(50);
            g_qps[k][q].sq_out = (int)rnd(3);
            g_qps[k][q].sq_max = 63;
            g_w.sq_wrs += g_qps[k][q].sq_out;
        }
    }
    g_w.owes = rnd(2);
    g_w.owes_at = rnd(4) == 0 ? -1 : (int)(rnd(RAILS) * RAIL_MAX_QPS + rnd(QPS));
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
        struct rail_recv_req *q = &g_blk.req[i];
        q->idx = (uint8_t)i;
        q->blk = &g_blk;
        q->h.ops = rnd(4) ? (const struct rail_req_ops *)&g_w : NULL;
        q->n = 1 + (int)rnd(3);
        q->left = 0;
        q->slot_seq = 64 * rnd(1000) + (uint64_t)i;
        q->has_slot = true;
        for (int e = 0; e < q->n; e++) {
            q->e[e].done = rnd(6) == 0;
            unsigned c = rnd(12);
            q->e[e].cap = c < 4 ? rnd(64) : c == 4 ? UINT64_MAX : 1u << 20;
            q->left += !q->e[e].done;
        }
        q->cts_pending = rnd(2);
    }
    for (int sl = 0; sl < 4; sl++) /* slots 0..3 held by receives 0..3, another one, or free */
        g_w.fifo.by_slot[sl] = rnd(4) ? &g_blk.req[rnd(5) ? sl : 4 + (int)rnd(4)] : NULL;

    unsigned slot = rnd(5), entry = rnd(3) ? 0 : rnd(4);
    /* The record in slot/entry: mostly the one its receive waits for. */
    for (unsigned sl = 0; sl < 5; sl++)
        for (unsigned en = 0; en < RAIL_MAX_RECVS; en++) {
            struct rail_record *rec =
                (struct rail_record *)(g_rec +
                                       ((size_t)sl * RAIL_MAX_RECVS + en) * RAIL_RECORD_BYTES);
            const struct rail_recv_req *q = sl < 4 ? g_w.fifo.by_slot[sl] : NULL;
            uint64_t seq = q ? q->slot_seq : rnd(1000);
            unsigned s = rnd(16);
            rec->seq = (uint32_t)(seq + (s == 0 ? 0 : s == 1 ? 65 : 1));
            rec->entry = rnd(12) == 0 ? en ^ 1 : en;
            unsigned z = rnd(12);
            rec->size = z == 0 ? RAIL_RECORD_TOO_BIG : z == 1 ? (2u << 20) : rnd(4) ? rnd(100) : 0;
        }

    *rail = (int)rnd(RAILS);
    memset(wc, 0, sizeof(*wc));
    unsigned k = rnd(16);
    int kind = k < 13 ? RAIL_WR_RECV : k < 15 ? RAIL_WR_CTS : 77;
    int qp = (int)rnd(QPS);
    wc->wr_id = rail_wrid(kind, *rail, qp, (int)rnd(RAIL_RECV_REQ_BLOCK + 1));
    wc->status =
        rnd(16) == 0 ? (rnd(2) ? IBV_WC_WR_FLUSH_ERR : IBV_WC_LOC_PROT_ERR) : IBV_WC_SUCCESS;
    wc->opcode = rnd(16) == 0 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;
    wc->wc_flags = rnd(16) == 0 ? 0 : IBV_WC_WITH_IMM;
    unsigned im = rnd(10);
    uint32_t imm = im < 6    ? rail_imm_rdv(slot, entry)
                   : im == 6 ? rail_imm_direct(slot, entry, 1 + rnd(100))
                   : im == 7 ? rail_imm_rdv(slot, entry) | 1u << (9 + rnd(20)) /* bad bits */
                   : im == 8 ? rail_imm_eager(rnd(4))
                             : (uint32_t)rnd(0x7fffffff);
    if ((imm & 0xE0000000u) == RAIL_IMM_QUERY) /* no query (its answer is net_ask.c's) */
        imm &= ~RAIL_IMM_QUERY;
    wc->imm_data = htonl(imm);
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_recv = fake_post_recv;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet);
    static struct snap before, lean, general, rails;
    int taken = 0, completed = 0, declined = 0, failed = 0, batches = 0, fails = 0;
    int taken_failover = 0;
    for (int it = 0; it < 200000; it++) {
        struct ibv_wc wc;
        int rail;
        build(&wc, &rail);
        take(&before);
        /* The general handler. */
        rail_recv_on_wc_general(&g_w, rail, &wc);
        take(&general);
        /* The progress's handler. */
        put(&before);
        rail_recv_on_wc_rails(&g_w, rail, &wc);
        take(&rails);
        bool ok = same(&rails, &general);
        CHECK(ok);
        /* The lean path alone (the progress's handler checks status and kind first). */
        put(&before);
        bool took = wc.status == IBV_WC_SUCCESS && rail_wrid_kind(wc.wr_id) == RAIL_WR_RECV &&
                    rail_recv_record_lean(&g_w, rail, &wc);
        take(&lean);
        bool ok2 = took ? same(&lean, &general) : same(&lean, &before);
        CHECK(ok2);
        if ((!ok || !ok2) && ++fails > 3) {
            fprintf(stderr, "test_recv_record: state %d differs (imm %#x, took %d)\n", it,
                    ntohl(wc.imm_data), took);
            break;
        }
        taken += took;
        taken_failover += took && before.c.base.failover;
        declined += !took;
        completed += took && g_blk.req[0].left == 0 && before.b.req[0].left == 1;
        failed += atomic_load(&general.c.base.error) != 0;
        batches += general.posts > 0;
    }
    fprintf(stderr,
            "test_recv_record: %d taken in place (%d with failover), %d declined, %d failing the "
            "comm, %d batch re-posts, %d receives completed in place\n",
            taken, taken_failover, declined, failed, batches, completed);
    CHECK(taken > 5000 && taken_failover > 2000 && declined > 60000 && failed > 10000 &&
          batches > 1000 && completed > 100);
    rail_log_set_logger(NULL);
    return check_report("test_recv_record");
}
