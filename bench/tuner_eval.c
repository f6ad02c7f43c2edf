/* SPDX-License-Identifier: Apache-2.0 */
/* Regret of the tuner's choices against forced-(algorithm, protocol) measurements
 * (test/fixtures/tuner-data/measurements.csv), with NCCL 2.28.9's default as the anchor.
 *
 * Every point (system, collective, ranks, nodes, size) with at least two measured pairs is replayed
 * as an ABI client would: the tuner is built for the system's NCCL topology file
 * (topo/<system>.xml) and communicator (rail_tuner_create), then offered a cost table in which only
 * the measured pairs are not IGNORE, holding NCCL's own predicted times (rail_tuner_apply); its
 * choice is the entry it set to 0. NCCL's default is the offered pair with the lowest time by
 * NCCL's model. Regret = measured time of the choice / best measured time - 1.
 *
 * usage: tuner_eval [--data DIR] [--dump] [--prior] [--fit] [--loso] [--lono] [--calibrated]
 *                   [--check]
 *   --dump: one CSV line per (point, pair): measured and both models' predictions.
 *   --calibrated: leave one node count out with a calibration (docs/calibration.md §6): each P5
 *   1-GPU/node system replayed with the shipped model plus NCCL_RAIL_CALIBRATION_FILE made (by
 *   `nccl-rail calibrate`'s reader) from the nccl-tests logs of the other node counts only. */
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "calib_files.h"
#include "tuner_core.h"

#define MAX_ROWS    8192
#define MAX_SYSTEMS 32
#define NAME_LEN    48

struct row {
    char system[NAME_LEN];
    int coll, nranks, nnodes, algo, proto;
    size_t bytes;
    double time_us;
};

static struct row rows[MAX_ROWS];
static int nrows;

static int find_name(const char *s, const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, name(i)) == 0)
            return i;
    return -1;
}

static int load_csv(const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tuner_eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int lineno = 1; fgets(line, sizeof(line), f); lineno++) {
        char *fl[9], *save = NULL, *p = line;
        int n = 0;
        if (lineno == 1)
            continue;
        for (char *tok; n < 9 && (tok = strtok_r(p, ",\n", &save)); p = NULL)
            fl[n++] = tok;
        if (n < 8 || nrows == MAX_ROWS)
            goto bad;
        struct row *r = &rows[nrows];
        snprintf(r->system, sizeof(r->system), "%s", fl[0]);
        r->coll = find_name(fl[1], rail_coll_name, RAIL_NUM_COLLS);
        r->nranks = atoi(fl[2]);
        r->nnodes = atoi(fl[3]);
        r->bytes = strtoull(fl[4], NULL, 10);
        r->algo = find_name(fl[5], rail_algo_name, NCCL_NUM_ALGORITHMS);
        r->proto = find_name(fl[6], rail_proto_name, NCCL_NUM_PROTOCOLS);
        r->time_us = strtod(fl[7], NULL);
        if (r->coll < 0 || r->algo < 0 || r->proto < 0 || r->nranks < 1 || r->nnodes < 1 ||
            !(r->time_us > 0))
            goto bad;
        nrows++;
        continue;
    bad:
        fprintf(stderr, "tuner_eval: %s:%d: bad row\n", path, lineno);
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->system, y->system);
    if (c)
        return c;
    if (x->coll != y->coll)
        return x->coll - y->coll;
    if (x->nnodes != y->nnodes)
        return x->nnodes - y->nnodes;
    if (x->nranks != y->nranks)
        return x->nranks - y->nranks;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return (x->algo * 3 + x->proto) - (y->algo * 3 + y->proto);
}

static bool same_point(const struct row *a, const struct row *b)
{
    return strcmp(a->system, b->system) == 0 && a->coll == b->coll && a->nnodes == b->nnodes &&
           a->nranks == b->nranks && a->bytes == b->bytes;
}

