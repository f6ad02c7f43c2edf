/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL Inspector's JSON output (NCCL_INSPECTOR_ENABLE=1, "<host>-pid<pid>.log": one JSON object
 * per collective, concatenated; output format v4.0, NCCL 2.28-2.30) as calibration input: a pure
 * parser (json-c) of one file held in memory, records appended to a job set (calib_job.h).
 *
 * An object with "coll_perf" is one collective on one rank: header.id (the communicator),
 * header.rank, header.n_ranks, header.nnodes, coll_perf.coll, coll_sn, coll_msg_size_bytes
 * (count x type size: per rank for AllGather and ReduceScatter, so x n_ranks here, the size NCCL
 * gives the tuner), coll_exec_time_us (an integer number of us) and coll_timing_source (only
 * "kernel_gpu" times are used). "p2p_perf" objects are skipped. Inspector's JSON does not record
 * the algorithm or the protocol: its records are usable only from a run that forced them
 * (NCCL_ALGO/NCCL_PROTO), named with --algo and --proto (hint); without, the first collective is
 * an error that says so. Every error is "name:line: reason" (the line the object starts on, or
 * the line of the problem inside it). A top-level value that is not an object, an object beyond
 * the bounds below, or a key written twice in one object is an error before anything of that
 * object is used. */
#ifndef NCCL_RAIL_CALIB_INSPECTOR_H
#define NCCL_RAIL_CALIB_INSPECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "measure/calib_job.h"
#include "measure/calib_log.h"

/* Bounds of one JSON object (one collective), checked before json-c builds its tree
 * (calib_json_scan.h): memory stays a small multiple of the bytes read whatever the file holds.
 * A v4.0 record is about 600 bytes, 25 values, 3 levels deep. */
#define RAIL_INSPECTOR_MAX_DEPTH  16
#define RAIL_INSPECTOR_MAX_OBJECT (64u << 10)
#define RAIL_INSPECTOR_MAX_VALUES 4096

/* Does the buffer start like JSON objects (its first non-blank byte is '{')? */
bool rail_calib_inspector_detect(const char *buf, size_t len);

/* Is its first object an NCCL Inspector record (an object with "header" and "coll_perf" or
 * "p2p_perf", within the bounds)? For directories, where other JSON files are skipped. */
bool rail_calib_inspector_is_record(const char *buf, size_t len);

/* 0, or -EINVAL / -E2BIG / -ENOMEM with the reason in err. */
int rail_calib_inspector_parse(const char *buf, size_t len, const char *name,
                               const struct rail_calib_hint *hint, struct rail_job_set *set,
                               char *err, size_t errlen);

#endif
