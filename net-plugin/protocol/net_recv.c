/* SPDX-License-Identifier: Apache-2.0 */
/* Receiving side. irecv(n <= 8) takes a request, numbers each entry with its per-tag index and
 * RDMA-writes one clear-to-send slot (n entries) into the sender's FIFO (slots are taken in the
 * order the CTS are written; the sender matches by tag and index). Data then arrives as
 * WRITE WITH IMM completions:
 *   - rendezvous: the sender wrote the data straight into the buffer, then a size record
 *     (immediate = slot/entry) that completes that entry; a message of one chunk up to
 *     RAIL_IMM_DIRECT_MAX bytes is a single write whose immediate carries slot/entry and size;
 *   - eager: header + data landed in a bounce slot (immediate = slot); it completes the posted
 *     entry with the same (tag, index), or waits as "unexpected" until the irecv that posts it.
 * Eager payloads are copied out and their slot released; the released count goes back to the
 * sender (credit write, batched) so it may reuse the slots. A receive no larger than what the
 * sender sends eagerly holds its clear-to-send back (net_recv_cts.c); eager arrivals are
 * net_recv_eager.c: the message usually comes eagerly and no CTS is ever written for it. Every
 * peer-provided value (immediate, record, header) is checked before use. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/net_recv.h"
#include "protocol/net_recv_blocks.h"

#include "log.h"
#include "protocol/net_ask.h"
#include "protocol/net_clock.h"
#include "protocol/net_data.h"
#include "protocol/net_flush.h"
#include "protocol/net_health.h"
#include "protocol/net_qsize.h"
#include "protocol/net_recv_cts.h"
#include "protocol/net_recv_eager.h"
#include "protocol/net_recv_lean.h"
#include "protocol/net_recv_wc.h"
#include "protocol/net_reg.h"
#include "protocol/net_telemetry.h"
#include "transport/net_verbs.h"
#include "wire/cts_layout.h"

static const struct rail_req_ops recv_req_ops;
static inline __attribute__((always_inline)) int recv_progress_cqs(struct rail_recv_comm *r);
static int recv_progress_rails(struct rail_recv_comm *r);

/* A free request, its block allocated when every request so far is in flight; NULL when none
 * (the caller calls again once one completes). */
static struct rail_recv_req *req_alloc(struct rail_recv_comm *r)
{
    if (r->nfree == 0)
        return NULL;
    int i = r->free_list[r->nfree - 1];
    if (!r->blk[i / RAIL_RECV_REQ_BLOCK]) {
        char err[256] = "";
        if (rail_recv_block_alloc(r, i / RAIL_RECV_REQ_BLOCK, err, sizeof(err)) < 0) {
            if (!r->blk_warned)
                RAIL_INFO(NCCL_NET, "receive comm %p: no more than %d receives in flight: %s",
                          (void *)r, RAIL_RECV_REQS - r->nfree, err);
            r->blk_warned = true;
            return NULL;
        }
    }
    r->nfree--;
    return rail_recv_req_at(r, i);
}

static void req_free(struct rail_recv_comm *r, struct rail_recv_req *q)
{
    uint8_t idx = q->idx;
    if (q->has_slot)
        rail_cts_tail_release(&r->fifo, q->slot_seq, q);
    rail_recv_undefer_req(r, idx);
    q->h.ops = NULL;
    r->free_list[r->nfree++] = idx;
}

/* The receive of slot/entry still waiting for data, or NULL after failing the comm. */
static struct rail_recv_req *pending_entry(struct rail_recv_comm *r, unsigned slot, unsigned entry,
                                           const char *what)
{
    struct rail_recv_req *q = rail_cts_tail_owner(&r->fifo, slot);
    if (!q || (int)entry >= q->n || q->e[entry].done) {
        rail_comm_fail(&r->base, -EPROTO, "%s for slot %u entry %u matches no pending receive",
                       what, slot, entry);
        return NULL;
    }
    return q;
}

