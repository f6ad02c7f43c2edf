/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler's file: its name and its writer. The format itself (header, columns, suffix) is
 * common/prof_file_format.h, shared with its reader (`nccl-rail calibrate`). */
#ifndef NCCL_RAIL_PROF_FORMAT_H
#define NCCL_RAIL_PROF_FORMAT_H

#include <stdio.h>

#include "prof_core.h"
#include "prof_file_format.h"

/* The file name of one context: "nccl-rail-<comm id, 16 hex digits>-r<rank>.prof". */
int rail_prof_file_name(char *buf, size_t len, uint64_t comm_id, int rank);

/* The file text: header, comments (about: who wrote it), the comm line, the counters, the rows.
 * Returns 0 or -errno of the first failed write (ENOSPC, EFBIG...). */
int rail_prof_write(FILE *f, const struct rail_prof_ctx *c, const struct rail_prof_record *recs,
                    uint32_t n, const struct rail_prof_counts *counts, const char *about);

#endif
