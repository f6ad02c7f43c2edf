/* SPDX-License-Identifier: Apache-2.0 */
/* The receiving end of connection setup: listen, accept, close of a listen comm. */
#ifndef NCCL_RAIL_NET_ACCEPT_H
#define NCCL_RAIL_NET_ACCEPT_H

struct rail_net_ctx;

int rail_net_listen(const struct rail_net_ctx *ctx, int dev, void *handle, void **listen_comm);
/* Non-blocking: 0 with *recv_comm NULL means "call again". */
int rail_net_accept(void *listen_comm, void **recv_comm);
int rail_net_close_listen(void *listen_comm);

#endif