/* The data itself was the WRITE_WITH_IMM: the immediate carried its size. */
static inline __attribute__((always_inline)) void on_direct(struct rail_recv_comm *r, unsigned slot,
                                                            unsigned entry, uint32_t size)
{
    struct rail_recv_req *q = pending_entry(r, slot, entry, "direct write");
    if (!q)
        return;
    struct rail_recv_entry *e = &q->e[entry];
    if (size > e->cap) {
        rail_comm_fail(&r->base, -EPROTO, "direct write of %u bytes into a %llu-byte buffer", size,
                       (unsigned long long)e->cap);
        return;
    }
    e->size = size;
    e->done = true;
    q->left--;
}

static void on_record(struct rail_recv_comm *r, unsigned slot, unsigned entry)
{
    if (r->base.failover) {
        /* A record written again after a rail failure, for a message already complete (its
         * slot may even hold a newer receive): drop it. */
        struct rail_recv_req *p = rail_cts_tail_owner(&r->fifo, slot);
        const struct rail_record *rec =
            (const struct rail_record *)(r->records + ((size_t)slot * RAIL_MAX_RECVS + entry) *
                                                          RAIL_RECORD_BYTES);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (!p || (int)entry >= p->n || p->e[entry].done ||
            rec->seq != (uint32_t)(p->slot_seq + 1)) {
            RAIL_TRACE(NCCL_NET, "dropped a re-sent completion record (slot %u entry %u)", slot,
                       entry);
            return;
        }
    }
    struct rail_recv_req *q = pending_entry(r, slot, entry, "completion record");
    if (!q)
        return;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const struct rail_record *rec =
        (const struct rail_record *)(r->records +
                                     ((size_t)slot * RAIL_MAX_RECVS + entry) * RAIL_RECORD_BYTES);
    struct rail_recv_entry *e = &q->e[entry];
    if (rec->seq != (uint32_t)(q->slot_seq + 1) || rec->entry != entry) {
        rail_comm_fail(&r->base, -EPROTO, "stale completion record in slot %u entry %u", slot,
                       entry);
        return;
    }
    if (rec->size == RAIL_RECORD_TOO_BIG) {
        RAIL_WARN(NCCL_NET,
                  "the sender's message (tag %d) is larger than the %llu-byte receive "
                  "buffer",
                  e->tag, (unsigned long long)e->cap);
        q->error = -EINVAL;
    } else if (rec->size > e->cap) {
        rail_comm_fail(&r->base, -EPROTO, "record claims %llu bytes in a %llu-byte buffer",
                       (unsigned long long)rec->size, (unsigned long long)e->cap);
        return;
    } else {
        e->size = rec->size;
    }
    e->done = true;
    q->left--;
}

/* A work request of rail failed: the rail is out; what it carried is sent again elsewhere. */
static void on_wc_error(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc, int kind,
                        int idx)
{
    struct rail_link *l = &r->base.link[rail];
    bool flushed_after_down = wc->status == IBV_WC_WR_FLUSH_ERR && !l->rj.up;
    struct rail_recv_req *q = idx < RAIL_RECV_REQS ? rail_recv_req_at(r, idx) : NULL;
    if (!flushed_after_down) {
        rail_tel_error(&r->base, rail);
        if (!rail_wc_rail_failure(wc->status) ||
            !rail_link_fail(&r->base, rail, rail_verbs_wc_status_str(wc->status))) {
            rail_wc_error(&r->base, rail, wc);
            if (kind == RAIL_WR_CTS && q)
                q->cts_pending = false;
            return;
        }
    }
    if (kind == RAIL_WR_CTS && q && q->h.ops) {
        q->cts_retry = true;
        r->nretry++;
    } else if (kind == RAIL_WR_CREDIT) {
        rail_eager_ring_credit_lost(&r->ring); /* sent again by the next send_credit (test) */
    } else if (kind == RAIL_WR_ANSWER && idx < RAIL_FIFO_SLOTS * RAIL_MAX_RECVS &&
               !r->query[idx].asked) {
        r->query[idx].asked = true; /* answered again on a rail that is up */
        r->nquery++;
    }
}