struct sys_result {
    char name[NAME_LEN];
    int n;
    double *proj, *nccl; /* regrets per point */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double p90(double *v, int n)
{
    double *c = malloc(sizeof(double) * (size_t)(n ? n : 1));
    double r;
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    r = n ? c[(int)ceil(0.9 * n) - 1] : 0.0;
    free(c);
    return r;
}

static double mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0.0;
}

/* Replays the points [lo, hi) of one (system, coll, shape) on tuner tu. */
static void replay(struct rail_tuner *tu, int lo, int hi, struct sys_result *sr, bool dump)
{
    for (int i = lo; i < hi;) {
        int j = i, best = i, nccl = -1, proj = -1;
        float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], nbest = -1.0f;
        while (j < hi && same_point(&rows[i], &rows[j]))
            j++;
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                table[a][p] = NCCL_ALGO_PROTO_IGNORE;
        for (int k = i; k < j; k++) {
            const struct row *r = &rows[k];
            float t = rail_model_nccl_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1);
            table[r->algo][r->proto] = t >= 0.0f ? t : 1e30f;
            if (t >= 0.0f && (nbest < 0.0f || t < nbest)) {
                nbest = t;
                nccl = k;
            }
            if (r->time_us < rows[best].time_us)
                best = k;
        }
        if (nccl < 0)
            nccl = i;
        rail_tuner_apply(tu, rows[i].coll, rows[i].bytes, 1, 0, table, NULL);
        for (int k = i; k < j; k++) {
            float v = table[rows[k].algo][rows[k].proto];
            if (proj < 0 || v < table[rows[proj].algo][rows[proj].proto])
                proj = k;
        }
        if (j - i >= 2) {
            sr->proj[sr->n] = rows[proj].time_us / rows[best].time_us - 1.0;
            sr->nccl[sr->n] = rows[nccl].time_us / rows[best].time_us - 1.0;
            sr->n++;
        }
        if (dump)
            for (int k = i; k < j; k++) {
                const struct row *r = &rows[k];
                printf("%s,%s,%d,%d,%zu,%s,%s,%.2f,%.2f,%.2f,%d,%d\n", r->system,
                       rail_coll_name(r->coll), r->nranks, r->nnodes, r->bytes,
                       rail_algo_name(r->algo), rail_proto_name(r->proto), r->time_us,
                       rail_model_nccl_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1),
                       rail_model_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1),
                       k == nccl, k == proj);
            }
        i = j;
    }
}

/* Topologies, loaded once per system. */
static struct rail_topo topos[MAX_SYSTEMS];
static char sys_names[MAX_SYSTEMS][NAME_LEN];
static int sys_lo[MAX_SYSTEMS], sys_hi[MAX_SYSTEMS];
static int nsys;
static struct sys_result results[MAX_SYSTEMS];

static int index_systems(const char *data)
{
    char path[1024], err[256];
    for (int i = 0; i < nrows;) {
        int j = i;
        while (j < nrows && strcmp(rows[j].system, rows[i].system) == 0)
            j++;
        if (nsys == MAX_SYSTEMS)
            return -1;
        snprintf(sys_names[nsys], NAME_LEN, "%s", rows[i].system);
        sys_lo[nsys] = i;
        sys_hi[nsys] = j;
        snprintf(path, sizeof(path), "%s/topo/%s.xml", data, rows[i].system);
        if (rail_topo_load_nccl_xml(path, &topos[nsys], err, sizeof(err)) < 0) {
            fprintf(stderr, "tuner_eval: %s\n", err);
            return -1;
        }
        results[nsys].proj = calloc((size_t)(j - i), sizeof(double));
        results[nsys].nccl = calloc((size_t)(j - i), sizeof(double));
        snprintf(results[nsys].name, NAME_LEN, "%s", rows[i].system);
        nsys++;
        i = j;
    }
    return 0;
}

/* The calibration file every tuner is created with ("": none, whatever the environment says). */
static const char *g_calib_path = "";

