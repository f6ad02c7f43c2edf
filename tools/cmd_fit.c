/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail fit -o FILE [topology] INPUT ...: forced-pair measurements of one or more platforms
 * -> a trained tuner table (tuner-plugin/model/model_table.h) for NCCL_RAIL_MODEL_TABLE. What
 * bench/tuner_eval --fit does for the project's own table (tuner-fit/tuner_fit.h), with the
 * calibrate command's input rules: nccl-tests logs, job measurements and calibration files,
 * bounded, non-blocking, regular files only, FILE:LINE: reason on any malformed input (exit 1,
 * nothing written). Each INPUT is one system (its node count, its shape), measured on the
 * topology given before it. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_files.h"
#include "measure/calib_job.h"
#include "measure/calibration.h"
#include "cli.h"
#include "cli_topo.h"
#include "model/cost_model.h"
#include "model/model_table.h"
#include "safe_file.h"
#include "tuner_data.h"
#include "tuner_fit.h"

static void fit_usage(FILE *f)
{
    fprintf(
        f,
        "usage: nccl-rail fit -o FILE [options] TOPOLOGY INPUT ... [TOPOLOGY INPUT ...]\n"
        "Fits the tuner's trained table (step-model coefficients, residuals, covered shapes;\n"
        "docs/cost-model.md §12) on forced (algorithm, protocol) measurements and writes it\n"
        "for NCCL_RAIL_MODEL_TABLE (docs/calibration.md §9).\n"
        "  -o, --output FILE  the table to write (replaced atomically; only a regular file is\n"
        "                     replaced)\n"
        "topology of the INPUTs that follow (one of):\n"
        "  --profile NAME     built-in profile (dgx-a100, dgx-h100, hgx-b200, aws-p5, ...)\n"
        "  --topo-file FILE   NCCL topology XML of the node the INPUTs were measured on\n"
        "  --hwloc-xml FILE   hwloc XML export of that node\n"
        "  --topo-dir DIR     each INPUT named X (a directory, or a file X.ext) was measured on\n"
        "                     DIR/X.xml (the layout of test/fixtures/tuner-data)\n"
        "INPUT: an nccl-tests log, job measurements (as nccl-rail calibrate reads them), a\n"
        "  calibration file, or a directory of logs (read as calibrate reads it); each INPUT is\n"
        "  one system: give one per node count.\n"
        "options:\n"
        "  --coll C, --algo A, --proto P   as for calibrate, for the files that follow\n"
        "  --published CSV    published single-node sets that back the prior (cover records;\n"
        "                     test/fixtures/measurements/published.csv)\n"
        "  --margin M0,SLOPE,OUTSIDE,FADE_NODES,FADE_BYTES   the table's margins (default\n"
        "                     0.03,0.04,0.5,0.5,2: the embedded table's)\n"
        "Bounds: %d inputs (systems), %d measured points in all.\n",
        TD_MAX_SYSTEMS, TD_MAX_ROWS);
}

/* Whether the file at path is a calibration file (its first line that is neither blank nor a
 * comment is the calibration header). */
static bool is_calibration(const char *path)
{
    char buf[512];
    ssize_t n = rail_file_read_fixed(path, buf, sizeof(buf) - 1, RAIL_FILE_PARTIAL);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (char *p = buf; *p;) {
        char *e = strchr(p, '\n');
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p && *p != '\n' && *p != '#')
            return strncmp(p, RAIL_CALIB_FORMAT, strlen(RAIL_CALIB_FORMAT)) == 0;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* One INPUT's measured points as a calibration (calibrate's rules). 0, or 1 (message printed). */
static int read_input(const char *path, const struct rail_calib_hint *hint,
                      struct rail_calibration *cal)
{
    char err[4096 + 512];
    struct rail_calib_logs c = {0};
    int rc;

