/* SPDX-License-Identifier: Apache-2.0 */
/* The connections a listen socket takes before one proves to be the peer the handle was given
 * to. Anything can connect to the listen port: a port scanner, a health check, a peer holding a
 * stale handle. Each TCP connection is a candidate until it delivers a sender's metadata frame
 * that decodes and carries the listener's nonce; a candidate that closes early, sends bytes that
 * are not such a frame, names another listener's nonce, or stays silent past
 * RAIL_ACCEPT_STRAY_NS is dropped with one INFO line, and accept keeps waiting. Candidates are
 * read side by side, so a silent one never delays the real peer. */
#ifndef NCCL_RAIL_NET_ACCEPT_POOL_H
#define NCCL_RAIL_NET_ACCEPT_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "transport/net_oob.h"

/* A candidate must deliver its metadata frame within this (the real peer sends it as soon as its
 * TCP connection is up). */
#define RAIL_ACCEPT_STRAY_NS (10ull * 1000000000ull)
/* Candidates read at once; a new connection beyond this replaces the oldest. */
#define RAIL_ACCEPT_POOL_MAX 16

struct rail_accept_pool;

struct rail_accept_pool *rail_accept_pool_new(void);
void rail_accept_pool_free(struct rail_accept_pool *p);
/* Connections dropped so far (strays). */
unsigned rail_accept_pool_dropped(const struct rail_accept_pool *p);

/* One step: reads from every candidate, then takes the connections waiting on lfd (each read
 * as it is taken). 1: a candidate delivered a valid frame for `nonce`; *fd, its address (peer,
 * "a.b.c.d:port") and *rx (the whole frame) are handed over and the candidate leaves the pool;
 * connections still in the backlog wait for the next step. 0: none yet (call again). -errno:
 * the listen socket itself failed (err says why). `where` names the device in the INFO lines.
 * now_ns is the clock (tests pass their own). */
int rail_accept_pool_step(struct rail_accept_pool *p, int lfd, uint64_t nonce, const char *where,
                          uint64_t now_ns, int *fd, char *peer, size_t peerlen,
                          struct rail_oob_rx *rx, char *err, size_t errlen);

#endif
