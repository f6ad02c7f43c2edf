/* SPDX-License-Identifier: Apache-2.0 */
/* The rail profiler's file (common/prof_file_format.h) as calibration input: a pure parser
 * of one file held in memory, records appended to a job set (calib_job.h). The header, then the
 * "comm HEX rank R nranks N nnodes M" line, then rows "seq,coll,algo,proto,channels,bytes,
 * gpu_us" (sizes and times as in nccl-tests logs: bytes in [1, 2^50], times plain decimals in
 * [0.001, 1e9] us). Every error is "name:line: reason"; a file with no row adds nothing. */
#ifndef NCCL_RAIL_CALIB_PROF_H
#define NCCL_RAIL_CALIB_PROF_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/calib_job.h"

/* Does the buffer start like a profiler file (its first non-blank, non-'#' line)? */
bool rail_calib_prof_detect(const char *buf, size_t len);

/* 0, or -EINVAL / -E2BIG / -ENOMEM with the reason in err; records added before an error stay
 * in set (the caller discards the set on error). */
int rail_calib_prof_parse(const char *buf, size_t len, const char *name, struct rail_job_set *set,
                          char *err, size_t errlen);

#endif
