/* SPDX-License-Identifier: Apache-2.0 */
#include "decide/calib_apply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_table.h"

static double lg2(double x)
{
    return log(x) / log(2.0);
}

/* The model at nnodes nodes (rpn ranks each), built once per node count. */
static const struct rail_model *model_at(struct rail_calib_apply *a, int nnodes)
{
    if (nnodes == a->nnodes)
        return a->model;
    for (int i = 0; i < a->nmodels; i++)
        if (a->model_nodes[i] == nnodes)
            return a->models[i];
    if (a->nmodels == RAIL_CALIB_MAX_NODECNT || !a->topo)
        return NULL;
    struct rail_model *m = malloc(sizeof(*m));
    struct rail_comm_shape s = {
        .nranks = a->rpn * nnodes, .nnodes = nnodes, .min_rpn = a->rpn, .max_rpn = a->rpn};
    if (!m || rail_model_build_with(m, a->topo, &s, NULL, a->model->table) < 0) {
        free(m);
        return NULL;
    }
    a->model_nodes[a->nmodels] = nnodes;
    a->models[a->nmodels++] = m;
    return m;
}

static int key_cmp(const struct rail_calib_row *r, int coll, int algo, int proto, int rpn)
{
    int d[] = {r->coll - coll, r->algo - algo, r->proto - proto, r->nranks / r->nnodes - rpn};
    for (int i = 0; i < 4; i++)
        if (d[i])
            return d[i];
    return 0;
}

/* [lo, hi) of the calibration rows of (coll, algo, proto) at rpn ranks per node (the rows are
 * sorted by coll, algo, proto, rpn, nnodes, bytes). */
