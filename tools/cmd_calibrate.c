/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail calibrate -o FILE [--coll C] [--algo A --proto P] LOG|DIR ...
 * nccl-tests logs of forced (algorithm, protocol) runs and measurements of production jobs (the
 * rail profiler's files, NCCL Inspector's Prometheus textfile and JSON; calib_job.h) -> a
 * calibration file (NCCL_RAIL_CALIBRATION_FILE, docs/calibration.md). Files and directories are
 * read by calib_files.h (bounded, non-blocking, regular files only, name order). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/calib_files.h"
#include "measure/calib_job.h"
#include "measure/calib_thin.h"
#include "measure/calibration.h"
#include "cli.h"
#include "model/cost_model.h"
#include "safe_file.h"

static void calibrate_usage(FILE *f)
{
    fprintf(f,
            "usage: nccl-rail calibrate -o FILE [--coll C] [--algo A] [--proto P] LOG|DIR ...\n"
            "Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
            "broadcast_perf, reduce_perf) of runs with NCCL_ALGO/NCCL_PROTO forced, and what\n"
            "production jobs measured: the rail profiler's files (NCCL_RAIL_PROFILE_DIR), NCCL\n"
            "Inspector's Prometheus textfile (algo_proto) and JSON (with --algo/--proto), and\n"
            "writes a calibration file for NCCL_RAIL_CALIBRATION_FILE (docs/calibration.md).\n"
            "Job measurements: the slowest rank is a collective's time, the median over its\n"
            "repetitions a run's, the fastest run a point's. A series with more than %d sizes\n"
            "is merged into log-spaced buckets (said in one line).\n"
            "  -o, --output FILE  the calibration file to write (replaced atomically; only a\n"
            "                     regular file is replaced: a FIFO, device or link is refused)\n"
            "  --coll C           collective of the files that follow, when neither a\n"
            "                     '# Collective test starting' line nor the file name says\n"
            "  --algo A           forced algorithm of the files that follow, for logs without a\n"
            "                     '# NCCL_ALGO=A' line and Inspector JSON (Ring, Tree, PAT, ...)\n"
            "  --proto P          forced protocol of the files that follow (LL, LL128, Simple)\n"
            "Directories are read %d levels deep (links to directories followed, each read\n"
            "once); only their *.log, *.txt, *.out, *.prof, *.prom and *.json files are read\n"
            "(a *.json that is not an Inspector record is skipped with a note). Any malformed\n"
            "file stops the command with FILE:LINE: reason and writes nothing; an input that\n"
            "is the output file is refused.\n",
            RAIL_CALIB_MAX_POINTS, RAIL_CALIB_MAX_DEPTH);
}

/* The file text in memory, checked the way the tuner reads it, then written by the output-file
 * rule (safe_file.h: a regular file or nothing is replaced, anything else is refused). 0, or 1
 * with the reason on stderr. */
static int write_output(const char *out, const struct rail_calibration *cal, int logs, int jobs)
{
    char comment[160], err[4096 + 512];
    char *text = NULL;
    size_t len = 0;
    struct rail_calibration check;
    struct rail_file_out o;
    FILE *m = open_memstream(&text, &len);
    int rc = m ? 0 : -errno;

    if (jobs)
        snprintf(comment, sizeof(comment),
                 "written by nccl-rail calibrate from %d nccl-tests log(s) and %d job measurement "
                 "file(s)",
                 logs, jobs);
    else
        snprintf(comment, sizeof(comment),
                 "written by nccl-rail calibrate from %d nccl-tests log(s)", logs);
    if (rc == 0) {
        rc = rail_calib_write(cal, comment, m);
        if (fclose(m) != 0 && rc == 0)
            rc = -errno;
    }
    if (rc < 0) {
        fprintf(stderr, "calibrate: %s\n", strerror(-rc));
        free(text);
        return 1;
    }
    /* Never write a file the tuner would refuse. */
    rc = len > RAIL_CALIB_MAX_FILE ? -EFBIG
                                   : rail_calib_parse(text, len, out, &check, err, sizeof(err));
    rail_calib_free(&check);
    if (rc < 0) {
        fprintf(stderr, "calibrate: the result is not a valid calibration: %s\n",
                rc == -EFBIG ? "larger than the tuner reads (RAIL_CALIB_MAX_FILE)" : err);
        free(text);
        return 1;
    }
    rc = rail_file_out_open(&o, out, err, sizeof(err));
    if (rc == 0) {
        fwrite(text, 1, len, o.f);
        rc = rail_file_out_commit(&o, err, sizeof(err));
    }
    free(text);
    if (rc < 0) {
        fprintf(stderr, "calibrate: cannot write %s\n", err);
        return 1;
    }
    return 0;
}

