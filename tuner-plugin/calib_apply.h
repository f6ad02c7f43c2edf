/* SPDX-License-Identifier: Apache-2.0 */
/* The calibration applied to one communicator: the times the decision table is built from
 * (rail_dt_build_with). Calibrated pairs get their calibrated time (calibration.h); the others
 * keep the model's time scaled by the geometric mean of calibrated/model over the calibrated
 * pairs at the same point, so both are on one scale; with no calibrated pair at a point the
 * model's times are used unchanged. Pipelined calls (numPipeOps > 1) scale a calibrated time by
 * the model's own pipelined/single ratio. Pure, deterministic. */
#ifndef NCCL_RAIL_CALIB_APPLY_H
#define NCCL_RAIL_CALIB_APPLY_H

#include "calibration.h"
#include "decision.h"

struct rail_calib_apply {
    const struct rail_model *model;
    const struct rail_calibration *cal;
    int rpn, nnodes; /* rpn 0: uneven ranks per node, nothing applies */
    struct rail_calib_series series[RAIL_NUM_COLLS][RAIL_DT_CANDIDATES]; /* rail_calib_apply_init */
};

/* Fill model, cal and the shape first; resolves every series once for this communicator. */
void rail_calib_apply_init(struct rail_calib_apply *a);

/* rail_dt_times_fn over a struct rail_calib_apply. */
int rail_calib_apply_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                           float out[RAIL_DT_CANDIDATES]);

/* One line: what the calibration covers and what applies to this communicator. Returns the
 * number of (collective, pair) series that apply. */
int rail_calib_apply_summary(const struct rail_calib_apply *a, char *buf, size_t len);

#endif
