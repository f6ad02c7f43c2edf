/* SPDX-License-Identifier: Apache-2.0 */
/* ABI test: load libnccl-tuner-rail.so exactly the way NCCL 2.28 does (dlopen RTLD_NOW|RTLD_LOCAL,
 * symbols searched v5 -> v2, a flat float[7][3] cost table passed as float**) and check the
 * selection rules: exactly one available entry forced to 0.0, IGNORE entries never revived,
 * nothing touched when unsure, v2 flags honoured. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fuzz.h"
#include "model/cost_model.h"
#include "nccl/nccl_tuner.h"

#define LIB RAIL_BINARY_DIR "/libnccl-tuner-rail.so"

static int g_log_lines, g_log_warns, g_log_prefix_ok = 1;

static void test_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    va_list ap;
    char buf[1024];
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    g_log_lines++;
    if (level == NCCL_LOG_WARN)
        g_log_warns++;
    if (strncmp(buf, "RAIL ", 5) != 0)
        g_log_prefix_ok = 0;
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "[log %d] %s\n", level, buf);
}

static void *open_plugin(void)
{
    void *h = dlopen(LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "dlopen: %s\n", dlerror());
    return h;
}

/* NCCL's lookup: the first symbol found, newest first. */
static void test_lookup_order(void)
{
    static const char *const order[] = {"ncclTunerPlugin_v5", "ncclTunerPlugin_v4",
                                        "ncclTunerPlugin_v3", "ncclTunerPlugin_v2"};
    void *h = open_plugin();
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK(dlsym(h, order[0]) != NULL);
    for (int i = 0; i < 4; i++) {
        const ncclTuner_v4_t *t = dlsym(h, order[i]);
        CHECK(t != NULL && t->name && strcmp(t->name, "rail") == 0);
        CHECK(t && t->init && t->getCollInfo && t->destroy); /* complete at load time */
    }
    const ncclTuner_v6_t *v6 = dlsym(h, "ncclTunerPlugin_v6");
    CHECK(v6 && v6->init && v6->getCollInfo && v6->finalize && v6->getChunkSize);
    CHECK(dlsym(h, "rail_tuner_create") == NULL); /* internals stay hidden */
    dlclose(h);
}

static void fill_table(float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], unsigned mask)
{
    for (int c = 0; c < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; c++)
        t[c / 3][c % 3] = (mask >> c) & 1 ? 10.0f + (float)c : NCCL_ALGO_PROTO_IGNORE;
}

/* Invariants of one call: every IGNORE stays IGNORE; at most one entry changes, to 0.0. */
static int check_call(float before[7][3], float after[7][3], int *chosen)
{
    int changed = 0, ok = 1;
    *chosen = -1;
    for (int c = 0; c < 21; c++) {
        float b = before[c / 3][c % 3], a = after[c / 3][c % 3];
        if (b < 0.0f && a != b)
            ok = 0; /* revived an IGNORE entry */
        if (a != b) {
            changed++;
            *chosen = c;
            if (a != 0.0f)
                ok = 0;
        }
    }
    return ok && changed <= 1;
}

