/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_log.h"
#include "measure/calib_thin.h"
#include "model/cost_model.h"
#include "strutil.h"

int rail_job_line(struct rail_job_lines *l, char *line, size_t cap, char *why, size_t whylen)
{
    if (!l->buf || l->pos >= l->len)
        return 0;
    const char *p = l->buf + l->pos, *nl = memchr(p, '\n', l->len - l->pos);
    size_t n = nl ? (size_t)(nl - p) : l->len - l->pos;
    l->lineno++;
    l->pos += n + (nl ? 1 : 0);
    if (n > RAIL_CALIB_MAX_LINE || n >= cap)
        return rail_fail(why, whylen, "line longer than %d characters", RAIL_CALIB_MAX_LINE);
    if (memchr(p, '\0', n))
        return rail_fail(why, whylen, "NUL byte: not a text file");
    memcpy(line, p, n);
    if (n && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    return 1;
}

uint64_t rail_job_key(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    if (h == 0)
        h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    /* a separator, so ("ab", "c") and ("a", "bc") differ */
    h ^= 0xff;
    h *= 1099511628211ull;
    return h;
}

static uint32_t slot_of(uint64_t key, int source)
{
    uint64_t h = key ^ ((uint64_t)source << 61);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

static int index_grow(struct rail_job_set *s)
{
    uint32_t cap = s->index_cap ? s->index_cap * 2 : 64;
    uint32_t *ix = malloc((size_t)cap * sizeof(*ix));
    if (!ix)
        return -ENOMEM;
    memset(ix, 0xff, (size_t)cap * sizeof(*ix));
    for (int i = 0; i < s->nruns; i++) {
        const struct rail_job_run *r = &s->runs[i];
        uint32_t h = slot_of(r->key, r->source) & (cap - 1);
        while (ix[h] != UINT32_MAX)
            h = (h + 1) & (cap - 1);
        ix[h] = (uint32_t)i;
    }
    free(s->index);
    s->index = ix;
    s->index_cap = cap;
    return 0;
}

int rail_job_run(struct rail_job_set *s, uint64_t key, int nranks, int nnodes, int source,
                 int *other)
{
    uint32_t h;
    if ((uint32_t)(s->nruns + 1) * 2 > s->index_cap && index_grow(s) < 0)
        return -ENOMEM;
    h = slot_of(key, source) & (s->index_cap - 1);
    for (; s->index[h] != UINT32_MAX; h = (h + 1) & (s->index_cap - 1)) {
        const struct rail_job_run *r = &s->runs[s->index[h]];
        if (r->key != key || r->source != source)
            continue;
        if (r->nranks == nranks && r->nnodes == nnodes)
            return (int)s->index[h];
        if (source != RAIL_JOB_SRC_INSPECTOR_PROM) {
            if (other)
                *other = (int)s->index[h];
            return -EEXIST;
        }
    }
    if (s->nruns >= RAIL_JOB_MAX_RUNS)
        return -E2BIG;
    if (s->nruns == s->runs_cap) {
        int cap = s->runs_cap ? s->runs_cap * 2 : 16;
        struct rail_job_run *n = realloc(s->runs, (size_t)cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        s->runs = n;
        s->runs_cap = cap;
    }
    s->runs[s->nruns] = (struct rail_job_run){key, nranks, nnodes, source};
    s->index[h] = (uint32_t)s->nruns;
    return s->nruns++;
}

int rail_job_add(struct rail_job_set *s, const struct rail_job_rec *r)
{
    if (s->n >= RAIL_JOB_MAX_RECORDS)
        return -E2BIG;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct rail_job_rec *n = realloc(s->recs, cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        s->recs = n;
        s->cap = cap;
    }
    s->recs[s->n++] = *r;
    return 0;
}

void rail_job_free(struct rail_job_set *s)
{
    free(s->runs);
    free(s->index);
    free(s->recs);
    memset(s, 0, sizeof(*s));
}

/* ---- merging ---- */

#define CMP(a, b)                                                                                  \
    do {                                                                                           \
        if ((a) != (b))                                                                            \
            return (a) < (b) ? -1 : 1;                                                             \
    } while (0)

/* Instance order: run, collective, sequence number, pair, bytes, then rank. */
static int cmp_rec(const void *pa, const void *pb)
{
    const struct rail_job_rec *a = pa, *b = pb;
    CMP(a->run, b->run);
    CMP(a->coll, b->coll);
    CMP(a->seq, b->seq);
    CMP(a->algo, b->algo);
    CMP(a->proto, b->proto);
    CMP(a->bytes, b->bytes);
    CMP(a->rank, b->rank);
    CMP(a->time_us, b->time_us);
    return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

struct instance {
    uint32_t run;
    uint8_t coll, algo, proto;
    uint64_t bytes;
    float time_us;
};

static int cmp_inst(const void *pa, const void *pb)
{
    const struct instance *a = pa, *b = pb;
    CMP(a->run, b->run);
    CMP(a->coll, b->coll);
    CMP(a->algo, b->algo);
    CMP(a->proto, b->proto);
    CMP(a->bytes, b->bytes);
    CMP(a->time_us, b->time_us);
    return 0;
}

/* Distinct ranks per run (ranks[run]). */
static int count_ranks(const struct rail_job_set *s, int *ranks)
{
    uint64_t *v = malloc((s->n ? s->n : 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        v[i] = (uint64_t)s->recs[i].run << 32 | s->recs[i].rank;
    qsort(v, s->n, sizeof(*v), cmp_u64);
    for (size_t i = 0; i < s->n; i++)
        if (i == 0 || v[i] != v[i - 1])
            ranks[v[i] >> 32]++;
    free(v);
    return 0;
}

/* Step 1: one instance per collective seen by every rank of its run (Prometheus: any rank). */
static long build_instances(const struct rail_job_set *s, const int *ranks, struct instance *out,
                            struct rail_job_summary *sum)
{
    long ni = 0;
    for (size_t i = 0; i < s->n;) {
        const struct rail_job_rec *a = &s->recs[i];
        size_t j = i;
        int seen = 0;
        float t = 0.0f;
        uint32_t last_rank = 0;
        for (; j < s->n; j++) {
            const struct rail_job_rec *b = &s->recs[j];
            if (b->run != a->run || b->coll != a->coll || b->seq != a->seq || b->algo != a->algo ||
                b->proto != a->proto || b->bytes != a->bytes)
                break;
            if (j == i || b->rank != last_rank)
                seen++;
            last_rank = b->rank;
            t = b->time_us > t ? b->time_us : t; /* the slowest rank is the collective's time */
        }
        const struct rail_job_run *run = &s->runs[a->run];
        i = j;
        if (run->source != RAIL_JOB_SRC_INSPECTOR_PROM && seen < ranks[a->run]) {
            sum->incomplete++;
            continue;
        }
        out[ni++] = (struct instance){a->run, a->coll, a->algo, a->proto, a->bytes, t};
    }
    return ni;
}

int rail_job_merge(struct rail_job_set *s, struct rail_calib_row **rows, int *nrows,
                   struct rail_job_summary *sum)
{
    int *ranks = calloc((size_t)(s->nruns ? s->nruns : 1), sizeof(*ranks));
    int *used = calloc((size_t)(s->nruns ? s->nruns : 1), sizeof(*used));
    struct instance *inst = malloc((s->n ? s->n : 1) * sizeof(*inst));
    struct rail_calib_row *out = malloc((s->n ? s->n : 1) * sizeof(*out));
    double *weight = malloc((s->n ? s->n : 1) * sizeof(*weight));
    long ni;
    int nr = 0;

    memset(sum, 0, sizeof(*sum));
    *rows = NULL;
    *nrows = 0;
    if (!ranks || !used || !inst || !out || !weight || count_ranks(s, ranks) < 0) {
        free(ranks), free(used), free(inst), free(out), free(weight);
        return -ENOMEM;
    }
    if (s->n)
        qsort(s->recs, s->n, sizeof(*s->recs), cmp_rec);
    ni = build_instances(s, ranks, inst, sum);
    /* Step 2: the median instance per (run, collective, pair, bytes). */
    if (ni)
        qsort(inst, (size_t)ni, sizeof(*inst), cmp_inst);
    for (long i = 0; i < ni;) {
        long j = i;
        while (j < ni && inst[j].run == inst[i].run && inst[j].coll == inst[i].coll &&
               inst[j].algo == inst[i].algo && inst[j].proto == inst[i].proto &&
               inst[j].bytes == inst[i].bytes)
            j++;
        const struct rail_job_run *run = &s->runs[inst[i].run];
        long n = j - i, m = i + n / 2;
        double t = n % 2 ? inst[m].time_us : 0.5 * ((double)inst[m - 1].time_us + inst[m].time_us);
        if (run->nnodes < 1 || run->nranks % run->nnodes != 0) {
            sum->uneven += n;
        } else if (t >= RAIL_CALIB_MIN_TIME_US && t <= RAIL_CALIB_MAX_TIME_US &&
                   inst[i].bytes >= 1 && inst[i].bytes <= RAIL_CALIB_MAX_BYTES) {
            weight[nr] = (double)n;
            out[nr++] = (struct rail_calib_row){.coll = inst[i].coll,
                                                .algo = inst[i].algo,
                                                .proto = inst[i].proto,
                                                .nranks = run->nranks,
                                                .nnodes = run->nnodes,
                                                .origin = RAIL_CALIB_ORIGIN_JOB,
                                                .bytes = inst[i].bytes,
                                                .time_us = t};
            sum->instances += n;
            used[inst[i].run] = 1;
        }
        i = j;
    }
    for (int r = 0; r < s->nruns; r++) {
        sum->runs += used[r];
        sum->partial_runs += used[r] && ranks[r] < s->runs[r].nranks &&
                             s->runs[r].source != RAIL_JOB_SRC_INSPECTOR_PROM;
    }
    /* Step 3: per key the faster run; then a series with more sizes than a calibration holds
     * is merged into log-spaced buckets weighted by the collectives measured (calib_thin.h). */
    free(ranks), free(used), free(inst);
    if (rail_calib_thin(out, weight, &nr, &sum->thin) < 0) {
        free(out), free(weight);
        return -ENOMEM;
    }
    free(weight);
    sum->points = nr;
    *rows = out;
    *nrows = nr;
    return 0;
}
