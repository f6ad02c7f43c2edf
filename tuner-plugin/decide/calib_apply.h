/* SPDX-License-Identifier: Apache-2.0 */
/* The calibration applied to one communicator: the times the decision table is built from
 * (rail_dt_build_with), docs/calibration.md.
 *
 * A calibrated pair's time is the model's time for this communicator times the calibration's
 * residual: at each calibrated node count of the same ranks per node, log(measured / model built
 * for that node count), interpolated in log(bytes) between measured sizes; between two
 * calibrated node counts the residual is interpolated in log(nodes), beyond them the nearest
 * one's fades with the distance in octaves (the table's fade_nodes); faded below half
 * (RAIL_CALIB_MIN_WEIGHT) it is no longer a measurement and the series does not apply: the model
 * and its own do-no-harm rules decide there (docs/calibration.md §6). The model carries what
 * changes with the node count (steps, network share), the residual what the cluster measured, so
 * a node count between or next to calibrated ones loses little, and at a calibrated node count
 * and size the time is the measured one. Pairs without calibration keep the model's time scaled
 * by the geometric mean of calibrated/model over the calibrated pairs at the same point; at a
 * measured point such a pair may displace the measured fastest only under rail_calib_apply_rule's
 * conditions (RAIL_CALIB_AGREE). Pipelined calls (numPipeOps > 1) follow the model's own
 * pipelined/single ratio. Deterministic. */
#ifndef NCCL_RAIL_CALIB_APPLY_H
#define NCCL_RAIL_CALIB_APPLY_H

#include "measure/calibration.h"
#include "decide/decision.h"

/* One calibrated series resolved for the communicator: up to two node counts, weighted. */
struct rail_calib_resid {
    const struct rail_calib_row *a, *b; /* each node count's rows, by bytes */
    int na, nb;
    const struct rail_model *ma, *mb; /* the model at each node count */
    float wa, wb;
    float distance; /* octaves of nodes to the nearest calibrated node count */
    float span;     /* octaves between the two node counts a and b (0: one) */
    bool beyond;    /* extrapolated beyond the calibrated node counts */
    /* Beyond, faded below RAIL_CALIB_MIN_WEIGHT: applies only where carried (RAIL_CALIB_STABLE,
     * RAIL_CALIB_RING_CHANGE), elsewhere the model and its own rules decide. */
    bool too_far;
    /* Beyond, with a second calibrated node count on the same side (b, weight 0), for the
     * stability of the ratios (RAIL_CALIB_STABLE). */
    bool partner;
};

/* The least weight a residual extrapolated beyond the calibrated node counts keeps to count as
 * measured (exp(-distance / fade_nodes)): 0.35 octave with the shipped fade of 0.5. */
#define RAIL_CALIB_MIN_WEIGHT 0.5f
/* Carried across node counts (docs/calibration.md §6). Only the contenders at a size count: the
 * calibrated pairs within RAIL_CALIB_CONTEND of the fastest by the nearest node count's
 * residuals. Two rules:
 * - Stable ratios: where at least two contenders are calibrated at the same two node counts (the
 *   two around this one, or the nearest two beyond it), each one's log(measured / model) less
 *   the contenders' mean (what the model gets wrong about that pair relative to the others: its
 *   protocol's and algorithm's efficiency on this platform at this size) is compared between the
 *   two node counts. Where it moves by at most RAIL_CALIB_STABLE (log) for every contender, and
 *   the residuals do change the model's ranking (some contender's relative residual above
 *   RAIL_CALIB_STABLE: otherwise there is nothing to carry and the table's own rules decide), the
 *   ranking is a property of the platform: beyond the calibrated node counts the nearest one's
 *   residuals apply whole (no fade), and the distance margin is the observed change (scaled by
 *   how much farther than their span it is carried) instead of the octaves.
 * - Ring steps: where the contenders are all ring pairs calibrated at one node count only, the
 *   residuals (read at the same bytes per rank, a ring step of the same size over the same
 *   links: only the number of steps changes with the node count, and that the model carries)
 *   apply whole, with a margin of RAIL_CALIB_RING_CHANGE over the table's margin0 (the relative
 *   ring-protocol residuals of the P5 8-GPU sweeps move by 0.03-0.1 between 2 and 256 nodes). */