static void series_rows(const struct rail_calibration *c, int coll, int algo, int proto, int rpn,
                        int *lo, int *hi)
{
    int a = 0, b = c->n;
    while (a < b) {
        int m = a + (b - a) / 2;
        if (key_cmp(&c->rows[m], coll, algo, proto, rpn) < 0)
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (a < c->n && key_cmp(&c->rows[a], coll, algo, proto, rpn) == 0)
        a++;
    *hi = a;
}

static void resolve(struct rail_calib_apply *a, int coll, int cand)
{
    struct rail_calib_resid *s = &a->series[coll][cand];
    int lo, hi, nc = 0, nodes[RAIL_CALIB_MAX_NODECNT], start[RAIL_CALIB_MAX_NODECNT],
                count[RAIL_CALIB_MAX_NODECNT];
    series_rows(a->cal, coll, cand / NCCL_NUM_PROTOCOLS, cand % NCCL_NUM_PROTOCOLS, a->rpn, &lo,
                &hi);
    for (int i = lo; i < hi; i++) {
        if (nc && a->cal->rows[i].nnodes == nodes[nc - 1]) {
            count[nc - 1]++;
            continue;
        }
        if (nc == RAIL_CALIB_MAX_NODECNT)
            break;
        nodes[nc] = a->cal->rows[i].nnodes;
        start[nc] = i;
        count[nc++] = 1;
    }
    if (nc == 0)
        return;
    int j = 0, nn = a->nnodes;
    while (j < nc && nodes[j] < nn)
        j++;
    int ka = j < nc && nodes[j] == nn ? j : (j > 0 && j < nc ? j - 1 : (j == 0 ? 0 : nc - 1));
    s->a = &a->cal->rows[start[ka]];
    s->na = count[ka];
    s->ma = model_at(a, nodes[ka]);
    s->wa = 1.0f;
    s->distance = (float)fabs(lg2(nn) - lg2(nodes[ka]));
    if (nodes[ka] != nn && j > 0 && j < nc) { /* between two: linear in log(nodes) */
        double xa = lg2(nodes[j - 1]), xb = lg2(nodes[j]);
        s->b = &a->cal->rows[start[j]];
        s->nb = count[j];
        s->mb = model_at(a, nodes[j]);
        s->wb = (float)((lg2(nn) - xa) / (xb - xa));
        s->wa = 1.0f - s->wb;
        s->span = (float)(xb - xa);
        s->distance = (float)fmin(lg2(nn) - xa, xb - lg2(nn));
    } else if (nodes[ka] != nn) { /* beyond them: the nearest fades */
        s->wa = (float)exp(-s->distance / a->model->table->fade_nodes);
        s->beyond = true;
        int kp = ka == 0 ? 1 : ka - 1; /* the next one on the same side */
        if (kp >= 0 && kp < nc && kp != ka) {
            s->b = &a->cal->rows[start[kp]];
            s->nb = count[kp];
            s->mb = model_at(a, nodes[kp]);
            s->wb = 0.0f;
            s->partner = true;
            s->span = (float)fabs(lg2(nodes[kp]) - lg2(nodes[ka]));
        }
    }
    if (!s->ma || (s->nb && !s->mb))
        memset(s, 0, sizeof(*s));
    else if (s->beyond && !(s->wa >= RAIL_CALIB_MIN_WEIGHT)) {
        /* Mostly the model's guess by now, with a margin meant for measurements: the model's own
         * rules decide instead (a platform the table never saw, calibrated at 8-512 nodes and
         * run on 2, lost 7 points to NCCL this way; docs/calibration.md §6), except where the
         * residuals are carried whole (calib_times: stable ratios, ring steps). */
        s->too_far = true;
    }
}

void rail_calib_apply_init(struct rail_calib_apply *a)
{
    memset(a->series, 0, sizeof(a->series));
    a->nmodels = 0;
    if (!a->cal || a->cal->n == 0 || a->rpn < 1 || !a->model || !a->model->table)
        return;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
            resolve(a, coll, c);
}

void rail_calib_apply_fini(struct rail_calib_apply *a)
{
    for (int i = 0; i < a->nmodels; i++)
        free(a->models[i]);
    a->nmodels = 0;
}

/* log(measured / model) of one node count's rows at nbytes: interpolated in log(bytes) between
 * measured sizes, the nearest one's fading beyond them. A ring's is read at the size with the
 * same bytes per rank as nbytes on target_nnodes nodes (as the table's residuals are). */
/* The rows of one node count's series that a size rests on: the measured sizes around it (the
 * nearest one beyond the measured range); *i is the first row at or above it (n: none). A ring's
 * size is the one with the same bytes per rank on target_nnodes nodes (a ring step). */
static size_t bracket(const struct rail_calib_row *r, int n, int cand, size_t nbytes,
                      int target_nnodes, int *i, int *lo, int *hi)
{
    if (cand / NCCL_NUM_PROTOCOLS == NCCL_ALGO_RING && target_nnodes > 0) {
        double v = (double)nbytes * (double)r[0].nnodes / (double)target_nnodes;
        nbytes = v < 1.0 ? 1 : (v > 1e18 ? (size_t)1e18 : (size_t)v);
    }
    int k = 0;
    while (k < n && r[k].bytes < nbytes)
        k++;
    *i = k;
    *lo = k == 0 ? 0 : (k == n ? n - 1 : k - 1);
    *hi = k == n ? n - 1 : k;
    return nbytes;
}

static double residual(const struct rail_calib_row *r, int n, const struct rail_model *m, int coll,
                       int cand, size_t nbytes, int target_nnodes, bool *exact)
{
    int algo = cand / NCCL_NUM_PROTOCOLS, proto = cand % NCCL_NUM_PROTOCOLS;
    int i, lo, hi;
    nbytes = bracket(r, n, cand, nbytes, target_nnodes, &i, &lo, &hi);
    double x = lg2(nbytes ? (double)nbytes : 1.0), fade = m->table->fade_bytes;
    double rl = 0.0, rh = 0.0;
    float tl = rail_model_time(m, coll, algo, proto, r[lo].bytes, 1);
    float th = rail_model_time(m, coll, algo, proto, r[hi].bytes, 1);
    *exact = r[hi].bytes == nbytes && r[hi].nnodes == target_nnodes;
    if (!(tl > 0.0f) || !(th > 0.0f))
        return 0.0;
    rl = log(r[lo].time_us / tl);
    rh = log(r[hi].time_us / th);
    if (i == 0 && nbytes < r[0].bytes)
        return rl * exp(-(lg2((double)r[0].bytes) - x) / fade);
    if (i == n)
        return rh * exp(-(x - lg2((double)r[n - 1].bytes)) / fade);
    if (lo == hi || r[hi].bytes == nbytes)
        return rh;
    double x0 = lg2((double)r[lo].bytes), x1 = lg2((double)r[hi].bytes);
    return rl + (x - x0) / (x1 - x0) * (rh - rl);
}

/* At a measured point (every pair calibrated here measured at this node count and size): a pair
 * not measured there (its time the model's, scaled) may displace the measured fastest only when
 * the measured pairs' calibrated/model ratios agree (max / min <= RAIL_CALIB_AGREE) and it is
 * predicted faster by that spread times the table's margin; otherwise it is ranked no better than
 * just behind the measured fastest (docs/calibration.md §4). */
static int measured_point_rule(const struct rail_calib_apply *a, float out[RAIL_DT_CANDIDATES],
                               const bool measured[RAIL_DT_CANDIDATES], const double *ratio,
                               float *spread_out)
{
    double rmin = 0.0, rmax = 0.0;
    float best = -1.0f;
    int nmeas = 0, nother = 0, rule = RAIL_CALIB_RULE_ALL_MEASURED;

    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        if (out[c] < 0.0f)
            continue;
        if (!measured[c]) {
            nother++;
            continue;
        }
        rmin = nmeas == 0 || ratio[c] < rmin ? ratio[c] : rmin;
        rmax = nmeas == 0 || ratio[c] > rmax ? ratio[c] : rmax;
        best = best < 0.0f || out[c] < best ? out[c] : best;
        nmeas++;
    }
    float spread = (float)exp(rmax - rmin);
    if (spread_out)
        *spread_out = spread;
    if (nmeas == 0 || nother == 0)
        return rule;
    float need = spread * (1.0f + a->model->table->margin0);
    bool agree = spread <= RAIL_CALIB_AGREE;
    rule = agree ? RAIL_CALIB_RULE_HELD_MARGIN : RAIL_CALIB_RULE_HELD_SPREAD;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        if (out[c] < 0.0f || measured[c])
            continue;
        if (agree && out[c] * need < best) {
            rule = RAIL_CALIB_RULE_UNMEASURED;
            continue;
        }
        float floor = best * (1.0f + a->model->table->margin0);
        out[c] = out[c] > floor ? out[c] : floor;
    }
    return rule;
}

