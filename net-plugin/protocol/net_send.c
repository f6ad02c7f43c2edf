/* SPDX-License-Identifier: Apache-2.0 */
/* Sending side. The receiver RDMA-writes clear-to-send (CTS) entries into this comm's FIFO:
 * one slot per irecv, one entry per grouped receive, each naming (tag, per-tag index, buffer,
 * keys). isend(tag) sends the j-th message with that tag, j = messages already sent with it:
 *   - rendezvous: the CTS entry (tag, j) is here -> RDMA WRITE the data into the receive buffer
 *     (striped over the rails), then a size record by RDMA WRITE WITH IMM (immediate =
 *     slot/entry); net_send_post.c has the shapes (pipelined, two-phase) and the re-sending;
 *   - eager: no such entry yet, size <= the eager limit and a bounce slot is free -> one RDMA
 *     WRITE WITH IMM of header + data into the receiver's bounce slot (immediate = slot);
 *     the CTS entry (tag, j) arrives later and is skipped as already satisfied;
 *   - otherwise *request = NULL: NCCL calls again.
 * Bounce slots are used in ring order; the receiver returns them by writing a freed count
 * (the credit word behind the FIFO). The eager write goes on any rail that is up. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/net_send.h"

#include "log.h"
#include "nccl/nccl_net.h"
#include "params.h"
#include "protocol/net_clock.h"
#include "protocol/net_data.h"
#include "protocol/net_health.h"
#include "protocol/net_link.h"
#include "protocol/net_qsize.h"
#include "protocol/net_reg.h"
#include "protocol/net_send_eager.h"
#include "protocol/net_send_lean.h"
#include "protocol/net_send_blocks.h"
#include "protocol/net_send_post.h"
#include "protocol/net_send_wr.h"
#include "protocol/net_telemetry.h"
#include "telemetry/rail_stats.h"
#include "transport/net_verbs.h"

static const struct rail_req_ops send_req_ops;

/* Every request allocated so far is in flight: one block more for request i (out of line: rare).
 * When that fails, the comm keeps the requests it has (the caller calls again once one
 * completes). */
static __attribute__((noinline)) bool block_more(struct rail_send_comm *s, int i)
{
    char err[256] = "";
    if (rail_send_block_alloc(s, i / RAIL_SEND_REQ_BLOCK, err, sizeof(err)) == 0)
        return true;
    if (!s->blk_warned)
        RAIL_INFO(NCCL_NET, "send comm %p: no more than %d messages in flight: %s", (void *)s,
                  RAIL_SEND_REQS - s->nfree, err);
    s->blk_warned = true;
    return false;
}

static inline __attribute__((always_inline)) struct rail_send_req *
req_alloc(struct rail_send_comm *s)
{
    if (s->nfree == 0)
        return NULL;
    int i = s->free_list[s->nfree - 1];
    if (!s->blk[i / RAIL_SEND_REQ_BLOCK] && !block_more(s, i))
        return NULL;
    s->nfree--;
    struct rail_send_req *q = rail_send_req_at(s, i);
    q->h.ops = &send_req_ops;
    q->wrs_left = 0;
    q->size = 0;
    q->error = 0;
    return q;
}

/* Absorbs newly written FIFO slots (cts_fifo.c), validating every entry. */
static void absorb(struct rail_send_comm *s)
{
    if (!rail_cts_fifo_news(&s->cts, s->fifo))
        return; /* one load: nothing written since the last call */
    char err[256];
    if (rail_cts_fifo_absorb(&s->cts, s->fifo, s->base.nrails, &s->sent, err, sizeof(err)) < 0)
        rail_comm_fail(&s->base, -EPROTO, "%s", err);
}

/* Inlined into both callers (rendezvous and eager): as a call its prologue and epilogue were 20
 * of its 51 instructions per message. */
