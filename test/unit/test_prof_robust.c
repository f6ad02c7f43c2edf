/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 29, item 7: the profiler under what NCCL (or a race) may do.
 *   - a finalize racing another communicator's init with NCCL_RAIL_PROFILE_INTERVAL joins its own
 *     interval thread (it joined the new communicator's thread: a hang, and two joins of one
 *     thread), and the thread it leaves stops;
 *   - a collective whose channels never all report no longer pins its slot: with every slot so
 *     held, a new collective takes one of them (counted abandoned) and is recorded;
 *   - a collective announced with no channel is not tracked, so channel events naming it are
 *     refused, never credited to the next collective;
 *   - a stop or a state for a channel the slot's collective never started is refused;
 *   - values out of range: a rank outside [0, nranks) or nnodes > nranks is not profiled (one
 *     WARN), a size beyond what a calibration takes is not recorded. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/calib_log.h"
#include "check.h"
#include "log.h"
#include "prof_core.h"
#include "prof_plugin.h"
#include "tmpfiles.h"

static int g_warns;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags, (void)file, (void)line, (void)fmt;
    if (level == NCCL_LOG_WARN)
        g_warns++;
}

static void coll(ncclProfilerEventDescr_v5_t *d, uint64_t seq, size_t count, int nch)
{
    memset(d, 0, sizeof(*d));
    d->type = ncclProfileColl;
    d->coll.seqNumber = seq;
    d->coll.func = "AllReduce";
    d->coll.count = count;
    d->coll.datatype = "ncclFloat32";
    d->coll.nChannels = (uint8_t)nch;
    d->coll.algo = "RING";
    d->coll.proto = "SIMPLE";
}

static void *kch(struct rail_prof_ctx *c, void *parent, int ch, uint64_t t)
{
    ncclProfilerEventDescr_v5_t d;
    memset(&d, 0, sizeof(d));
    d.type = ncclProfileKernelCh;
    d.parentObj = parent;
    d.kernelCh.channelId = (uint8_t)ch;
    d.kernelCh.pTimer = t;
    return rail_prof_start(c, &d);
}

static void kch_end(void *h, uint64_t t)
{
    ncclProfilerEventStateArgs_v5_t a = {.kernelCh = {t}};
    rail_prof_record_state(h, ncclProfilerKernelChStop, &a);
    rail_prof_stop(h);
}

/* ---- the interval thread ---- */

static const char *g_dir;
static void *g_second;

static void init_second(void)
{
    int mask = 0;
    CHECK_EQ_INT(rail_prof_plugin_init(5, &g_second, 0xb, &mask, "b", 1, 1, 0, logger),
                 ncclSuccess);
}

static volatile int g_done;

static void *finalize_first(void *ctx)
{
    rail_prof_plugin_finalize(ctx);
    g_done = 1;
    return NULL;
}

static void test_interval_race(void)
{
    void *first = NULL;
    int mask = 0;
    pthread_t th;
    setenv("NCCL_RAIL_PROFILE_DIR", g_dir, 1);
    setenv("NCCL_RAIL_PROFILE_INTERVAL", "3600", 1);
    CHECK_EQ_INT(rail_prof_plugin_init(5, &first, 0xa, &mask, "a", 1, 1, 0, logger), ncclSuccess);
    CHECK(first != NULL);
    /* The second communicator's init lands between the first's release and its join. */
    rail_prof_plugin_set_join_hook(init_second);
    pthread_create(&th, NULL, finalize_first, first);
    for (int i = 0; i < 500 && !g_done; i++)
        usleep(10000);
    CHECK_MSG(g_done, "the finalize joined another communicator's interval thread (hung 5 s)");
    if (!g_done)
        _exit(check_report("test_prof_robust"));
    pthread_join(th, NULL);
    rail_prof_plugin_set_join_hook(NULL);
    /* The second communicator still has its thread; its finalize joins it and returns. */
    CHECK(g_second != NULL);
    CHECK_EQ_INT(rail_prof_plugin_finalize(g_second), ncclSuccess);
    unsetenv("NCCL_RAIL_PROFILE_INTERVAL");
}

/* ---- slots ---- */

static void test_pinned_slots(void)
{
    struct rail_prof_ctx *c = NULL;
    struct rail_prof_counts k;
    struct rail_prof_record r[4];
    ncclProfilerEventDescr_v5_t d;
    CHECK_EQ_INT(rail_prof_ctx_create(&c, 1, "p", 1, 8, 0, 64), 0);
    /* Every slot held by a collective that stopped with one of its two channels silent. */
    for (int i = 0; i < RAIL_PROF_INFLIGHT; i++) {
        coll(&d, (uint64_t)i, 1024, 2);
        void *h = rail_prof_start(c, &d), *k0 = kch(c, h, 0, 100);
        CHECK(h && k0);
        kch_end(k0, 200);
        rail_prof_stop(h);
    }
    CHECK_EQ_INT(rail_prof_inflight(c), RAIL_PROF_INFLIGHT);
    /* A new collective is still tracked and recorded. */
    coll(&d, 5000, 1024, 1);
    void *h = rail_prof_start(c, &d);
    CHECK(h != NULL);
    void *k0 = kch(c, h, 0, 1000);
    kch_end(k0, 1500);
    rail_prof_stop(h);
    CHECK_EQ_INT((int)rail_prof_snapshot(c, r, 4, &k), 1);
    CHECK(r[0].seq == 5000 && r[0].gpu_ns == 500);
    CHECK(k.abandoned == 1 && k.busy == 0);
    /* Collectives whose Coll event is still running are never given up. */
    struct rail_prof_ctx *c2 = NULL;
    CHECK_EQ_INT(rail_prof_ctx_create(&c2, 2, "q", 1, 8, 0, 64), 0);
    for (int i = 0; i < RAIL_PROF_INFLIGHT; i++) {
        coll(&d, (uint64_t)i, 1024, 1);
        CHECK(rail_prof_start(c2, &d) != NULL);
    }
    coll(&d, 9999, 1024, 1);
    CHECK(rail_prof_start(c2, &d) == NULL);
    rail_prof_snapshot(c2, NULL, 0, &k);
    CHECK(k.busy == 1 && k.abandoned == 0);
    rail_prof_ctx_destroy(c2);
    rail_prof_ctx_destroy(c);
}

