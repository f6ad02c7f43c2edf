/* SPDX-License-Identifier: Apache-2.0 */
/* Replaying measured points through the tuner's real path, and the tables printed of it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safe_file.h"
#include "abi/tuner_core.h"
#include "tuner_eval.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double eval_p90(const double *v, int n)
{
    if (n <= 0)
        return 0.0;
    double *c = malloc(sizeof(double) * (size_t)n);
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    double r = c[(int)ceil(0.9 * n) - 1];
    free(c);
    return r;
}

double eval_mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0.0;
}

/* Replays the points [lo, hi) of one (system, collective, shape) on tuner tu, or on e->peer (its
 * context peer_ctx) where one is given: tu then only supplies NCCL's predicted times. */
static void replay(const struct eval_opts *e, struct rail_tuner *tu, void *peer_ctx, int lo, int hi,
                   struct sys_result *sr, bool dump)
{
    const struct td *d = e->d;
    for (int i = lo; i < hi;) {
        int j = td_point_end(d, i), best = i, nccl = -1, proj = -1;
        float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], nbest = -1.0f;
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                table[a][p] = NCCL_ALGO_PROTO_IGNORE;
        for (int k = i; k < j; k++) {
            const struct td_row *r = &d->rows[k];
            float t = rail_model_nccl_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1);
            table[r->algo][r->proto] = t >= 0.0f ? t : 1e30f;
            if (t >= 0.0f && (nbest < 0.0f || t < nbest)) {
                nbest = t;
                nccl = k;
            }
            if (r->time_us < d->rows[best].time_us)
                best = k;
        }
        if (nccl < 0)
            nccl = i;
        if (e->peer)
            e->peer->choose(e->peer->self, peer_ctx, d->rows[i].coll, d->rows[i].bytes, table);
        else
            rail_tuner_apply(tu, d->rows[i].coll, d->rows[i].bytes, 1, 0, table, NULL);
        for (int k = i; k < j; k++) {
            float v = table[d->rows[k].algo][d->rows[k].proto];
            if (proj < 0 || v < table[d->rows[proj].algo][d->rows[proj].proto])
                proj = k;
        }
        if (j - i >= 2) {
            sr->proj[sr->n] = d->rows[proj].time_us / d->rows[best].time_us - 1.0;
            sr->nccl[sr->n] = d->rows[nccl].time_us / d->rows[best].time_us - 1.0;
            sr->n++;
        }
        if (dump)
            for (int k = i; k < j; k++) {
                const struct td_row *r = &d->rows[k];
                printf("%s,%s,%d,%d,%zu,%s,%s,%.2f,%.2f,%.2f,%d,%d\n", d->names[r->sys],
                       rail_coll_name(r->coll), r->nranks, r->nnodes, r->bytes,
                       rail_algo_name(r->algo), rail_proto_name(r->proto), r->time_us,
                       rail_model_nccl_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1),
                       rail_model_time(&tu->model, r->coll, r->algo, r->proto, r->bytes, 1),
                       k == nccl, k == proj);
            }
        i = j;
    }
}

static int run(struct eval_opts *e, uint64_t mask, bool dump)
{
    const struct td *d = e->d;
    for (int s = 0; s < d->nsys; s++) {
        if (!(mask >> s & 1))
            continue;
        e->res[s].n = 0;
        for (int k = d->lo[s]; k < d->hi[s];) {
            int m = td_shape_end(d, k);
            struct rail_tuner *tu = NULL;
            struct rail_tuner_opts opts = {.topo = &d->topo[s],
                                           .lenient = 0,
                                           .table = e->table,
                                           .calib_path = e->calib_path ? e->calib_path : ""};
            if (rail_tuner_create(&tu, 1, (size_t)d->rows[k].nranks, (size_t)d->rows[k].nnodes,
                                  NULL, &opts) < 0 ||
                !tu) {
                fprintf(stderr, "tuner_eval: %s: tuner not created\n", d->names[s]);
                return -1;
            }
            void *peer_ctx = e->peer ? e->peer->open(e->peer->self, (size_t)d->rows[k].nranks,
                                                     (size_t)d->rows[k].nnodes)
                                     : NULL;
            replay(e, tu, peer_ctx, k, m, &e->res[s], dump);
            if (e->peer)
                e->peer->close(e->peer->self, peer_ctx);
            rail_tuner_destroy(tu);
            k = m;
        }
    }
    return 0;
}