static inline __attribute__((always_inline)) struct rail_send_req *
req_prepare(struct rail_send_comm *s, void *data, size_t size, const struct rail_mr *m)
{
    struct rail_send_req *q = req_alloc(s);
    if (!q)
        return NULL;
    q->data = (uintptr_t)data;
    q->size = size;
    rail_2ph_plan(&q->tp, 0);
    q->striped = q->too_big = false;
    q->host = m->type == NCCL_PTR_HOST;
    /* Every rail's slot, a fixed size (a loop to nrails is a memcpy call): the handle's keys
     * past the comm's rails are never read. */
    memcpy(q->lkey, m->lkey, sizeof(q->lkey));
    return q;
}

/* Rendezvous with CTS entry cts (slot sequence seq, entry e, matched as sh): its receive buffer
 * is known. */
static int send_taken(struct rail_send_comm *s, struct rail_shadow *sh, uint64_t seq, unsigned e,
                      const struct rail_cts *cts, void *data, size_t size, int tag,
                      const struct rail_mr *m, void **request)
{
    struct rail_send_req *q = req_prepare(s, data, size, m);
    if (!q)
        return 0;
    q->too_big = size > cts->size;
    q->raddr = cts->addr;
    memcpy(q->rkey, cts->rkey, sizeof(q->rkey)); /* fixed size, as the lkeys (req_prepare) */
    q->seq = seq;
    q->entry = e;
    int rc = rail_send_post_rdv(s, q);
    if (rc != 0) {
        rail_send_req_free(s, q);
        return rc < 0 ? rc : 0; /* 1: no room yet, NCCL calls again */
    }
    rail_cts_fifo_resolve(&s->cts, sh);
    uint32_t ignored;
    rc = rail_tagmap_next_inl(&s->sent, tag, &ignored);
    if (q->too_big) {
        /* The record tells the receiver; this side reports the misuse too. */
        RAIL_WARN(NCCL_NET,
                  "isend of %zu bytes (tag %d) but the matching receive buffer holds %llu bytes",
                  size, tag, (unsigned long long)cts->size);
        q->error = -EINVAL;
    }
    *request = q;
    return rc;
}

/* Entry 0 of slot sequence seq (the one rail_cts_fifo_next took, as cts): the direct path when
 * rail_send_direct_ok, the striped one when rail_send_striped_ok and the scheduler cuts it in two
 * non-empty pieces, else send_taken. try_send's, and through rail_send_taken test_send_direct's and
 * test_send_striped's. */
static inline __attribute__((always_inline)) int taken(struct rail_send_comm *s, uint64_t seq,
                                                       const struct rail_cts *cts, void *data,
                                                       size_t size, int tag,
                                                       const struct rail_mr *m, void **request)
{
    if (rail_send_direct_ok(s, size, cts))
        return rail_send_direct(s, &send_req_ops, seq, cts, data, size, tag, m, request);
    unsigned qp0, qp1;
    if (rail_send_striped_ok(s, size, cts, &qp0, &qp1)) {
        uint64_t end = rail_stripe_two_end(&s->sched, size);
        if (end > 0 && end < size)
            return rail_send_striped(s, &send_req_ops, seq, cts, data, size, tag, m, end, qp0, qp1,
                                     request);
    }
    return send_taken(s, &s->cts.shadow[seq % RAIL_FIFO_SLOTS][0], seq, 0, cts, data, size, tag, m,
                      request);
}

int rail_send_taken(struct rail_send_comm *s, uint64_t seq, const struct rail_cts *cts, void *data,
                    size_t size, int tag, const struct rail_mr *m, void **request)
{
    return taken(s, seq, cts, data, size, tag, m, request);
}

int rail_send_taken_general(struct rail_send_comm *s, uint64_t seq, const struct rail_cts *cts,
                            void *data, size_t size, int tag, const struct rail_mr *m,
                            void **request)
{
    return send_taken(s, &s->cts.shadow[seq % RAIL_FIFO_SLOTS][0], seq, 0, cts, data, size, tag, m,
                      request);
}

/* Rendezvous: entry `sh` (slot sequence seq, entry e) was matched in the shadow; the entry is
 * read again from the FIFO memory (the shadow keeps only what matching needs). */
