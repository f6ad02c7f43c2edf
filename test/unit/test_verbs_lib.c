/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IBVERBS_LIB: libnccl-net-rail.so, loaded as NCCL loads it, dlopens the libibverbs the
 * variable names at init (it does not link one). A library that cannot be loaded, or lacks a
 * function the plugin needs, declines the plugin with exactly one WARN naming the variable and
 * the library or the function; one that lacks only optional functions says so in one INFO and
 * carries on; the real library by path is used; the shm provider never loads libibverbs at all.
 * Each case runs in a child process (the library is loaded once per process). This test links
 * no libibverbs itself. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"

#define MAX_LINES 32
static char g_warn[MAX_LINES][1024], g_info[MAX_LINES][1024];
static int g_nwarn, g_ninfo;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    char *dst = NULL;
    if (level == NCCL_LOG_WARN && g_nwarn < MAX_LINES)
        dst = g_warn[g_nwarn++];
    else if (level == NCCL_LOG_INFO && g_ninfo < MAX_LINES)
        dst = g_info[g_ninfo++];
    if (!dst)
        return;
    va_start(ap, fmt);
    vsnprintf(dst, sizeof(g_warn[0]), fmt, ap);
    va_end(ap);
}

static int lines_with(char lines[][1024], int n, const char *a, const char *b)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += strstr(lines[i], a) && (!b || strstr(lines[i], b));
    return k;
}

static void dump(const char *what)
{
    fprintf(stderr, "%s:\n", what);
    for (int i = 0; i < g_nwarn; i++)
        fprintf(stderr, "  WARN %s\n", g_warn[i]);
    for (int i = 0; i < g_ninfo; i++)
        fprintf(stderr, "  INFO %s\n", g_info[i]);
}

/* In the child: the plugin's v12 init (twice: the verdict is logged once) and devices. */
static int init_plugin(int *init_ok)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/libnccl-net-rail.so", RAIL_BINARY_DIR);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const ncclNet_v12_t *n = dl ? dlsym(dl, "ncclNetPlugin_v12") : NULL;
    if (!n) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return -1;
    }
    ncclNetCommConfig_v12_t cfg = {-1};
    void *ctx = NULL;
    int ndev = -1;
    *init_ok = n->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess;
    int again = n->init(&ctx, 2, &cfg, logger, NULL) == ncclSuccess;
    int devs = n->devices(&ndev) == ncclSuccess;
    if (again != *init_ok || devs != *init_ok || (!*init_ok && ndev != 0)) {
        fprintf(stderr, "init %d, again %d, devices %d (%d)\n", *init_ok, again, devs, ndev);
        return -1;
    }
    return 0;
}

/* Runs fn in a child with NCCL_IBVERBS_LIB=lib (NULL: unset); the child's exit status is the
 * verdict (0 passed; it prints why otherwise). */
