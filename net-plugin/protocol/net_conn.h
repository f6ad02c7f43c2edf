/* SPDX-License-Identifier: Apache-2.0 */
/* listen / connect / accept / close, and the per-communicator context of the v11 API. */
#ifndef NCCL_RAIL_NET_CONN_H
#define NCCL_RAIL_NET_CONN_H

#include <stdint.h>

#define RAIL_CTX_MAGIC 0x52435458u

/* What init() hands NCCL: per-communicator settings listen/connect use. */
struct rail_net_ctx {
    uint32_t magic;
    uint64_t comm_id;
    int traffic_class; /* NCCL config trafficClass, -1 when undefined */
};

int rail_net_listen(const struct rail_net_ctx *ctx, int dev, void *handle, void **listen_comm);
/* Non-blocking: 0 with *send_comm NULL means "call again with the same handle". */
int rail_net_connect(const struct rail_net_ctx *ctx, int dev, void *handle, void **send_comm);
/* Non-blocking: 0 with *recv_comm NULL means "call again". */
int rail_net_accept(void *listen_comm, void **recv_comm);
/* Never block; requests still in flight are abandoned. */
int rail_net_close_send(void *send_comm);
int rail_net_close_recv(void *recv_comm);
int rail_net_close_listen(void *listen_comm);

#endif