/* Replays every system whose bit is set in mask with the corrections fit (NULL: shipped). */
static int evaluate(const struct rail_model_fit *fit, uint64_t mask, bool dump)
{
    for (int s = 0; s < nsys; s++) {
        results[s].n = 0;
        if (!(mask >> s & 1))
            continue;
        for (int k = sys_lo[s]; k < sys_hi[s];) {
            int m = k;
            struct rail_tuner *tu = NULL;
            struct rail_tuner_opts opts = {
                .topo = &topos[s], .lenient = 0, .fit = fit, .calib_path = g_calib_path};
            while (m < sys_hi[s] && rows[m].coll == rows[k].coll &&
                   rows[m].nnodes == rows[k].nnodes && rows[m].nranks == rows[k].nranks)
                m++;
            if (rail_tuner_create(&tu, 1, (size_t)rows[k].nranks, (size_t)rows[k].nnodes, NULL,
                                  &opts) < 0 ||
                !tu) {
                fprintf(stderr, "tuner_eval: %s: tuner not created\n", sys_names[s]);
                return -1;
            }
            replay(tu, k, m, &results[s], dump);
            rail_tuner_destroy(tu);
            k = m;
        }
    }
    return 0;
}

/* Mean over the systems in mask of each system's mean regret (every system counts once). */
static double objective(uint64_t mask)
{
    double sum = 0;
    int n = 0;
    for (int s = 0; s < nsys; s++)
        if (mask >> s & 1) {
            sum += mean(results[s].proj, results[s].n);
            n++;
        }
    return n ? sum / n : 0.0;
}

static void print_table(uint64_t mask, const char *title)
{
    double sum_p = 0, sum_n = 0;
    int total = 0, ns = 0;
    static double allp[MAX_ROWS], alln[MAX_ROWS];
    printf("%s\n%-16s %6s %12s %12s %12s %12s\n", title, "system", "points", "tuner mean",
           "NCCL mean", "tuner p90", "NCCL p90");
    for (int s = 0; s < nsys; s++) {
        struct sys_result *sr = &results[s];
        if (!(mask >> s & 1))
            continue;
        printf("%-16s %6d %11.1f%% %11.1f%% %11.1f%% %11.1f%%\n", sr->name, sr->n,
               100 * mean(sr->proj, sr->n), 100 * mean(sr->nccl, sr->n), 100 * p90(sr->proj, sr->n),
               100 * p90(sr->nccl, sr->n));
        sum_p += mean(sr->proj, sr->n);
        sum_n += mean(sr->nccl, sr->n);
        memcpy(allp + total, sr->proj, sizeof(double) * (size_t)sr->n);
        memcpy(alln + total, sr->nccl, sizeof(double) * (size_t)sr->n);
        total += sr->n;
        ns++;
    }
    printf("%-16s %6d %11.1f%% %11.1f%% %11.1f%% %11.1f%%\n", "pooled", total,
           100 * mean(allp, total), 100 * mean(alln, total), 100 * p90(allp, total),
           100 * p90(alln, total));
    printf("%-16s %6d %11.1f%% %11.1f%%\n\n", "per-system mean", ns, 100 * sum_p / (ns ? ns : 1),
           100 * sum_n / (ns ? ns : 1));
}

/* Candidate values per parameter, the prior (no correction) first. */
static const float k_grid[RAIL_FIT_NPARAMS][12] = {
    [RAIL_FIT_NET_LAT] = {-1, 0.01f, 2, 5, 10, 15, 20, 25, 30, 40, 50},
    [RAIL_FIT_LL_BW] = {1, 0.7f, 0.5f, 0.35f, 0.25f, 0.15f, 0.1f, 0.05f, 1.25f, 1.5f, 2},
    [RAIL_FIT_LL128_BW_NET] = {1, 0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 1.1f},
    [RAIL_FIT_LL128_BW_NVL] = {1, 1.1f, 1.2f, 1.3f, 1.5f, 0.9f},
    [RAIL_FIT_SIMPLE_BW] = {1, 0.9f, 0.8f, 0.7f, 1.1f, 1.2f},
    [RAIL_FIT_PAT_LAT] = {1, 0.75f, 1.25f, 1.5f, 2, 2.5f, 3},
    [RAIL_FIT_PAT_BW] = {1, 0.9f, 0.8f, 0.7f, 1.1f, 1.2f},
    [RAIL_FIT_NVLSTREE_BW] = {1, 1.1f, 1.2f, 1.3f, 1.5f, 0.9f},
    [RAIL_FIT_TREE_LAT] = {1, 0.75f, 0.5f, 0.35f, 0.25f, 1.5f},
    [RAIL_FIT_DEFER_MARGIN] = {0.25f, 0.01f, 0.02f, 0.05f, 0.1f, 0.15f, 0.2f, 0.3f, 0.4f},
};

