/* SPDX-License-Identifier: Apache-2.0 */
/* A comm's telemetry (rail_stats.h): its registration (net_telemetry.c) and the data-path hooks,
 * a few relaxed atomic adds each; a comm without telemetry (NULL) costs a branch. */
#ifndef NCCL_RAIL_NET_TELEMETRY_H
#define NCCL_RAIL_NET_TELEMETRY_H

#include "protocol/net_comm.h"
#include "telemetry/rail_stats.h"

/* Registers the comm with the telemetry (once its peer name is known). */
void rail_comm_stats_open(struct rail_comm *c);

/* A whole message, counted on the rail of its first piece. */
static inline void rail_tel_msg(struct rail_comm *c, int rail)
{
    rail_stats_add_msg(c->stats, rail);
}
/* A piece of data posted on rail (re-sent pieces count again). */
static inline void rail_tel_stripe(struct rail_comm *c, int rail, uint64_t bytes)
{
    rail_stats_add_stripe(c->stats, rail);
    rail_stats_add_bytes(c->stats, rail, bytes);
}
/* A whole message posted as one piece on rail: rail_tel_msg and rail_tel_stripe in one. */
static inline void rail_tel_whole(struct rail_comm *c, int rail, uint64_t bytes)
{
    rail_stats_add_whole(c->stats, rail, bytes);
}
static inline void rail_tel_striped_msg(struct rail_comm *c)
{
    rail_stats_add_striped_msg(c->stats);
}
/* A striped message's two pieces, rail 0's and rail 1's, both posted: rail_tel_striped_msg and
 * rail_tel_stripe of each in one. */
static inline void rail_tel_two(struct rail_comm *c, uint64_t b0, uint64_t b1)
{
    rail_stats_add_two(c->stats, b0, b1);
}
static inline void rail_tel_error(struct rail_comm *c, int rail)
{
    rail_stats_add_error(c->stats, rail);
}
static inline void rail_tel_failover(struct rail_comm *c, int rail)
{
    rail_stats_add_failover(c->stats, rail);
}
static inline void rail_tel_rejoin(struct rail_comm *c, int rail)
{
    rail_stats_add_rejoin(c->stats, rail);
}

#endif