/* Whether the residuals at (coll, nbytes) are carried across node counts (calib_apply.h,
 * RAIL_CALIB_STABLE): the margin they then need (log), or -1. rn: each calibrated pair's
 * residual at the nearest (or first) node count of its series, rf: at the other one; t: the
 * model's times. in[c]: the pairs carried. */
static double carried_change(const struct rail_calib_apply *a, int coll, const bool cal[],
                             const double rn[], const double rf[], const float t[], bool in[])
{
    const struct rail_calib_resid *ref = NULL;
    double mn = 0.0, mf = 0.0, u = 0.0, info = 0.0, best = -1.0, all = 0.0;
    int n = 0, ncal = 0;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        if (cal[c]) {
            double v = t[c] * exp(rn[c]);
            best = best < 0.0 || v < best ? v : best;
            all += rn[c];
            ncal++;
        }
    if (ncal == 0)
        return -1.0;
    all /= ncal;
    /* Stable ratios: contenders calibrated at the same two node counts. */
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        const struct rail_calib_resid *s = &a->series[coll][c];
        in[c] = false;
        if (!cal[c] || !s->nb || t[c] * exp(rn[c]) > best * RAIL_CALIB_CONTEND)
            continue;
        if (!ref)
            ref = s;
        if (s->a->nnodes != ref->a->nnodes || s->b->nnodes != ref->b->nnodes)
            continue;
        in[c] = true;
        mn += rn[c];
        mf += rf[c];
        n++;
    }
    if (n >= 2) {
        mn /= n;
        mf /= n;
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
            if (in[c]) {
                u = fmax(u, fabs((rn[c] - mn) - (rf[c] - mf)));
                info = fmax(info, fmax(fabs(rn[c] - mn), fabs(rf[c] - mf)));
            }
        if (info > RAIL_CALIB_STABLE)
            return u;
        memset(in, 0, sizeof(bool) * RAIL_DT_CANDIDATES);
        return -1.0;
    }
    /* Ring steps: every contender (calibrated, or the model's time scaled by the calibrated
     * pairs' mean) a calibrated ring pair. */
    n = 0;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        in[c] = false;
        double v = cal[c] ? t[c] * exp(rn[c]) : t[c] * exp(all);
        if (!(t[c] > 0.0f) || v > best * RAIL_CALIB_CONTEND)
            continue;
        if (!cal[c] || c / NCCL_NUM_PROTOCOLS != NCCL_ALGO_RING) {
            memset(in, 0, sizeof(bool) * RAIL_DT_CANDIDATES);
            return -1.0;
        }
        in[c] = true;
        n++;
    }
    if (n >= 2)
        return RAIL_CALIB_RING_CHANGE;
    memset(in, 0, sizeof(bool) * RAIL_DT_CANDIDATES);
    return -1.0;
}

