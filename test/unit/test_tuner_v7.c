/* SPDX-License-Identifier: Apache-2.0 */
/* Tuner v7 (NCCL 2.32.6) through both plugin libraries, loaded the way NCCL loads a tuner:
 *  - ncclTunerPlugin_v7 is found first and complete;
 *  - a v7 init edits the constants only through the v7 layout: the refinements of the Blackwell
 *    row land at their v7 offsets, the Rubin row (index 4) and the bytes around the buffer stay
 *    as NCCL set them, and nothing lands at a v5 offset;
 *  - a v6 init handed a v5-sized buffer (what NCCL 2.30-2.32 pass a v6 plugin) never writes
 *    past its 1152 bytes;
 *  - the collective ids NCCL 2.29 added (11: AllGatherV .. 14) and any id past them get NCCL's
 *    choice untouched from getCollInfo and getChunkSize, with and without a rules file;
 *  - a rules file asking for the chunk sizes of NCCL issue #2408 (1 MiB and more) gets answers
 *    within NCCL's buffers, one WARN per (algorithm, protocol). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model/cost_model.h"
#include "nccl/nccl_tuner.h"

static const char *const k_libs[] = {RAIL_BINARY_DIR "/libnccl-tuner-rail.so",
                                     RAIL_BINARY_DIR "/libnccl-net-rail.so"};

static char g_first_info[512];
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
    if (level == NCCL_LOG_INFO && !g_first_info[0])
        snprintf(g_first_info, sizeof(g_first_info), "%.*s", (int)sizeof(g_first_info) - 1, buf);
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "[log %d] %s\n", level, buf);
}

/* NCCL's own defaults laid out as v7 constants, the Rubin row set to `rubin` per table. */
static void v7_defaults(ncclTunerConstants_v7_t *c, const double rubin[5])
{
    ncclTunerConstants_v5_t d;
    rail_model_default_constants(&d);
    memset(c, 0, sizeof(*c));
    memcpy(c->baseLatencies, d.baseLatencies, sizeof(d.baseLatencies));
    memcpy(c->hwLatencies, d.hwLatencies, sizeof(d.hwLatencies));
    for (int cc = 0; cc < 4; cc++)
        for (int s = 0; s < 3; s++) {
            c->llMaxBws[cc][s] = d.llMaxBws[cc][s];
            c->perChMaxRingLL128Bws[cc][s] = d.perChMaxRingLL128Bws[cc][s];
            c->perChMaxTreeLL128Bws[cc][s] = d.perChMaxTreeLL128Bws[cc][s];
            c->perChMaxTreeBws[cc][s] = d.perChMaxTreeBws[cc][s];
            c->perChMaxNVLSTreeBws[cc][s] = d.perChMaxNVLSTreeBws[cc][s];
        }
    for (int s = 0; s < 3; s++) {
        c->llMaxBws[4][s] = rubin[0];
        c->perChMaxRingLL128Bws[4][s] = rubin[1];
        c->perChMaxTreeLL128Bws[4][s] = rubin[2];
        c->perChMaxTreeBws[4][s] = rubin[3];
        c->perChMaxNVLSTreeBws[4][s] = rubin[4];
    }
}

