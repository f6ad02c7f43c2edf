/* SPDX-License-Identifier: Apache-2.0 */
/* multi-rail telemetry, pure side: counters and their helpers, the registry and closed totals,
 * weights from a stripe scheduler, the JSON formatter (exact text, escaping, round trip through
 * the reader), Prometheus lines with labels, the table, the close summary line, "%p" expansion,
 * and the reader on malformed input. The writer thread, the CLI and concurrency are in
 * test_rail_stats_writer.c. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "telemetry/rail_stats.h"
#include "telemetry/rail_stats_format.h"
#include "rails/stripe.h"

/* The snapshot entry of connection id, copied out (zeroed when absent). */
static bool find_conn(uint64_t id, struct rail_stats_conn_snap *out,
                      struct rail_stats_totals *closed)
{
    struct rail_stats_snapshot s;
    bool found = false;
    memset(out, 0, sizeof(*out));
    CHECK_EQ_INT(rail_stats_snapshot_take(&s), 0);
    for (int i = 0; i < s.nconns; i++)
        if (s.conns[i].id == id) {
            *out = s.conns[i];
            found = true;
        }
    if (closed)
        *closed = s.closed;
    rail_stats_snapshot_free(&s);
    return found;
}

static void test_counters(void)
{
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "mlx5_0", "10.0.0.2:4000", 2);
    struct rail_stats_conn_snap s;
    CHECK(c != NULL);
    if (!c)
        return;
    rail_stats_add_bytes(c, 0, 1000);
    rail_stats_add_bytes(c, 0, 24);
    rail_stats_add_msg(c, 0);
    rail_stats_add_stripe(c, 1);
    rail_stats_add_stripe(c, 1);
    rail_stats_add_error(c, 1);
    rail_stats_add_striped_msg(c);
    /* Out of range and NULL are ignored. */
    rail_stats_add_bytes(c, 2, 5);
    rail_stats_add_bytes(c, -1, 5);
    rail_stats_add_msg(c, 8);
    rail_stats_add_bytes(NULL, 0, 5);
    rail_stats_set_state(NULL, 0, false);
    rail_stats_add_schedule(NULL, NULL, 1);

    /* up -> down counts a failover, down -> up a rejoin; repeats count nothing. */
    rail_stats_set_state(c, 1, false);
    rail_stats_set_state(c, 1, false);
    rail_stats_add_failover(c, 1);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK(!s.rail[1].up);
    CHECK(s.rail[0].up);
    rail_stats_add_rejoin(c, 1);
    rail_stats_set_state(c, 1, true);
    rail_stats_set_state(c, 1, false);
    rail_stats_set_state(c, 1, true);

    /* A whole message and a striped one. */
    struct rail_stripe_chunk whole = {1, 0, 4096};
    struct rail_stripe_chunk split[2] = {{0, 0, 65536}, {1, 65536, 65000}};
    rail_stats_add_schedule(c, &whole, 1);
    rail_stats_add_schedule(c, split, 2);
    rail_stats_add_schedule(c, split, 0);
    /* A whole message as one piece: a message, a stripe and its bytes on its rail. */
    rail_stats_add_whole(c, 0, 8);
    rail_stats_add_whole(c, 2, 5);
    rail_stats_add_whole(NULL, 0, 5);

    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(s.nrails, 2);
    CHECK_EQ_INT(s.dir, RAIL_STATS_SEND);
    CHECK_EQ_STR(s.dev, "mlx5_0");
    CHECK_EQ_STR(s.peer, "10.0.0.2:4000");
    CHECK(s.created_unix_ms > 1600000000000ull);
    CHECK_EQ_INT(s.rail[0].bytes, 1024 + 65536 + 8);
    CHECK_EQ_INT(s.rail[0].messages, 2);
    CHECK_EQ_INT(s.rail[0].stripes, 2);
    CHECK_EQ_INT(s.rail[0].errors, 0);
    CHECK_EQ_INT(s.rail[0].failovers, 0);
    CHECK_EQ_INT(s.rail[1].bytes, 4096 + 65000);
    CHECK_EQ_INT(s.rail[1].messages, 1);
    CHECK_EQ_INT(s.rail[1].stripes, 3);
    CHECK_EQ_INT(s.rail[1].errors, 1);
    CHECK_EQ_INT(s.rail[1].failovers, 2);
    CHECK_EQ_INT(s.rail[1].rejoins, 2);
    CHECK(s.rail[1].up);
    CHECK_EQ_INT(s.striped_messages, 2);
    /* Fresh connections: equal weights that sum to 1024, rates unknown. */
    CHECK_EQ_INT(s.rail[0].weight, 512);
    CHECK_EQ_INT(s.rail[1].weight, 512);
    CHECK_EQ_INT(s.rail[0].rate, 0);

    struct rail_stats_totals t;
    rail_stats_conn_totals(&s, &t);
    CHECK_EQ_INT(t.bytes, 1024 + 65536 + 4096 + 65000 + 8);
    CHECK_EQ_INT(t.messages, 5); /* 3 whole + 2 striped */
    CHECK_EQ_INT(t.stripes, 5);
    CHECK_EQ_INT(t.errors, 1);
    CHECK_EQ_INT(t.failovers, 2);
    CHECK_EQ_INT(t.rejoins, 2);
    rail_stats_close(c);
    rail_stats_close(NULL);
}

