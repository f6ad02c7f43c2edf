/* SPDX-License-Identifier: Apache-2.0 */
/* Fake NCCL for the profiler ABI: both plugin libraries are loaded the way NCCL 2.28-2.30 loads a
 * profiler (dlopen RTLD_NOW|RTLD_LOCAL, ncclProfiler_v6 then _v5), and the tuner library's table
 * is driven as NCCL drives it: a Coll event per collective started and stopped on the launching
 * thread, KernelCh events per channel (parent = the Coll handle, GPU timestamps) before and after
 * the Coll stop, from another thread too, 10^6 events on two communicators at once, with bounded
 * memory (no allocation per event). The files written at finalize are checked line by line and
 * read back by the calibration's parser (calib_prof.h). */
#include <dirent.h>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/calib_prof.h"
#include "check.h"
#include "nccl/nccl_profiler.h"
#include "safe_file.h"
#include "tmpfiles.h"

#define TUNER_LIB RAIL_BINARY_DIR "/libnccl-tuner-rail.so"
#define NET_LIB   RAIL_BINARY_DIR "/libnccl-net-rail.so"

#if defined(__SANITIZE_ADDRESS__)
#define RAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAIL_ASAN 1
#endif
#endif

static int g_warns;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    (void)flags, (void)file, (void)line;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_WARN)
        g_warns++;
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "[log %d] %s\n", level, buf);
}

static long rss_bytes(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

/* Both libraries: NCCL's lookup finds v6 first (2.29, 2.30), v5 on 2.28; complete tables. */
static void test_lookup(void)
{
    const char *libs[] = {TUNER_LIB, NET_LIB};
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        CHECK_MSG(h != NULL, "dlopen %s: %s", libs[i], dlerror());
        if (!h)
            continue;
        const ncclProfiler_v6_t *v6 = dlsym(h, "ncclProfiler_v6");
        const ncclProfiler_v5_t *v5 = dlsym(h, "ncclProfiler_v5");
        CHECK(v6 && v6->name && strcmp(v6->name, "rail") == 0);
        CHECK(v5 && v5->name && strcmp(v5->name, "rail") == 0);
        CHECK(v6 && v6->init && v6->startEvent && v6->stopEvent && v6->recordEventState &&
              v6->finalize);
        CHECK(v5 && v5->init && v5->startEvent && v5->stopEvent && v5->recordEventState &&
              v5->finalize);
        CHECK(dlsym(h, "ncclProfiler_v4") == NULL); /* nothing older is offered */
        CHECK(dlsym(h, "rail_prof_start") == NULL); /* internals stay hidden */
        dlclose(h);
    }
}

struct fake {
    const ncclProfiler_v5_t *p;
    void *h;
};

static int fake_open(struct fake *f)
{
    f->h = dlopen(TUNER_LIB, RTLD_NOW | RTLD_LOCAL);
    f->p = f->h ? dlsym(f->h, "ncclProfiler_v5") : NULL;
    return f->p ? 0 : -1;
}

static void coll_descr(ncclProfilerEventDescr_v5_t *d, uint64_t seq, const char *func,
                       const char *algo, const char *proto, size_t count, int nch)
{
    memset(d, 0, sizeof(*d));
    d->type = ncclProfileColl;
    d->coll.seqNumber = seq;
    d->coll.func = func;
    d->coll.count = count;
    d->coll.datatype = "ncclFloat32";
    d->coll.nChannels = (uint8_t)nch;
    d->coll.algo = algo;
    d->coll.proto = proto;
}

static void *kch_start(struct fake *f, void *ctx, void *parent, int ch, uint64_t t)
{
    ncclProfilerEventDescr_v5_t d;
    void *h = (void *)0x1; /* NCCL initialises it; the plugin must always write it */
    memset(&d, 0, sizeof(d));
    d.type = ncclProfileKernelCh;
    d.parentObj = parent;
    d.kernelCh.channelId = (uint8_t)ch;
    d.kernelCh.pTimer = t;
    f->p->startEvent(ctx, &h, &d);
    return h;
}

static void kch_stop(struct fake *f, void *h, uint64_t t)
{
    ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {t}};
    if (!h)
        return;
    f->p->recordEventState(h, ncclProfilerKernelChStop, &a);
    f->p->stopEvent(h);
}

