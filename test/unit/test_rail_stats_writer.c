/* SPDX-License-Identifier: Apache-2.0 */
/* multi-rail telemetry, I/O side: the writer started from the environment by the first
 * rail_stats_open, explicit starts and their errors, the snapshot file read back by the reader and
 * by `nccl-rail stats` (also on malformed, missing and Prometheus files), the Prometheus writer,
 * a failing writer that WARNs once and recovers, and a concurrency smoke test (owner threads
 * updating, a churn thread opening/closing, snapshots and the writer reading). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "telemetry/rail_stats.h"
#include "telemetry/rail_stats_format.h"
#include "tmpfiles.h"

static char g_dir[256];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll path (up to 10 s) until it parses and holds connection id with rail 0 bytes == bytes. */
static bool wait_for(const char *path, uint64_t id, uint64_t bytes, struct rail_stats_snapshot *out)
{
    for (int i = 0; i < 1000; i++) {
        char err[256];
        if (rail_stats_load_file(path, out, err, sizeof(err)) == 0) {
            for (int k = 0; k < out->nconns; k++)
                if (out->conns[k].id == id && out->conns[k].rail[0].bytes == bytes)
                    return true;
            rail_stats_snapshot_free(out);
        }
        sleep_ms(10);
    }
    return false;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    if (buf && fread(buf, 1, (1 << 16) - 1, f) == 0 && ferror(f))
        buf[0] = '\0';
    fclose(f);
    return buf;
}

/* Must run first: the environment is read once, at the first rail_stats_open of the process. */
static void test_env_start(void)
{
    char pattern[300], path[300];
    snprintf(pattern, sizeof(pattern), "%s/env-%%p.json", g_dir);
    snprintf(path, sizeof(path), "%s/env-%ld.json", g_dir, (long)getpid());
    setenv("NCCL_RAIL_STATS_FILE", pattern, 1);
    setenv("NCCL_RAIL_STATS_INTERVAL_MS", "15", 1);
    setenv("NCCL_RAIL_STATS_FORMAT", "json", 1);
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_RECV, "rxe0", "10.1.1.1:9", 1);
    CHECK(c != NULL);
    if (!c)
        return;
    rail_stats_add_bytes(c, 0, 4242);
    struct rail_stats_snapshot s;
    CHECK(wait_for(path, c->id, 4242, &s));
    CHECK_EQ_INT(s.interval_ms, 15);
    CHECK_EQ_INT(s.pid, getpid());
    rail_stats_snapshot_free(&s);

    struct rail_stats_writer_config cfg = {path, 100, RAIL_STATS_FMT_JSON};
    char err[256];
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), -EALREADY);
    rail_stats_close(c);
    rail_stats_finalize();
    rail_stats_finalize();
    /* The last snapshot counts the closed connection and lists no live one. */
    char e2[256];
    CHECK_EQ_INT(rail_stats_load_file(path, &s, e2, sizeof(e2)), 0);
    CHECK_EQ_INT(s.nconns, 0);
    CHECK(s.closed.connections >= 1);
    CHECK(s.closed.bytes >= 4242);
    rail_stats_snapshot_free(&s);
    char tmp[320];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    CHECK_MSG(access(tmp, F_OK) != 0, "%s left behind", tmp);
    unsetenv("NCCL_RAIL_STATS_FILE");
    unsetenv("NCCL_RAIL_STATS_INTERVAL_MS");
    unsetenv("NCCL_RAIL_STATS_FORMAT");
}

static void test_start_errors(void)
{
    char err[256];
    struct rail_stats_writer_config cfg = {"/tmp/x", 5, RAIL_STATS_FMT_JSON};
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "interval 5 ms") != NULL);
    cfg = (struct rail_stats_writer_config){"/tmp/x", 1000, (enum rail_stats_format)7};
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), -EINVAL);
    cfg = (struct rail_stats_writer_config){"", 1000, RAIL_STATS_FMT_JSON};
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_stats_writer_start(NULL, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_stats_write_now("", RAIL_STATS_FMT_JSON, err, sizeof(err)), -EINVAL);
}

