/* SPDX-License-Identifier: Apache-2.0 */
#include "decision.h"

#include <math.h>
#include <string.h>

#define POINTS_PER_BUCKET 3

int rail_dt_pipe_value(int pipe_class)
{
    static const int values[RAIL_DT_PIPES] = {1, 2, 8};
    return values[pipe_class < 0 ? 0
                                 : (pipe_class >= RAIL_DT_PIPES ? RAIL_DT_PIPES - 1 : pipe_class)];
}

void rail_dt_bucket_range(int bucket, size_t *lo, size_t *hi)
{
    int o = bucket / RAIL_DT_SUBS, sub = bucket % RAIL_DT_SUBS;
    if (bucket <= 0 || o == 0) {
        *lo = bucket <= 0 ? 0 : 1; /* bucket 0 is 0 bytes; 1..3 are empty */
        *hi = 0;
        return;
    }
    /* The sizes x with (x << 3) >> o == 4 + sub (rail_dt_bucket). */
    *lo = (((size_t)(4 + sub) << o) + 7) >> 3;
    *hi = ((((size_t)(5 + sub) << o) + 7) >> 3) - 1;
    if (bucket == RAIL_DT_BUCKETS - 1)
        *hi = SIZE_MAX;
}

/* Geometrically spread sample sizes inside [lo, hi] (hi capped for the open last bucket). */
static int sample_sizes(int bucket, size_t out[POINTS_PER_BUCKET])
{
    size_t lo, hi;
    rail_dt_bucket_range(bucket, &lo, &hi);
    if (bucket == 0) {
        out[0] = 0;
        return 1;
    }
    if (lo > hi)
        return 0;
    if (bucket == RAIL_DT_BUCKETS - 1)
        hi = lo + lo / 7 - 1;
    if (hi - lo < POINTS_PER_BUCKET) {
        int n = 0;
        for (size_t s = lo; s <= hi && n < POINTS_PER_BUCKET; s++)
            out[n++] = s;
        return n;
    }
    for (int i = 0; i < POINTS_PER_BUCKET; i++) {
        double f = (double)i / (POINTS_PER_BUCKET - 1);
        double v = (double)lo * pow((double)hi / (double)lo, f);
        out[i] = (size_t)v;
        if (out[i] < lo)
            out[i] = lo;
        if (out[i] > hi)
            out[i] = hi;
    }
    return POINTS_PER_BUCKET;
}

/* NCCL's own pick (its model, at the bucket's middle size) goes first when the project's model
 * scores it within m->defer_margin of the best: a change of NCCL's choice must pay for the risk of
 * the model being wrong (docs/cost-model.md §12). */
static void defer_to_nccl(struct rail_dt_cell *cell, const struct rail_model *m, int coll,
                          size_t nbytes, int pipe_ops, const double score[RAIL_DT_CANDIDATES])
{
    int a, p, c, pos = -1;
    if (cell->n < 2 || !(m->defer_margin > 0.0f) ||
        rail_model_nccl_pick(m, coll, nbytes, pipe_ops, &a, &p) < 0.0f)
        return;
    c = a * NCCL_NUM_PROTOCOLS + p;
    for (int i = 0; i < cell->n; i++)
        if (cell->cand[i] == c)
            pos = i;
    if (pos <= 0 || score[c] > score[cell->cand[0]] * (1.0 + m->defer_margin))
        return;
    memmove(&cell->cand[1], &cell->cand[0], (size_t)pos);
    cell->cand[0] = (uint8_t)c;
}

static int model_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                       float out[RAIL_DT_CANDIDATES])
{
    const struct rail_model *m = ctx;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        out[c] = rail_model_time(m, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS, nbytes,
                                 num_pipe_ops);
    return 0;
}

static void build_cell(struct rail_dt_cell *cell, const struct rail_model *m, int coll, int pipe,
                       int bucket, bool use_nchannels, rail_dt_times_fn fn, const void *ctx,
                       uint8_t *source)
{
    size_t sizes[POINTS_PER_BUCKET];
    int npts = sample_sizes(bucket, sizes);
    double score[RAIL_DT_CANDIDATES];
    float times[POINTS_PER_BUCKET][RAIL_DT_CANDIDATES];
    int pipe_ops = rail_dt_pipe_value(pipe);
    int n = 0;

    memset(cell, 0, sizeof(*cell));
    *source = RAIL_DT_SRC_MODEL;
    if (npts == 0)
        return;
    for (int i = 0; i < npts; i++)
        if (fn(ctx, coll, sizes[i], pipe_ops, times[i]))
            *source = RAIL_DT_SRC_CALIBRATION;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        score[c] = 0.0;
        for (int i = 0; i < npts; i++) {
            float best = -1.0f;
            if (times[i][c] < 0.0f) {
                score[c] = -1.0;
                break;
            }
            for (int k = 0; k < RAIL_DT_CANDIDATES; k++)
                if (times[i][k] >= 0.0f && (best < 0.0f || times[i][k] < best))
                    best = times[i][k];
            score[c] += best > 0.0f ? times[i][c] / best : 1.0;
        }
        if (score[c] >= 0.0)
            cell->cand[n++] = (uint8_t)c;
    }
    /* Stable insertion sort on score: ties keep NCCL's (algo, proto) order. */
    for (int i = 1; i < n; i++) {
        uint8_t v = cell->cand[i];
        int j = i - 1;
        while (j >= 0 && score[cell->cand[j]] > score[v]) {
            cell->cand[j + 1] = cell->cand[j];
            j--;
        }
        cell->cand[j + 1] = v;
    }
    cell->n = (uint8_t)n;
    if (*source == RAIL_DT_SRC_MODEL) /* measured times need no risk margin */
        defer_to_nccl(cell, m, coll, sizes[npts / 2], pipe_ops, score);
    if (use_nchannels && n > 0 && *source == RAIL_DT_SRC_MODEL) {
        int a = cell->cand[0] / NCCL_NUM_PROTOCOLS, p = cell->cand[0] % NCCL_NUM_PROTOCOLS;
        int nc = m->nchannels[a][p]; /* measured runs used NCCL's channels: keep them */
        cell->nchannels = (uint8_t)(nc > 0 && nc <= 64 ? nc : 0);
    }
}

void rail_dt_build_with(struct rail_decision_table *dt, const struct rail_model *m,
                        bool use_nchannels, rail_dt_times_fn times, const void *ctx)
{
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int pipe = 0; pipe < RAIL_DT_PIPES; pipe++)
            for (int b = 0; b < RAIL_DT_BUCKETS; b++)
                build_cell(&dt->cell[coll][pipe][b], m, coll, pipe, b, use_nchannels, times, ctx,
                           &dt->source[coll][pipe][b]);
}

void rail_dt_build(struct rail_decision_table *dt, const struct rail_model *m, bool use_nchannels)
{
    rail_dt_build_with(dt, m, use_nchannels, model_times, m);
}
