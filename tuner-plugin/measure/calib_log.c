/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_log.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost_model.h"
#include "nccl_names.h"
#include "strutil.h"

#define MAX_TOKENS 32

/* ---- numbers ---- */

int rail_calib_bytes_parse(const char *s, uint64_t *out, char *why, size_t whylen)
{
    char q[48];
    rail_quote(q, sizeof(q), s, strlen(s));
    if (rail_parse_digits(s, strlen(s), 16, RAIL_CALIB_MAX_BYTES, out) != 0)
        return rail_fail(why, whylen, "'%s' is not a byte count in [1, 2^50]", q);
    if (*out == 0)
        return rail_fail(why, whylen,
                         "'0': a size of 0 bytes cannot be calibrated (times are interpolated "
                         "in log(size))");
    return 0;
}

int rail_calib_time_parse(const char *s, double *out, char *why, size_t whylen)
{
    char q[48];
    int rc = rail_parse_decimal(s, RAIL_CALIB_MIN_TIME_US, RAIL_CALIB_MAX_TIME_US, out);
    rail_quote(q, sizeof(q), s, strlen(s));
    if (rc == -ERANGE)
        return rail_fail(why, whylen, "'%s' is outside [%g, %g] us: not a measurement", q,
                         RAIL_CALIB_MIN_TIME_US, RAIL_CALIB_MAX_TIME_US);
    if (rc < 0)
        return rail_fail(why, whylen, "'%s' is not a positive plain decimal number", q);
    return 0;
}

/* ---- parser state ---- */

struct rank_entry {
    uint32_t rank;
    uint64_t host; /* FNV-1a of the host name */
};

struct parser {
    const char *name;
    int line;
    char *err;
    size_t errlen;
    struct rail_calib_run *out;
    /* Rank lines of the current block. */
    struct rank_entry *ranks;
    size_t nranks, cap;
    int block_open; /* Rank lines seen since the last table row */
    /* Result table layout from its header line. */
    int time_col, wrong_col, ncols;
    int rows; /* rows of the current table */
    int algo_hdr, proto_hdr, coll_hdr;
    int algo_line, proto_line;
};

static int perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(struct parser *p, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (p->line > 0)
        rail_set_err(p->err, p->errlen, "%s:%d: %s", p->name, p->line, why);
    else
        rail_set_err(p->err, p->errlen, "%s: %s", p->name, why);
    return -EINVAL;
}

static int tokenize(char *s, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n == max)
            return max + 1;
        tok[n++] = t;
    }
    return n;
}

static int cmp_host(const void *a, const void *b)
{
    const struct rank_entry *x = a, *y = b;
    return x->host < y->host ? -1 : x->host > y->host;
}

