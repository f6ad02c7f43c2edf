/* SPDX-License-Identifier: Apache-2.0 */
/* Pure formatters of telemetry snapshots: JSON (built with json-c, which does the string
 * escaping), Prometheus text exposition format, the CLI table and the close summary line. */
#include "telemetry/rail_stats_format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "strutil.h"

void rail_stats_snapshot_free(struct rail_stats_snapshot *s)
{
    if (!s)
        return;
    free(s->conns);
    s->conns = NULL;
    s->nconns = 0;
}

const char *rail_stats_dir_name(enum rail_stats_dir dir)
{
    return dir == RAIL_STATS_RECV ? "recv" : "send";
}

static void sat_add(uint64_t *sum, uint64_t v)
{
    *sum = *sum > UINT64_MAX - v ? UINT64_MAX : *sum + v;
}

void rail_stats_age_text(uint64_t now_ms, uint64_t then_ms, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    if (then_ms > now_ms)
        snprintf(buf, len, "%.1f s in the future (clocks differ?)",
                 (double)(then_ms - now_ms) / 1000.0);
    else
        snprintf(buf, len, "%.1f s old", (double)(now_ms - then_ms) / 1000.0);
}

void rail_stats_conn_totals(const struct rail_stats_conn_snap *c, struct rail_stats_totals *out)
{
    memset(out, 0, sizeof(*out));
    out->connections = 1;
    out->messages = c->striped_messages;
    for (int r = 0; r < c->nrails && r < RAIL_STATS_MAX_RAILS; r++) {
        const struct rail_stats_rail_snap *s = &c->rail[r];
        sat_add(&out->bytes, s->bytes);
        sat_add(&out->messages, s->messages);
        sat_add(&out->stripes, s->stripes);
        sat_add(&out->errors, s->errors);
        sat_add(&out->failovers, s->failovers);
        sat_add(&out->rejoins, s->rejoins);
    }
}

int rail_stats_expand_path(const char *pattern, long pid, char *out, size_t len)
{
    size_t pos = 0;
    if (!pattern || !*pattern || !out || !len)
        return -EINVAL;
    for (const char *p = pattern; *p; p++) {
        char num[24];
        const char *piece = num;
        size_t n;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(num, sizeof(num), "%ld", pid);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            num[0] = '%', num[1] = '\0';
            p++;
        } else {
            num[0] = *p, num[1] = '\0';
        }
        n = strlen(piece);
        if (pos + n >= len)
            return -ENAMETOOLONG;
        memcpy(out + pos, piece, n);
        pos += n;
    }
    out[pos] = '\0';
    return 0;
}

/* ---- a growable text buffer ---- */

struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static int sb_finish(struct sbuf *b, char **out)
{
    if (!b->oom && !b->p)
        sb_printf(b, "%s", "");
    if (b->oom) {
        free(b->p);
        *out = NULL;
        return -ENOMEM;
    }
    *out = b->p;
    return 0;
}

/* ---- JSON ---- */

