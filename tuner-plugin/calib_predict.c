/* SPDX-License-Identifier: Apache-2.0 */
/* rail_calib_time and rail_calib_cover (calibration.h): predictions from the calibration rows. */
#include <math.h>
#include <string.h>

#include "calibration.h"

/* Order of a row against the series key (coll, algo, proto, rpn): <0, 0, >0. */
static int key_cmp(const struct rail_calib_row *r, int coll, int algo, int proto, int rpn)
{
    int d[] = {r->coll - coll, r->algo - algo, r->proto - proto, r->nranks / r->nnodes - rpn};
    for (int i = 0; i < 4; i++)
        if (d[i])
            return d[i];
    return 0;
}

/* [lo, hi) rows of the series (coll, algo, proto, rpn) in the sorted rows. */
static void series_range(const struct rail_calibration *c, int coll, int algo, int proto, int rpn,
                         int *lo, int *hi)
{
    int a = 0, b = c->n;
    while (a < b) { /* first row not below the key */
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

/* Time at bytes from the rows [lo, hi) of one node count (sorted by bytes). */
static double curve(const struct rail_calib_row *r, int n, uint64_t bytes, int *exact)
{
    *exact = 0;
    if (bytes <= r[0].bytes) {
        *exact = bytes == r[0].bytes;
        return r[0].time_us;
    }
    if (bytes >= r[n - 1].bytes) {
        double t = r[n - 1].time_us, slope;
        if (bytes == r[n - 1].bytes) {
            *exact = 1;
            return t;
        }
        if (n < 2)
            return t * (double)bytes / (double)r[n - 1].bytes;
        /* Latency + bytes / bandwidth through the last two points; never steeper than
         * proportional growth and never decreasing. */
        slope = (t - r[n - 2].time_us) / (double)(r[n - 1].bytes - r[n - 2].bytes);
        if (slope > t / (double)r[n - 1].bytes)
            slope = t / (double)r[n - 1].bytes;
        if (slope < 0.0)
            slope = 0.0;
        return t + slope * (double)(bytes - r[n - 1].bytes);
    }
    {
        int lo = 1, hi = n - 1; /* first i with bytes <= r[i].bytes (r[0] < bytes < r[n-1]) */
        while (lo < hi) {
            int m = lo + (hi - lo) / 2;
            if (bytes <= r[m].bytes)
                hi = m;
            else
                lo = m + 1;
        }
        double x0 = log((double)r[lo - 1].bytes), x1 = log((double)r[lo].bytes);
        double y0 = log(r[lo - 1].time_us), y1 = log(r[lo].time_us);
        double f = (log((double)bytes) - x0) / (x1 - x0);
        *exact = bytes == r[lo].bytes;
        return exp(y0 + f * (y1 - y0));
    }
}

static double floor_of(const struct rail_calib_row *r, int n)
{
    double m = r[0].time_us;
    for (int i = 1; i < n; i++)
        if (r[i].time_us < m)
            m = r[i].time_us;
    return m;
}

int rail_calib_resolve(const struct rail_calibration *c, int coll, int algo, int proto, int rpn,
                       int nnodes, struct rail_calib_series *s)
{
    int lo, hi, nc = 0, j, a;
    int nodes[RAIL_CALIB_MAX_NODECNT], start[RAIL_CALIB_MAX_NODECNT], count[RAIL_CALIB_MAX_NODECNT];

    memset(s, 0, sizeof(*s));
    if (!c || c->n == 0 || rpn < 1 || nnodes < 1)
        return 0;
    series_range(c, coll, algo, proto, rpn, &lo, &hi);
    for (int i = lo; i < hi; i++) {
        if (nc && c->rows[i].nnodes == nodes[nc - 1]) {
            count[nc - 1]++;
            continue;
        }
        if (nc == RAIL_CALIB_MAX_NODECNT)
            break;
        nodes[nc] = c->rows[i].nnodes;
        start[nc] = i;
        count[nc] = 1;
        nc++;
    }
    for (j = 0; j < nc; j++)
        if (nodes[j] == nnodes) {
            s->a = &c->rows[start[j]];
            s->na = count[j];
            s->mode = RAIL_CALIB_MEASURED;
            return 1;
        }
    if (nc < 2)
        return 0;
    /* Two neighbouring node counts: the bracketing pair, or the two nearest at an end. */
    for (j = 0; j < nc && nodes[j] < nnodes; j++)
        ;
    a = j == 0 ? 0 : (j == nc ? nc - 2 : j - 1);
    s->a = &c->rows[start[a]];
    s->na = count[a];
    s->b = &c->rows[start[a + 1]];
    s->nb = count[a + 1];
    /* Each node count's curve = its latency floor (the fastest measured time) + the rest;
     * the floor is interpolated in log-log (a ring's grows with the node count, a tree's with
     * its logarithm), the rest in log(nnodes) on its value, so a latency that grows with the
     * node count is not mistaken for a bandwidth term, and the reverse. */
    s->fa = floor_of(s->a, s->na);
    s->fb = floor_of(s->b, s->nb);
    s->xa = log((double)nodes[a]);
    s->xb = log((double)nodes[a + 1]);
    s->x = log((double)nnodes);
    s->slope = (log(s->fb) - log(s->fa)) / (s->xb - s->xa);
    s->mode = j == 0 || j == nc ? RAIL_CALIB_NODES_EXTRAP : RAIL_CALIB_NODES_INTERP;
    if (s->mode == RAIL_CALIB_NODES_EXTRAP)
        s->slope = s->slope < -1.0 ? -1.0 : (s->slope > 2.0 ? 2.0 : s->slope);
    s->beyond = j == nc;
    return 1;
}

double rail_calib_series_time(const struct rail_calib_series *s, uint64_t bytes,
                              enum rail_calib_how *how)
{
    double ta, tb, f, rest;
    int exact;

    *how = RAIL_CALIB_NONE;
    if (s->mode == RAIL_CALIB_NONE)
        return -1.0;
    if (s->mode == RAIL_CALIB_MEASURED) {
        double t = curve(s->a, s->na, bytes, &exact);
        *how = exact ? RAIL_CALIB_MEASURED : RAIL_CALIB_SIZE_FIT;
        return t;
    }
    ta = curve(s->a, s->na, bytes, &exact) - s->fa;
    tb = curve(s->b, s->nb, bytes, &exact) - s->fb;
    f = (s->x - s->xa) / (s->xb - s->xa);
    rest = ta + f * (tb - ta);
    rest = rest > 0.0 ? rest : 0.0;
    *how = s->mode;
    /* Beyond the largest node count, extrapolate from the nearest one (b). */
    if (s->beyond)
        return exp(log(s->fb) + s->slope * (s->x - s->xb)) + rest;
    return exp(log(s->fa) + s->slope * (s->x - s->xa)) + rest;
}

double rail_calib_time(const struct rail_calibration *c, int coll, int algo, int proto, int rpn,
                       int nnodes, uint64_t bytes, enum rail_calib_how *how)
{
    struct rail_calib_series s;
    rail_calib_resolve(c, coll, algo, proto, rpn, nnodes, &s);
    return rail_calib_series_time(&s, bytes, how);
}

void rail_calib_cover(const struct rail_calibration *c, struct rail_calib_cover *o)
{
    int shapes[256][2], nshapes = 0;

    *o = (struct rail_calib_cover){0};
    if (!c)
        return;
    o->rows = c->n;
    for (int i = 0; i < c->n; i++) {
        const struct rail_calib_row *r = &c->rows[i], *p = i ? &c->rows[i - 1] : NULL;
        int rpn = r->nranks / r->nnodes;
        int new_pair = !p || p->coll != r->coll || p->algo != r->algo || p->proto != r->proto;
        if (new_pair)
            o->pairs++;
        if (new_pair || p->nnodes != r->nnodes || p->nranks != r->nranks)
            o->series++;
        if (!o->nnodes_min || r->nnodes < o->nnodes_min)
            o->nnodes_min = r->nnodes;
        if (r->nnodes > o->nnodes_max)
            o->nnodes_max = r->nnodes;
        if (!o->rpn_min || rpn < o->rpn_min)
            o->rpn_min = rpn;
        if (rpn > o->rpn_max)
            o->rpn_max = rpn;
        if (!o->bytes_min || r->bytes < o->bytes_min)
            o->bytes_min = r->bytes;
        if (r->bytes > o->bytes_max)
            o->bytes_max = r->bytes;
        /* Shapes are counted among the first 256 distinct ones. */
        if (new_pair || p->nnodes != r->nnodes || p->nranks != r->nranks) {
            int seen = 0;
            for (int k = 0; k < nshapes && !seen; k++)
                seen = shapes[k][0] == r->nranks && shapes[k][1] == r->nnodes;
            if (!seen && nshapes < 256) {
                shapes[nshapes][0] = r->nranks;
                shapes[nshapes++][1] = r->nnodes;
            }
        }
    }
    o->shapes = nshapes;
}
