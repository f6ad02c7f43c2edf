/* SPDX-License-Identifier: Apache-2.0 */
/* Eager arrivals of a receive comm (net_recv_eager.c). */
#ifndef NCCL_RAIL_NET_RECV_EAGER_H
#define NCCL_RAIL_NET_RECV_EAGER_H

#include "protocol/eager_ring.h"
#include "protocol/net_comm.h"
#include "wire/eager_image.h"

/* An eager arrival in bounce slot b. */
void rail_recv_on_eager(struct rail_recv_comm *r, unsigned b);
/* The cursor walk of rail_recv_poll_images from `at` (what rail_recv_image_at gave: a slot, or
 * RAIL_IMAGE_WALK). */
void rail_recv_poll_walk(struct rail_recv_comm *r, struct rail_recv_req *until, int at);

/* Flagged images, in message order (the cursor: eager_ring.c). The usual answers without the
 * cursor walk, from the cursor's slot when it waits for message poll_seq (in the window, nothing
 * arrived there): RAIL_IMAGE_NONE when the first word of its image does not carry that message's
 * flag yet (rail_eager_ring_poll_slot would return that slot and rail_image_peek 0), else that
 * slot (what rail_eager_ring_poll_slot would return, changing nothing); RAIL_IMAGE_WALK when
 * the cursor is elsewhere (the walk decides). */
#define RAIL_IMAGE_NONE (-2)
#define RAIL_IMAGE_WALK (-1)
static inline int rail_recv_image_at(const struct rail_recv_comm *r)
{
    const struct rail_eager_ring *g = &r->ring;
    if (g->slots == 0)
        return RAIL_IMAGE_NONE;
    if (g->poll_seq < g->freed || g->poll_seq >= g->freed + (uint64_t)g->slots ||
        g->state[g->poll_b] != RAIL_BOUNCE_EMPTY)
        return RAIL_IMAGE_WALK;
    const uint64_t *w0 = (const uint64_t *)(r->images + (size_t)g->poll_b * RAIL_IMAGE_STRIDE);
    return (uint32_t)(__atomic_load_n(w0, __ATOMIC_RELAXED) >> 32) != rail_image_flag(g->poll_seq)
               ? RAIL_IMAGE_NONE
               : g->poll_b;
}

/* The flagged eager images that landed since the last call; with `until`, only up to the one
 * that completes that receive (the rest are found by the next call: the cursor stays there),
 * and an image is matched against `until` first. Inline: usually nothing has landed. */
static inline void rail_recv_poll_images(struct rail_recv_comm *r, struct rail_recv_req *until)
{
    r->repoll = false;
    int at = rail_recv_image_at(r);
    if (at != RAIL_IMAGE_NONE)
        rail_recv_poll_walk(r, until, at);
}
/* Entry i of q against what arrived before it was posted. */
void rail_recv_match_unexpected(struct rail_recv_comm *r, struct rail_recv_req *q, int i);
/* The batched credit write (also when the sender waits for it). */
void rail_recv_send_credit(struct rail_recv_comm *r);

#endif
