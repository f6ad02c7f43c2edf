/* SPDX-License-Identifier: Apache-2.0 */
/* rail_send_taken (net_send.c) sends the message that the FIFO slot just taken by
 * rail_cts_fifo_next asks for: on the one-rail direct path (one WRITE WITH IMM, no request
 * allocation, scheduler or pipelined-post layers) when its condition holds, else through the
 * general path (send_taken: req_alloc, rail_send_post_rdv, post_pipelined). The direct path must
 * leave exactly what the general path leaves: a one-rail send comm in random states (settings:
 * QPs, QP split, largest piece, adaptive routing; per message: size, receive buffer, the rail up or
 * not, free requests and their block, send-queue room, a refused post) sends from the same state
 * once through each, and the results are compared byte for byte: the comm, its request block, the
 * QP counters, the records, the telemetry, the tag counters, the work requests posted, the return
 * code and the request. Dropping any one term of the condition (direct_ok, rail_send_direct_max)
 * makes states differ. Also: rail_send_pick_up (the eager send's one-rail pick) against
 * rail_pick_up. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "nccl/nccl_net.h"
#include "protocol/net_comm.h"
#include "protocol/net_send.h"
#include "protocol/net_send_wr.h"
#include "telemetry/rail_stats.h"
#include "transport/net_verbs.h"

#define XORSHIFT_SEED 0x2545f4914f6cdd1dull
#include "xorshift.h"

#define NQPS   2
#define NPOSTS 24

/* What the fake provider was asked to post: every field a write reads. */
struct posted {
    uint64_t wr_id, raddr, sge_addr[2];
    uint32_t rkey, imm, sge_len[2], sge_lkey[2];
    int opcode, flags, nsge, qp;
};

static struct posted g_posted[NPOSTS];
static int g_nposted, g_post_rc;
static struct ibv_qp g_ibqp[NQPS];

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    if (g_post_rc) {
        *bad = wr;
        return g_post_rc;
    }
    for (; wr; wr = wr->next) {
        if (g_nposted == NPOSTS)
            return ENOMEM;
        struct posted *p = &g_posted[g_nposted++];
        memset(p, 0, sizeof(*p));
        p->wr_id = wr->wr_id;
        p->raddr = wr->wr.rdma.remote_addr;
        p->rkey = wr->wr.rdma.rkey;
        p->imm = wr->imm_data;
        p->opcode = wr->opcode;
        p->flags = (int)wr->send_flags;
        p->nsge = wr->num_sge;
        p->qp = (int)(qp - g_ibqp);
        for (int i = 0; i < wr->num_sge && i < 2; i++) {
            p->sge_addr[i] = wr->sg_list[i].addr;
            p->sge_len[i] = wr->sg_list[i].length;
            p->sge_lkey[i] = wr->sg_list[i].lkey;
        }
    }
    return 0;
}

static struct rail_send_comm *g_s;
static struct rail_send_req_block *g_blk;
static struct rail_qp g_qps[NQPS];
static struct rail_stats_conn *g_stats;
static struct rail_dev g_dev;
static struct ibv_mr g_src_mr;
static uint8_t g_src[RAIL_SEND_REQ_BLOCK * RAIL_LOCAL_STRIDE];
static struct rail_mr g_mr;
static const int32_t k_tags[] = {5, 9};

struct snap {
    struct rail_send_comm s;
    struct rail_send_req_block blk;
    struct rail_qp qps[NQPS];
    struct rail_stats_conn stats;
    uint8_t src[sizeof(g_src)];
    struct rail_tag_slot tags[16];
    struct posted posted[NPOSTS];
    int nposted, rc;
    void *req;
};

static void take(struct snap *o, int rc, void *req)
{
    memcpy(&o->s, g_s, sizeof(*g_s));
    memcpy(&o->blk, g_blk, sizeof(*g_blk));
    memcpy(o->qps, g_qps, sizeof(g_qps));
    memcpy(&o->stats, g_stats, sizeof(*g_stats));
    memcpy(o->src, g_src, sizeof(g_src));
    memcpy(o->tags, g_s->sent.slots, g_s->sent.cap * sizeof(o->tags[0]));
    memcpy(o->posted, g_posted, sizeof(g_posted));
    o->nposted = g_nposted;
    o->rc = rc;
    o->req = req;
}

static void put(const struct snap *o)
{
    memcpy(g_s, &o->s, sizeof(*g_s));
    memcpy(g_blk, &o->blk, sizeof(*g_blk));
    memcpy(g_qps, o->qps, sizeof(g_qps));
    memcpy(g_stats, &o->stats, sizeof(*g_stats));
    memcpy(g_src, o->src, sizeof(g_src));
    memcpy(g_s->sent.slots, o->tags, g_s->sent.cap * sizeof(o->tags[0]));
    memcpy(g_posted, o->posted, sizeof(g_posted));
    g_nposted = o->nposted;
}