int eval_run(struct eval_opts *e, uint64_t mask)
{
    return run(e, mask, false);
}

void eval_dump_header(void)
{
    printf("system,coll,nranks,nnodes,bytes,algo,proto,time_us,nccl_us,model_us,nccl_pick,"
           "tuner_pick\n");
}

int eval_dump_rows(struct eval_opts *e, uint64_t mask)
{
    return run(e, mask, true);
}

int eval_dump(struct eval_opts *e, uint64_t mask)
{
    eval_dump_header();
    return eval_dump_rows(e, mask);
}

void eval_print(const struct eval_opts *e, uint64_t mask, const char *title)
{
    static double allp[TD_MAX_ROWS], alln[TD_MAX_ROWS];
    double sum_p = 0, sum_n = 0;
    int total = 0, ns = 0;
    printf("%s\n%-16s %6s %12s %12s %12s %12s\n", title, "system", "points", "tuner mean",
           "NCCL mean", "tuner p90", "NCCL p90");
    for (int s = 0; s < e->d->nsys; s++) {
        const struct sys_result *sr = &e->res[s];
        if (!(mask >> s & 1))
            continue;
        printf("%-16s %6d %11.1f%% %11.1f%% %11.1f%% %11.1f%%\n", e->d->names[s], sr->n,
               100 * eval_mean(sr->proj, sr->n), 100 * eval_mean(sr->nccl, sr->n),
               100 * eval_p90(sr->proj, sr->n), 100 * eval_p90(sr->nccl, sr->n));
        sum_p += eval_mean(sr->proj, sr->n);
        sum_n += eval_mean(sr->nccl, sr->n);
        memcpy(allp + total, sr->proj, sizeof(double) * (size_t)sr->n);
        memcpy(alln + total, sr->nccl, sizeof(double) * (size_t)sr->n);
        total += sr->n;
        ns++;
    }
    double pm = eval_mean(allp, total), nm = eval_mean(alln, total);
    double pp = eval_p90(allp, total), np = eval_p90(alln, total);
    printf("%-16s %6d %11.1f%% %11.1f%% %11.1f%% %11.1f%%\n", "pooled", total, 100 * pm, 100 * nm,
           100 * pp, 100 * np);
    printf("%-16s %6d %11.1f%% %11.1f%%\n", "per-system mean", ns, 100 * sum_p / (ns ? ns : 1),
           100 * sum_n / (ns ? ns : 1));
    printf("ratios to NCCL: per-system mean %.3f, pooled mean %.3f, p90 %.3f\n\n",
           sum_n > 0 ? sum_p / sum_n : 0.0, nm > 0 ? pm / nm : 0.0, np > 0 ? pp / np : 0.0);
}

/* The shipped table on its training data (a regression guard): no system worse than NCCL by
 * more than half a point, mean regret pooled and per system at most 0.3x NCCL's, p90 at most
 * 0.35x. The held-out figures are in docs/cost-model.md §12. */
int eval_check(const struct eval_opts *e, uint64_t mask)
{
    return eval_check_bounds(e, mask, 0.3, 0.3, 0.35);
}

