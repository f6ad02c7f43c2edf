/* SPDX-License-Identifier: Apache-2.0 */
/* Completion polling shared by both comm kinds, and the net API's test() (net_data.c; isend:
 * net_send.h, irecv: net_recv.h, iflush: net_flush.h). */
#ifndef NCCL_RAIL_NET_DATA_H
#define NCCL_RAIL_NET_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/net_comm.h"
#include "transport/net_verbs.h"

/* Completion polling for either comm kind: what arrives without a completion (ops->poll), the
 * CQs, re-sends, and the listed send comms of other threads. */
int rail_comm_progress(struct rail_comm *c);
/* The pieces of the progress for a caller that knows its comm's kind and rails (a one-rail send
 * comm's test, net_send.c): one batch of rail r's completions into wc (RAIL_POLL_BATCH entries),
 * 0 when the poll failed (the comm fails); whether a completion names a QP of c on rail r (else
 * the comm fails: a foreign work request id); the listed send comms of other threads. In this
 * order, with the kind's on_wc and retry, they are rail_comm_progress. */
static inline int rail_comm_poll_batch(struct rail_comm *c, int r, struct ibv_wc *wc);
static inline bool rail_comm_wc_mine(struct rail_comm *c, int r, const struct ibv_wc *wc);
void rail_comm_help_others(const struct rail_comm *self);
/* Every completion of rail r's CQ, batch by batch, handed to on_wc (the kind's handler; always
 * inline, so a handler known at the call is called directly). The one loop of every poll. */
typedef void (*rail_on_wc_fn)(struct rail_comm *c, int rail, const struct ibv_wc *wc);
static inline void rail_comm_drain(struct rail_comm *c, int r, rail_on_wc_fn on_wc);
/* A two-phase message needs its sender's completions polled before its size record goes out.
 * NCCL keeps testing its sends, but a caller may wait on a receive without touching the send
 * comm: such a send comm is marked helped (it is listed from its first two-phase message until
 * closed), and every comm's progress (any thread) also polls the helped ones it can enter whose
 * owner has not entered them since the last look (an owner that calls polls its own). The owner
 * brackets its own calls with enter/leave. Only multi-rail send
 * comms are ever listed (one-rail messages are never two-phase), so one-rail comms skip
 * enter/leave. */
void rail_send_enter(struct rail_send_comm *s);
void rail_send_leave(struct rail_send_comm *s);
void rail_send_help_list(struct rail_send_comm *s);
void rail_send_help_unlist(struct rail_send_comm *s);

/* sizes: NULL, or one int per receive entry (one for a send). */
int rail_net_test(void *request, int *done, int *sizes);

/* Out of line: the failures (net_data.c). */
void rail_comm_poll_failed(struct rail_comm *c, int r);
void rail_comm_wc_foreign(struct rail_comm *c, const struct ibv_wc *wc);

static inline int rail_comm_poll_batch(struct rail_comm *c, int r, struct ibv_wc *wc)
{
    int n = rail_verbs_poll_cq(c->link[r].cq, RAIL_POLL_BATCH, wc);
    if (n >= 0)
        return n;
    rail_comm_poll_failed(c, r);
    return 0;
}

static inline bool rail_comm_wc_mine(struct rail_comm *c, int r, const struct ibv_wc *wc)
{
    if (rail_wrid_qp(wc->wr_id) < c->nqps && rail_wrid_rail(wc->wr_id) == r)
        return true;
    rail_comm_wc_foreign(c, wc);
    return false;
}

static inline __attribute__((always_inline)) void rail_comm_drain(struct rail_comm *c, int r,
                                                                  rail_on_wc_fn on_wc)
{
    struct ibv_wc wc[RAIL_POLL_BATCH];
    int n;
    do {
        n = rail_comm_poll_batch(c, r, wc);
        for (int i = 0; i < n; i++)
            if (rail_comm_wc_mine(c, r, &wc[i]))
                on_wc(c, r, &wc[i]);
    } while (n == RAIL_POLL_BATCH);
}

#endif