    if (is_calibration(path)) {
        if (rail_calib_load(path, cal, err, sizeof(err)) < 0) {
            fprintf(stderr, "fit: %s\n", err);
            return 1;
        }
        return 0;
    }
    if (rail_calib_logs_add(&c, path, hint, err, sizeof(err)) < 0) {
        fprintf(stderr, "fit: %s\n", err);
        rail_calib_logs_free(&c);
        return 1;
    }
    rc = rail_calib_from_runs(c.runs, c.nruns, cal);
    if (rc == 0 && c.jobs.n > 0) {
        struct rail_calib_row *rows = NULL;
        struct rail_job_summary js;
        int nrows = 0;
        rc = rail_job_merge(&c.jobs, &rows, &nrows, &js);
        if (rc == 0)
            rc = rail_calib_add_rows(cal, rows, nrows);
        free(rows);
    }
    rail_calib_logs_free(&c);
    if (rc < 0) {
        fprintf(stderr, "fit: %s: %s\n", path, strerror(-rc));
        return 1;
    }
    if (cal->n == 0) {
        fprintf(stderr, "fit: %s: no measured point\n", path);
        rail_calib_free(cal);
        return 1;
    }
    return 0;
}

/* The system's name: the INPUT's base name without its extension. */
static void system_name(const char *path, char *out, size_t len)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    snprintf(out, len, "%s", basename(buf));
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
}

static int add_input(struct td *d, const char *path, const struct rail_calib_hint *hint,
                     const struct cli_topo_opts *topt, const char *topo_dir)
{
    static struct rail_topo topo;
    struct rail_calibration cal;
    struct td_row *rows;
    char name[TD_NAME_LEN], xml[4096 + 64], err[4096 + 512];
    int rc;

    system_name(path, name, sizeof(name));
    if (topo_dir) {
        snprintf(xml, sizeof(xml), "%s/%s.xml", topo_dir, name);
        struct cli_topo_opts o = {.topo_file = xml};
        rc = cli_topo_load(&o, &topo, err, sizeof(err));
    } else if (topt->profile || topt->topo_file || topt->hwloc_xml) {
        rc = cli_topo_load(topt, &topo, err, sizeof(err));
    } else {
        fprintf(stderr,
                "fit: %s: no topology before it (--profile, --topo-file, --hwloc-xml or "
                "--topo-dir)\n",
                path);
        return 1;
    }
    if (rc < 0) {
        fprintf(stderr, "fit: %s: %s\n", path, err);
        return 1;
    }
    for (int k = 2; td_find(d, name) >= 0 && k < 1000; k++) {
        char base[TD_NAME_LEN];
        system_name(path, base, sizeof(base));
        snprintf(name, sizeof(name), "%.40s#%d", base, k);
    }
    if (read_input(path, hint, &cal) != 0)
        return 1;
    rows = calloc((size_t)cal.n, sizeof(*rows));
    if (!rows) {
        rail_calib_free(&cal);
        fprintf(stderr, "fit: out of memory\n");
        return 1;
    }
    for (int i = 0; i < cal.n; i++) {
        const struct rail_calib_row *r = &cal.rows[i];
        rows[i] = (struct td_row){.coll = r->coll,
                                  .nranks = r->nranks,
                                  .nnodes = r->nnodes,
                                  .algo = r->algo,
                                  .proto = r->proto,
                                  .bytes = (size_t)r->bytes,
                                  .time_us = r->time_us};
    }
    rc = td_add_system(d, name, &topo, rows, cal.n, err, sizeof(err));
    free(rows);
    rail_calib_free(&cal);
    if (rc < 0) {
        fprintf(stderr, "fit: %s: %s\n", path, err);
        return 1;
    }
    return 0;
}

/* The table text, checked the way the tuner reads it, then written by the output-file rule. */
static int write_table(const char *out, const struct rail_model_table *t, int inputs)
{
    char comment[200], err[4096 + 512], *text = NULL;
    size_t len = 0;
    struct rail_model_table check;
    struct rail_file_out o;
    FILE *m = open_memstream(&text, &len);
    int rc = m ? 0 : -errno;

    snprintf(comment, sizeof(comment),
             "written by nccl-rail fit from %d input(s) (docs/cost-model.md §12)", inputs);
    if (rc == 0) {
        rc = rail_model_table_write(t, comment, m);
        if (fclose(m) != 0 && rc == 0)
            rc = -errno;
    }
    if (rc == 0)
        rc = rail_model_table_parse(text, len, out, &check, err, sizeof(err));
    else
        snprintf(err, sizeof(err), "%s", strerror(-rc));
    rail_model_table_free(&check);
    if (rc == 0 && (rc = rail_file_out_open(&o, out, err, sizeof(err))) == 0) {
        fwrite(text, 1, len, o.f);
        rc = rail_file_out_commit(&o, err, sizeof(err));
    }
    free(text);
    if (rc < 0) {
        fprintf(stderr, "fit: cannot write %s\n", err);
        return 1;
    }
    return 0;
}

