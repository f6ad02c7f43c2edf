/* SPDX-License-Identifier: Apache-2.0 */
/* rail_net_irecv (net_recv.c) takes a single receive in the common state through its lean path
 * (protocol/net_recv_lean.h: no loops, the CTS entry built once where it is posted from) and
 * everything else through the general path; rail_recv_irecv_general is the general path alone. The
 * two must leave exactly the same: a receive comm built by hand in random states (1-2 rails up or
 * not, 1-2 QPs, send queues full or not, send WRs out with their completions in the CQ or not, a
 * CTS to write again, images to look at again, the comm failed or not, failover on or not, compact
 * or 128-byte CTS entries, the next FIFO slot free or held, held-back receives matched or not and
 * due or not, free requests with their block allocated or not, the credit due or not, an eager
 * arrival ahead of the receive or not, receive WRs owed, the post refused; per receive: n 1-3, the
 * sender's eager limit above or below the size, the buffer's handle the one that passed last,
 * another good one, one of another generation or a range outside it, the tag the last one counted
 * or another) gets the same receive once through each, from the same state, and the results are
 * compared byte for byte: the comm, the request block and its CTS stage, the QP counters, the tag
 * counters, the work requests posted (send and receive: QP, wr_id, addresses, keys, lengths,
 * flags), the CQ entries taken, the return code and the request. The clock is the test's
 * (rail_coarse_ns and rail_now_ns defined here, so net_clock.c is not linked). Fails with any term
 * of the lean path's condition dropped; checks that both paths' cases come up often. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XORSHIFT_SEED 0x9e3779b97f4a7c15ull
#include "check.h"
#include "xorshift.h"
#include "log.h"
#include "nccl/nccl_net.h"
#include "protocol/net_comm.h"
#include "protocol/net_recv.h"
#include "protocol/net_recv_cts.h"
#include "transport/net_verbs.h"
#include "wire/cts_layout.h"

/* ---- the clock ---- */

static uint64_t g_clock;
uint64_t rail_coarse_ns(void)
{
    return g_clock;
}
uint64_t rail_now_ns(void)
{
    return g_clock;
}

/* ---- the fake provider ---- */

#define NRAILS 2
#define NQPS   2
#define NLOG   16

struct posted {
    int qp; /* rail * NQPS + qp, 100 + that for a receive WR */
    uint64_t wr_id, raddr, sge_addr;
    uint32_t rkey, sge_len, sge_lkey;
    int opcode, flags, nsge;
};

struct fake {
    struct posted log[NLOG];
    int nlog;
    int post_rc; /* every post fails with it (0: none) */
    int cq_n[NRAILS];
    uint64_t cq_wrid[NRAILS][2]; /* completions waiting in rail k's CQ (successful) */
};
static struct fake g_f;

static struct ibv_qp g_ibqp[NRAILS][NQPS];
static struct ibv_cq g_cq[NRAILS];

static int qp_no(const struct ibv_qp *qp)
{
    return (int)(qp - &g_ibqp[0][0]);
}

/* The next entry of the post log, cleared, with what every post has; NULL when the log is full. */
static struct posted *logged(int qp, uint64_t wr_id, int nsge)
{
    if (g_f.nlog == NLOG)
        return NULL;
    struct posted *p = &g_f.log[g_f.nlog++];
    memset(p, 0, sizeof(*p));
    p->qp = qp;
    p->wr_id = wr_id;
    p->nsge = nsge;
    return p;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    if (g_f.post_rc) {
        *bad = wr;
        return g_f.post_rc;
    }
    for (; wr; wr = wr->next) {
        struct posted *p = logged(qp_no(qp), wr->wr_id, wr->num_sge);
        if (!p)
            return ENOMEM;
        p->raddr = wr->wr.rdma.remote_addr;
        p->rkey = wr->wr.rdma.rkey;
        p->opcode = wr->opcode;
        p->flags = (int)wr->send_flags;
        if (wr->num_sge > 0) {
            p->sge_addr = wr->sg_list[0].addr;
            p->sge_len = wr->sg_list[0].length;
            p->sge_lkey = wr->sg_list[0].lkey;
        }
    }
    return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    if (g_f.post_rc) {
        *bad = wr;
        return g_f.post_rc;
    }
    for (; wr; wr = wr->next)
        if (!logged(100 + qp_no(qp), wr->wr_id, wr->num_sge))
            return ENOMEM;
    return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int k = (int)(cq - g_cq), got = 0;
    while (got < n && g_f.cq_n[k] > 0) {
        memset(&wc[got], 0, sizeof(wc[got]));
        wc[got].wr_id = g_f.cq_wrid[k][--g_f.cq_n[k]];
        wc[got].status = IBV_WC_SUCCESS;
        wc[got].opcode = IBV_WC_RDMA_WRITE;
        got++;
    }
    return got;
}

