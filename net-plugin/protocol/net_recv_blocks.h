/* SPDX-License-Identifier: Apache-2.0 */
/* A receive comm's request free list, and request blocks (net_recv_blocks.c). */
#ifndef NCCL_RAIL_NET_RECV_BLOCKS_H
#define NCCL_RAIL_NET_RECV_BLOCKS_H

#include <stddef.h>

#include "protocol/net_comm.h"

/* Every request free (lowest index on top), no receive counted per tag. */
void rail_recv_state_init(struct rail_recv_comm *r);
/* Block b of r's requests with its registered CTS staging region (every rail): 0 or -errno (err
 * says why). */
int rail_recv_block_alloc(struct rail_recv_comm *r, int b, char *err, size_t errlen);
/* Every request block of r, deregistered and freed. */
void rail_recv_blocks_free(struct rail_recv_comm *r);

#endif
