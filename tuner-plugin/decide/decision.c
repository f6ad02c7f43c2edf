/* SPDX-License-Identifier: Apache-2.0 */
#include "decide/decision.h"

#include "decide/extrapolate.h"
#include "model/model_table.h"

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

/* Do no harm (docs/cost-model.md §12): NCCL's own pick (its model, at each of the bucket's
 * sample sizes) stands unless a candidate is predicted faster than it by the risk margin. The
 * cell keeps only the candidates that clear it against every pick NCCL makes inside the bucket,
 * best first; with none, or when the best is what NCCL picks all over the bucket anyway, the
 * tuner leaves NCCL's table alone (so NCCL's real choice stands, whatever its emulation says).
 * The margin grows with the distance from the shapes the measurements cover; outside their
 * range the prior (NCCL's model and the validated refinements) must predict the gain as well.
 * Across nodes where no step model is trained, a pair needs measurements near the shape.
 * Times measured here (a calibration at this node count and size) need no margin. */
/* A cell's candidates before truncation to RAIL_DT_KEEP. */
struct ranked {
    int n;
    uint8_t cand[RAIL_DT_CANDIDATES];
};

/* What a cell is checked against: NCCL's picks across the bucket, the sample sizes, the scores
 * (mean ratio to the best) of the times the cell is ranked on. */
struct cell_ctx {
    const struct rail_model *m;
    int coll, pipe_ops, npts, npicks;
    const size_t *sizes;
    size_t mid;
    const double *score;
    int picks[POINTS_PER_BUCKET];
};

/* Candidate c beats each of NCCL's picks by margin: in score, and (prior) by the physical prior
 * at the bucket's middle size too. */
static bool beats(const struct cell_ctx *x, int c, float margin, bool prior)
{
    for (int k = 0; k < x->npicks; k++) {
        int n = x->picks[k];
        if (c == n)
            continue;
        if (!(x->score[c] * (1.0 + margin) < x->score[n]))
            return false;
        if (prior) { /* physically explained: the prior sees the gain too */
            float pn = rail_model_prior_time(x->m, x->coll, n / NCCL_NUM_PROTOCOLS,
                                             n % NCCL_NUM_PROTOCOLS, x->mid, x->pipe_ops);
            float pc = rail_model_prior_time(x->m, x->coll, c / NCCL_NUM_PROTOCOLS,
                                             c % NCCL_NUM_PROTOCOLS, x->mid, x->pipe_ops);
            if (!(pc > 0.0f && pc * (1.0f + margin) < pn))
                return false;
        }
    }
    return true;
}

/* The measured time of pair k at the edge model e, at the size with the same bytes per rank as
 * nbytes here (a ring's step); -1 when e holds no measurement of k at its node count and that
 * size (the residual rows of the table at exactly that node count, within their sizes). */
static float edge_measured(const struct rail_model *e, const struct rail_model *m, int coll, int k,
                           size_t nbytes, int pipe_ops)
{
    const struct rail_resid_series *s = &e->resid[coll][k];
    double v = (double)nbytes * (double)e->shape.nnodes / (double)m->shape.nnodes;
    size_t at = v < 1.0 ? 1 : (size_t)v;
    if (s->na <= 0 || s->nb > 0 || s->wa != 1.0f || s->a[0].nnodes != e->shape.nnodes ||
        at < s->a[0].bytes || at > s->a[s->na - 1].bytes)
        return -1.0f;
    return rail_model_time(e, coll, k / NCCL_NUM_PROTOCOLS, k % NCCL_NUM_PROTOCOLS, at, pipe_ops);
}

/* docs/cost-model.md §12.5: c was measured fastest at both edge node counts (same bytes per
 * rank), ahead of each of NCCL's picks here by the margin, at every sample size of the bucket;
 * and the model here predicts the same gain. */
