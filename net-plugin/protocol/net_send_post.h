/* SPDX-License-Identifier: Apache-2.0 */
/* Posting and re-sending of rendezvous messages of a send comm (net_send_post.c; eager messages:
 * net_send_eager.h). */
#ifndef NCCL_RAIL_NET_SEND_POST_H
#define NCCL_RAIL_NET_SEND_POST_H

#include "protocol/net_comm.h"

/* 0 posted, 1 no room or no rail up yet (nothing posted: NCCL calls again), -errno. */
int rail_send_post_rdv(struct rail_send_comm *s, struct rail_send_req *q);
/* Work that a failed rail lost goes again (after each poll). */
void rail_send_retry(struct rail_send_comm *s);
/* A completion of the send comm's CQ of rail. */
void rail_send_on_wc(struct rail_send_comm *s, int rail, const struct ibv_wc *wc);
/* The same through the general path alone (what rail_send_on_wc's fast path must match). */
void rail_send_on_wc_general(struct rail_send_comm *s, int rail, const struct ibv_wc *wc);

#endif