static int send_rdv(struct rail_send_comm *s, struct rail_shadow *sh, uint64_t seq, unsigned e,
                    void *data, size_t size, int tag, const struct rail_mr *m, void **request)
{
    if (s->slot_busy[seq % RAIL_FIFO_SLOTS])
        return 0; /* the previous message of this FIFO slot is still in flight */
    struct rail_cts cts;
    char err[256];
    if (rail_cts_fifo_take(&s->cts, s->fifo, s->base.nrails, sh, seq, e, &cts, err, sizeof(err)) !=
        0) {
        rail_comm_fail(&s->base, -EPROTO, "%s", err);
        return -EPROTO;
    }
    return send_taken(s, sh, seq, e, &cts, data, size, tag, m, request);
}

static int send_eager(struct rail_send_comm *s, void *data, size_t size, int tag, uint32_t index,
                      const struct rail_mr *m, void **request)
{
    uint64_t freed = __atomic_load_n((uint64_t *)(s->fifo + RAIL_CREDIT_OFF_OF(s->cts.entry_bytes)),
                                     __ATOMIC_ACQUIRE);
    int room = rail_eager_sender_room(s->eager_posted, freed, s->eager_slots);
    if (room < 0) {
        rail_comm_fail(&s->base, -EPROTO, "receiver returned %llu eager slots, only %llu were used",
                       (unsigned long long)freed, (unsigned long long)s->eager_posted);
        return -EPROTO;
    }
    if (room == 0)
        return 0; /* no free bounce slot */
    unsigned b = (unsigned)(s->eager_posted % (uint64_t)s->eager_slots);
    if (s->bounce_busy[b])
        return 0; /* a re-sent copy of its previous message may still be in flight */
    struct rail_send_req *q = req_prepare(s, data, size, m);
    if (!q)
        return 0;
    q->bounce = b;
    q->seq = s->eager_posted;
    int rc = rail_send_post_eager(s, q, tag, index);
    if (rc != 0) {
        rail_send_req_free(s, q);
        return rc < 0 ? rc : 0;
    }
    s->eager_posted++;
    uint32_t ignored;
    rc = rail_tagmap_next_inl(&s->sent, tag, &ignored);
    *request = q;
    return rc;
}

static int isend_entered(struct rail_send_comm *s, void *data, size_t size, int tag, void *mhandle,
                         void **request);

int rail_net_isend(void *comm, void *data, size_t size, int tag, void *mhandle, void **request)
{
    struct rail_send_comm *s = comm;
    if (!request)
        return -EINVAL;
    *request = NULL;
    if (!s || s->base.ops != &rail_send_comm_ops) {
        RAIL_WARN(NCCL_NET, "isend: %p is not a send comm of this plugin", comm);
        return -EINVAL;
    }
    if (s->base.nrails == 1) /* never two-phase: no other thread polls it */
        return isend_entered(s, data, size, tag, mhandle, request);
    rail_send_enter(s);
    int rc = isend_entered(s, data, size, tag, mhandle, request);
    if (s->helped && s->n2ph == 0)
        rail_send_help_unlist(s);
    rail_send_leave(s);
    return rc;
}

/* One attempt: rendezvous when the receiver's clear-to-send for (tag, index) is here, eager when
 * the message fits a bounce slot, otherwise nothing (*request stays NULL). The common case (the
 * next FIFO slot holds exactly this message's entry, or nothing new) is decided from one read
 * (rail_cts_fifo_next: the same outcome as absorb + find + take); the rest goes the general way. */
static int try_send(struct rail_send_comm *s, void *data, size_t size, int tag,
                    const struct rail_mr *m, void **request)
{
    struct rail_shadow *sh;
    uint64_t seq;
    unsigned e;
    uint32_t index = rail_tagmap_get_inl(&s->sent, tag);
    struct rail_cts cts;
    int next = rail_cts_fifo_next(&s->cts, s->fifo, tag, index, &seq, &cts);
    if (next == RAIL_CTS_NEXT_TAKEN) {
        if (atomic_load(&s->base.error))
            return rail_comm_error(&s->base);
        if (s->slot_busy[seq % RAIL_FIFO_SLOTS])
            return 0; /* the previous message of this FIFO slot is still in flight */
        return taken(s, seq, &cts, data, size, tag, m, request);
    }
    if (next == RAIL_CTS_NEXT_OTHER) {
        absorb(s);
        if (atomic_load(&s->base.error))
            return rail_comm_error(&s->base);
        sh = rail_cts_fifo_find(&s->cts, tag, index, &seq, &e);
        if (sh)
            return send_rdv(s, sh, seq, e, data, size, tag, m, request);
    } else if (atomic_load(&s->base.error)) {
        return rail_comm_error(&s->base);
    }
    if (size <= s->eager_limit && s->eager_slots > 0)
        return send_eager(s, data, size, tag, index, m, request);
    return 0;
}

