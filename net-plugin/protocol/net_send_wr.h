/* SPDX-License-Identifier: Apache-2.0 */
/* Work requests of a send comm (net_send_wr.c), shared by the rendezvous and eager senders. */
#ifndef NCCL_RAIL_NET_SEND_WR_H
#define NCCL_RAIL_NET_SEND_WR_H

#include "protocol/net_comm.h"
#include "protocol/net_health.h"
#include "transport/net_verbs.h"

/* Free entries of the send queue of QP qp of rail l. */
int rail_send_sq_room(const struct rail_link *l, int qp);
/* A refused post (rc < 0) of QP qp of rail: 1 when the rail failed over (failover), else rc after
 * failing the comm. */
int rail_send_post_failed(struct rail_send_comm *s, int rail, int qp, int rc);
/* Posts wr (nwr WRs) on QP qp of rail: 0 posted, 1 refused and the rail failed over (failover),
 * -errno after failing the comm. Always inline, the refusal out of line, and the provider called
 * as rail_verbs_post_send calls it, its result made an -errno only when it refused: GCC put
 * rail_verbs_post_send out of line in try_send once the striped send's two posts were written
 * out (10 instructions per post). */
static inline __attribute__((always_inline)) int
rail_send_post_wr(struct rail_send_comm *s, int rail, int qp, struct ibv_send_wr *wr, int nwr)
{
    struct rail_link *l = &s->base.link[rail];
    struct ibv_send_wr *bad = NULL;
    int rc = rail_ibv->post_send(l->qps[qp].qp, wr, &bad);
    if (rc != 0)
        return rail_send_post_failed(s, rail, qp, rc > 0 ? -rc : rc);
    l->qps[qp].sq_out += nwr;
    l->cq_work += nwr;
    return 0;
}
/* Where a size record, query or eager write goes: the rail's control QP, or without one the
 * next data QP. */
int rail_send_control_qp(struct rail_send_comm *s, struct rail_link *l);
/* rail_pick_up(c, from): on one rail its answer (0 when that rail is up, else -1) without the
 * call and its loop. test_send_direct compares the two. */
static inline int rail_send_pick_up(struct rail_comm *c, unsigned from)
{
    if (c->nrails == 1)
        return c->link[0].rj.up ? 0 : -1;
    return rail_pick_up(c, from);
}
int rail_send_req_index(const struct rail_send_comm *s, const struct rail_send_req *q);

#endif
