/* SPDX-License-Identifier: Apache-2.0 */
/* Structures only, private to connection setup (net_conn.c: connect and close, net_accept.c: listen
 * and accept): the progress of one handshake, kept between the non-blocking calls. */
#ifndef NCCL_RAIL_NET_CONN_STATE_H
#define NCCL_RAIL_NET_CONN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/net_comm.h"
#include "transport/net_oob.h"
#include "wire/net_wire.h"

enum { ST_CONNECTING = 1, ST_SEND_META, ST_RECV_META, ST_SEND_READY, ST_RECV_READY };

struct rail_conn_state {
    uint64_t cookie;
    struct rail_conn_state *next;
    int stage;
    int fd;
    char peer[64]; /* "a.b.c.d:port" of the other end */
    int sl, tc;
    uint64_t deadline_ns;   /* the peer must finish the handshake by then (both sides) */
    struct rail_comm *comm; /* send comm (connect) or receive comm (accept, after META_S) */
    struct rail_oob_tx tx;
    struct rail_oob_rx rx;
    struct rail_meta meta;
    struct rail_wire_ece ece_offered[RAIL_MAX_RAILS]; /* connect: what META_S offered */
};

#endif
