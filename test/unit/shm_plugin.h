/* SPDX-License-Identifier: Apache-2.0 */
/* The built net plugin through its v11 ABI on the shm verbs provider, both ends in the test's
 * process (test_mr_reuse, test_send_help): opened on a fabric of its own, devices by name, a
 * connected pair, a clock. */
#ifndef NCCL_RAIL_TEST_SHM_PLUGIN_H
#define NCCL_RAIL_TEST_SHM_PLUGIN_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct shm_plugin {
    const ncclNet_v11_t *n; /* NULL: not opened (the failure is recorded as a check) */
    void *ctx;
    int ndev;
    char shm[128]; /* the fabric's file: unlink it at the end */
};

/* Loads the plugin of this build tree on the fabric "<name>-<pid>" with NCCL_RAIL_RAILS=rails
 * (the caller sets any other variable first) and initialises it with logger. */
static inline void shm_plugin_open(struct shm_plugin *p, const char *name, const char *rails,
                                   ncclDebugLogger_t logger)
{
    char path[4096], fabric[64];
    snprintf(path, sizeof(path), "%s/libnccl-net-rail.so", RAIL_BINARY_DIR);
    snprintf(fabric, sizeof(fabric), "%s-%d", name, (int)getpid());
    snprintf(p->shm, sizeof(p->shm), "/dev/shm/nccl-rail-shm-%u-%s", (unsigned)getuid(), fabric);
    setenv("NCCL_RAIL_VERBS_PROVIDER", "shm", 1);
    setenv("NCCL_RAIL_SHM_FABRIC", fabric, 1);
    setenv("NCCL_RAIL_RAILS", rails, 1);
    unsetenv("NCCL_IB_HCA");
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(dl != NULL, "dlopen %s: %s", path, dlerror());
    p->n = dl ? dlsym(dl, "ncclNetPlugin_v11") : NULL;
    ncclNetCommConfig_v11_t cfg = {-1};
    p->ctx = NULL;
    p->ndev = 0;
    CHECK(p->n && p->n->init(&p->ctx, 1, &cfg, logger, NULL) == ncclSuccess);
    CHECK(p->n && p->n->devices(&p->ndev) == ncclSuccess);
}

/* The plugin's device index of the device named name, or -1. */
static inline int shm_plugin_dev(const struct shm_plugin *p, const char *name)
{
    for (int d = 0; p->n && d < p->ndev; d++) {
        ncclNetProperties_v11_t props;
        if (p->n->getProperties(d, &props) == ncclSuccess && strcmp(props.name, name) == 0)
            return d;
    }
    return -1;
}

/* A listen comm on rdev and a send / receive comm pair from sdev to it: 0, or -1 (what was made
 * is left in *lc, *sc, *rc, or NULL). */
static inline int shm_plugin_connect(const struct shm_plugin *p, int sdev, int rdev, void **lc,
                                     void **sc, void **rc)
{
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    *lc = *sc = *rc = NULL;
    if (p->n->listen(p->ctx, rdev, handle, lc) != ncclSuccess || !*lc)
        return -1;
    double t0 = now_s();
    while ((!*sc || !*rc) && now_s() - t0 < 30) {
        if (!*sc && p->n->connect(p->ctx, sdev, handle, sc, NULL) != ncclSuccess)
            return -1;
        if (!*rc && p->n->accept(*lc, rc, NULL) != ncclSuccess)
            return -1;
    }
    return *sc && *rc ? 0 : -1;
}

/* Tests k sends and their k receives alternately, as NCCL's proxy does, until every one is done or
 * limit_s seconds from t0 passed: 0, -4 (a send's test failed) or -3 (a receive's). done_s,
 * done_r and size (the receives' sizes) as the tests left them. */
static inline int shm_plugin_test_all(const ncclNet_v11_t *n, int k, void **sreq, void **rreq,
                                      int *done_s, int *done_r, int *size, double t0,
                                      double limit_s)
{
    int left = 0;
    for (int i = 0; i < k; i++)
        left += !done_s[i] + !done_r[i];
    while (left > 0 && now_s() - t0 < limit_s)
        for (int i = 0; i < k; i++) {
            if (!done_s[i]) {
                if (n->test(sreq[i], &done_s[i], NULL) != ncclSuccess)
                    return -4;
                left -= done_s[i];
            }
            if (!done_r[i]) {
                if (n->test(rreq[i], &done_r[i], &size[i]) != ncclSuccess)
                    return -3;
                left -= done_r[i];
            }
        }
    return 0;
}

#endif