static bool carried(const struct cell_ctx *x, const struct rail_extrap_coll *xc, int c)
{
    float margin = rail_extrap_margin(x->m, xc->dist);
    const struct rail_model *edges[2] = {xc->m_edge, xc->m_next};
    if (!beats(x, c, margin, false))
        return false;
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < x->npts; i++) {
            float tc = edge_measured(edges[e], x->m, x->coll, c, x->sizes[i], x->pipe_ops);
            if (!(tc > 0.0f))
                return false;
            for (int k = 0; k < RAIL_DT_CANDIDATES; k++) {
                bool pick = false;
                for (int j = 0; j < x->npicks; j++)
                    pick |= x->picks[j] == k;
                if (k == c || x->score[k] < 0.0)
                    continue;
                float tk = edge_measured(edges[e], x->m, x->coll, k, x->sizes[i], x->pipe_ops);
                if (pick && !(tk > 0.0f && tc * (1.0f + margin) < tk))
                    return false; /* NCCL's pick not measured there, or not beaten enough */
                if (tk > 0.0f && tk < tc)
                    return false; /* another measured pair was faster: not a stable ranking */
            }
        }
    return true;
}

/* docs/cost-model.md §12.6: beyond the trained node range, ring candidate c replaces NCCL's ring
 * protocol(s). At the same ranks per node every ring has the same mix of NVLink and network
 * steps (nn / n = 1 / r), and at the same bytes per rank the same step size, so two protocols'
 * ring times differ by their per-step costs whatever the node count. c must have been measured
 * at the nearest trained node count (and the next, when there is one) at the same bytes per rank
 * ahead of each of NCCL's picks by RAIL_SAME_STEP_MARGIN, at every sample size of the bucket, and
 * no other ring protocol measured faster than c there. */
static bool ring_step(const struct cell_ctx *x, const struct rail_extrap_coll *xr, int c)
{
    const struct rail_model *edges[2] = {xr->r_edge, xr->r_next};
    if (c / NCCL_NUM_PROTOCOLS != NCCL_ALGO_RING)
        return false;
    for (int k = 0; k < x->npicks; k++)
        if (x->picks[k] / NCCL_NUM_PROTOCOLS != NCCL_ALGO_RING || x->picks[k] == c)
            return false;
    for (int e = 0; e < 2 && edges[e]; e++)
        for (int i = 0; i < x->npts; i++) {
            float tc = edge_measured(edges[e], x->m, x->coll, c, x->sizes[i], x->pipe_ops);
            if (!(tc > 0.0f))
                return false;
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                int k = NCCL_ALGO_RING * NCCL_NUM_PROTOCOLS + p;
                bool pick = false;
                for (int j = 0; j < x->npicks; j++)
                    pick |= x->picks[j] == k;
                if (k == c)
                    continue;
                float tk = edge_measured(edges[e], x->m, x->coll, k, x->sizes[i], x->pipe_ops);
                if (pick && !(tk > 0.0f && tc * (1.0f + RAIL_SAME_STEP_MARGIN) < tk))
                    return false;
                if (tk > 0.0f && tk < tc)
                    return false;
            }
        }
    return true;
}

/* Do no harm (docs/cost-model.md §12): NCCL's own pick (its model, at each of the bucket's
 * sample sizes) stands unless a candidate is predicted faster than it by the risk margin. The
 * cell keeps only the candidates that clear it against every pick NCCL makes inside the bucket,
 * best first; with none, or when the best is what NCCL picks all over the bucket anyway, the
 * tuner leaves NCCL's table alone (so NCCL's real choice stands, whatever its emulation says).
 * The margin grows with the distance from the shapes the measurements cover; outside their
 * range the prior (NCCL's model and the validated refinements) must predict the gain as well,
 * or the ranking must be carried from the last trained node counts (extrapolate.h). On a
 * platform class the table never measured, the gain must reach RAIL_UNSEEN_CLASS_MARGIN.
 * Across nodes where no step model is trained, a pair needs measurements near the shape.
 * Times measured here (a calibration at this node count and size) need no margin. */
