/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calibration.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "safe_file.h"
#include "model/cost_model.h"
#include "strutil.h"

static int rpn_of(const struct rail_calib_row *r)
{
    return r->nranks / r->nnodes;
}

static int cmp_row(const void *a, const void *b)
{
    const struct rail_calib_row *x = a, *y = b;
    long long d[] = {x->coll - y->coll, x->algo - y->algo, x->proto - y->proto,
                     rpn_of(x) - rpn_of(y), x->nnodes - y->nnodes};
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        if (d[i])
            return d[i] < 0 ? -1 : 1;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static int same_key(const struct rail_calib_row *x, const struct rail_calib_row *y)
{
    return cmp_row(x, y) == 0;
}

void rail_calib_free(struct rail_calibration *c)
{
    if (!c)
        return;
    free(c->rows);
    c->rows = NULL;
    c->n = 0;
}

/* ---- parsing ---- */

static int split(char *s, char **f, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return max + 1;
        f[n++] = s;
        s = strchr(s, ',');
        if (!s)
            return n;
        *s++ = '\0';
    }
}

static int parse_int(const char *s, long lo, long hi, int *out)
{
    long v;
    if (rail_parse_long(s, 10, lo, hi, &v) != 0)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int parse_row(char *line, struct rail_calib_row *r, char *why, size_t whylen)
{
    char *f[8], num[160];
    int n = split(line, f, 7);
    uint64_t bytes;

    if (n != 7)
        return rail_fail(why, whylen,
                         "%d fields, expected 7 (coll,algo,proto,nranks,nnodes,bytes,"
                         "time_us)",
                         n > 7 ? 8 : n);
    if ((r->coll = rail_calib_coll_exact(f[0], strlen(f[0]))) < 0)
        return rail_fail(why, whylen, "unknown collective '%.40s'", f[0]);
    if ((r->algo = rail_calib_algo_from_name(f[1], strlen(f[1]))) < 0)
        return rail_fail(why, whylen, "unknown algorithm '%.40s'", f[1]);
    if ((r->proto = rail_calib_proto_from_name(f[2], strlen(f[2]))) < 0)
        return rail_fail(why, whylen, "unknown protocol '%.40s'", f[2]);
    if (parse_int(f[3], 1, RAIL_CALIB_MAX_RANKS, &r->nranks) ||
        parse_int(f[4], 1, RAIL_CALIB_MAX_RANKS, &r->nnodes) || r->nnodes > r->nranks ||
        r->nranks % r->nnodes)
        return rail_fail(why, whylen,
                         "nranks '%.20s' / nnodes '%.20s' are not a whole number of "
                         "ranks per node",
                         f[3], f[4]);
    if (rail_calib_bytes_parse(f[5], &bytes, num, sizeof(num)) != 0)
        return rail_fail(why, whylen, "bytes %s", num);
    if (rail_calib_time_parse(f[6], &r->time_us, num, sizeof(num)) != 0)
        return rail_fail(why, whylen, "time_us %s", num);
    r->bytes = bytes;
    return 0;
}

/* "# source: job" / "# source: nccl-tests": the origin of the rows that follow. Another value
 * after "# source:" is an error (a typo would silently relabel measurements). Other comments: 0. */
static int source_comment(const char *line, int *origin, char *why, size_t whylen)
{
    static const char key[] = "# source:";
    const char *v = line + sizeof(key) - 1;
    if (strncmp(line, key, sizeof(key) - 1) != 0)
        return 0;
    while (*v == ' ')
        v++;
    if (strcmp(v, "job") == 0)
        *origin = RAIL_CALIB_ORIGIN_JOB;
    else if (strcmp(v, "nccl-tests") == 0)
        *origin = RAIL_CALIB_ORIGIN_TESTS;
    else {
        char q[64];
        rail_quote(q, sizeof(q), v, strlen(v));
        return rail_fail(why, whylen, "unknown source '%s': expected 'job' or 'nccl-tests'", q);
    }
    return 0;
}

/* Bounds that keep every prediction cheap (table build time stays bounded whatever the file):
 * at most RAIL_CALIB_MAX_POINTS sizes per node count and RAIL_CALIB_MAX_NODECNT node counts per
 * series. rows are sorted. */
static int check_limits(const struct rail_calibration *c, char *why, size_t whylen, int *lineno)
{
    int sizes = 0, nodecnts = 0;
    for (int i = 0; i < c->n; i++) {
        const struct rail_calib_row *r = &c->rows[i], *p = i ? &c->rows[i - 1] : NULL;
        bool new_series = !p || p->coll != r->coll || p->algo != r->algo || p->proto != r->proto ||
                          rpn_of(p) != rpn_of(r);
        if (new_series)
            nodecnts = 0;
        if (new_series || p->nnodes != r->nnodes) {
            nodecnts++;
            sizes = 0;
        }
        sizes++;
        if (sizes > RAIL_CALIB_MAX_POINTS || nodecnts > RAIL_CALIB_MAX_NODECNT) {
            *lineno = 0;
            return rail_fail(why, whylen, "more than %d %s for %s %s/%s at %d rank(s) per node",
                             sizes > RAIL_CALIB_MAX_POINTS ? RAIL_CALIB_MAX_POINTS
                                                           : RAIL_CALIB_MAX_NODECNT,
                             sizes > RAIL_CALIB_MAX_POINTS ? "sizes per node count" : "node counts",
                             rail_coll_name(r->coll), rail_algo_name(r->algo),
                             rail_proto_name(r->proto), rpn_of(r));
        }
    }
    return 0;
}

int rail_calib_parse(const char *buf, size_t len, const char *name, struct rail_calibration *out,
                     char *err, size_t errlen)
{
    char line[512], why[256];
    size_t pos = 0;
    int lineno = 0, cap = 0, header = 0, rc = 0, origin = RAIL_CALIB_ORIGIN_TESTS;

    memset(out, 0, sizeof(*out));
    rail_clear_err(err, errlen);
    name = name ? name : "(calibration)";
    while (buf && pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        lineno++;
        if (n >= sizeof(line)) {
            rc = rail_fail(why, sizeof(why), "line longer than %zu characters", sizeof(line) - 1);
            break;
        }
        if (memchr(buf + pos, '\0', n)) {
            rc = rail_fail(why, sizeof(why), "NUL byte: not a text file");
            break;
        }
        memcpy(line, buf + pos, n);
        line[n] = '\0';
        pos += n + (nl ? 1 : 0);
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        if (line[0] == '#' && header && (rc = source_comment(line, &origin, why, sizeof(why))))
            break;
        if (!line[0] || line[0] == '#')
            continue;
        if (!header) {
            char want[64];
            snprintf(want, sizeof(want), "%s %d", RAIL_CALIB_FORMAT, RAIL_CALIB_VERSION);
            if (strcmp(line, want) != 0) {
                char q[64];
                rail_quote(q, sizeof(q), line, strlen(line));
                rc = rail_fail(why, sizeof(why),
                               "wrong header '%s': expected '%s' (a file "
                               "written by nccl-rail calibrate)",
                               q, want);
                break;
            }
            header = 1;
            continue;
        }
        if (strncmp(line, "coll,", 5) == 0)
            continue; /* column names */
        if (out->n == RAIL_CALIB_MAX_ROWS) {
            rc = rail_fail(why, sizeof(why), "more than %d rows", RAIL_CALIB_MAX_ROWS);
            break;
        }
        if (out->n == cap) {
            int ncap = cap ? cap * 2 : 256;
            struct rail_calib_row *r = realloc(out->rows, (size_t)ncap * sizeof(*r));
            if (!r) {
                rc = -ENOMEM;
                snprintf(why, sizeof(why), "out of memory");
                break;
            }
            out->rows = r;
            cap = ncap;
        }
        if ((rc = parse_row(line, &out->rows[out->n], why, sizeof(why))) < 0)
            break;
        out->rows[out->n++].origin = (uint8_t)origin;
    }
    if (rc == 0 && !header) {
        lineno = 0;
        rc = rail_fail(why, sizeof(why), "empty: no '%s %d' header", RAIL_CALIB_FORMAT,
                       RAIL_CALIB_VERSION);
    }
    if (rc == 0 && out->n == 0) {
        lineno = 0;
        rc = rail_fail(why, sizeof(why), "no rows");
    }
    if (rc == 0) {
        qsort(out->rows, (size_t)out->n, sizeof(out->rows[0]), cmp_row);
        for (int i = 1; i < out->n; i++)
            if (same_key(&out->rows[i - 1], &out->rows[i])) {
                lineno = 0;
                rc = rail_fail(why, sizeof(why),
                               "two rows for %s %s/%s %d ranks %d nodes %llu "
                               "bytes",
                               rail_coll_name(out->rows[i].coll), rail_algo_name(out->rows[i].algo),
                               rail_proto_name(out->rows[i].proto), out->rows[i].nranks,
                               out->rows[i].nnodes, (unsigned long long)out->rows[i].bytes);
                break;
            }
    }
    if (rc == 0)
        rc = check_limits(out, why, sizeof(why), &lineno);
    if (rc == 0 && out->n < cap) { /* no slack kept: a parsed file lives as long as its users */
        struct rail_calib_row *r = realloc(out->rows, (size_t)out->n * sizeof(*r));
        if (r)
            out->rows = r;
    }
    if (rc < 0) {
        if (lineno > 0)
            rail_set_err(err, errlen, "%s:%d: %s", name, lineno, why);
        else
            rail_set_err(err, errlen, "%s: %s", name, why);
        rail_calib_free(out);
    }
    return rc;
}

int rail_calib_load(const char *path, struct rail_calibration *out, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = rail_file_read_all(path, RAIL_CALIB_MAX_FILE, 0, &buf, &len, err, errlen);
    if (rc < 0)
        return rc;
    rc = rail_calib_parse(buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

/* Sort the rows; repeated keys (runs of the same point) keep the faster one, with its origin. */
static void sort_keep_faster(struct rail_calibration *c)
{
    int k = c->n;
    qsort(c->rows, (size_t)k, sizeof(c->rows[0]), cmp_row);
    c->n = 0;
    for (int i = 0; i < k; i++) {
        if (c->n && same_key(&c->rows[c->n - 1], &c->rows[i])) {
            const struct rail_calib_row *p = &c->rows[c->n - 1], *r = &c->rows[i];
            if (r->time_us < p->time_us || (r->time_us == p->time_us && r->origin < p->origin))
                c->rows[c->n - 1] = *r;
            continue;
        }
        c->rows[c->n++] = c->rows[i];
    }
}

int rail_calib_from_runs(const struct rail_calib_run *runs, int nruns, struct rail_calibration *out)
{
    int total = 0, k = 0;

    memset(out, 0, sizeof(*out));
    for (int i = 0; i < nruns; i++)
        total += runs[i].npoints;
    if (total == 0)
        return 0;
    out->rows = calloc((size_t)total, sizeof(*out->rows));
    if (!out->rows)
        return -ENOMEM;
    for (int i = 0; i < nruns; i++)
        for (int j = 0; j < runs[i].npoints; j++) {
            struct rail_calib_row *r = &out->rows[k++];
            r->coll = runs[i].coll;
            r->algo = runs[i].algo;
            r->proto = runs[i].proto;
            r->nranks = runs[i].nranks;
            r->nnodes = runs[i].nnodes;
            r->bytes = runs[i].pts[j].bytes;
            r->time_us = runs[i].pts[j].time_us;
        }
    out->n = k;
    sort_keep_faster(out);
    return 0;
}

int rail_calib_add_rows(struct rail_calibration *c, const struct rail_calib_row *rows, int n)
{
    if (n <= 0)
        return 0;
    struct rail_calib_row *r = realloc(c->rows, (size_t)(c->n + n) * sizeof(*r));
    if (!r)
        return -ENOMEM;
    memcpy(r + c->n, rows, (size_t)n * sizeof(*r));
    c->rows = r;
    c->n += n;
    sort_keep_faster(c);
    return 0;
}

int rail_calib_write(const struct rail_calibration *c, const char *comment, FILE *f)
{
    int rc = 0;
    /* The first failed write keeps its errno (ENOSPC, EFBIG...), not a generic EIO. */
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (fprintf(f, __VA_ARGS__) < 0 && rc == 0)                                                \
            rc = errno ? -errno : -EIO;                                                            \
    } while (0)
    errno = 0;
    PUT("%s %d\n", RAIL_CALIB_FORMAT, RAIL_CALIB_VERSION);
    if (comment)
        PUT("# %s\n", comment);
    PUT("coll,algo,proto,nranks,nnodes,bytes,time_us\n");
    for (int i = 0, origin = RAIL_CALIB_ORIGIN_TESTS; i < c->n && rc == 0; i++) {
        const struct rail_calib_row *r = &c->rows[i];
        if (r->origin != origin) {
            origin = r->origin;
            PUT("# source: %s\n", origin == RAIL_CALIB_ORIGIN_JOB ? "job" : "nccl-tests");
        }
        PUT("%s,%s,%s,%d,%d,%llu,%.6g\n", rail_coll_name(r->coll), rail_algo_name(r->algo),
            rail_proto_name(r->proto), r->nranks, r->nnodes, (unsigned long long)r->bytes,
            r->time_us);
    }
#undef PUT
    if (fflush(f) != 0 && rc == 0)
        rc = errno ? -errno : -EIO;
    return rc ? rc : ferror(f) ? -EIO : 0;
}

/* ---- what a calibration covers (logs, explain) ---- */

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
