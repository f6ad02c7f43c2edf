/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_prom.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "measure/calib_log.h"
#include "model/cost_model.h"
#include "strutil.h"

struct label {
    const char *name, *value; /* NUL-terminated, unescaped, inside the line buffer */
};

struct sample {
    const char *metric;
    struct label l[RAIL_PROM_MAX_LABELS];
    int nl;
    const char *value;
};

static bool name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

static bool name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':';
}

/* Split one sample line in place (labels unescaped where they stand). */
static int parse_sample(char *s, struct sample *o, char *why, size_t whylen)
{
    char *p = s;
    o->nl = 0;
    if (!name_start((unsigned char)*p))
        return rail_fail(why, whylen, "not a metric name");
    o->metric = p;
    while (name_char((unsigned char)*p))
        p++;
    if (*p == '{') {
        *p++ = '\0';
        for (;;) {
            while (*p == ' ')
                p++;
            if (*p == '}')
                break;
            if (o->nl == RAIL_PROM_MAX_LABELS)
                return rail_fail(why, whylen, "more than %d labels", RAIL_PROM_MAX_LABELS);
            struct label *l = &o->l[o->nl++];
            if (!name_start((unsigned char)*p) || *p == ':')
                return rail_fail(why, whylen, "bad label name");
            l->name = p;
            while (name_char((unsigned char)*p) && *p != ':')
                p++;
            char *end = p;
            while (*p == ' ')
                p++;
            if (*p != '=')
                return rail_fail(why, whylen, "a label without '='");
            *end = '\0';
            p++;
            while (*p == ' ')
                p++;
            if (*p != '"')
                return rail_fail(why, whylen, "a label value without quotes");
            char *w = ++p;
            l->value = w;
            for (; *p && *p != '"'; p++) {
                if (*p == '\\') {
                    p++;
                    if (*p != '\\' && *p != '"' && *p != 'n')
                        return rail_fail(why, whylen, "bad escape in a label value");
                    *w++ = *p == 'n' ? '\n' : *p;
                } else {
                    *w++ = *p;
                }
            }
            if (*p != '"')
                return rail_fail(why, whylen, "unterminated label value");
            p++;
            *w = '\0';
            for (int i = 0; i < o->nl - 1; i++)
                if (strcmp(o->l[i].name, l->name) == 0)
                    return rail_fail(why, whylen, "label '%.40s' twice", l->name);
            while (*p == ' ')
                p++;
            if (*p == ',')
                p++;
            else if (*p != '}')
                return rail_fail(why, whylen, "expected ',' or '}' after a label");
        }
        p++; /* '}' */
    } else if (*p != ' ' && *p != '\t') {
        return rail_fail(why, whylen, "bad character after the metric name");
    }
    if (*p != ' ' && *p != '\t')
        return rail_fail(why, whylen, "no value");
    *p++ = '\0';
    while (*p == ' ' || *p == '\t')
        p++;
    o->value = p;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    if (p == o->value)
        return rail_fail(why, whylen, "no value");
    if (*p) { /* an optional timestamp: an integer, then nothing */
        *p++ = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        long ts;
        if (*p && rail_parse_long(p, 10, -0x7fffffffffffffffL, 0x7fffffffffffffffL, &ts) != 0)
            return rail_fail(why, whylen, "trailing characters after the value");
    }
    return 0;
}

static const char *label(const struct sample *s, const char *name)
{
    for (int i = 0; i < s->nl; i++)
        if (strcmp(s->l[i].name, name) == 0)
            return s->l[i].value;
    return NULL;
}

/* "N-MUNIT" with M = N + 1: N x 1024^unit in *bytes (0 for "0B"). */
static int parse_bucket(const char *v, uint64_t *bytes)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    uint64_t lo, hi;
    size_t a = strspn(v, "0123456789");
    if (strcmp(v, "0B") == 0) {
        *bytes = 0;
        return 0;
    }
    if (a == 0 || a > 7 || v[a] != '-' || rail_parse_digits(v, a, 7, 9999999, &lo) != 0)
        return -EINVAL;
    const char *m = v + a + 1;
    size_t b = strspn(m, "0123456789");
    if (b == 0 || b > 7 || rail_parse_digits(m, b, 7, 9999999, &hi) != 0 || hi != lo + 1 || lo == 0)
        return -EINVAL;
    for (int u = 0; u < 5; u++)
        if (strcmp(m + b, units[u]) == 0) {
            if (u < 4 && lo >= 1024)
                return -EINVAL; /* Inspector moves to the next unit from 1024 on */
            *bytes = lo << (10 * u);
            return 0;
        }
    return -EINVAL;
}

/* algo_proto "RING_SIMPLE", "NVLS_TREE_LL128": the protocol after the last '_'. */
static int parse_pair(const char *v, int *algo, int *proto)
{
    const char *us = strrchr(v, '_');
    if (!us || us == v)
        return -EINVAL;
    *algo = rail_calib_algo_from_name(v, (size_t)(us - v));
    *proto = rail_calib_proto_from_name(us + 1, strlen(us + 1));
    return *algo < 0 || *proto < 0 ? -EINVAL : 0;
}

/* The text format's special values: NaN, +Inf, -Inf (Inf), any case. */
static bool nonfinite(const char *v)
{
    if (*v == '+' || *v == '-')
        v++;
    return strcasecmp(v, "nan") == 0 || strcasecmp(v, "inf") == 0;
}

