/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler's file format, shared by its writer (profiler-plugin/prof_format.c) and its reader
 * (`nccl-rail calibrate`, tuner-plugin/measure/calib_prof.c), below both. One file per rank of
 * each communicator, in NCCL_RAIL_PROFILE_DIR; docs/calibration.md §7:
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
#ifndef NCCL_RAIL_PROF_FILE_FORMAT_H
#define NCCL_RAIL_PROF_FILE_FORMAT_H

#define RAIL_PROF_FORMAT  "nccl-rail-profile"
#define RAIL_PROF_VERSION 1
#define RAIL_PROF_COLUMNS "seq,coll,algo,proto,channels,bytes,gpu_us"
#define RAIL_PROF_SUFFIX  ".prof"

#endif
