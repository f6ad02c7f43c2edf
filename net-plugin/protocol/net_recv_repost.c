/* SPDX-License-Identifier: Apache-2.0 */
/* A receive comm's receive WRs posted again after completions consumed them (net_recv.h): the
 * general walk over the QPs that owe, a full batch, and what a failed post fails. */
#include <string.h>

#include "protocol/net_recv_repost.h"

#include "protocol/net_data.h"
#include "protocol/net_health.h"
#include "protocol/net_link.h"

int rail_recv_repost_failed(struct rail_recv_comm *r, int rail, int rc)
{
    if (rail_link_fail(&r->base, rail, "reposting a receive failed"))
        return 0;
    rail_comm_fail(&r->base, rc, "%s: reposting a receive failed: %s", r->base.link[rail].dev->name,
                   strerror(-rc));
    return rc;
}

/* Posts the receive WRs owed on one QP. 0 when posted or when the failure failed only the rail
 * (failover: its QPs are made again with full receive queues when it rejoins), -errno after failing
 * the comm. */
int rail_recv_repost_qp(struct rail_recv_comm *r, int rail, int qp)
{
    struct rail_link *l = &r->base.link[rail];
    int rc = rail_post_recvs(&r->base, rail, qp, l->qps[qp].rq_owed);
    if (rc < 0)
        return rail_recv_repost_failed(r, rail, rc);
    l->qps[qp].rq_owed = 0;
    return 0;
}

static int repost_if_owed(struct rail_recv_comm *r, int rail, int qp)
{
    struct rail_link *l = &r->base.link[rail];
    if (!l->qps || !l->qps[qp].rq_owed)
        return 0;
    if (!(l->rj.up || l->rj.ready)) {
        l->qps[qp].rq_owed = 0; /* a rejoin posts the whole queue again */
        return 0;
    }
    return rail_recv_repost_qp(r, rail, qp);
}

/* Receive WRs consumed by completions are posted again here, from calls that complete nothing
 * (a test that is not done, irecv), not on the way to reporting a completion: under a
 * ping-pong that call is on the critical path. The RQs were sized with RAIL_REPOST_BATCH spare
 * entries for what is owed, and on_wc posts a full batch itself. When one QP took every
 * completion since the last call (owes_at, the usual case: one message in flight), only that QP
 * is looked at; else every rail's every QP. The usual case of all, one WR owed on a rail that is
 * up, is rail_recv_repost_owed's lean path (net_recv.h); this is the rest. */
__attribute__((noinline)) void rail_recv_repost_walk(struct rail_recv_comm *r)
{
    if (!r->owes)
        return;
    r->owes = false;
    if (r->owes_at >= 0) {
        (void)repost_if_owed(r, r->owes_at / RAIL_MAX_QPS, r->owes_at % RAIL_MAX_QPS);
        return;
    }
    for (int rail = 0; rail < r->base.nrails; rail++)
        for (int qp = 0; qp < r->base.nqps; qp++)
            if (repost_if_owed(r, rail, qp) < 0)
                return;
}
