/* SPDX-License-Identifier: Apache-2.0 */
/* Reader of JSON telemetry snapshots (json-c): the format rail_stats_format_json writes. Every
 * member the table needs is checked for presence and type; errors name the member by its path
 * ("connections[1].rails[0].bytes"). */
#include "telemetry/rail_stats_format.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "safe_file.h"
#include "strutil.h"

#define MAX_FILE_BYTES (64u << 20)
#define MAX_CONNS      (1 << 20)

/* A string from the file as it may appear in a message: control characters (terminal escape
 * sequences) and non-ASCII bytes become '?'. */
#define SHOWN_LEN 72
static const char *shown(const char *s, char buf[SHOWN_LEN])
{
    rail_quote(buf, SHOWN_LEN, s, strlen(s));
    return buf;
}

static json_object *member(json_object *o, const char *key, const char *where, char *err,
                           size_t errlen)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !v) {
        rail_set_err(err, errlen, "%s%s%s: missing", where, *where ? "." : "", key);
        return NULL;
    }
    return v;
}

static int get_u64(json_object *o, const char *key, const char *where, uint64_t max, uint64_t *out,
                   char *err, size_t errlen)
{
    json_object *v = member(o, key, where, err, errlen);
    if (!v)
        return -EINVAL;
    if (json_object_get_type(v) != json_type_int || json_object_get_int64(v) < 0)
        return rail_fail(err, errlen, "%s%s%s: expected an integer >= 0, got %s", where,
                         *where ? "." : "", key, json_object_to_json_string(v));
    uint64_t x = json_object_get_uint64(v);
    if (x > max)
        return rail_fail(err, errlen, "%s%s%s: %llu is above %llu", where, *where ? "." : "", key,
                         (unsigned long long)x, (unsigned long long)max);
    *out = x;
    return 0;
}