static bool put(json_object *o, const char *key, json_object *v)
{
    if (!v)
        return false;
    if (json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

static bool put_u64(json_object *o, const char *key, uint64_t v)
{
    return put(o, key, json_object_new_uint64(v));
}

static bool put_str(json_object *o, const char *key, const char *v)
{
    return put(o, key, json_object_new_string(v));
}

static bool put_totals(json_object *o, const struct rail_stats_totals *t, bool with_conns)
{
    return (!with_conns || put_u64(o, "connections", t->connections)) &&
           put_u64(o, "bytes", t->bytes) && put_u64(o, "messages", t->messages) &&
           put_u64(o, "stripes", t->stripes) && put_u64(o, "errors", t->errors) &&
           put_u64(o, "failovers", t->failovers) && put_u64(o, "rejoins", t->rejoins);
}

static json_object *rail_json(const struct rail_stats_rail_snap *r, int index)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (put_u64(o, "rail", (uint64_t)index) && put_str(o, "device", r->dev) &&
        put_str(o, "state", r->up ? "up" : "down") && put_u64(o, "bytes", r->bytes) &&
        put_u64(o, "messages", r->messages) && put_u64(o, "stripes", r->stripes) &&
        put_u64(o, "errors", r->errors) && put_u64(o, "failovers", r->failovers) &&
        put_u64(o, "rejoins", r->rejoins) && put_u64(o, "weight", r->weight) &&
        put_u64(o, "rate_bytes_per_us", r->rate))
        return o;
    json_object_put(o);
    return NULL;
}

static json_object *conn_json(const struct rail_stats_conn_snap *c)
{
    struct rail_stats_totals t;
    json_object *o = json_object_new_object();
    json_object *tot = json_object_new_object();
    json_object *rails = json_object_new_array();
    if (!o || !tot || !rails)
        goto fail;
    rail_stats_conn_totals(c, &t);
    if (!put_totals(tot, &t, false))
        goto fail;
    for (int r = 0; r < c->nrails; r++) {
        json_object *rj = rail_json(&c->rail[r], r);
        if (!rj || json_object_array_add(rails, rj) != 0) {
            json_object_put(rj);
            goto fail;
        }
    }
    if (!(put_u64(o, "id", c->id) && put_str(o, "direction", rail_stats_dir_name(c->dir)) &&
          put_str(o, "device", c->dev) && put_str(o, "peer", c->peer) &&
          put_u64(o, "created_unix_ms", c->created_unix_ms) &&
          put_u64(o, "nrails", (uint64_t)c->nrails) &&
          put_u64(o, "striped_messages", c->striped_messages)))
        goto fail;
    {
        /* put() hands the child to o or releases it: either way it is no longer ours. */
        bool ok = put(o, "totals", tot);
        tot = NULL;
        if (!ok)
            goto fail;
        ok = put(o, "rails", rails);
        rails = NULL;
        if (!ok)
            goto fail;
    }
    return o;
fail:
    json_object_put(rails);
    json_object_put(tot);
    json_object_put(o);
    return NULL;
}

int rail_stats_format_json(const struct rail_stats_snapshot *s, char **out)
{
    if (!s || !out || (s->nconns > 0 && !s->conns))
        return -EINVAL;
    *out = NULL;
    int rc = -ENOMEM;
    json_object *root = json_object_new_object();
    json_object *conns = json_object_new_array();
    json_object *closed = json_object_new_object();
    if (!root || !conns || !closed)
        goto done;
    for (int i = 0; i < s->nconns; i++) {
        json_object *cj = conn_json(&s->conns[i]);
        if (!cj || json_object_array_add(conns, cj) != 0) {
            json_object_put(cj);
            goto done;
        }
    }
    if (!put_totals(closed, &s->closed, true))
        goto done;
    if (!put_str(root, "format", RAIL_STATS_JSON_FORMAT) ||
        !put_u64(root, "version", RAIL_STATS_JSON_VERSION) ||
        !put(root, "pid", json_object_new_int64(s->pid)) ||
        !put_u64(root, "time_unix_ms", s->time_unix_ms) ||
        !put_u64(root, "interval_ms", s->interval_ms))
        goto done;
    bool ok = put(root, "connections", conns);
    conns = NULL;
    if (!ok)
        goto done;
    ok = put(root, "closed", closed);
    closed = NULL;
    if (!ok)
        goto done;
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    if (text) {
        size_t n = strlen(text);
        *out = malloc(n + 2);
        if (*out) {
            memcpy(*out, text, n);
            (*out)[n] = '\n';
            (*out)[n + 1] = '\0';
            rc = 0;
        }
    }
done:
    json_object_put(closed);
    json_object_put(conns);
    json_object_put(root);
    return rc;
}

/* ---- Prometheus text exposition format ---- */

/* Label values escape backslash, double quote and line feed. */
static void sb_label(struct sbuf *b, const char *name, const char *v, bool first)
{
    sb_printf(b, "%s%s=\"", first ? "" : ",", name);
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            sb_printf(b, "\\\\");
        else if (*p == '"')
            sb_printf(b, "\\\"");
        else if (*p == '\n')
            sb_printf(b, "\\n");
        else
            sb_printf(b, "%c", *p);
    }
    sb_printf(b, "\"");
}

