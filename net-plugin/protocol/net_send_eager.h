/* SPDX-License-Identifier: Apache-2.0 */
/* Eager messages of a send comm (net_send_eager.c). */
#ifndef NCCL_RAIL_NET_SEND_EAGER_H
#define NCCL_RAIL_NET_SEND_EAGER_H

#include <stdbool.h>

#include "protocol/net_comm.h"

/* Posts eager request q (data, size, bounce slot and message number set) as message (tag,
 * index) on a rail that is up, after writing what it sends into the comm's local region: a
 * flagged image, or the header in front of the payload. 0 posted, 1 not now (no rail up or no
 * room), -errno. */
int rail_send_post_eager(struct rail_send_comm *s, struct rail_send_req *q, int32_t tag,
                         uint32_t index);
/* The same on a given rail (a re-send after a rail failure): 0, 1 no room, -errno. */
int rail_send_post_eager_on(struct rail_send_comm *s, struct rail_send_req *q, int rail);
/* An eager message whose write failed with its rail got there anyway when the receiver has
 * already returned its bounce slot: then it is settled and true. */
bool rail_send_eager_returned(struct rail_send_comm *s, struct rail_send_req *q);

#endif