static int get_str(json_object *o, const char *key, const char *where, char *out, size_t cap,
                   char *err, size_t errlen)
{
    json_object *v = member(o, key, where, err, errlen);
    if (!v)
        return -EINVAL;
    if (json_object_get_type(v) != json_type_string)
        return rail_fail(err, errlen, "%s%s%s: expected a string", where, *where ? "." : "", key);
    if ((size_t)json_object_get_string_len(v) >= cap)
        return rail_fail(err, errlen, "%s%s%s: longer than %zu bytes", where, *where ? "." : "",
                         key, cap - 1);
    memcpy(out, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
    return 0;
}

static json_object *get_typed(json_object *o, const char *key, const char *where,
                              enum json_type type, char *err, size_t errlen)
{
    json_object *v = member(o, key, where, err, errlen);
    if (v && json_object_get_type(v) != type) {
        rail_set_err(err, errlen, "%s%s%s: expected %s", where, *where ? "." : "", key,
                     type == json_type_array ? "an array" : "an object");
        return NULL;
    }
    return v;
}

static int parse_rail(json_object *o, int index, const char *where, struct rail_stats_rail_snap *r,
                      char *err, size_t errlen)
{
    uint64_t idx, weight;
    char state[16], q[SHOWN_LEN];
    if (json_object_get_type(o) != json_type_object)
        return rail_fail(err, errlen, "%s: expected an object", where);
    if (get_u64(o, "rail", where, RAIL_STATS_MAX_RAILS, &idx, err, errlen) ||
        get_str(o, "device", where, r->dev, sizeof(r->dev), err, errlen) ||
        get_str(o, "state", where, state, sizeof(state), err, errlen) ||
        get_u64(o, "bytes", where, UINT64_MAX, &r->bytes, err, errlen) ||
        get_u64(o, "messages", where, UINT64_MAX, &r->messages, err, errlen) ||
        get_u64(o, "stripes", where, UINT64_MAX, &r->stripes, err, errlen) ||
        get_u64(o, "errors", where, UINT64_MAX, &r->errors, err, errlen) ||
        get_u64(o, "failovers", where, UINT64_MAX, &r->failovers, err, errlen) ||
        get_u64(o, "rejoins", where, UINT64_MAX, &r->rejoins, err, errlen) ||
        get_u64(o, "weight", where, RAIL_STRIPE_WEIGHT_ONE, &weight, err, errlen) ||
        get_u64(o, "rate_bytes_per_us", where, UINT64_MAX / 1000000u, &r->rate, err, errlen))
        return -EINVAL;
    if (idx != (uint64_t)index)
        return rail_fail(err, errlen, "%s.rail: %llu, expected %d (rails are listed in order)",
                         where, (unsigned long long)idx, index);
    if (strcmp(state, "up") != 0 && strcmp(state, "down") != 0)
        return rail_fail(err, errlen, "%s.state: '%s', expected \"up\" or \"down\"", where,
                         shown(state, q));
    r->up = state[0] == 'u';
    r->weight = (uint32_t)weight;
    return 0;
}

static int parse_conn(json_object *o, const char *where, struct rail_stats_conn_snap *c, char *err,
                      size_t errlen)
{
    char dir[16], q[SHOWN_LEN];
    uint64_t nrails;
    json_object *rails;
    if (json_object_get_type(o) != json_type_object)
        return rail_fail(err, errlen, "%s: expected an object", where);
    if (get_u64(o, "id", where, UINT64_MAX, &c->id, err, errlen) ||
        get_str(o, "direction", where, dir, sizeof(dir), err, errlen) ||
        get_str(o, "device", where, c->dev, sizeof(c->dev), err, errlen) ||
        get_str(o, "peer", where, c->peer, sizeof(c->peer), err, errlen) ||
        get_u64(o, "created_unix_ms", where, UINT64_MAX, &c->created_unix_ms, err, errlen) ||
        get_u64(o, "striped_messages", where, UINT64_MAX, &c->striped_messages, err, errlen) ||
        get_u64(o, "nrails", where, RAIL_STATS_MAX_RAILS, &nrails, err, errlen))
        return -EINVAL;
    if (strcmp(dir, "send") != 0 && strcmp(dir, "recv") != 0)
        return rail_fail(err, errlen, "%s.direction: '%s', expected \"send\" or \"recv\"", where,
                         shown(dir, q));
    c->dir = dir[0] == 'r' ? RAIL_STATS_RECV : RAIL_STATS_SEND;
    if (nrails < 1)
        return rail_fail(err, errlen, "%s.nrails: 0, expected 1..%d", where, RAIL_STATS_MAX_RAILS);
    c->nrails = (int)nrails;
    rails = get_typed(o, "rails", where, json_type_array, err, errlen);
    if (!rails)
        return -EINVAL;
    if (json_object_array_length(rails) != (size_t)nrails)
        return rail_fail(err, errlen, "%s.rails: %zu entries, nrails says %d", where,
                         json_object_array_length(rails), c->nrails);
    for (int r = 0; r < c->nrails; r++) {
        char w[96];
        snprintf(w, sizeof(w), "%s.rails[%d]", where, r);
        if (parse_rail(json_object_array_get_idx(rails, (size_t)r), r, w, &c->rail[r], err, errlen))
            return -EINVAL;
    }
    return 0;
}

static int parse_root(json_object *root, struct rail_stats_snapshot *out, char *err, size_t errlen)
{
    char fmt[32], q[SHOWN_LEN];
    uint64_t version, pid;
    json_object *conns, *closed;
    if (json_object_get_type(root) != json_type_object)
        return rail_fail(err, errlen, "top level: expected a JSON object");
    if (get_str(root, "format", "", fmt, sizeof(fmt), err, errlen))
        return -EINVAL;
    if (strcmp(fmt, RAIL_STATS_JSON_FORMAT) != 0)
        return rail_fail(err, errlen, "format: '%s', expected \"%s\"", shown(fmt, q),
                         RAIL_STATS_JSON_FORMAT);
    if (get_u64(root, "version", "", UINT64_MAX, &version, err, errlen))
        return -EINVAL;
    if (version != RAIL_STATS_JSON_VERSION)
        return rail_fail(err, errlen, "version %llu is not supported (this reader knows %d)",
                         (unsigned long long)version, RAIL_STATS_JSON_VERSION);
    if (get_u64(root, "pid", "", INT64_MAX, &pid, err, errlen) ||
        get_u64(root, "time_unix_ms", "", UINT64_MAX, &out->time_unix_ms, err, errlen) ||
        get_u64(root, "interval_ms", "", UINT64_MAX, &out->interval_ms, err, errlen))
        return -EINVAL;
    out->pid = (int64_t)pid;
    closed = get_typed(root, "closed", "", json_type_object, err, errlen);
    if (!closed)
        return -EINVAL;
    struct rail_stats_totals *t = &out->closed;
    if (get_u64(closed, "connections", "closed", UINT64_MAX, &t->connections, err, errlen) ||
        get_u64(closed, "bytes", "closed", UINT64_MAX, &t->bytes, err, errlen) ||
        get_u64(closed, "messages", "closed", UINT64_MAX, &t->messages, err, errlen) ||
        get_u64(closed, "stripes", "closed", UINT64_MAX, &t->stripes, err, errlen) ||
        get_u64(closed, "errors", "closed", UINT64_MAX, &t->errors, err, errlen) ||
        get_u64(closed, "failovers", "closed", UINT64_MAX, &t->failovers, err, errlen) ||
        get_u64(closed, "rejoins", "closed", UINT64_MAX, &t->rejoins, err, errlen))
        return -EINVAL;
    conns = get_typed(root, "connections", "", json_type_array, err, errlen);
    if (!conns)
        return -EINVAL;
    size_t n = json_object_array_length(conns);
    if (n > MAX_CONNS)
        return rail_fail(err, errlen, "connections: %zu entries, at most %d", n, MAX_CONNS);
    if (n) {
        out->conns = calloc(n, sizeof(*out->conns));
        if (!out->conns) {
            rail_set_err(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        char w[32];
        snprintf(w, sizeof(w), "connections[%zu]", i);
        if (parse_conn(json_object_array_get_idx(conns, i), w, &out->conns[i], err, errlen))
            return -EINVAL;
        out->nconns = (int)i + 1;
    }
    return 0;
}

int rail_stats_parse_json(const char *text, struct rail_stats_snapshot *out, char *err,
                          size_t errlen)
{
    if (!out)
        return rail_fail(err, errlen, "no output");
    memset(out, 0, sizeof(*out));
    if (!text)
        return rail_fail(err, errlen, "no text");
    size_t len = strlen(text);
    if (len > INT32_MAX)
        return rail_fail(err, errlen, "text too long");
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        rail_set_err(err, errlen, "out of memory");
        return -ENOMEM;
    }
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success || !root) {
        json_object_put(root);
        if (jerr == json_tokener_continue)
            return rail_fail(err, errlen, "not valid JSON: the text ends inside a value");
        return rail_fail(err, errlen, "not valid JSON at byte %zu: %s", end,
                         json_tokener_error_desc(jerr));
    }
    while (end < len && isspace((unsigned char)text[end]))
        end++;
    int rc = 0;
    if (end < len)
        rc = rail_fail(err, errlen, "not valid JSON: trailing data at byte %zu", end);
    else
        rc = parse_root(root, out, err, errlen);
    json_object_put(root);
    if (rc) {
        rail_stats_snapshot_free(out);
        memset(out, 0, sizeof(*out));
        return rc;
    }
    rail_clear_err(err, errlen);
    return 0;
}

int rail_stats_load_file(const char *path, struct rail_stats_snapshot *out, char *err,
                         size_t errlen)
{
    char msg[256];
    if (out)
        memset(out, 0, sizeof(*out));
    if (!path || !out)
        return rail_fail(err, errlen, "no file");
    /* Non-blocking, regular files only, at most 64 MiB (safe_file.h). */
    size_t len = 0;
    char *text = NULL;
    int rc = rail_file_read_all(path, MAX_FILE_BYTES, 0, &text, &len, err, errlen);
    if (rc == -EFBIG)
        rail_set_err(err, errlen, "%s: larger than 64 MiB, not a snapshot", path);
    if (rc)
        return rc;
    if (memchr(text, '\0', len)) {
        free(text);
        return rail_fail(err, errlen, "%s: binary data (NUL bytes), not a JSON snapshot", path);
    }
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p) {
        free(text);
        return rail_fail(err, errlen, "%s: empty file", path);
    }
    if (*p != '{' && strstr(p, "nccl_rail_")) {
        free(text);
        rail_set_err(err, errlen,
                     "%s is in the Prometheus text format (NCCL_RAIL_STATS_FORMAT=prometheus): "
                     "scrape it with Prometheus (e.g. node_exporter's textfile collector) or "
                     "print it as it is (cat)",
                     path);
        return -EPROTONOSUPPORT;
    }
    rc = rail_stats_parse_json(text, out, msg, sizeof(msg));
    free(text);
    if (rc)
        rail_set_err(err, errlen, "%s: %s", path, msg);
    return rc;
}