static void sb_conn_labels(struct sbuf *b, long long pid, const struct rail_stats_conn_snap *c)
{
    char num[24];
    snprintf(num, sizeof(num), "%lld", pid);
    sb_label(b, "pid", num, true);
    snprintf(num, sizeof(num), "%" PRIu64, c->id);
    sb_label(b, "conn", num, false);
    sb_label(b, "direction", rail_stats_dir_name(c->dir), false);
    sb_label(b, "device", c->dev, false);
    sb_label(b, "peer", c->peer, false);
}

enum rail_field {
    F_BYTES,
    F_MSGS,
    F_STRIPES,
    F_ERRORS,
    F_FAILOVERS,
    F_REJOINS,
    F_UP,
    F_WEIGHT,
    F_RATE
};

static const struct {
    const char *name, *type, *help;
} k_rail_metrics[] = {
    [F_BYTES] = {"nccl_rail_bytes_total", "counter", "Payload bytes carried by the rail."},
    [F_MSGS] = {"nccl_rail_messages_total", "counter",
                "Whole (unsplit) messages sent on the rail."},
    [F_STRIPES] = {"nccl_rail_stripes_total", "counter",
                   "Chunks of striped messages (re-sent chunks included) on the rail."},
    [F_ERRORS] = {"nccl_rail_errors_total", "counter", "Completion errors on the rail."},
    [F_FAILOVERS] = {"nccl_rail_failovers_total", "counter", "Times the rail was marked down."},
    [F_REJOINS] = {"nccl_rail_rejoins_total", "counter", "Times the rail came back up."},
    [F_UP] = {"nccl_rail_up", "gauge", "1 when the rail is up, 0 when it is down."},
    [F_WEIGHT] = {"nccl_rail_weight_ratio", "gauge", "Current stripe weight of the rail (0..1)."},
    [F_RATE] = {"nccl_rail_rate_bytes_per_second", "gauge",
                "Throughput the stripe scheduler measured on the rail."},
};

static void sb_rail_value(struct sbuf *b, enum rail_field f, const struct rail_stats_rail_snap *r)
{
    uint64_t v = 0;
    switch (f) {
    case F_BYTES:
        v = r->bytes;
        break;
    case F_MSGS:
        v = r->messages;
        break;
    case F_STRIPES:
        v = r->stripes;
        break;
    case F_ERRORS:
        v = r->errors;
        break;
    case F_FAILOVERS:
        v = r->failovers;
        break;
    case F_REJOINS:
        v = r->rejoins;
        break;
    case F_UP:
        v = r->up ? 1 : 0;
        break;
    case F_WEIGHT:
        sb_printf(b, " %.6g\n", (double)r->weight / RAIL_STRIPE_WEIGHT_ONE);
        return;
    case F_RATE:
        v = r->rate * 1000000u;
        break;
    }
    sb_printf(b, " %" PRIu64 "\n", v);
}