static void keep_what_beats_nccl(struct ranked *cell, uint8_t *why, const struct rail_model *m,
                                 int coll, const size_t *sizes, int npts, int pipe_ops,
                                 const double *score, int kind, float calib_distance,
                                 const struct rail_extrap *xp)
{
    struct cell_ctx x = {.m = m,
                         .coll = coll,
                         .pipe_ops = pipe_ops,
                         .npts = npts,
                         .sizes = sizes,
                         .mid = sizes[npts / 2],
                         .score = score};
    int keep = 0, why0 = RAIL_DT_WHY_NONE, ring_at = -1;
    float margin = 0.0f, dist = 0.0f;
    bool inside = true, unseen = false, held = false;
    const struct rail_extrap_coll *xc = NULL, *xr = NULL;

    for (int i = 0; i < npts; i++) {
        int a, p, c, found = 0;
        if (rail_model_nccl_pick(m, coll, sizes[i], pipe_ops, &a, &p) < 0.0f) {
            cell->n = 0; /* NCCL's model offers nothing the tuner knows: hands off */
            return;
        }
        c = a * NCCL_NUM_PROTOCOLS + p;
        for (int k = 0; k < cell->n; k++)
            found |= cell->cand[k] == c;
        if (!found) {
            cell->n = 0;
            return;
        }
        for (int k = 0; k < x.npicks && found; k++)
            found = x.picks[k] != c;
        if (found)
            x.picks[x.npicks++] = c;
    }
    if (kind == RAIL_DT_TIMES_MODEL) {
        inside = rail_model_trust(m, coll, x.mid, &margin, &dist) != 0;
        unseen = !rail_model_class_seen(m);
        if (!inside && xp && xp->coll[coll].active)
            xc = &xp->coll[coll];
        if (xp && xp->coll[coll].ring)
            xr = &xp->coll[coll];
    } else if (calib_distance > 0.0f) /* measured at other node counts: the margin grows with
                                       * the distance, twice as fast when extrapolating */
        margin = m->table->margin0 + m->table->margin_slope * calib_distance *
                                         (kind == RAIL_DT_TIMES_CAL_BEYOND ? 2.0f : 1.0f);
    for (int i = 0; i < cell->n; i++) {
        int c = cell->cand[i], w = RAIL_DT_WHY_NONE;
        bool is_pick = false, ok;
        for (int k = 0; k < x.npicks; k++)
            is_pick |= x.picks[k] == c;
        if (xc && !is_pick && carried(&x, xc, c)) {
            ok = true;
            w = RAIL_DT_WHY_EXTRAPOLATED;
        } else if (unseen) {
            ok = beats(&x, c, RAIL_UNSEEN_CLASS_MARGIN, true);
            w = RAIL_DT_WHY_UNSEEN_GAIN;
            /* The rule that held NCCL's choice: the outside margin of a seen class would have
             * changed it (NCCL's single pick all over the bucket changes nothing). */
            held |= !ok && !(is_pick && x.npicks == 1) && beats(&x, c, margin, true);
        } else
            ok = beats(&x, c, margin, !inside);
        if (!ok && xr && !is_pick && ring_step(&x, xr, c)) {
            ok = true;
            w = RAIL_DT_WHY_RING_STEP;
        }
        /* Across nodes without a trained step model (the prior's numbers), only a pair measured
         * near this shape (a residual of the table) or at it (a published set) is backed by a
         * measurement. */
        if (ok && w != RAIL_DT_WHY_EXTRAPOLATED && w != RAIL_DT_WHY_RING_STEP && !m->trained &&
            m->family != RAIL_FAM_NODE && kind == RAIL_DT_TIMES_MODEL &&
            !rail_model_pair_measured(m, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS,
                                      x.mid))
            ok = false;
        if (ok) {
            if (keep == 0)
                why0 = is_pick ? RAIL_DT_WHY_NONE : w;
            if (w == RAIL_DT_WHY_RING_STEP && ring_at < 0)
                ring_at = keep;
            cell->cand[keep++] = (uint8_t)c;
        } else if (!is_pick && !xc && !xr)
            break; /* sorted: nothing after this beats NCCL's picks by the margin (a carried
                    * ranking has a margin of its own) */
    }
    /* The ring protocol measured ahead at the same bytes per rank goes first: the model ranked it
     * behind NCCL's pick, the measurements ahead of it (§12.6). */
    if (ring_at > 0) {
        uint8_t c = cell->cand[ring_at];
        memmove(&cell->cand[1], &cell->cand[0], (size_t)ring_at);
        cell->cand[0] = c;
        why0 = RAIL_DT_WHY_RING_STEP;
    }
    /* NCCL's single pick all over the bucket, first: nothing to change. */
    if (keep > 0 && x.npicks == 1 && cell->cand[0] == x.picks[0])
        keep = 0;
    cell->n = (uint8_t)keep;
    *why = keep > 0 ? (uint8_t)why0 : held ? RAIL_DT_WHY_UNSEEN_KEPT : RAIL_DT_WHY_NONE;
}