static int cmp_rank(const void *a, const void *b)
{
    const struct rank_entry *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The Rank lines of a block are complete: derive the shape and compare with earlier blocks. */
static int close_block(struct parser *p)
{
    size_t hosts = 0;
    if (!p->block_open)
        return 0;
    p->block_open = 0;
    qsort(p->ranks, p->nranks, sizeof(p->ranks[0]), cmp_rank);
    for (size_t i = 0; i < p->nranks; i++)
        if (p->ranks[i].rank != i)
            return perr(p, "Rank lines are not ranks 0..%zu exactly once (rank %u)", p->nranks - 1,
                        p->ranks[i].rank);
    qsort(p->ranks, p->nranks, sizeof(p->ranks[0]), cmp_host);
    for (size_t i = 0; i < p->nranks; i++)
        if (i == 0 || p->ranks[i].host != p->ranks[i - 1].host)
            hosts++;
    if (p->nranks % hosts)
        return perr(p, "%zu ranks on %zu hosts: uneven ranks per node", p->nranks, hosts);
    if (p->out->nranks && (p->out->nranks != (int)p->nranks || p->out->nnodes != (int)hosts))
        return perr(p,
                    "mixed shapes in one file: %d ranks on %d nodes, then %zu ranks on %zu nodes",
                    p->out->nranks, p->out->nnodes, p->nranks, hosts);
    p->out->nranks = (int)p->nranks;
    p->out->nnodes = (int)hosts;
    p->nranks = 0;
    return 0;
}

/* "#  Rank  3 Group  0 Pid  10003 on node-0003 device  0 [0x18] NVIDIA H100 80GB HBM3" */
static int rank_line(struct parser *p, char **tok, int n)
{
    uint64_t rank, h = 1469598103934665603ull;
    if (n < 9 || strcmp(tok[2], "Group") || strcmp(tok[4], "Pid") || strcmp(tok[6], "on") ||
        rail_parse_digits(tok[1], strlen(tok[1]), 8, RAIL_CALIB_MAX_RANKS - 1, &rank) != 0)
        return perr(p, "malformed Rank line (expected '#  Rank N Group G Pid P on HOST device D')");
    if (p->rows && !p->block_open) {
        /* A new run in the same file: its shape must be the one of the first. */
        p->rows = 0;
        p->time_col = -1;
    }
    if (!p->block_open)
        p->nranks = 0;
    p->block_open = 1;
    if (p->nranks == RAIL_CALIB_MAX_RANKS)
        return perr(p, "more than %d Rank lines", RAIL_CALIB_MAX_RANKS);
    if (p->nranks == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        struct rank_entry *r = realloc(p->ranks, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        p->ranks = r;
        p->cap = cap;
    }
    for (const char *c = tok[7]; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    p->ranks[p->nranks].rank = (uint32_t)rank;
    p->ranks[p->nranks].host = h;
    p->nranks++;
    return 0;
}

static int set_forced(struct parser *p, int *slot, int *slot_line, const char *what, int v,
                      const char *text)
{
    if (v < 0)
        return perr(p, "%s '%s' is not one algorithm/protocol (calibration needs one forced pair)",
                    what, text);
    if (*slot >= 0 && *slot != v)
        return perr(p, "mixed shapes in one file: %s changes from line %d", what, *slot_line);
    *slot = v;
    *slot_line = p->line;
    return 0;
}

/* "# NCCL_ALGO=Ring" or NCCL's "... NCCL INFO NCCL_ALGO set by environment to Ring". */
static int env_line(struct parser *p, const char *line)
{
    static const char *const keys[2] = {"NCCL_ALGO", "NCCL_PROTO"};
    for (int k = 0; k < 2; k++) {
        const char *s = strstr(line, keys[k]);
        size_t kl = strlen(keys[k]);
        const char *v = NULL;
        if (!s)
            continue;
        if (s[kl] == '=')
            v = s + kl + 1;
        else if (strncmp(s + kl, " set by environment to ", 23) == 0)
            v = s + kl + 23;
        if (!v)
            continue;
        size_t n = strcspn(v, " \t\r\n");
        char text[64];
        rail_quote(text, sizeof(text), v, n);
        return k == 0 ? set_forced(p, &p->algo_hdr, &p->algo_line, "NCCL_ALGO",
                                   rail_calib_algo_from_name(v, n), text)
                      : set_forced(p, &p->proto_hdr, &p->proto_line, "NCCL_PROTO",
                                   rail_calib_proto_from_name(v, n), text);
    }
    return 0;
}

static int comment_line(struct parser *p, const char *line, char *copy)
{
    char *tok[MAX_TOKENS + 1];
    const char *s;
    int n, rc;

    if ((rc = env_line(p, line)) != 0)
        return rc;
    if ((s = strstr(line, "Collective test starting:")) != NULL) {
        s += strlen("Collective test starting:");
        int c = rail_calib_coll_from_name(s, strlen(s));
        if (c < 0)
            return perr(p, "collective '%s' cannot be calibrated", s);
        if (p->coll_hdr >= 0 && p->coll_hdr != c)
            return perr(p, "mixed shapes in one file: a second collective");
        p->coll_hdr = c;
        return 0;
    }
    n = tokenize(copy + 1, tok, MAX_TOKENS);
    if (n >= 1 && strcmp(tok[0], "Rank") == 0)
        return rank_line(p, tok, n);
    if (n >= 2 && n <= MAX_TOKENS && strcmp(tok[0], "size") == 0) {
        if ((rc = close_block(p)) != 0)
            return rc;
        p->time_col = p->wrong_col = -1;
        for (int i = 1; i < n; i++) {
            if (p->time_col < 0 && strcmp(tok[i], "time") == 0)
                p->time_col = i;
            if (p->wrong_col < 0 && strcmp(tok[i], "#wrong") == 0)
                p->wrong_col = i;
        }
        if (p->time_col < 0)
            return perr(p, "result table header without a 'time' column");
        p->ncols = n;
        p->rows = 0;
    }
    return 0;
}

static int add_point(struct parser *p, uint64_t bytes, double t)
{
    struct rail_calib_run *r = p->out;
    int i = 0;
    while (i < r->npoints && r->pts[i].bytes < bytes)
        i++;
    if (i < r->npoints && r->pts[i].bytes == bytes) {
        if (t < r->pts[i].time_us)
            r->pts[i].time_us = t; /* a repeated run: the faster one */
        return 0;
    }
    if (r->npoints == RAIL_CALIB_MAX_POINTS)
        return perr(p, "more than %d sizes", RAIL_CALIB_MAX_POINTS);
    memmove(&r->pts[i + 1], &r->pts[i], (size_t)(r->npoints - i) * sizeof(r->pts[0]));
    r->pts[i].bytes = bytes;
    r->pts[i].time_us = t;
    r->npoints++;
    return 0;
}

static int data_line(struct parser *p, char *copy)
{
    char *tok[MAX_TOKENS + 1], why[160];
    uint64_t bytes;
    double t;
    int n = tokenize(copy, tok, MAX_TOKENS), rc;

    if (n == 0)
        return 0;
    if (!isdigit((unsigned char)tok[0][0]) || strchr(tok[0], ':')) {
        /* NCCL INFO lines ("host:pid:tid [dev] NCCL INFO ...", whatever the host name starts
         * with) and other program output mixed into the log are not data, but a test failure is
         * not a measurement either. */
        for (int i = 0; i < n && i < MAX_TOKENS; i++) /* n is MAX_TOKENS + 1 on overflow */
            if (strcmp(tok[i], "failure") == 0 || strcmp(tok[i], "FAILED") == 0)
                return perr(p, "nccl-tests reported a failure");
        return 0;
    }
    if (p->time_col < 0)
        return perr(p, "table row before the result table header ('#  size count type ... time')"
                       ": not nccl-tests output");
    if ((rc = close_block(p)) != 0)
        return rc;
    if (n < p->ncols)
        return perr(p, "truncated table row: %d columns, the header has %d", n, p->ncols);
    if (rail_calib_bytes_parse(tok[0], &bytes, why, sizeof(why)) != 0)
        return perr(p, "size %s", why);
    if (rail_calib_time_parse(tok[p->time_col], &t, why, sizeof(why)) != 0)
        return perr(p, "out-of-place time %s", why);
    if (p->wrong_col > 0 && strcmp(tok[p->wrong_col], "0") != 0 &&
        strcmp(tok[p->wrong_col], "N/A") != 0)
        return perr(p, "the run reported %s wrong results", tok[p->wrong_col]);
    p->rows++;
    return add_point(p, bytes, t);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int finish(struct parser *p, const struct rail_calib_hint *hint)
{
    struct rail_calib_run *r = p->out;
    int hc = hint ? hint->coll : -1, ha = hint ? hint->algo : -1, hp = hint ? hint->proto : -1;
    int rc;

    p->line = 0;
    if ((rc = close_block(p)) != 0)
        return rc;
    r->coll = p->coll_hdr >= 0 ? p->coll_hdr : rail_calib_coll_from_name(base_name(p->name), 256);
    if (r->coll < 0)
        r->coll = hc;
    if (r->coll < 0)
        return perr(p, "cannot tell the collective: no 'Collective test starting' line, the file "
                       "name does not say, and no --coll was given");
    if (p->algo_hdr >= 0 && ha >= 0 && p->algo_hdr != ha)
        return perr(p, "NCCL_ALGO=%s in the file, --algo %s on the command line",
                    rail_algo_name(p->algo_hdr), rail_algo_name(ha));
    if (p->proto_hdr >= 0 && hp >= 0 && p->proto_hdr != hp)
        return perr(p, "NCCL_PROTO=%s in the file, --proto %s on the command line",
                    rail_proto_name(p->proto_hdr), rail_proto_name(hp));
    r->algo = p->algo_hdr >= 0 ? p->algo_hdr : ha;
    r->proto = p->proto_hdr >= 0 ? p->proto_hdr : hp;
    if (r->algo < 0 || r->proto < 0)
        return perr(p,
                    "the forced %s is unknown: add a '# NCCL_%s=...' line or give --%s before "
                    "the file",
                    r->algo < 0 ? "algorithm" : "protocol", r->algo < 0 ? "ALGO" : "PROTO",
                    r->algo < 0 ? "algo" : "proto");
    if (!r->nranks)
        return perr(p, "no '#  Rank N Group G Pid P on HOST device D' lines: cannot tell the "
                       "ranks and nodes");
    if (!r->npoints)
        return perr(p, "no measurements (no result table rows)");
    return 0;
}

int rail_calib_log_parse(const char *buf, size_t len, const char *name,
                         const struct rail_calib_hint *hint, struct rail_calib_run *out, char *err,
                         size_t errlen)
{
    struct parser p = {.name = name ? name : "(buffer)", .err = err, .errlen = errlen, .out = out};
    char line[RAIL_CALIB_MAX_LINE + 1], copy[RAIL_CALIB_MAX_LINE + 1];
    size_t pos = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->coll = out->algo = out->proto = -1;
    p.time_col = p.wrong_col = -1;
    p.algo_hdr = p.proto_hdr = p.coll_hdr = -1;
    rail_clear_err(err, errlen);
    if (!buf)
        len = 0;
    while (pos < len && rc == 0) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        p.line++;
        if (n > RAIL_CALIB_MAX_LINE) {
            rc = perr(&p, "line longer than %d characters", RAIL_CALIB_MAX_LINE);
            break;
        }
        if (memchr(buf + pos, '\0', n)) {
            rc = perr(&p, "NUL byte: not a text file");
            break;
        }
        memcpy(line, buf + pos, n);
        line[n] = '\0';
        pos += n + (nl ? 1 : 0);
        memcpy(copy, line, n + 1);
        if (line[strspn(line, " \t\r")] == '#')
            rc = comment_line(&p, line, copy + strspn(line, " \t\r"));
        else
            rc = strstr(line, "NCCL_") ? env_line(&p, line) : 0;
        if (rc == 0 && line[strspn(line, " \t\r")] != '#')
            rc = data_line(&p, copy);
    }
    if (rc == 0)
        rc = finish(&p, hint);
    free(p.ranks);
    if (rc < 0) {
        memset(out, 0, sizeof(*out));
        out->coll = out->algo = out->proto = -1;
    }
    return rc;
}