static int topo_arg(const char *a, const char *v, struct cli_topo_opts *t, const char **dir)
{
    if (!v) {
        fprintf(stderr, "fit: %s needs a value\n", a);
        return -EINVAL;
    }
    *t = (struct cli_topo_opts){0};
    *dir = NULL;
    if (strcmp(a, "--profile") == 0)
        t->profile = v;
    else if (strcmp(a, "--topo-file") == 0)
        t->topo_file = v;
    else if (strcmp(a, "--hwloc-xml") == 0)
        t->hwloc_xml = v;
    else
        *dir = v;
    return 0;
}

static int name_arg(const char *a, const char *v, int (*fn)(const char *, size_t), int *out)
{
    *out = v ? fn(v, strlen(v)) : -1;
    if (*out < 0) {
        fprintf(stderr, "fit: %s: unknown name '%s'\n", a, v ? v : "");
        return -EINVAL;
    }
    return 0;
}

int cli_fit(int argc, char **argv)
{
    struct rail_calib_hint hint = {-1, -1, -1};
    struct cli_topo_opts topt = {0};
    struct fit_opts fo;
    struct td *d = calloc(1, sizeof(*d));
    const char *out = NULL, *topo_dir = NULL;
    int rc = d ? 0 : 1, inputs = 0;

    fit_opts_default(&fo);
    for (int i = 1; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fit_usage(stdout);
            free(d);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            out = v;
            rc = v ? 0 : -EINVAL;
            i++;
        } else if (strcmp(a, "--profile") == 0 || strcmp(a, "--topo-file") == 0 ||
                   strcmp(a, "--hwloc-xml") == 0 || strcmp(a, "--topo-dir") == 0) {
            rc = topo_arg(a, v, &topt, &topo_dir);
            i++;
        } else if (strcmp(a, "--published") == 0) {
            fo.published = v;
            rc = v ? 0 : -EINVAL;
            i++;
        } else if (strcmp(a, "--margin") == 0) {
            rc = v &&
                         sscanf(v, "%f,%f,%f,%f,%f", &fo.margin[0], &fo.margin[1], &fo.margin[2],
                                &fo.margin[3], &fo.margin[4]) == 5 &&
                         fo.margin[0] >= 0.0f && fo.margin[3] > 0.0f && fo.margin[4] > 0.0f
                     ? 0
                     : -EINVAL;
            i++;
        } else if (strcmp(a, "--coll") == 0) {
            rc = name_arg(a, v, rail_calib_coll_exact, &hint.coll);
            i++;
        } else if (strcmp(a, "--algo") == 0) {
            rc = name_arg(a, v, rail_calib_algo_from_name, &hint.algo);
            i++;
        } else if (strcmp(a, "--proto") == 0) {
            rc = name_arg(a, v, rail_calib_proto_from_name, &hint.proto);
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "fit: unknown option '%s'\n", a);
            rc = -EINVAL;
        } else {
            inputs++;
            rc = add_input(d, a, &hint, &topt, topo_dir);
        }
    }
    if (rc == -EINVAL)
        fit_usage(stderr);
    if (rc == 0 && (!out || !inputs)) {
        fprintf(stderr, "fit: %s\n", !out ? "-o FILE is required" : "no input given");
        rc = -EINVAL;
    }
    if (rc != 0) {
        free(d);
        return rc == -EINVAL ? 2 : 1;
    }
    td_finish(d);
    struct rail_model_table t;
    fo.log = stdout;
    rc = tuner_fit(d, d->nsys >= 64 ? ~0ull : (1ull << d->nsys) - 1, &fo, &t) < 0 ? 1 : 0;
    if (rc == 0) {
        rc = write_table(out, &t, inputs);
        if (rc == 0)
            printf("fit: %d system(s), %d measured point(s): %d cover and %d residual record(s) "
                   "-> %s\n",
                   d->nsys, d->nrows, t.ncover, t.nresid, out);
        rail_model_table_free(&t);
    }
    free(d);
    return rc;
}