static int parse_name_arg(const char *opt, const char *v, int (*fn)(const char *, size_t), int *out)
{
    if (!v) {
        fprintf(stderr, "calibrate: %s needs a value\n", opt);
        return -EINVAL;
    }
    *out = fn(v, strlen(v));
    if (*out < 0) {
        fprintf(stderr, "calibrate: %s: unknown name '%s'\n", opt, v);
        return -EINVAL;
    }
    return 0;
}

static void say_note(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "calibrate: note: %s\n", line);
}

/* One line saying which series were merged into log-spaced buckets (calib_thin.h). */
static void say_thinned(const char *what, const struct rail_calib_thinning *t)
{
    if (t->series)
        printf(
            "calibrate: %s: %ld sizes of %d series merged into %d log-spaced buckets (%d or more "
            "per octave, weighted by collectives measured): a calibration holds at most %d sizes "
            "per node count\n",
            what, t->sizes_in, t->series, t->sizes_out, t->per_octave, RAIL_CALIB_MAX_POINTS);
}

/* Every series of cal within RAIL_CALIB_MAX_POINTS sizes (nccl-tests logs of many sizes, job
 * measurements next to nccl-tests sizes): 0 or -ENOMEM. */
static int thin_all(struct rail_calibration *cal)
{
    struct rail_calib_thinning t;
    struct rail_calibration fresh = {0};
    int n = cal->n, rc = rail_calib_thin(cal->rows, NULL, &n, &t);
    if (rc < 0 || t.series == 0)
        return rc;
    rc = rail_calib_add_rows(&fresh, cal->rows, n); /* sorted the calibration's way */
    if (rc < 0)
        return rc;
    rail_calib_free(cal);
    *cal = fresh;
    say_thinned("all measurements", &t);
    return 0;
}

/* The job measurements' rows into cal (calib_job.h), and one line saying what they gave. */
static int add_jobs(struct rail_calib_logs *c, struct rail_calibration *cal)
{
    struct rail_calib_row *rows;
    struct rail_job_summary js;
    int nrows, rc = rail_job_merge(&c->jobs, &rows, &nrows, &js);
    if (rc == 0)
        rc = rail_calib_add_rows(cal, rows, nrows);
    free(rows);
    if (rc < 0)
        return rc;
    printf("calibrate: job measurements from %d profiler, %d Inspector Prometheus and %d Inspector "
           "JSON file(s): %d run(s), %ld collective(s) recorded by every rank of their run, %d "
           "point(s)",
           c->files_prof, c->files_prom, c->files_json, js.runs, js.instances, js.points);
    if (js.incomplete || js.uneven)
        printf("; left out: %ld not recorded by every rank, %ld of uneven ranks per node",
               js.incomplete, js.uneven);
    if (c->jobs.skips.other || c->jobs.skips.no_pair || c->jobs.skips.no_time ||
        c->jobs.skips.no_size || c->jobs.skips.nonfinite)
        printf("; skipped: %ld not decided by a tuner, %ld without an algorithm/protocol, %ld "
               "without a GPU time, %ld of 0 bytes, %ld not a number (NaN, +Inf, -Inf)",
               c->jobs.skips.other, c->jobs.skips.no_pair, c->jobs.skips.no_time,
               c->jobs.skips.no_size, c->jobs.skips.nonfinite);
    printf("\n");
    say_thinned("job measurements", &js.thin);
    if (js.partial_runs)
        fprintf(stderr,
                "calibrate: %d run(s) have files of fewer ranks than they have: the slowest rank "
                "may be missing\n",
                js.partial_runs);
    return 0;
}

