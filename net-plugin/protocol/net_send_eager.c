/* SPDX-License-Identifier: Apache-2.0 */
/* Eager messages of a send comm: a flagged image (wire/eager_image.h) or header + payload WITH
 * IMM into the receiver's bounce slot, on any rail that is up; and whether one whose rail failed
 * got there anyway. */
#include "protocol/net_send_eager.h"

#include <arpa/inet.h>
#include <string.h>

#include "protocol/net_health.h"
#include "protocol/net_send_wr.h"
#include "protocol/net_telemetry.h"

/* Where q's sources live in the local region: its header (per request), its image (per slot). */
static uint8_t *header_src(struct rail_send_comm *s, const struct rail_send_req *q)
{
    (void)s;
    return q->src + 64;
}

static uint8_t *image_src(struct rail_send_comm *s, const struct rail_send_req *q)
{
    return s->local + (size_t)q->bounce * RAIL_IMAGE_STRIDE;
}

/* A flagged image (wire/eager_image.h): a plain write into the receiver's image slot, found
 * there by polling; inline when it fits. Always inline (in post_eager_on): its own prologue was
 * a fifth of it. */
static inline __attribute__((always_inline)) int
post_image_on(struct rail_send_comm *s, struct rail_send_req *q, int rail, int qp)
{
    struct rail_link *l = &s->base.link[rail];
    uint32_t len = (uint32_t)rail_image_bytes((uint32_t)q->size);
    uint64_t off = rail_image_region_off(s->eager_slots, RAIL_EAGER_HDR + (uint64_t)s->eager_bytes);
    struct ibv_sge sge = {(uintptr_t)image_src(s, q), len, l->mr[1]->lkey};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(
        &wr, &sge,
        rail_wrid(RAIL_WR_LAST, rail, qp, rail_send_req_index(s, q) | RAIL_CHUNK_REC << 16),
        s->base.peer_addr2 + off + (uint64_t)q->bounce * RAIL_IMAGE_STRIDE, l->peer_rkey2);
    if (len <= (uint32_t)l->max_inline)
        wr.send_flags |= IBV_SEND_INLINE;
    return rail_send_post_wr(s, rail, qp, &wr, 1);
}

/* Header + payload, WITH IMM into the receiver's bounce slot. */
static int post_header_on(struct rail_send_comm *s, struct rail_send_req *q, int rail, int qp)
{
    struct rail_link *l = &s->base.link[rail];
    struct ibv_sge sge[2] = {
        {(uintptr_t)header_src(s, q), RAIL_EAGER_HDR, rail_send_src_lkey(q, rail)},
        {q->data, (uint32_t)q->size, q->lkey[rail]}};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(
        &wr, sge,
        rail_wrid(RAIL_WR_LAST, rail, qp, rail_send_req_index(s, q) | RAIL_CHUNK_REC << 16),
        s->base.peer_addr2 + (uint64_t)q->bounce * (RAIL_EAGER_HDR + (uint64_t)s->eager_bytes),
        l->peer_rkey2);
    wr.num_sge = q->size ? 2 : 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(rail_imm_eager(q->bounce));
    /* Inline: the provider copies header and payload into the work request now (a re-send after
     * a rail failure copies them again: the buffer is NCCL's until this request completes). */
    if (q->host && RAIL_EAGER_HDR + q->size <= (uint64_t)l->max_inline)
        wr.send_flags |= IBV_SEND_INLINE;
    return rail_send_post_wr(s, rail, qp, &wr, 1);
}

/* Inline into the first post (rail_send_post_eager); the re-send after a rail failure calls it
 * through rail_send_post_eager_on. */
static inline __attribute__((always_inline)) int post_eager_on(struct rail_send_comm *s,
                                                               struct rail_send_req *q, int rail)
{
    struct rail_link *l = &s->base.link[rail];
    int qp = rail_send_control_qp(s, l);
    if (rail_send_sq_room(l, qp) < 1)
        return 1;
    int rc = q->polled ? post_image_on(s, q, rail, qp) : post_header_on(s, q, rail, qp);
    if (rc == 0) {
        rail_2ph_record_posted(&q->tp);
        q->rec_rail = (uint8_t)rail;
    }
    return rc;
}

int rail_send_post_eager_on(struct rail_send_comm *s, struct rail_send_req *q, int rail)
{
    return post_eager_on(s, q, rail);
}

int rail_send_post_eager(struct rail_send_comm *s, struct rail_send_req *q, int32_t tag,
                         uint32_t index)
{
    /* Small enough and readable here: a flagged image the receiver polls for, built once (a
     * re-send after a rail failure writes the same bytes). Else header + payload, WITH IMM. */
    q->polled = s->poll_max > 0 && q->host && q->size <= s->poll_max;
    if (q->polled) {
        rail_image_encode(image_src(s, q), q->seq, tag, index, (const void *)q->data,
                          (uint32_t)q->size);
    } else {
        struct rail_eager_hdr *h = (struct rail_eager_hdr *)header_src(s, q);
        memset(h, 0, sizeof(*h));
        h->tag = tag;
        h->tag_index = index;
        h->size = q->size;
        h->seq = q->seq;
    }
    int rail = rail_send_pick_up(&s->base, s->base.rr++);
    if (rail < 0)
        return atomic_load(&s->base.error) ? atomic_load(&s->base.error) : 1;
    q->kind = RAIL_SREQ_EAGER;
    int rc = post_eager_on(s, q, rail);
    if (rc == 0) {
        s->bounce_busy[q->bounce] = 1;
        rail_tel_whole(&s->base, rail, q->size);
    }
    return rc;
}

/* An eager message whose write failed with its rail got there anyway when the receiver has
 * already returned its bounce slot: it is done and nothing is sent again. */
bool rail_send_eager_returned(struct rail_send_comm *s, struct rail_send_req *q)
{
    if (q->kind != RAIL_SREQ_EAGER ||
        __atomic_load_n((uint64_t *)(s->fifo + RAIL_CREDIT_OFF_OF(s->cts.entry_bytes)),
                        __ATOMIC_ACQUIRE) <= q->seq)
        return false;
    rail_2ph_record_settled(&q->tp);
    s->bounce_busy[q->bounce] = 0;
    return true;
}