static __attribute__((noinline)) void recv_on_wc_any(struct rail_comm *c, int rail,
                                                     const struct ibv_wc *wc)
{
    struct rail_recv_comm *r = (struct rail_recv_comm *)c; /* base first; rail_recv_comm_ops */
    struct rail_link *l = &r->base.link[rail];
    int kind = rail_wrid_kind(wc->wr_id), qp = rail_wrid_qp(wc->wr_id);
    int idx = rail_wrid_idx(wc->wr_id);

    if (kind != RAIL_WR_RECV) {
        l->qps[qp].sq_out--;
        r->sq_wrs--;
    } else
        l->qps[qp].rq_posted--;
    if (wc->status != IBV_WC_SUCCESS) {
        on_wc_error(r, rail, wc, kind, idx);
        return;
    }
    switch (kind) {
    case RAIL_WR_CTS:
        if (idx < RAIL_RECV_REQS && rail_recv_req_at(r, idx))
            rail_recv_req_at(r, idx)->cts_pending = false;
        return;
    case RAIL_WR_ANSWER:
        return;
    case RAIL_WR_CREDIT:
        rail_eager_ring_credit_done(&r->ring);
        if (rail_eager_ring_credit_due(&r->ring))
            rail_recv_send_credit(r);
        return;
    case RAIL_WR_RECV:
        break;
    default:
        rail_comm_fail(&r->base, -EIO, "receive comm got a completion of kind %d", kind);
        return;
    }
    if (l->rj.up || l->rj.ready) {
        l->qps[qp].rq_owed++;
        int at = rail * RAIL_MAX_QPS + qp;
        if (!r->owes) {
            r->owes = true;
            r->owes_at = at;
        } else if (r->owes_at != at) {
            r->owes_at = -1; /* several QPs owe: the next repost walks them all */
        }
        /* Only a comm whose every call completes something gets here with a full batch. */
        if (l->qps[qp].rq_owed >= RAIL_REPOST_BATCH && rail_recv_repost_qp(r, rail, qp) < 0)
            return;
    }
    /* A direct rendezvous write (the usual immediate) decoded inline. */
    unsigned slot, entry;
    uint32_t size;
    if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc->wc_flags & IBV_WC_WITH_IMM) &&
        rail_imm_direct_inl(ntohl(wc->imm_data), &slot, &entry, &size)) {
        on_direct(r, slot, entry, size);
        return;
    }
    struct rail_imm imm;
    if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc->wc_flags & IBV_WC_WITH_IMM) ||
        rail_imm_decode(ntohl(wc->imm_data), &imm) != 0) {
        rail_comm_fail(&r->base, -EPROTO, "unexpected incoming operation (opcode %d, imm %#x)",
                       (int)wc->opcode, ntohl(wc->imm_data));
        return;
    }
    if (imm.kind == RAIL_IMM_BOUNCE)
        rail_recv_on_eager(r, imm.bounce);
    else if (imm.kind == RAIL_IMM_DATA)
        on_direct(r, imm.slot, imm.entry, imm.size);
    else if (imm.kind == RAIL_IMM_ASK)
        rail_recv_on_ask(r, imm.slot, imm.entry, imm.rail);
    else
        on_record(r, imm.slot, imm.entry);
}

/* A successful receive WR's completion: a direct rendezvous write (the data itself, its size in
 * the immediate) on a rail that is up, with no batch re-post due and the owing QP unchanged, taken
 * here as recv_on_wc_any would take it, without its register saves; the rest goes there.
 * test_recv_fast on_data compares the two over many states. */
