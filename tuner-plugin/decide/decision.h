/* SPDX-License-Identifier: Apache-2.0 */
/* Decision table: per collective, pipelined-op class and log2 size bucket, the model's candidates
 * (algorithm, protocol) ranked best first. Built once per communicator at init so getCollInfo is
 * a lookup plus a short scan for the first candidate NCCL did not mark IGNORE. */
#ifndef NCCL_RAIL_DECISION_H
#define NCCL_RAIL_DECISION_H

#include <stddef.h>
#include <stdint.h>

#include "model/cost_model.h"

#define RAIL_DT_OCTAVES    48 /* octave o holds sizes in [2^(o-1), 2^o); o = 0 is 0 bytes */
#define RAIL_DT_SUBS       4  /* quarter octaves: a choice is made every ~19% of size */
#define RAIL_DT_BUCKETS    (RAIL_DT_OCTAVES * RAIL_DT_SUBS)
#define RAIL_DT_PIPES      3 /* numPipeOps 1, 2..3, >= 4 */
#define RAIL_DT_CANDIDATES (NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS)
/* Candidates a cell keeps: the ones that beat NCCL's own pick by the margin, best first. When
 * NCCL offers none of them the tuner leaves its choice alone; four is plenty (a cell seldom has
 * more than two) and keeps the table at 6 bytes a cell. */
#define RAIL_DT_KEEP 4

/* Where a cell's ranking came from (rail_decision_table.source). */
enum rail_dt_source { RAIL_DT_SRC_MODEL = 0, RAIL_DT_SRC_CALIBRATION = 1 };

/* Which do-no-harm rule decided a model cell, where one of the strict rules did
 * (rail_decision_table.why; docs/cost-model.md §12.1, §12.5). */
enum rail_dt_why {
    RAIL_DT_WHY_NONE = 0,     /* the margins of the covered range, or nothing to change */
    RAIL_DT_WHY_UNSEEN_KEPT,  /* class not in the table: the model's gain is below the margin */
    RAIL_DT_WHY_UNSEEN_GAIN,  /* class not in the table: a gain the prior explains, >= margin */
    RAIL_DT_WHY_EXTRAPOLATED, /* a ranking carried past the trained node range */
    RAIL_DT_WHY_RING_STEP,    /* a ring protocol measured at the same bytes per rank (§12.6) */
    RAIL_DT_WHY_COUNT
};
/* "platform class not in training: NCCL's choice kept", ...; "" for RAIL_DT_WHY_NONE. */
const char *rail_dt_why_name(int why);
/* The CSV code: "class-unseen", "class-unseen-gain", "extrapolated"; "" for none. */
const char *rail_dt_why_code(int why);

/* A communicator of a platform class the table holds no measurement of (GPU generation x
 * network family, "node" for one node: rail_model_class_seen) keeps NCCL's choice unless a
 * candidate is predicted at least this much faster than each of NCCL's picks in the bucket, by
 * the model and by the physical prior alike (there they are the same numbers: NCCL's model and
 * the refinements of docs/cost-model.md §5): 1.0 = twice as fast. NCCL's own ranking errors on
 * the measured systems reach 44% at p90 (§12.4); a gain more than twice that is not the kind of
 * error seen there. A documented guess, not fitted (docs/cost-model.md §12.1). */
#define RAIL_UNSEEN_CLASS_MARGIN 1.0f

struct rail_dt_cell {
    uint8_t n;                  /* candidates kept; 0: NCCL's choice stands */
    uint8_t nchannels;          /* suggestion for cand[0], 0 = keep NCCL's */
    uint8_t cand[RAIL_DT_KEEP]; /* algo * NCCL_NUM_PROTOCOLS + proto, best first */
};

struct rail_decision_table {
    struct rail_dt_cell cell[RAIL_NUM_COLLS][RAIL_DT_PIPES][RAIL_DT_BUCKETS];
    /* enum rail_dt_source per cell, for explain; kept out of the cells so getCollInfo's lookup
     * reads the same 23-byte cells as without a calibration. */
    uint8_t source[RAIL_NUM_COLLS][RAIL_DT_PIPES][RAIL_DT_BUCKETS];
    /* enum rail_dt_why per cell, for explain. */
    uint8_t why[RAIL_NUM_COLLS][RAIL_DT_PIPES][RAIL_DT_BUCKETS];
};

struct rail_extrap;

/* Octave o (bit length of nbytes) times 4 plus the two bits after the leading one (for sizes
 * below 4 the bits shifted in are zeros: 1 -> sub 0, 2 -> 0, 3 -> 2). Branch-free but for the
 * clamp: getCollInfo's lookup. */
static inline int rail_dt_bucket(size_t nbytes)
{
    int o = nbytes ? 64 - __builtin_clzll((unsigned long long)nbytes) : 0;
    if (o >= RAIL_DT_OCTAVES)
        return RAIL_DT_BUCKETS - 1;
    return o * RAIL_DT_SUBS + (int)(((unsigned long long)nbytes << 3) >> o & 3);
}

static inline int rail_dt_pipe(int num_pipe_ops)
{
    return num_pipe_ops <= 1 ? 0 : (num_pipe_ops < 4 ? 1 : 2);
}

/* Representative values the table is evaluated at. */
int rail_dt_pipe_value(int pipe_class);
/* Smallest and largest size of a bucket (lo > hi: a bucket no size maps to). */
void rail_dt_bucket_range(int bucket, size_t *lo, size_t *hi);

/* Rank every candidate per cell by its mean time ratio to the best candidate over points
 * spread across the bucket (minimises mean regret within the bucket). Deterministic. */
void rail_dt_build(struct rail_decision_table *dt, const struct rail_model *m, bool use_nchannels);

/* Where a cell's times came from (rail_dt_times_fn). */
enum rail_dt_times_kind {
    RAIL_DT_TIMES_MODEL = 0,    /* the model's */
    RAIL_DT_TIMES_CAL_MEASURED, /* every calibrated pair measured at this node count and size */
    RAIL_DT_TIMES_CAL_NEAR,     /* calibrated at or between calibrated node counts */
    RAIL_DT_TIMES_CAL_BEYOND,   /* calibrated, extrapolated beyond the calibrated node counts */
};
/* Predicted times of every candidate (index algo * NCCL_NUM_PROTOCOLS + proto; < 0 =
 * impossible) at one size. Returns an enum rail_dt_times_kind; for a calibration, *distance =
 * the octaves of nodes from the nearest calibrated node count (0: measured here). */
typedef int (*rail_dt_times_fn)(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                                float out[RAIL_DT_CANDIDATES], float *distance);
/* rail_dt_times_fn of the cost model alone (ctx: the struct rail_model). */
int rail_dt_model_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                        float out[RAIL_DT_CANDIDATES], float *distance);
/* rail_dt_build with another source of times (the calibration, tuner-plugin/decide/calib_apply.h).
 * A cell's source is CALIBRATION when any of its sample points came from the calibration. */
void rail_dt_build_with(struct rail_decision_table *dt, const struct rail_model *m,
                        bool use_nchannels, rail_dt_times_fn times, const void *ctx);
/* The same, carrying stable rankings past the trained node range with the edge models of x
 * (extrapolate.h; NULL: nothing carried). */
void rail_dt_build_ext(struct rail_decision_table *dt, const struct rail_model *m,
                       bool use_nchannels, rail_dt_times_fn times, const void *ctx,
                       const struct rail_extrap *x);

#endif
