/* SPDX-License-Identifier: Apache-2.0 */
/* Receiving side, eager messages: header + data landed in a bounce slot (immediate = slot), or
 * a flagged image landed in the slot's image slot, found by polling (wire/eager_image.h).
 * The arrival is checked (a re-sent duplicate dropped, slot state, header, credit window), then
 * copied into the posted receive entry with the same (tag, index), or kept as unexpected until
 * the irecv that posts it (rail_recv_match_unexpected). Released slots go back to the sender as
 * a freed count (credit write, batched: rail_recv_send_credit). Slot bookkeeping is the pure
 * eager ring (eager_ring.c). */
#include <errno.h>
#include <string.h>

#include "protocol/net_recv_eager.h"

#include "log.h"
#include "protocol/net_ask.h"
#include "protocol/net_health.h"
#include "wire/net_wire.h"

static struct rail_eager_hdr *bounce_hdr(struct rail_recv_comm *r, unsigned b)
{
    return (struct rail_eager_hdr *)(r->bounce + (size_t)b * r->slot_stride);
}

/* Sends the freed count to the sender, in batches of the slots less one, or at once when the sender
 * may be waiting for it; never with a credit write still in flight. */
void rail_recv_send_credit(struct rail_recv_comm *r)
{
    if (!rail_eager_ring_credit_due(&r->ring) || atomic_load(&r->base.error))
        return;
    int rail = rail_pick_up(&r->base, 0);
    if (rail < 0)
        return;
    struct rail_link *l = &r->base.link[rail];
    int qp = (int)(l->rr % (unsigned)r->base.nqps);
    uint64_t *word = (uint64_t *)(r->staging + RAIL_STAGING_CREDIT_OFF);
    if (l->qps[qp].sq_out >= l->qps[qp].sq_max)
        return; /* retried from the next progress call */
    *word = r->ring.freed;
    if (rail_recv_write(r, rail, qp, rail_wrid(RAIL_WR_CREDIT, rail, qp, 0), word, sizeof(*word),
                        RAIL_CREDIT_OFF_OF(r->cts_bytes), "the eager credit") != 0)
        return;
    (void)rail_eager_ring_credit_posted(&r->ring);
}

static uint8_t *image_of(const struct rail_recv_comm *r, unsigned b)
{
    return r->images + (size_t)b * RAIL_IMAGE_STRIDE;
}

/* Zeroes every word an image may have used in image slot b (wire/eager_image.h: no stale image
 * may outlive the slot's next delivery); `bytes`: the image just delivered from it, or 0. */
static void clear_image(struct rail_recv_comm *r, unsigned b, size_t bytes)
{
    if (bytes > r->image_hw[b])
        r->image_hw[b] = (uint16_t)bytes;
    if (r->image_hw[b])
        memset(image_of(r, b), 0, r->image_hw[b]);
}

/* Copies eager slot b into entry i of q and releases the slot. */
static void deliver(struct rail_recv_comm *r, unsigned b, struct rail_recv_req *q, int i)
{
    const struct rail_eager_hdr *h = bounce_hdr(r, b);
    struct rail_recv_entry *e = &q->e[i];
    uint64_t size = r->msg_size[b];

    if (size > e->cap) {
        RAIL_WARN(NCCL_NET, "eager message of %llu bytes (tag %d) for a %llu-byte receive buffer",
                  (unsigned long long)size, e->tag, (unsigned long long)e->cap);
        q->error = -EINVAL;
    } else {
        if (size && r->polled[b])
            rail_image_copy(image_of(r, b), (uint32_t)size, e->data);
        else if (size)
            memcpy(e->data, (const uint8_t *)h + RAIL_EAGER_HDR, size);
        e->size = size;
    }
    e->done = true;
    q->left--;
    clear_image(r, b, r->polled[b] ? rail_image_bytes((uint32_t)size) : 0);
    r->polled[b] = false;
    /* ring.watch stays right: when known, the cursor's slot is EMPTY (so not b, which ARRIVED)
     * and the release stops there at the latest, so the cursor stays in the window and its slot
     * EMPTY (test_recv_watch checks it after every delivery). */
    rail_eager_ring_consume(&r->ring, b);
    /* A batch of credits is written by the next call on this comm, not on the way to
     * completing this receive, unless the sender is out of slots and waits for it. */
    if (rail_eager_ring_starved(&r->ring))
        rail_recv_send_credit(r);
}

/* Matches entry i of q against eager messages that arrived before it was posted. */
void rail_recv_match_unexpected(struct rail_recv_comm *r, struct rail_recv_req *q, int i)
{
    int b = rail_eager_ring_unexp_take(&r->ring, q->e[i].tag, q->e[i].tag_index);
    if (b >= 0)
        deliver(r, (unsigned)b, q, i);
}

/* With failover the sender writes an eager message again when the completion of its first
 * write was lost with a rail: a second arrival of a message already here or already released
 * is dropped. */
static bool duplicate_eager(struct rail_recv_comm *r, unsigned b)
{
    const struct rail_eager_hdr *h = bounce_hdr(r, b);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (rail_eager_ring_duplicate(&r->ring, b, h->seq)) {
        RAIL_TRACE(NCCL_NET, "dropped a re-sent eager message (slot %u, number %llu)", b,
                   (unsigned long long)h->seq);
        return true;
    }
    return false;
}

/* Entry *entry of q when q is live and waits for (tag, index). */
static bool waits_for(const struct rail_recv_req *q, int32_t tag, uint32_t index, int *entry)
{
    if (!q->h.ops)
        return false;
    for (int i = 0; i < q->n; i++)
        if (!q->e[i].done && q->e[i].tag == tag && q->e[i].tag_index == index) {
            *entry = i;
            return true;
        }
    return false;
}

