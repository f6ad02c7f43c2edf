/* Data-path hooks into the per-connection telemetry (rail_stats.h); each costs a few adds. */
#ifndef NCCL_RAIL_NET_TELEMETRY_H
#define NCCL_RAIL_NET_TELEMETRY_H

#include "net_comm.h"

static inline void rail_tel_msg(struct rail_comm *c, int rail, uint64_t bytes)
{
    (void)c;
    (void)rail;
    (void)bytes;
}
static inline void rail_tel_stripe(struct rail_comm *c, int rail, uint64_t bytes)
{
    (void)c;
    (void)rail;
    (void)bytes;
}
static inline void rail_tel_error(struct rail_comm *c, int rail)
{
    (void)c;
    (void)rail;
}
static inline void rail_tel_failover(struct rail_comm *c, int rail)
{
    (void)c;
    (void)rail;
}
static inline void rail_tel_rejoin(struct rail_comm *c, int rail)
{
    (void)c;
    (void)rail;
}

#endif
