/* SPDX-License-Identifier: Apache-2.0 */
/* Work-request sizing of a connection's queues (net_qsize.h). */
#include "protocol/net_qsize.h"

#include <errno.h>

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

int rail_qsize_ctl_send(int send_depth)
{
    return min_int(send_depth, RAIL_EAGER_SLOTS + RAIL_CTL_RECORDS);
}

int rail_qsize_recv_rq(int depth)
{
    return (depth > 0 && depth < RAIL_RECV_RQ ? depth : RAIL_RECV_RQ) + RAIL_REPOST_BATCH;
}

/* One QP's queues within the device's limits. */
static void fit_qp(int *sq, int *rq, int max_qp_wr, int per_qp)
{
    if (max_qp_wr > 0) {
        *sq = min_int(*sq, max_qp_wr);
        *rq = min_int(*rq, max_qp_wr);
    }
    if (per_qp > 0) {
        *rq = min_int(*rq, per_qp / 2 > 1 ? per_qp / 2 : 1);
        *sq = min_int(*sq, per_qp - *rq);
    }
}

static long total(const struct rail_qshape *s)
{
    long data = (long)(s->nqps - (s->has_ctl ? 1 : 0)) * (s->sq + s->rq);
    return data + (s->has_ctl ? s->ctl_sq + s->ctl_rq : 0);
}

int rail_qshape_fit(struct rail_qshape *s, int max_qp_wr, int max_cqe)
{
    if (s->nqps < 1 || (s->has_ctl && s->nqps < 2))
        return -EINVAL;
    fit_qp(&s->sq, &s->rq, max_qp_wr, 0);
    if (s->has_ctl)
        fit_qp(&s->ctl_sq, &s->ctl_rq, max_qp_wr, 0);
    if (max_cqe > 0 && total(s) > max_cqe) {
        int per_qp = max_cqe / s->nqps;
        if (per_qp < 16)
            return -E2BIG;
        fit_qp(&s->sq, &s->rq, 0, per_qp);
        if (s->has_ctl)
            fit_qp(&s->ctl_sq, &s->ctl_rq, 0, per_qp);
    }
    return (int)total(s);
}
