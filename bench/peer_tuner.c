/* SPDX-License-Identifier: Apache-2.0 */
/* Another tuner plugin next to this one, on the project's measurements (test/fixtures/tuner-data):
 * for every P5/P5en system, the regret of this tuner (each system replayed with a table fitted on
 * the other systems: leave one system out), of NCCL 2.28.9's default, and of a peer tuner plugin
 * loaded with dlopen (for example aws-ofi-nccl's libnccl-ofi-tuner.so; bench/peer_tuner.sh).
 *
 * The peer is driven as NCCL drives a tuner: init(nRanks, nNodes) per (system, collective,
 * shape), then getCollInfo per measured point with the cost table tuner_eval offers this tuner
 * (only the measured pairs available, holding NCCL's predicted times); its choice is the entry it
 * lowered most, NCCL's when it left the table alone. Scoring is tuner_eval's (tuner_eval_run.c):
 * regret = measured time of the choice / best measured time - 1. The ABI tried is the newest that
 * takes no constants table, in NCCL 2.28.9's order: v4, v3, v2.
 *
 * usage: peer_tuner [--data DIR] [--peer LIB.so] [--systems PREFIX] [--check] [--verbose]
 *   --systems PREFIX: the systems whose names start so (default "p5": p5_* and p5en_*);
 *   --check: exit 1 when on some system this tuner's mean regret is above the peer's + 0.5 point;
 *   --verbose: the peer's log lines on stderr (warnings always). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/nccl_tuner.h"
#include "tuner_eval.h"

struct peer {
    const char *path;
    const ncclTuner_v4_t *v4;
    const ncclTuner_v3_t *v3;
    const ncclTuner_v2_t *v2;
    const char *abi;
    int points, changed, inits, active;
};

static bool g_verbose;

static void peer_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                     const char *fmt, ...)
{
    (void)flags;
    if (!g_verbose && level != NCCL_LOG_WARN)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "peer %s:%d: ", file ? file : "?", line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int argmin(float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS])
{
    int best = -1;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            if (table[a][p] != NCCL_ALGO_PROTO_IGNORE &&
                (best < 0 ||
                 table[a][p] < table[best / NCCL_NUM_PROTOCOLS][best % NCCL_NUM_PROTOCOLS]))
                best = a * NCCL_NUM_PROTOCOLS + p;
    return best;
}

static void *peer_open(void *self, size_t nranks, size_t nnodes)
{
    struct peer *p = self;
    void *ctx = NULL;
    ncclResult_t rc = p->v4   ? p->v4->init(nranks, nnodes, peer_log, &ctx)
                      : p->v3 ? p->v3->init(nranks, nnodes, peer_log, &ctx)
                              : p->v2->init(nranks, nnodes, peer_log, &ctx);
    p->inits++;
    if (rc != ncclSuccess) {
        fprintf(stderr, "peer_tuner: %s: init(%zu ranks, %zu nodes) returned %d\n", p->path, nranks,
                nnodes, (int)rc);
        return NULL;
    }
    p->active += ctx != NULL;
    return ctx;
}

static void peer_choose(void *self, void *ctx, int coll, size_t bytes,
                        float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS])
{
    struct peer *p = self;
    int before = argmin(table), nch = 0;
    p->points++;
    if (!ctx)
        return;
    if (p->v4)
        p->v4->getCollInfo(ctx, (ncclFunc_t)coll, bytes, 1, (float **)table, NCCL_NUM_ALGORITHMS,
                           NCCL_NUM_PROTOCOLS, 0, &nch);
    else if (p->v3)
        p->v3->getCollInfo(ctx, (ncclFunc_t)coll, bytes, 1, (float **)table, NCCL_NUM_ALGORITHMS,
                           NCCL_NUM_PROTOCOLS, &nch);
    else {
        int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF;
        int nvls = table[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] != NCCL_ALGO_PROTO_IGNORE ||
                   table[NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE] != NCCL_ALGO_PROTO_IGNORE;
        p->v2->getCollInfo(ctx, (ncclFunc_t)coll, bytes, 0, nvls, 1, &algo, &proto, &nch);
        if (algo >= 0 && algo < NCCL_NUM_ALGORITHMS && proto >= 0 && proto < NCCL_NUM_PROTOCOLS &&
            table[algo][proto] != NCCL_ALGO_PROTO_IGNORE)
            table[algo][proto] = 0.0f;
    }
    p->changed += argmin(table) != before;
}

static void peer_close(void *self, void *ctx)
{
    struct peer *p = self;
    if (!ctx)
        return;
    if (p->v4)
        p->v4->destroy(ctx);
    else if (p->v3)
        p->v3->destroy(ctx);
    else
        p->v2->destroy(ctx);
}

static int peer_load(struct peer *p)
{
    void *h = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "peer_tuner: %s\n", dlerror());
        return -1;
    }
    if ((p->v4 = dlsym(h, "ncclTunerPlugin_v4")))
        p->abi = "v4";
    else if ((p->v3 = dlsym(h, "ncclTunerPlugin_v3")))
        p->abi = "v3";
    else if ((p->v2 = dlsym(h, "ncclTunerPlugin_v2")))
        p->abi = "v2";
    else {
        fprintf(stderr, "peer_tuner: %s exports no ncclTunerPlugin_v4, _v3 or _v2\n", p->path);
        return -1;
    }
    return 0; /* the handle stays open for the process */
}

