/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-rail telemetry: the registry of live connections, closed totals, the close summary and
 * the background snapshot writer. Formatting lives in rail_stats_format.c. */
#include "telemetry/rail_stats.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "params.h"
#include "safe_file.h"
#include "telemetry/rail_stats_format.h"
#include "strutil.h"

/* ---- registry (g_lock) ---- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rail_stats_conn *g_head;
static uint64_t g_next_id = 1;
static struct rail_stats_totals g_closed;
static uint64_t g_logged_conns; /* g_closed.connections when finalize last logged */
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;

/* ---- writer (g_wlock) ---- */

static pthread_mutex_t g_wlock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool running, stop, cond_ready;
    pthread_t thread;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    char path[PATH_MAX];
    int interval_ms;
    enum rail_stats_format format;
    bool warned;
} g_w;
static _Atomic uint64_t g_interval_ms; /* of the running writer, for snapshots; 0 = none */

static uint64_t now_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static void start_from_env(void);
static void at_exit(void)
{
    rail_stats_finalize();
}
static void register_atexit(void)
{
    atexit(at_exit); /* glibc runs it at dlclose too when the plugin is unloaded first */
}

struct rail_stats_conn *rail_stats_open(enum rail_stats_dir dir, const char *dev, const char *peer,
                                        int nrails)
{
    pthread_once(&g_env_once, start_from_env);
    pthread_once(&g_atexit_once, register_atexit);
    struct rail_stats_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        RAIL_WARN(NCCL_NET, "stats: out of memory, connection to %s not counted",
                  peer ? peer : "?");
        return NULL;
    }
    c->nrails = nrails < 1 ? 1 : nrails > RAIL_STATS_MAX_RAILS ? RAIL_STATS_MAX_RAILS : nrails;
    c->dir = dir == RAIL_STATS_RECV ? RAIL_STATS_RECV : RAIL_STATS_SEND;
    copy_str(c->dev, sizeof(c->dev), dev);
    copy_str(c->peer, sizeof(c->peer), peer);
    c->created_unix_ms = now_unix_ms();
    for (int r = 0; r < c->nrails; r++) {
        atomic_init(&c->rail[r].up, 1u);
        atomic_init(&c->rail[r].weight,
                    (uint32_t)(RAIL_STRIPE_WEIGHT_ONE / c->nrails +
                               (r < RAIL_STRIPE_WEIGHT_ONE % c->nrails ? 1 : 0)));
    }
    pthread_mutex_lock(&g_lock);
    c->id = g_next_id++;
    c->next = g_head;
    if (g_head)
        g_head->prev = c;
    g_head = c;
    pthread_mutex_unlock(&g_lock);
    return c;
}

void rail_stats_set_rail_dev(struct rail_stats_conn *c, int rail, const char *name)
{
    if (!rail_stats_ok_(c, rail))
        return;
    pthread_mutex_lock(&g_lock);
    copy_str(c->rail_dev[rail], sizeof(c->rail_dev[rail]), name);
    pthread_mutex_unlock(&g_lock);
}

void rail_stats_set_weights(struct rail_stats_conn *c, const uint16_t w[], const uint64_t rates[])
{
    if (!c)
        return;
    for (int r = 0; r < c->nrails; r++) {
        if (w)
            atomic_store_explicit(&c->rail[r].weight, w[r], memory_order_relaxed);
        if (rates)
            atomic_store_explicit(&c->rail[r].rate, rates[r], memory_order_relaxed);
    }
}

void rail_stats_sync_stripe(struct rail_stats_conn *c, const struct rail_stripe *s)
{
    if (!c || !s)
        return;
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    uint64_t rates[RAIL_STRIPE_MAX_RAILS] = {0};
    rail_stripe_weights(s, w);
    for (int r = 0; r < c->nrails; r++) {
        rates[r] = rail_stripe_rate(s, r);
        rail_stats_set_state(c, r, rail_stripe_rail_up(s, r));
    }
    rail_stats_set_weights(c, w, rates);
}

