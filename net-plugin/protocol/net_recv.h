/* SPDX-License-Identifier: Apache-2.0 */
/* The receiving side (net_recv.c): the receive comm's kind's table and irecv (its constructor:
 * net_recv_comm.h). */
#ifndef NCCL_RAIL_NET_RECV_H
#define NCCL_RAIL_NET_RECV_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/net_comm.h"
#include "protocol/net_recv_repost.h"
#include "transport/net_verbs.h"

extern const struct rail_comm_ops rail_recv_comm_ops;

/* The net API's irecv. *request is always written: a request, or NULL for "cannot post now, call
 * again". */
int rail_net_irecv(void *recv_comm, int n, void **data, const size_t *sizes, const int *tags,
                   void **mhandles, void **request);

/* The same through the general path alone (no lean path): test_recv_lean compares the two. */
int rail_recv_irecv_general(void *recv_comm, int n, void **data, const size_t *sizes,
                            const int *tags, void **mhandles, void **request);

/* True when irecv may leave the progress (the images and the CQs) to the next test, found without a
 * call: no send WR of this comm out (the CTS, credit and answer writes: a completion of one may
 * gate the next credit, room on a send queue or a failover re-send, and a caller that spins on
 * isend after irecv polls nothing else; bench_scale_plugin_smoke hangs without this), and no work
 * for the retry hook (a CTS to write again, a query to answer, images to look at again). Then
 * the CQs hold only the peer's writes and the images only messages for receives that their own
 * tests complete; an irecv that cannot post polls anyway. sq_wrs is every QP's sq_out summed
 * (kept where they change: a rail's QPs are renewed only once drained, all at 0); test_recv_fast
 * compares the answer with the QPs' and the retry hook's state. */
static inline bool rail_recv_irecv_quiet(const struct rail_recv_comm *r)
{
    return !(r->sq_wrs | r->nretry | r->nquery | (int)r->repoll);
}

/* A completion of the receive comm through the handler of a one-rail comm's receive test (its
 * in-place paths: a CTS write, a direct rendezvous write) and through the general handler alone:
 * the same state after either (test_recv_fast on_data). */
void rail_recv_on_wc_one_rail(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc);
void rail_recv_on_wc_general(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc);
/* The handler of the multi-rail progress (recv_progress_rails: a size record taken in place,
 * rail_recv_record_lean in net_recv_wc.h): the same state as the general one (test_recv_record). */
void rail_recv_on_wc_rails(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc);

/* What irecv and a receive test that is not done call: rail_recv_repost_walk, with its usual case
 * in the caller's frame -- one QP took every completion since the last call (owes_at), owes the
 * one receive WR a rendezvous message consumed, and its rail is up -- as one post of a WR built
 * here (it takes no buffer: what consumes it is a write with immediate), the peer's one
 * ibv_post_recv per receive. The same post, counts and failure handling as the walk's
 * (test_recv_fast repost_lean compares the two over many states). */
static inline __attribute__((always_inline)) void rail_recv_repost_owed(struct rail_recv_comm *r)
{
    if (!r->owes)
        return;
    int at = r->owes_at;
    if (at >= 0) {
        int rail = at / RAIL_MAX_QPS, qp = at % RAIL_MAX_QPS;
        struct rail_link *l = &r->base.link[rail];
        if (l->qps && l->qps[qp].rq_owed == 1 && l->rj.up) {
            struct rail_qp *p = &l->qps[qp];
            struct ibv_recv_wr wr = {.wr_id = rail_wrid(RAIL_WR_RECV, rail, qp, 0)};
            r->owes = false;
            int rc = rail_verbs_post_recv(p->qp, &wr);
            if (rc < 0) {
                (void)rail_recv_repost_failed(r, rail, rc);
                return;
            }
            p->rq_posted++;
            p->rq_owed = 0;
            return;
        }
    }
    rail_recv_repost_walk(r);
}

#endif
