/* SPDX-License-Identifier: Apache-2.0 */
/* The I/O layer around the pure parsers: nccl-tests logs (calib_log.h) and job measurements
 * (the rail profiler's files, calib_prof.h; NCCL Inspector's Prometheus textfile, calib_prom.h,
 * and JSON, calib_inspector.h) read from files and directories under the project's rules. Each
 * file: non-blocking open, regular files only, at most RAIL_CALIB_MAX_LOG_BYTES, a UTF-8 byte
 * order mark at its start ignored; its kind is told by its content (a profiler header, a
 * Prometheus sample of an nccl_ metric, a JSON object, else an nccl-tests log). A file with the
 * inode of the output (rail_calib_logs_set_output) is refused: an input is never overwritten.
 * Directories: RAIL_CALIB_MAX_DEPTH levels (a deeper directory is not read, with a note), entries
 * in name order (the result does not depend on readdir), only *.log, *.txt, *.out, *.prof, *.prom
 * and *.json files (a *.json that is not an Inspector record is skipped with a note); a link to a
 * directory is followed, each directory read once (a link loop or a second path to one is
 * skipped with a note), links to files are skipped; at most RAIL_CALIB_MAX_FILES files and
 * directories in all. Used by `nccl-rail calibrate` and bench/tuner_eval. */
#ifndef NCCL_RAIL_CALIB_FILES_H
#define NCCL_RAIL_CALIB_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "measure/calib_job.h"
#include "measure/calib_log.h"

#define RAIL_CALIB_MAX_LOG_BYTES (64u << 20) /* nccl-tests output with NCCL INFO lines mixed in */
#define RAIL_CALIB_MAX_FILES     10000
#define RAIL_CALIB_MAX_DEPTH     8

struct rail_calib_logs {
    struct rail_calib_run *runs; /* one per log file read */
    int nruns, cap;
    int files;   /* files read */
    int skipped; /* directory entries that are not logs (other names, links, too deep) */
    /* Job measurements (calib_job.h) and the files they came from, by kind. */
    struct rail_job_set jobs;
    int files_prof, files_prom, files_json;
    int skipped_deep; /* directories deeper than RAIL_CALIB_MAX_DEPTH: not read */
    /* Optional, set before reading: one line per entry skipped for a reason worth saying (a
     * directory too deep or read before, a JSON file that is not Inspector's). */
    void (*note)(void *arg, const char *line);
    void *note_arg;
    /* Internal: directories read (each once), the output's inode. */
    struct rail_calib_dirid {
        dev_t dev;
        ino_t ino;
    } * dirs;
    int ndirs, dirs_cap;
    int out_known;
    dev_t out_dev;
    ino_t out_ino;
};

/* The file the command will write: an input with its inode (the same file, a hard link, a link
 * to it) is refused. 0, or -errno when it exists but cannot be examined. */
int rail_calib_logs_set_output(struct rail_calib_logs *l, const char *path);

/* Read one path: a file named here is always parsed (a FIFO is an error); a directory is walked.
 * hint: what the command line says about these files (NULL: nothing). 0, or a negative errno with
 * "FILE:LINE: reason" / "PATH: reason" in err; runs read before an error stay in l. */
int rail_calib_logs_add(struct rail_calib_logs *l, const char *path,
                        const struct rail_calib_hint *hint, char *err, size_t errlen);
void rail_calib_logs_free(struct rail_calib_logs *l);

#endif