static void test_v5_table(void)
{
    void *h = open_plugin();
    const ncclTuner_v5_t *t = h ? dlsym(h, "ncclTunerPlugin_v5") : NULL;
    ncclTunerConstants_v5_t consts;
    ncclNvlDomainInfo_v5_t nvl = {8, 1, 1};
    void *ctx = NULL;
    int forced = 0, bad = 0, nch_bad = 0;

    CHECK(t != NULL);
    if (!t)
        return;
    /* One GPU on each of 8 P5 nodes: a shape the trained table covers, where NCCL's own choice
     * (PAT) is measured far off, so the tuner acts (docs/cost-model.md §12). */
    setenv("NCCL_RAIL_TOPO_PROFILE", "aws-p5", 1);
    rail_model_default_constants(&consts);
    CHECK_EQ_INT(t->init(&ctx, 0x1234, 8, 8, test_logger, &nvl, &consts), ncclSuccess);
    CHECK(ctx != NULL);
    CHECK(g_log_lines > 0 && g_log_prefix_ok);

    /* Every collective, every size, many availability masks. */
    uint32_t seed = 12345;
    for (int coll = 0; coll < 5; coll++)
        for (int l = 0; l <= 34; l++)
            for (int k = 0; k < 24; k++) {
                float before[7][3], after[7][3];
                unsigned mask;
                int chosen, nch = 0;
                mask = (fuzz_step(&seed) >> 5) & 0x1fffff;
                if (k == 0)
                    mask = 0x1fffff;
                fill_table(before, mask);
                memcpy(after, before, sizeof(after));
                t->getCollInfo(ctx, (ncclFunc_t)coll, (size_t)1 << l, 1, (float **)(void *)after, 7,
                               3, 0, &nch);
                if (!check_call(before, after, &chosen))
                    bad++;
                if (chosen >= 0)
                    forced++;
                if (nch < 0 || nch > 64)
                    nch_bad++;
            }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(nch_bad, 0);
    CHECK(forced > 0);

    /* Everything IGNORE: the table is left alone. */
    {
        float before[7][3], after[7][3];
        int chosen, nch = 0;
        fill_table(before, 0);
        memcpy(after, before, sizeof(after));
        t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)after, 7, 3, 0, &nch);
        CHECK(check_call(before, after, &chosen) && chosen == -1);
        CHECK_EQ_INT(nch, 0);
    }
    /* Only one entry available: it is the one that runs (chosen, or NCCL's own when the tuner
     * leaves the table alone); nothing else is touched. */
    {
        float before[7][3], after[7][3];
        int chosen, nch = 0;
        fill_table(before, 1u << (NCCL_ALGO_RING * 3 + NCCL_PROTO_SIMPLE));
        memcpy(after, before, sizeof(after));
        t->getCollInfo(ctx, ncclFuncAllGather, 1 << 10, 1, (float **)(void *)after, 7, 3, 0, &nch);
        CHECK(check_call(before, after, &chosen));
        CHECK(chosen == -1 || chosen == NCCL_ALGO_RING * 3 + NCCL_PROTO_SIMPLE);
    }
    /* A table of another shape is not touched. */
    {
        float before[7][3], after[7][3];
        int chosen, nch = 0;
        fill_table(before, 0x1fffff);
        memcpy(after, before, sizeof(after));
        t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)after, 6, 3, 0, &nch);
        CHECK(check_call(before, after, &chosen) && chosen == -1);
    }
    /* Functions beyond NCCL_NUM_FUNCTIONS are ignored. */
    {
        float before[7][3], after[7][3];
        int chosen, nch = 0;
        fill_table(before, 0x1fffff);
        memcpy(after, before, sizeof(after));
        t->getCollInfo(ctx, ncclFuncSendRecv, 1 << 20, 1, (float **)(void *)after, 7, 3, 0, &nch);
        CHECK(check_call(before, after, &chosen) && chosen == -1);
    }
    /* AllGather over 8 single-GPU P5 nodes (measured: test/fixtures/tuner-data/p5_8x1_efa): Ring/LL
     * at 1 KiB, where NCCL picks PAT; Ring/Simple at 64 MiB, where NCCL picks Ring/LL128. */
    {
        float tab[7][3];
        int nch = 0, chosen;
        fill_table(tab, 0x1fffff);
        t->getCollInfo(ctx, ncclFuncAllGather, 1024, 1, (float **)(void *)tab, 7, 3, 0, &nch);
        chosen = -1;
        for (int c = 0; c < 21; c++)
            if (tab[c / 3][c % 3] == 0.0f)
                chosen = c;
        CHECK_MSG(chosen == NCCL_ALGO_RING * 3 + NCCL_PROTO_LL, "1 KiB chose %d", chosen);
        fill_table(tab, 0x1fffff);
        t->getCollInfo(ctx, ncclFuncAllGather, (size_t)64 << 20, 1, (float **)(void *)tab, 7, 3, 0,
                       &nch);
        chosen = -1;
        for (int c = 0; c < 21; c++)
            if (tab[c / 3][c % 3] == 0.0f)
                chosen = c;
        CHECK_MSG(chosen == NCCL_ALGO_RING * 3 + NCCL_PROTO_SIMPLE, "64 MiB chose %d", chosen);
    }
    CHECK_EQ_INT(t->finalize(ctx), ncclSuccess);
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    dlclose(h);
}

