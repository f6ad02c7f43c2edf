/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-rail telemetry: per-connection, per-rail counters that the data path bumps, a registry of
 * live connections (plus totals of the closed ones), an INFO summary line when a connection
 * closes, and an optional background writer that dumps periodic snapshots to a file
 * (NCCL_RAIL_STATS_FILE, docs/striping.md "Telemetry").
 *
 * Threading: every counter of a connection is written by ONE thread, the one that owns the
 * communicator (NCCL serialises the calls on a comm). A snapshot thread reads them concurrently.
 * Each field is an _Atomic integer updated with a relaxed load + relaxed store (no locked
 * read-modify-write: on x86-64 and AArch64 that is a plain load and store), so a reader never sees
 * a torn value and the fast path costs a few ns. Fields of one snapshot are not mutually
 * consistent (a counter may already include a message that another does not yet), which is fine
 * for telemetry. Two threads must never update the same connection.
 *
 * Snapshots (struct rail_stats_snapshot), formatters and the reader are declared in
 * rail_stats_format.h; taking a snapshot of the registry is declared here. */
#ifndef NCCL_RAIL_RAIL_STATS_H
#define NCCL_RAIL_RAIL_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry/rail_stats_types.h"
#include "rails/stripe.h"

/* Counters of one rail of a connection. Write through the helpers below only. */
struct rail_stats_rail {
    _Atomic uint64_t bytes;     /* payload bytes the rail carried (whole messages + chunks) */
    _Atomic uint64_t messages;  /* whole (unsplit) messages carried on this rail */
    _Atomic uint64_t stripes;   /* chunks of striped messages (including re-sent chunks) */
    _Atomic uint64_t errors;    /* completion errors */
    _Atomic uint64_t failovers; /* times the rail was marked down */
    _Atomic uint64_t rejoins;   /* times the rail came back up */
    _Atomic uint64_t rate;      /* measured rate, bytes per microsecond (= MB/s) */
    _Atomic uint32_t weight;    /* current stripe weight, 1/RAIL_STRIPE_WEIGHT_ONE */
    _Atomic uint32_t up;        /* 1 up, 0 down */
};

/* One connection (a send or a receive comm). Opaque apart from the counters; allocate with
 * rail_stats_open only. */
struct rail_stats_conn {
    struct rail_stats_rail rail[RAIL_STATS_MAX_RAILS];
    _Atomic uint64_t striped_messages; /* messages split over more than one chunk */
    int nrails;
    enum rail_stats_dir dir;
    uint64_t id;              /* process-unique, from 1 */
    uint64_t created_unix_ms; /* wall clock at open */
    char dev[RAIL_STATS_NAME_LEN];
    char peer[RAIL_STATS_PEER_LEN];
    char rail_dev[RAIL_STATS_MAX_RAILS][RAIL_STATS_NAME_LEN]; /* under the registry lock */
    struct rail_stats_conn *prev, *next;                      /* registry list */
};

/* ---- lifetime (any thread; takes the registry lock) ---- */

/* Register a connection of nrails rails (clamped to 1..RAIL_STATS_MAX_RAILS), all up, weights
 * equal, rates 0. dev and peer may be NULL (""); longer strings are truncated. The first open of
 * the process starts the snapshot writer when NCCL_RAIL_STATS_FILE is set. Returns NULL only when
 * out of memory (after a WARN); every helper below accepts NULL and does nothing, so the data path
 * needs no checks. */
struct rail_stats_conn *rail_stats_open(enum rail_stats_dir dir, const char *dev, const char *peer,
                                        int nrails);
/* Name the device (port) of one rail, e.g. "mlx5_1:1" (the connection's dev otherwise). */
void rail_stats_set_rail_dev(struct rail_stats_conn *c, int rail, const char *name);
/* Log the INFO summary line (NCCL_NET), fold the counters into the closed totals, unregister and
 * free. NULL is a no-op. */
void rail_stats_close(struct rail_stats_conn *c);

/* ---- fast path (the owning thread only; rail out of range is ignored) ---- */

static inline void rail_stats_bump_(_Atomic uint64_t *p, uint64_t d)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

static inline bool rail_stats_ok_(const struct rail_stats_conn *c, int rail)
{
    return c && rail >= 0 && rail < c->nrails;
}

/* Payload bytes carried by rail. */
static inline void rail_stats_add_bytes(struct rail_stats_conn *c, int rail, uint64_t bytes)
{
    if (rail_stats_ok_(c, rail))
        rail_stats_bump_(&c->rail[rail].bytes, bytes);
}
/* One whole (unsplit) message went over rail. */
static inline void rail_stats_add_msg(struct rail_stats_conn *c, int rail)
{
    if (rail_stats_ok_(c, rail))
        rail_stats_bump_(&c->rail[rail].messages, 1);
}
/* One chunk of a striped message (or a re-sent chunk) went over rail. */
static inline void rail_stats_add_stripe(struct rail_stats_conn *c, int rail)
{
    if (rail_stats_ok_(c, rail))
        rail_stats_bump_(&c->rail[rail].stripes, 1);
}
/* One whole message of bytes went over rail as one piece: add_msg, add_stripe and add_bytes in
 * one (one range check). */
