/* SPDX-License-Identifier: Apache-2.0 */
/* rail_send_taken (net_send.c) sends a message of a dual-rail comm split over both rails on the
 * lean striped path (send_striped: the two piece writes built straight from the CTS entry) when
 * its condition holds (striped_ok, then the scheduler's cut: two non-empty pieces), else through
 * the general path (send_taken: req_alloc, rail_send_post_rdv, the stripe schedule, cut_pieces,
 * room_for_pieces, post_piece). The lean path must leave exactly what the general path leaves: a
 * dual-rail send comm in random states (settings: QPs, QP split, control QP, largest piece,
 * stripe policy, minimum stripe size; the scheduler's rates and cached weights, which rails are
 * up; per message: size, receive buffer, free requests and their block, send-queue room, a post
 * refused at the first or second piece) sends from the same state once through each, and the
 * results are compared byte for byte: the comm (scheduler included), its request block, the QP
 * counters, the records, the telemetry, the tag counters, the work requests posted, the return
 * code and the request. The pieces' post times come from the clock: compared as set or not. */
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

#define XORSHIFT_SEED 0x5851f42d4c957f2dull
#include "xorshift.h"

#define NQPS   3 /* two data QPs and a control QP at most */
#define NPOSTS 24

struct posted {
    uint64_t wr_id, raddr, sge_addr[2];
    uint32_t rkey, imm, sge_len[2], sge_lkey[2];
    int opcode, flags, nsge, qp;
};

static struct posted g_posted[NPOSTS];
static int g_nposted, g_post_fail_at, g_post_calls;
static struct ibv_qp g_ibqp[2][NQPS];

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    if (g_post_calls++ == g_post_fail_at) {
        *bad = wr;
        return EINVAL;
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
        p->qp = (int)(qp - &g_ibqp[0][0]);
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
static struct rail_qp g_qps[2][NQPS];
static struct rail_stats_conn *g_stats;
static struct rail_dev g_dev[2];
static struct ibv_mr g_src_mr[2];
static uint8_t g_src[RAIL_SEND_REQ_BLOCK * RAIL_LOCAL_STRIDE];
static struct rail_mr g_mr;
static const int32_t k_tags[] = {5, 9};

struct snap {
    struct rail_send_comm s;
    struct rail_send_req_block blk;
    struct rail_qp qps[2][NQPS];
    struct rail_stats_conn stats;
    uint8_t src[sizeof(g_src)];
    struct rail_tag_slot tags[16];
    struct posted posted[NPOSTS];
    int nposted, rc;
    void *req;
};

static void take(struct snap *o, int rc, void *req)
{
    /* A post time is the clock's: 1 before (randomize), 2 once written. */
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++)
        for (int k = 0; k < RAIL_REQ_CHUNKS; k++)
            if (g_blk->req[i].ch[k].post_ns > 1)
                g_blk->req[i].ch[k].post_ns = 2;
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
    g_post_calls = 0;
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
    s->base.nrails = 2;
    s->base.nqps = NQPS;
    s->base.stats = g_stats;
    s->base.peer_addr1 = 0x700000;
    g_stats->nrails = 2;
    for (int r = 0; r < 2; r++) {
        snprintf(g_dev[r].name, sizeof(g_dev[r].name), "fake%d", r);
        s->base.link[r].dev = &g_dev[r];
        s->base.link[r].qps = g_qps[r];
        s->base.link[r].peer_rkey1 = 0x1111 + (uint32_t)r;
        s->base.link[r].rj.up = true;
        for (int q = 0; q < NQPS; q++)
            g_qps[r][q].qp = &g_ibqp[r][q];
        g_src_mr[r].lkey = 0x2222 + (uint32_t)r;
        g_blk->mr[r] = &g_src_mr[r];
    }
    s->blk[0] = g_blk;
    g_blk->src = g_src;
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
    g_mr.magic = RAIL_MR_MAGIC;
    g_mr.nrails = 2;
    g_mr.type = NCCL_PTR_HOST;
    g_mr.lkey[0] = 0x3333;
    g_mr.lkey[1] = 0x3334;
}

static uint64_t pick_size(void)
{
    static const uint64_t sizes[] = {0,      1,      1024,    2048,    4096,     65536,
                                     131071, 131072, 1 << 19, 1 << 20, 4u << 20, 3000};
    return rnd(4) == 0 ? 1 + rnd(8u << 20) : sizes[rnd(12)];
}

/* The scheduler: a fresh one of a random policy and minimum stripe size, then random rates, rails
 * up or down, and a cached set of weights or none. */
static void random_sched(void)
{
    struct rail_stripe *st = &g_s->sched;
    static const uint64_t mins[] = {0, 1, 4096, 131072, 1 << 20};
    struct rail_stripe_config cfg;
    rail_stripe_config_default(&cfg, 2);
    cfg.policy = (enum rail_stripe_policy)rnd(3);
    cfg.min_stripe = mins[rnd(5)];
    cfg.speed_mbps[0] = rnd(3) ? 100000 : 0;
    cfg.speed_mbps[1] = rnd(3) ? (uint32_t)(25000 * (1 + rnd(8))) : 0;
    char err[200];
    if (rail_stripe_init(st, &cfg, err, sizeof(err)) != 0)
        exit(1);
    for (int r = 0; r < 2; r++) {
        st->rail[r].avg_bytes = 1 + rnd(1u << 30);
        st->rail[r].avg_ns = 1 + rnd(1u << 20);
        st->rail[r].last_done_ns = rnd(1000);
    }
    unsigned up = rnd(5) ? 3u : (unsigned)rnd(3);
    for (int r = 0; r < 2; r++)
        st->rail[r].up = (up >> r) & 1u;
    st->up_mask = up;
    st->rr_next = (unsigned)rnd(2);
    st->weights_valid = rnd(2);
    if (st->weights_valid) {
        st->weight[0] = (uint16_t)(64 + rnd(897));
        st->weight[1] = (uint16_t)(1024 - st->weight[0]);
    }
}