/* Decisions depend only on the inputs: two communicators agree call for call. */
static void test_deterministic(void)
{
    void *h = open_plugin();
    const ncclTuner_v5_t *t = h ? dlsym(h, "ncclTunerPlugin_v5") : NULL;
    void *a = NULL, *b = NULL;
    int diff = 0;
    CHECK(t != NULL);
    if (!t)
        return;
    setenv("NCCL_RAIL_TOPO_PROFILE", "hgx-b200", 1);
    CHECK_EQ_INT(t->init(&a, 1, 32, 4, test_logger, NULL, NULL), ncclSuccess);
    CHECK_EQ_INT(t->init(&b, 2, 32, 4, test_logger, NULL, NULL), ncclSuccess);
    for (int coll = 0; coll < 5; coll++)
        for (int l = 0; l <= 34; l++) {
            float ta[7][3], tb[7][3];
            int na = 0, nb = 0;
            fill_table(ta, 0x1fffff);
            fill_table(tb, 0x1fffff);
            t->getCollInfo(a, (ncclFunc_t)coll, (size_t)1 << l, 2, (float **)(void *)ta, 7, 3, 0,
                           &na);
            t->getCollInfo(b, (ncclFunc_t)coll, (size_t)1 << l, 2, (float **)(void *)tb, 7, 3, 0,
                           &nb);
            if (memcmp(ta, tb, sizeof(ta)) != 0 || na != nb)
                diff++;
        }
    CHECK_EQ_INT(diff, 0);
    t->finalize(a);
    t->finalize(b);
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    dlclose(h);
}

/* Single rank: NCCL sets only [RING][SIMPLE] = 0.0; the tuner leaves it. Unknown topology: hands
 * off. */
static void test_hands_off(void)
{
    void *h = open_plugin();
    const ncclTuner_v5_t *t = h ? dlsym(h, "ncclTunerPlugin_v5") : NULL;
    void *ctx = NULL;
    float before[7][3], after[7][3];
    int chosen, nch = 0;
    CHECK(t != NULL);
    if (!t)
        return;
    setenv("NCCL_RAIL_TOPO_PROFILE", "dgx-a100", 1);
    CHECK_EQ_INT(t->init(&ctx, 3, 1, 1, test_logger, NULL, NULL), ncclSuccess);
    fill_table(before, 0);
    before[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 0.0f;
    memcpy(after, before, sizeof(after));
    t->getCollInfo(ctx, ncclFuncAllReduce, 4096, 1, (float **)(void *)after, 7, 3, 0, &nch);
    CHECK(check_call(before, after, &chosen) && chosen == -1);
    t->finalize(ctx);
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    dlclose(h);

    /* No GPU anywhere (an NCCL topology file without GPUs): the model is inactive. */
    h = open_plugin();
    t = h ? dlsym(h, "ncclTunerPlugin_v5") : NULL;
    CHECK(t != NULL);
    if (!t)
        return;
    setenv("NCCL_TOPO_FILE", RAIL_FIXTURES "/tuner/no-gpu.xml", 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(&ctx, 4, 16, 2, test_logger, NULL, NULL), ncclSuccess);
    fill_table(before, 0x1fffff);
    memcpy(after, before, sizeof(after));
    t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)after, 7, 3, 0, &nch);
    CHECK(check_call(before, after, &chosen) && chosen == -1);
    t->finalize(ctx);
    /* NCCL may destroy a context twice: the second call is recognised without touching the freed
     * context (the ASan build fails here on a use-after-free), one WARN, success. */
    int warns = g_log_warns;
    CHECK_EQ_INT(t->finalize(ctx), ncclSuccess);
    CHECK_EQ_INT(g_log_warns, warns + 1);
    CHECK_EQ_INT(t->finalize(NULL), ncclSuccess);
    unsetenv("NCCL_TOPO_FILE");
    dlclose(h);
}