/* The pending receive for (tag, index), NULL when none. (tag, index) names one entry, so the
 * order of the search changes only its cost: the receives holding their clear-to-send back (the
 * usual ones, in posting order) first, then every receive. */
static struct rail_recv_req *eager_match(struct rail_recv_comm *r, int32_t tag, uint32_t index,
                                         int *entry)
{
    for (int k = 0; k < r->ndeferred; k++) {
        struct rail_recv_req *q = rail_recv_req_at(r, r->deferred[k]);
        if (waits_for(q, tag, index, entry))
            return q;
    }
    for (int b = 0; b < RAIL_RECV_REQ_BLOCKS; b++)
        for (int j = 0; r->blk[b] && j < RAIL_RECV_REQ_BLOCK; j++)
            if (waits_for(&r->blk[b]->req[j], tag, index, entry))
                return &r->blk[b]->req[j];
    return NULL;
}

/* Slot b (checked, now ARRIVED) holds (tag, index): delivered to its receive, or kept as
 * unexpected when that receive was not posted yet. `hint` (or NULL): the receive looked at
 * first, the one whose test polls (it usually is the match: one message in flight); since
 * (tag, index) names one entry, that changes only the cost of the search. */
static void arrived(struct rail_recv_comm *r, unsigned b, int32_t tag, uint32_t index,
                    struct rail_recv_req *hint)
{
    if (!rail_tag_before(index, rail_tagmap_get_inl(&r->posted, tag))) {
        if (rail_eager_ring_unexp_add(&r->ring, b, tag, index) < 0)
            rail_comm_fail(&r->base, -EPROTO, "eager message (tag %d, #%u) sent twice", tag, index);
        return;
    }
    int i;
    struct rail_recv_req *q =
        hint && waits_for(hint, tag, index, &i) ? hint : eager_match(r, tag, index, &i);
    if (q)
        deliver(r, b, q, i);
    else
        rail_comm_fail(&r->base, -EPROTO, "eager message (tag %d, #%u) matches no pending receive",
                       tag, index);
}

void rail_recv_on_eager(struct rail_recv_comm *r, unsigned b)
{
    char err[160];
    err[0] = '\0';
    if ((int)b < r->ring.slots && r->base.failover && duplicate_eager(r, b))
        return;
    if (!rail_eager_ring_slot_free(&r->ring, b)) {
        rail_comm_fail(&r->base, -EPROTO, "eager message into bounce slot %u (%d slots, state %d)",
                       b, r->ring.slots, (int)b < r->ring.slots ? r->ring.state[b] : -1);
        return;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    /* Read once: the peer could rewrite the slot after the checks. */
    const struct rail_eager_hdr h = *bounce_hdr(r, b);
    if (rail_eager_hdr_check(&h, r->eager_bytes, err, sizeof(err)) != 0 ||
        !rail_eager_ring_in_window(&r->ring, b, h.seq)) {
        rail_comm_fail(&r->base, -EPROTO,
                       "bad eager message in slot %u (number %llu, %llu freed): %s", b,
                       (unsigned long long)h.seq, (unsigned long long)r->ring.freed,
                       err[0] ? err : "out of the credit window");
        return;
    }
    rail_eager_ring_arrive(&r->ring, b);
    rail_recv_watch_lost(r);           /* slot b no longer EMPTY */
    r->msg_size[b] = (uint32_t)h.size; /* at most eager_bytes */
    r->repoll = true;
    arrived(r, b, h.tag, h.tag_index, NULL);
}

const uint64_t rail_recv_watch_never = 0;

/* Flagged images, in message order (the cursor: eager_ring.c). */
static void poll_walk(struct rail_recv_comm *r, struct rail_recv_req *until, int at)
{
    for (bool first = true; !atomic_load(&r->base.error); first = false) {
        int b = first && at >= 0 ? at : rail_eager_ring_poll_slot(&r->ring);
        if (b < 0)
            return;
        struct rail_image_info in;
        char err[160];
        uint64_t seq = r->ring.poll_seq;
        int rc =
            rail_image_peek(image_of(r, (unsigned)b), seq, r->eager_bytes, &in, err, sizeof(err));
        if (rc == 0)
            return; /* not (all) here yet */
        if (rc < 0) {
            rail_comm_fail(&r->base, -EPROTO, "bad eager image in slot %d (number %llu): %s", b,
                           (unsigned long long)seq, err);
            return;
        }
        rail_eager_ring_poll_found(&r->ring, (unsigned)b);
        r->polled[b] = true;
        r->msg_size[b] = in.size;
        arrived(r, (unsigned)b, in.tag, in.tag_index, until);
        if (until && until->left == 0)
            return; /* its test reports it now; no look at the next slot on the way */
    }
}

__attribute__((noinline)) void rail_recv_poll_walk(struct rail_recv_comm *r,
                                                   struct rail_recv_req *until, int at)
{
    poll_walk(r, until, at);
    rail_recv_watch_set(r); /* the cursor moved, or not: known again */
}

void rail_recv_poll_found(struct rail_recv_comm *r, struct rail_recv_req *until, int at)
{
    if (at == RAIL_IMAGE_UNKNOWN) {
        at = rail_recv_image_at(r);
        if (at == RAIL_IMAGE_NONE) {
            rail_recv_watch_set(r);
            return;
        }
    }
    /* rail_recv_image_lean with its calls as tail calls: no frame on the usual path; the take
     * sets ring.watch, the walk too */
    if (until && at >= 0 && rail_recv_image_take(r, until, at)) {
        if (rail_eager_ring_starved(&r->ring))
            rail_recv_send_credit(r);
        return;
    }
    rail_recv_poll_walk(r, until, at);
}
