/* SPDX-License-Identifier: Apache-2.0 */
/* Profiler v7 (NCCL 2.31, 2.32) through both plugin libraries: ncclProfiler_v7 is found and
 * complete, its first INFO line names v7, and events are read through the 136-byte v7
 * descriptor: a collective's fields at their v7 places, a symmetric-memory collective counted as
 * not tuned, kernelPhase events (and a kernelPhase stop, even on a KernelCh handle) ignored
 * without changing the recorded GPU time. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_profiler.h"
#include "tmpfiles.h"

static const char *const k_libs[] = {RAIL_BINARY_DIR "/libnccl-tuner-rail.so",
                                     RAIL_BINARY_DIR "/libnccl-net-rail.so"};

static char g_first_info[512];

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    (void)flags, (void)file, (void)line;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_INFO && !g_first_info[0])
        snprintf(g_first_info, sizeof(g_first_info), "%.*s", (int)sizeof(g_first_info) - 1, buf);
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "[log %d] %s\n", level, buf);
}

static void coll_v7(ncclProfilerEventDescr_v7_t *d, uint64_t seq, size_t count, int nch)
{
    memset(d, 0, sizeof(*d));
    d->type = ncclProfileColl;
    d->coll.v6.seqNumber = seq;
    d->coll.v6.func = "AllReduce";
    d->coll.v6.count = count;
    d->coll.v6.datatype = "ncclFloat32";
    d->coll.v6.nChannels = (uint8_t)nch;
    d->coll.v6.algo = "RING";
    d->coll.v6.proto = "LL";
    d->coll.kernelVariant = "AllReduce_Sum_f32_RING_LL";
    d->coll.userTag = 0xfeedull;
}

static void *start(const ncclProfiler_v7_t *p, void *ctx, ncclProfilerEventDescr_v7_t *d)
{
    void *h = (void *)0x1; /* NCCL initialises it; the plugin must always write it */
    CHECK_EQ_INT(p->startEvent(ctx, &h, d), ncclSuccess);
    return h;
}

static void *kch(const ncclProfiler_v7_t *p, void *ctx, void *parent, int ch, uint64_t t)
{
    ncclProfilerEventDescr_v7_t d;
    memset(&d, 0, sizeof(d));
    d.type = ncclProfileKernelCh;
    d.parentObj = parent;
    d.kernelCh.channelId = (uint8_t)ch;
    d.kernelCh.pTimer = t;
    return start(p, ctx, &d);
}

/* What NCCL 2.31 sends for the phases of one channel (when the mask asks for them). */
static void phases(const ncclProfiler_v7_t *p, void *ctx, void *kch_handle, uint64_t t)
{
    static const char *const names[] = {"initial_sync", "compute", "final_sync"};
    for (int i = 0; i < 3; i++) {
        ncclProfilerEventDescr_v7_t d;
        ncclProfilerEventStateArgs_v7_t a = {.kernelCh = {t + 10 * (uint64_t)i + 5}};
        memset(&d, 0, sizeof(d));
        d.type = ncclProfileKernelPhase;
        d.parentObj = kch_handle;
        d.kernelPhase.channelId = 0;
        d.kernelPhase.phaseId = (uint8_t)i;
        d.kernelPhase.phaseName = names[i];
        d.kernelPhase.pTimer = t + 10 * (uint64_t)i;
        void *h = start(p, ctx, &d);
        CHECK(h == NULL);
        CHECK_EQ_INT(p->recordEventState(h, ncclProfilerKernelPhaseStop, &a), ncclSuccess);
        CHECK_EQ_INT(p->stopEvent(h), ncclSuccess);
    }
}

static void read_file(const char *path, char *row, size_t len, int *other, int *abi7)
{
    char line[512];
    FILE *fp = fopen(path, "r");
    row[0] = '\0';
    *other = -1;
    *abi7 = 0;
    CHECK_MSG(fp != NULL, "no file %s", path);
    while (fp && fgets(line, sizeof(line), fp)) {
        if (line[0] >= '0' && line[0] <= '9' && !row[0])
            snprintf(row, len, "%.*s", (int)(len ? len - 1 : 0), line);
        sscanf(line, "# recorded %*d overwritten %*d busy %*d no_timing %*d other %d", other);
        if (line[0] == '#' && strstr(line, "ABI v7"))
            *abi7 = 1;
    }
    if (fp)
        fclose(fp);
}