static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    (void)qp, (void)attr, (void)mask;
    return 0;
}

static struct ibv_mr *fake_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)pd, (void)addr, (void)len, (void)access;
    return NULL; /* a second request block cannot be registered: req_alloc gives up */
}

/* ---- the comm ---- */

static struct rail_recv_comm g_r;
static struct rail_recv_req_block g_blk;
static struct rail_qp g_qps[NRAILS][NQPS];
static struct rail_dev g_dev[NRAILS];
static struct ibv_mr g_stage_mr[NRAILS], g_ctl_mr[NRAILS];
static uint8_t g_stage[RAIL_RECV_REQ_BLOCK * RAIL_RECV_STAGE(RAIL_CTS_BYTES)];
static uint8_t g_staging[RAIL_STAGING_SIZE];
static uint8_t g_images[4 * RAIL_IMAGE_STRIDE];
static struct rail_mr g_mr[3]; /* the cached handle, another good one, the cached one renewed */
static uint8_t g_buf[1 << 16];
static const int32_t k_tags[] = {5, 9, 13, 21}; /* 21: never counted before the state */

static void setup(void)
{
    struct rail_recv_comm *r = &g_r;
    r->base.ops = &rail_recv_comm_ops;
    r->base.magic = RAIL_RECV_MAGIC;
    r->base.fd = -1;
    r->blk[0] = &g_blk;
    r->staging = g_staging;
    r->images = g_images;
    r->eager_bytes = 64;
    r->base.peer_addr1 = 0x7000000;
    for (int k = 0; k < NRAILS; k++) {
        struct rail_link *l = &r->base.link[k];
        snprintf(g_dev[k].name, sizeof(g_dev[k].name), "fake%d", k);
        l->dev = &g_dev[k];
        l->qps = g_qps[k];
        l->cq = &g_cq[k];
        l->peer_rkey1 = 0x1100 + (uint32_t)k;
        l->mr[2] = &g_ctl_mr[k];
        g_ctl_mr[k].lkey = 0x2200 + (uint32_t)k;
        g_stage_mr[k].lkey = 0x3300 + (uint32_t)k;
        g_blk.mr[k] = &g_stage_mr[k];
        for (int q = 0; q < NQPS; q++)
            g_qps[k][q].qp = &g_ibqp[k][q];
    }
    g_blk.stage = g_stage;
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
        g_blk.req[i].h.comm = &r->base;
        g_blk.req[i].idx = (uint8_t)i;
        g_blk.req[i].blk = &g_blk;
    }
    rail_tagmap_init(&r->posted);
    for (int t = 0; t < 3; t++) {
        uint32_t idx;
        for (int j = 0; j < t + 1; j++)
            (void)rail_tagmap_next(&r->posted, k_tags[t], &idx);
    }
    for (int i = 0; i < 3; i++) {
        g_mr[i].magic = RAIL_MR_MAGIC;
        g_mr[i].nrails = NRAILS;
        g_mr[i].gen = 100 + (uint64_t)i;
        g_mr[i].type = NCCL_PTR_HOST;
        g_mr[i].start = (uintptr_t)g_buf;
        g_mr[i].len = sizeof(g_buf);
        for (int k = 0; k < NRAILS; k++) {
            g_mr[i].dev[k] = &g_dev[k];
            g_mr[i].lkey[k] = 0x4400 + 16 * (uint32_t)i + (uint32_t)k;
            g_mr[i].rkey[k] = 0x5500 + 16 * (uint32_t)i + (uint32_t)k;
        }
    }
}

/* ---- snapshots ---- */

struct snap {
    struct rail_recv_comm r;
    struct rail_recv_req_block blk;
    uint8_t stage[sizeof(g_stage)];
    struct rail_qp qps[NRAILS][NQPS];
    struct rail_tag_slot tags[16];
    struct fake f;
    uint64_t clock;
    int rc;
    void *req;
};

