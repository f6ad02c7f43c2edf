/* SPDX-License-Identifier: Apache-2.0 */
/* The eager credit ring: slot states, in-order release, credit accounting (eager_ring.h). */
#include "protocol/eager_ring.h"

#include <errno.h>
#include <string.h>

void rail_eager_ring_init(struct rail_eager_ring *g, int slots)
{
    memset(g, 0, sizeof(*g));
    g->slots = slots < 0 ? 0 : slots > RAIL_EAGER_SLOTS ? RAIL_EAGER_SLOTS : slots;
    g->batch = g->slots > 1 ? (uint64_t)g->slots - 1 : 1;
}

bool rail_eager_ring_duplicate(const struct rail_eager_ring *g, unsigned b, uint64_t seq)
{
    return g->state[b] != RAIL_BOUNCE_EMPTY || seq < g->freed;
}

bool rail_eager_ring_slot_free(const struct rail_eager_ring *g, unsigned b)
{
    return (int)b < g->slots && g->state[b] == RAIL_BOUNCE_EMPTY;
}

bool rail_eager_ring_in_window(const struct rail_eager_ring *g, unsigned b, uint64_t seq)
{
    return seq >= g->freed && seq < g->freed + (uint64_t)g->slots && seq % (uint64_t)g->slots == b;
}

void rail_eager_ring_arrive(struct rail_eager_ring *g, unsigned b)
{
    g->state[b] = RAIL_BOUNCE_ARRIVED;
    g->arrived++;
}

static void poll_advance(struct rail_eager_ring *g)
{
    g->poll_seq++;
    g->poll_b = g->poll_b + 1 == g->slots ? 0 : g->poll_b + 1;
}

int rail_eager_ring_poll_slot(struct rail_eager_ring *g)
{
    if (g->slots == 0)
        return -1;
    for (;;) {
        if (g->poll_seq < g->freed) { /* released meanwhile: they came by completion */
            g->poll_seq = g->freed;
            g->poll_b = (int)(g->freed % (uint64_t)g->slots);
        }
        if (g->poll_seq >= g->freed + (uint64_t)g->slots)
            return -1;
        if (g->state[g->poll_b] == RAIL_BOUNCE_EMPTY)
            return g->poll_b;
        poll_advance(g);
    }
}

void rail_eager_ring_poll_found(struct rail_eager_ring *g, unsigned b)
{
    rail_eager_ring_arrive(g, b);
    poll_advance(g);
}

int rail_eager_ring_unexp_add(struct rail_eager_ring *g, unsigned b, int32_t tag, uint32_t index)
{
    for (int k = 0; k < g->nunexp; k++)
        if (g->unexp[k].tag == tag && g->unexp[k].tag_index == index)
            return -EEXIST;
    if (g->nunexp >= RAIL_EAGER_SLOTS)
        return -ENOSPC;
    g->unexp[g->nunexp++] = (struct rail_eager_unexp){(uint8_t)b, tag, index};
    return 0;
}

int rail_eager_ring_unexp_take(struct rail_eager_ring *g, int32_t tag, uint32_t index)
{
    for (int k = 0; k < g->nunexp; k++) {
        if (g->unexp[k].tag == tag && g->unexp[k].tag_index == index) {
            int b = g->unexp[k].slot;
            g->unexp[k] = g->unexp[--g->nunexp];
            return b;
        }
    }
    return -1;
}

uint64_t rail_eager_ring_credit_posted(struct rail_eager_ring *g)
{
    g->credit_busy = true;
    g->credit_inflight = g->freed;
    g->credit_sent = g->freed;
    return g->freed;
}

void rail_eager_ring_credit_done(struct rail_eager_ring *g)
{
    g->credit_busy = false;
    if (g->credit_inflight > g->credit_acked)
        g->credit_acked = g->credit_inflight;
}

void rail_eager_ring_credit_lost(struct rail_eager_ring *g)
{
    g->credit_busy = false;
    g->credit_sent = g->credit_acked; /* sent again by the next credit write */
}

int rail_eager_sender_room(uint64_t posted, uint64_t credit, int slots)
{
    if (credit > posted)
        return -EPROTO;
    return posted - credit < (uint64_t)slots ? 1 : 0;
}