static uint64_t ld(_Atomic uint64_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

/* Caller holds g_lock (rail_dev). */
static void snap_conn(struct rail_stats_conn *c, struct rail_stats_conn_snap *o)
{
    memset(o, 0, sizeof(*o));
    o->id = c->id;
    o->dir = c->dir;
    memcpy(o->dev, c->dev, sizeof(o->dev));
    memcpy(o->peer, c->peer, sizeof(o->peer));
    o->created_unix_ms = c->created_unix_ms;
    o->striped_messages = ld(&c->striped_messages);
    o->nrails = c->nrails;
    for (int r = 0; r < c->nrails; r++) {
        struct rail_stats_rail *s = &c->rail[r];
        struct rail_stats_rail_snap *d = &o->rail[r];
        memcpy(d->dev, c->rail_dev[r], sizeof(d->dev));
        d->bytes = ld(&s->bytes);
        d->messages = ld(&s->messages);
        d->stripes = ld(&s->stripes);
        d->errors = ld(&s->errors);
        d->failovers = ld(&s->failovers);
        d->rejoins = ld(&s->rejoins);
        d->rate = ld(&s->rate);
        d->weight = atomic_load_explicit(&s->weight, memory_order_relaxed);
        d->up = atomic_load_explicit(&s->up, memory_order_relaxed) != 0;
    }
}

static void add_totals(struct rail_stats_totals *acc, const struct rail_stats_totals *t)
{
    acc->connections += t->connections;
    acc->bytes += t->bytes;
    acc->messages += t->messages;
    acc->stripes += t->stripes;
    acc->errors += t->errors;
    acc->failovers += t->failovers;
    acc->rejoins += t->rejoins;
}

void rail_stats_close(struct rail_stats_conn *c)
{
    if (!c)
        return;
    struct rail_stats_conn_snap snap;
    struct rail_stats_totals t;
    pthread_mutex_lock(&g_lock);
    snap_conn(c, &snap);
    rail_stats_conn_totals(&snap, &t);
    add_totals(&g_closed, &t);
    if (c->prev)
        c->prev->next = c->next;
    else
        g_head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&g_lock);
    free(c);

    char line[1024];
    rail_stats_summary_line(&snap, now_unix_ms(), line, sizeof(line));
    RAIL_INFO(NCCL_NET, "%s", line);
}

int rail_stats_snapshot_take(struct rail_stats_snapshot *out)
{
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    out->pid = (int64_t)getpid();
    out->time_unix_ms = now_unix_ms();
    out->interval_ms = atomic_load_explicit(&g_interval_ms, memory_order_relaxed);
    pthread_mutex_lock(&g_lock);
    int n = 0;
    for (struct rail_stats_conn *c = g_head; c; c = c->next)
        n++;
    if (n) {
        out->conns = calloc((size_t)n, sizeof(*out->conns));
        if (!out->conns) {
            pthread_mutex_unlock(&g_lock);
            return -ENOMEM;
        }
    }
    /* The list is newest first; snapshots list the oldest first. */
    int i = n;
    for (struct rail_stats_conn *c = g_head; c; c = c->next)
        snap_conn(c, &out->conns[--i]);
    out->nconns = n;
    out->closed = g_closed;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

/* ---- writing a snapshot ---- */

int rail_stats_write_now(const char *path, enum rail_stats_format format, char *err, size_t errlen)
{
    struct rail_stats_snapshot s;
    struct rail_file_out o;
    char *text = NULL;
    int rc;

    if (!path || !*path)
        return rail_fail(err, errlen, "no path");
    rc = rail_stats_snapshot_take(&s);
    if (rc == 0)
        rc = format == RAIL_STATS_FMT_PROMETHEUS ? rail_stats_format_prometheus(&s, &text)
                                                 : rail_stats_format_json(&s, &text);
    rail_stats_snapshot_free(&s);
    if (rc) {
        rail_set_err(err, errlen, "cannot format the snapshot: %s", strerror(-rc));
        return rc;
    }
    /* The project's output rule (common/safe_file.h): an O_EXCL temporary under a random name
     * beside the target, renamed only over a regular file or nothing; a FIFO, a device, a link
     * or a directory at the path is refused and left unchanged. */
    rc = rail_file_out_open(&o, path, err, errlen);
    if (rc) {
        free(text);
        return rc;
    }
    if (fputs(text, o.f) == EOF) {
        free(text);
        return rail_file_out_fail(&o, err, errlen);
    }
    free(text);
    rc = rail_file_out_commit(&o, err, errlen);
    if (rc)
        return rc;
    rail_clear_err(err, errlen);
    return 0;
}

/* ---- the writer thread ---- */

static void writer_write_once(void)
{
    char err[PATH_MAX + 128];
    if (rail_stats_write_now(g_w.path, g_w.format, err, sizeof(err)) == 0)
        return;
    pthread_mutex_lock(&g_wlock);
    bool warn = !g_w.warned;
    g_w.warned = true;
    pthread_mutex_unlock(&g_wlock);
    if (warn)
        RAIL_WARN(NCCL_NET,
                  "stats: %s (NCCL_RAIL_STATS_FILE); telemetry goes on, further failures "
                  "are not reported",
                  err);
}

static void *writer_main(void *arg)
{
    (void)arg;
    for (;;) {
        writer_write_once();
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += g_w.interval_ms / 1000;
        dl.tv_nsec += (long)(g_w.interval_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&g_wlock);
        while (!g_w.stop && pthread_cond_timedwait(&g_w.cond, &g_wlock, &dl) != ETIMEDOUT) {
        }
        bool stop = g_w.stop;
        pthread_mutex_unlock(&g_wlock);
        if (stop)
            break;
    }
    writer_write_once(); /* the final state, closed totals included */
    return NULL;
}

int rail_stats_writer_start(const struct rail_stats_writer_config *cfg, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (!cfg || !cfg->path)
        return rail_fail(err, errlen, "no stats file");
    if (cfg->interval_ms < 10 || cfg->interval_ms > 3600000)
        return rail_fail(err, errlen, "interval %d ms outside 10..3600000", cfg->interval_ms);
    if (cfg->format != RAIL_STATS_FMT_JSON && cfg->format != RAIL_STATS_FMT_PROMETHEUS)
        return rail_fail(err, errlen, "unknown format %d", (int)cfg->format);
    int rc = rail_stats_expand_path(cfg->path, (long)getpid(), path, sizeof(path) - 8);
    if (rc)
        return rail_fail(err, errlen, "bad stats file '%s' (%s)", cfg->path,
                         rc == -ENAMETOOLONG ? "too long" : "empty");
    pthread_once(&g_atexit_once, register_atexit);

    pthread_mutex_lock(&g_wlock);
    if (g_w.running) {
        pthread_mutex_unlock(&g_wlock);
        rail_set_err(err, errlen, "a stats writer is already running (%s)", g_w.path);
        return -EALREADY;
    }
    if (!g_w.cond_ready) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        rc = pthread_cond_init(&g_w.cond, &ca);
        pthread_condattr_destroy(&ca);
        if (rc) {
            pthread_mutex_unlock(&g_wlock);
            rail_set_err(err, errlen, "pthread_cond_init: %s", strerror(rc));
            return -rc;
        }
        g_w.cond_ready = true;
    }
    memcpy(g_w.path, path, sizeof(path));
    g_w.interval_ms = cfg->interval_ms;
    g_w.format = cfg->format;
    g_w.stop = false;
    g_w.warned = false;
    atomic_store(&g_interval_ms, (uint64_t)cfg->interval_ms);
    rc = pthread_create(&g_w.thread, NULL, writer_main, NULL);
    if (rc) {
        atomic_store(&g_interval_ms, 0);
        pthread_mutex_unlock(&g_wlock);
        rail_set_err(err, errlen, "cannot start the stats writer: %s", strerror(rc));
        return -rc;
    }
    pthread_setname_np(g_w.thread, "rail-stats");
    g_w.running = true;
    pthread_mutex_unlock(&g_wlock);
    rail_clear_err(err, errlen);
    RAIL_INFO(NCCL_NET | NCCL_ENV, "stats: writing %s snapshots to %s every %d ms",
              cfg->format == RAIL_STATS_FMT_PROMETHEUS ? "prometheus" : "json", path,
              cfg->interval_ms);
    return 0;
}

