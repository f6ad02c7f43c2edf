/* SPDX-License-Identifier: Apache-2.0 */
/* The eager credit ring (pure: no verbs, no I/O, no clock). The receiver owns `slots` bounce
 * slots; the sender writes eager message number k into slot k % slots and may have at most
 * `slots` messages that the receiver has not released yet. The receiver releases slots in ring
 * order only (a slot consumed out of order waits for the ones before it) and returns the count
 * it released (`freed`) by an RDMA write of a credit word, one write in flight at a time, in
 * batches of the ring less one slot unless the sender may be waiting for it.
 *
 * Invariants (test_eager_ring checks them against a reordering, duplicating, lossy stream):
 *   - freed <= arrived, arrived - freed <= slots: a slot is never reused before its release;
 *   - credit_acked <= credit_sent <= freed, and credit_inflight is the value of the write in
 *     flight (credit_busy); a credit write lost with its rail goes again from credit_acked;
 *   - on the sender: credit <= posted and posted - credit <= slots (rail_eager_sender_room). */
#ifndef NCCL_RAIL_EAGER_RING_H
#define NCCL_RAIL_EAGER_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/net_wire.h"

enum { RAIL_BOUNCE_EMPTY = 0, RAIL_BOUNCE_ARRIVED, RAIL_BOUNCE_CONSUMED };

/* An arrived eager message that no posted receive matched yet. */
struct rail_eager_unexp {
    uint8_t slot;
    int32_t tag;
    uint32_t tag_index;
};

struct rail_eager_ring {
    int slots; /* 0..RAIL_EAGER_SLOTS; 0: no eager path */
    uint8_t state[RAIL_EAGER_SLOTS];
    uint64_t arrived; /* eager messages received */
    uint64_t freed;   /* released in ring order: the credit the sender is due */
    int free_b;       /* freed % slots, kept without a division on the release path */
    uint64_t credit_sent;
    uint64_t credit_acked;    /* the value of the last credit write that completed */
    uint64_t credit_inflight; /* the value of the credit write in flight */
    uint64_t batch;           /* credits returned per write when not starved: slots - 1, >= 1 */
    bool credit_busy;
    uint64_t poll_seq; /* the next message whose image slot is polled (rail_eager_ring_poll_slot) */
    int poll_b;        /* poll_seq % slots, kept without a division on the polling path */
    /* The receiver's look-up of the cursor's image (net_recv_eager.h, rail_recv_watch_set; of the
     * ring's functions only rail_eager_ring_init writes them, zeroed: NULL, not known): word 0 of
     * image slot poll_b and the flag of message poll_seq, set where the cursor moves; NULL when
     * not known. */
    const uint64_t *watch;
    uint32_t watch_flag;
    int nunexp;
    struct rail_eager_unexp unexp[RAIL_EAGER_SLOTS];
};

void rail_eager_ring_init(struct rail_eager_ring *g, int slots);

/* ---- arrivals (receiver) ---- */

/* With failover a sender writes an eager message again when the completion of its first write
 * was lost with a rail: slot b (< slots) already holds a message, or message number seq was
 * already released. */
bool rail_eager_ring_duplicate(const struct rail_eager_ring *g, unsigned b, uint64_t seq);
/* Slot b exists and is empty. */
bool rail_eager_ring_slot_free(const struct rail_eager_ring *g, unsigned b);
/* Message number seq belongs in slot b and lies in the credit window [freed, freed + slots). */
bool rail_eager_ring_in_window(const struct rail_eager_ring *g, unsigned b, uint64_t seq);
/* Slot b (free, checked above) now holds a message. */
void rail_eager_ring_arrive(struct rail_eager_ring *g, unsigned b);
/* The message of slot b was copied out: releases it and every consumed slot after the last
 * release, in ring order. Inline: once per eager message, on the receive test's lean path
 * (rail_recv_image_lean). */
static inline void rail_eager_ring_consume(struct rail_eager_ring *g, unsigned b)
{
    g->state[b] = RAIL_BOUNCE_CONSUMED;
    while (g->state[g->free_b] == RAIL_BOUNCE_CONSUMED) {
        g->state[g->free_b] = RAIL_BOUNCE_EMPTY;
        g->freed++;
        g->free_b = g->free_b + 1 == g->slots ? 0 : g->free_b + 1;
    }
}

/* ---- flagged images (found by polling, wire/eager_image.h) ----
 * The receiver looks for them in message order, from the oldest message not seen yet: its slot
 * is empty until it arrives (either way), and no message lies beyond freed + slots, where the
 * sender has no credit. A slot found ARRIVED got its message by completion and is passed over. */

/* The slot whose image slot should hold message poll_seq next, or -1: none can be there. */
int rail_eager_ring_poll_slot(struct rail_eager_ring *g);
/* Message poll_seq was found complete in slot b (the one poll_slot returned): it arrives. */
void rail_eager_ring_poll_found(struct rail_eager_ring *g, unsigned b);

/* ---- unexpected messages (arrived before their receive) ---- */

/* Lists slot b as (tag, index). -EEXIST when that (tag, index) is already listed (the message
 * was sent twice), -ENOSPC when the list is full (cannot happen with one entry per slot). */
int rail_eager_ring_unexp_add(struct rail_eager_ring *g, unsigned b, int32_t tag, uint32_t index);
/* Takes the slot listed for (tag, index) off the list: its slot, or -1 when none. */
int rail_eager_ring_unexp_take(struct rail_eager_ring *g, int32_t tag, uint32_t index);

/* ---- credit (receiver) ---- */

/* The sender has used every slot it was given: it sends eagerly again only after a credit. */
static inline bool rail_eager_ring_starved(const struct rail_eager_ring *g)
{
    return g->arrived - g->credit_sent >= (uint64_t)g->slots;
}
/* Starved, and nothing released that a credit could return. */
static inline bool rail_eager_ring_stuck(const struct rail_eager_ring *g)
{
    return rail_eager_ring_starved(g) && g->freed == g->credit_sent;
}
/* A credit write should go now: none in flight, something new to return, and either a batch
 * (the ring less one slot, `batch`) is ready or the sender is starved. Inline: asked on every irecv
 * and receive test, and usually false. */
static inline bool rail_eager_ring_credit_due(const struct rail_eager_ring *g)
{
    if (g->credit_busy || g->freed == g->credit_sent)
        return false;
    return g->freed - g->credit_sent >= g->batch || rail_eager_ring_starved(g);
}
/* A credit write was posted: returns the value it carries (freed). */
uint64_t rail_eager_ring_credit_posted(struct rail_eager_ring *g);
/* The credit write in flight completed / was lost with its rail (sent again later). */
void rail_eager_ring_credit_done(struct rail_eager_ring *g);
void rail_eager_ring_credit_lost(struct rail_eager_ring *g);

/* ---- sender ---- */

/* With `posted` messages sent and the receiver's credit word at `credit`: 1 when the next
 * message (slot posted % slots) may go, 0 when every slot is taken, -EPROTO when the receiver
 * returned more than was sent. */
int rail_eager_sender_room(uint64_t posted, uint64_t credit, int slots);

#endif
