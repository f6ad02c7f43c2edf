/* SPDX-License-Identifier: Apache-2.0 */
/* Eager arrivals of a receive comm (net_recv_eager.c). */
#ifndef NCCL_RAIL_NET_RECV_EAGER_H
#define NCCL_RAIL_NET_RECV_EAGER_H

#include <string.h>

#include "protocol/eager_ring.h"
#include "protocol/net_comm.h"
#include "wire/eager_image.h"

/* An eager arrival in bounce slot b. */
void rail_recv_on_eager(struct rail_recv_comm *r, unsigned b);
/* The cursor walk of rail_recv_poll_images from `at` (what rail_recv_image_at gave: a slot, or
 * RAIL_IMAGE_WALK), then ring.watch set (rail_recv_watch_set). */
void rail_recv_poll_walk(struct rail_recv_comm *r, struct rail_recv_req *until, int at);

/* The batched credit write (also when the sender waits for it). */
void rail_recv_send_credit(struct rail_recv_comm *r);

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
    /* poll_seq in [freed, freed + slots), one unsigned compare (below freed wraps to far above);
     * never with no slots, which has no images to look at: none then. */
    if (g->poll_seq - g->freed >= (uint64_t)g->slots || g->state[g->poll_b] != RAIL_BOUNCE_EMPTY)
        return g->slots ? RAIL_IMAGE_WALK : RAIL_IMAGE_NONE;
    const uint64_t *w0 = (const uint64_t *)(r->images + (size_t)g->poll_b * RAIL_IMAGE_STRIDE);
    return (uint32_t)(__atomic_load_n(w0, __ATOMIC_RELAXED) >> 32) != rail_image_flag(g->poll_seq)
               ? RAIL_IMAGE_NONE
               : g->poll_b;
}

/* rail_recv_image_at's answer kept where the cursor moves, so that a test that finds no image
 * reads one word and compares (rail_recv_poll_images): ring.watch is NULL (not known: the full
 * look-up decides, then sets it) or what rail_recv_watch_set writes for the ring as it is now.
 * That is, where rail_recv_image_at answers from the cursor's slot (poll_seq in the window, its
 * slot EMPTY), word 0 of that image slot and the flag of message poll_seq (without that flag:
 * RAIL_IMAGE_NONE, with it: that slot); with no slots, a word that never carries a flag (none,
 * always); else NULL (RAIL_IMAGE_WALK: the walk decides, and sets it again). What moves the cursor
 * sets it (the image take, the walk); an arrival by completion (a slot's state, maybe the cursor's)
 * clears it; a delivery cannot make it wrong (net_recv_eager.c deliver). test_recv_watch checks the
 * invariant after every kind of step and compares the look-up with rail_recv_image_at. */
extern const uint64_t rail_recv_watch_never; /* 0: no flag in it */
static inline __attribute__((always_inline)) void rail_recv_watch_set(struct rail_recv_comm *r)
{
    struct rail_eager_ring *g = &r->ring;
    g->watch_flag = rail_image_flag(g->poll_seq);
    if (g->poll_seq - g->freed < (uint64_t)g->slots && g->state[g->poll_b] == RAIL_BOUNCE_EMPTY)
        g->watch = (const uint64_t *)(r->images + (size_t)g->poll_b * RAIL_IMAGE_STRIDE);
    else
        g->watch = g->slots ? NULL : &rail_recv_watch_never;
}
static inline void rail_recv_watch_lost(struct rail_recv_comm *r)
{
    r->ring.watch = NULL;
}
/* rail_recv_poll_found's `at` when the look-up is not known (ring.watch NULL). */
#define RAIL_IMAGE_UNKNOWN (-3)

/* The receive test's lean path for the image at the cursor's slot b (what rail_recv_image_at
 * returned): when that image is whole, of at most RAIL_IMAGE_LEAN_MAX bytes (and within the
 * eager limit), its receive posted ((tag, index) before the posted count of the tag counted last,
 * rail_tag_before: not unexpected; another tag counted last declines), and it is the last entry
 * q waits for (q live, one entry left, entry 0 that entry, the buffer large
 * enough), it is delivered into q here, in the caller's frame, with exactly the effects of
 * rail_recv_poll_walk(r, q, b) (which then returns: q is complete): the ring's poll_found and
 * consume, the copy, the image slot zeroed up to its high water, the credit when the sender is
 * starved. true then; false, changing nothing, for everything else (the walk decides).
 * test_recv_image compares the two over random states. */
#define RAIL_IMAGE_LEAN_MAX 8
/* rail_recv_image_lean less its credit write: no call at all (the tag's posted count only from
 * the tag counted last, else it declines), so that rail_recv_poll_found needs no frame. */
