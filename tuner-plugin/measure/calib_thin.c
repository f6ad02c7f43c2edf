/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_thin.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A row and its weight, sorted together. */
struct wrow {
    struct rail_calib_row r;
    double w;
};

static int series_cmp(const struct rail_calib_row *x, const struct rail_calib_row *y)
{
    long long d[] = {x->coll - y->coll, x->algo - y->algo, x->proto - y->proto,
                     x->nranks / x->nnodes - y->nranks / y->nnodes, x->nnodes - y->nnodes};
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        if (d[i])
            return d[i] < 0 ? -1 : 1;
    return 0;
}

static int cmp_wrow(const void *pa, const void *pb)
{
    const struct rail_calib_row *x = &((const struct wrow *)pa)->r,
                                *y = &((const struct wrow *)pb)->r;
    int c = series_cmp(x, y);
    if (c)
        return c;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    if (x->time_us != y->time_us)
        return x->time_us < y->time_us ? -1 : 1; /* the faster first: it is kept */
    return (int)x->origin - (int)y->origin;
}

/* The bucket of a size at 2^s buckets per octave: the octave, then the s bits after the top. */
static uint64_t bucket_of(uint64_t b, int s)
{
    if (b == 0)
        return 0;
    int msb = 63 - __builtin_clzll(b);
    uint64_t frac =
        msb >= s ? (b >> (msb - s)) & ((1ull << s) - 1) : (b << (s - msb)) & ((1ull << s) - 1);
    return (uint64_t)msb << s | frac;
}

static int count_buckets(const struct wrow *v, int n, int s)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += i == 0 || bucket_of(v[i].r.bytes, s) != bucket_of(v[i - 1].r.bytes, s);
    return k;
}

/* Series v[0..n) (sorted by bytes, distinct) into buckets at 2^s per octave, written to out. */
static int merge_series(const struct wrow *v, int n, int s, struct wrow *out)
{
    int k = 0;
    for (int i = 0; i < n;) {
        int j = i;
        double w = 0, wb = 0, wt = 0, heaviest = -1;
        uint64_t id = bucket_of(v[i].r.bytes, s);
        struct wrow m = v[i];
        for (; j < n && bucket_of(v[j].r.bytes, s) == id; j++) {
            double wj = v[j].w > 0 ? v[j].w : 1.0;
            w += wj;
            wb += wj * (double)v[j].r.bytes;
            wt += wj * v[j].r.time_us;
            if (wj > heaviest) {
                heaviest = wj;
                m.r.origin = v[j].r.origin;
            }
        }
        uint64_t b = (uint64_t)(wb / w + 0.5);
        /* the mean lies within the bucket's sizes; rounding never leaves [first, last] */
        m.r.bytes = b < v[i].r.bytes ? v[i].r.bytes : b > v[j - 1].r.bytes ? v[j - 1].r.bytes : b;
        m.r.time_us = wt / w;
        m.w = w;
        out[k++] = m;
        i = j;
    }
    return k;
}

int rail_calib_thin(struct rail_calib_row *rows, double *weight, int *n,
                    struct rail_calib_thinning *t)
{
    struct wrow *v = malloc((size_t)(*n > 0 ? *n : 1) * sizeof(*v));
    int k = 0;

    memset(t, 0, sizeof(*t));
    if (!v)
        return -ENOMEM;
    for (int i = 0; i < *n; i++)
        v[i] = (struct wrow){rows[i], weight ? weight[i] : 1.0};
    qsort(v, (size_t)*n, sizeof(*v), cmp_wrow);
    for (int i = 0; i < *n; i++) /* a repeated key: the faster (first) row */
        if (k == 0 || series_cmp(&v[k - 1].r, &v[i].r) != 0 || v[k - 1].r.bytes != v[i].r.bytes)
            v[k++] = v[i];
    int out = 0;
    for (int i = 0; i < k;) {
        int j = i;
        while (j < k && series_cmp(&v[i].r, &v[j].r) == 0)
            j++;
        if (j - i <= RAIL_CALIB_MAX_POINTS) {
            memmove(&v[out], &v[i], (size_t)(j - i) * sizeof(*v));
            out += j - i;
        } else {
            int s = 6;
            while (s > 0 && count_buckets(&v[i], j - i, s) > RAIL_CALIB_MAX_POINTS)
                s--;
            int m = merge_series(&v[i], j - i, s, &v[out]);
            t->series++;
            t->sizes_in += j - i;
            t->sizes_out += m;
            if (t->per_octave == 0 || (1 << s) < t->per_octave)
                t->per_octave = 1 << s;
            out += m;
        }
        i = j;
    }
    for (int i = 0; i < out; i++) {
        rows[i] = v[i].r;
        if (weight)
            weight[i] = v[i].w;
    }
    *n = out;
    free(v);
    return 0;
}
