/* SPDX-License-Identifier: Apache-2.0 */
/* The harness that test_send_direct and test_send_striped share: a send comm of CMP_RAILS rails
 * with CMP_NQPS QPs each, a fake provider that records every work request it is asked to post
 * (and refuses the calls numbered [g_post_fail_at, g_post_fail_end)) and takes any QP state
 * change, snapshots of everything a
 * send may change, and the loop that sends each random state once through
 * rail_send_taken_general and once through rail_send_taken and compares the two results byte
 * for byte. The includer defines CMP_RAILS, CMP_NQPS and XORSHIFT_SEED first. */
#ifndef NCCL_RAIL_TEST_SEND_TAKEN_CMP_H
#define NCCL_RAIL_TEST_SEND_TAKEN_CMP_H

#include <errno.h>
#include <limits.h>
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
#include "xorshift.h"

#define CMP_NPOSTS 24

/* What the fake provider was asked to post: every field a write reads. */
struct posted {
    uint64_t wr_id, raddr, sge_addr[2];
    uint32_t rkey, imm, sge_len[2], sge_lkey[2];
    int opcode, flags, nsge, qp; /* qp: rail * CMP_NQPS + index */
};

static struct posted g_posted[CMP_NPOSTS];
static int g_nposted, g_post_calls, g_post_fail_at = -1, g_post_fail_end = -1;
static struct ibv_qp g_ibqp[CMP_RAILS][CMP_NQPS];

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    int call = g_post_calls++;
    if (call >= g_post_fail_at && call < g_post_fail_end) {
        *bad = wr;
        return EINVAL;
    }
    for (; wr; wr = wr->next) {
        if (g_nposted == CMP_NPOSTS)
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

static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    (void)qp, (void)attr, (void)mask;
    return 0; /* a failed rail's QPs to the error state */
}

static struct rail_send_comm *g_s;
static struct rail_send_req_block *g_blk;
static struct rail_qp g_qps[CMP_RAILS][CMP_NQPS];
static struct rail_stats_conn *g_stats;
static struct rail_dev g_dev[CMP_RAILS];
static struct ibv_mr g_src_mr[CMP_RAILS];
static uint8_t g_src[RAIL_SEND_REQ_BLOCK * RAIL_LOCAL_STRIDE];
static struct rail_mr g_mr;
static const int32_t k_tags[] = {5, 9};

struct snap {
    struct rail_send_comm s;
    struct rail_send_req_block blk;
    struct rail_qp qps[CMP_RAILS][CMP_NQPS];
    struct rail_stats_conn stats;
    uint8_t src[sizeof(g_src)];
    struct rail_tag_slot tags[16];
    struct posted posted[CMP_NPOSTS];
    int nposted, rc;
    void *req;
};