static void test_no_channel_credit(void)
{
    struct rail_prof_ctx *c = NULL;
    struct rail_prof_counts k;
    struct rail_prof_record r[4];
    ncclProfilerEventDescr_v5_t d;
    CHECK_EQ_INT(rail_prof_ctx_create(&c, 3, "z", 1, 8, 0, 64), 0);
    coll(&d, 1, 1024, 0); /* announced with no channel */
    void *a = rail_prof_start(c, &d);
    CHECK(a == NULL);
    rail_prof_stop(a);
    coll(&d, 2, 1024, 1);
    void *b = rail_prof_start(c, &d);
    CHECK(b != NULL);
    /* A's channel events (parent: A's handle) after A completed: refused. */
    void *ka = kch(c, a, 0, 100);
    CHECK(ka == NULL);
    /* B's own channel: B's time is its own (1000..1500), not 100..1500. */
    void *kb = kch(c, b, 0, 1000);
    CHECK(kb != NULL);
    /* A stop and a state for channel 1, which B never started (a forged handle of B's slot). */
    void *forged = (void *)((uintptr_t)kb + 2); /* same slot, channel 1 */
    kch_end(forged, 99999);
    kch_end(kb, 1500);
    rail_prof_stop(b);
    CHECK_EQ_INT((int)rail_prof_snapshot(c, r, 4, &k), 1);
    CHECK(r[0].seq == 2 && r[0].gpu_ns == 500);
    CHECK(k.no_timing == 1);
    CHECK(k.refused >= 3);
    /* Late events of B, now completed, are refused too. */
    uint64_t before = k.refused;
    kch_end(kb, 2000);
    rail_prof_snapshot(c, NULL, 0, &k);
    CHECK(k.refused > before && k.recorded == 1);
    rail_prof_ctx_destroy(c);
}

static void test_ranges(void)
{
    struct rail_prof_ctx *c = NULL;
    struct rail_prof_counts k;
    ncclProfilerEventDescr_v5_t d;
    void *ctx = (void *)0x1;
    int mask = -1;
    /* The plugin: a rank outside the communicator is not profiled, one WARN. */
    setenv("NCCL_RAIL_PROFILE_DIR", g_dir, 1);
    g_warns = 0;
    CHECK_EQ_INT(rail_prof_plugin_init(5, &ctx, 0xc, &mask, "r", 1, 4, 5, logger), ncclSuccess);
    CHECK(ctx == NULL && mask == 0 && g_warns == 1);
    ctx = (void *)0x1;
    CHECK_EQ_INT(rail_prof_plugin_init(5, &ctx, 0xc, &mask, "r", 8, 4, 0, logger), ncclSuccess);
    CHECK(ctx == NULL && mask == 0 && g_warns == 2);
    CHECK_EQ_INT(rail_prof_ctx_create(&c, 4, "r", 1, 4, -1, 64), -EINVAL);
    CHECK_EQ_INT(rail_prof_ctx_create(&c, 4, "r", 1, 0, 0, 64), -EINVAL);
    /* What the profiler records, calibrate accepts. */
    CHECK(RAIL_PROF_MAX_BYTES <= RAIL_CALIB_MAX_BYTES);
    CHECK(RAIL_PROF_MAX_RANKS <= RAIL_CALIB_MAX_RANKS);
    CHECK_EQ_INT(rail_prof_ctx_create(&c, 4, "r", 1, 4, 3, 64), 0);
    coll(&d, 1, (size_t)1 << 49, 1); /* 2^51 bytes of float32 */
    CHECK(rail_prof_start(c, &d) == NULL);
    d.coll.func = "AllGather";
    d.coll.count = ((size_t)1 << 48) - 1; /* x 4 bytes x 4 ranks: just over 2^52 */
    CHECK(rail_prof_start(c, &d) == NULL);
    d.coll.count = 0;
    CHECK(rail_prof_start(c, &d) == NULL);
    rail_prof_snapshot(c, NULL, 0, &k);
    CHECK(k.other == 3);
    d.coll.count = 1024;
    CHECK(rail_prof_start(c, &d) != NULL);
    rail_prof_ctx_destroy(c);
}

int main(void)
{
    char dir[] = "/tmp/rail-prof-robust-XXXXXX";
    rail_log_set_logger(logger);
    CHECK(mkdtemp(dir) != NULL);
    g_dir = dir;
    test_pinned_slots();
    test_no_channel_credit();
    test_ranges();
    test_interval_race();
    tmp_remove_tree(dir);
    return check_report("test_prof_robust");
}