static int calib_times(const struct rail_calib_apply *a, int coll, size_t nbytes, int num_pipe_ops,
                       float out[RAIL_DT_CANDIDATES], float *distance, int *rule, float *spread)
{
    double logsum = 0.0, ratio[RAIL_DT_CANDIDATES], rn[RAIL_DT_CANDIDATES], rf[RAIL_DT_CANDIDATES];
    int nscale = 0, kind = RAIL_DT_TIMES_MODEL;
    float dist = -1.0f;
    bool cal[RAIL_DT_CANDIDATES], all_exact = true, measured[RAIL_DT_CANDIDATES],
                                  exact[RAIL_DT_CANDIDATES], in[RAIL_DT_CANDIDATES];
    int here = 0; /* series measured at this node count */

    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        const struct rail_calib_resid *s = &a->series[coll][c];
        bool unused;
        out[c] = rail_model_time(a->model, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS,
                                 nbytes, num_pipe_ops);
        cal[c] = s->na > 0 && out[c] > 0.0f;
        measured[c] = exact[c] = false;
        if (!cal[c])
            continue;
        rn[c] = residual(s->a, s->na, s->ma, coll, c, nbytes, a->nnodes, &exact[c]);
        rf[c] = s->nb ? residual(s->b, s->nb, s->mb, coll, c, nbytes, a->nnodes, &unused) : 0.0;
    }
    float t[RAIL_DT_CANDIDATES];
    memcpy(t, out, sizeof(t));
    double u = carried_change(a, coll, cal, rn, rf, t, in);
    bool stable = u >= 0.0 && u <= RAIL_CALIB_STABLE;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        const struct rail_calib_resid *s = &a->series[coll][c];
        bool carried = stable && in[c];
        if (!cal[c])
            continue;
        if (s->too_far && !carried) { /* too far to count as measured: the model's */
            cal[c] = false;
            continue;
        }
        double r = carried && s->beyond ? rn[c] : s->wa * rn[c] + s->wb * rf[c];
        float d = s->distance;
        if (s->distance == 0.0f && !s->nb) {
            here++;
            all_exact &= exact[c];
            measured[c] = exact[c];
        }
        if (carried) { /* the margin that covers the ratios' observed change */
            double k = s->beyond ? 2.0 : 1.0,
                   far = s->beyond && s->span > 0.0f ? fmax(1.0, d / s->span) : 1.0;
            double de = u * far / (k * a->model->table->margin_slope);
            d = (float)fmin(d, fmax(de, 1e-3));
        }
        ratio[c] = r;
        out[c] = (float)(out[c] * exp(r));
        logsum += r;
        nscale++;
        dist = dist < 0.0f || d < dist ? d : dist;
        kind = s->beyond ? RAIL_DT_TIMES_CAL_BEYOND
                         : (kind == RAIL_DT_TIMES_MODEL ? RAIL_DT_TIMES_CAL_NEAR : kind);
    }
    *distance = dist > 0.0f ? dist : 0.0f;
    *rule = RAIL_CALIB_RULE_NONE;
    if (nscale == 0)
        return RAIL_DT_TIMES_MODEL;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        if (!cal[c] && out[c] >= 0.0f)
            out[c] = (float)(out[c] * exp(logsum / nscale));
    if (!(here && all_exact))
        return kind;
    *rule = measured_point_rule(a, out, measured, ratio, spread);
    return RAIL_DT_TIMES_CAL_MEASURED;
}

int rail_calib_apply_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                           float out[RAIL_DT_CANDIDATES], float *distance)
{
    int rule;
    return calib_times(ctx, coll, nbytes, num_pipe_ops, out, distance, &rule, NULL);
}

int rail_calib_apply_rule(const struct rail_calib_apply *a, int coll, size_t nbytes,
                          int num_pipe_ops, float *spread)
{
    float out[RAIL_DT_CANDIDATES], dist;
    int rule = RAIL_CALIB_RULE_NONE;
    if (spread)
        *spread = 1.0f;
    if (coll < 0 || coll >= RAIL_NUM_COLLS)
        return RAIL_CALIB_RULE_NONE;
    (void)calib_times(a, coll, nbytes, num_pipe_ops, out, &dist, &rule, spread);
    return rule;
}