static int run(const char *args, const char *outfile)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s/tools/nccl-rail stats %s > %s 2>&1", RAIL_BINARY_DIR, args,
             outfile);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_file_and_cli(void)
{
    char path[300], out[300], args[700];
    struct rail_stats_writer_config cfg = {path, 20, RAIL_STATS_FMT_JSON};
    char err[256];
    snprintf(path, sizeof(path), "%s/s.json", g_dir);
    snprintf(out, sizeof(out), "%s/cli.out", g_dir);
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), 0);
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "mlx5_0", "10.0.0.2:4000", 2);
    if (!c)
        return;
    rail_stats_set_rail_dev(c, 1, "mlx5_1");
    rail_stats_add_bytes(c, 1, 1000);
    rail_stats_add_bytes(c, 0, 3000);
    struct rail_stats_snapshot s;
    CHECK(wait_for(path, c->id, 3000, &s));
    CHECK_EQ_STR(s.conns[s.nconns - 1].rail[1].dev, "mlx5_1");
    rail_stats_snapshot_free(&s);

    char exe[300];
    snprintf(exe, sizeof(exe), "%s/tools/nccl-rail", RAIL_BINARY_DIR);
    CHECK_MSG(access(exe, X_OK) == 0, "%s not built", exe);
    CHECK_EQ_INT(run(path, out), 0);
    char *text = slurp(out);
    char want[128];
    snprintf(want, sizeof(want), "conn %llu send mlx5_0 peer 10.0.0.2:4000",
             (unsigned long long)c->id);
    CHECK_MSG(text && strstr(text, want), "nccl-rail stats printed:\n%s", text ? text : "");
    CHECK(text && strstr(text, "  1    mlx5_1           up          1000 B   25.0%"));
    free(text);

    snprintf(args, sizeof(args), "%s --watch --count 2 --interval 10", path);
    CHECK_EQ_INT(run(args, out), 0);
    text = slurp(out);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, "snapshot")) != NULL; p++)
        n++;
    CHECK_EQ_INT(n, 2);
    free(text);
    rail_stats_close(c);
    rail_stats_finalize();

    /* Bad input: exit 2 with a message naming the file and the problem. */
    static const struct {
        const char *content, *msg;
    } bad[] = {
        {"{\"format\":\"nccl-rail-stats\",", "not valid JSON"},
        {"{\"format\":\"nccl-rail-stats\",\"version\":1}", "pid: missing"},
        {"", "empty file"},
        {"# HELP nccl_rail_bytes_total x\n", "Prometheus text format"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char f[320];
        snprintf(f, sizeof(f), "%s/bad%zu.json", g_dir, i);
        tmp_put(f, bad[i].content);
        CHECK_EQ_INT(run(f, out), 2);
        text = slurp(out);
        CHECK_MSG(text && strstr(text, f) && strstr(text, bad[i].msg), "case %zu printed: %s", i,
                  text ? text : "");
        free(text);
    }
    snprintf(args, sizeof(args), "%s/missing.json", g_dir);
    CHECK_EQ_INT(run(args, out), 2);
    text = slurp(out);
    CHECK(text && strstr(text, "No such file"));
    free(text);
    CHECK_EQ_INT(run("", out), 2);
    CHECK_EQ_INT(run("a b", out), 2);
    CHECK_EQ_INT(run("--bogus x", out), 2);
    snprintf(args, sizeof(args), "%s --watch --interval 1", path);
    CHECK_EQ_INT(run(args, out), 2);
}

static void test_prometheus_writer(void)
{
    char path[300], err[256];
    snprintf(path, sizeof(path), "%s/s.prom", g_dir);
    struct rail_stats_writer_config cfg = {path, 1000, RAIL_STATS_FMT_PROMETHEUS};
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "mlx5_0", "peer", 1);
    if (!c)
        return;
    rail_stats_add_bytes(c, 0, 99);
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), 0);
    rail_stats_finalize(); /* writes at start and once more when stopping */
    char *text = slurp(path);
    char want[256];
    snprintf(want, sizeof(want),
             "conn=\"%llu\",direction=\"send\",device=\"mlx5_0\",peer=\"peer\","
             "rail=\"0\",rail_device=\"mlx5_0\"} 99\n",
             (unsigned long long)c->id);
    CHECK(text && strstr(text, "# TYPE nccl_rail_bytes_total counter\n"));
    CHECK_MSG(text && strstr(text, want), "missing %s", want);
    free(text);
    struct rail_stats_snapshot s;
    CHECK_EQ_INT(rail_stats_load_file(path, &s, err, sizeof(err)), -EPROTONOSUPPORT);
    CHECK(strstr(err, "Prometheus") != NULL);
    rail_stats_close(c);
}

