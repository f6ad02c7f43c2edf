/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail calibrate -o FILE [--coll C] [--algo A --proto P] LOG|DIR ...
 * nccl-tests logs of forced (algorithm, protocol) runs -> a calibration file
 * (NCCL_RAIL_CALIBRATION_FILE, docs/calibration.md). Files and directories are read by
 * calib_files.h (bounded, non-blocking, regular files only, name order). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib_files.h"
#include "calibration.h"
#include "cli.h"
#include "cost_model.h"
#include "safe_file.h"

static void calibrate_usage(FILE *f)
{
    fprintf(
        f,
        "usage: nccl-rail calibrate -o FILE [--coll C] [--algo A] [--proto P] LOG|DIR ...\n"
        "Reads nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
        "broadcast_perf, reduce_perf) of runs with NCCL_ALGO/NCCL_PROTO forced and writes a\n"
        "calibration file for NCCL_RAIL_CALIBRATION_FILE (docs/calibration.md).\n"
        "  -o, --output FILE  the calibration file to write (replaced atomically; only a\n"
        "                     regular file is replaced: a FIFO, device or link is refused)\n"
        "  --coll C           collective of the files that follow, when neither a\n"
        "                     '# Collective test starting' line nor the file name says\n"
        "  --algo A           forced algorithm of the files that follow, for logs without a\n"
        "                     '# NCCL_ALGO=A' line (Ring, Tree, PAT, NVLS, NVLSTree, ...)\n"
        "  --proto P          forced protocol of the files that follow (LL, LL128, Simple)\n"
        "Directories are read %d levels deep; only their *.log, *.txt and *.out files are\n"
        "read. Any malformed log stops the command with FILE:LINE: reason and writes nothing.\n",
        RAIL_CALIB_MAX_DEPTH);
}

/* The file text in memory, checked the way the tuner reads it, then written by the output-file
 * rule (safe_file.h: a regular file or nothing is replaced, anything else is refused). 0, or 1
 * with the reason on stderr. */
static int write_output(const char *out, const struct rail_calibration *cal, int files)
{
    char comment[128], err[4096 + 512];
    char *text = NULL;
    size_t len = 0;
    struct rail_calibration check;
    struct rail_file_out o;
    FILE *m = open_memstream(&text, &len);
    int rc = m ? 0 : -errno;

    snprintf(comment, sizeof(comment), "written by nccl-rail calibrate from %d nccl-tests log(s)",
             files);
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

int cli_calibrate(int argc, char **argv)
{
    struct rail_calib_hint hint = {-1, -1, -1};
    struct rail_calib_logs c = {0};
    char err[512];
    struct rail_calibration cal;
    struct rail_calib_cover cv;
    const char *out = NULL;
    int rc = 0, paths = 0, files, skipped;

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
    if (rc == 0 && c.nruns == 0) {
        fprintf(stderr, "calibrate: no nccl-tests log found (%d file(s) skipped)\n", c.skipped);
        rc = 1;
    }
    if (rc != 0) {
        rail_calib_logs_free(&c);
        return rc == -EINVAL ? 2 : 1;
    }
    rc = rail_calib_from_runs(c.runs, c.nruns, &cal);
    files = c.files;
    skipped = c.skipped;
    rail_calib_logs_free(&c);
    if (rc < 0)
        fprintf(stderr, "calibrate: %s\n", strerror(-rc));
    if (rc < 0 || write_output(out, &cal, files) != 0) {
        rail_calib_free(&cal);
        return 1;
    }
    rail_calib_cover(&cal, &cv);
    printf("calibrate: %d log(s)%s: %d point(s), %d shape(s), %d pair(s), %d-%d node(s), "
           "%d-%d rank(s)/node, %llu-%llu bytes -> %s\n",
           files, skipped ? " (other files skipped)" : "", cv.rows, cv.shapes, cv.pairs,
           cv.nnodes_min, cv.nnodes_max, cv.rpn_min, cv.rpn_max, (unsigned long long)cv.bytes_min,
           (unsigned long long)cv.bytes_max, out);
    rail_calib_free(&cal);
    return 0;
}