const char *rail_calib_rule_code(int rule)
{
    static const char *const codes[] = {"", "all-measured", "held-spread", "held-margin",
                                        "unmeasured"};
    return rule > 0 && rule <= RAIL_CALIB_RULE_UNMEASURED ? codes[rule] : "";
}

const char *rail_calib_rule_name(int rule)
{
    switch (rule) {
    case RAIL_CALIB_RULE_ALL_MEASURED:
        return "measured fastest: every pair measured here";
    case RAIL_CALIB_RULE_HELD_SPREAD:
        return "measured fastest: unmeasured pairs held back, the measured pairs' "
               "calibrated/model ratios disagree";
    case RAIL_CALIB_RULE_HELD_MARGIN:
        return "measured fastest: no unmeasured pair predicted faster by the ratios' spread "
               "and the margin";
    case RAIL_CALIB_RULE_UNMEASURED:
        return "an unmeasured pair may displace the measured fastest: the ratios agree and its "
               "predicted gain clears their spread and the margin";
    default:
        return "";
    }
}

static bool rows_from_job(const struct rail_calib_row *r, int n, int cand, size_t nbytes,
                          int target_nnodes)
{
    int i, lo, hi;
    if (n <= 0)
        return false;
    (void)bracket(r, n, cand, nbytes, target_nnodes, &i, &lo, &hi);
    return r[lo].origin == RAIL_CALIB_ORIGIN_JOB || r[hi].origin == RAIL_CALIB_ORIGIN_JOB;
}

bool rail_calib_apply_from_job(const struct rail_calib_apply *a, int coll, size_t nbytes)
{
    if (coll < 0 || coll >= RAIL_NUM_COLLS)
        return false;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        const struct rail_calib_resid *s = &a->series[coll][c];
        if (rows_from_job(s->a, s->na, c, nbytes, a->nnodes) ||
            rows_from_job(s->b, s->nb, c, nbytes, a->nnodes))
            return true;
    }
    return false;
}

int rail_calib_apply_too_far(const struct rail_calib_apply *a)
{
    int n = 0;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
            n += a->series[coll][c].too_far;
    return n;
}

int rail_calib_apply_summary(const struct rail_calib_apply *a, char *buf, size_t len)
{
    struct rail_calib_cover cv;
    size_t k;
    int applied = 0, too_far = rail_calib_apply_too_far(a);

    rail_calib_cover(a->cal, &cv);
    k = (size_t)snprintf(buf, len,
                         "covers %d point(s): %d shape(s), %d pair(s), %d-%d node(s), %d-%d "
                         "rank(s)/node, %llu-%llu bytes; applied to %d node(s) x %d rank(s)/node:",
                         cv.rows, cv.shapes, cv.pairs, cv.nnodes_min, cv.nnodes_max, cv.rpn_min,
                         cv.rpn_max, (unsigned long long)cv.bytes_min,
                         (unsigned long long)cv.bytes_max, a->nnodes, a->rpn);
    for (int coll = 0; coll < RAIL_NUM_COLLS && a->rpn > 0; coll++)
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
            const struct rail_calib_resid *s = &a->series[coll][c];
            if (!s->na || s->too_far)
                continue;
            applied++;
            if (k < len)
                k += (size_t)snprintf(buf + k, len - k, " %s %s/%s %s;", rail_coll_name(coll),
                                      rail_algo_name(c / NCCL_NUM_PROTOCOLS),
                                      rail_proto_name(c % NCCL_NUM_PROTOCOLS),
                                      s->distance == 0.0f    ? "measured"
                                      : s->nb && !s->partner ? "interpolated"
                                                             : "extrapolated");
        }
    if (!applied && k < len)
        k += (size_t)snprintf(buf + k, len - k, " nothing for this shape (default model)%s",
                              too_far ? ";" : "");
    if (too_far && k < len)
        k += (size_t)snprintf(buf + k, len - k,
                              " %d pair(s) too far beyond the calibrated node counts (the model "
                              "and its own rules decide there, except where their ratios carry);",
                              too_far);
    if (k < len && k > 0 && buf[k - 1] == ';')
        buf[k - 1] = '\0';
    return applied;
}
