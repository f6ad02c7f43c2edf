/* SPDX-License-Identifier: Apache-2.0 */
/* The sending side (net_send.c): the send comm's constructor, its kind's table, and isend. */
#ifndef NCCL_RAIL_NET_SEND_H
#define NCCL_RAIL_NET_SEND_H

#include <stddef.h>

#include "protocol/net_comm.h"

extern const struct rail_comm_ops rail_send_comm_ops;

/* A send comm over every rail of g with nqps data QPs each (plus one control QP per rail when g
 * has several rails: base.nqps counts it) and its FIFO/credit region (mr[0], remotely writable)
 * of cts_bytes entries (RAIL_CTS_BYTES, or RAIL_CTS_COMPACT_BYTES when the listener takes wire
 * version 6). The flagged-image sources (mr[1]) come with the receiver's answer:
 * rail_send_images_alloc. */
int rail_send_comm_create(struct rail_netdev *g, int nqps, unsigned cts_bytes,
                          struct rail_send_comm **out, char *err, size_t errlen);
/* Once the receiver's bounce slots and the comm's poll_max are known (handshake): one image source
 * per bounce slot (mr[1]) when messages may go as flagged images, none otherwise. */
int rail_send_images_alloc(struct rail_send_comm *s, char *err, size_t errlen);
/* The net API's isend. *request is always written: a request, or NULL for "cannot post now, call
 * again". */
int rail_net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                   void **request);

/* Entry 0 of FIFO slot sequence seq, taken by rail_cts_fifo_next as *cts, goes to the message
 * (data, size, tag, m): the one-rail direct path (one WRITE WITH IMM) or the dual-rail striped one
 * (two plain writes) when its condition holds, else the general one. 0 or -errno; *request NULL
 * when nothing could be posted yet. */
int rail_send_taken(struct rail_send_comm *s, uint64_t seq, const struct rail_cts *cts, void *data,
                    size_t size, int tag, const struct rail_mr *m, void **request);
/* The same through the general path alone (what the direct path must match). */
int rail_send_taken_general(struct rail_send_comm *s, uint64_t seq, const struct rail_cts *cts,
                            void *data, size_t size, int tag, const struct rail_mr *m,
                            void **request);
/* The comm's direct_max from its rails and settings (0: no direct path). */
uint64_t rail_send_direct_max(const struct rail_send_comm *s);
/* The comm's striped_max (the dual-rail lean path's largest message; 0: no such path). */
uint64_t rail_send_striped_max(const struct rail_send_comm *s);

#endif
