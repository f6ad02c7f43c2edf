/* SPDX-License-Identifier: Apache-2.0 */
#include "prof_plugin.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "params.h"
#include "prof_core.h"
#include "prof_format.h"
#include "safe_file.h"
#include "version.h"

struct prof_comm {
    struct rail_prof_ctx *core;
    int abi;
    bool write_failed; /* warned once */
    char path[4096];
};

/* Live contexts and the interval thread: one mutex. The thread writes files with it held, so a
 * finalize waits for a write of its context in progress and then owns the context alone. Each
 * thread runs while the generation it was started with is current: the finalize of the last
 * communicator ends that generation and joins that very thread, even when another
 * communicator's init starts a thread of the next generation before the join. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static struct prof_comm **g_comms;
static int g_ncomms, g_cap;
static pthread_t g_thread;
static bool g_running;
static uintptr_t g_generation;
static long long g_interval;
static void (*g_join_hook)(void);

void rail_prof_plugin_set_join_hook(void (*hook)(void))
{
    g_join_hook = hook;
}

/* ---- the file ---- */

static int write_file(struct prof_comm *p)
{
    struct rail_prof_counts counts;
    struct rail_prof_record *recs = malloc((size_t)p->core->ring_cap * sizeof(*recs));
    struct rail_file_out out;
    char err[4096 + 512], about[512], host[256] = "?";
    uint32_t n;
    int rc;

    if (!recs)
        return -ENOMEM;
    n = rail_prof_snapshot(p->core, recs, p->core->ring_cap, &counts);
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    snprintf(about, sizeof(about), "%s: profiler plugin, ABI v%d, host %s, pid %d",
             rail_version_string(), p->abi, host, (int)getpid());
    /* The output-file rule (safe_file.h): a regular file or nothing is replaced, atomically. */
    rc = rail_file_out_open(&out, p->path, err, sizeof(err));
    if (rc == 0) {
        rc = rail_prof_write(out.f, p->core, recs, n, &counts, about);
        if (rc < 0 && out.err) {
            rc = rail_file_out_fail(&out, err, sizeof(err));
        } else if (rc < 0) {
            snprintf(err, sizeof(err), "%s: %s", p->path, strerror(-rc));
            rail_file_out_abort(&out);
        } else {
            rc = rail_file_out_commit(&out, err, sizeof(err));
        }
    }
    free(recs);
    if (rc < 0 && !p->write_failed) {
        p->write_failed = true;
        RAIL_WARN(NCCL_INIT | NCCL_PROFILE, "profiler: cannot write %s", err);
    }
    return rc;
}

/* ---- the interval thread ---- */

static void *interval_main(void *arg)
{
    uintptr_t gen = (uintptr_t)arg;
    pthread_mutex_lock(&g_lock);
    while (g_generation == gen) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)g_interval;
        while (g_generation == gen && pthread_cond_timedwait(&g_wake, &g_lock, &ts) != ETIMEDOUT)
            ;
        for (int i = 0; i < g_ncomms && g_generation == gen; i++)
            write_file(g_comms[i]);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static int registry_add(struct prof_comm *p, long long interval)
{
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    if (g_ncomms == g_cap) {
        int cap = g_cap ? g_cap * 2 : 8;
        struct prof_comm **n = realloc(g_comms, (size_t)cap * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&g_lock);
            return -ENOMEM;
        }
        g_comms = n;
        g_cap = cap;
    }
    g_comms[g_ncomms++] = p;
    if (interval > 0 && !g_running) {
        g_interval = interval;
        rc = -pthread_create(&g_thread, NULL, interval_main, (void *)g_generation);
        g_running = rc == 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (rc < 0)
        RAIL_WARN(NCCL_INIT | NCCL_PROFILE,
                  "profiler: cannot start the NCCL_RAIL_PROFILE_INTERVAL thread (%s): files are "
                  "written at finalize only",
                  strerror(-rc));
    return 0;
}

/* Forget p; the last context stops the thread (the library may be unloaded after finalize). */
static void registry_remove(struct prof_comm *p)
{
    bool join = false;
    pthread_t thread = (pthread_t)0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_ncomms; i++)
        if (g_comms[i] == p) {
            g_comms[i] = g_comms[--g_ncomms];
            break;
        }
    if (g_ncomms == 0 && g_running) {
        thread = g_thread; /* this generation's thread, whatever starts after the unlock */
        g_generation++;
        g_running = false;
        join = true;
        pthread_cond_broadcast(&g_wake);
    }
    if (g_ncomms == 0) { /* nothing of ours outlives the last communicator (dlclose) */
        free(g_comms);
        g_comms = NULL;
        g_cap = 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (join && g_join_hook)
        g_join_hook();
    if (join)
        pthread_join(thread, NULL);
}

int rail_prof_plugin_flush_all(void)
{
    int n = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < g_ncomms; i++)
        n += write_file(g_comms[i]) == 0;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* ---- NCCL's entry points ---- */

