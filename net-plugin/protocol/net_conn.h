/* SPDX-License-Identifier: Apache-2.0 */
/* connect and close (listen and accept: net_accept.h), and the per-communicator context of the
 * v11 API. */
#ifndef NCCL_RAIL_NET_CONN_H
#define NCCL_RAIL_NET_CONN_H

#include <stddef.h>
#include <stdint.h>

#define RAIL_CTX_MAGIC 0x52435458u

/* What init() hands NCCL: per-communicator settings listen/connect use. */
struct rail_net_ctx {
    uint32_t magic;
    uint64_t comm_id;
    int traffic_class; /* NCCL config trafficClass, -1 when undefined */
};

/* Non-blocking: 0 with *send_comm NULL means "call again with the same handle". */
int rail_net_connect(const struct rail_net_ctx *ctx, int dev, void *handle, void **send_comm);
/* Never block; requests still in flight are abandoned. */
int rail_net_close_send(void *send_comm);
int rail_net_close_recv(void *recv_comm);

/* Shared with net_accept.c (the handshake state: net_conn_state.h). */
struct rail_conn_state;
struct rail_comm;
/* Frees st with the comm it holds and closes its socket; NULL is a no-op. */
void rail_conn_state_free(struct rail_conn_state *st);
/* After the QPs are connected, both kinds: failover mode, control channel, the kind's own rail
 * setup. 0 or -errno (err says why). */
int rail_conn_setup_rails(struct rail_comm *c, char *err, size_t errlen);

#endif