static void take(struct snap *o, int rc, void *req)
{
    memcpy(&o->r, &g_r, sizeof(g_r));
    memcpy(&o->blk, &g_blk, sizeof(g_blk));
    memcpy(o->stage, g_stage, sizeof(g_stage));
    memcpy(o->qps, g_qps, sizeof(g_qps));
    memcpy(o->tags, g_r.posted.slots, g_r.posted.cap * sizeof(o->tags[0]));
    memcpy(&o->f, &g_f, sizeof(g_f));
    o->clock = g_clock;
    o->rc = rc;
    o->req = req;
}

static void put(const struct snap *o)
{
    memcpy(&g_r, &o->r, sizeof(g_r));
    memcpy(&g_blk, &o->blk, sizeof(g_blk));
    memcpy(g_stage, o->stage, sizeof(g_stage));
    memcpy(g_qps, o->qps, sizeof(g_qps));
    memcpy(g_r.posted.slots, o->tags, g_r.posted.cap * sizeof(o->tags[0]));
    memcpy(&g_f, &o->f, sizeof(g_f));
    g_clock = o->clock;
}

/* ---- random states ---- */

static const struct rail_req_ops k_live_ops; /* a request in flight (its table is not called) */

struct args {
    int n;
    void *data[3];
    size_t sizes[3];
    int tags[3];
    void *mh[3];
};

