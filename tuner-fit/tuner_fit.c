/* SPDX-License-Identifier: Apache-2.0 */
#include "tuner_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/cost_model.h"
#include "safe_file.h"

#define NP            RAIL_STEP_NPARAMS
#define MAX_ITER      400
#define FD_STEP       1e-3 /* forward difference in log(coefficient) */
#define PRIOR_SYS_PUB "published"

void fit_opts_default(struct fit_opts *o)
{
    *o = (struct fit_opts){.lambda = 0.1,
                           .prior_w = 0.1,
                           .min_points = 40,
                           .published = NULL,
                           .margin = {0.03f, 0.04f, 0.5f, 0.5f, 2.0f},
                           .log = NULL};
}

static struct rail_comm_shape shape_of(const struct td_row *r)
{
    int rpn = r->nranks / r->nnodes;
    return (struct rail_comm_shape){
        .nranks = r->nranks, .nnodes = r->nnodes, .min_rpn = rpn, .max_rpn = rpn};
}

void tuner_fit_family(const struct td *d, int sys, int *family, int *gen)
{
    static struct rail_model m;
    struct rail_model_table empty = {0};
    const struct td_row *r = &d->rows[d->lo[sys]];
    struct rail_comm_shape s = shape_of(r);
    rail_model_build_with(&m, &d->topo[sys], &s, NULL, &empty);
    *family = m.family;
    *gen = m.compcap_idx;
}

/* The training points of one family and generation: first row of each point with >= 2 pairs. */
struct group {
    int family, gen;
    int npts, *pts;
    int nshapes; /* distinct (ranks per node, nodes) among the points */
    int nres;    /* residuals: one per row + one per point + NP prior terms */
};

struct lm {
    const struct td *d;
    const struct group *g;
    const struct fit_opts *o;
    double x0[NP], lo[NP], hi[NP];
    struct rail_model_table table; /* the coefficients under test, nothing else */
};

/* r[0..g->nres) at coefficients exp(x). */
static void residuals(struct lm *L, const double *x, double *r)
{
    static struct rail_model m;
    const struct td *d = L->d;
    int k = 0, built_for = -1;
    for (int p = 0; p < NP; p++)
        L->table.coef[L->g->family][L->g->gen].v[p] = (float)exp(x[p]);
    for (int i = 0; i < L->g->npts; i++) {
        int lo = L->g->pts[i], hi = td_point_end(d, lo);
        const struct td_row *a = &d->rows[lo];
        /* One model per (system, collective, shape): the points of a series are in order. */
        if (built_for < 0 ||
            !(d->rows[built_for].sys == a->sys && d->rows[built_for].nnodes == a->nnodes &&
              d->rows[built_for].nranks == a->nranks)) {
            struct rail_comm_shape s = shape_of(a);
            rail_model_build_with(&m, &d->topo[a->sys], &s, NULL, &L->table);
            built_for = lo;
        }
        double e[32], mean = 0.0;
        int n = hi - lo;
        for (int j = 0; j < n; j++) {
            const struct td_row *row = &d->rows[lo + j];
            float t = rail_model_time(&m, row->coll, row->algo, row->proto, row->bytes, 1);
            e[j] = log((t > 0.0f ? t : 1e-3) / row->time_us);
            mean += e[j] / n;
        }
        for (int j = 0; j < n; j++)
            r[k++] = e[j] - mean;
        r[k++] = L->o->lambda * mean;
    }
    for (int p = 0; p < NP; p++)
        r[k++] = sqrt(L->o->prior_w) * (x[p] - L->x0[p]);
}

static double sumsq(const double *r, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += r[i] * r[i];
    return s;
}

/* Solves A z = b for a symmetric positive definite A (NP x NP) by Cholesky; -1 if singular. */
static int solve(double A[NP][NP], const double *b, double *z)
{
    double L[NP][NP] = {{0}}, y[NP];
    for (int i = 0; i < NP; i++)
        for (int j = 0; j <= i; j++) {
            double s = A[i][j];
            for (int k = 0; k < j; k++)
                s -= L[i][k] * L[j][k];
            if (i == j) {
                if (s <= 0.0)
                    return -1;
                L[i][i] = sqrt(s);
            } else {
                L[i][j] = s / L[j][j];
            }
        }
    for (int i = 0; i < NP; i++) {
        double s = b[i];
        for (int k = 0; k < i; k++)
            s -= L[i][k] * y[k];
        y[i] = s / L[i][i];
    }
    for (int i = NP - 1; i >= 0; i--) {
        double s = y[i];
        for (int k = i + 1; k < NP; k++)
            s -= L[k][i] * z[k];
        z[i] = s / L[i][i];
    }
    return 0;
}

