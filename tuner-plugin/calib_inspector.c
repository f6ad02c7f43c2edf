/* SPDX-License-Identifier: Apache-2.0 */
#include "calib_inspector.h"

#include <errno.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model.h"
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
        (rc = get_int(cp, "coll_sn", 0, INT64_MAX, &sn, why, whylen)) ||
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
    int run = rail_job_run(set, key, (int)nranks, (int)nnodes, RAIL_JOB_SRC_INSPECTOR_JSON);
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
        size_t start = pos;
        while (start < len && (buf[start] == ' ' || buf[start] == '\t' || buf[start] == '\r' ||
                               buf[start] == '\n'))
            start++;
        if (start == len)
            break;
        line += line_at(buf + pos, start - pos) - 1;
        size_t chunk = len - start > INT_MAX ? INT_MAX : len - start;
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, buf + start, (int)chunk);
        enum json_tokener_error je = json_tokener_get_error(tok);
        size_t end = start + json_tokener_get_parse_end(tok);
        if (je != json_tokener_success || !o) {
            if (o)
                json_object_put(o);
            line += line_at(buf + start, end - start) - 1;
            rc = rail_fail(why, sizeof(why), "JSON: %s",
                           je == json_tokener_continue ? "truncated object"
                                                       : json_tokener_error_desc(je));
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