static void take(struct snap *o, int rc, void *req)
{
    /* A post time is the clock's: 1 before (the tests' states), 2 once written. */
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

/* The fake provider and a quiet log (refused posts and missing blocks log a line each); the
 * comm, its links and QPs, one request block and the tag map; no control QP. */
static void cmp_setup(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    ops.modify_qp = fake_modify_qp;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet);
    g_s = calloc(1, sizeof(*g_s));
    g_blk = calloc(1, sizeof(*g_blk));
    g_stats = calloc(1, sizeof(*g_stats));
    if (!g_s || !g_blk || !g_stats)
        exit(1);
    struct rail_send_comm *s = g_s;
    s->base.ops = &rail_send_comm_ops;
    s->base.magic = RAIL_SEND_MAGIC;
    s->base.nrails = CMP_RAILS;
    s->base.nqps = CMP_NQPS;
    s->base.stats = g_stats;
    s->base.peer_addr1 = 0x700000;
    g_stats->nrails = CMP_RAILS;
    s->ctl_qp = -1;
    for (int r = 0; r < CMP_RAILS; r++) {
        snprintf(g_dev[r].name, sizeof(g_dev[r].name), "fake%d", r);
        s->base.link[r].dev = &g_dev[r];
        s->base.link[r].qps = g_qps[r];
        s->base.link[r].peer_rkey1 = 0x1111 + (uint32_t)r;
        s->base.link[r].rj.up = true;
        for (int q = 0; q < CMP_NQPS; q++)
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
    g_mr.nrails = CMP_RAILS;
    g_mr.type = NCCL_PTR_HOST;
    for (int r = 0; r < CMP_RAILS; r++)
        g_mr.lkey[r] = 0x3333 + (uint32_t)r;
}

static void cmp_teardown(void)
{
    rail_log_set_logger(NULL);
    rail_verbs_set_ops(NULL);
    rail_tagmap_free(&g_s->sent);
    free(g_stats);
    free(g_blk);
    free(g_s);
}

/* Free requests: all of block 0 in some order, sometimes one of block 1 (not allocated) on top,
 * sometimes none; the requests' leftovers of earlier use, the source bytes, no telemetry. */
static void cmp_random_requests(void)
{
    struct rail_send_comm *s = g_s;
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
}

/* The state right after rail_cts_fifo_next took slot sequence *seq for a message of *size bytes
 * (entry 0 unresolved, head one behind scan), with the entry in *cts: the receive buffer a
 * little larger, exact or smaller, remote keys for every rail. */
static void cmp_take_slot(uint64_t *seq, struct rail_cts *cts, uint64_t size, int *tag)
{
    struct rail_send_comm *s = g_s;
    for (int i = 0; i < RAIL_FIFO_SLOTS; i++)
        s->slot_busy[i] = 0;
    g_nposted = 0;
    g_post_calls = 0;
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

    memset(cts, 0, sizeof(*cts));
    static const int64_t slack[] = {0, 0, 1, -1, 4096};
    int64_t cap = (int64_t)size + slack[rnd(5)];
    cts->size = cap < 0 ? 0 : (uint64_t)cap;
    cts->addr = 0x10000000 + 64 * (uint64_t)rnd(1000);
    for (int r = 0; r < CMP_RAILS; r++)
        cts->rkey[r] = 0x4444 + 0x1111 * (uint32_t)r + rnd(16);
    cts->tag = *tag;
    cts->tag_index = s->cts.shadow[slot][0].tag_index;
    cts->nreqs = 1;
    cts->seq = *seq + 1;
    g_mr.type = rnd(4) ? NCCL_PTR_HOST : NCCL_PTR_CUDA;
}

/* One test's hooks: a random state (returns the message's size and fills the slot), whether the
 * general path's result is the lean path's case, and a line naming a state that differed. */
struct cmp_hooks {
    void (*randomize)(uint64_t *seq, struct rail_cts *cts, uint64_t *size, int *tag);
    bool (*lean_case)(const struct snap *general, uint64_t size);
    void (*describe)(const struct snap *before, const struct snap *general, const struct snap *lean,
                     uint64_t size, const struct rail_cts *cts);
    void (*note)(const struct snap *before, const struct snap *general); /* optional */
};

/* Sends n random states through both paths; checks that every result is the same and that the
 * lean path's case and the others both came up often enough to mean something. */
static void cmp_run(int n, const struct cmp_hooks *h)
{
    static struct snap before, general, lean;
    static char data[1];
    int same = 0, lean_cases = 0, other_cases = 0;
    for (int it = 0; it < n; it++) {
        uint64_t seq, size;
        struct rail_cts cts;
        int tag;
        h->randomize(&seq, &cts, &size, &tag);
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
            h->describe(&before, &general, &lean, size, &cts);
        if (h->note)
            h->note(&before, &general);
        if (general.req && h->lean_case(&general, size))
            lean_cases++;
        else if (general.req)
            other_cases++;
    }
    CHECK_EQ_INT(same, n);
    CHECK(lean_cases > n / 10);
    CHECK(other_cases > n / 20);
}

#endif
