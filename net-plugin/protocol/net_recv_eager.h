/* SPDX-License-Identifier: Apache-2.0 */
/* Eager arrivals of a receive comm (net_recv_eager.c). */
#ifndef NCCL_RAIL_NET_RECV_EAGER_H
#define NCCL_RAIL_NET_RECV_EAGER_H

#include "protocol/net_comm.h"

/* An eager arrival in bounce slot b. */
void rail_recv_on_eager(struct rail_recv_comm *r, unsigned b);
/* The flagged eager images that landed since the last call; with `until`, only up to the one
 * that completes that receive (the rest are found by the next call: the cursor stays there). */
void rail_recv_poll_images(struct rail_recv_comm *r, const struct rail_recv_req *until);
/* Entry i of q against what arrived before it was posted. */
void rail_recv_match_unexpected(struct rail_recv_comm *r, struct rail_recv_req *q, int i);
/* The batched credit write (also when the sender waits for it). */
void rail_recv_send_credit(struct rail_recv_comm *r);

#endif
