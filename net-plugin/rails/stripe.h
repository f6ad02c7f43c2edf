/* SPDX-License-Identifier: Apache-2.0 */
/* Stripe scheduler for multi-rail connections: decides which rail carries which bytes of a
 * message. Pure and I/O-free (integer arithmetic only; the one exception,
 * rail_stripe_config_from_env, reads the two knobs and is never called by the others).
 *
 * - A message smaller than min_stripe (NCCL_RAIL_STRIPE_MIN) goes whole to one rail, round-robin
 *   over the rails that are up. Size 0 is one zero-length chunk (the receiver still expects a
 *   completion).
 * - A message of min_stripe bytes or more is split into at most one chunk per rail that is up, in
 *   rail order, at offsets that are multiples of RAIL_STRIPE_ALIGN (128 bytes, LL128-safe); only
 *   the end of the last chunk may be unaligned. The chunks cover [0, size) exactly once.
 * - The split follows weights quantised to 1/RAIL_STRIPE_WEIGHT_ONE that sum to exactly
 *   RAIL_STRIPE_WEIGHT_ONE over the rails that are up: equal, weighted (by configured rail speed)
 *   or adaptive (by each rail's measured throughput: bytes per completion interval, an
 *   exponentially decayed average fed by rail_stripe_on_completion). Every rail that is up keeps a
 *   floor share of 1/RAIL_STRIPE_FLOOR_DIV of its equal share. Each chunk's length is within one
 *   128-byte unit of size * weight / RAIL_STRIPE_WEIGHT_ONE.
 * - Deterministic: the same state (a byte copy of the struct is the same state) and the same size
 *   give the same schedule, field by field. Scheduling changes only the round-robin cursor.
 * - A rail that is down gets nothing; all rails down is -ENETDOWN. A rail that comes back under
 *   the adaptive policy restarts at half the rate of the slowest rail that is up and earns its
 *   share back through its completions.
 *
 * Thread-safety: none inside. One scheduler belongs to one communicator, and the data path that
 * holds the communicator serialises every call on it. The struct is plain data meant to be
 * embedded in the comm (no allocation); its fields are private to stripe.c. */
#ifndef NCCL_RAIL_STRIPE_H
#define NCCL_RAIL_STRIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAIL_STRIPE_MAX_RAILS   8      /* = RAIL_MAX_RAILS (net_wire.h), checked in stripe.c */
#define RAIL_STRIPE_ALIGN       128    /* chunk offsets are multiples of this */
#define RAIL_STRIPE_WEIGHT_ONE  1024   /* weights are integers in 1/1024 units */
#define RAIL_STRIPE_FLOOR_DIV   8      /* floor share = (1024 / rails up) / 8 */
#define RAIL_STRIPE_MIN_DEFAULT 131072 /* NCCL_RAIL_STRIPE_MIN default (docs/striping.md) */
#define RAIL_STRIPE_MAX_SIZE    ((uint64_t)1 << 52) /* larger sizes are -EINVAL */

enum rail_stripe_policy {
    RAIL_STRIPE_EQUAL = 0,    /* same share for every rail that is up */
    RAIL_STRIPE_WEIGHTED = 1, /* shares proportional to the configured speeds */
    RAIL_STRIPE_ADAPTIVE = 2, /* shares follow the measured completion throughput */
};

/* One piece of a message: bytes [offset, offset + length) go over rail. */
struct rail_stripe_chunk {
    int rail;
    uint64_t offset;
    uint64_t length;
};

struct rail_stripe_config {
    int nrails;                     /* 1..RAIL_STRIPE_MAX_RAILS */
    enum rail_stripe_policy policy; /* default ADAPTIVE */
    uint64_t min_stripe;            /* smaller messages are not split; 0 splits every size > 0 */
    /* Rail speeds in Mb/s (ncclNetProperties.speed): the weights of WEIGHTED and the starting
     * weights of ADAPTIVE. 0 = unknown, counted as the mean of the known ones (all unknown =
     * equal). */
    uint32_t speed_mbps[RAIL_STRIPE_MAX_RAILS];
};

/* Private state (embedded by value; read it only through the functions below). */
struct rail_stripe_rail_state {
    bool up;
    uint32_t speed_mbps;
    uint64_t avg_bytes;    /* decayed sum of completed bytes */
    uint64_t avg_ns;       /* decayed sum of their service intervals */
    uint64_t seed_rate;    /* starting rate, 1/1024 bytes per ns */
    uint64_t last_done_ns; /* latest completion reported (0: none since the rail came up) */
};

struct rail_stripe {
    int nrails;
    enum rail_stripe_policy policy;
    uint64_t min_stripe;
    unsigned rr_next; /* round-robin cursor for whole messages */
    bool weights_valid;
    unsigned up_mask;                       /* bit r: rail[r].up (kept with it) */
    uint16_t weight[RAIL_STRIPE_MAX_RAILS]; /* cache, valid when weights_valid */
    struct rail_stripe_rail_state rail[RAIL_STRIPE_MAX_RAILS];
};

/* Defaults: nrails, ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, speeds unknown. */
void rail_stripe_config_default(struct rail_stripe_config *cfg, int nrails);
/* Sets policy and min_stripe from NCCL_RAIL_STRIPE_POLICY and NCCL_RAIL_STRIPE_MIN (unset: the
 * table defaults; an invalid value WARNs and gives the default). Reads the environment. */
