/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL Inspector's Prometheus textfile (NCCL_INSPECTOR_PROM_DUMP=1, one file per GPU, NCCL 2.29
 * and later) as calibration input: a pure parser of one file held in memory, records appended to
 * a job set (calib_job.h).
 *
 * Every sample line is checked against the text exposition format (metric name, optional
 * labels name="value" with \\ \" \n escapes, a value, an optional timestamp; '#' lines are
 * comments). Only nccl_collective_exec_time_microseconds is used: its labels collective,
 * message_size ("N-(N+1)UNIT", UNIT B/KB/MB/GB/TB: N x 1024^unit bytes, the bucket's lower
 * bound, as Inspector computes it from count x type size; x nranks for AllGather and
 * ReduceScatter, the size NCCL gives the tuner), algo_proto (NCCL's names joined by '_':
 * RING_SIMPLE, NVLS_TREE_SIMPLE), n_nodes and nranks are required; slurm_job_id and comm_name
 * name the run, node and gpu the rank. The value is Inspector's mean GPU time of the bucket.
 * Lines Inspector could not attribute (algo_proto "unknown_unknown", a collective the tuner does
 * not decide, a 0 time or size) and values that are not a number (NaN, +Inf, -Inf) are counted
 * in set->skips, not errors. Every error is
 * "name:line: reason". */
#ifndef NCCL_RAIL_CALIB_PROM_H
#define NCCL_RAIL_CALIB_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/calib_job.h"

#define RAIL_PROM_METRIC     "nccl_collective_exec_time_microseconds"
#define RAIL_PROM_MAX_LABELS 32

/* Does the buffer look like a Prometheus textfile of NCCL metrics: its non-blank, non-'#' lines
 * up to the first sample of a metric named nccl_... all look like samples (a metric name, then
 * '{' or a blank), and there is one (other exporters' metrics may come first)? */
bool rail_calib_prom_detect(const char *buf, size_t len);

/* 0, or -EINVAL / -E2BIG / -ENOMEM with the reason in err. */
int rail_calib_prom_parse(const char *buf, size_t len, const char *name, struct rail_job_set *set,
                          char *err, size_t errlen);

#endif
