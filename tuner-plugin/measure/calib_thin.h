/* SPDX-License-Identifier: Apache-2.0 */
/* Thinning a calibration's sizes (pure): a calibration holds at most RAIL_CALIB_MAX_POINTS
 * sizes per (collective, algorithm, protocol, ranks per node, node count) series, which keeps
 * every table build cheap (calibration.c). Production jobs easily measure more distinct sizes
 * than that (inference with variable token counts); instead of refusing the whole calibration,
 * such a series is merged into log-spaced buckets: the finest of 64, 32, 16, 8 or 4 per octave
 * that fits (4 per octave always does: at most 4 x 51 octaves = 204 buckets of 1 B .. 2^50 B).
 * A bucket's point is the weighted mean of its sizes and of its times (weight: the collectives
 * measured at that size; 1 each without weights), so a bucket of a time linear in the size keeps
 * that line exactly; its origin is the heaviest row's. Series within the limit are untouched.
 * Deterministic (integer bucket bounds, sorted input). */
#ifndef NCCL_RAIL_CALIB_THIN_H
#define NCCL_RAIL_CALIB_THIN_H

#include "measure/calibration.h"

struct rail_calib_thinning {
    int series;     /* series thinned */
    long sizes_in;  /* their distinct sizes before */
    int sizes_out;  /* their buckets after */
    int per_octave; /* buckets per octave of the coarsest series thinned */
};

/* rows[0..*n): sorted by key and made distinct (a repeated key keeps the faster row, as
 * rail_calib_add_rows), then every series with more than RAIL_CALIB_MAX_POINTS sizes bucketed.
 * weight: one per row, or NULL. In place: *n shrinks; rows (and weight) end sorted by key.
 * 0, or -ENOMEM (rows untouched). */
int rail_calib_thin(struct rail_calib_row *rows, double *weight, int *n,
                    struct rail_calib_thinning *t);

#endif