/* One exec-time sample to a record (0), skipped (1), or an error. */
static int to_record(const struct sample *s, const char *name, struct rail_job_set *set, char *why,
                     size_t whylen)
{
    static const char *const need[] = {"collective", "message_size", "algo_proto", "n_nodes",
                                       "nranks"};
    const char *v[5];
    long nnodes, nranks;
    uint64_t bytes;
    int algo, proto, coll;
    double us;
    char num[160];

    for (int i = 0; i < 5; i++)
        if (!(v[i] = label(s, need[i])))
            return rail_fail(why, whylen, "no '%s' label", need[i]);
    if (rail_parse_long(v[4], 10, 1, RAIL_CALIB_MAX_RANKS, &nranks) != 0 ||
        rail_parse_long(v[3], 10, 1, nranks, &nnodes) != 0)
        return rail_fail(why, whylen, "n_nodes/nranks are not 1 <= n_nodes <= nranks <= %d",
                         RAIL_CALIB_MAX_RANKS);
    if (parse_bucket(v[1], &bytes) != 0) {
        char q[48];
        rail_quote(q, sizeof(q), v[1], strlen(v[1]));
        return rail_fail(why, whylen, "message_size '%s' is not a bucket like '4-5MB'", q);
    }
    if (strcmp(s->value, "0") == 0 || strcmp(s->value, "0.0") == 0) {
        set->skips.no_time++;
        return 1;
    }
    if (nonfinite(s->value)) {
        set->skips.nonfinite++; /* an empty bucket's mean, a division by zero: not a time */
        return 1;
    }
    if (rail_calib_time_parse(s->value, &us, num, sizeof(num)) != 0)
        return rail_fail(why, whylen, "value %s", num);
    if ((coll = rail_calib_coll_exact(v[0], strlen(v[0]))) < 0) {
        set->skips.other++;
        return 1;
    }
    if (parse_pair(v[2], &algo, &proto) != 0) {
        set->skips.no_pair++;
        return 1;
    }
    if (bytes == 0) {
        set->skips.no_size++;
        return 1;
    }
    if (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter)
        bytes *= (uint64_t)nranks; /* Inspector's size is per rank */
    if (bytes > RAIL_CALIB_MAX_BYTES)
        return rail_fail(why, whylen, "message_size x nranks beyond 2^50 bytes");
    const char *job = label(s, "slurm_job_id"), *comm = label(s, "comm_name");
    const char *node = label(s, "node"), *gpu = label(s, "gpu");
    uint64_t key = rail_job_key(0, "prom", 4);
    key = rail_job_key(key, job ? job : "", job ? strlen(job) : 0);
    key = rail_job_key(key, comm ? comm : "", comm ? strlen(comm) : 0);
    uint64_t rk = rail_job_key(0, node ? node : name, strlen(node ? node : name));
    rk = rail_job_key(rk, gpu ? gpu : "", gpu ? strlen(gpu) : 0);
    int run = rail_job_run(set, key, (int)nranks, (int)nnodes, RAIL_JOB_SRC_INSPECTOR_PROM, NULL);
    if (run < 0)
        return run == -E2BIG ? rail_fail(why, whylen, "more than %d runs", RAIL_JOB_MAX_RUNS)
                             : (snprintf(why, whylen, "out of memory"), run);
    struct rail_job_rec r = {.run = (uint32_t)run,
                             .rank = (uint32_t)(rk ^ rk >> 32),
                             .bytes = bytes,
                             .time_us = (float)us,
                             .coll = (uint8_t)coll,
                             .algo = (uint8_t)algo,
                             .proto = (uint8_t)proto};
    int rc = rail_job_add(set, &r);
    if (rc == -E2BIG)
        return rail_fail(why, whylen, "more than %u records in all", RAIL_JOB_MAX_RECORDS);
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    return rc;
}

bool rail_calib_prom_detect(const char *buf, size_t len)
{
    size_t pos = 0;
    while (buf && pos < len) {
        const char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
        size_t k = nl ? (size_t)(nl - p) : len - pos, i = 0;
        pos += k + 1;
        while (i < k && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
            i++;
        if (i == k || p[i] == '#')
            continue;
        /* a sample: a metric name, then '{' or a blank; an nccl_ one says it is Inspector's */
        size_t n0 = i;
        if (!name_start((unsigned char)p[i]))
            return false;
        while (i < k && name_char((unsigned char)p[i]))
            i++;
        if (i == k || (p[i] != '{' && p[i] != ' ' && p[i] != '\t'))
            return false;
        if (i - n0 > 5 && memcmp(p + n0, "nccl_", 5) == 0)
            return true;
    }
    return false;
}

int rail_calib_prom_parse(const char *buf, size_t len, const char *name, struct rail_job_set *set,
                          char *err, size_t errlen)
{
    struct rail_job_lines l = {buf, len, 0, 0};
    char line[RAIL_CALIB_MAX_LINE + 2], why[256];
    int rc = 0, k, samples = 0;

    rail_clear_err(err, errlen);
    name = name ? name : "(prometheus)";
    while ((k = rail_job_line(&l, line, sizeof(line), why, sizeof(why))) > 0) {
        struct sample s;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        if ((rc = parse_sample(p, &s, why, sizeof(why))) < 0)
            break;
        samples++;
        if (strcmp(s.metric, RAIL_PROM_METRIC) == 0 &&
            (rc = to_record(&s, name, set, why, sizeof(why))) < 0)
            break;
        rc = 0;
    }
    if (k < 0)
        rc = k;
    if (rc < 0) {
        rail_set_err(err, errlen, "%s:%d: %s", name, l.lineno, why);
        return rc;
    }
    if (samples == 0) {
        rail_set_err(err, errlen, "%s: no Prometheus sample line", name);
        return -EINVAL;
    }
    return 0;
}