/* The post comes first: completions are polled only when the message could not go (they may
 * return what it was missing: a bounce slot, send-queue room, a request). An isend that posts
 * nothing ticks the health check (its caller polls it like a test: with a dead receiver no
 * clear-to-send ever comes, and this is how it fails in bounded time); one that posts leaves
 * that to test(). Under a ping-pong the isend is on the critical path and the rest is not
 * (bench/README.md, boots D and E). */
static int isend_entered(struct rail_send_comm *s, void *data, size_t size, int tag, void *mhandle,
                         void **request)
{
    const struct rail_mr *m = NULL;
    int rc = rail_comm_error(&s->base);
    if (rc)
        return rc;
    rc = rail_mr_check(&s->base, mhandle, data, size, &m);
    if (rc)
        return rc;
    rc = try_send(s, data, size, tag, m, request);
    if (rc == 0 && !*request) {
        rail_comm_progress(&s->base);
        rc = rail_comm_error(&s->base);
        if (rc == 0)
            rc = try_send(s, data, size, tag, m, request);
    }
    if (!*request)
        rail_health_tick(&s->base, true); /* a failure it finds shows at once, or next call */
    return rc ? rc : *request ? 0 : rail_comm_error(&s->base);
}

/* Done for NCCL: a pipelined message once its WRs completed (and no query is open); an eager one
 * once its write completed; a two-phase one once every piece completed and its size record is
 * posted (rail_2ph_handed): NCCL's buffer is no longer read (a re-sent record comes from the
 * request's own source), and what is left (the record's completion, a re-post if its rail fails)
 * is the plugin's: the request is then held until that completion (req_end). */
static bool req_done(const struct rail_send_comm *s, const struct rail_send_req *q)
{
    if (q->kind == RAIL_SREQ_PIPE)
        return q->wrs_left == 0 && !q->unsure;
    /* Only with a control QP: there the record goes out at once; on a data QP it may queue
     * behind the pieces of later messages, and a provider that moves data only in the sender's
     * calls (shm) would leave it there once NCCL stops calling (mr_record_ahead_off). */
    if (q->kind == RAIL_SREQ_2PH && s->ctl_qp >= 0)
        return rail_2ph_handed(&q->tp);
    return rail_2ph_done(&q->tp);
}

static int held_test(struct rail_req_head *h, int *done, int *sizes);
static const struct rail_req_ops send_held_ops = {.test = held_test, .ticks_health = false};

/* The request goes back to NCCL: freed, or held while its size record is out (its completion
 * frees it: net_send_post.c). */
static inline void req_end(struct rail_send_comm *s, struct rail_send_req *q)
{
    if (q->kind == RAIL_SREQ_2PH && q->tp.rec == RAIL_CH_POSTED) {
        q->held = true;
        q->h.ops = &send_held_ops; /* still in flight for the completions, not for NCCL */
        s->nheld++;
        return;
    }
    rail_send_req_free(s, q);
}

/* NCCL tested a request it already got back as done. */
static int held_test(struct rail_req_head *h, int *done, int *sizes)
{
    (void)sizes;
    *done = 0;
    RAIL_WARN(NCCL_NET, "test: %p is not a request in flight (completed or never issued)",
              (void *)h);
    return -EINVAL;
}

static int test_entered(struct rail_send_comm *s, struct rail_send_req *q, int *done, int *sizes);
static inline void send_on_wc(struct rail_comm *c, int rail, const struct ibv_wc *wc);
static void send_retry(struct rail_comm *c);