static void setup(void)
{
    g_s = calloc(1, sizeof(*g_s));
    g_blk = calloc(1, sizeof(*g_blk));
    g_stats = calloc(1, sizeof(*g_stats));
    if (!g_s || !g_blk || !g_stats)
        exit(1);
    struct rail_send_comm *s = g_s;
    s->base.ops = &rail_send_comm_ops;
    s->base.magic = RAIL_SEND_MAGIC;
    s->base.nrails = 1;
    s->base.nqps = NQPS;
    s->base.stats = g_stats;
    g_stats->nrails = 1;
    snprintf(g_dev.name, sizeof(g_dev.name), "fake0");
    s->base.link[0].dev = &g_dev;
    s->base.link[0].qps = g_qps;
    s->base.link[0].peer_rkey1 = 0x1111;
    s->base.link[0].rj.up = true;
    s->base.peer_addr1 = 0x700000;
    for (int q = 0; q < NQPS; q++)
        g_qps[q].qp = &g_ibqp[q];
    s->ctl_qp = -1;
    s->blk[0] = g_blk;
    g_src_mr.lkey = 0x2222;
    g_blk->src = g_src;
    g_blk->mr[0] = &g_src_mr;
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        g_blk->req[i].h.comm = &s->base;
        g_blk->req[i].idx = (uint16_t)i;
        g_blk->req[i].src = g_src + (size_t)i * RAIL_LOCAL_STRIDE;
        g_blk->req[i].blk = g_blk;
    }
    rail_tagmap_init(&s->sent);
    for (int t = 0; t < 2; t++) {
        uint32_t idx;
        (void)rail_tagmap_next(&s->sent, k_tags[t], &idx);
    }
    struct rail_stripe_config cfg;
    rail_stripe_config_default(&cfg, 1);
    char err[200];
    if (rail_stripe_init(&s->sched, &cfg, err, sizeof(err)) != 0)
        exit(1);
    g_mr.magic = RAIL_MR_MAGIC;
    g_mr.nrails = 1;
    g_mr.type = NCCL_PTR_HOST;
    g_mr.lkey[0] = 0x3333;
}

static uint64_t pick_size(void)
{
    static const uint64_t sizes[] = {0,     1,       8,       4096,           4097,
                                     65536, 1 << 19, 1 << 20, (1u << 21) - 1, 1u << 21};
    return rnd(4) == 0 ? 1 + rnd(1 << 21) : sizes[rnd(10)];
}

/* A random state right after rail_cts_fifo_next took slot sequence *seq (entry 0 unresolved, head
 * one behind scan), with the entry in *cts. */
static void randomize(uint64_t *seq, struct rail_cts *cts, uint64_t *size, int *tag)
{
    struct rail_send_comm *s = g_s;
    static const uint64_t chunks[] = {1ull << 30, 4096, 65536, 1 << 20};
    static const uint64_t thresholds[] = {8192, 1 << 20, 1ull << 40};
    s->ndata = 1 + (int)rnd(NQPS);
    s->split_qps = rnd(3) == 0;
    s->max_chunk = chunks[rnd(4)];
    s->ar = rnd(3) == 0;
    s->ar_threshold = thresholds[rnd(3)];
    s->direct_max = rail_send_direct_max(s);
    s->sched.up_mask = rnd(8) ? 1u : 0u;
    s->base.link[0].rr = rnd(7);
    s->base.link[0].cq_work = (int)rnd(5);
    for (int q = 0; q < NQPS; q++) {
        g_qps[q].sq_max = 8;
        g_qps[q].sq_out = rnd(4) == 0 ? 8 - (int)rnd(2) : (int)rnd(6);
    }
    /* Free requests: all of block 0 in some order, sometimes one of block 1 (not allocated) on
     * top, sometimes none. */
    s->nfree = rnd(10) == 0 ? 0 : 1 + (int)rnd(RAIL_SEND_REQ_BLOCK);
    for (int i = 0; i < s->nfree; i++)
        s->free_list[i] = (uint16_t)((i + rnd(2)) % RAIL_SEND_REQ_BLOCK);
    if (s->nfree && rnd(10) == 0)
        s->free_list[s->nfree - 1] = RAIL_SEND_REQ_BLOCK + 1;
    s->blk_warned = false;
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        struct rail_send_req *q = &g_blk->req[i];
        q->h.ops = NULL;
        q->wrs_left = (int)rnd(3);
        q->kind = (uint8_t)rnd(3);
        q->unsure = (uint8_t)rnd(2);
        q->error = rnd(2) ? -EIO : 0;
    }
    memset(g_src, (int)rnd(256), sizeof(g_src));
    memset(g_stats->rail, 0, sizeof(g_stats->rail));
    for (int i = 0; i < RAIL_FIFO_SLOTS; i++)
        s->slot_busy[i] = 0;
    g_nposted = 0;
    g_post_rc = rnd(12) == 0 ? EINVAL : 0;
    atomic_store(&s->base.error, 0);
    s->base.error_warned = false;

    *tag = k_tags[rnd(2)];
    *seq = rnd(1000);
    unsigned slot = (unsigned)(*seq % RAIL_FIFO_SLOTS);
    s->cts.head = *seq;
    s->cts.scan = *seq + 1;
    memset(s->cts.unresolved, 0, sizeof(s->cts.unresolved));
    s->cts.unresolved[slot] = 1;
    s->cts.shadow_n[slot] = 1;
    s->cts.shadow[slot][0].tag = *tag;
    s->cts.shadow[slot][0].tag_index = rail_tagmap_get(&s->sent, *tag);
    s->cts.shadow[slot][0].resolved = false;

    *size = pick_size();
    memset(cts, 0, sizeof(*cts));
    static const int64_t slack[] = {0, 0, 1, -1, 4096};
    int64_t cap = (int64_t)*size + slack[rnd(5)];
    cts->size = cap < 0 ? 0 : (uint64_t)cap;
    cts->addr = 0x10000000 + 64 * (uint64_t)rnd(1000);
    cts->rkey[0] = 0x4444 + rnd(16);
    cts->tag = *tag;
    cts->tag_index = s->cts.shadow[slot][0].tag_index;
    cts->nreqs = 1;
    cts->seq = *seq + 1;
    g_mr.type = rnd(4) ? NCCL_PTR_HOST : NCCL_PTR_CUDA;
}

