/* SPDX-License-Identifier: Apache-2.0 */
/* Held-out evaluations: leave one system out, leave one P5 node count out, and the same node
 * counts calibrated from the other node counts' nccl-tests logs. Each held-out system is
 * replayed with a table fitted without it (cached: LOSO and LONO share the fits). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/calib_files.h"
#include "measure/calibration.h"
#include "tuner_eval.h"

static struct rail_model_table g_fold[TD_MAX_SYSTEMS];
static struct sys_result g_held[TD_MAX_SYSTEMS];
static bool g_done[TD_MAX_SYSTEMS];

static uint64_t all_mask(const struct td *d)
{
    return d->nsys >= 64 ? ~0ull : (1ull << d->nsys) - 1;
}

/* The table fitted without system s, and s replayed with it. */
int eval_held_out(struct eval_opts *e, const struct fit_opts *fo, int s)
{
    if (g_done[s]) {
        e->res[s] = g_held[s];
        return 0;
    }
    if (tuner_fit(e->d, all_mask(e->d) & ~(1ull << s), fo, &g_fold[s]) < 0)
        return -1;
    const struct rail_model_table *keep = e->table;
    e->table = &g_fold[s];
    int rc = eval_run(e, 1ull << s);
    e->table = keep;
    if (rc < 0)
        return -1;
    g_held[s] = e->res[s];
    g_done[s] = true;
    return 0;
}

static void print_held(struct eval_opts *e, uint64_t mask, const char *title)
{
    for (int s = 0; s < e->d->nsys; s++)
        if (mask >> s & 1)
            e->res[s] = g_held[s];
    eval_print(e, mask, title);
}

int eval_loso(struct eval_opts *e, const struct fit_opts *fo, bool check)
{
    uint64_t mask = 0;
    for (int s = 0; s < e->d->nsys; s++)
        if (eval_held_out(e, fo, s) == 0)
            mask |= 1ull << s;
    print_held(e, mask,
               "Leave one system out (each system replayed with a table fitted on the "
               "others)");
    if (mask != all_mask(e->d))
        return 1;
    /* Held out (ctest tuner_loso): no system more than half a point worse than NCCL, and the
     * per-system, pooled and p90 ratios within 0.12x, 0.12x, 0.05x (0.116x, 0.109x, 0.018x today;
     * issue 30's targets are 0.12x, 0.15x, 0.10x; the tree before the ring protocols were read
     * at the same bytes per rank beyond the trained node range gave 0.126x, 0.121x, 0.063x:
     * docs/cost-model.md §12.4, §12.6). */
    return check ? eval_check_bounds(e, mask, 0.12, 0.12, 0.05) : 0;
}

