/* SPDX-License-Identifier: Apache-2.0 */
/* A send comm's request free list, and request blocks (net_send_blocks.c). */
#ifndef NCCL_RAIL_NET_SEND_BLOCKS_H
#define NCCL_RAIL_NET_SEND_BLOCKS_H

#include <stddef.h>

#include "protocol/net_comm.h"

/* Every request free (lowest index on top), no message counted per tag. */
void rail_send_state_init(struct rail_send_comm *s);
/* Block b of s's requests with its registered source region: 0 or -errno (err says why). */
int rail_send_block_alloc(struct rail_send_comm *s, int b, char *err, size_t errlen);
/* Every request block of s, deregistered and freed. */
void rail_send_blocks_free(struct rail_send_comm *s);
/* Request q back on the free list (no longer in flight). */
static inline void rail_send_req_free(struct rail_send_comm *s, struct rail_send_req *q)
{
    q->h.ops = NULL;
    s->free_list[s->nfree++] = q->idx;
}
/* A held request (reported done to NCCL, its size record still out): its record's completion
 * came back, it goes back on the free list. */
static inline void rail_send_req_unhold(struct rail_send_comm *s, struct rail_send_req *q)
{
    q->held = false;
    s->nheld--;
    rail_send_req_free(s, q);
}

#endif
