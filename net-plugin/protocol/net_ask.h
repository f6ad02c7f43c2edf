/* SPDX-License-Identifier: Apache-2.0 */
/* The receiving side's answers to the sender's queries about one-piece messages, and its
 * writes from the staging region (net_ask.c). */
#ifndef NCCL_RAIL_NET_ASK_H
#define NCCL_RAIL_NET_ASK_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/net_comm.h"

/* A query about slot/entry, whose message went on `rail`. */
void rail_recv_on_ask(struct rail_recv_comm *r, unsigned slot, unsigned entry, unsigned rail);
/* Answers the queries whose rail is drained (called after each poll while any is open). */
void rail_recv_answer(struct rail_recv_comm *r);
/* A signalled RDMA WRITE of len bytes from the staging region (mr[2]) to the peer's FIFO region
 * at off, on rail/qp (room checked by the caller): 0, or -errno after failing the rail (or the
 * comm, when it cannot fail over); what names it in the log line ("the eager credit"). */
int rail_recv_write(struct rail_recv_comm *r, int rail, int qp, uint64_t wrid, void *src,
                    size_t len, uint64_t off, const char *what);

#endif
