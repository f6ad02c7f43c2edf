/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_prof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_log.h"
#include "prof_file_format.h"
#include "strutil.h"

/* The first non-blank, non-'#' line of buf (at most n characters), or NULL. */
static const char *first_line(const char *buf, size_t len, size_t *n)
{
    size_t pos = 0;
    while (buf && pos < len) {
        const char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
        size_t k = nl ? (size_t)(nl - p) : len - pos;
        pos += k + 1;
        while (k && (p[k - 1] == '\r' || p[k - 1] == ' ' || p[k - 1] == '\t'))
            k--;
        if (k && p[0] != '#') {
            *n = k;
            return p;
        }
    }
    return NULL;
}

bool rail_calib_prof_detect(const char *buf, size_t len)
{
    size_t n;
    const char *p = first_line(buf, len, &n);
    size_t k = sizeof(RAIL_PROF_FORMAT) - 1;
    return p && n >= k && memcmp(p, RAIL_PROF_FORMAT, k) == 0 && (n == k || p[k] == ' ');
}

/* "comm 0xHEX rank R nranks N nnodes M". */
static int parse_comm(char *line, uint64_t *comm, int *rank, int *nranks, int *nnodes, char *why,
                      size_t whylen)
{
    char *tok[9], *save = NULL;
    int n = 0;
    long v[3];
    uint64_t h = 0;
    for (char *t = strtok_r(line, " \t", &save); t && n < 9; t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    if (n != 8 || strcmp(tok[0], "comm") || strcmp(tok[2], "rank") || strcmp(tok[4], "nranks") ||
        strcmp(tok[6], "nnodes"))
        return rail_fail(why, whylen, "expected 'comm 0xHEX rank R nranks N nnodes M'");
    size_t hl = strlen(tok[1]);
    if (hl < 3 || hl > 18 || tok[1][0] != '0' || (tok[1][1] != 'x' && tok[1][1] != 'X') ||
        strspn(tok[1] + 2, "0123456789abcdefABCDEF") != hl - 2)
        return rail_fail(why, whylen, "communicator id is not 1-16 hex digits after 0x");
    for (size_t i = 2; i < hl; i++) {
        char c = tok[1][i];
        h = h << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (rail_parse_long(tok[5], 10, 1, RAIL_CALIB_MAX_RANKS, &v[1]) ||
        rail_parse_long(tok[7], 10, 1, v[1], &v[2]) ||
        rail_parse_long(tok[3], 10, 0, v[1] - 1, &v[0]))
        return rail_fail(why, whylen,
                         "rank, nranks or nnodes out of range (0 <= rank < nranks, 1 <= nnodes "
                         "<= nranks <= %d)",
                         RAIL_CALIB_MAX_RANKS);
    *comm = h;
    *rank = (int)v[0];
    *nranks = (int)v[1];
    *nnodes = (int)v[2];
    return 0;
}

static int parse_row(char *line, struct rail_job_rec *r, char *why, size_t whylen)
{
    char *f[8], num[160];
    int n = 0;
    uint64_t seq, bytes;
    double us;
    long nch;
    for (char *s = line; n < 8;) {
        f[n++] = s;
        s = strchr(s, ',');
        if (!s)
            break;
        *s++ = '\0';
    }
    if (n != 7)
        return rail_fail(why, whylen, "%d fields, expected 7 (%s)", n, RAIL_PROF_COLUMNS);
    int coll = rail_calib_coll_exact(f[1], strlen(f[1]));
    int algo = rail_calib_algo_from_name(f[2], strlen(f[2]));
    int proto = rail_calib_proto_from_name(f[3], strlen(f[3]));
    if (rail_parse_digits(f[0], strlen(f[0]), 20, UINT64_MAX, &seq) != 0 || seq > RAIL_JOB_MAX_SEQ)
        return rail_fail(why, whylen, "seq is not a sequence number in [0, %llu]",
                         (unsigned long long)RAIL_JOB_MAX_SEQ);
    if (coll < 0 || algo < 0 || proto < 0) {
        char q[48];
        const char *bad = coll < 0 ? f[1] : (algo < 0 ? f[2] : f[3]);
        rail_quote(q, sizeof(q), bad, strlen(bad));
        return rail_fail(why, whylen, "unknown %s '%s'",
                         coll < 0 ? "collective" : (algo < 0 ? "algorithm" : "protocol"), q);
    }
    if (rail_parse_long(f[4], 10, 0, 64, &nch) != 0)
        return rail_fail(why, whylen, "channels is not a number in [0, 64]");
    if (rail_calib_bytes_parse(f[5], &bytes, num, sizeof(num)) != 0)
        return rail_fail(why, whylen, "bytes %s", num);
    if (rail_calib_time_parse(f[6], &us, num, sizeof(num)) != 0)
        return rail_fail(why, whylen, "gpu_us %s", num);
    *r = (struct rail_job_rec){.seq = seq,
                               .bytes = bytes,
                               .time_us = (float)us,
                               .coll = (uint8_t)coll,
                               .algo = (uint8_t)algo,
                               .proto = (uint8_t)proto};
    return 0;
}

int rail_calib_prof_parse(const char *buf, size_t len, const char *name, struct rail_job_set *set,
                          char *err, size_t errlen)
{
    struct rail_job_lines l = {buf, len, 0, 0};
    char line[RAIL_CALIB_MAX_LINE + 2], why[256], want[64];
    int header = 0, run = -1, rank = 0, rc = 0, k;

    rail_clear_err(err, errlen);
    name = name ? name : "(profile)";
    snprintf(want, sizeof(want), "%s %d", RAIL_PROF_FORMAT, RAIL_PROF_VERSION);
    while ((k = rail_job_line(&l, line, sizeof(line), why, sizeof(why))) > 0) {
        struct rail_job_rec r;
        if (!line[0] || line[0] == '#')
            continue;
        if (!header) {
            if (strcmp(line, want) != 0) {
                char q[64];
                rail_quote(q, sizeof(q), line, strlen(line));
                rc = rail_fail(why, sizeof(why), "wrong header '%s': expected '%s'", q, want);
                break;
            }
            header = 1;
        } else if (strncmp(line, "comm ", 5) == 0 || strcmp(line, "comm") == 0) {
            uint64_t comm;
            int nranks = 0, nnodes = 0;
            if (run >= 0) {
                rc = rail_fail(why, sizeof(why), "a second 'comm' line (one file per rank)");
                break;
            }
            if ((rc = parse_comm(line, &comm, &rank, &nranks, &nnodes, why, sizeof(why))) < 0)
                break;
            int other = 0;
            run = rail_job_run(set, rail_job_key(rail_job_key(0, "prof", 4), &comm, sizeof(comm)),
                               nranks, nnodes, RAIL_JOB_SRC_PROFILER, &other);
            if (run < 0) {
                rc = run == -EEXIST ? -EINVAL : run;
                if (run == -EEXIST)
                    snprintf(why, sizeof(why),
                             "communicator 0x%016llx has nranks %d nnodes %d here but nranks %d "
                             "nnodes %d in a rank file read before: its files must agree",
                             (unsigned long long)comm, nranks, nnodes, set->runs[other].nranks,
                             set->runs[other].nnodes);
                else if (run == -E2BIG)
                    snprintf(why, sizeof(why), "more than %d communicators", RAIL_JOB_MAX_RUNS);
                else
                    snprintf(why, sizeof(why), "out of memory");
                break;
            }
        } else if (strcmp(line, RAIL_PROF_COLUMNS) == 0) {
            continue;
        } else if (run < 0) {
            rc = rail_fail(why, sizeof(why), "a row before the 'comm' line");
            break;
        } else {
            if ((rc = parse_row(line, &r, why, sizeof(why))) < 0)
                break;
            r.run = (uint32_t)run;
            r.rank = (uint32_t)rank;
            if ((rc = rail_job_add(set, &r)) < 0) {
                if (rc == -E2BIG)
                    snprintf(why, sizeof(why), "more than %u records in all", RAIL_JOB_MAX_RECORDS);
                else
                    snprintf(why, sizeof(why), "out of memory");
                break;
            }
        }
    }
    if (k < 0)
        rc = k;
    if (rc == 0 && (!header || run < 0)) {
        rail_set_err(err, errlen, "%s: %s", name,
                     !header ? "empty: no 'nccl-rail-profile 1' header" : "no 'comm' line");
        return -EINVAL;
    }
    if (rc < 0)
        rail_set_err(err, errlen, "%s:%d: %s", name, l.lineno, why);
    return rc;
}