static void clamp(const struct lm *L, double *x)
{
    for (int p = 0; p < NP; p++)
        x[p] = x[p] < L->lo[p] ? L->lo[p] : (x[p] > L->hi[p] ? L->hi[p] : x[p]);
}

/* Levenberg-Marquardt from the prior; x receives log(coefficients). Returns the final cost. */
static double levenberg_marquardt(struct lm *L, double *x)
{
    int M = L->g->nres;
    double *r = calloc((size_t)M, sizeof(double)), *r2 = calloc((size_t)M, sizeof(double));
    double *J = calloc((size_t)M * NP, sizeof(double));
    double mu = 1e-2, cost;
    memcpy(x, L->x0, sizeof(double) * NP);
    residuals(L, x, r);
    cost = sumsq(r, M);
    for (int it = 0; it < MAX_ITER; it++) {
        double A[NP][NP], g[NP], xt[NP], dz[NP];
        for (int p = 0; p < NP; p++) {
            memcpy(xt, x, sizeof(xt));
            xt[p] += FD_STEP;
            residuals(L, xt, r2);
            for (int i = 0; i < M; i++)
                J[(size_t)i * NP + p] = (r2[i] - r[i]) / FD_STEP;
        }
        for (int a = 0; a < NP; a++) {
            g[a] = 0.0;
            for (int i = 0; i < M; i++)
                g[a] -= J[(size_t)i * NP + a] * r[i];
            for (int b = 0; b <= a; b++) {
                double s = 0.0;
                for (int i = 0; i < M; i++)
                    s += J[(size_t)i * NP + a] * J[(size_t)i * NP + b];
                A[a][b] = A[b][a] = s;
            }
        }
        bool improved = false;
        for (int tries = 0; tries < 12 && !improved; tries++) {
            double D[NP][NP];
            memcpy(D, A, sizeof(D));
            for (int p = 0; p < NP; p++)
                D[p][p] += mu * (A[p][p] + 1e-9);
            if (solve(D, g, dz) == 0) {
                for (int p = 0; p < NP; p++)
                    xt[p] = x[p] + dz[p];
                clamp(L, xt);
                residuals(L, xt, r2);
                double c2 = sumsq(r2, M);
                if (c2 < cost) {
                    improved = true;
                    double gain = (cost - c2) / cost;
                    memcpy(x, xt, sizeof(xt));
                    memcpy(r, r2, sizeof(double) * (size_t)M);
                    cost = c2;
                    mu = mu / 3.0 > 1e-9 ? mu / 3.0 : 1e-9;
                    if (gain < 1e-7)
                        it = MAX_ITER;
                    break;
                }
            }
            mu *= 4.0;
        }
        if (!improved)
            break;
    }
    free(r);
    free(r2);
    free(J);
    return cost;
}

static int fit_group(const struct td *d, struct group *g, const struct fit_opts *o,
                     struct rail_model_table *out)
{
    struct lm L = {.d = d, .g = g, .o = o};
    double x[NP];
    for (int p = 0; p < NP; p++) {
        float lo, hi;
        rail_step_param_range(p, &lo, &hi);
        L.x0[p] = log(rail_step_param_prior(p));
        L.lo[p] = log(lo > 1e-3f ? lo : 1e-3);
        L.hi[p] = log(hi);
    }
    L.table.has_coef[g->family][g->gen] = true;
    double cost = levenberg_marquardt(&L, x);
    out->has_coef[g->family][g->gen] = true;
    for (int p = 0; p < NP; p++)
        out->coef[g->family][g->gen].v[p] = (float)exp(x[p]);
    if (o->log)
        fprintf(o->log, "fit %s %s: %d points, cost %.3f\n", rail_family_name(g->family),
                rail_gen_name(g->gen), g->npts, cost);
    return 0;
}