static inline __attribute__((always_inline)) void recv_on_data(struct rail_recv_comm *r, int rail,
                                                               const struct ibv_wc *wc)
{
    int qp = rail_wrid_qp(wc->wr_id), at = rail * RAIL_MAX_QPS + qp;
    struct rail_link *l = &r->base.link[rail];
    unsigned slot, entry;
    uint32_t size;
    if (rail_recv_wc_lean_ok(r, l, qp, at, wc) &&
        rail_imm_direct_inl(ntohl(wc->imm_data), &slot, &entry, &size)) {
        rail_recv_wc_owe(r, l, qp, at);
        on_direct(r, slot, entry, size);
        return;
    }
    recv_on_wc_any(&r->base, rail, wc);
}

/* A completion of the receive comm: a clear-to-send write that completed (one per rendezvous
 * message) is taken here, as recv_on_wc_any would take it, without its register saves; every
 * other completion goes there. */
static inline __attribute__((always_inline)) void recv_on_wc(struct rail_comm *c, int rail,
                                                             const struct ibv_wc *wc)
{
    struct rail_recv_comm *r = (struct rail_recv_comm *)c;
    int kind = rail_wrid_kind(wc->wr_id);
    if (wc->status == IBV_WC_SUCCESS && kind == RAIL_WR_CTS) {
        int idx = rail_wrid_idx(wc->wr_id);
        r->base.link[rail].qps[rail_wrid_qp(wc->wr_id)].sq_out--;
        r->sq_wrs--;
        if (idx < RAIL_RECV_REQS && rail_recv_req_at(r, idx))
            rail_recv_req_at(r, idx)->cts_pending = false;
        return;
    }
    recv_on_wc_any(c, rail, wc);
}

/* recv_on_wc with recv_on_data's direct write taken in place too: the handler of a one-rail
 * comm's poll in the receive test (recv_progress_cqs), where that write is the message. */
static inline __attribute__((always_inline)) void recv_on_wc1(struct rail_comm *c, int rail,
                                                              const struct ibv_wc *wc)
{
    if (wc->status == IBV_WC_SUCCESS && rail_wrid_kind(wc->wr_id) == RAIL_WR_RECV)
        recv_on_data((struct rail_recv_comm *)c, rail, wc);
    else
        recv_on_wc(c, rail, wc);
}

/* recv_on_wc with a size record's completion taken in place (rail_recv_record_lean): the handler
 * of recv_progress_rails, which polls a multi-rail comm (its striped messages end with their
 * record) and a one-rail comm's CQs for irecv. */
static inline __attribute__((always_inline)) void recv_on_wc2(struct rail_comm *c, int rail,
                                                              const struct ibv_wc *wc)
{
    if (wc->status == IBV_WC_SUCCESS && rail_wrid_kind(wc->wr_id) == RAIL_WR_RECV &&
        rail_recv_record_lean((struct rail_recv_comm *)c, rail, wc))
        return;
    recv_on_wc(c, rail, wc);
}

void rail_recv_on_wc_rails(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc)
{
    recv_on_wc2(&r->base, rail, wc);
}

void rail_recv_on_wc_general(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc)
{
    recv_on_wc_any(&r->base, rail, wc);
}

void rail_recv_on_wc_one_rail(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc)
{
    recv_on_wc1(&r->base, rail, wc);
}

/* An irecv that posts nothing ticks the health check (its caller calls again, polling like a
 * test); one that posts leaves that to test(). A closed peer does not fail an irecv: what it sent
 * eagerly before closing may already be here and completes the receive; test() reports the loss
 * if nothing arrives. */
static int not_posted(struct rail_recv_comm *r)
{
    rail_health_tick(&r->base, false);
    return rail_comm_error(&r->base);
}

/* irecv's checks of NCCL's arguments: 0, or -EINVAL with a WARN. */
static int irecv_args(void *comm, void **request)
{
    struct rail_recv_comm *r = comm;
    if (!request)
        return -EINVAL;
    *request = NULL; /* also overwrites NCCL's 0x1 "optional completion" marker */
    if (!r || r->base.ops != &rail_recv_comm_ops) {
        RAIL_WARN(NCCL_NET, "irecv: %p is not a receive comm of this plugin", comm);
        return -EINVAL;
    }
    return 0;
}

