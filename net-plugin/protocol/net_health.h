/* SPDX-License-Identifier: Apache-2.0 */
/* A comm's failures and the health of its rails (net_health.c): the sticky comm error, completion
 * errors, asynchronous events, the peer's socket, and rail failure and rejoin. */
#ifndef NCCL_RAIL_NET_HEALTH_H
#define NCCL_RAIL_NET_HEALTH_H

#include <stdbool.h>

#include "protocol/net_comm.h"

void rail_comm_fail(struct rail_comm *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void rail_wc_error(struct rail_comm *c, int rail, const struct ibv_wc *wc);
/* Statuses that mean "this path is broken" (failover material), as opposed to a protocol or
 * access error that would fail on every rail. */
bool rail_wc_rail_failure(enum ibv_wc_status st);
/* One tick of the comm's health check, rate-limited: async events of the comm's devices, port
 * state changes and control frames from the peer (rejoins), and the peer's TCP connection
 * (want_peer). test() ticks it for each send or receive still in flight (net_data.c), and so
 * does an isend or irecv that posted nothing (its caller calls again, polling like a test): a dead
 * peer gives an error in bounded time either way. A failure it finds shows in rail_comm_error. */
static inline void rail_health_tick(struct rail_comm *c, bool want_peer);
/* The comm's sticky error (WARNs once per comm when first returned). */
static inline int rail_comm_error(struct rail_comm *c);

/* Ticks between two reads of the clock (and a comm's first): a busy poll loop calls test() back
 * to back, and even the coarse clock costs more than the rest of an idle test() under emulation.
 * The ticks in between return inline, without a call. */
#define RAIL_HEALTH_CALLS 16
/* The tick's work when due (the clock read and what follows). */
void rail_health_tick_due(struct rail_comm *c, bool want_peer);
/* The first return of err to NCCL: its one WARN. Returns err. */
int rail_comm_error_warn(struct rail_comm *c, int err);

/* Counts one tick: true when its work is due (the RAIL_HEALTH_CALLS-th, or the comm's first).
 * Only the comm's own calls count (never another thread's help pass), so a send comm counts
 * without entering; the due work runs entered (net_data.c). */
static inline bool rail_health_due(struct rail_comm *c)
{
    return ++c->health_calls >= RAIL_HEALTH_CALLS || !c->coarse_ns;
}

static inline void rail_health_tick(struct rail_comm *c, bool want_peer)
{
    if (rail_health_due(c))
        rail_health_tick_due(c, want_peer);
}

static inline int rail_comm_error(struct rail_comm *c)
{
    int err = atomic_load(&c->error);
    return err && !c->error_warned ? rail_comm_error_warn(c, err) : err;
}

/* Rail `rail` of c failed (why: one line): it stops carrying new work, its QPs are moved to the
 * error state so every WR in flight on it completes (flushed) and is re-sent elsewhere, the peer
 * is told. One WARN per failure. Without failover, or when it was the last rail up, the comm
 * fails instead. Returns true when the comm can go on. */
bool rail_link_fail(struct rail_comm *c, int rail, const char *why);
/* Every WR of the rail's QPs has completed (flushed ones included). */
bool rail_link_drained(const struct rail_comm *c, int rail);
/* First rail that is up, starting the search at `from` (round-robin); -1 when none. */
int rail_pick_up(struct rail_comm *c, unsigned from);

#endif