static void test_lib(const char *lib, const char *dir, uint64_t comm)
{
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(dl != NULL, "dlopen %s: %s", lib, dlerror());
    const ncclProfiler_v7_t *p = dl ? dlsym(dl, "ncclProfiler_v7") : NULL;
    CHECK(p && p->name && strcmp(p->name, "rail") == 0);
    CHECK(p && p->init && p->startEvent && p->stopEvent && p->recordEventState && p->finalize);
    if (!p) {
        if (dl)
            dlclose(dl);
        return;
    }
    void *ctx = NULL, *h, *k0, *k1;
    int mask = 0;
    ncclProfilerEventDescr_v7_t d;
    ncclProfilerEventStateArgs_v7_t a;

    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    g_first_info[0] = '\0';
    CHECK_EQ_INT(p->init(&ctx, comm, &mask, "v7", 1, 8, 0, logger), ncclSuccess);
    CHECK_MSG(strstr(g_first_info, "profiler plugin, ABI v7") != NULL, "first INFO line '%s'",
              g_first_info);
    CHECK(ctx != NULL);
    CHECK_EQ_INT(mask, ncclProfileColl | ncclProfileKernelCh); /* no kernelPhase asked for */

    /* A symmetric-memory collective: not an (algorithm, protocol) run, not tracked. */
    coll_v7(&d, 3, 256, 2);
    d.coll.isSymColl = true;
    CHECK(start(p, ctx, &d) == NULL);

    /* A tracked collective on two channels; phases and a stray phase stop on a KernelCh handle
     * must not count as channel stops (they would end the span at 1000000 ns). */
    coll_v7(&d, 7, 256, 2);
    h = start(p, ctx, &d);
    CHECK(h != NULL);
    k0 = kch(p, ctx, h, 0, 100);
    k1 = kch(p, ctx, h, 1, 150);
    CHECK(k0 != NULL && k1 != NULL);
    phases(p, ctx, k0, 100);
    a.kernelCh.pTimer = 1000000;
    CHECK_EQ_INT(p->recordEventState(k0, ncclProfilerKernelPhaseStop, &a), ncclSuccess);
    a.kernelCh.pTimer = 2100;
    p->recordEventState(k0, ncclProfilerKernelChStop, &a);
    p->stopEvent(k0);
    p->stopEvent(h);
    a.kernelCh.pTimer = 1100;
    p->recordEventState(k1, ncclProfilerKernelChStop, &a);
    p->stopEvent(k1);
    /* Every other v7 type: not tracked. */
    static const uint64_t others[] = {ncclProfileCollApi, ncclProfileP2pApi,      ncclProfileP2p,
                                      ncclProfileCeColl,  ncclProfileKernelPhase, 1ull << 20};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        memset(&d, 0xff, sizeof(d)); /* garbage everywhere but the type */
        d.type = others[i];
        CHECK(start(p, ctx, &d) == NULL);
    }
    CHECK_EQ_INT(p->startEvent(ctx, NULL, &d), ncclSuccess);
    h = (void *)0x1;
    CHECK_EQ_INT(p->startEvent(ctx, &h, NULL), ncclSuccess);
    CHECK(h == NULL);
    CHECK_EQ_INT(p->finalize(ctx), ncclSuccess);
    unsetenv("NCCL_RAIL_PROFILE_DIR");
    dlclose(dl);

    char path[512], row[256];
    int other, abi7;
    snprintf(path, sizeof(path), "%s/nccl-rail-%016llx-r0.prof", dir, (unsigned long long)comm);
    read_file(path, row, sizeof(row), &other, &abi7);
    CHECK_EQ_STR(row, "7,AllReduce,Ring,LL,2,1024,2.000\n"); /* 100 .. 2100 ns */
    CHECK_EQ_INT(other, 1);
    CHECK(abi7);
}

int main(void)
{
    char dir[] = "/tmp/rail-prof-v7-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_lib(k_libs[0], dir, 0x7001);
    test_lib(k_libs[1], dir, 0x7002);
    tmp_remove_tree(dir);
    return check_report("test_profiler_v7");
}