static double mean_of(const struct sys_result *r, bool proj)
{
    return eval_mean(proj ? r->proj : r->nccl, r->n);
}

int main(int argc, char **argv)
{
    static struct td d;
    static struct sys_result ours[TD_MAX_SYSTEMS], peer_res[TD_MAX_SYSTEMS];
    struct eval_opts e = {.data = RAIL_FIXTURES "/tuner-data"};
    struct fit_opts fo;
    struct peer p = {0};
    const char *prefix = "p5";
    bool check = false;

    fit_opts_default(&fo);
    fo.published = RAIL_FIXTURES "/measurements/published.csv";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            e.data = argv[++i];
        else if (strcmp(argv[i], "--peer") == 0 && i + 1 < argc)
            p.path = argv[++i];
        else if (strcmp(argv[i], "--systems") == 0 && i + 1 < argc)
            prefix = argv[++i];
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--verbose") == 0)
            g_verbose = true;
        else {
            fprintf(stderr, "usage: peer_tuner [--data DIR] [--peer LIB.so] [--systems PREFIX] "
                            "[--check] [--verbose]\n");
            return 2;
        }
    }
    if (p.path && peer_load(&p) < 0)
        return 1;
    if (td_load(e.data, &d) < 0)
        return 1;
    e.d = &d;
    uint64_t mask = 0;
    for (int s = 0; s < d.nsys; s++)
        if (strncmp(d.names[s], prefix, strlen(prefix)) == 0)
            mask |= 1ull << s;
    if (!mask) {
        fprintf(stderr, "peer_tuner: no system named %s* in %s\n", prefix, e.data);
        return 1;
    }
    for (int s = 0; s < d.nsys; s++)
        if (mask >> s & 1) {
            if (eval_held_out(&e, &fo, s) < 0)
                return 1;
            ours[s] = e.res[s];
        }
    struct eval_peer ep = {
        .self = &p, .open = peer_open, .choose = peer_choose, .close = peer_close};
    if (p.path) {
        e.peer = &ep;
        if (eval_run(&e, mask) < 0)
            return 1;
        for (int s = 0; s < d.nsys; s++)
            peer_res[s] = e.res[s];
    }

    printf("Regret against the measured best, per system (mean; this tuner: leave one system "
           "out)\npeer: %s",
           p.path ? p.path : "peer not given (bench/peer_tuner.sh --peer LIB.so)");
    if (p.path)
        printf(" (tuner %s; active on %d of %d communicators, changed NCCL's choice at %d of %d "
               "points)",
               p.abi, p.active, p.inits, p.changed, p.points);
    printf("\n%-16s %6s %10s %10s %10s %s\n", "system", "points", "NCCL", "ours", "peer",
           "ours <= peer + 0.5 point");
    double sn = 0, so = 0, sp = 0;
    int ns = 0, bad = 0;
    for (int s = 0; s < d.nsys; s++) {
        if (!(mask >> s & 1))
            continue;
        double n = mean_of(&ours[s], false), o = mean_of(&ours[s], true);
        printf("%-16s %6d %9.1f%% %9.1f%%", d.names[s], ours[s].n, 100 * n, 100 * o);
        if (p.path) {
            double q = mean_of(&peer_res[s], true);
            bool ok = o <= q + 0.005;
            printf(" %9.1f%% %s", 100 * q, ok ? "yes" : "NO");
            bad += !ok;
            sp += q;
        }
        printf("\n");
        sn += n;
        so += o;
        ns++;
    }
    printf("%-16s %6d %9.1f%% %9.1f%%", "per-system mean", ns, 100 * sn / ns, 100 * so / ns);
    if (p.path)
        printf(" %9.1f%%", 100 * sp / ns);
    printf("\n");
    if (!p.path)
        return 0;
    printf("peer_tuner: this tuner at most 0.5 point above the peer on %d of %d systems\n",
           ns - bad, ns);
    return check && bad ? 1 : 0;
}