static void test_registry(void)
{
    struct rail_stats_totals before, after;
    struct rail_stats_conn_snap s;
    find_conn(0, &s, &before);

    struct rail_stats_conn *a = rail_stats_open(RAIL_STATS_SEND, "a", "pa", 1);
    struct rail_stats_conn *b = rail_stats_open(RAIL_STATS_RECV, NULL, NULL, 3);
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "c", "pc", 99);
    struct rail_stats_conn *d = rail_stats_open(RAIL_STATS_SEND, "d", "pd", 0);
    CHECK(a && b && c && d);
    if (!a || !b || !c || !d)
        return;
    CHECK(a->id < b->id && b->id < c->id && c->id < d->id);
    CHECK_EQ_INT(c->nrails, RAIL_STATS_MAX_RAILS); /* clamped */
    CHECK_EQ_INT(d->nrails, 1);
    /* 1024 split over 3 rails: 342 + 341 + 341. */
    CHECK(find_conn(b->id, &s, NULL));
    CHECK_EQ_INT(s.rail[0].weight + s.rail[1].weight + s.rail[2].weight, 1024);
    CHECK_EQ_INT(s.rail[0].weight, 342);
    CHECK_EQ_STR(s.dev, "");
    CHECK_EQ_INT(s.dir, RAIL_STATS_RECV);

    rail_stats_set_rail_dev(b, 2, "mlx5_3:1");
    rail_stats_set_rail_dev(b, 3, "ignored");
    CHECK(find_conn(b->id, &s, NULL));
    CHECK_EQ_STR(s.rail[2].dev, "mlx5_3:1");
    CHECK_EQ_STR(s.rail[0].dev, "");

    rail_stats_add_bytes(b, 2, 777);
    rail_stats_add_msg(b, 2);
    rail_stats_add_error(b, 0);
    rail_stats_set_state(b, 1, false);
    uint64_t bid = b->id;
    rail_stats_close(b);
    CHECK(!find_conn(bid, &s, &after));
    CHECK(find_conn(a->id, &s, NULL));
    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(after.connections - before.connections, 1);
    CHECK_EQ_INT(after.bytes - before.bytes, 777);
    CHECK_EQ_INT(after.messages - before.messages, 1);
    CHECK_EQ_INT(after.errors - before.errors, 1);
    CHECK_EQ_INT(after.failovers - before.failovers, 1);

    /* Oldest first. */
    struct rail_stats_snapshot snap;
    CHECK_EQ_INT(rail_stats_snapshot_take(&snap), 0);
    int ia = -1, ic = -1;
    for (int i = 0; i < snap.nconns; i++) {
        if (snap.conns[i].id == a->id)
            ia = i;
        if (snap.conns[i].id == c->id)
            ic = i;
    }
    CHECK(ia >= 0 && ic > ia);
    CHECK(snap.pid > 0);
    rail_stats_snapshot_free(&snap);
    CHECK(snap.conns == NULL && snap.nconns == 0);
    rail_stats_close(a);
    rail_stats_close(c);
    rail_stats_close(d);
    find_conn(0, &s, &after);
    CHECK_EQ_INT(after.connections - before.connections, 4);
}

