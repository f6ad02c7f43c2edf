/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_inspector.h"

#include <errno.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_json_scan.h"
#include "model/cost_model.h"
#include "strutil.h"

bool rail_calib_inspector_detect(const char *buf, size_t len)
{
    for (size_t i = 0; buf && i < len; i++) {
        if (buf[i] == '{')
            return true;
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n')
            return false;
    }
    return false;
}

/* An integer member in [lo, hi]: 0, or -EINVAL with the reason. */
static int get_int(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *out, char *why,
                   size_t whylen)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return rail_fail(why, whylen, "no integer '%s'", key);
    errno = 0;
    int64_t x = json_object_get_int64(v);
    if (errno || x < lo || x > hi)
        return rail_fail(why, whylen, "'%s' out of range [%lld, %lld]", key, (long long)lo,
                         (long long)hi);
    *out = x;
    return 0;
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* One object: a record added (0), skipped (1), or an error. */
static int one_object(json_object *root, const char *name, const struct rail_calib_hint *hint,
                      struct rail_job_set *set, char *why, size_t whylen)
{
    json_object *hdr, *cp;
    int64_t rank, nranks, nnodes, sn, msg, us;
    const char *id, *coll_name, *src;
    int coll, rc;

    (void)name;
    if (!json_object_is_type(root, json_type_object))
        return rail_fail(why, whylen, "not a JSON object");
    if (!json_object_object_get_ex(root, "coll_perf", &cp)) {
        if (json_object_object_get_ex(root, "p2p_perf", &cp))
            return set->skips.other++, 1;
        return rail_fail(why, whylen, "not an NCCL Inspector record (no coll_perf or p2p_perf)");
    }
    if (!json_object_object_get_ex(root, "header", &hdr) ||
        !json_object_is_type(hdr, json_type_object) || !json_object_is_type(cp, json_type_object))
        return rail_fail(why, whylen, "no 'header' object");
    if (!(id = get_str(hdr, "id")) || strlen(id) > 64)
        return rail_fail(why, whylen, "no communicator 'id' (at most 64 characters)");
    if ((rc = get_int(hdr, "n_ranks", 1, RAIL_CALIB_MAX_RANKS, &nranks, why, whylen)) ||
        (rc = get_int(hdr, "nnodes", 1, nranks, &nnodes, why, whylen)) ||
        (rc = get_int(hdr, "rank", 0, nranks - 1, &rank, why, whylen)) ||
        (rc = get_int(cp, "coll_sn", 0, (int64_t)RAIL_JOB_MAX_SEQ, &sn, why, whylen)) ||
        (rc = get_int(cp, "coll_msg_size_bytes", 0, (int64_t)RAIL_CALIB_MAX_BYTES, &msg, why,
                      whylen)) ||
        (rc = get_int(cp, "coll_exec_time_us", 0, (int64_t)RAIL_CALIB_MAX_TIME_US, &us, why,
                      whylen)))
        return rc;
    if (!(coll_name = get_str(cp, "coll")))
        return rail_fail(why, whylen, "no 'coll' name");
    if ((coll = rail_calib_coll_exact(coll_name, strlen(coll_name))) < 0)
        return set->skips.other++, 1;
    if (!hint || hint->algo < 0 || hint->proto < 0)
        return rail_fail(why, whylen,
                         "NCCL Inspector's JSON records no algorithm or protocol: give --algo "
                         "and --proto before the file (a run with NCCL_ALGO and NCCL_PROTO "
                         "forced), or use its Prometheus output (algo_proto) or the rail profiler");
    src = get_str(cp, "coll_timing_source");
    if (us == 0 || (src && strcmp(src, "kernel_gpu") != 0))
        return set->skips.no_time++, 1;
    if (msg == 0)
        return set->skips.no_size++, 1;
    uint64_t bytes = (uint64_t)msg;
    if (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter)
        bytes *= (uint64_t)nranks;
    if (bytes > RAIL_CALIB_MAX_BYTES)
        return rail_fail(why, whylen, "coll_msg_size_bytes x n_ranks beyond 2^50 bytes");
    uint64_t key = rail_job_key(rail_job_key(0, "json", 4), id, strlen(id));
    int other = 0;
    int run = rail_job_run(set, key, (int)nranks, (int)nnodes, RAIL_JOB_SRC_INSPECTOR_JSON, &other);
    if (run == -EEXIST)
        return rail_fail(why, whylen,
                         "communicator '%s' has n_ranks %d nnodes %d here but n_ranks %d nnodes "
                         "%d in a record read before: its records must agree",
                         id, (int)nranks, (int)nnodes, set->runs[other].nranks,
                         set->runs[other].nnodes);
    if (run < 0)
        return run == -E2BIG ? rail_fail(why, whylen, "more than %d runs", RAIL_JOB_MAX_RUNS)
                             : (snprintf(why, whylen, "out of memory"), run);
    struct rail_job_rec r = {.run = (uint32_t)run,
                             .rank = (uint32_t)rank,
                             .seq = (uint64_t)sn,
                             .bytes = bytes,
                             .time_us = (float)us,
                             .coll = (uint8_t)coll,
                             .algo = (uint8_t)hint->algo,
                             .proto = (uint8_t)hint->proto};
    rc = rail_job_add(set, &r);
    if (rc == -E2BIG)
        return rail_fail(why, whylen, "more than %u records in all", RAIL_JOB_MAX_RECORDS);
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    return rc;
}

