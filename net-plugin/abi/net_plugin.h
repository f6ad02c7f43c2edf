/* SPDX-License-Identifier: Apache-2.0 */
/* The net plugin's version-independent API (v11 semantics), implemented by the net_*.c files
 * and wrapped by the versioned tables in net_exports.c. All return 0 or a negative errno. */
#ifndef NCCL_RAIL_NET_PLUGIN_H
#define NCCL_RAIL_NET_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "nccl/nccl_common.h"
#include "protocol/net_accept.h"
#include "protocol/net_conn.h"
#include "protocol/net_data.h"
#include "protocol/net_recv.h"
#include "protocol/net_reg.h"
#include "protocol/net_send.h"

#define RAIL_NET_NAME "RAIL"

/* Version-independent device properties. */
struct rail_net_props {
    char *name;
    char *pci_path;
    uint64_t guid;
    int ptr_support;
    int reg_is_global;
    int force_flush;
    int speed;
    int port;
    float latency;
    int max_comms;
    int max_recvs;
    size_t max_p2p_bytes;
    size_t max_coll_bytes;
    int dev;               /* this device's index (vProps = {1, [dev]}) */
    int rail_id, plane_id; /* net v12 railId/planeId (-1: unknown) */
};

/* Per-communicator init: discovers devices on first use (declining with an INFO line when there
 * are none) and returns a context; traffic_class -1 = undefined. */
int rail_net_init(void **ctx, uint64_t comm_id, int traffic_class, ncclDebugLogger_t logger);
/* Tolerates NULL and contexts of failed inits. */
int rail_net_finalize(void *ctx);
int rail_net_devices(int *ndev);
int rail_net_get_props(int dev, struct rail_net_props *p);
/* Context used by the pre-v11 tables (init once per process). */
const struct rail_net_ctx *rail_net_default_ctx(void);

#endif