static double at(const void *base, size_t off)
{
    double v;
    memcpy(&v, (const char *)base + off, sizeof(v));
    return v;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void test_lookup(void *h)
{
    const ncclTuner_v7_t *v7 = dlsym(h, "ncclTunerPlugin_v7");
    CHECK(v7 && v7->name && strcmp(v7->name, "rail") == 0);
    CHECK(v7 && v7->init && v7->getCollInfo && v7->finalize && v7->getChunkSize);
}

/* The v7 constants buffer between two guard zones; the Blackwell row is refined on a B200
 * (NCCL 2.29/2.30's recalibrations, docs/cost-model.md), the Rubin row must not move. */
static void test_v7_constants(void *h)
{
    const ncclTuner_v7_t *t = dlsym(h, "ncclTunerPlugin_v7");
    struct {
        unsigned char pre[64];
        ncclTunerConstants_v7_t c;
        unsigned char post[64];
    } buf;
    ncclTunerConstants_v7_t before;
    ncclNvlDomainInfo_v7_t nvl = {8, 8, 8};
    void *ctx = NULL;
    /* The Rubin rows hold Blackwell's defaults: a refinement meant for Blackwell that went to
     * the wrong row would find its default there and change it. */
    ncclTunerConstants_v5_t d;
    rail_model_default_constants(&d);
    const double rubin[5] = {d.llMaxBws[3][0], d.perChMaxRingLL128Bws[3][0],
                             d.perChMaxTreeLL128Bws[3][0], d.perChMaxTreeBws[3][0],
                             d.perChMaxNVLSTreeBws[3][2]};

    if (!t)
        return;
    memset(&buf, 0xA5, sizeof(buf));
    v7_defaults(&buf.c, rubin);
    before = buf.c;
    setenv("NCCL_RAIL_TOPO_PROFILE", "hgx-b200", 1);
    g_first_info[0] = '\0';
    CHECK_EQ_INT(t->init(&ctx, 0x77, 64, 8, logger, &nvl, &buf.c), ncclSuccess);
    CHECK_MSG(strstr(g_first_info, "tuner plugin, ABI v7") != NULL, "first INFO line '%s'",
              g_first_info);
    CHECK(all_bytes(buf.pre, sizeof(buf.pre), 0xA5));
    CHECK(all_bytes(buf.post, sizeof(buf.post), 0xA5));
    /* The Rubin row of every per-compcap table, bit for bit. */
    for (int s = 0; s < 3; s++) {
        CHECK(memcmp(&buf.c.llMaxBws[4][s], &before.llMaxBws[4][s], 8) == 0);
        CHECK(memcmp(&buf.c.perChMaxRingLL128Bws[4][s], &before.perChMaxRingLL128Bws[4][s], 8) ==
              0);
        CHECK(memcmp(&buf.c.perChMaxTreeLL128Bws[4][s], &before.perChMaxTreeLL128Bws[4][s], 8) ==
              0);
        CHECK(memcmp(&buf.c.perChMaxTreeBws[4][s], &before.perChMaxTreeBws[4][s], 8) == 0);
        CHECK(memcmp(&buf.c.perChMaxNVLSTreeBws[4][s], &before.perChMaxNVLSTreeBws[4][s], 8) == 0);
    }
    /* The Blackwell refinements at their v7 byte offsets (ring LL128 at 792 + 9*8 ..., NVLS tree
     * 4 nodes at 1152 + 11*8). */
    CHECK_NEAR(at(&buf.c, 792 + 9 * 8), 40.0, 0.0);
    CHECK_NEAR(at(&buf.c, 792 + 11 * 8), 40.0, 0.0);
    CHECK_NEAR(at(&buf.c, 1152 + 11 * 8), 80.0, 0.0);
    /* Nothing at the v5 offsets of the same entries (v7 bytes 768+72 and 1056+88 are other rows,
     * which keep NCCL's defaults). */
    CHECK(memcmp((char *)&buf.c + 768 + 72, (char *)&before + 768 + 72, 8) == 0);
    CHECK(memcmp((char *)&buf.c + 1056 + 88, (char *)&before + 1056 + 88, 8) == 0);
    /* Exactly the four Blackwell entries changed, nothing else in the 1272 bytes. */
    int diff = 0;
    for (size_t off = 0; off < sizeof(before); off += 8)
        diff += memcmp((char *)&buf.c + off, (char *)&before + off, 8) != 0;
    CHECK_EQ_INT(diff, 4);
    t->finalize(ctx);
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
}

/* NCCL 2.30-2.32 give a v6 plugin a v5-shaped 1152-byte copy: nothing may land after it. */
static void test_v6_v5_sized(void *h)
{
    const ncclTuner_v6_t *t = dlsym(h, "ncclTunerPlugin_v6");
    unsigned char *mem = malloc(1152 + 256);
    ncclTunerConstants_v5_t d;
    void *ctx = NULL;

    if (!t || !mem) {
        CHECK(t && mem);
        free(mem);
        return;
    }
    rail_model_default_constants(&d);
    memset(mem, 0x5A, 1152 + 256);
    memcpy(mem, &d, sizeof(d));
    setenv("NCCL_RAIL_TOPO_PROFILE", "hgx-b200", 1);
    CHECK_EQ_INT(t->init(&ctx, 0x78, 64, 8, logger, NULL, (ncclTunerConstants_v6_t *)(void *)mem),
                 ncclSuccess);
    CHECK(all_bytes(mem + 1152, 256, 0x5A));
    CHECK_NEAR(at(mem, 768 + 9 * 8), 40.0, 0.0); /* the v5 offset in a v5 buffer */
    t->finalize(ctx);
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    free(mem);
}

/* Ids NCCL added in 2.29 (AllGatherV = 11 .. WaitSignal = 14), the p2p ids and ids no NCCL
 * has: NCCL's cost table, channel count and chunk size stay exactly as NCCL set them. */
static void check_foreign_ids(const ncclTuner_v7_t *t, void *ctx)
{
    static const int ids[] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 63, 255, 1 << 30, -1};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        for (int l = 0; l <= 32; l += 4) {
            float table[7][3], orig[7][3];
            int nch = 0;
            size_t chunk = 131072;
            for (int c = 0; c < 21; c++)
                table[c / 3][c % 3] = 5.0f + (float)c;
            memcpy(orig, table, sizeof(orig));
            CHECK_EQ_INT(t->getCollInfo(ctx, (ncclFunc_t)ids[i], (size_t)1 << l, 1,
                                        (float **)(void *)table, 7, 3, 0, &nch),
                         ncclSuccess);
            CHECK_MSG(memcmp(table, orig, sizeof(orig)) == 0, "coll %d: cost table changed",
                      ids[i]);
            CHECK_EQ_INT(nch, 0);
            for (int a = 0; a < 7; a++)
                for (int p = 0; p < 3; p++) {
                    CHECK_EQ_INT(
                        t->getChunkSize(ctx, (ncclFunc_t)ids[i], (size_t)1 << l, a, p, 8, &chunk),
                        ncclSuccess);
                    CHECK_EQ_INT(chunk, 131072);
                }
        }
}