static void test_sync_stripe(void)
{
    struct rail_stripe_config cfg;
    struct rail_stripe st;
    char err[128];
    rail_stripe_config_default(&cfg, 2);
    cfg.policy = RAIL_STRIPE_WEIGHTED;
    cfg.speed_mbps[0] = 400000;
    cfg.speed_mbps[1] = 200000;
    CHECK_EQ_INT(rail_stripe_init(&st, &cfg, err, sizeof(err)), 0);
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "mlx5_0", "p", 2);
    struct rail_stats_conn_snap s;
    if (!c)
        return;
    rail_stats_sync_stripe(c, &st);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(s.rail[0].weight, 683);
    CHECK_EQ_INT(s.rail[1].weight, 341);
    CHECK_EQ_INT(s.rail[0].rate, rail_stripe_rate(&st, 0));
    CHECK(s.rail[0].rate > 0);
    rail_stripe_set_rail_state(&st, 1, false);
    rail_stats_sync_stripe(c, &st);
    rail_stats_sync_stripe(c, &st);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK(!s.rail[1].up);
    CHECK_EQ_INT(s.rail[1].failovers, 1);
    CHECK_EQ_INT(s.rail[1].weight, 0);
    CHECK_EQ_INT(s.rail[0].weight, 1024);
    rail_stripe_set_rail_state(&st, 1, true);
    rail_stats_sync_stripe(c, &st);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(s.rail[1].rejoins, 1);

    uint16_t w[2] = {100, 924};
    uint64_t r[2] = {11, 22};
    rail_stats_set_weights(c, w, NULL);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(s.rail[1].weight, 924);
    CHECK_EQ_INT(s.rail[1].rate, rail_stripe_rate(&st, 1)); /* NULL rates: unchanged */
    rail_stats_set_weights(c, NULL, r);
    CHECK(find_conn(c->id, &s, NULL));
    CHECK_EQ_INT(s.rail[1].weight, 924);
    CHECK_EQ_INT(s.rail[1].rate, 22);
    rail_stats_close(c);
}

/* A fixed snapshot: connection 7 (send, 2 rails, rail 1 down) and connection 9 (recv, 1 rail). */
static struct rail_stats_conn_snap g_conns[2];
static struct rail_stats_snapshot fixed(void)
{
    struct rail_stats_snapshot s = {0};
    memset(g_conns, 0, sizeof(g_conns));
    struct rail_stats_conn_snap *c = &g_conns[0];
    c->id = 7;
    c->dir = RAIL_STATS_SEND;
    strcpy(c->dev, "mlx5_0");
    strcpy(c->peer, "10.0.0.2:4000");
    c->created_unix_ms = 1700000000123ull;
    c->striped_messages = 3;
    c->nrails = 2;
    c->rail[0] = (struct rail_stats_rail_snap){"", 699392, 10, 3, 0, 0, 0, 50000, 683, true};
    c->rail[1] = (struct rail_stats_rail_snap){"mlx5_1", 349184, 5, 4, 2, 1, 0, 25000, 341, false};
    c = &g_conns[1];
    c->id = 9;
    c->dir = RAIL_STATS_RECV;
    strcpy(c->dev, "rxe\"0\\");
    strcpy(c->peer, "a/b\nc");
    c->created_unix_ms = 1700000001000ull;
    c->nrails = 1;
    c->rail[0] = (struct rail_stats_rail_snap){"", 0, 0, 0, 0, 0, 0, 0, 1024, true};
    s.pid = 42;
    s.time_unix_ms = 1700000010123ull;
    s.interval_ms = 1000;
    s.nconns = 2;
    s.conns = g_conns;
    s.closed = (struct rail_stats_totals){5, 1u << 20, 40, 8, 1, 2, 2};
    return s;
}