/* After irecv posts or holds back q, each check inline (usually no call): unexpected arrivals
 * matched, held-back CTS written when due, a credit write when due, owed receive WRs posted.
 * `alone` (RAIL_RECV_LEAN_ALONE): the held-back list is {q}, its delay starting now, so
 * rail_recv_flush_idle is q->left > 0 && !stuck. */
static inline __attribute__((always_inline)) void
irecv_tail(struct rail_recv_comm *r, struct rail_recv_req *q, int n, bool alone)
{
    if (r->ring.nunexp) /* else nothing arrived ahead of its receive */
        for (int i = 0; i < n; i++)
            rail_recv_match_unexpected(r, q, i);
    if (alone ? q->left == 0 || rail_eager_ring_stuck(&r->ring)
              : !rail_recv_flush_idle(r)) /* usually idle: no call */
        rail_recv_flush_deferred(r);
    if (rail_eager_ring_credit_due(&r->ring)) /* usually not: no call */
        rail_recv_send_credit(r);
    rail_recv_repost_owed(r);
}

/* irecv past its first checks, any n, any state; `polled`: the caller ran the progress that
 * irecv runs when rail_recv_irecv_quiet says no (and no other). */
static __attribute__((noinline)) int irecv_general(struct rail_recv_comm *r, int n, void **data,
                                                   const size_t *sizes, const int *tags,
                                                   void **mhandles, void **request, bool polled)
{
    const struct rail_mr *m[RAIL_MAX_RECVS];
    int rc;

    if (n < 1 || n > RAIL_MAX_RECVS || !data || !sizes || !tags || !mhandles) {
        RAIL_WARN(NCCL_NET, "irecv: n=%d (1..%d allowed) or NULL arrays", n, RAIL_MAX_RECVS);
        return -EINVAL;
    }
    /* The progress (the images, then the CQs) only with a reason (rail_recv_irecv_quiet): else
     * what the CQs can hold is the peer's writes, which the next test takes. */
    if (!polled && !rail_recv_irecv_quiet(r)) {
        polled = true;
        rail_recv_poll_images(r, NULL); /* rail_comm_progress: the images, then the CQs */
        (void)recv_progress_rails(r);
    }
    rc = rail_comm_error(&r->base);
    if (rc)
        return rc;
    bool small = r->peer_eager_limit > 0;
    for (int i = 0; i < n; i++) {
        rc = rail_mr_check(&r->base, mhandles[i], data[i], sizes[i], &m[i]);
        if (rc)
            return rc;
        small = small && sizes[i] <= r->peer_eager_limit;
    }
    /* A rendezvous receive writes its clear-to-send now: the FIFO slot and the rail, QP and
     * send-queue room for it are looked up once, here, and used by the post below. One that
     * cannot post polls first (if it did not) and looks again. */
    int cts_rail = -1, cts_qp = 0;
    for (;;) {
        if (!rail_recv_flush_idle(r)) /* usually idle: no call */
            rail_recv_flush_deferred(r);
        if (r->nfree > 0 && (small || (!rail_cts_tail_busy(&r->fifo) &&
                                       (cts_rail = rail_recv_cts_at(r, &cts_qp)) >= 0)))
            break;
        if (polled)
            return not_posted(r); /* NCCL calls again */
        polled = true;
        rail_recv_poll_images(r, NULL);
        (void)recv_progress_rails(r);
        rc = rail_comm_error(&r->base);
        if (rc)
            return rc;
    }

    struct rail_recv_req *q = req_alloc(r);
    if (!q)
        return not_posted(r);
    uint8_t *stage = q->stage;
    q->h.ops = &recv_req_ops;
    q->n = q->left = n;
    q->error = 0;
    q->cts_pending = false;
    q->has_slot = false;
    q->staged = !small;
    for (int i = 0; i < n; i++) {
        struct rail_recv_entry *e = &q->e[i];
        e->data = data[i];
        e->cap = sizes[i];
        e->size = 0;
        e->tag = tags[i];
        e->done = false;
        rc = rail_tagmap_next_inl(&r->posted, tags[i], &e->tag_index);
        if (rc < 0) {
            rail_comm_fail(&r->base, rc, "out of memory for tag counters");
            return rc;
        }
        if (small) /* its CTS is usually never written: staged then, if ever */
            memcpy(e->rkey, m[i]->rkey, sizeof(e->rkey));
        else
            rail_recv_stage_entry(r, stage + (size_t)i * r->cts_bytes, e, n, i, m[i]->rkey);
    }
    if (small) {
        q->defer_ns = r->base.coarse_ns = rail_coarse_ns();
        r->deferred[r->ndeferred++] = q->idx;
    } else {
        rc = rail_recv_write_cts_at(r, q, cts_rail, cts_qp); /* slot and room checked above */
        if (rc < 0)
            return rc;
        if (rc == 1) { /* its rail failed while posting: held back like a small receive */
            q->defer_ns = 0;
            r->deferred[r->ndeferred++] = q->idx;
        }
    }
    irecv_tail(r, q, n, false);
    *request = q;
    return 0;
}

