/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration file (NCCL_RAIL_CALIBRATION_FILE, written by `nccl-rail calibrate`): measured
 * times of forced (collective, algorithm, protocol) runs, and the times they imply for a
 * communicator. Format (docs/calibration.md):
 *
 *   nccl-rail-calibration 1
 *   # comments
 *   coll,algo,proto,nranks,nnodes,bytes,time_us
 *   AllGather,Ring,Simple,8,8,1048576,61.5
 *
 * The first non-blank line is the header (format name and version); then one row per measured
 * point (a header-like "coll,algo,..." line is allowed). A comment "# source: job" says the rows
 * after it were measured in production jobs (the rail profiler, NCCL Inspector; calib_job.h),
 * "# source: nccl-tests" that they come from nccl-tests runs (the default): readers that predate
 * it see comments. Pure core (parse a buffer, predict) plus one bounded file read;
 * deterministic, so every rank that reads the same file agrees. */
#ifndef NCCL_RAIL_CALIBRATION_H
#define NCCL_RAIL_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/calib_log.h"

#define RAIL_CALIB_FORMAT      "nccl-rail-calibration"
#define RAIL_CALIB_VERSION     1
#define RAIL_CALIB_MAX_FILE    (16u << 20) /* bytes */
#define RAIL_CALIB_MAX_ROWS    500000
#define RAIL_CALIB_MAX_NODECNT 32 /* node counts per series (more is an error) */

/* Where a row was measured ("# source:" comments). */
enum rail_calib_origin { RAIL_CALIB_ORIGIN_TESTS = 0, RAIL_CALIB_ORIGIN_JOB = 1 };

struct rail_calib_row {
    int coll, algo, proto;
    int nranks, nnodes;
    uint8_t origin; /* enum rail_calib_origin (in the padding: the row stays 40 bytes) */
    uint64_t bytes;
    double time_us;
};

/* Rows sorted by (coll, algo, proto, ranks per node, nnodes, bytes), keys distinct. */
struct rail_calibration {
    int n;
    struct rail_calib_row *rows;
};

/* Parse a calibration file held in memory. name is used in messages ("name:line: reason").
 * 0, or -EINVAL/-ENOMEM with the reason; out is empty on failure. */
int rail_calib_parse(const char *buf, size_t len, const char *name, struct rail_calibration *out,
                     char *err, size_t errlen);
/* Read (bounded, regular files only, non-blocking open) and parse. */
int rail_calib_load(const char *path, struct rail_calibration *out, char *err, size_t errlen);
void rail_calib_free(struct rail_calibration *c);

/* Rows from parsed logs; repeated keys keep the faster time. 0 or -ENOMEM. */
int rail_calib_from_runs(const struct rail_calib_run *runs, int nruns,
                         struct rail_calibration *out);
/* Add rows (job measurements, calib_job.h) to c: sorted again, a repeated key keeps the faster
 * time (and that row's origin). 0 or -ENOMEM (c unchanged). */
int rail_calib_add_rows(struct rail_calibration *c, const struct rail_calib_row *rows, int n);
/* The file text (header, one comment line, rows, "# source:" before rows of another origin),
 * flushed. Returns 0 or -errno: the errno of the first failed write (ENOSPC, EFBIG, ...). */
int rail_calib_write(const struct rail_calibration *c, const char *comment, FILE *f);

/* How a calibration turns into the times a communicator's decisions are made from: calib_apply.h
 * (log(measured / model) interpolated in log(nodes), docs/calibration.md). */

/* Summary for logs: distinct shapes, pairs, node counts, size range. */
struct rail_calib_cover {
    int rows, shapes, pairs, series;
    int nnodes_min, nnodes_max, rpn_min, rpn_max;
    uint64_t bytes_min, bytes_max;
};
void rail_calib_cover(const struct rail_calibration *c, struct rail_calib_cover *out);

#endif