int rail_stats_format_prometheus(const struct rail_stats_snapshot *s, char **out)
{
    if (!s || !out || (s->nconns > 0 && !s->conns))
        return -EINVAL;
    struct sbuf b = {0};
    long long pid = (long long)s->pid;
    for (size_t f = 0; f < sizeof(k_rail_metrics) / sizeof(k_rail_metrics[0]); f++) {
        sb_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", k_rail_metrics[f].name,
                  k_rail_metrics[f].help, k_rail_metrics[f].name, k_rail_metrics[f].type);
        for (int i = 0; i < s->nconns; i++) {
            const struct rail_stats_conn_snap *c = &s->conns[i];
            for (int r = 0; r < c->nrails; r++) {
                char num[16];
                sb_printf(&b, "%s{", k_rail_metrics[f].name);
                sb_conn_labels(&b, pid, c);
                snprintf(num, sizeof(num), "%d", r);
                sb_label(&b, "rail", num, false);
                sb_label(&b, "rail_device", c->rail[r].dev[0] ? c->rail[r].dev : c->dev, false);
                sb_printf(&b, "}");
                sb_rail_value(&b, (enum rail_field)f, &c->rail[r]);
            }
        }
    }
    sb_printf(&b,
              "# HELP nccl_rail_striped_messages_total Messages split over more than one chunk.\n"
              "# TYPE nccl_rail_striped_messages_total counter\n");
    for (int i = 0; i < s->nconns; i++) {
        sb_printf(&b, "nccl_rail_striped_messages_total{");
        sb_conn_labels(&b, pid, &s->conns[i]);
        sb_printf(&b, "} %" PRIu64 "\n", s->conns[i].striped_messages);
    }
    sb_printf(&b, "# HELP nccl_rail_conn_created_timestamp_seconds When the connection opened.\n"
                  "# TYPE nccl_rail_conn_created_timestamp_seconds gauge\n");
    for (int i = 0; i < s->nconns; i++) {
        uint64_t ms = s->conns[i].created_unix_ms;
        sb_printf(&b, "nccl_rail_conn_created_timestamp_seconds{");
        sb_conn_labels(&b, pid, &s->conns[i]);
        sb_printf(&b, "} %" PRIu64 ".%03" PRIu64 "\n", ms / 1000, ms % 1000);
    }
    const struct rail_stats_totals *t = &s->closed;
    const struct {
        const char *what, *help;
        uint64_t v;
    } closed[] = {
        {"connections", "Connections closed so far.", t->connections},
        {"bytes", "Bytes of the connections closed so far.", t->bytes},
        {"messages", "Messages of the connections closed so far.", t->messages},
        {"stripes", "Stripes of the connections closed so far.", t->stripes},
        {"errors", "Completion errors of the connections closed so far.", t->errors},
        {"failovers", "Rail failovers of the connections closed so far.", t->failovers},
        {"rejoins", "Rail rejoins of the connections closed so far.", t->rejoins},
    };
    for (size_t k = 0; k < sizeof(closed) / sizeof(closed[0]); k++)
        sb_printf(&b,
                  "# HELP nccl_rail_closed_%s_total %s\n"
                  "# TYPE nccl_rail_closed_%s_total counter\n"
                  "nccl_rail_closed_%s_total{pid=\"%lld\"} %" PRIu64 "\n",
                  closed[k].what, closed[k].help, closed[k].what, closed[k].what, pid, closed[k].v);
    return sb_finish(&b, out);
}

/* ---- human output ---- */

