/* SPDX-License-Identifier: Apache-2.0 */
/* The data-path calls of the net API (isend in net_send.c, irecv in net_recv.c, test in net_data.c,
 * iflush in net_flush.c). */
#ifndef NCCL_RAIL_NET_DATA_H
#define NCCL_RAIL_NET_DATA_H

#include <stddef.h>

/* *request is always written: a request, or NULL for "cannot post now, call again". */
int rail_net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
                   void **request);
int rail_net_irecv(void *recv_comm, int n, void **data, const size_t *sizes, const int *tags,
                   void **mhandles, void **request);
/* sizes: NULL, or one int per receive entry (one for a send). */
int rail_net_test(void *request, int *done, int *sizes);

#endif