/* rail_send_pick_up against rail_pick_up: every rail count, up pattern and start. */
static void pick_up(void)
{
    static struct rail_comm c;
    int same = 0, n = 0;
    for (int nr = 1; nr <= RAIL_MAX_RAILS; nr++)
        for (unsigned up = 0; up < 1u << nr; up++)
            for (unsigned from = 0; from < 9; from++) {
                memset(&c, 0, sizeof(c));
                c.nrails = nr;
                for (int r = 0; r < nr; r++)
                    c.link[r].rj.up = (up >> r) & 1u;
                same += rail_send_pick_up(&c, from) == rail_pick_up(&c, from);
                n++;
            }
    CHECK_EQ_INT(same, n);
}

int main(void)
{
    static struct snap before, general, direct;
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet); /* refused posts and missing blocks log a line each */
    setup();
    pick_up();

    int n = 200000, same = 0, direct_sends = 0, general_sends = 0;
    static char data[1];
    for (int it = 0; it < n; it++) {
        uint64_t seq, size;
        struct rail_cts cts;
        int tag;
        randomize(&seq, &cts, &size, &tag);
        take(&before, 0, NULL);
        void *req = NULL;
        int rc = rail_send_taken_general(g_s, seq, &cts, data, size, tag, &g_mr, &req);
        take(&general, rc, req);
        put(&before);
        req = NULL;
        rc = rail_send_taken(g_s, seq, &cts, data, size, tag, &g_mr, &req);
        take(&direct, rc, req);
        bool eq = memcmp(&general, &direct, sizeof(direct)) == 0;
        same += eq;
        if (!eq && it - same < 3)
            fprintf(stderr,
                    "differs: size %llu cap %llu ndata %d split %d max_chunk %llu ar %d thr "
                    "%llu up %u nfree %d rc %d/%d\n",
                    (unsigned long long)size, (unsigned long long)cts.size, g_s->ndata,
                    g_s->split_qps, (unsigned long long)g_s->max_chunk, g_s->ar,
                    (unsigned long long)g_s->ar_threshold, g_s->sched.up_mask, before.s.nfree,
                    general.rc, direct.rc);
        /* How often the direct path's case came up: one WRITE WITH IMM posted and nothing else. */
        if (general.req && general.nposted == 1 &&
            general.posted[0].opcode == IBV_WR_RDMA_WRITE_WITH_IMM &&
            general.posted[0].sge_len[0] == size)
            direct_sends++;
        else if (general.req)
            general_sends++;
    }
    CHECK_EQ_INT(same, n);
    CHECK(direct_sends > n / 10);
    CHECK(general_sends > n / 20);
    rail_log_set_logger(NULL);
    rail_verbs_set_ops(NULL);
    rail_tagmap_free(&g_s->sent);
    free(g_stats);
    free(g_blk);
    free(g_s);
    return check_report("test_send_direct");
}