/* Residual and cover records of the systems in mask, against the fitted coefficients. */
static int add_records(const struct td *d, uint64_t mask, struct rail_model_table *t)
{
    static struct rail_model m;
    struct rail_model_table coef_only = *t; /* coefficients only: residuals against the model */
    coef_only.ncover = coef_only.nresid = 0;
    coef_only.cover = NULL;
    coef_only.resid = NULL;
    for (int i = 0; i < d->nrows;) {
        int end = td_shape_end(d, i), fam, gen;
        const struct td_row *a = &d->rows[i];
        if (!(mask >> a->sys & 1)) {
            i = end;
            continue;
        }
        struct rail_comm_shape s = shape_of(a);
        rail_model_build_with(&m, &d->topo[a->sys], &s, NULL, &coef_only);
        fam = m.family;
        gen = m.compcap_idx;
        struct rail_table_cover c = {.family = (uint8_t)fam,
                                     .gen = (uint8_t)gen,
                                     .coll = (uint8_t)a->coll,
                                     .algo = RAIL_COVER_ANY,
                                     .proto = RAIL_COVER_ANY,
                                     .rpn = s.min_rpn,
                                     .nnodes = a->nnodes,
                                     .bytes_min = UINT64_MAX};
        for (int k = i; k < end; k++) {
            const struct td_row *r = &d->rows[k];
            float pred = rail_model_time(&m, r->coll, r->algo, r->proto, r->bytes, 1);
            if (pred > 0.0f) {
                struct rail_table_resid x = {.family = (uint8_t)fam,
                                             .gen = (uint8_t)gen,
                                             .coll = (uint8_t)r->coll,
                                             .algo = (uint8_t)r->algo,
                                             .proto = (uint8_t)r->proto,
                                             .rpn = s.min_rpn,
                                             .nnodes = r->nnodes,
                                             .bytes = r->bytes,
                                             .log_ratio = (float)log(r->time_us / pred)};
                if (rail_model_table_add_resid(t, &x) < 0)
                    return -1;
            }
            int pe = td_point_end(d, k);
            if (pe - k >= 2) { /* a point with a choice covers its size */
                c.bytes_min = r->bytes < c.bytes_min ? r->bytes : c.bytes_min;
                c.bytes_max = r->bytes > c.bytes_max ? r->bytes : c.bytes_max;
            }
        }
        if (c.bytes_min <= c.bytes_max && rail_model_table_add_cover(t, &c) < 0)
            return -1;
        i = end;
    }
    return 0;
}

/* Published sets (docs/cost-model.md §11) back the prior where they were measured: one cover
 * record per set. The topology column names the node (test/unit/test_regret.c builds them). */