static int grid_len(int p)
{
    int n = 1;
    while (n < 12 && k_grid[p][n] != 0.0f)
        n++;
    return n;
}

/* Coordinate descent on the training systems in mask, from the prior; a value replaces the
 * current one only when it lowers the objective, so parameters without evidence keep the prior. */
static int family_of(int s)
{
    struct rail_model m;
    int g = topos[s].n_gpus > 0 ? topos[s].n_gpus : 1;
    struct rail_comm_shape shape = {.nranks = 2 * g, .nnodes = 2, .min_rpn = g, .max_rpn = g};
    rail_model_build(&m, &topos[s], &shape, NULL);
    return m.fit_family;
}

static double descend(uint64_t mask, struct rail_model_fit *fit, float start_margin)
{
    double best;
    int per_family[RAIL_FIT_NFAMILIES] = {0};
    for (int s = 0; s < nsys; s++)
        if (mask >> s & 1)
            per_family[family_of(s)]++;
    rail_model_fit_prior(fit);
    for (int k = 0; k < RAIL_FIT_NFAMILIES; k++)
        if (per_family[k] >= 2)
            fit->v[RAIL_FIT_DEFER_MARGIN][k] = start_margin;
    evaluate(fit, mask, false);
    best = objective(mask);
    for (int round = 0; round < 4; round++) {
        bool changed = false;
        for (int p = 0; p < RAIL_FIT_NPARAMS; p++)
            for (int k = 0; k < RAIL_FIT_NFAMILIES; k++) {
                float keep = fit->v[p][k];
                /* A family is trained only across systems: what one system shows at one shape
                 * does not extrapolate (a factor seen at 8 ranks per node acts 8x stronger at
                 * one), so with fewer than two systems the family keeps the prior. */
                if (per_family[k] < 2)
                    continue;
                for (int i = 0; i < grid_len(p); i++) {
                    if (k_grid[p][i] == keep)
                        continue;
                    fit->v[p][k] = k_grid[p][i];
                    evaluate(fit, mask, false);
                    double o = objective(mask);
                    if (o < best - 1e-9) {
                        best = o;
                        keep = fit->v[p][k];
                        changed = true;
                    }
                }
                fit->v[p][k] = keep;
            }
        if (!changed)
            break;
    }
    return best;
}

/* Coordinate descent depends on where it starts: several starts of the risk margin, the best
 * training objective wins (ties: the earlier, more conservative start). */
static double fit_on(uint64_t mask, struct rail_model_fit *fit)
{
    static const float starts[] = {0.25f, 0.1f, 0.0f};
    double best = -1.0;
    for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
        struct rail_model_fit f;
        double o = descend(mask, &f, starts[i]);
        if (best < 0.0 || o < best - 1e-9) {
            best = o;
            *fit = f;
        }
    }
    return best;
}

static void print_fit(const struct rail_model_fit *fit, const char *label)
{
    printf("%s:", label);
    for (int k = 0; k < RAIL_FIT_NFAMILIES; k++) {
        printf(" [%s]", rail_fit_family_name(k));
        for (int p = 0; p < RAIL_FIT_NPARAMS; p++)
            printf(" %s=%g", rail_fit_param_name(p), fit->v[p][k]);
    }
    printf("\n");
}