/* A writer whose directory does not exist WARNs once, keeps trying, and succeeds once it does. */
static void test_failing_writer(void)
{
    char sub[300], path[320], log[320], err[256];
    snprintf(sub, sizeof(sub), "%s/later", g_dir);
    snprintf(path, sizeof(path), "%s/x.json", sub);
    snprintf(log, sizeof(log), "%s/stderr.txt", g_dir);
    struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_SEND, "d", "p", 1);
    if (!c)
        return;
    rail_stats_add_bytes(c, 0, 5);
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(log, "w");
    CHECK(saved >= 0 && f != NULL);
    if (saved < 0 || !f)
        return;
    dup2(fileno(f), 2);
    struct rail_stats_writer_config cfg = {path, 10, RAIL_STATS_FMT_JSON};
    int rc = rail_stats_writer_start(&cfg, err, sizeof(err));
    sleep_ms(120); /* about ten failed attempts */
    tmp_mkdirs(sub);
    struct rail_stats_snapshot s;
    bool ok = wait_for(path, c->id, 5, &s);
    rail_stats_finalize();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    CHECK_EQ_INT(rc, 0);
    CHECK(ok);
    if (ok)
        rail_stats_snapshot_free(&s);
    char *text = slurp(log);
    int warns = 0;
    for (const char *p = text; p && (p = strstr(p, "WARN ")) != NULL; p++)
        warns++;
    CHECK_EQ_INT(warns, 1);
    CHECK_MSG(text && strstr(text, "later/x.json: No such file or directory"), "stderr: %s",
              text ? text : "");
    free(text);
    rail_stats_close(c);
}

/* ---- what lies at the path ---- */

/* A FIFO, a directory or a symbolic link at NCCL_RAIL_STATS_FILE is refused with the reason and
 * left as it was (the writer never blocks on a FIFO, never writes through a link); a regular file
 * is replaced whole; no temporary file is left in the directory. */
static void test_refuses_non_regular(void)
{
    char fifo[320], dir[320], link[320], target[320], reg[320], err[512];
    snprintf(fifo, sizeof(fifo), "%s/w-fifo", g_dir);
    snprintf(dir, sizeof(dir), "%s/w-dir", g_dir);
    snprintf(link, sizeof(link), "%s/w-link", g_dir);
    snprintf(target, sizeof(target), "%s/w-target", g_dir);
    snprintf(reg, sizeof(reg), "%s/w-reg", g_dir);
    CHECK_EQ_INT(mkfifo(fifo, 0600), 0);
    CHECK_EQ_INT(mkdir(dir, 0700), 0);
    tmp_put(target, "keep me\n");
    CHECK_EQ_INT(symlink(target, link), 0);
    const char *bad[] = {fifo, dir, link};
    for (int i = 0; i < 3; i++) {
        err[0] = '\0';
        CHECK(rail_stats_write_now(bad[i], RAIL_STATS_FMT_JSON, err, sizeof(err)) < 0);
        CHECK_MSG(strstr(err, bad[i]) && strstr(err, "not a regular file"), "%s: %s", bad[i], err);
    }
    struct stat st;
    CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    char *kept = slurp(target);
    CHECK(kept && strcmp(kept, "keep me\n") == 0);
    free(kept);
    tmp_put(reg, "old\n");
    CHECK_EQ_INT(rail_stats_write_now(reg, RAIL_STATS_FMT_JSON, err, sizeof(err)), 0);
    char *now = slurp(reg);
    CHECK(now && now[0] == '{');
    free(now);
    /* Nothing else in the directory: no temporary left behind. */
    DIR *d = opendir(g_dir);
    int stray = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        stray += strncmp(e->d_name, "w-", 2) != 0 && strcmp(e->d_name, ".") != 0 &&
                 strcmp(e->d_name, "..") != 0 && strstr(e->d_name, "tmp") != NULL;
    if (d)
        closedir(d);
    CHECK_EQ_INT(stray, 0);
}