static int add_published(const char *path, struct rail_model_table *t)
{
    char line[1024], err[512], *buf = NULL;
    size_t len = 0, pos = 0;
    /* Read as every input is (safe_file.h: bounded, non-blocking, regular files only). */
    if (rail_file_read_all(path, RAIL_FIT_MAX_PUBLISHED, 0, &buf, &len, err, sizeof(err)) < 0) {
        fprintf(stderr, "fit: %s\n", err);
        return -1;
    }
    for (int lineno = 1; pos < len; lineno++) {
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        if (end - pos >= sizeof(line)) {
            fprintf(stderr, "fit: %s:%d: line too long\n", path, lineno);
            free(buf);
            return -1;
        }
        memcpy(line, buf + pos, end - pos);
        line[end - pos] = '\0';
        pos = end + 1;
        char *fl[16], *save = NULL, *p = line;
        int n = 0;
        for (char *tok; n < 16 && (tok = strtok_r(p, ",\n", &save)); p = NULL)
            fl[n++] = tok;
        if (lineno == 1 || n < 11)
            continue;
        int gpn = atoi(fl[3]), nnodes = atoi(fl[4]), coll = -1, fam, gen;
        for (int c = 0; c < RAIL_NUM_COLLS; c++)
            if (strcasecmp(fl[6], rail_coll_name(c)) == 0)
                coll = c;
        if (strcmp(fl[2], "profile:dgx-h100") == 0 && nnodes == 1) {
            fam = RAIL_FAM_NODE;
            gen = NCCL_HOPPER_COMPCAP_IDX;
        } else if (strcmp(fl[2], "hand:gb200") == 0) {
            fam = RAIL_FAM_IB;
            gen = NCCL_BLACKWELL_COMPCAP_IDX;
        } else if (strcmp(fl[2], "hand:h100-4nic-roce") == 0) {
            fam = RAIL_FAM_IB;
            gen = NCCL_HOPPER_COMPCAP_IDX;
        } else {
            fprintf(stderr, "fit: %s:%d: unknown topology '%s'\n", path, lineno, fl[2]);
            free(buf);
            return -1;
        }
        uint64_t bytes = strtoull(fl[7], NULL, 10);
        int algo = -1, proto = -1;
        for (int k = 0; k < NCCL_NUM_ALGORITHMS; k++)
            if (strcasecmp(fl[8], rail_algo_name(k)) == 0)
                algo = k;
        for (int k = 0; k < NCCL_NUM_PROTOCOLS; k++)
            if (strcasecmp(fl[9], rail_proto_name(k)) == 0)
                proto = k;
        struct rail_table_cover c = {.family = (uint8_t)fam,
                                     .gen = (uint8_t)gen,
                                     .coll = (uint8_t)coll,
                                     .algo = (uint8_t)algo,
                                     .proto = (uint8_t)proto,
                                     .rpn = gpn,
                                     .nnodes = nnodes,
                                     .bytes_min = bytes,
                                     .bytes_max = bytes};
        /* One record per measured pair of the set (a set is its alternatives at one point). */
        if (coll < 0 || algo < 0 || proto < 0 || gpn < 1 || nnodes < 1 || bytes == 0 ||
            rail_model_table_add_cover(t, &c))
            continue;
    }
    free(buf);
    return 0;
}

int tuner_fit(const struct td *d, uint64_t mask, const struct fit_opts *o,
              struct rail_model_table *out)
{
    struct group groups[RAIL_FAM_COUNT * NCCL_NUM_COMPCAPS] = {{0}};
    int sys_fam[TD_MAX_SYSTEMS], sys_gen[TD_MAX_SYSTEMS];

    memset(out, 0, sizeof(*out));
    out->margin0 = o->margin[0];
    out->margin_slope = o->margin[1];
    out->margin_out = o->margin[2];
    out->fade_nodes = o->margin[3];
    out->fade_bytes = o->margin[4];
    for (int s = 0; s < d->nsys; s++)
        tuner_fit_family(d, s, &sys_fam[s], &sys_gen[s]);
    for (int k = 0; k < RAIL_FAM_COUNT * NCCL_NUM_COMPCAPS; k++) {
        struct group *g = &groups[k];
        g->family = k / NCCL_NUM_COMPCAPS;
        g->gen = k % NCCL_NUM_COMPCAPS;
        g->pts = malloc(sizeof(int) * (size_t)d->nrows);
        for (int i = 0; i < d->nrows;) {
            int end = td_point_end(d, i), s = d->rows[i].sys;
            if (mask >> s & 1 && sys_fam[s] == g->family && sys_gen[s] == g->gen && end - i >= 2) {
                bool seen = false;
                for (int q = 0; q < g->npts && !seen; q++)
                    seen = d->rows[g->pts[q]].nnodes == d->rows[i].nnodes &&
                           d->rows[g->pts[q]].nranks == d->rows[i].nranks;
                g->nshapes += !seen;
                g->pts[g->npts++] = i;
                g->nres += end - i + 1;
            }
            i = end;
        }
        g->nres += NP;
        /* Coefficients need points and at least two shapes: what one node count shows cannot
         * tell a per-step cost from a per-collective one, and a step model fitted there would
         * be extrapolated by structure alone. Such a family keeps the prior plus its residuals. */
        if (g->npts >= o->min_points && g->nshapes >= 2 && g->family != RAIL_FAM_NODE)
            fit_group(d, g, o, out);
        free(g->pts);
    }
    if (add_records(d, mask, out) < 0 || (o->published && add_published(o->published, out) < 0))
        return -1;
    rail_model_table_sort(out);
    return 0;
}