static int line_at(const char *buf, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += buf[i] == '\n';
    return line;
}

/* Keys in every object of a json-c tree (json-c keeps the last of a key written twice). */
static long count_members(json_object *o, int depth)
{
    long n = 0;
    if (depth > RAIL_INSPECTOR_MAX_DEPTH)
        return 0;
    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            n += 1 + count_members(v, depth + 1);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        size_t len = json_object_array_length(o);
        for (size_t i = 0; i < len; i++)
            n += count_members(json_object_array_get_idx(o, i), depth + 1);
    }
    return n;
}

/* One object at buf[start]: its shape checked before json-c sees it (calib_json_scan.h), then
 * parsed. The tree in *o, 0; or -EINVAL with the reason and *at the offset it is about. */
static int parse_one(json_tokener *tok, const char *buf, size_t len, size_t start, size_t *end,
                     json_object **o, size_t *at, char *why, size_t whylen)
{
    static const struct rail_json_bounds bounds = {
        RAIL_INSPECTOR_MAX_OBJECT, RAIL_INSPECTOR_MAX_VALUES, RAIL_INSPECTOR_MAX_DEPTH};
    struct rail_json_shape sh;
    char key[80];

    *o = NULL;
    if (buf[start] != '{') {
        *at = start;
        return rail_fail(why, whylen,
                         "not a JSON object (NCCL Inspector writes one object per collective)");
    }
    if (rail_json_scan(buf, len, start, &bounds, &sh, at, why, whylen) < 0)
        return -EINVAL;
    json_tokener_reset(tok);
    *o = json_tokener_parse_ex(tok, buf + start, (int)(sh.end - start));
    enum json_tokener_error je = json_tokener_get_error(tok);
    *end = start + json_tokener_get_parse_end(tok);
    if (je != json_tokener_success || !*o) {
        if (*o)
            json_object_put(*o);
        *o = NULL;
        *at = *end;
        return rail_fail(why, whylen, "JSON: %s",
                         je == json_tokener_continue ? "truncated object"
                                                     : json_tokener_error_desc(je));
    }
    if (count_members(*o, 1) != sh.members) {
        json_object_put(*o);
        *o = NULL;
        *at = start;
        if (rail_json_dup_key(buf, start, sh.end, at, key, sizeof(key)))
            return rail_fail(why, whylen, "JSON key '%s' twice in one object", key);
        return rail_fail(why, whylen, "a JSON key twice in one object (written with escapes)");
    }
    return 0;
}

bool rail_calib_inspector_is_record(const char *buf, size_t len)
{
    json_tokener *tok = json_tokener_new_ex(RAIL_INSPECTOR_MAX_DEPTH);
    json_object *o = NULL;
    size_t start = 0, end, at;
    char why[64];
    bool yes = false;

    while (buf && start < len &&
           (buf[start] == ' ' || buf[start] == '\t' || buf[start] == '\r' || buf[start] == '\n'))
        start++;
    if (tok && buf && start < len &&
        parse_one(tok, buf, len, start, &end, &o, &at, why, sizeof(why)) == 0)
        yes = json_object_is_type(o, json_type_object) &&
              json_object_object_get_ex(o, "header", NULL) &&
              (json_object_object_get_ex(o, "coll_perf", NULL) ||
               json_object_object_get_ex(o, "p2p_perf", NULL));
    if (o)
        json_object_put(o);
    if (tok)
        json_tokener_free(tok);
    return yes;
}

int rail_calib_inspector_parse(const char *buf, size_t len, const char *name,
                               const struct rail_calib_hint *hint, struct rail_job_set *set,
                               char *err, size_t errlen)
{
    json_tokener *tok = json_tokener_new_ex(RAIL_INSPECTOR_MAX_DEPTH);
    size_t pos = 0;
    int rc = 0, objects = 0, line = 1;
    char why[320];

    rail_clear_err(err, errlen);
    name = name ? name : "(inspector)";
    if (!tok) {
        rail_set_err(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    if (buf && memchr(buf, '\0', len)) {
        json_tokener_free(tok);
        rail_set_err(err, errlen, "%s:%d: NUL byte: not a text file", name,
                     line_at(buf, (size_t)((const char *)memchr(buf, '\0', len) - buf)));
        return -EINVAL;
    }
    while (buf && pos < len && rc == 0) {
        size_t start = pos, end = 0, at = 0;
        json_object *o;
        while (start < len && (buf[start] == ' ' || buf[start] == '\t' || buf[start] == '\r' ||
                               buf[start] == '\n'))
            start++;
        if (start == len)
            break;
        line += line_at(buf + pos, start - pos) - 1;
        if ((rc = parse_one(tok, buf, len, start, &end, &o, &at, why, sizeof(why))) < 0) {
            line += line_at(buf + start, (at > start ? at : start) - start) - 1;
            break;
        }
        objects++;
        rc = one_object(o, name, hint, set, why, sizeof(why));
        json_object_put(o);
        if (rc > 0)
            rc = 0;
        if (rc == 0) {
            line += line_at(buf + start, end - start) - 1;
            pos = end;
        }
    }
    json_tokener_free(tok);
    if (rc < 0) {
        rail_set_err(err, errlen, "%s:%d: %s", name, line, why);
        return rc;
    }
    if (objects == 0) {
        rail_set_err(err, errlen, "%s: no JSON object", name);
        return -EINVAL;
    }
    return 0;
}