/* Held-out evaluation: for each fold, fit on the rest and replay the held-out systems. */
/* The nccl-tests logs of the systems in mask (data/nccl-tests/<system>/), read as `nccl-rail
 * calibrate` reads them, written as a calibration file to out. */
static int write_calibration(const char *data, uint64_t mask, const char *out)
{
    struct rail_calib_logs logs = {0};
    struct rail_calibration cal = {0};
    char dir[2048], err[512];
    int rc = 0;
    FILE *f;

    for (int s = 0; s < nsys && rc == 0; s++)
        if (mask >> s & 1) {
            snprintf(dir, sizeof(dir), "%s/nccl-tests/%s", data, sys_names[s]);
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

/* Each fold replayed with a fit on the other folds, or (calib_data set) with the shipped model
 * and a calibration from the other folds' nccl-tests logs. */
static void cross_validate(const char *title, uint64_t *folds, int nfolds, const char *calib_data)
{
    static struct sys_result held[MAX_SYSTEMS];
    char calib_path[] = "/tmp/tuner_eval_calib_XXXXXX";
    uint64_t all = 0;
    int fd = -1;
    for (int f = 0; f < nfolds; f++)
        all |= folds[f];
    if (calib_data && (fd = mkstemp(calib_path)) < 0) {
        perror("tuner_eval: mkstemp");
        return;
    }
    for (int f = 0; f < nfolds; f++) {
        struct rail_model_fit fit;
        char label[128];
        if (calib_data) {
            if (write_calibration(calib_data, all & ~folds[f], calib_path) < 0)
                break;
            g_calib_path = calib_path;
            evaluate(NULL, folds[f], false);
            g_calib_path = "";
        } else {
            fit_on(all & ~folds[f], &fit);
            evaluate(&fit, folds[f], false);
            snprintf(label, sizeof(label), "  fold %d fit", f);
            print_fit(&fit, label);
        }
        for (int s = 0; s < nsys; s++)
            if (folds[f] >> s & 1) {
                held[s].n = results[s].n;
                held[s].proj = malloc(sizeof(double) * (size_t)results[s].n);
                held[s].nccl = malloc(sizeof(double) * (size_t)results[s].n);
                memcpy(held[s].proj, results[s].proj, sizeof(double) * (size_t)results[s].n);
                memcpy(held[s].nccl, results[s].nccl, sizeof(double) * (size_t)results[s].n);
            }
    }
    for (int s = 0; s < nsys; s++)
        if (all >> s & 1) {
            results[s].n = held[s].n;
            memcpy(results[s].proj, held[s].proj, sizeof(double) * (size_t)held[s].n);
            memcpy(results[s].nccl, held[s].nccl, sizeof(double) * (size_t)held[s].n);
            free(held[s].proj);
            free(held[s].nccl);
        }
    print_table(all, title);
    if (calib_data) {
        for (int s = 0; s < nsys; s++)
            if (all >> s & 1)
                printf("%-16s calibrated / NCCL mean regret: %.3f\n", sys_names[s],
                       mean(results[s].proj, results[s].n) / mean(results[s].nccl, results[s].n));
        printf("\n");
        close(fd);
        unlink(calib_path);
    }
}

/* The shipped model on its own training data (a regression guard, ctest tuner_regret): mean
 * regret pooled and per system at most half of NCCL's, p90 at most 0.75x, and no system more than
 * one point worse than NCCL. The held-out figures are in docs/cost-model.md §12. */
static int check_targets(uint64_t mask)
{
    static double allp[MAX_ROWS], alln[MAX_ROWS];
    double sp = 0, sn = 0;
    int total = 0, ns = 0, bad = 0;
    for (int s = 0; s < nsys; s++) {
        struct sys_result *sr = &results[s];
        if (!(mask >> s & 1))
            continue;
        double p = mean(sr->proj, sr->n), n = mean(sr->nccl, sr->n);
        if (p > n + 0.01) {
            printf("CHECK: %s: tuner %.2f%% is more than 1 point worse than NCCL %.2f%%\n",
                   sr->name, 100 * p, 100 * n);
            bad++;
        }
        sp += p;
        sn += n;
        ns++;
        memcpy(allp + total, sr->proj, sizeof(double) * (size_t)sr->n);
        memcpy(alln + total, sr->nccl, sizeof(double) * (size_t)sr->n);
        total += sr->n;
    }
    if (mean(allp, total) > 0.5 * mean(alln, total) || sp > 0.5 * sn) {
        printf("CHECK: mean regret not at most half of NCCL's\n");
        bad++;
    }
    if (p90(allp, total) > 0.75 * p90(alln, total)) {
        printf("CHECK: p90 regret not at most 0.75x NCCL's\n");
        bad++;
    }
    printf("tuner_eval check: %s\n", bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *data = RAIL_FIXTURES "/tuner-data";
    bool dump = false, fit = false, loso = false, lono = false, prior = false, check = false,
         calibrated = false;
    char path[1024];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--dump") == 0)
            dump = true;
        else if (strcmp(argv[i], "--fit") == 0)
            fit = true;
        else if (strcmp(argv[i], "--loso") == 0)
            loso = true;
        else if (strcmp(argv[i], "--lono") == 0)
            lono = true;
        else if (strcmp(argv[i], "--prior") == 0)
            prior = true;
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--calibrated") == 0)
            calibrated = true;
        else {
            fprintf(stderr, "usage: tuner_eval [--data DIR] [--dump] [--prior] [--fit] [--loso] "
                            "[--lono] [--calibrated] [--check]\n");
            return 2;
        }
    }
    snprintf(path, sizeof(path), "%s/measurements.csv", data);
    if (load_csv(path) < 0)
        return 1;
    qsort(rows, (size_t)nrows, sizeof(rows[0]), cmp_row);
    if (index_systems(data) < 0)
        return 1;
    uint64_t all = nsys >= 64 ? ~0ull : (1ull << nsys) - 1;
    struct rail_model_fit pr;
    rail_model_fit_prior(&pr);
    if (dump) {
        printf("system,coll,nranks,nnodes,bytes,algo,proto,time_us,nccl_us,model_us,nccl_pick,"
               "tuner_pick\n");
        return evaluate(prior ? &pr : NULL, all, true) < 0;
    }
    if (evaluate(prior ? &pr : NULL, all, false) < 0)
        return 1;
    print_table(all, prior ? "Untrained model (prior), all systems"
                           : "Shipped model, all systems (its training set)");
    if (check && check_targets(all) != 0)
        return 1;
    if (fit) {
        struct rail_model_fit f;
        double o = fit_on(all, &f);
        print_fit(&f, "fit on all systems");
        printf("objective (mean of per-system mean regret): %.2f%%\n\n", 100 * o);
    }
    if (loso) {
        uint64_t folds[MAX_SYSTEMS];
        for (int s = 0; s < nsys; s++)
            folds[s] = 1ull << s;
        cross_validate("Leave one system out (each system replayed with a fit on the others)",
                       folds, nsys, NULL);
    }
    if (lono || calibrated) {
        /* The one-GPU-per-node P5 systems differ only in node count: hold out each. */
        uint64_t folds[MAX_SYSTEMS];
        int nf = 0;
        for (int s = 0; s < nsys; s++)
            if (strncmp(sys_names[s], "p5_", 3) == 0 && strstr(sys_names[s], "x1_"))
                folds[nf++] = 1ull << s;
        if (lono)
            cross_validate("Leave one node count out (P5, 1 GPU per node; fit on all other data)",
                           folds, nf, NULL);
        if (calibrated)
            cross_validate("Calibrated, leave one node count out (P5, 1 GPU per node; shipped "
                           "model + calibration from the other node counts' nccl-tests logs)",
                           folds, nf, data);
    }
    return 0;
}
