/* SPDX-License-Identifier: Apache-2.0 */
/* The names of NCCL's collectives, algorithms and protocols: as NCCL prints them, as the rules
 * file spells them, and as calibration inputs and command lines name them. Shared by the tuner
 * (model, readers, rules), the profiler's file and the CLI. Pure functions, no I/O. */
#ifndef NCCL_RAIL_NCCL_NAMES_H
#define NCCL_RAIL_NCCL_NAMES_H

#include <stddef.h>

#include "nccl/nccl_tuner.h"

/* Names as NCCL prints them ("?" when out of range). */
const char *rail_coll_name(int coll);   /* "AllReduce" */
const char *rail_algo_name(int algo);   /* "Ring", "NVLSTree", ... */
const char *rail_proto_name(int proto); /* "LL", "LL128", "Simple" */

/* Accepted spellings of the rules file (compared case-insensitively): the example tuner's first,
 * then NCCL's own names where they differ only by the missing underscore. */
struct rail_name_value {
    const char *name;
    int value;
};
extern const struct rail_name_value rail_rules_colls[];
extern const struct rail_name_value rail_rules_algos[];
extern const struct rail_name_value rail_rules_protos[];
extern const size_t rail_rules_ncolls, rail_rules_nalgos, rail_rules_nprotos;

/* Spellings used in the file ("allreduce", "nvls_tree", "ll128"); "?" when out of range. */
const char *rail_rules_coll_str(int coll);
const char *rail_rules_algo_str(int algo);
const char *rail_rules_proto_str(int proto);

/* Names as nccl-tests / NCCL / the rules file spell them, case-insensitive, '_' and '-' ignored
 * ("all_reduce", "AllReduce", "all_reduce_perf"; "NVLS_TREE", "nvlstree"; "ll128"). -1 if unknown.
 */
int rail_calib_coll_from_name(const char *s, size_t n);
/* A collective named on purpose (--coll, sweep --colls, the calibration file's column): the
 * whole name, not a part of it ("AllReduce", "all_reduce", "all_reduce_perf"; not
 * "xreduce" or "allreducefoo"). -1 if unknown. */
int rail_calib_coll_exact(const char *s, size_t n);
int rail_calib_algo_from_name(const char *s, size_t n);
int rail_calib_proto_from_name(const char *s, size_t n);

#endif