int rail_dt_model_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                        float out[RAIL_DT_CANDIDATES], float *distance)
{
    const struct rail_model *m = ctx;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        out[c] = rail_model_time(m, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS, nbytes,
                                 num_pipe_ops);
    *distance = 0.0f;
    return RAIL_DT_TIMES_MODEL;
}

/* What build_cell reports besides the cell. */
struct cell_out {
    uint8_t *source, *why;
    double *score; /* NULL: not wanted */
    int *kind;     /* NULL: not wanted */
};

static void build_cell(struct rail_dt_cell *cell, const struct rail_model *m, int coll, int pipe,
                       int bucket, bool use_nchannels, rail_dt_times_fn fn, const void *ctx,
                       const struct rail_extrap *xp, const struct cell_out *out)
{
    uint8_t *source = out->source;
    double *score_out = out->score;
    int *kind_out = out->kind;
    size_t sizes[POINTS_PER_BUCKET];
    int npts = sample_sizes(bucket, sizes);
    double score[RAIL_DT_CANDIDATES];
    float times[POINTS_PER_BUCKET][RAIL_DT_CANDIDATES];
    int pipe_ops = rail_dt_pipe_value(pipe);
    int n = 0;
    struct ranked rk;
    float calib_distance = 0.0f;
    int kind = RAIL_DT_TIMES_MODEL;
    bool measured[POINTS_PER_BUCKET], any_measured = false;

    memset(cell, 0, sizeof(*cell));
    *source = RAIL_DT_SRC_MODEL;
    *out->why = RAIL_DT_WHY_NONE;
    if (kind_out)
        *kind_out = RAIL_DT_TIMES_MODEL;
    if (npts == 0)
        return;
    for (int i = 0; i < npts; i++) {
        float d = 0.0f;
        int k = fn(ctx, coll, sizes[i], pipe_ops, times[i], &d);
        measured[i] = k == RAIL_DT_TIMES_CAL_MEASURED;
        any_measured |= measured[i];
        if (k != RAIL_DT_TIMES_MODEL) {
            *source = RAIL_DT_SRC_CALIBRATION;
            calib_distance = d > calib_distance ? d : calib_distance;
            kind = k > kind ? k : kind;
        }
    }
    /* A size the calibration measured at this node count decides the cell alone: at a covered
     * point the calibrated choice is the measured fastest, never worse than without it. */
    if (any_measured)
        kind = RAIL_DT_TIMES_CAL_MEASURED;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        score[c] = 0.0;
        for (int i = 0; i < npts; i++) {
            float best = -1.0f;
            if (any_measured && !measured[i])
                continue;
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
            rk.cand[n++] = (uint8_t)c;
    }
    /* Stable insertion sort on score: ties keep NCCL's (algo, proto) order. */
    for (int i = 1; i < n; i++) {
        uint8_t v = rk.cand[i];
        int j = i - 1;
        while (j >= 0 && score[rk.cand[j]] > score[v]) {
            rk.cand[j + 1] = rk.cand[j];
            j--;
        }
        rk.cand[j + 1] = v;
    }
    rk.n = n;
    if (score_out)
        memcpy(score_out, score, sizeof(score));
    if (kind_out)
        *kind_out = kind;
    keep_what_beats_nccl(&rk, out->why, m, coll, sizes, npts, pipe_ops, score, kind, calib_distance,
                         xp);
    cell->n = (uint8_t)(rk.n < RAIL_DT_KEEP ? rk.n : RAIL_DT_KEEP);
    memcpy(cell->cand, rk.cand, cell->n);
    if (use_nchannels && cell->n > 0 && *source == RAIL_DT_SRC_MODEL) {
        int a = cell->cand[0] / NCCL_NUM_PROTOCOLS, p = cell->cand[0] % NCCL_NUM_PROTOCOLS;
        int nc = m->nchannels[a][p]; /* measured runs used NCCL's channels: keep them */
        cell->nchannels = (uint8_t)(nc > 0 && nc <= 64 ? nc : 0);
    }
}

/* Measured at other node counts, a calibrated cell often leaves NCCL's choice alone because its
 * ranking does not clear the distance margin, although the default model (under its own
 * do-no-harm rule, trained on the platform's structure) changes it. Such a cell gives the model's
 * cell back when the calibrated times agree with the change: the model's choice ranks strictly
 * better than NCCL's pick by the calibration too. A calibration then never revokes an improvement
 * of the default table that its own measurements support: held out, no P5 node count is worse
 * calibrated than with the table alone (p5_256x8: 2.0% regret, was 3.7%, NCCL's; p5_128x1 0.4%,
 * was 0.9%; docs/calibration.md §6). */
