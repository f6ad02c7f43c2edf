/* SPDX-License-Identifier: Apache-2.0 */
/* Work requests of a send comm: posting one (a refused post fails its rail or the comm), the
 * RDMA WRITE template, send-queue room, and which QP carries records and eager writes. */
#include "protocol/net_send_wr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protocol/net_health.h"
#include "transport/net_verbs.h"

int rail_send_sq_room(const struct rail_link *l, int qp)
{
    return l->qps[qp].sq_max - l->qps[qp].sq_out;
}

int rail_send_post_failed(struct rail_send_comm *s, int rail, int qp, int rc)
{
    /* A QP already moved to the error state refuses posts on some providers: that is the rail's
     * failure, not the comm's. */
    struct rail_link *l = &s->base.link[rail];
    char why[160];
    snprintf(why, sizeof(why), "ibv_post_send on QP %#x failed: %s", l->qps[qp].qp->qp_num,
             strerror(-rc));
    if (s->base.failover && rail_link_fail(&s->base, rail, why))
        return 1;
    rail_comm_fail(&s->base, rc, "%s: %s", l->dev->name, why);
    return rc;
}

/* Where a size record, query or eager write goes: the rail's control QP, or without one the
 * next data QP. */
int rail_send_control_qp(struct rail_send_comm *s, struct rail_link *l)
{
    return s->ctl_qp >= 0 ? s->ctl_qp : (int)(l->rr++ % (unsigned)s->ndata);
}

int rail_send_req_index(const struct rail_send_comm *s, const struct rail_send_req *q)
{
    (void)s;
    return q->idx;
}