static const char *k_fixed_json =
    "{\"format\":\"nccl-rail-stats\",\"version\":1,\"pid\":42,\"time_unix_ms\":1700000010123,"
    "\"interval_ms\":1000,\"connections\":["
    "{\"id\":7,\"direction\":\"send\",\"device\":\"mlx5_0\",\"peer\":\"10.0.0.2:4000\","
    "\"created_unix_ms\":1700000000123,\"nrails\":2,\"striped_messages\":3,"
    "\"totals\":{\"bytes\":1048576,\"messages\":18,\"stripes\":7,\"errors\":2,\"failovers\":1,"
    "\"rejoins\":0},\"rails\":["
    "{\"rail\":0,\"device\":\"\",\"state\":\"up\",\"bytes\":699392,\"messages\":10,\"stripes\":3,"
    "\"errors\":0,\"failovers\":0,\"rejoins\":0,\"weight\":683,\"rate_bytes_per_us\":50000},"
    "{\"rail\":1,\"device\":\"mlx5_1\",\"state\":\"down\",\"bytes\":349184,\"messages\":5,"
    "\"stripes\":4,\"errors\":2,\"failovers\":1,\"rejoins\":0,\"weight\":341,"
    "\"rate_bytes_per_us\":25000}]},"
    "{\"id\":9,\"direction\":\"recv\",\"device\":\"rxe\\\"0\\\\\",\"peer\":\"a/b\\nc\","
    "\"created_unix_ms\":1700000001000,\"nrails\":1,\"striped_messages\":0,"
    "\"totals\":{\"bytes\":0,\"messages\":0,\"stripes\":0,\"errors\":0,\"failovers\":0,"
    "\"rejoins\":0},\"rails\":["
    "{\"rail\":0,\"device\":\"\",\"state\":\"up\",\"bytes\":0,\"messages\":0,\"stripes\":0,"
    "\"errors\":0,\"failovers\":0,\"rejoins\":0,\"weight\":1024,\"rate_bytes_per_us\":0}]}],"
    "\"closed\":{\"connections\":5,\"bytes\":1048576,\"messages\":40,\"stripes\":8,\"errors\":1,"
    "\"failovers\":2,\"rejoins\":2}}\n";

static void test_json(void)
{
    struct rail_stats_snapshot s = fixed(), back;
    char *text = NULL, err[256];
    CHECK_EQ_INT(rail_stats_format_json(&s, &text), 0);
    CHECK_EQ_STR(text, k_fixed_json);
    int rc = rail_stats_parse_json(text, &back, err, sizeof(err));
    CHECK_MSG(rc == 0, "parse: %s", err);
    CHECK_EQ_INT(back.pid, 42);
    CHECK_EQ_INT(back.time_unix_ms, s.time_unix_ms);
    CHECK_EQ_INT(back.interval_ms, 1000);
    CHECK_EQ_INT(back.nconns, 2);
    CHECK(memcmp(&back.closed, &s.closed, sizeof(s.closed)) == 0);
    for (int i = 0; rc == 0 && i < 2; i++)
        CHECK_MSG(memcmp(&back.conns[i], &s.conns[i], sizeof(s.conns[i])) == 0,
                  "connection %d differs after the round trip", i);
    rail_stats_snapshot_free(&back);
    free(text);

    /* An empty snapshot. */
    struct rail_stats_snapshot e = {.pid = 1};
    CHECK_EQ_INT(rail_stats_format_json(&e, &text), 0);
    CHECK(text && strstr(text, "\"connections\":[]") != NULL);
    CHECK_EQ_INT(rail_stats_parse_json(text, &back, err, sizeof(err)), 0);
    CHECK_EQ_INT(back.nconns, 0);
    free(text);
    CHECK_EQ_INT(rail_stats_format_json(NULL, &text), -EINVAL);
}