static int send_test(struct rail_req_head *h, int *done, int *sizes)
{
    struct rail_send_req *q = (struct rail_send_req *)h;
    struct rail_send_comm *s = (struct rail_send_comm *)q->h.comm;
    if (s->base.nrails == 1)
        return test_entered(s, q, done, sizes);
    rail_send_enter(s);
    int rc = test_entered(s, q, done, sizes);
    if (s->helped && s->n2ph == 0)
        rail_send_help_unlist(s);
    rail_send_leave(s);
    return rc;
}

static int test_entered(struct rail_send_comm *s, struct rail_send_req *q, int *done, int *sizes)
{
    /* rail_comm_progress in place, for what the send kind has (no ops->poll; a CQ polled while
     * WRs are out on its rail): the same polls, handlers and help pass, no indirect calls. One
     * rail apart: without the rail loop. */
    if (s->base.nrails == 1) {
        if (s->base.link[0].cq_work)
            rail_comm_drain(&s->base, 0, send_on_wc);
    } else if (s->base.nrails == 2) { /* the dual-rail NIC: the loop unrolled */
        if (s->base.link[0].cq_work)
            rail_comm_drain(&s->base, 0, send_on_wc);
        if (s->base.link[1].cq_work)
            rail_comm_drain(&s->base, 1, send_on_wc);
    } else {
        for (int r = 0; r < s->base.nrails; r++)
            if (s->base.link[r].cq_work)
                rail_comm_drain(&s->base, r, send_on_wc);
    }
    send_retry(&s->base);
    rail_comm_help_others(&s->base);
    /* A failed comm never reuses anything: its requests end at once (two-phase ones may have
     * pieces parked for a re-send that will never come; an unsure one never gets its answer). */
    if (q->unsure && atomic_load(&s->base.error) && !q->error)
        q->error = atomic_load(&s->base.error);
    if (req_done(s, q) ||
        ((q->kind != RAIL_SREQ_PIPE || q->unsure) && atomic_load(&s->base.error))) {
        int err = q->error;
        if (err) {
            req_end(s, q);
            return atomic_load(&s->base.error) ? rail_comm_error(&s->base) : err;
        }
        if (sizes)
            sizes[0] = (int)q->size;
        req_end(s, q);
        *done = 1;
        return 0;
    }
    /* In flight: test() ticks the health check and returns the comm's error itself. */
    return atomic_load(&s->base.error);
}

/* ---- the send kind's tables ---- */

static struct rail_send_comm *send_of(struct rail_comm *c)
{
    return (struct rail_send_comm *)c; /* base is the first member; only rail_send_comm_ops */
}

static struct rail_stripe *send_sched(struct rail_comm *c)
{
    return &send_of(c)->sched;
}

/* The stripe scheduler (speeds of the rails), the piece size (the smallest max message over the
 * rails) and NCCL_IB_SPLIT_DATA_ON_QPS. */
static int send_setup_rails(struct rail_comm *c, char *err, size_t errlen)
{
    struct rail_send_comm *s = send_of(c);
    struct rail_stripe_config cfg;
    rail_stripe_config_default(&cfg, c->nrails);
    rail_stripe_config_from_env(&cfg);
    s->max_chunk = UINT32_MAX;
    for (int r = 0; r < c->nrails; r++) {
        cfg.speed_mbps[r] = (uint32_t)c->link[r].dev->speed;
        if (c->link[r].dev->max_msg < s->max_chunk)
            s->max_chunk = c->link[r].dev->max_msg;
    }
    s->max_chunk &= ~(uint64_t)(RAIL_STRIPE_ALIGN - 1);
    if (s->max_chunk == 0)
        s->max_chunk = RAIL_STRIPE_ALIGN;
    s->split_qps = rail_param_bool(RAIL_PARAM_IB_SPLIT_DATA_ON_QPS);
    int rc = rail_stripe_init(&s->sched, &cfg, err, errlen);
    s->direct_max = rc == 0 ? rail_send_direct_max(s) : 0;
    s->striped_max = rc == 0 ? rail_send_striped_max(s) : 0;
    return rc;
}

