/* SPDX-License-Identifier: Apache-2.0 */
/* The rendezvous sender's lean paths for the common states (net_send.c's dispatch `taken` runs
 * them, inline, in front of the general path send_taken): the one-rail direct write and the
 * dual-rail striped send. Each is guarded by a cheap condition under which it leaves exactly what
 * the general path leaves; test_send_direct and test_send_striped compare the two over many random
 * states. Header only: always inline into its one caller. */
#ifndef NCCL_RAIL_NET_SEND_LEAN_H
#define NCCL_RAIL_NET_SEND_LEAN_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nccl/nccl_net.h"
#include "protocol/cts_fifo.h"
#include "protocol/net_clock.h"
#include "protocol/net_comm.h"
#include "protocol/net_data.h"
#include "protocol/net_send_blocks.h"
#include "protocol/net_send_wr.h"
#include "protocol/net_telemetry.h"
#include "rails/stripe.h"
#include "transport/net_verbs.h"
#include "wire/net_tagmap.h"
#include "wire/net_wire.h"

/* What both lean paths set alike in the request they take for (seq, cts): NCCL's buffer and its
 * keys, the receiver's buffer and keys, the slot sequence, entry 0. */
static inline __attribute__((always_inline)) void
rail_send_lean_fill(struct rail_send_req *q, const struct rail_req_ops *ops, uint64_t seq,
                    const struct rail_cts *cts, void *data, size_t size, const struct rail_mr *m)
{
    q->h.ops = ops;
    q->error = 0;
    q->data = (uintptr_t)data;
    q->size = size;
    q->too_big = false;
    q->host = m->type == NCCL_PTR_HOST;
    memcpy(q->lkey, m->lkey, sizeof(q->lkey));
    q->raddr = cts->addr;
    memcpy(q->rkey, cts->rkey, sizeof(q->rkey));
    q->seq = seq;
    q->entry = 0;
}

/* The common rendezvous send in one piece: one rail up, no QP split, and the whole message one
 * WRITE WITH IMM (0 < size <= direct_max, decided once per comm: send_setup_rails), that fits the
 * receive buffer, with a request ready (its block allocated) and room on the QP it goes to. What
 * send_taken does then through req_alloc, rail_send_post_rdv and post_pipelined (the same request,
 * record, work request, counters and FIFO state; a refused post the same way back), without
 * their layers and the checks this condition settles. test_send_direct compares the two over
 * many states. */
static inline __attribute__((always_inline)) bool
rail_send_direct_ok(const struct rail_send_comm *s, size_t size, const struct rail_cts *cts)
{
    const struct rail_link *l = &s->base.link[0];
    return (uint64_t)size - 1 < s->direct_max && size <= cts->size && (s->sched.up_mask & 1u) &&
           s->nfree > 0 && s->blk[s->free_list[s->nfree - 1] / RAIL_SEND_REQ_BLOCK] &&
           rail_send_sq_room(l, (int)(l->rr % (unsigned)s->ndata)) >= 1;
}

static inline __attribute__((always_inline)) int
rail_send_direct(struct rail_send_comm *s, const struct rail_req_ops *ops, uint64_t seq,
                 const struct rail_cts *cts, void *data, size_t size, int tag,
                 const struct rail_mr *m, void **request)
{
    struct rail_link *l = &s->base.link[0];
    struct rail_send_req *q = rail_send_req_at(s, s->free_list[--s->nfree]);
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS);
    int qp = (int)(l->rr++ % (unsigned)s->ndata);
    rail_send_lean_fill(q, ops, seq, cts, data, size, m);
    rail_2ph_plan(&q->tp, 1);
    q->striped = false;
    q->ch[0].off = 0;
    q->ch[0].len = size;
    q->ch[0].rail = 0;
    q->ch[0].qp = (uint8_t)qp;
    struct rail_record *rec = (struct rail_record *)q->src; /* for a query after a failover */
    rec->size = size;
    rec->seq = (uint32_t)(seq + 1);
    rec->entry = 0;
    q->unsure = 0;
    q->kind = RAIL_SREQ_PIPE;
    struct ibv_sge sge = {q->data, (uint32_t)size, q->lkey[0]};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(&wr, &sge, rail_wrid(RAIL_WR_LAST, 0, qp, q->idx), q->raddr, q->rkey[0]);
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(rail_imm_direct(slot, 0, (uint32_t)size));
    int rc = rail_send_post_wr(s, 0, qp, &wr, 1);
    if (rc != 0) {
        q->wrs_left = 0;
        rail_send_req_free(s, q);
        return rc < 0 ? rc : 0; /* 1: the rail failed over meanwhile, NCCL calls again */
    }
    q->wrs_left = 1;
    rail_tel_whole(&s->base, 0, size);
    s->slot_busy[slot] = 1;
    rail_cts_fifo_resolve_next(&s->cts); /* the entry just taken (try_send) */
    uint32_t ignored;
    rc = rail_tagmap_next_inl(&s->sent, tag, &ignored);
    *request = q;
    return rc;
}