static void test_v2(void)
{
    void *h = open_plugin();
    const ncclTuner_v2_t *t = h ? dlsym(h, "ncclTunerPlugin_v2") : NULL;
    void *ctx = NULL;
    int bad = 0, set = 0;
    CHECK(t != NULL);
    if (!t)
        return;
    setenv("NCCL_RAIL_TOPO_PROFILE", "aws-p5", 1);
    CHECK_EQ_INT(t->init(8, 8, test_logger, &ctx), ncclSuccess);
    for (int coll = 0; coll < 5; coll++)
        for (int l = 0; l <= 34; l++)
            for (int nvls = 0; nvls <= 1; nvls++)
                for (int cn = 0; cn <= 1; cn++) {
                    int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF, nch = 0;
                    t->getCollInfo(ctx, (ncclFunc_t)coll, (size_t)1 << l, cn, nvls, 1, &algo,
                                   &proto, &nch);
                    if ((algo == NCCL_ALGO_UNDEF) != (proto == NCCL_PROTO_UNDEF))
                        bad++; /* both or neither */
                    if (!nvls && (algo == NCCL_ALGO_NVLS || algo == NCCL_ALGO_NVLS_TREE))
                        bad++;
                    if (!cn &&
                        (algo == NCCL_ALGO_COLLNET_DIRECT || algo == NCCL_ALGO_COLLNET_CHAIN))
                        bad++;
                    if (algo < NCCL_ALGO_UNDEF || algo >= NCCL_NUM_ALGORITHMS || proto < -1 ||
                        proto >= NCCL_NUM_PROTOCOLS)
                        bad++;
                    if (algo != NCCL_ALGO_UNDEF)
                        set++;
                }
    CHECK_EQ_INT(bad, 0);
    CHECK(set > 0);
    t->destroy(ctx);

    /* NCCL_PROTO set by the user: v2 cannot see it in a cost table, so it stays hands-off. */
    setenv("NCCL_PROTO", "Simple", 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(8, 1, test_logger, &ctx), ncclSuccess);
    {
        int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF, nch = 0;
        t->getCollInfo(ctx, ncclFuncAllReduce, 8, 0, 0, 1, &algo, &proto, &nch);
        CHECK(algo == NCCL_ALGO_UNDEF && proto == NCCL_PROTO_UNDEF);
    }
    t->destroy(ctx);
    CHECK_EQ_INT(t->destroy(ctx), ncclSuccess); /* v2 destroy twice: ignored */
    unsetenv("NCCL_PROTO");
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    dlclose(h);
}

/* A malformed rules file fails init (strict); NCCL_RAIL_CONFIG_LENIENT=1 lets it through. */
static void test_rules_strict(void)
{
    void *h = open_plugin();
    const ncclTuner_v4_t *t = h ? dlsym(h, "ncclTunerPlugin_v4") : NULL;
    void *ctx = NULL;
    int warns;
    CHECK(t != NULL);
    if (!t)
        return;
    setenv("NCCL_RAIL_TOPO_PROFILE", "dgx-h100", 1);
    setenv("NCCL_TUNER_CONFIG_FILE", RAIL_FIXTURES "/tuner/bad-rules.conf", 1);
    warns = g_log_warns;
    CHECK(t->init(16, 2, test_logger, &ctx) != ncclSuccess);
    CHECK(g_log_warns > warns);
    setenv("NCCL_RAIL_CONFIG_LENIENT", "1", 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(16, 2, test_logger, &ctx), ncclSuccess);
    /* The valid rule of that file forces Tree/LL128 for 1 MiB AllReduce. */
    {
        float tab[7][3];
        int nch = 0;
        fill_table(tab, 0x1fffff);
        t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)tab, 7, 3, 0, &nch);
        CHECK(tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128] == 0.0f);
        CHECK_EQ_INT(nch, 4);
        /* ...but never revives an IGNORE entry: the model decides instead. */
        fill_table(tab, 0x1fffff & ~(1u << (NCCL_ALGO_TREE * 3 + NCCL_PROTO_LL128)));
        t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)tab, 7, 3, 0, &nch);
        CHECK(tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128] < 0.0f);
    }
    t->destroy(ctx);
    unsetenv("NCCL_RAIL_CONFIG_LENIENT");
    unsetenv("NCCL_TUNER_CONFIG_FILE");

    /* The implicit ./nccl_tuner.conf (NCCL's example default) never fails init: bad lines in a
     * file nobody named are skipped with a WARN, good lines apply. */
    {
        char dir[] = "/tmp/rail-tuner-abi-XXXXXX", cwd[4096];
        FILE *f;
        float tab[7][3];
        int nch = 0;
        CHECK(getcwd(cwd, sizeof(cwd)) != NULL && mkdtemp(dir) != NULL && chdir(dir) == 0);
        f = fopen("nccl_tuner.conf", "w");
        CHECK(f != NULL);
        if (f) {
            fputs(
                "allreduce,0,4294967295,tree,ll128,2,-1,-1\nallreduce,0,100,warp,simple,-1,-1,-1\n",
                f);
            fclose(f);
        }
        warns = g_log_warns;
        ctx = NULL;
        CHECK_EQ_INT(t->init(16, 2, test_logger, &ctx), ncclSuccess);
        CHECK(g_log_warns > warns);
        fill_table(tab, 0x1fffff);
        t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)(void *)tab, 7, 3, 0, &nch);
        CHECK(tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128] == 0.0f);
        t->destroy(ctx);
        unlink("nccl_tuner.conf");
        CHECK(chdir(cwd) == 0);
        rmdir(dir);
    }
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    dlclose(h);
}

