/* SPDX-License-Identifier: Apache-2.0 */
/* The receiver's lean irecv for the common state (rail_net_irecv runs it, inline, after the
 * progress irecv runs when it has a reason, in front of the general path): one receive (n == 1:
 * NCCL groups receives only for grouped p2p), the comm healthy, the buffer's handle the one that
 * passed last (rail_mr_hit), no held-back receive due (rail_recv_flush_idle), a request ready (its
 * block allocated), the tag the last one counted (rail_tagmap_next_inl's hit); a rendezvous
 * receive also: the compact CTS layout, the next FIFO slot free, rail 0 up (the first rail up:
 * rail_pick_up's answer from 0) with room on its next QP. Then it does what the general path does
 * (the request, its entry, the tag counter, the held-back list or the CTS: its entry written
 * once, sequence included, in the request's registered stage and posted from there; the same work
 * request, counters, FIFO slot and failure handling), without the loops, the look-ups and the
 * checks the condition settles; irecv's tail (net_recv.c irecv_tail) follows as after the general
 * path. Anything else: it changes nothing and the general path runs (told whether irecv polled).
 * test_recv_lean compares rail_net_irecv with the general path alone (rail_recv_irecv_general)
 * over many random states and fails with any term of the condition dropped. Header only: always
 * inline into its one caller. */
#ifndef NCCL_RAIL_NET_RECV_LEAN_H
#define NCCL_RAIL_NET_RECV_LEAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "protocol/net_clock.h"
#include "protocol/net_comm.h"
#include "protocol/net_recv_cts.h"
#include "protocol/net_reg.h"
#include "transport/net_verbs.h"
#include "wire/cts_layout.h"

/* Not the lean path's state: nothing changed. Else 0 (*out: the request, posted or held back;
 * the caller finishes the irecv as the general path does), RAIL_RECV_LEAN_ALONE (the same, held
 * back with no other receive held back: the list is {*out}, its delay starting now) or -errno
 * (the comm failed). */
#define RAIL_RECV_LEAN_NOT   1
#define RAIL_RECV_LEAN_ALONE 2

static inline __attribute__((always_inline)) int
rail_recv_lean(struct rail_recv_comm *r, const struct rail_req_ops *ops, void *data, size_t size,
               int tag, const void *mhandle, struct rail_recv_req **out)
{
    const struct rail_mr *m = mhandle;
    struct rail_link *l = &r->base.link[0];
    const bool small = r->peer_eager_limit > 0 && size <= r->peer_eager_limit;
    if (atomic_load(&r->base.error) || !rail_mr_hit(&r->base, m, data, size) ||
        !rail_recv_flush_idle(r) || r->nfree == 0 || !r->posted.last || r->posted.last->tag != tag)
        return RAIL_RECV_LEAN_NOT;
    const int top = r->free_list[r->nfree - 1];
    struct rail_recv_req_block *b = r->blk[top / RAIL_RECV_REQ_BLOCK];
    if (!b)
        return RAIL_RECV_LEAN_NOT;
    int qp = 0;
    if (!small) {
        if (r->cts_bytes != RAIL_CTS_COMPACT_BYTES ||
            r->fifo.by_slot[r->fifo.tail % RAIL_FIFO_SLOTS] || !l->rj.up)
            return RAIL_RECV_LEAN_NOT;
        qp = (int)(l->rr % (unsigned)r->base.nqps);
        if (l->qps[qp].sq_out >= l->qps[qp].sq_max)
            return RAIL_RECV_LEAN_NOT;
    }

    struct rail_recv_req *q = &b->req[top % RAIL_RECV_REQ_BLOCK];
    r->nfree--;
    struct rail_recv_entry *e = &q->e[0];
    q->h.ops = ops;
    q->n = q->left = 1;
    q->error = 0;
    q->cts_pending = false;
    q->has_slot = false;
    q->staged = !small;
    e->data = data;
    e->cap = size;
    e->size = 0;
    e->tag = tag;
    e->done = false;
    e->tag_index = r->posted.last->count++;
    if (small) { /* held back: its CTS is usually never written (staged then, if ever) */
        memcpy(e->rkey, m->rkey, sizeof(e->rkey));
        q->defer_ns = r->base.coarse_ns = rail_coarse_ns();
        int alone = r->ndeferred == 0;
        r->deferred[r->ndeferred++] = q->idx;
        *out = q;
        return alone ? RAIL_RECV_LEAN_ALONE : 0;
    }
    /* The CTS entry, once, where it is posted from: every field rail_recv_stage_entry writes,
     * then the slot's sequence as post_cts writes it. */
    uint64_t seq = r->fifo.tail;
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS);
    struct rail_cts_compact *k = (struct rail_cts_compact *)q->stage;
    k->addr = (uintptr_t)data;
    k->size = size;
    k->tag = tag;
    k->tag_index = e->tag_index;
    k->nreqs = 1;
    k->entry = 0;
    k->rkey[0] = m->rkey[0]; /* every comm has rail 0: no loop set-up on one rail */
    for (int rl = 1; rl < r->base.nrails; rl++)
        k->rkey[rl] = m->rkey[rl];
    k->seq = (uint32_t)(seq + 1);
    struct ibv_sge sge = {(uintptr_t)k, RAIL_CTS_COMPACT_BYTES, b->mr[0]->lkey};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(&wr, &sge, rail_wrid(RAIL_WR_CTS, 0, qp, q->idx),
                          r->base.peer_addr1 +
                              (uint64_t)slot * RAIL_MAX_RECVS * RAIL_CTS_COMPACT_BYTES,
                          l->peer_rkey1);
    int rc = rail_verbs_post_send(l->qps[qp].qp, &wr);
    if (rc < 0) {
        rc = rail_recv_cts_post_failed(r, 0, rc);
        if (rc < 0)
            return rc;
        q->defer_ns = 0; /* its rail failed while posting: held back like a small receive */
        r->deferred[r->ndeferred++] = q->idx;
        *out = q;
        return 0;
    }
    l->qps[qp].sq_out++;
    r->sq_wrs++;
    l->rr++;
    q->cts_pending = true;
    q->slot_seq = r->fifo.tail++;
    r->fifo.by_slot[slot] = q;
    q->has_slot = true;
    *out = q;
    return 0;
}

#endif
