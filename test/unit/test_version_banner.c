/* SPDX-License-Identifier: Apache-2.0 */
/* Each plugin's first INFO line at init is the version banner naming the ABI table NCCL picked:
 * "RAIL nccl-rail X.Y.Z (git SHA): net plugin, ABI vN" for every exported ncclNetPlugin_vN and
 * "... tuner plugin, ABI vN" for every ncclTunerPlugin_vN, from both libraries (the net library
 * carries the tuner too). The version is the one the CLI prints (common/version.c); that it is
 * CMake's project(VERSION) is test/check_version.py's job. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "nccl/nccl_net.h"
#include "nccl/nccl_tuner.h"
#include "version.h"

static char g_first[1024];
static int g_infos;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags;
    (void)file;
    (void)line;
    if (level != NCCL_LOG_INFO || g_infos++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_first, sizeof(g_first), fmt, ap);
    va_end(ap);
}

static void reset(void)
{
    g_infos = 0;
    g_first[0] = '\0';
}

static void expect_banner(const char *what, int abi)
{
    char want[256];
    /* The tuner's names its trained table (NCCL_RAIL_MODEL_TABLE unset: the embedded one). */
    snprintf(want, sizeof(want), "RAIL %s: %s plugin, ABI v%d%s", rail_version_string(), what, abi,
             strcmp(what, "tuner") == 0 ? ", model table embedded" : "");
    CHECK_MSG(strcmp(g_first, want) == 0, "first INFO line '%s', expected '%s'", g_first, want);
}

static void *open_lib(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", RAIL_BINARY_DIR, name);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(dl != NULL, "dlopen %s: %s", path, dlerror());
    return dl;
}

static void check_tuner(void *dl)
{
    const ncclTuner_v7_t *v7 = dlsym(dl, "ncclTunerPlugin_v7");
    const ncclTuner_v6_t *v6 = dlsym(dl, "ncclTunerPlugin_v6");
    const ncclTuner_v5_t *v5 = dlsym(dl, "ncclTunerPlugin_v5");
    const ncclTuner_v4_t *v4 = dlsym(dl, "ncclTunerPlugin_v4");
    const ncclTuner_v3_t *v3 = dlsym(dl, "ncclTunerPlugin_v3");
    const ncclTuner_v2_t *v2 = dlsym(dl, "ncclTunerPlugin_v2");
    void *ctx;
    CHECK(v7 && v6 && v5 && v4 && v3 && v2);
    if (!(v7 && v6 && v5 && v4 && v3 && v2))
        return;
    reset();
    if (v7->init(&ctx, 1, 16, 2, logger, NULL, NULL) == ncclSuccess)
        v7->finalize(ctx);
    expect_banner("tuner", 7);
    reset();
    if (v6->init(&ctx, 1, 16, 2, logger, NULL, NULL) == ncclSuccess)
        v6->finalize(ctx);
    expect_banner("tuner", 6);
    reset();
    if (v5->init(&ctx, 1, 16, 2, logger, NULL, NULL) == ncclSuccess)
        v5->finalize(ctx);
    expect_banner("tuner", 5);
#define OLD(t, n)                                                                                  \
    do {                                                                                           \
        reset();                                                                                   \
        if ((t)->init(16, 2, logger, &ctx) == ncclSuccess)                                         \
            (t)->destroy(ctx);                                                                     \
        expect_banner("tuner", n);                                                                 \
    } while (0)
    OLD(v4, 4);
    OLD(v3, 3);
    OLD(v2, 2);
#undef OLD
}

static void check_net(void *dl)
{
    const ncclNet_v12_t *v12 = dlsym(dl, "ncclNetPlugin_v12");
    const ncclNet_v11_t *v11 = dlsym(dl, "ncclNetPlugin_v11");
    const ncclNet_v10_t *v10 = dlsym(dl, "ncclNetPlugin_v10");
    const ncclNet_v9_t *v9 = dlsym(dl, "ncclNetPlugin_v9");
    const ncclNet_v8_t *v8 = dlsym(dl, "ncclNetPlugin_v8");
    const ncclNet_v7_t *v7 = dlsym(dl, "ncclNetPlugin_v7");
    const ncclNet_v6_t *v6 = dlsym(dl, "ncclNetPlugin_v6");
    ncclNetCommConfig_v11_t cfg = {-1};
    void *ctx = NULL;
    CHECK(v12 && v11 && v10 && v9 && v8 && v7 && v6);
    if (!(v12 && v11 && v10 && v9 && v8 && v7 && v6))
        return;
    /* Without RDMA init declines after the banner; with it, init succeeds: either is fine. */
    reset();
    if (v12->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess)
        v12->finalize(ctx);
    expect_banner("net", 12);
    reset();
    if (v11->init(&ctx, 2, &cfg, logger, NULL) == ncclSuccess)
        v11->finalize(ctx);
    expect_banner("net", 11);
    reset();
    (void)v10->init(logger, NULL);
    expect_banner("net", 10);
#define OLD(t, n)                                                                                  \
    do {                                                                                           \
        reset();                                                                                   \
        (void)(t)->init(logger);                                                                   \
        expect_banner("net", n);                                                                   \
    } while (0)
    OLD(v9, 9);
    OLD(v8, 8);
    OLD(v7, 7);
    OLD(v6, 6);
#undef OLD
}

int main(void)
{
    void *tuner = open_lib("libnccl-tuner-rail.so");
    void *net = open_lib("libnccl-net-rail.so");
    if (tuner)
        check_tuner(tuner);
    if (net) {
        check_net(net);
        check_tuner(net); /* NCCL's tuner fallback: the net library's own tuner tables */
    }
    return check_report("test_version_banner");
}