int eval_check_bounds(const struct eval_opts *e, uint64_t mask, double per_system, double pooled,
                      double p90)
{
    static double allp[TD_MAX_ROWS], alln[TD_MAX_ROWS];
    double sp = 0, sn = 0;
    int total = 0, bad = 0;
    for (int s = 0; s < e->d->nsys; s++) {
        const struct sys_result *sr = &e->res[s];
        if (!(mask >> s & 1))
            continue;
        double p = eval_mean(sr->proj, sr->n), n = eval_mean(sr->nccl, sr->n);
        if (p > n + 0.005) {
            printf("CHECK: %s: tuner %.2f%% is more than 0.5 point worse than NCCL %.2f%%\n",
                   e->d->names[s], 100 * p, 100 * n);
            bad++;
        }
        sp += p;
        sn += n;
        memcpy(allp + total, sr->proj, sizeof(double) * (size_t)sr->n);
        memcpy(alln + total, sr->nccl, sizeof(double) * (size_t)sr->n);
        total += sr->n;
    }
    if (sp > per_system * sn) {
        printf("CHECK: per-system mean regret %.3fx NCCL's, not at most %.2fx\n", sp / sn,
               per_system);
        bad++;
    }
    if (eval_mean(allp, total) > pooled * eval_mean(alln, total)) {
        printf("CHECK: pooled mean regret %.3fx NCCL's, not at most %.2fx\n",
               eval_mean(allp, total) / eval_mean(alln, total), pooled);
        bad++;
    }
    if (eval_p90(allp, total) > p90 * eval_p90(alln, total)) {
        printf("CHECK: p90 regret %.3fx NCCL's, not at most %.2fx\n",
               eval_p90(allp, total) / eval_p90(alln, total), p90);
        bad++;
    }
    printf("tuner_eval check: %s\n", bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}

static bool near(double a, double b, double rel, double abs_tol)
{
    return fabs(a - b) <= abs_tol + rel * fmax(fabs(a), fabs(b));
}

int eval_check_table(const struct rail_model_table *f, const struct rail_model_table *s)
{
    int bad = 0;
    if (f->ncover != s->ncover || f->nresid != s->nresid ||
        memcmp(f->has_coef, s->has_coef, sizeof(f->has_coef)) != 0) {
        printf("CHECK: the refit has %d cover and %d resid records, the table %d and %d\n",
               f->ncover, f->nresid, s->ncover, s->nresid);
        bad++;
    }
    for (int fam = 0; fam < RAIL_FAM_COUNT && !bad; fam++)
        for (int g = 0; g < NCCL_NUM_COMPCAPS; g++)
            for (int p = 0; f->has_coef[fam][g] && p < RAIL_STEP_NPARAMS; p++)
                if (!near(f->coef[fam][g].v[p], s->coef[fam][g].v[p], 1e-3, 1e-6)) {
                    printf("CHECK: %s %s %s: refit %g, table %g\n", rail_family_name(fam),
                           rail_gen_name(g), rail_step_param_name(p), (double)f->coef[fam][g].v[p],
                           (double)s->coef[fam][g].v[p]);
                    bad++;
                }
    for (int i = 0; i < f->nresid && !bad; i++)
        if (f->resid[i].nnodes != s->resid[i].nnodes || f->resid[i].bytes != s->resid[i].bytes ||
            !near(f->resid[i].log_ratio, s->resid[i].log_ratio, 0.0, 2e-3)) {
            printf("CHECK: resid record %d differs (refit %.4f, table %.4f)\n", i,
                   (double)f->resid[i].log_ratio, (double)s->resid[i].log_ratio);
            bad++;
        }
    printf(
        "tuner_eval check-table: %s\n",
        bad ? "FAILED: refit with bench/tuner_eval --fit --out tuner-plugin/model/model_table.txt"
            : "the embedded table is the fit of the fixtures");
    return bad ? 1 : 0;
}

int eval_read_table(const char *path, struct rail_model_table *t)
{
    char *buf = NULL, err[512];
    size_t len = 0;
    int rc = rail_file_read_all(path, RAIL_MODEL_TABLE_MAX, 0, &buf, &len, err, sizeof(err));
    if (rc == 0)
        rc = rail_model_table_parse(buf, len, path, t, err, sizeof(err));
    free(buf);
    if (rc < 0)
        fprintf(stderr, "tuner_eval: %s\n", err);
    return rc;
}

int eval_write_table(const char *path, const struct rail_model_table *t)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tuner_eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = rail_model_table_write(
        t,
        "written by bench/tuner_eval --fit from test/fixtures/tuner-data and "
        "test/fixtures/measurements/published.csv (docs/cost-model.md §12); do not edit by hand",
        f);
    if (fclose(f) != 0 || rc < 0) {
        fprintf(stderr, "tuner_eval: %s: write failed\n", path);
        return -1;
    }
    printf("table written to %s\n", path);
    return 0;
}

void eval_print_coef(const struct rail_model_table *t, const char *label)
{
    for (int f = 0; f < RAIL_FAM_COUNT; f++)
        for (int g = 0; g < NCCL_NUM_COMPCAPS; g++) {
            if (!t->has_coef[f][g])
                continue;
            printf("%s: [%s %s]", label, rail_family_name(f), rail_gen_name(g));
            for (int p = 0; p < RAIL_STEP_NPARAMS; p++)
                printf(" %s=%.3g", rail_step_param_name(p), t->coef[f][g].v[p]);
            printf("\n");
        }
}