uint64_t rail_send_direct_max(const struct rail_send_comm *s)
{
    /* What rail_send_post_rdv's one-piece test and post_pipelined's direct write ask of a size
     * (rail_stripe_one_whole, max_chunk, RAIL_IMM_DIRECT_MAX, rail_ar_imm_data_ok), less what
     * changes per message (the rail being up). */
    if (s->base.nrails != 1 || s->sched.nrails != 1 || (s->split_qps && s->ndata != 1) ||
        s->ndata < 1)
        return 0;
    uint64_t max = s->max_chunk < RAIL_IMM_DIRECT_MAX ? s->max_chunk : RAIL_IMM_DIRECT_MAX;
    if (s->ar && s->ar_threshold < max)
        max = s->ar_threshold;
    return max < RAIL_STRIPE_MAX_SIZE ? max : RAIL_STRIPE_MAX_SIZE;
}

uint64_t rail_send_striped_max(const struct rail_send_comm *s)
{
    /* What rail_send_post_rdv asks of a message it splits in two one-piece chunks
     * (rail_stripe_schedule's size limit, cut_pieces' one piece per chunk on one QP), less what
     * changes per message (the rails being up, the split). */
    if (s->base.nrails != 2 || s->sched.nrails != 2 || (s->split_qps && s->ndata != 1) ||
        s->ndata < 1)
        return 0;
    return s->max_chunk < RAIL_STRIPE_MAX_SIZE ? s->max_chunk : RAIL_STRIPE_MAX_SIZE;
}

/* Always inline: into test_entered's CQ drains (and, as the table's on_wc, one copy out of line).
 */
static inline __attribute__((always_inline)) void send_on_wc(struct rail_comm *c, int rail,
                                                             const struct ibv_wc *wc)
{
    rail_send_on_wc_inl(send_of(c), rail, wc);
}

static void send_retry(struct rail_comm *c)
{
    struct rail_send_comm *s = send_of(c);
    if (s->nunsure || s->npending) /* usually neither: no call */
        rail_send_retry(s);
}

/* closeSend with size records still out (requests NCCL got back as done, held): the receiver
 * owns those messages only once their records land, so the comm is polled (re-posting a record
 * whose rail fails) until every one has completed, the comm fails, or RAIL_CLOSE_DRAIN_NS pass;
 * then the close goes on as for any work still in flight (the QPs are destroyed before the
 * request blocks are freed: nothing is left to touch them). */
#define RAIL_CLOSE_DRAIN_NS (5ull * 1000 * 1000 * 1000)

/* Set once a close gave up on its records: a peer that stopped answering (a hung node, an abort)
 * would otherwise cost every later close of the process its own 5 s. */
static atomic_bool g_drain_gave_up;

static void drain_held(struct rail_send_comm *s)
{
    if (atomic_load_explicit(&g_drain_gave_up, memory_order_relaxed))
        return;
    uint64_t t0 = rail_now_ns();
    for (;;) {
        rail_send_enter(s); /* nheld changes only inside (a help pass may take a completion) */
        int left = atomic_load(&s->base.error) ? 0 : s->nheld;
        if (left) {
            rail_comm_progress(&s->base);
            rail_health_tick(&s->base, true);
            left = atomic_load(&s->base.error) ? 0 : s->nheld;
        }
        rail_send_leave(s);
        if (!left)
            return;
        if (rail_now_ns() - t0 > RAIL_CLOSE_DRAIN_NS) {
            RAIL_WARN(NCCL_NET,
                      "closeSend %p: %d size record(s) of messages reported done still out "
                      "after %llu s: closing without them (their receives never complete); later "
                      "closes of this process do not wait",
                      (void *)s, left, RAIL_CLOSE_DRAIN_NS / 1000000000ull);
            atomic_store_explicit(&g_drain_gave_up, true, memory_order_relaxed);
            return;
        }
    }
}

static void send_quiesce(struct rail_comm *c)
{
    if (c->nrails > 1) /* only multi-rail comms send two-phase */
        drain_held(send_of(c));
    rail_send_help_unlist(send_of(c));
    rail_send_enter(send_of(c));
}

static void send_release(struct rail_comm *c)
{
    struct rail_send_comm *s = send_of(c);
    rail_send_blocks_free(s);
    free(s->fifo);
    free(s->local);
    rail_tagmap_free(&s->sent);
}