/* The common striped send: a dual-rail comm with both rails up and no QP split, a message of
 * min_stripe .. striped_max bytes that fits the receive buffer, a request ready, room on each
 * rail's next data QP for its piece (and the record, without a control QP). Then the scheduler
 * splits it in two (rail_stripe_two_end says where, unless a piece would be empty) and each piece
 * is one plain write: what send_taken does through req_prepare, rail_send_post_rdv (schedule,
 * cut_pieces, room_for_pieces, the two-phase start) and post_piece, without those layers and the
 * checks this condition settles. test_send_striped compares the two over many states. */
static inline __attribute__((always_inline)) bool
rail_send_striped_ok(const struct rail_send_comm *s, size_t size, const struct rail_cts *cts,
                     unsigned *qp0, unsigned *qp1)
{
    const int need = 1 + (s->ctl_qp < 0);
    const struct rail_link *l0 = &s->base.link[0], *l1 = &s->base.link[1];
    /* *qp0, *qp1: each rail's next data QP, for the room checked here and rail_send_striped's
     * pieces (set once striped_max, hence ndata >= 1, is checked). */
    return (uint64_t)size - 1 < s->striped_max && size >= s->sched.min_stripe &&
           size <= cts->size && s->sched.up_mask == 3u && s->nfree > 0 &&
           s->blk[s->free_list[s->nfree - 1] / RAIL_SEND_REQ_BLOCK] &&
           rail_send_sq_room(l0, (int)(*qp0 = l0->rr % (unsigned)s->ndata)) >= need &&
           rail_send_sq_room(l1, (int)(*qp1 = l1->rr % (unsigned)s->ndata)) >= need;
}

/* A piece of a striped message on rail k as a plain write, as post_piece posts it but for its
 * state and telemetry (the caller's): 0 posted, 1 its rail failed over meanwhile (the piece
 * waits), -errno (the comm failed). From the values the caller has at hand, not reloaded from the
 * request. */
static inline __attribute__((always_inline)) int
rail_send_striped_post(struct rail_send_comm *s, int k, unsigned qp, uint64_t wrid, uintptr_t addr,
                       uint64_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = {addr, (uint32_t)len, lkey};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(&wr, &sge, wrid, raddr, rkey);
    return rail_send_post_wr(s, k, (int)qp, &wr, 1);
}

/* The telemetry of the striped message and of its pieces posted (bit k of posted: piece k), what
 * rail_tel_striped_msg and each posted piece's rail_tel_stripe count: both posted, one update. */
static inline __attribute__((always_inline)) void
rail_send_striped_count(struct rail_send_comm *s, const struct rail_send_req *q, unsigned posted)
{
    if (posted == 3u) {
        rail_tel_two(&s->base, q->ch[0].len, q->ch[1].len);
        return;
    }
    rail_tel_striped_msg(&s->base);
    for (int k = 0; k < 2; k++)
        if (posted >> k & 1u)
            rail_tel_stripe(&s->base, k, q->ch[k].len);
}

/* A post refused with the comm failed (rc < 0): the pieces posted so far (bit k of posted) are
 * counted and the request goes back. Out of line: rare, and the tail call keeps rc out of the
 * lean path's registers (kept across the calls, it cost the shared epilogue of try_send one
 * instruction on every isend). */
