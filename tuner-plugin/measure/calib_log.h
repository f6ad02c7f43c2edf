/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf,
 * reduce_perf) as calibration input: a pure parser of one file held in memory, no I/O.
 *
 * One file is one run: one collective, one forced (algorithm, protocol), one communicator shape.
 *  - collective: the "# Collective test starting: X" line, else the file name (all_reduce...,
 *    AllReduce...), else the caller's hint (`--coll`);
 *  - (algorithm, protocol): "# NCCL_ALGO=X" / "# NCCL_PROTO=Y" header lines, or NCCL's own
 *    "NCCL_ALGO set by environment to X" INFO line, else the hint (`--algo`/`--proto`); both
 *    present and different is an error;
 *  - ranks and nodes: the "#  Rank N Group G Pid P on HOST device D ..." lines (distinct HOSTs =
 *    nodes);
 *  - times: the out-of-place "time" column of the result table (located from its header line);
 *    sizes are byte counts > 0, times plain decimals in [RAIL_CALIB_MIN_TIME_US, ..._MAX_TIME_US];
 *  - NCCL's own log lines ("host:pid:tid [dev] NCCL INFO ...", the host name may start with a
 *    digit) are not table rows.
 * A second table in the same file (a repeated run) is accepted when its shape and pair are the
 * same (the faster time of a repeated size is kept); anything else is "mixed shapes in one file".
 * Every error is "name:line: reason" (or "name: reason" for the file as a whole). */
#ifndef NCCL_RAIL_CALIB_LOG_H
#define NCCL_RAIL_CALIB_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_names.h"

#define RAIL_CALIB_MAX_POINTS 256       /* sizes per run */
#define RAIL_CALIB_MAX_RANKS  (1 << 20) /* Rank lines per run */
#define RAIL_CALIB_MAX_LINE   4096      /* characters per line */
#define RAIL_CALIB_MAX_BYTES  (1ull << 50)
/* A measured time in µs: 1 ns .. 1000 s. Written in plain decimal (nccl-tests' own format):
 * no hex floats, no "inf"/"nan"; 1e308 or 1e-300 is not a measurement. */
#define RAIL_CALIB_MIN_TIME_US 1e-3
#define RAIL_CALIB_MAX_TIME_US 1e9

struct rail_calib_point {
    uint64_t bytes;
    double time_us; /* out-of-place time */
};

struct rail_calib_run {
    int coll, algo, proto; /* ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_* */
    int nranks, nnodes;
    int npoints; /* sorted by bytes, distinct */
    struct rail_calib_point pts[RAIL_CALIB_MAX_POINTS];
};

/* What the command line says about the files that follow; -1 = nothing. */
struct rail_calib_hint {
    int coll, algo, proto;
};

/* Parse buf[0..len) (need not be NUL-terminated). name is used for the collective inference
 * and in messages. Returns 0 and fills *out, or -EINVAL (-ENOMEM) with the reason in err. */
int rail_calib_log_parse(const char *buf, size_t len, const char *name,
                         const struct rail_calib_hint *hint, struct rail_calib_run *out, char *err,
                         size_t errlen);

/* A size or a time as both file formats take them: 0, or -EINVAL with the reason in why. */
int rail_calib_bytes_parse(const char *s, uint64_t *out, char *why, size_t whylen);
int rail_calib_time_parse(const char *s, double *out, char *why, size_t whylen);

#endif