static inline void rail_stats_add_whole(struct rail_stats_conn *c, int rail, uint64_t bytes)
{
    if (rail_stats_ok_(c, rail)) {
        struct rail_stats_rail *r = &c->rail[rail];
        rail_stats_bump_(&r->messages, 1);
        rail_stats_bump_(&r->stripes, 1);
        rail_stats_bump_(&r->bytes, bytes);
    }
}
/* One message was split into more than one chunk (counted once per message). */
static inline void rail_stats_add_striped_msg(struct rail_stats_conn *c)
{
    if (c)
        rail_stats_bump_(&c->striped_messages, 1);
}
/* A message striped in two chunks of b0 bytes on rail 0 and b1 on rail 1, both posted:
 * add_striped_msg, then add_stripe and add_bytes for each, in one (one check). */
static inline void rail_stats_add_two(struct rail_stats_conn *c, uint64_t b0, uint64_t b1)
{
    if (c && c->nrails >= 2) {
        rail_stats_bump_(&c->striped_messages, 1);
        rail_stats_bump_(&c->rail[0].stripes, 1);
        rail_stats_bump_(&c->rail[0].bytes, b0);
        rail_stats_bump_(&c->rail[1].stripes, 1);
        rail_stats_bump_(&c->rail[1].bytes, b1);
        return;
    }
    rail_stats_add_striped_msg(c);
    rail_stats_add_stripe(c, 0);
    rail_stats_add_bytes(c, 0, b0);
    rail_stats_add_stripe(c, 1);
    rail_stats_add_bytes(c, 1, b1);
}
/* A completion error on rail. */
static inline void rail_stats_add_error(struct rail_stats_conn *c, int rail)
{
    if (rail_stats_ok_(c, rail))
        rail_stats_bump_(&c->rail[rail].errors, 1);
}

/* Mark a rail up or down. up -> down counts a failover, down -> up a rejoin; setting the current
 * state again counts nothing (so the data path may call it on every port event). */
static inline void rail_stats_set_state(struct rail_stats_conn *c, int rail, bool up)
{
    if (!rail_stats_ok_(c, rail))
        return;
    struct rail_stats_rail *r = &c->rail[rail];
    uint32_t was = atomic_load_explicit(&r->up, memory_order_relaxed);
    if ((was != 0) == up)
        return;
    rail_stats_bump_(up ? &r->rejoins : &r->failovers, 1);
    atomic_store_explicit(&r->up, up ? 1u : 0u, memory_order_relaxed);
}
static inline void rail_stats_add_failover(struct rail_stats_conn *c, int rail)
{
    rail_stats_set_state(c, rail, false);
}
static inline void rail_stats_add_rejoin(struct rail_stats_conn *c, int rail)
{
    rail_stats_set_state(c, rail, true);
}

/* Account one schedule as posted: n == 1 is a whole message on its rail (messages + bytes), n > 1
 * a striped message (striped_messages once, stripes + bytes per chunk). n <= 0 does nothing. */
static inline void rail_stats_add_schedule(struct rail_stats_conn *c,
                                           const struct rail_stripe_chunk *chunks, int n)
{
    if (!c || !chunks || n <= 0)
        return;
    if (n == 1) {
        rail_stats_add_msg(c, chunks[0].rail);
        rail_stats_add_bytes(c, chunks[0].rail, chunks[0].length);
        return;
    }
    rail_stats_add_striped_msg(c);
    for (int i = 0; i < n; i++) {
        rail_stats_add_stripe(c, chunks[i].rail);
        rail_stats_add_bytes(c, chunks[i].rail, chunks[i].length);
    }
}

/* Current weights (1/1024) and measured rates (bytes/us) of rails 0..nrails-1; rates may be NULL
 * (unchanged). */
void rail_stats_set_weights(struct rail_stats_conn *c, const uint16_t w[], const uint64_t rates[]);
/* Copy weights, rates and up/down state (counting failovers/rejoins) from a stripe scheduler. */
void rail_stats_sync_stripe(struct rail_stats_conn *c, const struct rail_stripe *s);

/* ---- snapshots ---- */

struct rail_stats_snapshot; /* rail_stats_format.h */
/* Copy the registry (live connections, closed totals) into out (zeroed first). 0 or -ENOMEM.
 * Release it with rail_stats_snapshot_free (rail_stats_format.h). */
int rail_stats_snapshot_take(struct rail_stats_snapshot *out);

/* ---- snapshot writer ---- */

enum rail_stats_format { RAIL_STATS_FMT_JSON = 0, RAIL_STATS_FMT_PROMETHEUS = 1 };

struct rail_stats_writer_config {
    const char *path; /* "%p" is replaced by the pid, "%%" by "%" */
    int interval_ms;  /* 10..3600000 */
    enum rail_stats_format format;
};

/* Start the background writer explicitly (rail_stats_open does it from the environment).
 * 0, -EALREADY when one runs, -EINVAL (bad config, reason in err), or -errno from
 * pthread_create. */
int rail_stats_writer_start(const struct rail_stats_writer_config *cfg, char *err, size_t errlen);
/* Stop the writer (it writes one last snapshot), log one INFO line with the closed totals when any
 * connection was seen. Idempotent; also runs at process exit (or when the plugin is unloaded).
 * Connections stay usable; a later rail_stats_writer_start starts a new writer. */
void rail_stats_finalize(void);

/* Write one snapshot of the registry now: to path.tmp, then renamed to path (the path is used as
 * given, no "%p"). 0 or -errno with the reason in err. */
int rail_stats_write_now(const char *path, enum rail_stats_format format, char *err, size_t errlen);

#endif
