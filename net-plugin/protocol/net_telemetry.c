/* SPDX-License-Identifier: Apache-2.0 */
/* A comm's registration with the telemetry (telemetry/rail_stats.c); the hooks are inline
 * (net_telemetry.h). */
#include "protocol/net_telemetry.h"

void rail_comm_stats_open(struct rail_comm *c)
{
    struct rail_stripe *sched = c->ops->sched(c);
    c->stats = rail_stats_open((enum rail_stats_dir)c->ops->stats_dir,
                               c->group ? c->group->name : "?", c->peer, c->nrails);
    for (int r = 0; r < c->nrails; r++)
        rail_stats_set_rail_dev(c->stats, r, c->link[r].dev->name);
    if (sched)
        rail_stats_sync_stripe(c->stats, sched);
}