static void start_from_env(void)
{
    const char *path = rail_param_str(RAIL_PARAM_STATS_FILE);
    if (!path)
        return;
    struct rail_stats_writer_config cfg = {
        .path = path,
        .interval_ms = (int)rail_param_int(RAIL_PARAM_STATS_INTERVAL_MS),
        .format = rail_param_enum(RAIL_PARAM_STATS_FORMAT) == 1 ? RAIL_STATS_FMT_PROMETHEUS
                                                                : RAIL_STATS_FMT_JSON,
    };
    char err[PATH_MAX + 64];
    if (rail_stats_writer_start(&cfg, err, sizeof(err)) != 0)
        RAIL_WARN(NCCL_NET | NCCL_ENV, "stats: NCCL_RAIL_STATS_FILE ignored: %s", err);
}

void rail_stats_finalize(void)
{
    pthread_mutex_lock(&g_wlock);
    bool running = g_w.running;
    pthread_t th = g_w.thread;
    if (running) {
        g_w.stop = true;
        pthread_cond_signal(&g_w.cond);
    }
    pthread_mutex_unlock(&g_wlock);
    if (running) {
        /* Bounded: a stuck file system must not hang the process exit. */
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 5;
        if (pthread_timedjoin_np(th, NULL, &dl) != 0) {
            RAIL_WARN(NCCL_NET, "stats: the writer did not stop within 5 s, left behind");
            pthread_detach(th);
        }
        pthread_mutex_lock(&g_wlock);
        g_w.running = false;
        pthread_mutex_unlock(&g_wlock);
        atomic_store(&g_interval_ms, 0);
    }

    /* Log the closed totals when a writer stopped or connections closed since the last time. */
    pthread_mutex_lock(&g_lock);
    struct rail_stats_totals t = g_closed;
    bool news = t.connections != g_logged_conns;
    g_logged_conns = t.connections;
    pthread_mutex_unlock(&g_lock);
    if (running || news)
        RAIL_INFO(NCCL_NET,
                  "stats: %llu connections closed: %llu bytes, %llu messages, %llu stripes, "
                  "%llu errors, %llu failovers, %llu rejoins",
                  (unsigned long long)t.connections, (unsigned long long)t.bytes,
                  (unsigned long long)t.messages, (unsigned long long)t.stripes,
                  (unsigned long long)t.errors, (unsigned long long)t.failovers,
                  (unsigned long long)t.rejoins);
}