ncclResult_t rail_prof_plugin_init(int abi, void **context, uint64_t comm_id, int *mask,
                                   const char *comm_name, int nnodes, int nranks, int rank,
                                   ncclDebugLogger_t logfn)
{
    const char *dir = rail_param_str(RAIL_PARAM_PROFILE_DIR);
    long long interval = rail_param_int(RAIL_PARAM_PROFILE_INTERVAL);
    struct prof_comm *p;
    char name[96];
    struct stat st;

    if (logfn)
        rail_log_set_logger(logfn);
    RAIL_INFO(NCCL_INIT | NCCL_PROFILE, "%s: profiler plugin, ABI v%d", rail_version_string(), abi);
    if (!context || !mask)
        return ncclInvalidArgument;
    *context = NULL;
    if (!dir) {
        *mask = 0; /* NCCL then calls nothing but finalize */
        RAIL_INFO(NCCL_INIT | NCCL_PROFILE,
                  "profiler: NCCL_RAIL_PROFILE_DIR is not set: no event is recorded");
        return ncclSuccess;
    }
    int src = stat(dir, &st), serr = errno;
    if (src != 0 || !S_ISDIR(st.st_mode)) {
        *mask = 0;
        RAIL_WARN(NCCL_INIT | NCCL_PROFILE,
                  "NCCL_RAIL_PROFILE_DIR='%s' is not a usable directory (%s): the profiler "
                  "records nothing",
                  dir, src != 0 ? strerror(serr) : "not a directory");
        return ncclSuccess;
    }
    if (nranks < 1 || nranks > RAIL_PROF_MAX_RANKS || rank < 0 || rank >= nranks || nnodes < 1 ||
        nnodes > nranks) {
        *mask = 0; /* a file calibrate would refuse: better none, and say why */
        RAIL_WARN(
            NCCL_INIT | NCCL_PROFILE,
            "profiler: comm 0x%" PRIx64 " announced rank %d of %d on %d node(s), out of "
            "range (0 <= rank < nranks <= %d, 1 <= nnodes <= nranks): nothing recorded for it",
            comm_id, rank, nranks, nnodes, RAIL_PROF_MAX_RANKS);
        return ncclSuccess;
    }
    p = calloc(1, sizeof(*p));
    if (!p || rail_prof_file_name(name, sizeof(name), comm_id, rank) != 0 ||
        snprintf(p->path, sizeof(p->path), "%s/%s", dir, name) >= (int)sizeof(p->path) ||
        rail_prof_ctx_create(&p->core, comm_id, comm_name, nnodes, nranks, rank,
                             (uint32_t)rail_param_int(RAIL_PARAM_PROFILE_RING)) != 0) {
        free(p);
        RAIL_WARN(NCCL_INIT | NCCL_PROFILE,
                  "profiler: out of memory or path too long: nothing recorded for comm 0x%" PRIx64,
                  comm_id);
        return ncclSuccess; /* the job goes on; the mask of other communicators stands */
    }
    p->abi = abi;
    registry_add(p, interval);
    *context = p;
    *mask = ncclProfileColl | ncclProfileKernelCh;
    RAIL_INFO(NCCL_INIT | NCCL_PROFILE,
              "profiler: comm 0x%" PRIx64 " rank %d of %d on %d node(s): collectives with their "
              "GPU time into a ring of %u, written to %s at finalize%s",
              comm_id, rank, nranks, nnodes, p->core->ring_cap, p->path,
              interval > 0 ? " and periodically (NCCL_RAIL_PROFILE_INTERVAL)" : "");
    return ncclSuccess;
}

ncclResult_t rail_prof_plugin_start(void *context, void **handle,
                                    const ncclProfilerEventDescr_v5_t *d)
{
    struct prof_comm *p = context;
    if (handle)
        *handle = p && handle ? rail_prof_start(p->core, d) : NULL;
    return ncclSuccess;
}

ncclResult_t rail_prof_plugin_stop(void *handle)
{
    rail_prof_stop(handle);
    return ncclSuccess;
}

ncclResult_t rail_prof_plugin_record(void *handle, ncclProfilerEventState_t state,
                                     const ncclProfilerEventStateArgs_v5_t *args)
{
    rail_prof_record_state(handle, state, args);
    return ncclSuccess;
}

ncclResult_t rail_prof_plugin_finalize(void *context)
{
    struct prof_comm *p = context;
    struct rail_prof_counts k;
    if (!p)
        return ncclSuccess;
    registry_remove(p);
    int rc = write_file(p);
    rail_prof_snapshot(p->core, NULL, 0, &k);
    RAIL_INFO(NCCL_INIT | NCCL_PROFILE,
              "profiler: comm 0x%" PRIx64 " rank %d: %" PRIu64 " collective(s) recorded (%" PRIu64
              " overwritten by newer ones), not recorded: %" PRIu64 " with every slot in flight, "
              "%" PRIu64 " without a GPU time, %" PRIu64
              " not a collective the tuner decides, %" PRIu64
              " given up (channels never all reported); %s %s",
              p->core->comm_id, p->core->rank, k.recorded, k.overwritten, k.busy, k.no_timing,
              k.other, k.abandoned, rc == 0 ? "written to" : "NOT written to", p->path);
    rail_prof_ctx_destroy(p->core);
    free(p);
    return ncclSuccess;
}