static void run_case(const char *name, const char *lib, int (*fn)(const char *lib))
{
    pid_t pid = fork();
    int status = 0;
    CHECK(pid >= 0);
    if (pid == 0) {
        if (lib)
            setenv("NCCL_IBVERBS_LIB", lib, 1);
        else
            unsetenv("NCCL_IBVERBS_LIB");
        int rc = fn(lib);
        if (rc)
            dump(name);
        _exit(rc ? 3 : 0);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %#x", name, status);
}

/* (a) a file that does not exist: declined, one WARN naming the variable and dlerror's text. */
static int missing_file(const char *lib)
{
    int ok = 1;
    if (init_plugin(&ok) != 0 || ok)
        return 1;
    char want[512];
    snprintf(want, sizeof(want), "NCCL_IBVERBS_LIB=%s: cannot load", lib);
    return !(g_nwarn == 1 && lines_with(g_warn, g_nwarn, want, "No such file") == 1);
}

/* (b) a library without ibv_create_qp: declined, one WARN naming the variable and the function. */
static int lacks_required(const char *lib)
{
    int ok = 1;
    (void)lib;
    if (init_plugin(&ok) != 0 || ok)
        return 1;
    return !(g_nwarn == 1 &&
             lines_with(g_warn, g_nwarn, "NCCL_IBVERBS_LIB=", "ibv_create_qp") == 1 &&
             lines_with(g_warn, g_nwarn, "libfake-ibverbs-missing.so", "IBVERBS_1.1") == 1);
}

/* A library with every required function but no optional one: one INFO names what is missing,
 * no WARN about the library; init goes on to the devices (none here: declined with an INFO). */
static int lacks_optional(const char *lib)
{
    int ok = 1;
    (void)lib;
    if (init_plugin(&ok) != 0)
        return 1;
    return !(lines_with(g_warn, g_nwarn, "libibverbs", NULL) == 0 &&
             lines_with(g_warn, g_nwarn, "NCCL_IBVERBS_LIB", NULL) == 0 &&
             lines_with(g_info, g_ninfo, "lacks ibv_reg_mr_iova2 (IBVERBS_1.8)",
                        "ibv_reg_dmabuf_mr (IBVERBS_1.12)") == 1 &&
             lines_with(g_info, g_ninfo, "NCCL_IBVERBS_LIB=", "loaded") == 1);
}

/* (c) the real library by absolute path: loaded (one INFO with the file), no WARN about it. On
 * this host there is no RDMA device: the VM runs it with devices (docs/net-plugin.md). */
static int real_library(const char *lib)
{
    int ok = 0;
    if (init_plugin(&ok) != 0)
        return 1;
    return !(lines_with(g_warn, g_nwarn, "NCCL_IBVERBS_LIB", NULL) == 0 &&
             lines_with(g_info, g_ninfo, "NCCL_IBVERBS_LIB=", "loaded") == 1 &&
             lines_with(g_info, g_ninfo, "loaded", lib) == 1 &&
             dlopen(lib, RTLD_NOW | RTLD_NOLOAD) != NULL);
}

/* The shm provider: works with NCCL_IBVERBS_LIB naming nothing, and no libibverbs is mapped. */
static int shm_provider(const char *lib)
{
    char fabric[64], shm[128];
    int ok = 0;
    (void)lib;
    snprintf(fabric, sizeof(fabric), "vlib-%d", (int)getpid());
    setenv("NCCL_RAIL_VERBS_PROVIDER", "shm", 1);
    setenv("NCCL_RAIL_SHM_FABRIC", fabric, 1);
    int rc = init_plugin(&ok);
    snprintf(shm, sizeof(shm), "/dev/shm/nccl-rail-shm-%u-%s", (unsigned)getuid(), fabric);
    unlink(shm);
    if (rc != 0 || !ok || g_nwarn != 0)
        return 1;
    if (dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD) != NULL) {
        fprintf(stderr, "libibverbs.so.1 is mapped in the shm provider's process\n");
        return 1;
    }
    return 0;
}

int main(void)
{
    char fake[4096];
    run_case("missing file", "/nonexistent/libibverbs.so.1", missing_file);
    snprintf(fake, sizeof(fake), "%s/test/fakeverbs/libfake-ibverbs-missing.so", RAIL_BINARY_DIR);
    run_case("lacks a required function", fake, lacks_required);
    snprintf(fake, sizeof(fake), "%s/test/fakeverbs/libfake-ibverbs-complete.so", RAIL_BINARY_DIR);
    run_case("lacks optional functions", fake, lacks_optional);
    if (access(RAIL_IBVERBS_SO, R_OK) == 0)
        run_case("real library", RAIL_IBVERBS_SO, real_library);
    else
        printf("test_verbs_lib: %s absent, the real-library case skipped\n", RAIL_IBVERBS_SO);
    run_case("shm provider", "/nonexistent/libibverbs.so.1", shm_provider);
    return check_report("test_verbs_lib");
}