/* ---- concurrency smoke ---- */

#define ITERS 100000

static _Atomic int g_done;

static void *owner(void *arg)
{
    struct rail_stats_conn *c = arg;
    uint16_t w[2] = {512, 512};
    for (int i = 0; i < ITERS; i++) {
        rail_stats_add_bytes(c, i & 1, 3);
        rail_stats_add_msg(c, i & 1);
        if (i % 1000 == 0) {
            rail_stats_set_state(c, 1, (i / 1000) % 2 == 0);
            w[0] = (uint16_t)(i % 1024);
            w[1] = (uint16_t)(1024 - w[0]);
            rail_stats_set_weights(c, w, NULL);
        }
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_done)) {
        struct rail_stats_conn *c = rail_stats_open(RAIL_STATS_RECV, "churn", "p", 3);
        rail_stats_add_bytes(c, 2, 1);
        rail_stats_set_rail_dev(c, 0, "x");
        rail_stats_close(c);
    }
    return NULL;
}

static void test_concurrency(void)
{
    char path[300], err[256];
    snprintf(path, sizeof(path), "%s/c.json", g_dir);
    struct rail_stats_writer_config cfg = {path, 10, RAIL_STATS_FMT_JSON};
    CHECK_EQ_INT(rail_stats_writer_start(&cfg, err, sizeof(err)), 0);
    struct rail_stats_conn *c[2] = {rail_stats_open(RAIL_STATS_SEND, "a", "p", 2),
                                    rail_stats_open(RAIL_STATS_SEND, "b", "p", 2)};
    if (!c[0] || !c[1])
        return;
    pthread_t th[3];
    atomic_store(&g_done, 0);
    pthread_create(&th[0], NULL, owner, c[0]);
    pthread_create(&th[1], NULL, owner, c[1]);
    pthread_create(&th[2], NULL, churn, NULL);
    uint64_t last[2] = {0, 0};
    int regressions = 0, snaps = 0;
    for (int round = 0; round < 2000 && last[1] + last[0] < 2ull * 3 * ITERS; round++) {
        struct rail_stats_snapshot s;
        if (rail_stats_snapshot_take(&s) != 0)
            continue;
        snaps++;
        for (int i = 0; i < s.nconns; i++)
            for (int k = 0; k < 2; k++)
                if (s.conns[i].id == c[k]->id) {
                    uint64_t b = s.conns[i].rail[0].bytes + s.conns[i].rail[1].bytes;
                    regressions += b < last[k];
                    last[k] = b;
                }
        rail_stats_snapshot_free(&s);
    }
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    atomic_store(&g_done, 1);
    pthread_join(th[2], NULL);
    CHECK_EQ_INT(regressions, 0);
    CHECK(snaps > 0);
    for (int k = 0; k < 2; k++) {
        struct rail_stats_snapshot s;
        CHECK_EQ_INT(rail_stats_snapshot_take(&s), 0);
        for (int i = 0; i < s.nconns; i++)
            if (s.conns[i].id == c[k]->id) {
                CHECK_EQ_INT(s.conns[i].rail[0].bytes, 3 * ITERS / 2);
                CHECK_EQ_INT(s.conns[i].rail[1].messages, ITERS / 2);
                CHECK_EQ_INT(s.conns[i].rail[1].failovers, ITERS / 2000);
                CHECK_EQ_INT(s.conns[i].rail[0].weight + s.conns[i].rail[1].weight, 1024);
            }
        rail_stats_snapshot_free(&s);
        rail_stats_close(c[k]);
    }
    rail_stats_finalize();
    struct rail_stats_snapshot s;
    CHECK_EQ_INT(rail_stats_load_file(path, &s, err, sizeof(err)), 0);
    rail_stats_snapshot_free(&s);
}

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/rail_stats_XXXXXX");
    if (!mkdtemp(g_dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return check_report("test_rail_stats_writer");
    }
    test_env_start();
    test_start_errors();
    test_file_and_cli();
    test_prometheus_writer();
    test_failing_writer();
    test_refuses_non_regular();
    test_concurrency();
    tmp_remove_tree(g_dir);
    return check_report("test_rail_stats_writer");
}
