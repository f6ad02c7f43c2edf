/* SPDX-License-Identifier: Apache-2.0 */
/* Receive side of the queries about one-piece messages (net_send_post.c asks): a sender whose
 * rail failed before it saw such a message complete repeats its size record with a query
 * immediate on a rail that is up; this side fails and drains that rail first, so nothing of the
 * old attempt can land any more, then writes the answer (landed or not) into the sender's answer
 * table. docs/net-plugin.md, "One-piece messages with failover", has the argument. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protocol/net_ask.h"
#include "protocol/net_health.h"
#include "transport/net_verbs.h"

int rail_recv_write(struct rail_recv_comm *r, int rail, int qp, uint64_t wrid, void *src,
                    size_t len, uint64_t off, const char *what)
{
    struct rail_link *l = &r->base.link[rail];
    struct ibv_sge sge = {(uintptr_t)src, (uint32_t)len, l->mr[2]->lkey};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(&wr, &sge, wrid, r->base.peer_addr1 + off, l->peer_rkey1);
    int rc = rail_verbs_post_send(l->qps[qp].qp, &wr);
    if (rc < 0) {
        char why[96];
        snprintf(why, sizeof(why), "posting %s failed", what);
        if (!rail_link_fail(&r->base, rail, why))
            rail_comm_fail(&r->base, rc, "%s: %s: %s", l->dev->name, why, strerror(-rc));
        return rc;
    }
    l->qps[qp].sq_out++;
    r->sq_wrs++;
    l->rr++;
    return 0;
}

/* The sender lost the completion of the one-piece message of slot/entry on `rail` and asks
 * whether it landed; rail_recv_answer() replies once nothing can land through that rail any more.
 * The query rewrote the message's size record with the same bytes: its seq names the message. */
void rail_recv_on_ask(struct rail_recv_comm *r, unsigned slot, unsigned entry, unsigned rail)
{
    unsigned i = slot * RAIL_MAX_RECVS + entry;
    if (!r->base.failover || (int)rail >= r->base.nrails) {
        rail_comm_fail(&r->base, -EPROTO, "query for rail %u (%d rails, failover %s)", rail,
                       r->base.nrails, r->base.failover ? "on" : "off");
        return;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const struct rail_record *rec =
        (const struct rail_record *)(r->records + (size_t)i * RAIL_RECORD_BYTES);
    if (!r->query[i].asked)
        r->nquery++;
    r->query[i].seq = rec->seq;
    r->query[i].rail = (uint8_t)rail;
    r->query[i].asked = true;
}

/* Answers the queries whose rail is down and drained here: the receive of that slot sequence
 * either has the entry (landed: the sender must not write it again) or still waits for it (then
 * nothing of the old attempt can complete it any more, and the sender sends it again). */
void rail_recv_answer(struct rail_recv_comm *r)
{
    for (int i = 0; i < RAIL_FIFO_SLOTS * RAIL_MAX_RECVS && r->nquery > 0; i++) {
        if (!r->query[i].asked)
            continue;
        int fr = r->query[i].rail;
        if ((r->base.link[fr].rj.up || r->base.link[fr].rj.ready) &&
            !rail_link_fail(&r->base, fr, "the peer lost a completion on it"))
            return;
        if (!rail_link_drained(&r->base, fr))
            continue;
        const struct rail_recv_req *q =
            rail_cts_tail_owner(&r->fifo, (unsigned)(i / RAIL_MAX_RECVS));
        int e = i % RAIL_MAX_RECVS;
        bool waiting =
            q && (uint32_t)(q->slot_seq + 1) == r->query[i].seq && e < q->n && !q->e[e].done;
        int rail = rail_pick_up(&r->base, 0);
        if (rail < 0)
            return;
        struct rail_link *l = &r->base.link[rail];
        int qp = (int)(l->rr % (unsigned)r->base.nqps);
        if (l->qps[qp].sq_out >= l->qps[qp].sq_max)
            return;
        uint64_t *src = (uint64_t *)(r->staging + RAIL_STAGING_ANSWER_OFF) + i;
        *src = RAIL_ANSWER(r->query[i].seq, !waiting);
        if (rail_recv_write(r, rail, qp, rail_wrid(RAIL_WR_ANSWER, rail, qp, i), src, sizeof(*src),
                            RAIL_ANSWER_OFF_OF(r->cts_bytes) + (uint64_t)i * 8, "an answer") != 0)
            return;
        r->query[i].asked = false;
        r->nquery--;
    }
}
