/* SPDX-License-Identifier: Apache-2.0 */
/* The I/O layer around the pure log parser (calib_log.h): nccl-tests logs read from files and
 * directories under the project's rules. Each file: non-blocking open, regular files only, at
 * most RAIL_CALIB_MAX_LOG_BYTES. Directories: RAIL_CALIB_MAX_DEPTH levels, entries in name order
 * (the result does not depend on readdir), only *.log, *.txt and *.out files; at most
 * RAIL_CALIB_MAX_FILES files in all. Used by `nccl-rail calibrate` and bench/tuner_eval. */
#ifndef NCCL_RAIL_CALIB_FILES_H
#define NCCL_RAIL_CALIB_FILES_H

#include <stddef.h>

#include "calib_log.h"

#define RAIL_CALIB_MAX_LOG_BYTES (64u << 20) /* nccl-tests output with NCCL INFO lines mixed in */
#define RAIL_CALIB_MAX_FILES     10000
#define RAIL_CALIB_MAX_DEPTH     3

struct rail_calib_logs {
    struct rail_calib_run *runs; /* one per log file read */
    int nruns, cap;
    int files;   /* log files read */
    int skipped; /* directory entries that are not logs (other names, links, too deep) */
};

/* Read one path: a file named here is always parsed (a FIFO is an error); a directory is walked.
 * hint: what the command line says about these files (NULL: nothing). 0, or a negative errno with
 * "FILE:LINE: reason" / "PATH: reason" in err; runs read before an error stay in l. */
int rail_calib_logs_add(struct rail_calib_logs *l, const char *path,
                        const struct rail_calib_hint *hint, char *err, size_t errlen);
void rail_calib_logs_free(struct rail_calib_logs *l);

#endif