static void randomize(struct args *a)
{
    struct rail_recv_comm *r = &g_r;
    const uint64_t now = 1000 * RAIL_CTS_DEFER_NS;
    r->base.nrails = 1 + (rnd(3) == 0);
    r->base.nqps = 1 + (int)rnd(NQPS);
    r->base.coarse_ns = now;
    r->base.health_calls = 0;
    g_clock = now + (rnd(4) == 0 ? RAIL_CTS_DEFER_NS / 2 + rnd(2) * RAIL_CTS_DEFER_NS : 0);
    atomic_store(&r->base.error, rnd(20) == 0 ? -EIO : 0);
    r->base.error_warned = rnd(2);
    r->base.failover = rnd(2);
    r->base.nup = 0;
    for (int k = 0; k < r->base.nrails; k++) {
        struct rail_link *l = &r->base.link[k];
        memset(&l->rj, 0, sizeof(l->rj));
        l->rj.up = rnd(8) != 0;
        r->base.nup += l->rj.up;
        l->rr = rnd(5);
        l->cq_work = 1;
    }
    r->cts_bytes = rnd(8) ? RAIL_CTS_COMPACT_BYTES : RAIL_CTS_BYTES;
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++)
        g_blk.req[i].stage = g_stage + (size_t)i * RAIL_RECV_STAGE(r->cts_bytes);
    for (size_t b = 0; b < sizeof(g_stage); b++)
        g_stage[b] = (uint8_t)rnd(256);
    /* Send queues: sq_wrs counts what is out; some of it completed (in the CQ). */
    memset(&g_f, 0, sizeof(g_f));
    r->sq_wrs = 0;
    bool quiet = rnd(3) != 0;
    for (int k = 0; k < NRAILS; k++)
        for (int q = 0; q < NQPS; q++) {
            struct rail_qp *p = &g_qps[k][q];
            p->sq_max = 4;
            p->sq_out = quiet || k >= r->base.nrails || q >= r->base.nqps ? 0 : (int)rnd(3);
            if (rnd(6) == 0 && k < r->base.nrails && q < r->base.nqps) {
                r->sq_wrs -= p->sq_out;
                p->sq_out = 4; /* full: none of its WRs completed yet */
            }
            r->sq_wrs += p->sq_out;
            p->rq_posted = 10 + (int)rnd(4);
            p->rq_owed = 0;
        }
    /* Requests: live (in flight) or free. */
    r->nfree = 0;
    memset(&r->fifo, 0, sizeof(r->fifo));
    r->fifo.tail = rnd(3) == 0 ? rnd(4) : 1000 + rnd(1000);
    r->ndeferred = 0;
    r->nretry = 0;
    int live[RAIL_RECV_REQ_BLOCK], nlive = 0;
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
        struct rail_recv_req *q = &g_blk.req[i];
        q->n = 1;
        q->left = (int)rnd(2);
        q->cts_pending = false;
        q->cts_retry = false;
        q->has_slot = false;
        q->staged = rnd(2);
        q->defer_ns = 0;
        q->slot_seq = 0;
        q->error = 0;
        q->e[0].done = q->left == 0;
        if (rnd(3) == 0) {
            q->h.ops = &k_live_ops;
            live[nlive++] = i;
        } else {
            q->h.ops = NULL;
        }
    }
    for (int j = RAIL_RECV_REQ_BLOCK - 1; j >= 0; j--) { /* free ones in random order */
        int i = (int)rnd(RAIL_RECV_REQ_BLOCK);
        for (int t = 0; t < RAIL_RECV_REQ_BLOCK; t++) {
            int c = (i + t) % RAIL_RECV_REQ_BLOCK;
            bool listed = false;
            for (int f = 0; f < r->nfree; f++)
                listed = listed || r->free_list[f] == c;
            if (!g_blk.req[c].h.ops && !listed) {
                r->free_list[r->nfree++] = (uint8_t)c;
                break;
            }
        }
        (void)j;
    }
    if (rnd(12) == 0) /* a request of block 1 (never allocated) on top */
        r->free_list[r->nfree++] = (uint8_t)(RAIL_RECV_REQ_BLOCK + rnd(RAIL_RECV_REQ_BLOCK));
    if (rnd(16) == 0)
        r->nfree = 0;
    r->blk_warned = rnd(2);
    /* Live requests: held back (within its delay or due), or holding a slot whose CTS is out. */
    for (int j = 0; j < nlive; j++) {
        struct rail_recv_req *q = &g_blk.req[live[j]];
        unsigned what = rnd(4);
        if (what == 0 && r->ndeferred < 2) {
            static const uint64_t age[] = {0, 1, RAIL_CTS_DEFER_NS - 1, RAIL_CTS_DEFER_NS,
                                           5 * RAIL_CTS_DEFER_NS};
            q->defer_ns = now - age[rnd(5)];
            q->staged = false;
            r->deferred[r->ndeferred++] = q->idx;
        } else if (what == 1) {
            q->slot_seq = r->fifo.tail - 1 - rnd(3);
            q->has_slot = true;
            r->fifo.by_slot[q->slot_seq % RAIL_FIFO_SLOTS] = q;
            q->staged = true;
            if (rnd(10) == 0 && r->base.nup > 0) { /* lost with a failed rail: sent again */
                q->cts_retry = true;
                r->nretry++;
            }
        }
    }
    if (rnd(8) == 0 && nlive) /* the next slot still held (an old receive) */
        r->fifo.by_slot[r->fifo.tail % RAIL_FIFO_SLOTS] = &g_blk.req[live[rnd((unsigned)nlive)]];
    /* CTS completions waiting in the CQs (a poll takes them). */
    for (int k = 0; k < r->base.nrails; k++)
        for (int q = 0; q < r->base.nqps && g_f.cq_n[k] < 2; q++)
            if (g_qps[k][q].sq_out > 0 && g_qps[k][q].sq_out < 4 && nlive && rnd(2)) {
                int idx = live[rnd((unsigned)nlive)];
                g_blk.req[idx].cts_pending = true;
                g_f.cq_wrid[k][g_f.cq_n[k]++] = rail_wrid(RAIL_WR_CTS, k, q, idx);
            }
    r->repoll = rnd(16) == 0;
    r->nquery = 0;
    /* The eager ring: credit due or not, the sender starved or not. */
    rail_eager_ring_init(&r->ring, 4);
    r->ring.credit_sent = rnd(64);
    r->ring.arrived = r->ring.credit_sent + rnd(6);
    r->ring.freed = r->ring.credit_sent + (rnd(3) == 0 ? rnd(4) : 0);
    if (r->ring.freed > r->ring.arrived)
        r->ring.freed = r->ring.arrived;
    r->ring.poll_seq = r->ring.freed;
    r->ring.poll_b = (int)(r->ring.poll_seq % 4);
    /* An empty eager message ahead of its receive (unexpected) in the oldest slot not released,
     * for the next index of the tag counted last or the one after: this receive may match it. */
    if (rnd(6) == 0 && r->ring.arrived > r->ring.freed) {
        unsigned b = (unsigned)(r->ring.freed % 4);
        r->ring.state[b] = RAIL_BOUNCE_ARRIVED;
        r->msg_size[b] = 0;
        r->polled[b] = false;
        r->image_hw[b] = 0;
        CHECK_EQ_INT(rail_eager_ring_unexp_add(&r->ring, b, r->posted.last->tag,
                                               r->posted.last->count + rnd(2)),
                     0);
    }
    r->ring.credit_busy = rnd(3) == 0;
    r->peer_eager_limit = rnd(4) == 0 ? 0 : 4096;
    /* Receive WRs owed: none, one on a recorded QP, or several. */
    r->owes = rnd(2);
    r->owes_at = -1;
    if (r->owes) {
        int k = (int)rnd((unsigned)r->base.nrails), q = (int)rnd((unsigned)r->base.nqps);
        g_qps[k][q].rq_owed = 1 + (rnd(4) == 0);
        r->owes_at = rnd(5) == 0 ? -1 : k * RAIL_MAX_QPS + q;
    }
    /* The handle cache: the handle that passed last, of this generation or renewed. */
    r->base.mr_ok = &g_mr[0];
    r->base.mr_ok_gen = rnd(16) == 0 ? 99 : g_mr[0].gen;
    g_f.post_rc = rnd(16) == 0 ? EIO : 0;

    /* The receive. */
    a->n = rnd(8) == 0 ? 2 + (int)rnd(2) : 1;
    for (int i = 0; i < a->n; i++) {
        static const size_t sizes[] = {0, 1, 8, 4096, 4097, 60000};
        a->sizes[i] = sizes[rnd(6)];
        a->data[i] = g_buf + 64 * rnd(16);
        unsigned h = rnd(16);
        a->mh[i] = h < 12 ? &g_mr[0] : h < 14 ? &g_mr[1] : &g_mr[2];
        if (rnd(24) == 0)
            a->data[i] = g_buf + sizeof(g_buf) - 100; /* its range overruns the registration */
        unsigned t = rnd(8);
        a->tags[i] = t < 5 ? g_r.posted.last->tag : k_tags[rnd(4)];
    }
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.post_send = fake_post_send;
    ops.post_recv = fake_post_recv;
    ops.poll_cq = fake_poll_cq;
    ops.modify_qp = fake_modify_qp;
    ops.reg_mr = fake_reg_mr;
    rail_verbs_set_ops(&ops);
    rail_log_set_logger(quiet); /* failed posts, bad handles, refused blocks: a line each */
    setup();

    static struct snap before, general, lean;
    int n = 150000, same = 0, lean_rdv = 0, lean_small = 0, other = 0, after_poll = 0;
    for (int it = 0; it < n; it++) {
        struct args a;
        randomize(&a);
        take(&before, 0, NULL);
        void *req = (void *)1;
        int rc = rail_recv_irecv_general(&g_r, a.n, a.data, a.sizes, a.tags, a.mh, &req);
        take(&general, rc, req);
        put(&before);
        req = (void *)1;
        rc = rail_net_irecv(&g_r, a.n, a.data, a.sizes, a.tags, a.mh, &req);
        take(&lean, rc, req);
        bool eq = memcmp(&general, &lean, sizeof(lean)) == 0;
        same += eq;
        if (!eq && it + 1 - same <= 3)
            fprintf(stderr,
                    "differs (state %d): n %d size %zu rails %d up %d cts %u nfree %d rc %d/%d "
                    "posts %d/%d sq_wrs %d/%d\n",
                    it, a.n, a.sizes[0], before.r.base.nrails, before.r.base.link[0].rj.up,
                    before.r.cts_bytes, before.r.nfree, general.rc, lean.rc, general.f.nlog,
                    lean.f.nlog, general.r.sq_wrs, lean.r.sq_wrs);
        /* Coverage: which case the state was (a posted receive of one entry, eager or not). */
        bool posted = general.req && general.rc == 0 && a.n == 1;
        bool small = before.r.peer_eager_limit > 0 && a.sizes[0] <= before.r.peer_eager_limit;
        after_poll += posted && !rail_recv_irecv_quiet(&before.r);
        if (posted && small && general.r.ndeferred == before.r.ndeferred + 1)
            lean_small++;
        else if (posted && !small && general.f.nlog >= 1 &&
                 general.r.fifo.tail == before.r.fifo.tail + 1)
            lean_rdv++;
        else
            other++;
    }
    fprintf(stderr,
            "test_recv_lean: %d states, %d held back, %d rendezvous, %d other; %d posted after "
            "a poll\n",
            n, lean_small, lean_rdv, other, after_poll);
    CHECK_EQ_INT(same, n);
    CHECK(lean_small > n / 20);
    CHECK(lean_rdv > n / 20);
    CHECK(other > n / 4);
    CHECK(after_poll > n / 50);
    rail_log_set_logger(NULL);
    rail_verbs_set_ops(NULL);
    rail_tagmap_free(&g_r.posted);
    return check_report("test_recv_lean");
}
