/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-band control frames of a comm with failover (net_ctl.c): DOWN and the rejoin frames,
 * queued and sent without blocking on the comm's TCP socket, and read back one at a time. What a
 * frame means is net_health.c's business; this module only carries them. */
#ifndef NCCL_RAIL_NET_CTL_H
#define NCCL_RAIL_NET_CTL_H

#include <stddef.h>

#include "protocol/net_comm.h"

/* The comm's control channel (c->ctl), when it has failover: 0 or -ENOMEM. */
int rail_ctl_init(struct rail_comm *c);
void rail_ctl_free(struct rail_comm *c);
/* Sends what is queued, as far as the socket takes it now. */
void rail_ctl_flush(struct rail_comm *c);
/* Queues (and tries to send) a frame of `kind` about rail, describing this end's QPs of it. */
void rail_ctl_send(struct rail_comm *c, int kind, int rail, const struct rail_meta_rail *desc);
/* The next frame from the peer: 1 (in *m), 0 none yet (or the channel is off: a closed socket is
 * the peer-health check's business), -errno with the reason in err (the comm must fail). */
int rail_ctl_next(struct rail_comm *c, struct rail_meta *m, char *err, size_t errlen);

#endif
