/* SPDX-License-Identifier: Apache-2.0 */
/* bench/scale (scale.c): what the driver (scale.c: options, processes, snapshots, report) and the
 * connection work (scale_conns.c: setup, traffic, idle costs, close) share. */
#ifndef NCCL_RAIL_SCALE_H
#define NCCL_RAIL_SCALE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <time.h>

#include "nccl/nccl_net.h"
#include "netbench_abi.h"
#include "scale_smaps.h"
#include "transport/net_verbs.h"

extern struct nb_net g_net; /* the plugin: ours linked in, or --plugin PATH loaded */
#define NET (&g_net)

#define MAXP     16
#define HSIZE    NCCL_NET_HANDLE_MAXSIZE
#define SMALL    4096
#define LARGE    (256 << 10)
#define PAT_SPAN (64 << 10) /* message of connection c starts at pattern offset 8c mod this */
#define XWIN     64         /* connections with messages in flight at once per pair */

enum { S_BASE, S_CONN, S_TRAFFIC, S_CLOSED, S_N };
struct snap {
    long rss_kib, heap_kib;
    long cnt[RAIL_VERBS_NCOUNTS];
    struct smaps_snap sm; /* --smaps */
};
struct result {
    struct snap s[S_N];
    double setup_s, setup_cpu_s, test_ns, cycle_us;
    double setup_user_s, setup_sys_s; /* getrusage of the setup: user and kernel CPU */
    long setup_minflt;                /* page faults (minor) during the setup */
    long connect_calls, accept_calls; /* connect() / accept() calls during the setup */
    int nsend, nrecv, warns, ok;
    int fail_at;         /* --exhaust: 1-based connection whose connect/accept failed, 0: none */
    int fail_warns;      /* WARN lines while it was set up (the fault layer's own aside) */
    int peer_hung;       /* the other end of that connection never returned */
    char fail_warn[640]; /* the first of them */
};
struct shared {
    pthread_barrier_t bar;
    atomic_int failed;
    atomic_int exhaust_at; /* --exhaust: the first connection (1-based) a process saw fail */
    struct result res[MAXP];
    char handles[]; /* [src][dst][k] */
};

struct scale_opts {
    int conns, procs, rails, qps, window, msgs, traffic, exhaust, smaps;
    const char *plugin; /* NULL: ours, linked in (the verbs-seam counts are printed) */
    const char *devs;   /* "A,B": device names of process 0 and 1 (--provider verbs) */
    int verbs;          /* 1: kernel verbs (the plugin's default provider), not shm */
};
extern struct scale_opts o;
extern struct shared *g_sh;
extern int g_me, g_warns, g_counted; /* g_counted: WARNs outside the fault layer's */
extern char g_last_warn[640];
extern int g_dev[2]; /* plugin device of even / odd processes */

/* A connection of this process: to (send) or from (receive) peer p, channel k. */
struct conn {
    int peer, k;
    void *lc, *comm, *mh;
    void *req[2];
    int st;
    int slot; /* its receive buffers in the pool while its messages are in flight */
};

struct side {
    struct conn *c;
    int n;
};

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline uint8_t pat(size_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull;
    return (uint8_t)(x >> 56);
}

/* Marks the run failed and ends this process. */
void die(const char *what, int rc);
/* All processes meet; a process that finds the run failed ends. */
void barrier(void);
/* Connections of channels [0, kmax): set up in windows; r (or NULL) gets the wall and CPU time,
 * page faults and connect/accept calls of the setup. */
void open_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, size_t slen,
              uint8_t *rpool, size_t rlen, struct result *r);
/* One 4 KiB and one 256 KiB message over each connection of channels [0, kmax), checked. */
void traffic_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, uint8_t *rpool);
void close_all(struct side *snd, struct side *rcv);
/* test() with every comm idle, the 8-byte cycle (into r). */
void idle_costs(struct side *snd, struct side *rcv, uint8_t *smem, uint8_t *rpool,
                struct result *r);

#endif