int rail_recv_irecv_general(void *comm, int n, void **data, const size_t *sizes, const int *tags,
                            void **mhandles, void **request)
{
    int rc = irecv_args(comm, request);
    return rc ? rc : irecv_general(comm, n, data, sizes, tags, mhandles, request, false);
}

/* The ABI's irecv: a single receive polls first when it has a reason (as the general path would),
 * then goes straight through in the common state (net_recv_lean.h); everything else takes the
 * general path, told whether it polled. */
int rail_net_irecv(void *comm, int n, void **data, const size_t *sizes, const int *tags,
                   void **mhandles, void **request)
{
    struct rail_recv_comm *r = comm;
    if (!request || !r || r->base.ops != &rail_recv_comm_ops)
        return rail_recv_irecv_general(comm, n, data, sizes, tags, mhandles, request);
    *request = NULL; /* also overwrites NCCL's 0x1 "optional completion" marker */
    if (n != 1 || !data || !sizes || !tags || !mhandles)
        return irecv_general(r, n, data, sizes, tags, mhandles, request, false);
    bool polled = !rail_recv_irecv_quiet(r);
    if (polled) {
        rail_recv_poll_images(r, NULL); /* rail_comm_progress: the images, then the CQs */
        (void)recv_progress_rails(r);
    }
    struct rail_recv_req *q;
    int rc = rail_recv_lean(r, &recv_req_ops, data[0], sizes[0], tags[0], mhandles[0], &q);
    if (rc == 0 || rc == RAIL_RECV_LEAN_ALONE) {
        irecv_tail(r, q, 1, rc == RAIL_RECV_LEAN_ALONE);
        *request = q;
        return 0;
    }
    if (rc < 0)
        return rc;
    return irecv_general(r, n, data, sizes, tags, mhandles, request, polled);
}

static int recv_test(struct rail_req_head *h, int *done, int *sizes)
{
    struct rail_recv_req *q = (struct rail_recv_req *)h;
    struct rail_recv_comm *r = (struct rail_recv_comm *)q->h.comm;
    int err;

    /* A message that came as a flagged image completes the receive without a completion poll:
     * the CQs are left to the next call, like the work below. */
    if (q->left > 0)
        rail_recv_poll_images(r, q);
    if (q->left > 0 || q->cts_pending)
        recv_progress_cqs(r); /* in this frame */
    /* Done first: the held-back receives (rail_recv_flush_deferred) are the business of the calls
     * that complete nothing; req_free takes this one off their list. */
    if (q->left == 0 && (!q->cts_pending || atomic_load(&r->base.error))) {
        err = q->error;
        if (!err && sizes) { /* entry 0 unrolled: n is usually 1 (GCC's loop set-up is ~10) */
            sizes[0] = (int)q->e[0].size;
            for (int i = 1; i < q->n; i++)
                sizes[i] = (int)q->e[i].size;
        }
        req_free(r, q);
        if (err)
            return err;
        *done = 1;
        return 0;
    }
    /* Not done yet: the caller polls anyway. Each check first inline, without a call. */
    if (!rail_recv_flush_idle(r)) /* usually idle: no call */
        rail_recv_flush_deferred(r);
    if (rail_eager_ring_credit_due(&r->ring)) /* usually not: no call */
        rail_recv_send_credit(r);
    rail_recv_repost_owed(r);
    /* In flight: test() ticks the health check and returns the comm's error itself. */
    return atomic_load(&r->base.error);
}