/* A random state right after rail_cts_fifo_next took slot sequence *seq (entry 0 unresolved, head
 * one behind scan), with the entry in *cts. */
static void randomize(uint64_t *seq, struct rail_cts *cts, uint64_t *size, int *tag)
{
    struct rail_send_comm *s = g_s;
    static const uint64_t chunks[] = {1ull << 30, 4096, 65536, 1 << 20, 1ull << 53};
    s->ndata = 1 + (int)rnd(2);
    s->split_qps = rnd(3) == 0;
    s->max_chunk = chunks[rnd(5)];
    s->ctl_qp = rnd(3) ? s->ndata : -1;
    random_sched();
    s->direct_max = rail_send_direct_max(s);
    s->striped_max = rail_send_striped_max(s);
    s->n2ph = (int)rnd(3);
    s->npending = (int)rnd(2);
    s->help_listed = true; /* the help list itself is global: not in the snapshots */
    s->helped = rnd(2);
    for (int r = 0; r < 2; r++) {
        s->base.link[r].rr = rnd(7);
        s->base.link[r].cq_work = (int)rnd(5);
        for (int q = 0; q < NQPS; q++) {
            g_qps[r][q].sq_max = 8;
            g_qps[r][q].sq_out = rnd(4) == 0 ? 8 - (int)rnd(3) : (int)rnd(6);
        }
    }
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
        q->striped = rnd(2);
        q->tp.n = (uint8_t)rnd(4);
        q->tp.left = (uint8_t)rnd(3);
        q->tp.rec = (uint8_t)rnd(4);
        for (int k = 0; k < RAIL_REQ_CHUNKS; k++) {
            q->tp.piece[k] = (uint8_t)rnd(4);
            q->ch[k].off = rnd(100);
            q->ch[k].len = rnd(100);
            q->ch[k].rail = (uint8_t)rnd(2);
            q->ch[k].qp = (uint8_t)rnd(2);
            q->ch[k].post_ns = 1;
        }
    }
    memset(g_src, (int)rnd(256), sizeof(g_src));
    memset(g_stats->rail, 0, sizeof(g_stats->rail));
    g_stats->striped_messages = rnd(5);
    for (int i = 0; i < RAIL_FIFO_SLOTS; i++)
        s->slot_busy[i] = 0;
    g_nposted = 0;
    g_post_calls = 0;
    g_post_fail_at = rnd(10) == 0 ? (int)rnd(2) : -1;
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
    cts->rkey[1] = 0x5555 + rnd(16);
    cts->tag = *tag;
    cts->tag_index = s->cts.shadow[slot][0].tag_index;
    cts->nreqs = 1;
    cts->seq = *seq + 1;
    g_mr.type = rnd(4) ? NCCL_PTR_HOST : NCCL_PTR_CUDA;
}

int main(void)
{
    static struct snap before, general, lean;
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet); /* refused posts and missing blocks log a line each */
    setup();

    int n = 200000, same = 0, striped_sends = 0, other_sends = 0;
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
        take(&lean, rc, req);
        bool eq = memcmp(&general, &lean, sizeof(lean)) == 0;
        same += eq;
        if (!eq && it - same < 3)
            fprintf(stderr,
                    "differs: size %llu cap %llu ndata %d split %d ctl %d max_chunk %llu policy "
                    "%d min %llu up %u nfree %d fail at %d rc %d/%d nposted %d/%d\n",
                    (unsigned long long)size, (unsigned long long)cts.size, g_s->ndata,
                    g_s->split_qps, g_s->ctl_qp, (unsigned long long)g_s->max_chunk,
                    (int)g_s->sched.policy, (unsigned long long)g_s->sched.min_stripe,
                    g_s->sched.up_mask, before.s.nfree, g_post_fail_at, general.rc, lean.rc,
                    general.nposted, lean.nposted);
        /* How often the lean path's case came up: two plain writes, one per rail, and a request. */
        if (general.req && general.nposted == 2 && general.posted[0].opcode == IBV_WR_RDMA_WRITE &&
            general.posted[1].opcode == IBV_WR_RDMA_WRITE && general.posted[0].qp < NQPS &&
            general.posted[1].qp >= NQPS)
            striped_sends++;
        else if (general.req)
            other_sends++;
    }
    CHECK_EQ_INT(same, n);
    CHECK(striped_sends > n / 10);
    CHECK(other_sends > n / 20);
    rail_log_set_logger(NULL);
    rail_verbs_set_ops(NULL);
    rail_tagmap_free(&g_s->sent);
    free(g_stats);
    free(g_blk);
    free(g_s);
    return check_report("test_send_striped");
}