static void test_new_collectives(void *h)
{
    const ncclTuner_v7_t *t = dlsym(h, "ncclTunerPlugin_v7");
    char path[] = "/tmp/rail-tuner-v7-XXXXXX";
    void *ctx = NULL;
    int fd;

    if (!t)
        return;
    setenv("NCCL_RAIL_TOPO_PROFILE", "aws-p5", 1);
    CHECK_EQ_INT(t->init(&ctx, 0x79, 8, 8, logger, NULL, NULL), ncclSuccess);
    check_foreign_ids(t, ctx);
    t->finalize(ctx);

    /* A rules file naming every collective it knows, with a chunk size: still hands off. */
    fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    static const char rules[] = "allgather,0,4294967295,ring,simple,-1,-1,-1,-1,-1,262144\n"
                                "allreduce,0,4294967295,ring,simple,4,-1,-1,-1,-1,262144\n";
    CHECK(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
    close(fd);
    setenv("NCCL_TUNER_CONFIG_FILE", path, 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(&ctx, 0x7a, 8, 8, logger, NULL, NULL), ncclSuccess);
    check_foreign_ids(t, ctx);
    t->finalize(ctx);
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    unlink(path);
}

/* getChunkSize through the ABI with #2408's sizes in the rules file. */
static void test_chunk_2408(void *h)
{
    const ncclTuner_v7_t *t = dlsym(h, "ncclTunerPlugin_v7");
    char path[] = "/tmp/rail-tuner-2408-XXXXXX";
    void *ctx = NULL;
    size_t chunk;
    int fd = mkstemp(path);

    CHECK(t != NULL && fd >= 0);
    if (!t || fd < 0)
        return;
    static const char rules[] = "allreduce,0,1048576,ring,simple,-1,-1,-1,-1,-1,1048576\n"
                                "allreduce,0,4294967295,ring,simple,-1,-1,-1,-1,-1,4194304\n"
                                "allreduce,0,4294967295,tree,simple,-1,-1,-1,-1,-1,1048576\n"
                                "allreduce,0,4294967295,ring,ll,-1,-1,-1,-1,-1,2097152\n"
                                "allreduce,0,4294967295,tree,ll128,-1,-1,-1,-1,-1,8388608\n"
                                "allreduce,0,4294967295,nvls,simple,-1,-1,-1,-1,-1,1048576\n"
                                "broadcast,0,4294967295,ring,simple,-1,-1,-1,-1,-1,1048576\n";
    CHECK(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
    close(fd);
    setenv("NCCL_TUNER_CONFIG_FILE", path, 1);
    setenv("NCCL_RAIL_TOPO_PROFILE", "aws-p5", 1);
    unsetenv("NCCL_BUFFSIZE");
    CHECK_EQ_INT(t->init(&ctx, 0x2408, 16, 2, logger, NULL, NULL), ncclSuccess);
    g_warns = 0;
    struct {
        int coll, algo, proto;
        size_t nbytes, nccl, want;
    } cases[] = {
        {ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1 << 20, 524288, 1048576},
        {ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1 << 28, 524288, 2097152},
        {ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1 << 28, 131072, 524288},
        {ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_LL, 1 << 16, 32768, 32768},
        {ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 1 << 22, 576000, 576000},
        {ncclFuncAllReduce, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 1 << 28, 131072, 131072},
        {ncclFuncBroadcast, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1 << 28, 524288, 524288},
    };
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            chunk = cases[i].nccl;
            CHECK_EQ_INT(t->getChunkSize(ctx, (ncclFunc_t)cases[i].coll, cases[i].nbytes,
                                         cases[i].algo, cases[i].proto, 8, &chunk),
                         ncclSuccess);
            CHECK_MSG(chunk == cases[i].want, "case %zu: answered %zu, expected %zu", i, chunk,
                      cases[i].want);
        }
    /* Ring/Simple (4 MiB asked), Tree/Simple, Ring/LL, Tree/LL128, NVLS, and Broadcast's
     * Ring/Simple shares the first pair's report: 5 WARNs however often NCCL asks. */
    CHECK_EQ_INT(g_warns, 5);
    t->finalize(ctx);

    /* A larger NCCL_BUFFSIZE raises the Simple ceilings with it; an unreadable one stops every
     * Simple answer (NCCL's real buffer is then unknown). */
    setenv("NCCL_BUFFSIZE", "16777216", 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(&ctx, 0x2409, 16, 2, logger, NULL, NULL), ncclSuccess);
    chunk = 524288;
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 28, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    CHECK_EQ_INT(chunk, 4194304);
    t->finalize(ctx);
    setenv("NCCL_BUFFSIZE", "4M", 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(&ctx, 0x240a, 16, 2, logger, NULL, NULL), ncclSuccess);
    chunk = 524288;
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 28, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    CHECK_EQ_INT(chunk, 524288);
    t->finalize(ctx);
    unsetenv("NCCL_BUFFSIZE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    unlink(path);
}

int main(void)
{
    unsetenv("NCCL_TOPO_FILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(k_libs[i], RTLD_NOW | RTLD_LOCAL);
        CHECK_MSG(h != NULL, "dlopen %s: %s", k_libs[i], dlerror());
        if (!h)
            continue;
        test_lookup(h);
        test_v7_constants(h);
        test_v6_v5_sized(h);
        test_new_collectives(h);
        test_chunk_2408(h);
        dlclose(h);
    }
    return check_report("test_tuner_v7");
}