/* v6 getChunkSize: NCCL's chunk size stands unless the rules file names one for the call's
 * (algo, proto); the answer follows the first matching rule. */
static void test_v6_chunk_size(void)
{
    void *h = open_plugin();
    const ncclTuner_v6_t *t = h ? dlsym(h, "ncclTunerPlugin_v6") : NULL;
    ncclNvlDomainInfo_v5_t nvl = {2, 8, 8};
    ncclTunerConstants_v5_t consts;
    char path[] = "/tmp/rail-tuner-chunk-XXXXXX";
    void *ctx = NULL;
    size_t chunk;
    int fd = mkstemp(path);

    CHECK(t != NULL && fd >= 0);
    if (!t || fd < 0)
        return;
    rail_model_default_constants(&consts);
    setenv("NCCL_RAIL_TOPO_PROFILE", "aws-p5", 1);
    /* No rules: every call keeps NCCL's value, also for bad arguments. */
    CHECK_EQ_INT(t->init(&ctx, 1, 16, 2, test_logger, &nvl, &consts), ncclSuccess);
    chunk = 131072;
    CHECK_EQ_INT(t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE,
                                 8, &chunk),
                 ncclSuccess);
    CHECK_EQ_INT((int)chunk, 131072);
    CHECK_EQ_INT(t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, 1, 2, 8, NULL), ncclSuccess);
    CHECK_EQ_INT(t->getChunkSize(NULL, ncclFuncAllReduce, 1 << 20, 1, 2, 8, &chunk), ncclSuccess);
    CHECK_EQ_INT((int)chunk, 131072);
    t->finalize(ctx);

    CHECK(write(fd,
                "allreduce,0,65536,ring,simple,-1,-1,-1,-1,-1,524288\n"
                "allreduce,0,1048576,tree,ll128,-1,2,-1,-1,-1,65536\n"
                "allreduce,0,1048576,ring,simple,-1,-1,-1,-1,-1,262144\n",
                157) == 157);
    close(fd);
    setenv("NCCL_TUNER_CONFIG_FILE", path, 1);
    ctx = NULL;
    CHECK_EQ_INT(t->init(&ctx, 1, 16, 2, test_logger, &nvl, &consts), ncclSuccess);
    chunk = 131072;
    t->getChunkSize(ctx, ncclFuncAllReduce, 4096, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    CHECK_EQ_INT((int)chunk, 524288); /* the first rule */
    chunk = 131072;
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    CHECK_EQ_INT((int)chunk, 262144); /* beyond the first rule's sizes */
    chunk = 131072;
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 8, &chunk);
    CHECK_EQ_INT((int)chunk, 65280); /* 65536 rounded down to LL128's 1920-byte grain */
    chunk = 131072; /* a pair no rule names, another collective, a size beyond every rule */
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, &chunk);
    t->getChunkSize(ctx, ncclFuncAllGather, 1 << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    t->getChunkSize(ctx, ncclFuncAllReduce, 1 << 21, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, &chunk);
    CHECK_EQ_INT((int)chunk, 131072);
    t->finalize(ctx);
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    unsetenv("NCCL_RAIL_TOPO_PROFILE");
    unlink(path);
    dlclose(h);
}

int main(void)
{
    unsetenv("NCCL_TOPO_FILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    test_lookup_order();
    test_v5_table();
    test_deterministic();
    test_hands_off();
    test_v2();
    test_rules_strict();
    test_v6_chunk_size();
    return check_report("test_tuner_abi");
}