static inline __attribute__((always_inline)) bool
rail_recv_image_take(struct rail_recv_comm *r, struct rail_recv_req *q, int b)
{
    struct rail_eager_ring *g = &r->ring;
    uint64_t *w = (uint64_t *)(r->images + (size_t)b * RAIL_IMAGE_STRIDE);
    uint32_t flag = rail_image_flag(g->poll_seq);
    uint64_t w0 = __atomic_load_n(&w[0], __ATOMIC_RELAXED);
    uint64_t w1 = __atomic_load_n(&w[1], __ATOMIC_RELAXED);
    uint64_t w2 = __atomic_load_n(&w[2], __ATOMIC_RELAXED);
    uint32_t size = (uint32_t)w0;
    if (((uint32_t)(w0 >> 32) != flag) | ((uint32_t)(w1 >> 32) != flag) |
        ((uint32_t)(w2 >> 32) != flag) | (size > RAIL_IMAGE_LEAN_MAX) | (size > r->eager_bytes))
        return false;
    uint64_t lo = 0, hi = 0;
    if (size) {
        lo = __atomic_load_n(&w[3], __ATOMIC_RELAXED);
        if ((uint32_t)(lo >> 32) != flag)
            return false;
        if (size > 4) {
            hi = __atomic_load_n(&w[4], __ATOMIC_RELAXED);
            if ((uint32_t)(hi >> 32) != flag)
                return false;
        }
    }
    int32_t tag = (int32_t)(uint32_t)w1;
    uint32_t index = (uint32_t)w2;
    struct rail_recv_entry *e = &q->e[0];
    if (!q->h.ops || q->left != 1 || e->done || e->tag != tag || e->tag_index != index ||
        size > e->cap || atomic_load(&r->base.error) || !r->posted.last ||
        r->posted.last->tag != tag || !rail_tag_before(index, r->posted.last->count))
        return false;
    /* rail_eager_ring_poll_found */
    g->arrived++;
    g->poll_seq++;
    g->poll_b = g->poll_b + 1 == g->slots ? 0 : g->poll_b + 1;
    r->msg_size[b] = size;
    /* deliver: the payload (the low halves of words 3 and 4), the entry, the image slot */
    uint64_t v = (uint32_t)lo | (uint64_t)(uint32_t)hi << 32;
    if (size == 8)
        memcpy(e->data, &v, 8);
    else
        for (uint32_t k = 0; k < size; k++)
            e->data[k] = (uint8_t)(v >> 8 * k);
    e->size = size;
    e->done = true;
    q->left = 0;
    uint16_t bytes = (uint16_t)((RAIL_IMAGE_HDR_WORDS + (size + 3) / 4) * 8);
    uint16_t hw = r->image_hw[b] > bytes ? r->image_hw[b] : bytes;
    r->image_hw[b] = hw;
    if (hw == 40) { /* an 8-byte message's image, as usual: its five words, without a loop */
        __atomic_store_n(&w[0], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w[1], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w[2], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w[3], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w[4], 0, __ATOMIC_RELAXED);
    } else {
        for (unsigned k = 0; k < hw / 8u; k++) /* whole words: images are */
            __atomic_store_n(&w[k], 0, __ATOMIC_RELAXED);
    }
    r->polled[b] = false;
    /* rail_eager_ring_consume: slot b is EMPTY (rail_recv_image_at) and usually the oldest not
     * released (one message in flight) with nothing arrived in the next slot (the new cursor);
     * then it stays EMPTY, is released, and the release stops there, without the store of
     * CONSUMED, its reload and the loop. So freed was poll_seq (free_b == b == the old poll_b and
     * both in the window), and is the new poll_seq: the new cursor is in the window, its slot
     * EMPTY, and ring.watch that slot's word 0 (rail_recv_watch_set; its address from slot b's,
     * or the first slot's after the last). */
    if (g->free_b == b && g->state[g->poll_b] == RAIL_BOUNCE_EMPTY) {
        g->freed++;
        g->free_b = g->poll_b;
        g->watch_flag = rail_image_flag(g->poll_seq);
        g->watch = g->poll_b ? w + RAIL_IMAGE_STRIDE / 8 : (const uint64_t *)r->images;
        return true;
    }
    if (g->free_b == b) {
        g->freed++;
        g->free_b = g->poll_b;
    } else {
        g->state[b] = RAIL_BOUNCE_CONSUMED;
    }
    while (g->state[g->free_b] == RAIL_BOUNCE_CONSUMED) {
        g->state[g->free_b] = RAIL_BOUNCE_EMPTY;
        g->freed++;
        g->free_b = g->free_b + 1 == g->slots ? 0 : g->free_b + 1;
    }
    rail_recv_watch_set(r); /* the cursor moved */
    return true;
}

/* The image taken (rail_recv_image_take), then the credit when the sender is starved. */
static inline __attribute__((always_inline)) bool
rail_recv_image_lean(struct rail_recv_comm *r, struct rail_recv_req *q, int b)
{
    if (!rail_recv_image_take(r, q, b))
        return false;
    if (rail_eager_ring_starved(&r->ring))
        rail_recv_send_credit(r);
    return true;
}

/* An image at the cursor (at: rail_recv_image_at's slot or RAIL_IMAGE_WALK, or
 * RAIL_IMAGE_UNKNOWN: rail_recv_image_at decides here): the lean path for the receive under test
 * (`until`), else the walk; ring.watch set again either way. Out of line: the callers' frames (an
 * idle receive test's above all) stay as small as before. */
void rail_recv_poll_found(struct rail_recv_comm *r, struct rail_recv_req *until, int at);

/* The flagged eager images that landed since the last call; with `until`, only up to the one
 * that completes that receive (the rest are found by the next call: the cursor stays there),
 * and an image is matched against `until` first (rail_recv_image_lean when it is the usual one).
 * Inline: usually nothing has landed, found by one word (rail_recv_watch_set). */
static inline void rail_recv_poll_images(struct rail_recv_comm *r, struct rail_recv_req *until)
{
    r->repoll = false;
    const uint64_t *w = r->ring.watch;
    if (w && (uint32_t)(__atomic_load_n(w, __ATOMIC_RELAXED) >> 32) != r->ring.watch_flag)
        return; /* RAIL_IMAGE_NONE */
    rail_recv_poll_found(r, until, w ? r->ring.poll_b : RAIL_IMAGE_UNKNOWN);
}
/* Entry i of q against what arrived before it was posted. */
void rail_recv_match_unexpected(struct rail_recv_comm *r, struct rail_recv_req *q, int i);

#endif