#define RAIL_CALIB_STABLE      0.12
#define RAIL_CALIB_CONTEND     2.0
#define RAIL_CALIB_RING_CHANGE 0.03

struct rail_calib_apply {
    const struct rail_model *model; /* this communicator's */
    const struct rail_calibration *cal;
    const struct rail_topo *topo; /* the model's topology: models at the calibrated node counts */
    int rpn, nnodes;              /* rpn 0: uneven ranks per node, nothing applies */
    struct rail_calib_resid series[RAIL_NUM_COLLS][RAIL_DT_CANDIDATES];
    int nmodels;
    int model_nodes[RAIL_CALIB_MAX_NODECNT];
    struct rail_model *models[RAIL_CALIB_MAX_NODECNT];
};

/* Fill model, cal, topo and the shape first; resolves every series once for this communicator
 * (building the model at each calibrated node count it uses). Release with _fini. */
void rail_calib_apply_init(struct rail_calib_apply *a);
void rail_calib_apply_fini(struct rail_calib_apply *a);

/* rail_dt_times_fn over a struct rail_calib_apply. */
int rail_calib_apply_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                           float out[RAIL_DT_CANDIDATES], float *distance);

/* At a measured point (a calibrated node count and a measured size) a pair measured nowhere
 * there may displace the measured fastest only when the calibrated/model ratios of the measured
 * pairs agree: max / min at most this factor (a job measures mostly the pairs NCCL chose, whose
 * ratios can differ 8x: the geometric mean of such ratios predicts nothing). */
#define RAIL_CALIB_AGREE 1.5f

/* Which rule decided at a point (explain). */
enum rail_calib_rule {
    RAIL_CALIB_RULE_NONE = 0,     /* not a measured point: distance margins (decision.c) */
    RAIL_CALIB_RULE_ALL_MEASURED, /* every pair the model ranks was measured there */
    RAIL_CALIB_RULE_HELD_SPREAD,  /* unmeasured pairs held back: ratios spread > AGREE */
    RAIL_CALIB_RULE_HELD_MARGIN,  /* ratios agree, no unmeasured pair's gain clears the margin */
    RAIL_CALIB_RULE_UNMEASURED,   /* an unmeasured pair's gain clears spread x (1 + margin0) */
};
/* The rule at (coll, nbytes), and the spread (max / min) of the measured pairs' ratios there. */
int rail_calib_apply_rule(const struct rail_calib_apply *a, int coll, size_t nbytes,
                          int num_pipe_ops, float *spread);
const char *rail_calib_rule_name(int rule); /* one phrase; "" for RAIL_CALIB_RULE_NONE */
const char *rail_calib_rule_code(int rule); /* "all-measured", "held-spread", ...; "" for NONE */

/* Whether the calibrated times ranked for (coll, nbytes) rest on a job measurement (a row of
 * origin job, "# source: job"): a measured size around nbytes, at a node count used, of any
 * calibrated pair (an uncalibrated pair's time is scaled by the calibrated ones). explain shows
 * it. */
bool rail_calib_apply_from_job(const struct rail_calib_apply *a, int coll, size_t nbytes);

/* The (collective, pair) series beyond the calibrated node counts by too much to apply
 * (too_far): there the model and its own rules decide. */
int rail_calib_apply_too_far(const struct rail_calib_apply *a);

/* One line: what the calibration covers and what applies to this communicator. Returns the
 * number of (collective, pair) series that apply. */
int rail_calib_apply_summary(const struct rail_calib_apply *a, char *buf, size_t len);

#endif
