/* SPDX-License-Identifier: Apache-2.0 */
/* A receive comm's receive WRs posted again (net_recv_repost.c); the usual case, one WR, is
 * rail_recv_repost_owed's lean path (net_recv.h). */
#ifndef NCCL_RAIL_NET_RECV_REPOST_H
#define NCCL_RAIL_NET_RECV_REPOST_H

#include "protocol/net_comm.h"

/* The receive WRs owed (rq_owed: consumed by completions) posted again, every QP that owes: the
 * general walk (net_recv_repost.c). */
void rail_recv_repost_walk(struct rail_recv_comm *r);
/* A re-post on rail failed with rc: the rail fails (0: failover carries on; its QPs are made
 * again with full receive queues when it rejoins) or, when it cannot, the comm (rc). */
int rail_recv_repost_failed(struct rail_recv_comm *r, int rail, int rc);
/* The receive WRs owed on one QP posted again (net_recv_repost.c): 0, or what
 * rail_recv_repost_failed returns. */
int rail_recv_repost_qp(struct rail_recv_comm *r, int rail, int qp);

#endif
