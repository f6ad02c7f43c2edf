/* SPDX-License-Identifier: Apache-2.0 */
/* Tuner cost per call: loads libnccl-tuner-rail.so like NCCL and calls getCollInfo in a loop.
 * Run under callgrind by bench/tuner_cost.sh, which subtracts the baseline loop (same table
 * refill, a no-op tuner) and prints instructions per call. Also prints a decision sweep. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost_model.h"
#include "nccl/nccl_tuner.h"

#define CALLS 100000

typedef ncclResult_t (*get_coll_info_fn)(void *, ncclFunc_t, size_t, int, float **, int, int, int,
                                         int *);

static ncclResult_t noop_get_coll_info(void *ctx, ncclFunc_t coll, size_t nbytes, int pipe,
                                       float **table, int na, int np, int reg, int *nch)
{
    (void)ctx, (void)coll, (void)nbytes, (void)pipe, (void)table, (void)na, (void)np, (void)reg;
    (void)nch;
    return ncclSuccess;
}

/* The same loop body for both runs: NCCL refills the table before every call. */
__attribute__((noinline)) static unsigned long run_loop(get_coll_info_fn fn, void *ctx)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    unsigned long sink = 0;
    for (int i = 0; i < CALLS; i++) {
        int nch = 0;
        size_t nbytes = (size_t)1 << (i % 34);
        for (int c = 0; c < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; c++)
            (&table[0][0])[c] = (c % 3 == 2 || c < 6) ? 1.0f + (float)c : -1.0f;
        fn(ctx, (ncclFunc_t)(i % 5), nbytes, 1, (float **)(void *)table, 7, 3, 0, &nch);
        sink += (unsigned long)nch + (table[1][2] == 0.0f);
    }
    return sink;
}

__attribute__((noinline)) unsigned long bench_loop_tuner(get_coll_info_fn fn, void *ctx)
{
    return run_loop(fn, ctx);
}

__attribute__((noinline)) unsigned long bench_loop_baseline(void *ctx)
{
    return run_loop(noop_get_coll_info, ctx);
}

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "build/libnccl-tuner-rail.so";
    const char *profile = argc > 2 ? argv[2] : "dgx-h100";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    const ncclTuner_v5_t *t;
    ncclTunerConstants_v5_t consts;
    void *ctx = NULL;

    if (!h) {
        fprintf(stderr, "tuner_cost: %s\n", dlerror());
        return 1;
    }
    t = dlsym(h, "ncclTunerPlugin_v5");
    if (!t) {
        fprintf(stderr, "tuner_cost: no ncclTunerPlugin_v5 in %s\n", lib);
        return 1;
    }
    setenv("NCCL_RAIL_TOPO_PROFILE", profile, 1);
    rail_model_default_constants(&consts);
    if (t->init(&ctx, 1, 16, 2, NULL, NULL, &consts) != ncclSuccess) {
        fprintf(stderr, "tuner_cost: init failed\n");
        return 1;
    }
    printf("loops of %d calls: %lu %lu\n", CALLS, bench_loop_tuner(t->getCollInfo, ctx),
           bench_loop_baseline(ctx));
    t->finalize(ctx);
    dlclose(h);
    return 0;
}