static void test_prometheus(void)
{
    struct rail_stats_snapshot s = fixed();
    char *text = NULL;
    CHECK_EQ_INT(rail_stats_format_prometheus(&s, &text), 0);
    if (!text)
        return;
    const char *labels0 = "{pid=\"42\",conn=\"7\",direction=\"send\",device=\"mlx5_0\","
                          "peer=\"10.0.0.2:4000\",rail=\"0\",rail_device=\"mlx5_0\"}";
    const char *labels1 = "{pid=\"42\",conn=\"7\",direction=\"send\",device=\"mlx5_0\","
                          "peer=\"10.0.0.2:4000\",rail=\"1\",rail_device=\"mlx5_1\"}";
    const char *want[] = {
        "# HELP nccl_rail_bytes_total Payload bytes carried by the rail.\n",
        "# TYPE nccl_rail_bytes_total counter\n",
        "# TYPE nccl_rail_up gauge\n",
        "# TYPE nccl_rail_weight_ratio gauge\n",
        "nccl_rail_closed_connections_total{pid=\"42\"} 5\n",
        "nccl_rail_closed_bytes_total{pid=\"42\"} 1048576\n",
        "nccl_rail_closed_rejoins_total{pid=\"42\"} 2\n",
        /* Escaped label values: quote, backslash, line feed. */
        "{pid=\"42\",conn=\"9\",direction=\"recv\",device=\"rxe\\\"0\\\\\",peer=\"a/b\\nc\","
        "rail=\"0\",rail_device=\"rxe\\\"0\\\\\"} 1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_MSG(strstr(text, want[i]) != NULL, "missing: %s", want[i]);
    char line[512];
    const struct {
        const char *metric, *labels, *value;
    } samples[] = {
        {"nccl_rail_bytes_total", labels0, "699392"},
        {"nccl_rail_bytes_total", labels1, "349184"},
        {"nccl_rail_messages_total", labels1, "5"},
        {"nccl_rail_stripes_total", labels1, "4"},
        {"nccl_rail_errors_total", labels1, "2"},
        {"nccl_rail_failovers_total", labels1, "1"},
        {"nccl_rail_rejoins_total", labels0, "0"},
        {"nccl_rail_up", labels0, "1"},
        {"nccl_rail_up", labels1, "0"},
        {"nccl_rail_weight_ratio", labels0, "0.666992"},
        {"nccl_rail_weight_ratio", labels1, "0.333008"},
        {"nccl_rail_rate_bytes_per_second", labels0, "50000000000"},
    };
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        snprintf(line, sizeof(line), "\n%s%s %s\n", samples[i].metric, samples[i].labels,
                 samples[i].value);
        CHECK_MSG(strstr(text, line) != NULL, "missing sample: %s", line + 1);
    }
    CHECK(strstr(text, "nccl_rail_striped_messages_total{pid=\"42\",conn=\"7\",direction=\"send\","
                       "device=\"mlx5_0\",peer=\"10.0.0.2:4000\"} 3\n") != NULL);
    CHECK(strstr(text, "nccl_rail_conn_created_timestamp_seconds{pid=\"42\",conn=\"7\","
                       "direction=\"send\",device=\"mlx5_0\",peer=\"10.0.0.2:4000\"} "
                       "1700000000.123\n") != NULL);

    /* Shape: every line is a comment or "name{labels} value"; samples of one family are
     * contiguous (each family has one HELP and one TYPE, right before its samples). */
    int families = 0, samples_n = 0;
    char *save = NULL;
    char prev_family[128] = "";
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "# HELP ", 7) == 0) {
            families++;
            continue;
        }
        if (strncmp(l, "# TYPE ", 7) == 0) {
            char name[128] = "";
            sscanf(l + 7, "%127s", name);
            snprintf(prev_family, sizeof(prev_family), "%s", name);
            continue;
        }
        samples_n++;
        size_t n = strlen(prev_family);
        CHECK_MSG(n && strncmp(l, prev_family, n) == 0 && l[n] == '{',
                  "sample outside its "
                  "family %s: %s",
                  prev_family, l);
        const char *close = strrchr(l, '}');
        CHECK_MSG(close && close[1] == ' ' && close[2] != '\0', "bad sample line: %s", l);
    }
    CHECK_EQ_INT(families, 9 + 2 + 7);
    CHECK_EQ_INT(samples_n, 9 * 3 + 2 * 2 + 7);
    free(text);
}