static void human_bytes(uint64_t v, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double d = (double)v;
    int u = 0;
    while (d >= 1024.0 && u < 6) {
        d /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", v);
    else
        snprintf(buf, len, "%.2f %s", d, unit[u]);
}

/* s with control characters shown as '?' (for one-line human output); "?" when empty. */
static const char *printable(const char *s, char *buf, size_t len)
{
    if (!s[0])
        return "?";
    rail_quote(buf, len, s, strlen(s));
    return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static double age_s(uint64_t now_ms, uint64_t then_ms)
{
    return now_ms > then_ms ? (double)(now_ms - then_ms) / 1000.0 : 0.0;
}

void rail_stats_summary_line(const struct rail_stats_conn_snap *c, uint64_t now_unix_ms, char *buf,
                             size_t len)
{
    struct rail_stats_totals t;
    size_t pos = 0;
    if (!buf || !len)
        return;
    buf[0] = '\0';
    char dev[RAIL_STATS_NAME_LEN + 4], peer[RAIL_STATS_PEER_LEN + 4], rdev[RAIL_STATS_NAME_LEN + 4];
    rail_stats_conn_totals(c, &t);
#define APPEND(...)                                                                                \
    do {                                                                                           \
        if (pos < len) {                                                                           \
            int n_ = snprintf(buf + pos, len - pos, __VA_ARGS__);                                  \
            pos = n_ < 0 ? len : pos + (size_t)n_;                                                 \
        }                                                                                          \
    } while (0)
    APPEND("stats: %s conn %" PRIu64 " %s peer %s, %.1f s: %" PRIu64 " bytes, %" PRIu64
           " messages (%" PRIu64 " striped), %" PRIu64 " errors, %" PRIu64 " failovers;",
           rail_stats_dir_name(c->dir), c->id, printable(c->dev, dev, sizeof(dev)),
           printable(c->peer, peer, sizeof(peer)), age_s(now_unix_ms, c->created_unix_ms), t.bytes,
           t.messages, c->striped_messages, t.errors, t.failovers);
    for (int r = 0; r < c->nrails; r++) {
        const struct rail_stats_rail_snap *s = &c->rail[r];
        APPEND(" rail %d%s%s: %" PRIu64 " bytes %.1f%%, %" PRIu64 " failovers, %" PRIu64
               " errors, %s;",
               r, s->dev[0] ? " " : "", s->dev[0] ? printable(s->dev, rdev, sizeof(rdev)) : "",
               s->bytes, pct(s->bytes, t.bytes), s->failovers, s->errors, s->up ? "up" : "down");
    }
#undef APPEND
    if (pos > 0 && pos < len && buf[pos - 1] == ';')
        buf[pos - 1] = '\0';
}

int rail_stats_format_table(const struct rail_stats_snapshot *s, char **out)
{
    if (!s || !out || (s->nconns > 0 && !s->conns))
        return -EINVAL;
    struct sbuf b = {0};
    char h1[32], h2[32];
    char dev[RAIL_STATS_NAME_LEN + 4], peer[RAIL_STATS_PEER_LEN + 4], rdev[RAIL_STATS_NAME_LEN + 4];
    human_bytes(s->closed.bytes, h1, sizeof(h1));
    sb_printf(&b,
              "pid %lld, %d live connection%s, %" PRIu64 " closed (%s, %" PRIu64
              " failovers, %" PRIu64 " errors)\n",
              (long long)s->pid, s->nconns, s->nconns == 1 ? "" : "s", s->closed.connections, h1,
              s->closed.failovers, s->closed.errors);
    for (int i = 0; i < s->nconns; i++) {
        const struct rail_stats_conn_snap *c = &s->conns[i];
        struct rail_stats_totals t;
        rail_stats_conn_totals(c, &t);
        human_bytes(t.bytes, h1, sizeof(h1));
        sb_printf(&b,
                  "\nconn %" PRIu64 " %s %s peer %s, open %.1f s: %s, %" PRIu64
                  " messages (%" PRIu64 " striped)\n",
                  c->id, rail_stats_dir_name(c->dir), printable(c->dev, dev, sizeof(dev)),
                  printable(c->peer, peer, sizeof(peer)),
                  age_s(s->time_unix_ms, c->created_unix_ms), h1, t.messages, c->striped_messages);
        sb_printf(&b, "  %-4s %-16s %-5s %12s %7s %10s %10s %7s %9s %7s %7s %10s\n", "rail",
                  "device", "state", "bytes", "share", "messages", "stripes", "errors", "failovers",
                  "rejoins", "weight", "rate MB/s");
        for (int r = 0; r < c->nrails; r++) {
            const struct rail_stats_rail_snap *x = &c->rail[r];
            human_bytes(x->bytes, h2, sizeof(h2));
            sb_printf(&b,
                      "  %-4d %-16s %-5s %12s %6.1f%% %10" PRIu64 " %10" PRIu64 " %7" PRIu64
                      " %9" PRIu64 " %7" PRIu64 " %6.1f%% %10" PRIu64 "\n",
                      r, printable(x->dev[0] ? x->dev : c->dev, rdev, sizeof(rdev)),
                      x->up ? "up" : "DOWN", h2, pct(x->bytes, t.bytes), x->messages, x->stripes,
                      x->errors, x->failovers, x->rejoins,
                      100.0 * x->weight / RAIL_STRIPE_WEIGHT_ONE, x->rate);
        }
    }
    return sb_finish(&b, out);
}
