/* SPDX-License-Identifier: Apache-2.0 */
/* Posting and re-sending of rendezvous messages of a send comm (net_send_post.c; eager messages:
 * net_send_eager.h). */
#ifndef NCCL_RAIL_NET_SEND_POST_H
#define NCCL_RAIL_NET_SEND_POST_H

#include "protocol/net_comm.h"
#include "protocol/net_send_blocks.h"

/* 0 posted, 1 no room or no rail up yet (nothing posted: NCCL calls again), -errno. */
int rail_send_post_rdv(struct rail_send_comm *s, struct rail_send_req *q);
/* Work that a failed rail lost goes again (after each poll). */
void rail_send_retry(struct rail_send_comm *s);
/* A completion of the send comm's CQ of rail. */
void rail_send_on_wc(struct rail_send_comm *s, int rail, const struct ibv_wc *wc);
/* The same through the general path alone (what rail_send_on_wc's fast path must match). */
void rail_send_on_wc_general(struct rail_send_comm *s, int rail, const struct ibv_wc *wc);
/* Piece k of two-phase message q completed on rail (k < q->tp.n): its state, the adaptive
 * weights' sample, and the size record once it was the last piece. */
void rail_send_piece_done(struct rail_send_comm *s, struct rail_send_req *q, int k, int rail);

/* A size record's (or eager write's) successful completion, past the duplicate check: its bounce
 * slot, or its FIFO slot, two-phase count and held request, given back. Both completion paths. */
static inline __attribute__((always_inline)) void rail_send_record_done(struct rail_send_comm *s,
                                                                        struct rail_send_req *q)
{
    if (q->kind == RAIL_SREQ_EAGER) {
        s->bounce_busy[q->bounce] = 0;
    } else {
        s->slot_busy[q->seq % RAIL_FIFO_SLOTS]--;
        s->n2ph--;
        if (q->held) /* NCCL has it back since the record was posted */
            rail_send_req_unhold(s, q);
    }
}

/* The common completion first: a successful WR of a request in flight (not a query). What the
 * general path does for it, tested in the order that leaves the pipelined and eager ones without
 * a call; the rest (errors, queries, a piece number out of range, a completion of no request in
 * flight) goes there. test_send_on_wc compares the two over many states. Inline, into the send
 * test's CQ drains (net_send.c test_entered): as a call from them it cost a call, its return and
 * the arguments' moves per completion (-26 instructions per two-rail message, -9 on one rail). */
static inline __attribute__((always_inline)) void
rail_send_on_wc_inl(struct rail_send_comm *s, int rail, const struct ibv_wc *wc)
{
    uint64_t id = wc->wr_id;
    int kind = rail_wrid_kind(id), idx = rail_wrid_idx(id), k = rail_wrid_chunk(id);
    struct rail_send_req *q = idx < RAIL_SEND_REQS ? rail_send_req_at(s, idx) : NULL;
    if (wc->status != IBV_WC_SUCCESS || (kind != RAIL_WR_DATA && kind != RAIL_WR_LAST) || !q ||
        !q->h.ops || k == RAIL_CHUNK_ASK ||
        (q->kind != RAIL_SREQ_PIPE && k != RAIL_CHUNK_REC && k >= q->tp.n)) {
        rail_send_on_wc_general(s, rail, wc);
        return;
    }
    struct rail_link *l = &s->base.link[rail];
    l->qps[rail_wrid_qp(id)].sq_out--;
    l->cq_work--;
    if (q->kind == RAIL_SREQ_PIPE) {
        q->wrs_left--;
        s->slot_busy[q->seq % RAIL_FIFO_SLOTS]--;
    } else if (k != RAIL_CHUNK_REC) {
        rail_send_piece_done(s, q, k, rail);
    } else if (rail_2ph_record_ok(&q->tp)) { /* else a duplicate or late completion */
        rail_send_record_done(s, q);
    }
}

#endif
