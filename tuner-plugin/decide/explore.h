/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_EXPLORE: the tuner runs the runner-up (algorithm, protocol) instead of its choice on
 * a small, deterministic share of calls, so that the next calibration from job measurements (the
 * rail profiler, NCCL Inspector) sees the alternative (docs/calibration.md §7).
 *
 * Every rank of a communicator must run the same pair for the same collective. The decision is
 * derived only from what every rank sees identically: the cell of the decision table (collective,
 * pipelined operations, size bucket), the number of earlier calls for that cell on this
 * communicator (NCCL asks the tuner once per collective, on every rank, in the collectives'
 * order; every call is counted, whatever else it carries), and the runner-up's availability in
 * NCCL's cost table (computed by NCCL from the communicator-wide topology, the same on every
 * rank; NCCL's own choice relies on it too). Nothing a rank computes for itself enters: not the
 * registered-buffer flag (regBuff), which NCCL derives from this rank's registrations. Where the
 * whole communicator's configuration decides - a rules file, NCCL_ALGO/PROTO, the
 * v2 ABI without a cost table - the tuner refuses to explore. Pure: no I/O, no clock. */
#ifndef NCCL_RAIL_EXPLORE_H
#define NCCL_RAIL_EXPLORE_H

#include <stdint.h>

#include "decide/decision.h"

#define RAIL_EXPLORE_NONE 0xFF

struct rail_explore {
    uint32_t threshold; /* a call explores when its hash (32 bits) is below: share * 2^32 */
    /* The runner-up of each cell (RAIL_EXPLORE_NONE: none within the slowdown bound, or the
     * tuner makes no choice there) and the calls seen for the cell. */
    uint8_t alt[RAIL_NUM_COLLS][RAIL_DT_PIPES][RAIL_DT_BUCKETS];
    uint32_t calls[RAIL_NUM_COLLS][RAIL_DT_PIPES][RAIL_DT_BUCKETS];
    int ncells; /* cells with a runner-up */
};

/* Fills e for a built decision table: a cell's runner-up is the fastest other pair at the
 * bucket's middle size by `times` (the times the table was ranked from), kept only when
 * predicted at most max_slowdown (0.25: 25%) slower than the cell's choice. share in (0, 1]. */
void rail_explore_build(struct rail_explore *e, const struct rail_decision_table *dt,
                        rail_dt_times_fn times, const void *ctx, double share, double max_slowdown);

/* The call's hash: the cell and its call number, mixed (splitmix64's finaliser). */
static inline uint32_t rail_explore_hash(uint32_t call, unsigned cell)
{
    uint64_t z = ((uint64_t)cell << 32 | call) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* One call for the cell: the runner-up to run instead of the choice, or -1. Counts the call. */
static inline int rail_explore_pick(struct rail_explore *e, int coll, int pipe, int bucket)
{
    uint32_t k = e->calls[coll][pipe][bucket]++;
    uint8_t alt = e->alt[coll][pipe][bucket];
    if (alt == RAIL_EXPLORE_NONE)
        return -1;
    unsigned cell =
        ((unsigned)coll * RAIL_DT_PIPES + (unsigned)pipe) * RAIL_DT_BUCKETS + (unsigned)bucket;
    return rail_explore_hash(k, cell) < e->threshold ? alt : -1;
}

#endif