const struct rail_comm_ops rail_send_comm_ops = {
    .kind = "send",
    .stats_dir = RAIL_STATS_SEND,
    .drives_rejoin = true,
    .sched = send_sched,
    .setup_rails = send_setup_rails,
    .poll = NULL,
    .on_wc = send_on_wc,
    .retry = send_retry,
    .quiesce = send_quiesce,
    .release = send_release,
};

static const struct rail_req_ops send_req_ops = {.test = send_test, .ticks_health = true};

/* ---- construction (request blocks and image sources: net_send_blocks.c) ---- */

int rail_send_images_alloc(struct rail_send_comm *s, char *err, size_t errlen)
{
    if (s->poll_max == 0 || s->eager_slots <= 0 || s->local)
        return 0;
    size_t len = (size_t)s->eager_slots * RAIL_IMAGE_STRIDE;
    int rc = rail_region_alloc(len, &s->local);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory for the eager image sources");
        return rc;
    }
    return rail_region_reg(&s->base, 1, s->local, len, false, err, errlen);
}

int rail_send_comm_create(struct rail_netdev *g, int nqps, unsigned cts_bytes,
                          struct rail_send_comm **out, char *err, size_t errlen)
{
    struct rail_send_comm *s = calloc(1, sizeof(*s));
    int rc = 0;
    if (!s)
        return -ENOMEM;
    s->base.ops = &rail_send_comm_ops;
    s->base.magic = RAIL_SEND_MAGIC;
    s->base.nrails = g->nrails;
    /* Over several rails a message may be striped: its size record is written once every piece
     * has completed, and on a data QP it would queue behind the pieces of the messages posted
     * since. Each rail then gets one QP more for records, queries and eager writes, sized by
     * what it carries (net_qsize.h), not like a data QP; a wire version 6 receiver sizes its
     * peer QP's receive queue by it (META_S ctl_depth), an older one serves every QP alike.
     * Not at the QP limit of the wire, nor with NCCL_RAIL_CONTROL_QP=0. */
    s->ndata = nqps;
    s->ctl_qp =
        g->nrails > 1 && nqps < RAIL_MAX_QPS && rail_param_bool(RAIL_PARAM_CONTROL_QP) ? nqps : -1;
    s->base.nqps = nqps + (s->ctl_qp >= 0);
    s->base.fd = -1;
    s->base.group = g;
    rail_send_state_init(s);
    s->cts.entry_bytes = cts_bytes; /* the FIFO's layout (wire/cts_layout.h) */
    int sq = (int)rail_param_int(RAIL_PARAM_SEND_QUEUE_DEPTH);
    int inl = (int)rail_param_int(RAIL_PARAM_EAGER_INLINE);
    /* With a control QP the eager writes go there only: the data QPs ask for no inline room
     * (on an HCA it widens every work-queue entry of the queue). */
    struct rail_qshape shape = {.nqps = s->base.nqps,
                                .sq = sq,
                                .rq = 1,
                                .inl = s->ctl_qp >= 0 ? 0 : inl,
                                .has_ctl = s->ctl_qp >= 0,
                                .ctl_sq = rail_qsize_ctl_send(sq),
                                .ctl_rq = 1,
                                .ctl_inl = inl};
    for (int r = 0; r < g->nrails && rc == 0; r++)
        rc = rail_link_create(&s->base, r, g->rail[r], &shape, err, errlen);
    if (rc == 0)
        rc = rail_region_alloc(RAIL_SEND_REGION_OF(cts_bytes), &s->fifo);
    if (rc == 0)
        rc = rail_region_reg(&s->base, 0, s->fifo, RAIL_SEND_REGION_OF(cts_bytes), true, err,
                             errlen);
    if (rc == 0)
        rc = rail_send_block_alloc(s, 0, err, errlen);
    if (rc < 0) {
        if (rc == -ENOMEM && !err[0])
            snprintf(err, errlen, "out of memory for the send comm");
        rail_comm_free(&s->base);
        return rc;
    }
    *out = s;
    return 0;
}