static void test_table_and_summary(void)
{
    struct rail_stats_snapshot s = fixed();
    char *text = NULL;
    CHECK_EQ_INT(rail_stats_format_table(&s, &text), 0);
    const char *want[] = {
        "pid 42, 2 live connections, 5 closed (1.00 MiB, 2 failovers, 1 errors)\n",
        "\nconn 7 send mlx5_0 peer 10.0.0.2:4000, open 10.0 s: 1.00 MiB, 18 messages (3 striped)\n",
        "  rail device           state        bytes   share   messages    stripes  errors "
        "failovers rejoins  weight  rate MB/s\n",
        "  0    mlx5_0           up      683.00 KiB   66.7%         10          3       0         0"
        "       0   66.7%      50000\n",
        "  1    mlx5_1           DOWN    341.00 KiB   33.3%          5          4       2         1"
        "       0   33.3%      25000\n",
        "\nconn 9 recv rxe\"0\\ peer a/b?c, open 9.1 s: 0 B, 0 messages (0 striped)\n",
        "  0    rxe\"0\\           up             0 B    0.0%          0          0       0        "
        " 0"
        "       0  100.0%          0\n",
    };
    for (size_t i = 0; text && i < sizeof(want) / sizeof(want[0]); i++)
        CHECK_MSG(strstr(text, want[i]) != NULL, "missing: %s\nin:\n%s", want[i], text);
    free(text);

    char line[1024];
    rail_stats_summary_line(&g_conns[0], 1700000002623ull, line, sizeof(line));
    CHECK_EQ_STR(line, "stats: send conn 7 mlx5_0 peer 10.0.0.2:4000, 2.5 s: 1048576 bytes, "
                       "18 messages (3 striped), 2 errors, 1 failovers; rail 0: 699392 bytes "
                       "66.7%, 0 failovers, 0 errors, up; rail 1 mlx5_1: 349184 bytes 33.3%, 1 "
                       "failovers, 2 errors, down");
    /* Truncation keeps a terminated string. */
    char small[16];
    rail_stats_summary_line(&g_conns[0], 0, small, sizeof(small));
    CHECK_EQ_STR(small, "stats: send con");
}

static void test_expand_path(void)
{
    char out[64];
    CHECK_EQ_INT(rail_stats_expand_path("/tmp/s-%p.json", 1234, out, sizeof(out)), 0);
    CHECK_EQ_STR(out, "/tmp/s-1234.json");
    CHECK_EQ_INT(rail_stats_expand_path("%p/%p", 7, out, sizeof(out)), 0);
    CHECK_EQ_STR(out, "7/7");
    CHECK_EQ_INT(rail_stats_expand_path("a%%p%x%", 7, out, sizeof(out)), 0);
    CHECK_EQ_STR(out, "a%p%x%");
    CHECK_EQ_INT(rail_stats_expand_path("abc%p", 123456, out, 9), -ENAMETOOLONG);
    CHECK_EQ_INT(rail_stats_expand_path("abc%p", 12345, out, 9), 0);
    CHECK_EQ_STR(out, "abc12345");
    CHECK_EQ_INT(rail_stats_expand_path("", 1, out, sizeof(out)), -EINVAL);
    CHECK_EQ_INT(rail_stats_expand_path(NULL, 1, out, sizeof(out)), -EINVAL);
}

