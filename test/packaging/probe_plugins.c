/* SPDX-License-Identifier: Apache-2.0 */
/* After `dpkg -i` (or an rpm install): repeat NCCL's plugin lookup on the installed files.
 * NCCL dlopen()s the bare file name with RTLD_NOW|RTLD_LOCAL and no help from LD_LIBRARY_PATH,
 * then dlsym()s the versioned table; a missing dependency fails the dlopen. This probe does the
 * same for libnccl-net-rail.so (ncclNetPlugin_v11, and ncclTunerPlugin_v5 that NCCL falls back
 * to) and libnccl-tuner-rail.so (ncclTunerPlugin_v5), prints where each was found, checks it is
 * in LIBDIR when given, and that each plugin's first INFO line at init is the version banner.
 * usage: probe_plugins VERSION [LIBDIR]   prints "probe: N passed, M failed", exit 1 on failure */
#define _GNU_SOURCE /* dlinfo, realpath */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/nccl_net.h"
#include "nccl/nccl_tuner.h"

static int passed, failed;
static char first_info[1024];
static int infos;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL: ");                                                                      \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags;
    (void)file;
    (void)line;
    if (level != NCCL_LOG_INFO || infos++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(first_info, sizeof(first_info), fmt, ap);
    va_end(ap);
}

static void *open_plugin(const char *name, const char *libdir)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    struct link_map *lm = NULL;
    EXPECT(h != NULL, "dlopen(\"%s\", RTLD_NOW|RTLD_LOCAL): %s", name, dlerror());
    if (!h)
        return NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
        printf("%s -> %s\n", name, lm->l_name);
        if (libdir) { /* /lib is /usr/lib on merged-/usr systems: compare real paths */
            char *dir = realpath(libdir, NULL), *got = realpath(lm->l_name, NULL);
            char *slash = got ? strrchr(got, '/') : NULL;
            if (slash)
                *slash = '\0';
            EXPECT(dir && got && strcmp(dir, got) == 0, "%s was found at %s, not in %s", name,
                   lm->l_name, libdir);
            free(dir);
            free(got);
        }
    } else {
        EXPECT(0, "dlinfo(%s): %s", name, dlerror());
    }
    return h;
}

static void expect_banner(const char *version, const char *what, int abi)
{
    char want[128], abi_s[64];
    snprintf(want, sizeof(want), "RAIL nccl-rail %s (git ", version);
    snprintf(abi_s, sizeof(abi_s), "): %s plugin, ABI v%d", what, abi);
    EXPECT(strncmp(first_info, want, strlen(want)) == 0 && strstr(first_info, abi_s),
           "first INFO line at %s init: '%s', expected '%s...%s'", what, first_info, want, abi_s);
    if (strstr(first_info, abi_s))
        printf("  %s\n", first_info);
}

static void probe_tuner(void *h, const char *lib, const char *version)
{
    const ncclTuner_v5_t *t = dlsym(h, "ncclTunerPlugin_v5");
    void *ctx = NULL;
    EXPECT(t != NULL, "%s: no ncclTunerPlugin_v5: %s", lib, dlerror());
    if (!t)
        return;
    printf("  %s: ncclTunerPlugin_v5 \"%s\"\n", lib, t->name);
    infos = 0;
    first_info[0] = '\0';
    if (t->init(&ctx, 1, 16, 2, logger, NULL, NULL) == ncclSuccess)
        t->finalize(ctx);
    expect_banner(version, "tuner", 5);
}

int main(int argc, char **argv)
{
    const char *version = argc > 1 ? argv[1] : NULL;
    const char *libdir = argc > 2 ? argv[2] : NULL;
    if (!version) {
        fprintf(stderr, "usage: probe_plugins VERSION [LIBDIR]\n");
        return 2;
    }
    EXPECT(getenv("LD_LIBRARY_PATH") == NULL, "LD_LIBRARY_PATH is set: NCCL's lookup must not "
                                              "need it (run with env -u LD_LIBRARY_PATH)");
    void *net = open_plugin("libnccl-net-rail.so", libdir);
    if (net) {
        const ncclNet_v11_t *n = dlsym(net, "ncclNetPlugin_v11");
        EXPECT(n != NULL, "libnccl-net-rail.so: no ncclNetPlugin_v11: %s", dlerror());
        if (n) {
            void *ctx = NULL;
            ncclNetCommConfig_v11_t cfg = {-1};
            printf("  libnccl-net-rail.so: ncclNetPlugin_v11 \"%s\"\n", n->name);
            infos = 0;
            first_info[0] = '\0';
            /* Without RDMA hardware init declines after the banner; with it, it succeeds. */
            if (n->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess)
                n->finalize(ctx);
            expect_banner(version, "net", 11);
        }
        probe_tuner(net, "libnccl-net-rail.so", version); /* NCCL's tuner fallback */
    }
    void *tuner = open_plugin("libnccl-tuner-rail.so", libdir);
    if (tuner)
        probe_tuner(tuner, "libnccl-tuner-rail.so", version);
    printf("probe: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
