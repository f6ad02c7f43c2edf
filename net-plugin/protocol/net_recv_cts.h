/* SPDX-License-Identifier: Apache-2.0 */
/* The clear-to-send writes of a receive comm (net_recv_cts.c): into the sender's FIFO, again
 * after a lost rail, and held back for receives that usually come eagerly. */
#ifndef NCCL_RAIL_NET_RECV_CTS_H
#define NCCL_RAIL_NET_RECV_CTS_H

#include <stdbool.h>

#include "protocol/eager_ring.h"
#include "protocol/net_comm.h"
#include "wire/cts_layout.h"

/* Writes q's clear-to-send into the next FIFO slot: 0, 1 when the slot or the send queue is
 * still busy (try again later), or -errno. */
int rail_recv_write_cts(struct rail_recv_comm *r, struct rail_recv_req *q);
/* Clear-to-send writes lost with a failed rail go again on a rail that is up. */
void rail_recv_retry_cts(struct rail_recv_comm *r);
/* Held-back clear-to-sends of receives still unmatched are written once the sender is starved
 * of bounce slots or after a safety delay; matched ones leave the list. */
void rail_recv_flush_deferred(struct rail_recv_comm *r);

/* Safety delay after which a held-back receive writes its clear-to-send anyway. */
#define RAIL_CTS_DEFER_NS 2000000ull

/* True when rail_recv_flush_deferred would change nothing, found without the call: nothing held
 * back, or the first held-back receive (the list is in posting order, the walk stops at it) is
 * still unmatched, within its delay, and the sender is not stuck without bounce slots. The usual
 * answer after an irecv of a small message and on an idle test; test_recv_fast compares it
 * with the walk over many states. (False does not mean the walk will do something.) */
static inline bool rail_recv_flush_idle(struct rail_recv_comm *r)
{
    if (!r->ndeferred)
        return true;
    const struct rail_recv_req *q = rail_recv_req_at(r, r->deferred[0]);
    return q->left > 0 && r->base.coarse_ns - q->defer_ns < RAIL_CTS_DEFER_NS &&
           !rail_eager_ring_stuck(&r->ring);
}
/* The rail the next clear-to-send write goes on (the first rail up) and its QP (*qp, the next in
 * rotation) when that QP's send queue has room; -1 otherwise. */
int rail_recv_cts_at(struct rail_recv_comm *r, int *qp);
/* rail_recv_write_cts on the rail and QP that rail_recv_cts_at just gave, the next FIFO slot
 * known free (irecv checks both before it fills q): the same post without looking again. */
int rail_recv_write_cts_at(struct rail_recv_comm *r, struct rail_recv_req *q, int rail, int qp);
/* Writes entry i of n into the staging area at p, in place, in the layout the handshake settled
 * (wire/cts_layout.h: the same fields as rail_cts_stage writes), with the buffer's keys `rkey`: the
 * rest of the entry (reserved, pad, the rkeys of rails the comm lacks) stays as rail_region_alloc
 * zeroed it, and post_cts writes seq. A rendezvous irecv stages at once; a held-back one keeps the
 * keys in its entries (e->rkey: the handle may be gone by then) and rail_recv_write_cts stages it.
 */
#define STAGE_FIELDS(k)                                                                            \
    do {                                                                                           \
        (k)->addr = (uintptr_t)e->data;                                                            \
        (k)->size = e->cap;                                                                        \
        (k)->tag = e->tag;                                                                         \
        (k)->tag_index = e->tag_index;                                                             \
        (k)->nreqs = (uint16_t)n;                                                                  \
        (k)->entry = (uint16_t)i;                                                                  \
        for (int rl = 0; rl < r->base.nrails; rl++)                                                \
            (k)->rkey[rl] = rkey[rl];                                                              \
    } while (0)

static inline void rail_recv_stage_entry(const struct rail_recv_comm *r, uint8_t *p,
                                         const struct rail_recv_entry *e, int n, int i,
                                         const uint32_t *rkey)
{
    if (r->cts_bytes == RAIL_CTS_COMPACT_BYTES) {
        struct rail_cts_compact *k = (struct rail_cts_compact *)p;
        STAGE_FIELDS(k);
    } else {
        struct rail_cts *k = (struct rail_cts *)p;
        STAGE_FIELDS(k);
    }
}
#undef STAGE_FIELDS

/* The post of a clear-to-send on `rail` failed with rc (-errno): the rail is failed over (1: the
 * comm goes on, the CTS waits for another rail) or, when it cannot be, the comm fails (rc). */
int rail_recv_cts_post_failed(struct rail_recv_comm *r, int rail, int rc);

/* Removes entry k of the held-back list. */
void rail_recv_undefer(struct rail_recv_comm *r, int k);

/* Takes receive idx (being freed) off the held-back list: every entry naming it. Its usual case,
 * the one receive held back (a ping-pong of small messages), without the loop: the loop would
 * remove entry 0 and find nothing after it, leaving the list empty and its bytes as they are.
 * test_recv_undefer compares the two over many lists. */
static inline __attribute__((always_inline)) void rail_recv_undefer_req(struct rail_recv_comm *r,
                                                                        uint8_t idx)
{
    if (r->ndeferred == 1 && r->deferred[0] == idx) {
        r->ndeferred = 0;
        return;
    }
    for (int k = 0; k < r->ndeferred; k++)
        if (r->deferred[k] == idx)
            rail_recv_undefer(r, k--);
}

#endif