/* ---- the receive kind's tables ---- */

static struct rail_recv_comm *recv_of(struct rail_comm *c)
{
    return (struct rail_recv_comm *)c; /* base is the first member; only rail_recv_comm_ops */
}

static struct rail_stripe *recv_sched(struct rail_comm *c)
{
    (void)c;
    return NULL; /* the receiver does not stripe: the sender places the pieces */
}

static void recv_poll(struct rail_comm *c)
{
    rail_recv_poll_images(recv_of(c), NULL);
}

static __attribute__((noinline)) void recv_retry_work(struct rail_recv_comm *r)
{
    if (r->repoll) /* the cursor may have waited for a message that just came */
        rail_recv_poll_images(r, NULL);
    if (r->nretry)
        rail_recv_retry_cts(r);
    if (r->nquery && !atomic_load(&r->base.error))
        rail_recv_answer(r);
}

/* After every poll: usually nothing to do, found without a call. */
static void recv_retry(struct rail_comm *c)
{
    struct rail_recv_comm *r = recv_of(c);
    if (r->repoll || r->nretry || r->nquery)
        recv_retry_work(r);
}

/* The completion progress of a receive comm (net_data.c's poll_comm and help pass for this kind,
 * without ops->poll, its handlers called directly): every rail's CQ that can hold a completion,
 * the re-sends, the listed send comms, in that order. */
static __attribute__((noinline)) int recv_progress_rails(struct rail_recv_comm *r)
{
    for (int k = 0; k < r->base.nrails; k++)
        if (r->base.link[k].cq_work)
            rail_comm_drain(&r->base, k, recv_on_wc2);
    recv_retry(&r->base);
    rail_comm_help_others(&r->base);
    return atomic_load(&r->base.error);
}

/* The same, a one-rail comm's in the caller's frame (a receive test's poll, mostly finding
 * nothing: no rail loop, no call). */
static inline __attribute__((always_inline)) int recv_progress_cqs(struct rail_recv_comm *r)
{
    if (r->base.nrails != 1)
        return recv_progress_rails(r);
    if (r->base.link[0].cq_work)
        rail_comm_drain(&r->base, 0, recv_on_wc1);
    recv_retry(&r->base);
    rail_comm_help_others(&r->base);
    return atomic_load(&r->base.error);
}

static void recv_release(struct rail_comm *c)
{
    struct rail_recv_comm *r = recv_of(c);
    rail_flush_destroy(r); /* GPUDirect flush QPs: net_flush.c */
    free(r->records);
    free(r->bounce);
    free(r->staging);
    rail_recv_blocks_free(r);
    rail_tagmap_free(&r->posted);
}

const struct rail_comm_ops rail_recv_comm_ops = {
    .kind = "recv",
    .stats_dir = RAIL_STATS_RECV,
    .drives_rejoin = false,
    .sched = recv_sched,
    .setup_rails = NULL,
    .poll = recv_poll,
    .on_wc = recv_on_wc,
    .retry = recv_retry,
    .quiesce = NULL,
    .release = recv_release,
};

static const struct rail_req_ops recv_req_ops = {.test = recv_test, .ticks_health = true};