int cli_calibrate(int argc, char **argv)
{
    struct rail_calib_hint hint = {-1, -1, -1};
    struct rail_calib_logs c = {0};
    char err[512];
    struct rail_calibration cal;
    struct rail_calib_cover cv;
    const char *out = NULL;
    int rc = 0, paths = 0, logs, jobs, skipped;

    /* The output first, wherever it is given: an input with its inode is refused. */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            int orc = rail_calib_logs_set_output(&c, argv[i + 1]);
            if (orc < 0) {
                fprintf(stderr, "calibrate: %s: %s\n", argv[i + 1], strerror(-orc));
                return 1;
            }
            break;
        } else if (strcmp(argv[i], "--coll") == 0 || strcmp(argv[i], "--algo") == 0 ||
                   strcmp(argv[i], "--proto") == 0) {
            i++;
        }
    c.note = say_note;
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            calibrate_usage(stdout);
            rail_calib_logs_free(&c);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (!v) {
                fprintf(stderr, "calibrate: %s needs a file\n", a);
                rc = -EINVAL;
            }
            out = v;
            i++;
        } else if (strcmp(a, "--coll") == 0) {
            rc = parse_name_arg(a, v, rail_calib_coll_exact, &hint.coll);
            i++;
        } else if (strcmp(a, "--algo") == 0) {
            rc = parse_name_arg(a, v, rail_calib_algo_from_name, &hint.algo);
            i++;
        } else if (strcmp(a, "--proto") == 0) {
            rc = parse_name_arg(a, v, rail_calib_proto_from_name, &hint.proto);
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "calibrate: unknown option '%s'\n", a);
            calibrate_usage(stderr);
            rc = -EINVAL;
        } else {
            paths++;
            if (rail_calib_logs_add(&c, a, &hint, err, sizeof(err)) < 0) {
                fprintf(stderr, "calibrate: %s\n", err);
                rc = 1;
            }
        }
    }
    if (rc == 0 && (!out || !paths)) {
        fprintf(stderr, "calibrate: %s\n", !out ? "-o FILE is required" : "no log given");
        rc = -EINVAL;
    }
    if (rc == 0 && c.nruns == 0 && c.jobs.n == 0) {
        if (c.files_prof + c.files_prom + c.files_json > 0)
            fprintf(stderr,
                    "calibrate: the job measurement file(s) hold no usable collective (%ld not "
                    "decided by a tuner, %ld without an algorithm/protocol, %ld without a GPU "
                    "time, %ld of 0 bytes, %ld not a number)\n",
                    c.jobs.skips.other, c.jobs.skips.no_pair, c.jobs.skips.no_time,
                    c.jobs.skips.no_size, c.jobs.skips.nonfinite);
        else if (c.skipped_deep)
            fprintf(stderr,
                    "calibrate: no nccl-tests log found (%d file(s) skipped; %d director(ies) "
                    "deeper than %d levels not read: name them)\n",
                    c.skipped, c.skipped_deep, RAIL_CALIB_MAX_DEPTH);
        else
            fprintf(stderr, "calibrate: no nccl-tests log found (%d file(s) skipped)\n", c.skipped);
        rc = 1;
    }
    if (rc != 0) {
        rail_calib_logs_free(&c);
        return rc == -EINVAL ? 2 : 1;
    }
    rc = rail_calib_from_runs(c.runs, c.nruns, &cal);
    if (rc == 0 && c.jobs.n > 0)
        rc = add_jobs(&c, &cal);
    if (rc == 0)
        rc = thin_all(&cal);
    jobs = c.files_prof + c.files_prom + c.files_json;
    logs = c.files - jobs;
    skipped = c.skipped;
    rail_calib_logs_free(&c);
    if (rc < 0)
        fprintf(stderr, "calibrate: %s\n", strerror(-rc));
    if (rc == 0 && cal.n == 0) {
        fprintf(stderr, "calibrate: no point to write\n");
        rc = 1;
    }
    if (rc != 0 || write_output(out, &cal, logs, jobs) != 0) {
        rail_calib_free(&cal);
        return 1;
    }
    rail_calib_cover(&cal, &cv);
    printf("calibrate: %d log(s)%s%s: %d point(s), %d shape(s), %d pair(s), %d-%d node(s), "
           "%d-%d rank(s)/node, %llu-%llu bytes -> %s\n",
           logs, jobs ? " and job measurements" : "", skipped ? " (other files skipped)" : "",
           cv.rows, cv.shapes, cv.pairs, cv.nnodes_min, cv.nnodes_max, cv.rpn_min, cv.rpn_max,
           (unsigned long long)cv.bytes_min, (unsigned long long)cv.bytes_max, out);
    rail_calib_free(&cal);
    return 0;
}