static void model_unless_contradicted(struct rail_dt_cell *cell, uint8_t *source, uint8_t *why,
                                      const struct rail_model *m, int coll, int pipe, int bucket,
                                      bool use_nchannels, const double *cal_score,
                                      const struct rail_extrap *xp)
{
    struct rail_dt_cell mc;
    uint8_t msrc, mwhy;
    size_t sizes[POINTS_PER_BUCKET];
    int npts = sample_sizes(bucket, sizes), a, p;
    build_cell(&mc, m, coll, pipe, bucket, use_nchannels, rail_dt_model_times, m, xp,
               &(struct cell_out){.source = &msrc, .why = &mwhy});
    if (mc.n == 0 || npts == 0)
        return;
    if (rail_model_nccl_pick(m, coll, sizes[npts / 2], rail_dt_pipe_value(pipe), &a, &p) < 0.0f)
        return;
    int pick = a * NCCL_NUM_PROTOCOLS + p, c = mc.cand[0];
    /* A ring protocol the table measured ahead at the same bytes per rank (§12.6) stands against
     * a calibration extrapolated from other node counts: that calibration scales its times by
     * size, the rule reads the measurements where the ring's step is the same. */
    if (mwhy != RAIL_DT_WHY_RING_STEP &&
        (cal_score[c] < 0.0 || cal_score[pick] < 0.0 || cal_score[c] >= cal_score[pick]))
        return;
    *cell = mc;
    *source = RAIL_DT_SRC_MODEL;
    *why = mwhy;
}

void rail_dt_build_ext(struct rail_decision_table *dt, const struct rail_model *m,
                       bool use_nchannels, rail_dt_times_fn times, const void *ctx,
                       const struct rail_extrap *xp)
{
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int pipe = 0; pipe < RAIL_DT_PIPES; pipe++)
            for (int b = 0; b < RAIL_DT_BUCKETS; b++) {
                struct rail_dt_cell *cell = &dt->cell[coll][pipe][b];
                uint8_t *src = &dt->source[coll][pipe][b], *why = &dt->why[coll][pipe][b];
                double score[RAIL_DT_CANDIDATES];
                int kind;
                build_cell(
                    cell, m, coll, pipe, b, use_nchannels, times, ctx, xp,
                    &(struct cell_out){.source = src, .why = why, .score = score, .kind = &kind});
                if (times != rail_dt_model_times && *src == RAIL_DT_SRC_CALIBRATION &&
                    cell->n == 0 && kind != RAIL_DT_TIMES_CAL_MEASURED)
                    model_unless_contradicted(cell, src, why, m, coll, pipe, b, use_nchannels,
                                              score, xp);
            }
}

void rail_dt_build_with(struct rail_decision_table *dt, const struct rail_model *m,
                        bool use_nchannels, rail_dt_times_fn times, const void *ctx)
{
    rail_dt_build_ext(dt, m, use_nchannels, times, ctx, NULL);
}

const char *rail_dt_why_name(int why)
{
    switch (why) {
    case RAIL_DT_WHY_UNSEEN_KEPT:
        return "platform class not in training: NCCL's choice kept";
    case RAIL_DT_WHY_UNSEEN_GAIN:
        return "platform class not in training: the prior predicts a 2x gain";
    case RAIL_DT_WHY_EXTRAPOLATED:
        return "extrapolated";
    case RAIL_DT_WHY_RING_STEP:
        return "ring protocol measured at the same bytes per rank";
    default:
        return "";
    }
}

const char *rail_dt_why_code(int why)
{
    static const char *const codes[RAIL_DT_WHY_COUNT] = {"", "class-unseen", "class-unseen-gain",
                                                         "extrapolated", "ring-step"};
    return why > 0 && why < RAIL_DT_WHY_COUNT ? codes[why] : "";
}

void rail_dt_build(struct rail_decision_table *dt, const struct rail_model *m, bool use_nchannels)
{
    rail_dt_build_with(dt, m, use_nchannels, rail_dt_model_times, m);
}
