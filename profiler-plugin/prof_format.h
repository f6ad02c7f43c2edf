/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler's file (one per rank of each communicator, in NCCL_RAIL_PROFILE_DIR), read by
 * `nccl-rail calibrate` (tuner-plugin/calib_prof.h). docs/calibration.md §7:
 *
 *   nccl-rail-profile 1
 *   # nccl-rail 0.2.0 (git ...): profiler plugin, ABI v5, host node1, pid 1234
 *   # comm name "DP Group 0"
 *   comm 0x5bd0a1c2e3f40718 rank 3 nranks 16 nnodes 2
 *   # recorded 5000 overwritten 904 busy 0 no_timing 0 other 12 refused 0
 *   seq,coll,algo,proto,channels,bytes,gpu_us
 *   17,AllReduce,Ring,Simple,8,1048576,123.456
 *
 * The first non-blank, non-'#' line is the header, the second the "comm" line; then one row per
 * completed collective, oldest first (the ring's window: the last NCCL_RAIL_PROFILE_RING). */
#ifndef NCCL_RAIL_PROF_FORMAT_H
#define NCCL_RAIL_PROF_FORMAT_H

#include <stdio.h>

#include "prof_core.h"

#define RAIL_PROF_FORMAT  "nccl-rail-profile"
#define RAIL_PROF_VERSION 1
#define RAIL_PROF_COLUMNS "seq,coll,algo,proto,channels,bytes,gpu_us"
#define RAIL_PROF_SUFFIX  ".prof"

/* The file name of one context: "nccl-rail-<comm id, 16 hex digits>-r<rank>.prof". */
int rail_prof_file_name(char *buf, size_t len, uint64_t comm_id, int rank);

/* The file text: header, comments (about: who wrote it), the comm line, the counters, the rows.
 * Returns 0 or -errno of the first failed write (ENOSPC, EFBIG...). */
int rail_prof_write(FILE *f, const struct rail_prof_ctx *c, const struct rail_prof_record *recs,
                    uint32_t n, const struct rail_prof_counts *counts, const char *about);

#endif