static __attribute__((noinline, cold)) int
rail_send_striped_failed(struct rail_send_comm *s, struct rail_send_req *q, unsigned posted, int rc)
{
    rail_send_striped_count(s, q, posted);
    rail_send_req_free(s, q);
    return rc;
}

/* The two pieces written out, not looped over: piece 0 is [0, end) on rail 0, piece 1 [end, size)
 * on rail 1, their work request ids one base apart (rail_wrid(DATA, k, qp, idx | k << 16)). A
 * piece whose rail failed over while posting waits (PENDING = POSTED + 2, counted in npending),
 * as post_piece's caller leaves it; a refused post that failed the comm ends the message there,
 * the piece after it not written. */
static inline __attribute__((always_inline)) int
rail_send_striped(struct rail_send_comm *s, const struct rail_req_ops *ops, uint64_t seq,
                  const struct rail_cts *cts, void *data, size_t size, int tag,
                  const struct rail_mr *m, uint64_t end, unsigned qp0, unsigned qp1, void **request)
{
    _Static_assert(RAIL_CH_PENDING == RAIL_CH_POSTED + 2, "a waiting piece is POSTED + 2 * rc");
    struct rail_send_req *q = rail_send_req_at(s, s->free_list[--s->nfree]);
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS);
    rail_send_lean_fill(q, ops, seq, cts, data, size, m);
    q->wrs_left = 0;
    q->striped = true;
    /* The pieces as cut_pieces cuts them: each rail's next data QP (qp0, qp1:
     * rail_send_striped_ok). */
    s->base.link[0].rr++;
    s->base.link[1].rr++;
    struct rail_send_chunk *c0 = &q->ch[0], *c1 = &q->ch[1];
    c0->off = 0;
    c0->len = end;
    c0->rail = 0;
    c0->qp = (uint8_t)qp0;
    c1->off = end;
    c1->len = size - end;
    c1->rail = 1;
    c1->qp = (uint8_t)qp1;
    memset(q->tp.piece, 0, sizeof(q->tp.piece));
    q->tp.n = 2;
    q->tp.left = 2;
    q->tp.rec = 0;
    struct rail_record *rec = (struct rail_record *)q->src;
    rec->size = size;
    rec->seq = (uint32_t)(seq + 1);
    rec->entry = 0;
    q->unsure = 0;
    q->kind = RAIL_SREQ_2PH;
    s->n2ph++;
    if (!s->helped) /* rail_send_help_list's own first test: usually no call */
        rail_send_help_list(s);
    s->slot_busy[slot] = 3;
    const uint64_t now = rail_now_ns(); /* both pieces posted back to back */
    const uint64_t id = rail_wrid(RAIL_WR_DATA, 0, 0, q->idx);
    c0->post_ns = now;
    int rc0 = rail_send_striped_post(s, 0, qp0, id | (uint64_t)qp0 << 32, (uintptr_t)data, end,
                                     m->lkey[0], cts->addr, cts->rkey[0]);
    if (rc0 < 0)
        return rail_send_striped_failed(s, q, 0, rc0);
    q->tp.piece[0] = (uint8_t)(RAIL_CH_POSTED + 2 * rc0);
    s->npending += rc0;
    c1->post_ns = now;
    int rc1 = rail_send_striped_post(s, 1, qp1, id | rail_wrid(0, 1, (int)qp1, 1 << 16),
                                     (uintptr_t)data + end, size - end, m->lkey[1], cts->addr + end,
                                     cts->rkey[1]);
    if (rc1 < 0)
        return rail_send_striped_failed(s, q, !rc0, rc1);
    q->tp.piece[1] = (uint8_t)(RAIL_CH_POSTED + 2 * rc1);
    s->npending += rc1;
    rail_send_striped_count(s, q, (unsigned)!rc0 | (unsigned)!rc1 << 1);
    rail_cts_fifo_resolve_next(&s->cts); /* the entry just taken (try_send) */
    uint32_t ignored;
    int rc = rail_tagmap_next_inl(&s->sent, tag, &ignored);
    *request = q;
    return rc;
}

#endif