int eval_loso_dump(struct eval_opts *e, const struct fit_opts *fo)
{
    eval_dump_header();
    for (int s = 0; s < e->d->nsys; s++) {
        struct rail_model_table t;
        if (tuner_fit(e->d, all_mask(e->d) & ~(1ull << s), fo, &t) < 0)
            return -1;
        const struct rail_model_table *keep = e->table;
        e->table = &t;
        int rc = eval_dump_rows(e, 1ull << s);
        e->table = keep;
        rail_model_table_free(&t);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The P5 systems at gpn GPUs per node (p5_<nodes>x<gpn>_...). */
static uint64_t p5_group(const struct td *d, int gpn)
{
    char tag[16];
    uint64_t mask = 0;
    snprintf(tag, sizeof(tag), "x%d_", gpn);
    for (int s = 0; s < d->nsys; s++)
        if (strncmp(d->names[s], "p5_", 3) == 0 && strstr(d->names[s], tag))
            mask |= 1ull << s;
    return mask;
}

void eval_lono(struct eval_opts *e, const struct fit_opts *fo)
{
    static const int gpns[] = {1, 8};
    for (int i = 0; i < 2; i++) {
        uint64_t mask = p5_group(e->d, gpns[i]), done = 0;
        char title[160];
        for (int s = 0; s < e->d->nsys; s++)
            if (mask >> s & 1 && eval_held_out(e, fo, s) == 0)
                done |= 1ull << s;
        snprintf(title, sizeof(title),
                 "Leave one node count out (P5, %d GPU%s per node; fitted on all other data)",
                 gpns[i], gpns[i] > 1 ? "s" : "");
        print_held(e, done, title);
    }
}

/* The nccl-tests logs of the systems in mask, read as `nccl-rail calibrate` reads them, written
 * as a calibration file to out. */
static int write_calibration(const struct eval_opts *e, uint64_t mask, const char *out)
{
    struct rail_calib_logs logs = {0};
    struct rail_calibration cal = {0};
    char dir[2048], err[512];
    int rc = 0;
    FILE *f;

    for (int s = 0; s < e->d->nsys && rc == 0; s++)
        if (mask >> s & 1) {
            snprintf(dir, sizeof(dir), "%s/nccl-tests/%s", e->data, e->d->names[s]);
            if ((rc = rail_calib_logs_add(&logs, dir, NULL, err, sizeof(err))) < 0)
                fprintf(stderr, "tuner_eval: %s\n", err);
        }
    if (rc == 0)
        rc = rail_calib_from_runs(logs.runs, logs.nruns, &cal);
    rail_calib_logs_free(&logs);
    if (rc == 0 && !(f = fopen(out, "w")))
        rc = -errno;
    else if (rc == 0) {
        rc = rail_calib_write(&cal, "tuner_eval --calibrated", f);
        if (fclose(f) != 0 && rc == 0)
            rc = -EIO;
    }
    rail_calib_free(&cal);
    return rc;
}

/* A reference for what any calibration can hope for at a held-out node count: the pair chosen
 * from measurements of the same sweep at the same node count, only the size itself held out
 * (each pair's log time averaged over the measured sizes just below and above it; the lowest
 * wins). Its mean regret over replay's points (those with two pairs or more, in replay's order);
 * a point with no neighbour measured keeps NCCL's regret (nccl[]). Not a bound: it shows how far
 * a winner can be from its neighbours' (single noisy measurements), which no interpolation
 * across node counts is likely to recover either. */
static double same_count_reference(const struct td *d, int s, const double *nccl, int npoints)
{
    double sum = 0.0;
    int idx = 0;
    for (int k = d->lo[s]; k < d->hi[s];) {
        int m = td_shape_end(d, k), prev = -1;
        for (int i = k; i < m;) {
            int j = td_point_end(d, i), next = j < m ? j : -1,
                next_end = next < 0 ? -1 : td_point_end(d, next);
            int best = i, pick = -1;
            double pick_est = 0.0;
            for (int r = i; r < j; r++) {
                double est = 0.0;
                int nest = 0;
                const int lo[2] = {prev, next}, hi[2] = {prev < 0 ? -1 : i, next_end};
                for (int side = 0; side < 2; side++)
                    for (int q = lo[side]; q >= 0 && q < hi[side]; q++)
                        if (d->rows[q].algo == d->rows[r].algo &&
                            d->rows[q].proto == d->rows[r].proto) {
                            est += log(d->rows[q].time_us);
                            nest++;
                        }
                if (nest && (pick < 0 || est / nest < pick_est)) {
                    pick = r;
                    pick_est = est / nest;
                }
                if (d->rows[r].time_us < d->rows[best].time_us)
                    best = r;
            }
            if (j - i >= 2 && idx < npoints) {
                sum += pick < 0 ? nccl[idx] : d->rows[pick].time_us / d->rows[best].time_us - 1.0;
                idx++;
            }
            prev = i;
            i = j;
        }
        k = m;
    }
    return idx ? sum / idx : 0.0;
}

/* Node count s of the group replayed with table t and a calibration from the group's other node
 * counts (written to path). True when it ran. */
static bool replay_calibrated(struct eval_opts *e, const struct rail_model_table *t, uint64_t group,
                              int s, const char *path)
{
    if (write_calibration(e, group & ~(1ull << s), path) < 0)
        return false;
    const struct rail_model_table *keep = e->table;
    e->table = t;
    e->calib_path = path;
    int rc = eval_run(e, 1ull << s);
    e->calib_path = NULL;
    e->table = keep;
    return rc == 0;
}

/* A platform the table never saw: the table fitted without any sweep of the group (mask), each
 * node count calibrated from the group's other node counts. The table alone leaves NCCL's choice
 * there (do no harm outside what it was fitted on); the calibration must never make a held-out
 * node count worse than NCCL by more than half a point (the default model's bound). Returns the
 * number of node counts where it does (CHECK lines), or 1 when the fit fails. */
static int new_platform(struct eval_opts *e, const struct fit_opts *fo, uint64_t mask, int gpn,
                        const char *path)
{
    struct rail_model_table t;
    uint64_t done = 0;
    int bad = 0;
    char title[200];

    static double alone[TD_MAX_SYSTEMS];
    if (tuner_fit(e->d, all_mask(e->d) & ~mask, fo, &t) < 0)
        return 1;
    const struct rail_model_table *keep = e->table;
    e->table = &t; /* the table alone, no calibration */
    if (eval_run(e, mask) < 0)
        mask = 0;
    e->table = keep;
    for (int s = 0; s < e->d->nsys; s++)
        alone[s] = mask >> s & 1 ? eval_mean(e->res[s].proj, e->res[s].n) : 0.0;
    for (int s = 0; s < e->d->nsys; s++)
        if (mask >> s & 1 && replay_calibrated(e, &t, mask, s, path))
            done |= 1ull << s;
    rail_model_table_free(&t);
    snprintf(title, sizeof(title),
             "Calibrated, a platform the table never saw (P5, %d GPU%s per node: table fitted "
             "without any of its sweeps + calibration from the other node counts)",
             gpn, gpn > 1 ? "s" : "");
    eval_print(e, done, title);
    double sc = 0.0, sn = 0.0, sa = 0.0;
    for (int s = 0; s < e->d->nsys; s++) {
        if (!(done >> s & 1))
            continue;
        double cal = eval_mean(e->res[s].proj, e->res[s].n);
        double nccl = eval_mean(e->res[s].nccl, e->res[s].n);
        printf("%-16s new platform: calibrated %.2f%%, table alone %.2f%%, NCCL %.2f%% "
               "(calibrated / NCCL %.2f)\n",
               e->d->names[s], 100.0 * cal, 100.0 * alone[s], 100.0 * nccl,
               nccl > 0 ? cal / nccl : 0.0);
        sc += cal;
        sn += nccl;
        sa += alone[s];
        if (cal > nccl + 0.005) {
            printf("CHECK: %s (new platform): calibrated %.2f%% worse than NCCL's %.2f%%\n",
                   e->d->names[s], 100.0 * cal, 100.0 * nccl);
            bad++;
        }
    }
    printf("new platform, %d GPU%s per node, per-system mean: calibrated / NCCL %.2f, table alone "
           "/ NCCL %.2f\n\n",
           gpn, gpn > 1 ? "s" : "", sn > 0 ? sc / sn : 0.0, sn > 0 ? sa / sn : 0.0);
    /* Issue 30 item 5: 8 GPUs per node, calibrated from two node counts, at most 0.7x NCCL's
     * mean regret over the held-out node counts (1.00 before carried ratios; calib_apply.h). */
    if (gpn == 8 && done && sc > 0.7 * sn + 1e-9) {
        printf("CHECK: new platform, 8 GPUs per node: calibrated %.2fx NCCL's mean regret, "
               "above 0.7x\n",
               sc / sn);
        bad++;
    }
    return bad;
}

int eval_calibrated(struct eval_opts *e, const struct fit_opts *fo)
{
    int worse = 0;
    static const int gpns[] = {1, 8};
    char path[] = "/tmp/tuner_eval_calib_XXXXXX";
    int fd = mkstemp(path);

    if (fd < 0) {
        perror("tuner_eval: mkstemp");
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        uint64_t mask = p5_group(e->d, gpns[i]), done = 0;
        char title[200];
        for (int s = 0; s < e->d->nsys; s++)
            if (mask >> s & 1 && eval_held_out(e, fo, s) == 0 &&
                replay_calibrated(e, &g_fold[s], mask, s, path))
                done |= 1ull << s;
        snprintf(title, sizeof(title),
                 "Calibrated, leave one node count out (P5, %d GPU%s per node; table fitted "
                 "without it + calibration from the other node counts' nccl-tests logs)",
                 gpns[i], gpns[i] > 1 ? "s" : "");
        eval_print(e, done, title);
        for (int s = 0; s < e->d->nsys; s++) {
            if (!(done >> s & 1))
                continue;
            double cal = eval_mean(e->res[s].proj, e->res[s].n);
            double table = eval_mean(g_held[s].proj, g_held[s].n);
            double nccl = eval_mean(e->res[s].nccl, e->res[s].n);
            double ref = same_count_reference(e->d, s, e->res[s].nccl, e->res[s].n);
            printf("%-16s calibrated / NCCL mean regret: %.3f (calibrated %.2f%%, held-out table "
                   "alone %.2f%%); same node count, size held out: %.2f%% = %.3f x NCCL\n",
                   e->d->names[s], cal / nccl, 100.0 * cal, 100.0 * table, 100.0 * ref,
                   nccl > 0 ? ref / nccl : 0.0);
            /* A calibration from other node counts never makes the held-out node count worse
             * than the table without it. */
            if (cal > table + 1e-9) {
                printf("CHECK: %s: calibrated %.3f%% worse than the held-out table's %.3f%%\n",
                       e->d->names[s], 100.0 * cal, 100.0 * table);
                worse++;
            }
        }
        printf("\n");
        worse += new_platform(e, fo, mask, gpns[i], path);
    }
    close(fd);
    unlink(path);
    return worse;
}

/* At calibrated points a calibration never makes a choice worse than the default table's: each
 * P5 sweep calibrated from its own logs, every measured point compared (ctest tuner_calibration).
 * 0 when it holds. */
int eval_check_calibrated_points(struct eval_opts *e)
{
    static const int gpns[] = {1, 8};
    static struct sys_result base[TD_MAX_SYSTEMS];
    char path[] = "/tmp/tuner_eval_calib_XXXXXX";
    int fd = mkstemp(path), worse = 0, better = 0, points = 0;
    if (fd < 0) {
        perror("tuner_eval: mkstemp");
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        uint64_t mask = p5_group(e->d, gpns[i]);
        if (eval_run(e, mask) < 0 || write_calibration(e, mask, path) < 0)
            return 1;
        memcpy(base, e->res, sizeof(base));
        e->calib_path = path;
        int rc = eval_run(e, mask);
        e->calib_path = NULL;
        if (rc < 0)
            return 1;
        for (int s = 0; s < e->d->nsys; s++)
            for (int k = 0; mask >> s & 1 && k < e->res[s].n; k++) {
                points++;
                if (e->res[s].proj[k] > base[s].proj[k] + 1e-9) {
                    printf("CHECK: %s point %d: calibrated regret %.3f, default %.3f\n",
                           e->d->names[s], k, e->res[s].proj[k], base[s].proj[k]);
                    worse++;
                }
                better += e->res[s].proj[k] < base[s].proj[k] - 1e-9;
            }
    }
    close(fd);
    unlink(path);
    printf("calibrated points: %d, worse than the default table %d, better %d\n", points, worse,
           better);
    return worse ? 1 : 0;
}
