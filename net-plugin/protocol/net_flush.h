/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect flush (iflush): after data lands in GPU memory through a NIC, a read of that memory
 * through the same NIC forces the NIC's earlier PCIe writes to become visible to the GPU. A receive
 * comm whose device needs this (rail_gdr_flush_needed) gets, per rail, a loopback RC QP connected
 * to itself; iflush posts a 1-byte RDMA READ from the last non-empty received buffer (with its rkey
 * on that rail) into a small host buffer on every such rail, and the request completes when every
 * read has completed. */
#ifndef NCCL_RAIL_NET_FLUSH_H
#define NCCL_RAIL_NET_FLUSH_H

#include <stdbool.h>
#include <stddef.h>

struct rail_recv_comm;

/* At accept: creates the flush QPs of r when a rail needs them (r->flush stays NULL otherwise).
 * 0, or -errno with the reason in err. */
int rail_flush_setup(struct rail_recv_comm *r, char *err, size_t errlen);
/* At close (and on failed accepts): frees r->flush. Safe when it is NULL. */
void rail_flush_destroy(struct rail_recv_comm *r);

/* The net API's iflush. Always writes *request: NULL when there is nothing to flush (no flush QP,
 * no non-empty buffer, host memory), else a request for test(). */
int rail_flush_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                      void **request);
/* Polls the flush completions; *done = 1 and the request is released once every read completed.
 * sizes (NULL from NCCL for flushes) gets 0 in its first entry when given. */
int rail_flush_test(void *request, int *done, int *sizes);

#endif
