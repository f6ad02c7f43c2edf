/* SPDX-License-Identifier: Apache-2.0 */
/* The clear-to-send side of a receive comm (net_recv.c is the rest): each CTS is an RDMA write of
 * the request's prepared entries (its staging area) into the sender's FIFO slot, on the first
 * rail that is up; writes lost with a rail go again; receives small enough to come eagerly hold
 * theirs back. */
#include <errno.h>
#include <string.h>

#include "protocol/net_recv_cts.h"

#include "protocol/cts_fifo.h"
#include "protocol/eager_ring.h"
#include "protocol/net_health.h"
#include "transport/net_verbs.h"

void rail_recv_undefer(struct rail_recv_comm *r, int k)
{
    /* Byte by byte, in order: usually nothing follows (the one held-back receive of a
     * ping-pong), and a memmove call costs more than the loop. */
    r->ndeferred--;
    for (int j = k; j < r->ndeferred; j++)
        r->deferred[j] = r->deferred[j + 1];
}

int rail_recv_cts_post_failed(struct rail_recv_comm *r, int rail, int rc)
{
    if (rail_link_fail(&r->base, rail, "posting the clear-to-send failed"))
        return 1;
    rail_comm_fail(&r->base, rc, "%s: posting the clear-to-send failed: %s",
                   r->base.link[rail].dev->name, strerror(-rc));
    return rc;
}

/* Posts q's clear-to-send (prepared in its staging area by irecv) into FIFO slot sequence seq
 * on `rail`, QP `qp` (rail_recv_cts_at: up, with room): 0, 1 when the rail failed on the post
 * (try again on another), -errno. */
static int post_cts_at(struct rail_recv_comm *r, struct rail_recv_req *q, uint64_t seq, int rail,
                       int qp)
{
    struct rail_link *l = &r->base.link[rail];
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS);
    uint8_t *stage = q->stage;

    for (int i = 0; i < q->n; i++)
        rail_cts_stage_seq(stage + (size_t)i * r->cts_bytes, r->cts_bytes, seq + 1);
    struct ibv_sge sge = {(uintptr_t)stage, (uint32_t)((unsigned)q->n * r->cts_bytes),
                          q->blk->mr[rail]->lkey};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(&wr, &sge, rail_wrid(RAIL_WR_CTS, rail, qp, q->idx),
                          r->base.peer_addr1 + (uint64_t)slot * RAIL_MAX_RECVS * r->cts_bytes,
                          l->peer_rkey1);
    int rc = rail_verbs_post_send(l->qps[qp].qp, &wr);
    if (rc < 0)
        return rail_recv_cts_post_failed(r, rail, rc);
    l->qps[qp].sq_out++;
    r->sq_wrs++;
    l->rr++;
    q->cts_pending = true;
    return 0;
}

int rail_recv_cts_at(struct rail_recv_comm *r, int *qp)
{
    int rail = rail_pick_up(&r->base, 0);
    if (rail < 0)
        return -1;
    const struct rail_link *l = &r->base.link[rail];
    *qp = (int)(l->rr % (unsigned)r->base.nqps);
    return l->qps[*qp].sq_out < l->qps[*qp].sq_max ? rail : -1;
}

/* post_cts_at on the rail and QP the next write goes on: 0, 1 when none is up or its send queue
 * is full (try again later), -errno. */
static int post_cts(struct rail_recv_comm *r, struct rail_recv_req *q, uint64_t seq)
{
    if (rail_pick_up(&r->base, 0) < 0)
        return atomic_load(&r->base.error) ? atomic_load(&r->base.error) : 1;
    int qp, rail = rail_recv_cts_at(r, &qp);
    return rail < 0 ? 1 : post_cts_at(r, q, seq, rail, qp);
}

/* Writes q's clear-to-send into the next FIFO slot: 0, 1 when the slot or the send queue is
 * still busy (try again later), or -errno. */
int rail_recv_write_cts(struct rail_recv_comm *r, struct rail_recv_req *q)
{
    if (rail_cts_tail_busy(&r->fifo))
        return 1;
    if (!q->staged) { /* a held-back receive: its entries from the posted ones */
        for (int i = 0; i < q->n; i++)
            rail_recv_stage_entry(r, q->stage + (size_t)i * r->cts_bytes, &q->e[i], q->n, i,
                                  q->e[i].rkey);
        q->staged = true;
    }
    int rc = post_cts(r, q, r->fifo.tail);
    if (rc != 0)
        return rc;
    q->slot_seq = rail_cts_tail_take(&r->fifo, q);
    q->has_slot = true;
    return 0;
}

int rail_recv_write_cts_at(struct rail_recv_comm *r, struct rail_recv_req *q, int rail, int qp)
{
    int rc = post_cts_at(r, q, r->fifo.tail, rail, qp);
    if (rc != 0)
        return rc;
    q->slot_seq = rail_cts_tail_take(&r->fifo, q);
    q->has_slot = true;
    return 0;
}

/* Clear-to-send writes lost with a failed rail go again on a rail that is up (same slot, same
 * content), even when their receive completed meanwhile: one completed by eager messages never
 * gave its CTS to the sender, which reads the FIFO slots in order and would wait for this slot
 * forever (found by the vf2_eager fault scenario). Writing the same bytes again is harmless: the
 * slot is not reused before this request ends, and it ends only once this write completed. */
void rail_recv_retry_cts(struct rail_recv_comm *r)
{
    for (int i = 0; i < RAIL_RECV_REQS && r->nretry > 0; i++) {
        struct rail_recv_req *q = rail_recv_req_at(r, i);
        if (!q || !q->h.ops || !q->cts_retry)
            continue;
        if (post_cts(r, q, q->slot_seq) != 0)
            return;
        q->cts_retry = false;
        r->nretry--;
    }
}

/* Receives small enough to come eagerly hold their clear-to-send back: the message usually
 * lands in a bounce slot first and the CTS is never needed. A held receive still unmatched
 * writes its CTS (so the sender may use rendezvous) once the sender has no bounce slot left
 * and none can be returned, or after RAIL_CTS_DEFER_NS as a safety net (e.g. a message larger
 * than the sender's eager limit sent into this small buffer, which must fail, not hang). */
void rail_recv_flush_deferred(struct rail_recv_comm *r)
{
    if (!r->ndeferred || atomic_load(&r->base.error))
        return;
    bool starved = rail_eager_ring_stuck(&r->ring);
    uint64_t now = r->base.coarse_ns; /* read by the health check (a few calls old at most) */
    for (int k = 0; k < r->ndeferred; k++) {
        struct rail_recv_req *q = rail_recv_req_at(r, r->deferred[k]);
        if (q->left == 0) {
            rail_recv_undefer(r, k--);
            continue;
        }
        if (!starved && now - q->defer_ns < RAIL_CTS_DEFER_NS)
            return; /* the list is in posting order */
        if (rail_recv_write_cts(r, q) != 0)
            return;
        rail_recv_undefer(r, k--);
    }
}