/* k_fixed_json with one substring replaced. */
static char *mutate(const char *from, const char *to)
{
    const char *at = strstr(k_fixed_json, from);
    CHECK_MSG(at != NULL, "fixture lacks %s", from);
    if (!at)
        return NULL;
    size_t n = strlen(k_fixed_json) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    snprintf(s, n, "%.*s%s%s", (int)(at - k_fixed_json), k_fixed_json, to, at + strlen(from));
    return s;
}

static void test_parse_malformed(void)
{
    static const struct {
        const char *from, *to, *err;
    } cases[] = {
        {"{\"format\"", "[{\"format\"", "not valid JSON"},
        {"\"rejoins\":2}}\n", "\"rejoins\":2}} x", "trailing data"},
        {"\"rejoins\":2}}\n", "\"rejoins\":2}", "ends inside"},
        {"nccl-rail-stats", "other", "format: 'other'"},
        {"\"version\":1", "\"version\":2", "version 2 is not supported"},
        {"\"pid\":42,", "", "pid: missing"},
        {"\"pid\":42", "\"pid\":-1", "pid: expected an integer >= 0"},
        {"\"bytes\":699392", "\"bytes\":\"699392\"", "connections[0].rails[0].bytes: expected"},
        {"\"bytes\":699392", "\"bytes\":699392.5", "connections[0].rails[0].bytes: expected"},
        {"\"bytes\":349184", "\"bytes\":-5", "connections[0].rails[1].bytes"},
        {"\"nrails\":2", "\"nrails\":3", "connections[0].rails: 2 entries, nrails says 3"},
        {"\"nrails\":2", "\"nrails\":0", "connections[0].nrails: 0"},
        {"\"nrails\":2", "\"nrails\":9", "connections[0].nrails: 9 is above 8"},
        {"\"rail\":1,", "\"rail\":0,", "connections[0].rails[1].rail: 0, expected 1"},
        {"\"state\":\"down\"", "\"state\":\"sideways\"", "rails[1].state: 'sideways'"},
        {"\"direction\":\"recv\"", "\"direction\":\"both\"", "connections[1].direction"},
        {"\"weight\":683", "\"weight\":2000", "weight: 2000 is above 1024"},
        {"\"peer\":\"10.0.0.2:4000\"",
         "\"peer\":\"0123456789012345678901234567890123456789012345678901234567890123\"",
         "connections[0].peer: longer than 63 bytes"},
        {"\"connections\":[", "\"connections\":{\"x\":[", "not valid JSON"},
        {"\"closed\":{\"connections\":5,", "\"closed\":{", "closed.connections: missing"},
        {"\"closed\":{", "\"closed\":[{", "not valid JSON"},
        {"\"rails\":[{\"rail\":0,\"device\":\"\"", "\"rails\":[7,{\"rail\":0,\"device\":\"\"",
         "connections[0].rails: 3 entries"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = mutate(cases[i].from, cases[i].to);
        struct rail_stats_snapshot s;
        char err[256] = "";
        if (!text)
            continue;
        int rc = rail_stats_parse_json(text, &s, err, sizeof(err));
        CHECK_MSG(rc == -EINVAL, "case %zu: rc %d", i, rc);
        CHECK_MSG(strstr(err, cases[i].err) != NULL, "case %zu: error '%s', expected '%s'", i, err,
                  cases[i].err);
        CHECK(s.nconns == 0 && s.conns == NULL);
        free(text);
    }
    struct rail_stats_snapshot s;
    char err[128];
    const char *bad[] = {"", "   ", "[]", "42", "null", "{", "{\"format\":\"nccl-rail-stats\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_MSG(rail_stats_parse_json(bad[i], &s, err, sizeof(err)) == -EINVAL, "'%s'", bad[i]);
        CHECK(err[0] != '\0');
    }
    CHECK_EQ_INT(rail_stats_parse_json(NULL, &s, err, sizeof(err)), -EINVAL);
    /* Unknown members are ignored. */
    char *extra = mutate("\"pid\":42,", "\"pid\":42,\"hostname\":\"n1\",\"more\":[1,{}],");
    CHECK_EQ_INT(rail_stats_parse_json(extra, &s, err, sizeof(err)), 0);
    CHECK_EQ_INT(s.nconns, 2);
    rail_stats_snapshot_free(&s);
    free(extra);
}

/* Hostile snapshots: terminal escapes in strings, counters that would wrap, a snapshot from the
 * future, a FIFO as the file. */
static void test_hostile_snapshot(void)
{
    struct rail_stats_snapshot s;
    char err[256], age[64], *table = NULL;
    char *text = mutate("\"device\":\"mlx5_1\"", "\"device\":\"\\u001b]0;pwn\\u0007\\u001b[2J\"");
    CHECK_EQ_INT(rail_stats_parse_json(text, &s, err, sizeof(err)), 0);
    free(text);
    CHECK_EQ_INT(rail_stats_format_table(&s, &table), 0);
    CHECK(table && strstr(table, "?]0;pwn??[2J") != NULL);
    CHECK(table && strchr(table, '\033') == NULL && strchr(table, '\007') == NULL);
    free(table);
    rail_stats_snapshot_free(&s);
    text = mutate("\"state\":\"down\"", "\"state\":\"\\u001b[31mx\"");
    CHECK_EQ_INT(rail_stats_parse_json(text, &s, err, sizeof(err)), -EINVAL);
    CHECK(strchr(err, '\033') == NULL && strstr(err, "'?[31mx'") != NULL);
    free(text);

    struct rail_stats_conn_snap c;
    struct rail_stats_totals t;
    memset(&c, 0, sizeof(c));
    c.nrails = 2;
    c.rail[0].bytes = UINT64_MAX - 1;
    c.rail[1].bytes = 5;
    c.rail[0].errors = 3;
    c.rail[1].errors = 4;
    rail_stats_conn_totals(&c, &t);
    CHECK(t.bytes == UINT64_MAX);
    CHECK_EQ_INT(t.errors, 7);

    rail_stats_age_text(10000, 7500, age, sizeof(age));
    CHECK_EQ_STR(age, "2.5 s old");
    rail_stats_age_text(10000, 14000, age, sizeof(age));
    CHECK_EQ_STR(age, "4.0 s in the future (clocks differ?)");

    char fifo[] = "/tmp/rail_stats_fifo_XXXXXX";
    int fd = mkstemp(fifo);
    CHECK(fd >= 0);
    close(fd);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    alarm(20);
    CHECK_EQ_INT(rail_stats_load_file(fifo, &s, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "not a regular file (a FIFO)") != NULL);
    /* A FIFO (or a symlink) planted at the old predictable temporary name "FILE.tmp": the
     * writer's temporary file has a random name now, so it neither blocks nor follows it, writes
     * FILE, and leaves the planted file as it was. */
    char target[sizeof(fifo)], tmp[sizeof(fifo) + 8];
    struct stat st;
    memcpy(target, fifo, sizeof(fifo));
    target[strlen(target) - 1] = 'x';
    snprintf(tmp, sizeof(tmp), "%s.tmp", target);
    rename(fifo, tmp);
    CHECK_EQ_INT(rail_stats_write_now(target, RAIL_STATS_FMT_JSON, err, sizeof(err)), 0);
    CHECK(lstat(tmp, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode));
    unlink(tmp);
    CHECK(symlink("/nonexistent-target", tmp) == 0);
    CHECK_EQ_INT(rail_stats_write_now(target, RAIL_STATS_FMT_JSON, err, sizeof(err)), 0);
    CHECK(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(access("/nonexistent-target", F_OK) != 0);
    unlink(tmp);
    unlink(target);
    alarm(0);
}

int main(void)
{
    test_counters();
    test_registry();
    test_sync_stripe();
    test_json();
    test_prometheus();
    test_table_and_summary();
    test_expand_path();
    test_parse_malformed();
    test_hostile_snapshot();
    return check_report("test_rail_stats");
}