void rail_stripe_config_from_env(struct rail_stripe_config *cfg);

/* All rails up, weights from the policy. 0, or -EINVAL with the reason in err (nrails out of
 * range, unknown policy, min_stripe above RAIL_STRIPE_MAX_SIZE). */
int rail_stripe_init(struct rail_stripe *s, const struct rail_stripe_config *cfg, char *err,
                     size_t errlen);

/* Schedule a message of size bytes into out[0..cap). Returns the number of chunks (1..rails up;
 * cap RAIL_STRIPE_MAX_RAILS always suffices), -ENETDOWN when no rail is up, -E2BIG when cap is
 * too small, -EINVAL for NULL arguments or size > RAIL_STRIPE_MAX_SIZE. Only a whole-message
 * schedule (size < min_stripe, or size 0) advances the round-robin cursor; nothing changes on
 * error. */
int rail_stripe_schedule(struct rail_stripe *s, uint64_t size, struct rail_stripe_chunk *out,
                         int cap);

/* Whether rail_stripe_schedule(s, size, ...) is the whole message on rail 0 (one chunk {rail 0,
 * offset 0, size}, nothing else changed): s has one rail, it is up, and size is in range. Inline,
 * for the one-rail send path; test_stripe compares it with the call. */
static inline bool rail_stripe_one_whole(const struct rail_stripe *s, uint64_t size)
{
    return s->nrails == 1 && (s->up_mask & 1u) && size <= RAIL_STRIPE_MAX_SIZE;
}

/* Where rail_stripe_schedule(s, size, ...) cuts a message that it splits over two rails, for a
 * caller that checked the state: s has two rails, both up, and min_stripe <= size <=
 * RAIL_STRIPE_MAX_SIZE, size > 0. Returns rail 0's length: the schedule is {rail 0, 0, end},
 * {rail 1, end, size - end} when 0 < end < size (the weights cached as the call caches them,
 * nothing else changed). The dual-rail send's lean path (net_send.c); test_send_striped compares.
 */
uint64_t rail_stripe_two_end(struct rail_stripe *s, uint64_t size);

/* Re-send plan after failed_rail lost its chunks: the chunks of chunks[0..n) that are on
 * failed_rail are redistributed over the other rails that are up (each failed chunk split like a
 * message of its length at its offset, or sent whole round-robin when shorter than min_stripe),
 * written to out[0..cap). The output covers exactly the bytes of those failed chunks, once, with
 * 128-aligned offsets; other chunks are ignored. failed_rail is left out whether or not it is
 * marked down (its state is not changed: call rail_stripe_set_rail_state for that). Returns the
 * number of chunks written (0 when none was on failed_rail), -ENETDOWN when no other rail is up,
 * -E2BIG when cap is too small, -EINVAL for a bad rail or a chunk with an unaligned offset or a
 * range past RAIL_STRIPE_MAX_SIZE. Nothing changes on error. */
int rail_stripe_reschedule(struct rail_stripe *s, int failed_rail,
                           const struct rail_stripe_chunk *chunks, int n,
                           struct rail_stripe_chunk *out, int cap);

/* Mark a rail up or down. Down: it gets nothing from now on. Back up: it rejoins (ADAPTIVE: at
 * half the measured rate of the slowest rail that is up). Setting the current state again changes
 * nothing. 0, or -EINVAL for a rail out of range. */
int rail_stripe_set_rail_state(struct rail_stripe *s, int rail, bool up);

/* A chunk of a striped message (a schedule of more than one chunk, or a re-sent chunk) completed
 * on rail: bytes, posted at post_ns, its completion polled at done_ns (one monotonic clock, calls
 * in polling order), last = this completion finished its message (no other chunk of it is still
 * outstanding). The time since its post, or since the rail's previous completion when the chunk
 * was queued behind that one, measures the rail when the chunk was queued or finished its
 * message; a chunk that finished before its message did also makes its rail's estimate probe
 * upwards (see stripe.c). Whole small messages should not be reported: their time is mostly
 * latency. Zero bytes, and completions on a rail that is down, are ignored; bytes above 2^36 and
 * intervals above 2^40 ns are clamped. Every policy keeps the measurement; only ADAPTIVE's weights
 * follow it. 0, or -EINVAL for a bad rail. */
int rail_stripe_on_completion(struct rail_stripe *s, int rail, uint64_t bytes, uint64_t post_ns,
                              uint64_t done_ns, bool last);

/* rail_stripe_on_completion without its lean path for the common dual-rail completion (the
 * same outcome; test_stripe_two compares the two). */
int rail_stripe_on_completion_general(struct rail_stripe *s, int rail, uint64_t bytes,
                                      uint64_t post_ns, uint64_t done_ns, bool last);

/* Current weights in 1/RAIL_STRIPE_WEIGHT_ONE (0 for rails down or past nrails); returns the
 * number of rails up. */
int rail_stripe_weights(const struct rail_stripe *s, uint16_t w[RAIL_STRIPE_MAX_RAILS]);
/* The measured rate of a rail in bytes per microsecond (the starting rate before any
 * completion); 0 for a rail out of range. */
uint64_t rail_stripe_rate(const struct rail_stripe *s, int rail);
bool rail_stripe_rail_up(const struct rail_stripe *s, int rail);
/* "equal", "weighted", "adaptive" or "?" */
const char *rail_stripe_policy_name(enum rail_stripe_policy p);

#endif