/* Lines of a file that start with a digit (the rows), and the "recorded N" counter. */
static int file_rows(const char *path, long *recorded, char *first_row, size_t len)
{
    char line[512];
    int rows = 0;
    FILE *fp = fopen(path, "r");
    *recorded = -1;
    if (first_row)
        first_row[0] = '\0';
    while (fp && fgets(line, sizeof(line), fp)) {
        if (line[0] >= '0' && line[0] <= '9') {
            if (rows++ == 0 && first_row) {
                size_t n = strnlen(line, len - 1);
                memcpy(first_row, line, n);
                first_row[n] = '\0';
            }
        }
        sscanf(line, "# recorded %ld", recorded);
    }
    if (fp)
        fclose(fp);
    return fp ? rows : -1;
}

/* Inert without NCCL_RAIL_PROFILE_DIR: NCCL is asked for no event, no context. */
static void test_inert(void)
{
    struct fake f;
    int mask = 0x7fff;
    void *ctx = (void *)0x1;
    unsetenv("NCCL_RAIL_PROFILE_DIR");
    if (fake_open(&f) != 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(f.p->init(&ctx, 1, &mask, "x", 1, 8, 0, logger), ncclSuccess);
    CHECK_EQ_INT(mask, 0);
    CHECK(ctx == NULL);
    CHECK_EQ_INT(f.p->finalize(ctx), ncclSuccess);
    /* A file where a directory should be: WARN naming the variable, nothing recorded. */
    setenv("NCCL_RAIL_PROFILE_DIR", "/proc/self/status", 1);
    mask = 0x7fff;
    g_warns = 0;
    CHECK_EQ_INT(f.p->init(&ctx, 1, &mask, "x", 1, 8, 0, logger), ncclSuccess);
    CHECK(mask == 0 && ctx == NULL && g_warns == 1);
    unsetenv("NCCL_RAIL_PROFILE_DIR");
    dlclose(f.h);
}

/* One collective, as NCCL sends it, the events in the order given by `order`. */
#define NCH 4
struct coll_state {
    void *coll, *ch[NCH];
    int step;
};

static uint64_t g_t0 = 1000000000ull;

/* 10^6 events on two communicators, several collectives in flight, events out of order. */
static void test_million_events(const char *dir)
{
    struct fake f;
    void *ctx[2] = {NULL, NULL};
    int mask = 0;
    const char *funcs[] = {"AllReduce", "AllGather", "ReduceScatter"};
    const char *algos[] = {"RING", "TREE", "NVLS_TREE"};
    const char *protos[] = {"SIMPLE", "LL", "LL128"};
    enum { INFLIGHT = 8 };
    struct coll_state st[2][INFLIGHT];
    long events = 0, rss0 = 0, rss1;
    uint64_t seq[2] = {0, 0};
    size_t arena0 = 0;

    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    setenv("NCCL_RAIL_PROFILE_RING", "4096", 1);
    if (fake_open(&f) != 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(f.p->init(&ctx[0], 0x1111, &mask, "comm A", 2, 16, 3, logger), ncclSuccess);
    CHECK_EQ_INT(mask, ncclProfileColl | ncclProfileKernelCh);
    CHECK_EQ_INT(f.p->init(&ctx[1], 0x2222, &mask, "comm B", 2, 16, 5, logger), ncclSuccess);
    CHECK(ctx[0] && ctx[1]);
    memset(st, 0, sizeof(st));
    /* Round robin over the collectives in flight: each step advances one collective by one
     * phase; channel 1 starts before the Coll stop, channel 0 stops after channel 2 starts. */
    for (long iter = 0; events < 1000000; iter++) {
        int c = (int)(iter & 1), k = (int)((iter >> 1) % INFLIGHT);
        struct coll_state *s = &st[c][k];
        uint64_t t = g_t0 + (uint64_t)iter * 100;
        ncclProfilerEventDescr_v5_t d;
        switch (s->step) {
        case 0: {
            int v = (int)(seq[c] % 3);
            coll_descr(&d, seq[c]++, funcs[v], algos[v], protos[v], 1u << (10 + v), NCH);
            s->coll = NULL;
            f.p->startEvent(ctx[c], &s->coll, &d);
            events++;
            break;
        }
        case 1:
            s->ch[1] = kch_start(&f, ctx[c], s->coll, 1, t);
            s->ch[3] = kch_start(&f, ctx[c], s->coll, 3, t + 5);
            events += 2;
            break;
        case 2:
            f.p->stopEvent(s->coll); /* the Coll stops on the host, channels still running */
            s->ch[2] = kch_start(&f, ctx[c], s->coll, 2, t);
            s->ch[0] = kch_start(&f, ctx[c], s->coll, 0, t + 1);
            events += 3;
            break;
        case 3:
            kch_stop(&f, s->ch[3], t + 700);
            kch_stop(&f, s->ch[1], t + 900);
            events += 4;
            break;
        default:
            kch_stop(&f, s->ch[0], t + 500);
            kch_stop(&f, s->ch[2], t + 300);
            events += 4;
            break;
        }
        s->step = (s->step + 1) % 5;
        if (iter == 150000) { /* warm: both rings are full, every page touched */
            rss0 = rss_bytes();
            arena0 = mallinfo2().uordblks;
        }
    }
    rss1 = rss_bytes();
    size_t arena1 = mallinfo2().uordblks;
    printf("profiler: %ld events on 2 communicators; after the first 150000 steps: VmRSS %+ld "
           "KiB, heap in use %+ld bytes\n",
           events, (rss1 - rss0) / 1024, (long)arena1 - (long)arena0);
    CHECK_MSG(rss1 - rss0 < 256 * 1024, "VmRSS grew by %ld KiB", (rss1 - rss0) / 1024);
#ifndef RAIL_ASAN
    CHECK_MSG(arena1 == arena0, "heap in use %zu -> %zu: an allocation per event", arena0, arena1);
#endif
    CHECK_EQ_INT(f.p->finalize(ctx[0]), ncclSuccess);
    CHECK_EQ_INT(f.p->finalize(ctx[1]), ncclSuccess);
    dlclose(f.h);

    /* Each file: the last 4096 collectives, every one complete; recorded = all completed. */
    char path[512], row[256];
    long recorded;
    snprintf(path, sizeof(path), "%s/nccl-rail-0000000000001111-r3.prof", dir);
    CHECK_EQ_INT(file_rows(path, &recorded, row, sizeof(row)), 4096);
    CHECK_MSG(recorded > 30000 && recorded <= (long)seq[0], "recorded %ld of %llu", recorded,
              (unsigned long long)seq[0]);
    /* A row: seq, collective, pair, channels, bytes (AllGather/ReduceScatter: x nranks), and the
     * GPU span from the earliest channel start to the latest stop. */
    unsigned long long rs;
    char coll[32], algo[32], proto[32];
    unsigned nch;
    unsigned long long bytes;
    double us;
    CHECK_EQ_INT(sscanf(row, "%llu,%31[^,],%31[^,],%31[^,],%u,%llu,%lf", &rs, coll, algo, proto,
                        &nch, &bytes, &us),
                 7);
    CHECK_EQ_INT(nch, NCH);
    int v = (int)(rs % 3);
    CHECK_EQ_STR(coll, v == 0 ? "AllReduce" : (v == 1 ? "AllGather" : "ReduceScatter"));
    CHECK_EQ_STR(algo, v == 0 ? "Ring" : (v == 1 ? "Tree" : "NVLSTree"));
    CHECK_EQ_STR(proto, v == 0 ? "Simple" : (v == 1 ? "LL" : "LL128"));
    CHECK_EQ_INT(bytes, (4ull << (10 + v)) * (v == 0 ? 1 : 16));
    /* starts at t (steps 1, 2), stops 700/900 after step 3's t and 500/300 after step 4's. */
    CHECK_MSG(us > 0.0 && us < 100.0, "gpu_us %g", us);
    snprintf(path, sizeof(path), "%s/nccl-rail-0000000000002222-r5.prof", dir);
    CHECK_EQ_INT(file_rows(path, &recorded, NULL, 0), 4096);
    /* What `nccl-rail calibrate` reads: the calibration's parser takes the file as written. */
    struct rail_job_set set = {0};
    char *buf = NULL, err[512];
    size_t len = 0;
    CHECK_EQ_INT(rail_file_read_all(path, 64u << 20, 0, &buf, &len, err, sizeof(err)), 0);
    CHECK(rail_calib_prof_detect(buf, len));
    CHECK_MSG(rail_calib_prof_parse(buf, len, path, &set, err, sizeof(err)) == 0, "%s", err);
    CHECK_EQ_INT((long)set.n, 4096);
    CHECK(set.nruns == 1 && set.runs[0].nranks == 16 && set.runs[0].nnodes == 2);
    CHECK(set.n > 0 && set.recs[0].rank == 5);
    free(buf);
    rail_job_free(&set);
}

/* Edge cases on one communicator, through the ABI. */
static void test_edges(const char *dir)
{
    struct fake f;
    void *ctx = NULL, *h, *k[3];
    int mask = 0;
    ncclProfilerEventDescr_v5_t d;
    char path[512];
    long recorded;

    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    if (fake_open(&f) != 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(f.p->init(&ctx, 0x3333, &mask, NULL, 1, 8, 0, logger), ncclSuccess);
    /* Not tracked: point-to-point, an unknown type, a group event; NULL handles are fine. */
    coll_descr(&d, 1, "SendRecv", "RING", "SIMPLE", 16, 2);
    h = (void *)0x1;
    f.p->startEvent(ctx, &h, &d);
    CHECK(h == NULL);
    coll_descr(&d, 1, "AllReduce", "RING", "SIMPLE", 16, 2);
    d.coll.datatype = "Unknown";
    h = (void *)0x1;
    f.p->startEvent(ctx, &h, &d);
    CHECK(h == NULL);
    d.type = ncclProfileGroupApi;
    h = (void *)0x1;
    f.p->startEvent(ctx, &h, &d);
    CHECK(h == NULL);
    f.p->stopEvent(NULL);
    f.p->recordEventState(NULL, ncclProfilerKernelChStop, NULL);
    CHECK(kch_start(&f, ctx, NULL, 0, 5) == NULL);       /* p2p kernel: no parent */
    CHECK(kch_start(&f, ctx, (void *)&d, 0, 5) == NULL); /* not one of ours */
    /* A repeated channel and a channel beyond nChannels are refused. */
    coll_descr(&d, 7, "AllReduce", "RING", "LL", 256, 2);
    f.p->startEvent(ctx, &h, &d);
    CHECK(h != NULL);
    k[0] = kch_start(&f, ctx, h, 5, 100);
    k[1] = kch_start(&f, ctx, h, 5, 101);
    k[2] = kch_start(&f, ctx, h, 9, 100);
    CHECK(k[0] != NULL && k[1] == NULL);
    CHECK(k[2] != NULL);
    CHECK(kch_start(&f, ctx, h, 11, 100) == NULL); /* a third channel of two */
    kch_stop(&f, k[0], 2100);                      /* stopped before the Coll stop */
    f.p->stopEvent(h);
    kch_stop(&f, k[2], 1100); /* the last stop completes it: 100 .. 2100 ns */
    /* No channel: no GPU time, not recorded. A clock that went back: not recorded. */
    coll_descr(&d, 8, "AllReduce", "RING", "LL", 256, 0);
    f.p->startEvent(ctx, &h, &d);
    f.p->stopEvent(h);
    coll_descr(&d, 9, "AllReduce", "RING", "LL", 256, 1);
    f.p->startEvent(ctx, &h, &d);
    k[0] = kch_start(&f, ctx, h, 0, 5000);
    kch_stop(&f, k[0], 4000);
    f.p->stopEvent(h);
    /* Every slot in flight: the next collective is not tracked, memory stays bounded. */
    int tracked = 0;
    for (int i = 0; i < 1100; i++) {
        coll_descr(&d, 100 + (uint64_t)i, "Broadcast", "RING", "SIMPLE", 64, 1);
        h = NULL;
        f.p->startEvent(ctx, &h, &d);
        tracked += h != NULL;
    }
    CHECK_EQ_INT(tracked, 1024);
    CHECK_EQ_INT(f.p->finalize(ctx), ncclSuccess);
    dlclose(f.h);
    snprintf(path, sizeof(path), "%s/nccl-rail-0000000000003333-r0.prof", dir);
    char row[256];
    CHECK_EQ_INT(file_rows(path, &recorded, row, sizeof(row)), 1);
    CHECK_EQ_INT(recorded, 1);
    CHECK_EQ_STR(row, "7,AllReduce,Ring,LL,2,1024,2.000\n");
    char line[512];
    int busy = -1, no_timing = -1, other = -1;
    FILE *fp = fopen(path, "r");
    while (fp && fgets(line, sizeof(line), fp))
        sscanf(line, "# recorded %*d overwritten %*d busy %d no_timing %d other %d", &busy,
               &no_timing, &other);
    if (fp)
        fclose(fp);
    CHECK_EQ_INT(busy, 76);
    CHECK_EQ_INT(no_timing, 2);
    CHECK_EQ_INT(other, 2);
}

/* KernelCh events from a "proxy" thread while the launching thread starts and stops Colls. */
struct xthread {
    struct fake *f;
    void *ctx;
    void *volatile handles[4096];
    int posted, done; /* atomics */
};

static void *proxy_main(void *arg)
{
    struct xthread *x = arg;
    for (int i = 0; i < 4096; i++) {
        while (__atomic_load_n(&x->posted, __ATOMIC_ACQUIRE) <= i)
            ;
        void *parent = x->handles[i];
        void *k[2];
        for (int ch = 0; ch < 2; ch++)
            k[ch] = kch_start(x->f, x->ctx, parent, ch, 1000 + (uint64_t)ch);
        for (int ch = 0; ch < 2; ch++)
            kch_stop(x->f, k[ch], 3000 + (uint64_t)ch);
        __atomic_store_n(&x->done, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_threads(const char *dir)
{
    struct fake f;
    static struct xthread x;
    int mask = 0;
    pthread_t th;
    char path[512];
    long recorded;

    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    if (fake_open(&f) != 0) {
        CHECK(0);
        return;
    }
    memset(&x, 0, sizeof(x));
    x.f = &f;
    CHECK_EQ_INT(f.p->init(&x.ctx, 0x4444, &mask, "t", 1, 8, 1, logger), ncclSuccess);
    pthread_create(&th, NULL, proxy_main, &x);
    for (int i = 0; i < 4096; i++) {
        ncclProfilerEventDescr_v5_t d;
        void *h = NULL;
        coll_descr(&d, (uint64_t)i, "AllReduce", "RING", "SIMPLE", 1024, 2);
        f.p->startEvent(x.ctx, &h, &d);
        x.handles[i] = h;
        __atomic_store_n(&x.posted, i + 1, __ATOMIC_RELEASE);
        f.p->stopEvent(h);
        while (i - __atomic_load_n(&x.done, __ATOMIC_ACQUIRE) > 512) /* < 1024 in flight */
            ;
    }
    pthread_join(th, NULL);
    CHECK_EQ_INT(f.p->finalize(x.ctx), ncclSuccess);
    dlclose(f.h);
    snprintf(path, sizeof(path), "%s/nccl-rail-0000000000004444-r1.prof", dir);
    CHECK_EQ_INT(file_rows(path, &recorded, NULL, 0), 4096);
    CHECK_EQ_INT(recorded, 4096);
}

/* NCCL_RAIL_PROFILE_INTERVAL: the file exists before finalize. */
static void test_interval(const char *dir)
{
    struct fake f;
    void *ctx = NULL, *h = NULL, *k;
    int mask = 0;
    char path[512];
    long recorded;
    ncclProfilerEventDescr_v5_t d;

    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    setenv("NCCL_RAIL_PROFILE_INTERVAL", "1", 1);
    if (fake_open(&f) != 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(f.p->init(&ctx, 0x5555, &mask, "i", 1, 8, 2, logger), ncclSuccess);
    coll_descr(&d, 3, "AllGather", "RING", "LL128", 100, 1);
    f.p->startEvent(ctx, &h, &d);
    k = kch_start(&f, ctx, h, 0, 10);
    kch_stop(&f, k, 20);
    f.p->stopEvent(h);
    snprintf(path, sizeof(path), "%s/nccl-rail-0000000000005555-r2.prof", dir);
    int rows = -1;
    for (int i = 0; i < 40 && rows != 1; i++) {
        usleep(100000);
        rows = file_rows(path, &recorded, NULL, 0);
    }
    CHECK_EQ_INT(rows, 1);
    CHECK_EQ_INT(f.p->finalize(ctx), ncclSuccess); /* stops the thread before the unload */
    unsetenv("NCCL_RAIL_PROFILE_INTERVAL");
    dlclose(f.h);
}

int main(void)
{
    char dir[] = "/tmp/rail-prof-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_lookup();
    test_inert();
    test_million_events(dir);
    test_edges(dir);
    test_threads(dir);
    test_interval(dir);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return check_report("test_profiler_abi");
}
