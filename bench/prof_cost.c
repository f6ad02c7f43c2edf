/* SPDX-License-Identifier: Apache-2.0 */
/* CPU cost of the profiler plugin per NCCL event: loads libnccl-tuner-rail.so like NCCL, turns
 * the profiler on (NCCL_RAIL_PROFILE_DIR), and replays what NCCL sends per collective: a Coll
 * start and stop and, per channel, a KernelCh start, the KernelChStop state and a stop. Prints
 * the wall time per event (best of several rounds) and per collective.
 * usage: prof_cost [LIB] [CHANNELS]   (default build/libnccl-tuner-rail.so, 8 channels) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl/nccl_profiler.h"

#define COLLS  200000
#define ROUNDS 5

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One collective as NCCL sends it: 2 + 3 x nch profiler calls. */
static void one_coll(const ncclProfiler_v5_t *p, void *ctx, uint64_t seq, int nch)
{
    ncclProfilerEventDescr_v5_t d = {0};
    ncclProfilerEventStateArgs_v5_t a;
    void *coll = NULL, *k[64];
    d.type = ncclProfileColl;
    d.coll.seqNumber = seq;
    d.coll.func = "AllReduce";
    d.coll.count = 1 << 20;
    d.coll.datatype = "ncclBfloat16";
    d.coll.nChannels = (uint8_t)nch;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    p->startEvent(ctx, &coll, &d);
    p->stopEvent(coll);
    for (int c = 0; c < nch; c++) {
        ncclProfilerEventDescr_v5_t kd = {0};
        kd.type = ncclProfileKernelCh;
        kd.parentObj = coll;
        kd.kernelCh.channelId = (uint8_t)c;
        kd.kernelCh.pTimer = 1000000 + seq * 10000;
        k[c] = NULL;
        p->startEvent(ctx, &k[c], &kd);
    }
    for (int c = 0; c < nch; c++) {
        a.kernelCh.pTimer = 1000000 + seq * 10000 + 5000 + (uint64_t)c;
        p->recordEventState(k[c], ncclProfilerKernelChStop, &a);
        p->stopEvent(k[c]);
    }
}

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "build/libnccl-tuner-rail.so";
    int nch = argc > 2 ? atoi(argv[2]) : 8;
    char dir[] = "/tmp/rail-prof-cost-XXXXXX";
    void *h, *ctx = NULL;
    const ncclProfiler_v5_t *p;
    int mask = 0;
    double best = 1e300;

    if (nch < 1 || nch > 64 || !mkdtemp(dir)) {
        fprintf(stderr, "usage: prof_cost [LIB] [CHANNELS 1..64]\n");
        return 2;
    }
    setenv("NCCL_RAIL_PROFILE_DIR", dir, 1);
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    p = h ? dlsym(h, "ncclProfiler_v5") : NULL;
    if (!p || p->init(&ctx, 0xbe7c, &mask, "bench", 2, 16, 0, NULL) != ncclSuccess || !ctx) {
        fprintf(stderr, "prof_cost: cannot load the profiler from %s\n", lib);
        return 1;
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (uint64_t i = 0; i < COLLS; i++)
            one_coll(p, ctx, (uint64_t)r * COLLS + i, nch);
        double per = (now_ns() - t0) / ((double)COLLS * (2 + 3 * nch));
        best = per < best ? per : best;
    }
    printf("profiler cost: %.1f ns per event (best of %d rounds of %d collectives, %d channels: "
           "%d events each), %.2f us per collective; target < 1000 ns per event\n",
           best, ROUNDS, COLLS, nch, 2 + 3 * nch, best * (2 + 3 * nch) / 1000.0);
    p->finalize(ctx);
    dlclose(h);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
