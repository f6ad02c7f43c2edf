/* SPDX-License-Identifier: Apache-2.0 */
/* bench/scale: what one connection of the net plugin costs when a process holds thousands, on
 * the shm verbs provider (NCCL_RAIL_VERBS_PROVIDER=shm) or on kernel verbs (--provider verbs). It
 * drives the plugin through its ncclNetPlugin_v11 table, as NCCL's proxy does, and links the
 * plugin's code statically only to read the verbs objects counted at the seam
 * (transport/net_verbs.h); --plugin measures any other net plugin the same way.
 *
 *   --conns N      connections per ordered pair of processes (default 64; the shm provider holds
 *                  4,096 QPs and 8,192 memory regions per device context)
 *   --procs P      2 (default): process 0 sends to process 1 on N connections;
 *                  P > 2: all-to-all, every process sends to every other one on N connections
 *   --rails 1|2    one rail (shm0 / shm1) or two (shm0+shm2 / shm1+shm3)
 *   --qps Q        NCCL_IB_QPS_PER_CONNECTION
 *   --window W     connections set up at once per pair (1: one after the other, a latency)
 *   --msgs M       8-byte messages of the isend/irecv/test cycle (median of 3 rounds)
 *   --no-traffic   skip the 4 KiB + 256 KiB message on every connection
 *   --provider P   shm (default: NCCL_RAIL_VERBS_PROVIDER=shm and NCCL_RAIL_RAILS set here) or
 *                  verbs (the environment as given: kernel verbs, e.g. rdma_rxe in the VM)
 *   --devs A,B     plugin devices of process 0 and 1 by name ("a+b": a fused device); needed
 *                  with --provider verbs (and NCCL_RAIL_RAILS=A,B unless set, so that ours
 *                  has exactly these); default the plugin's devices 0 and 1
 *   --plugin PATH  any NCCL net plugin .so, loaded and driven through its ncclNetPlugin_vN table
 *                  (v6 .. v12, bench/netbench_abi.h) instead of ours linked in; the verbs-seam
 *                  counts (QPs, CQs, registered bytes) are then not printed
 *   --smaps        where the resident memory sits: /proc/self/smaps by kind of mapping (the
 *                  kernel rings a kernel verbs provider maps from /dev/infiniband/uverbsN, by
 *                  size; heap; anonymous), per connection, send and receive side apart
 *   --exhaust      resource exhaustion (with NCCL_RAIL_FAULT, test/scale_exhaustion.sh): no
 *                  warm-up, connections set up one after the other until one fails; the
 *                  connections before it then carry their messages, checked; prints the
 *                  failing connection and the WARN lines of that setup (fault layer's aside)
 *
 * Per process it records resident memory (/proc/self/statm), heap in use (mallinfo2) and the
 * live QPs, CQs and registered bytes, after a warm-up connection was opened and closed
 * (baseline), after every connection was set up, after one 4 KiB and one 256 KiB message went
 * over each (byte-checked), and after everything was closed. Output: key=value lines (stdout),
 * figures per connection (send and receive side together), see bench/README.md. Exit 0 when
 * every transfer completed and verified; no figure is judged. */

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl/nccl_net.h"
#include "netbench_abi.h"
#include "scale_smaps.h"
#include "transport/net_verbs.h"

extern const ncclNet_v11_t ncclNetPlugin_v11;
static struct nb_net g_net; /* the plugin: ours linked in, or --plugin PATH loaded */
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

static struct {
    int conns, procs, rails, qps, window, msgs, traffic, exhaust, smaps;
    const char *plugin; /* NULL: ours, linked in (the verbs-seam counts are printed) */
    const char *devs;   /* "A,B": device names of process 0 and 1 (--provider verbs) */
    int verbs;          /* 1: kernel verbs (the plugin's default provider), not shm */
} o = {64, 2, 1, 1, 1, 2000, 1, 0, 0, NULL, NULL, 0};
static struct shared *g_sh;
static int g_me, g_warns, g_counted; /* g_counted: WARNs outside the fault layer's */
static char g_last_warn[640];
static int g_dev[2]; /* plugin device of even / odd processes */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags;
    if (level != NCCL_LOG_WARN)
        return;
    g_warns++;
    char text[640];
    if (o.plugin) { /* a foreign plugin's arguments may not match its format: not formatted */
        snprintf(text, sizeof(text), "%s (arguments not formatted)", fmt ? fmt : "");
    } else {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
    }
    fprintf(stderr, "scale[%d] WARN %s:%d %s\n", g_me, file, line, text);
    if (!strstr(text, "fault injection") && !strstr(text, "NCCL_RAIL_FAULT")) {
        if (g_counted++ == 0)
            snprintf(g_last_warn, sizeof(g_last_warn), "%s", text);
    }
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "scale[%d]: %s failed (%d)\n", g_me, what, rc);
    atomic_store(&g_sh->failed, 1);
    _exit(1);
}

static void barrier(void)
{
    pthread_barrier_wait(&g_sh->bar);
    if (atomic_load(&g_sh->failed))
        _exit(1);
}

static void snapshot(struct snap *s)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    s->rss_kib = res * (sysconf(_SC_PAGESIZE) / 1024);
    struct mallinfo2 mi = mallinfo2();
    s->heap_kib = (long)((mi.uordblks + mi.hblkhd) / 1024);
    rail_verbs_counts(s->cnt);
    if (o.smaps)
        smaps_snapshot(&s->sm);
}

static uint8_t pat(size_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull;
    return (uint8_t)(x >> 56);
}

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

static char *handle(int src, int dst, int k)
{
    return g_sh->handles +
           (((size_t)src * (size_t)o.procs + (size_t)dst) * (size_t)o.conns + (size_t)k) * HSIZE;
}

static bool sends_to(int src, int dst)
{
    return src != dst && (o.procs > 2 || (src == 0 && dst == 1));
}

static void plan(struct side *snd, struct side *rcv, int kmax)
{
    snd->n = rcv->n = 0;
    for (int p = 0; p < o.procs; p++)
        for (int k = 0; k < kmax; k++) {
            if (sends_to(g_me, p))
                snd->c[snd->n++] = (struct conn){.peer = p, .k = k};
            if (sends_to(p, g_me))
                rcv->c[rcv->n++] = (struct conn){.peer = p, .k = k};
        }
}

static int my_dev(void)
{
    return g_dev[o.procs > 2 ? g_me % 2 : g_me];
}

/* --exhaust: connection c failed to set up (its comm stays NULL, st 8). */
static void exhausted(struct conn *c, int warns0)
{
    struct result *r = &g_sh->res[g_me];
    c->st = 8;
    if (r->fail_at)
        return;
    r->fail_at = c->k + 1;
    r->fail_warns = g_counted - warns0;
    snprintf(r->fail_warn, sizeof(r->fail_warn), "%s", g_last_warn);
    int zero = 0;
    atomic_compare_exchange_strong(&g_sh->exhaust_at, &zero, c->k + 1);
}

/* Sets up channels [k0, k1) of every pair: listen, then connect and accept until all are done. */
static void setup_window(struct side *snd, struct side *rcv, int k0, int k1, void *smem,
                         size_t slen, void *rmem, size_t rlen)
{
    int rc;
    for (int i = 0; i < rcv->n; i++) {
        struct conn *c = &rcv->c[i];
        if (c->k >= k0 && c->k < k1 &&
            (rc = nb_net_listen(NET, my_dev(), handle(c->peer, g_me, c->k), &c->lc)) != 0)
            die("listen", rc);
    }
    barrier();
    int warns0 = g_counted;
    g_last_warn[0] = '\0';
    double hung_at = 0;
    for (int left = 1; left;) {
        left = 0;
        if (o.exhaust && atomic_load(&g_sh->exhaust_at) && !hung_at)
            hung_at = now() + 30; /* the other end failed: this end has 30 s to follow */
        if (hung_at && now() > hung_at) {
            g_sh->res[g_me].peer_hung = 1;
            break;
        }
        for (int i = 0; i < snd->n; i++) {
            struct conn *c = &snd->c[i];
            if (c->k < k0 || c->k >= k1 || c->comm || c->st == 8)
                continue;
            rc = nb_net_connect(NET, my_dev(), handle(g_me, c->peer, c->k), &c->comm);
            if (rc && o.exhaust) {
                exhausted(c, warns0);
                continue;
            }
            if (rc)
                die("connect", rc);
            if (!c->comm)
                left = 1;
            else if ((rc = nb_net_reg(NET, c->comm, smem, slen, &c->mh)))
                die("regMr", rc);
        }
        for (int i = 0; i < rcv->n; i++) {
            struct conn *c = &rcv->c[i];
            if (c->k < k0 || c->k >= k1 || c->comm || c->st == 8)
                continue;
            rc = nb_net_accept(NET, c->lc, &c->comm);
            if (rc && o.exhaust) {
                nb_net_close_listen(NET, c->lc);
                c->lc = NULL;
                exhausted(c, warns0);
                continue;
            }
            if (rc)
                die("accept", rc);
            if (!c->comm) {
                left = 1;
                continue;
            }
            nb_net_close_listen(NET, c->lc);
            c->lc = NULL;
            if ((rc = nb_net_reg(NET, c->comm, rmem, rlen, &c->mh)))
                die("regMr", rc);
        }
    }
}

static size_t pat_off(const struct conn *c, int src, int dst)
{
    size_t id = ((size_t)src * (size_t)o.procs + (size_t)dst) * (size_t)o.conns + (size_t)c->k;
    return (id * 8) % PAT_SPAN;
}

/* One 4 KiB and one 256 KiB message over each connection of channels [k0, k1), checked. */
static void traffic_window(struct side *snd, struct side *rcv, int k0, int k1, uint8_t *smem,
                           uint8_t *rpool)
{
    static const size_t len[2] = {SMALL, LARGE};
    int rc, slot = 0;
    for (int i = 0; i < rcv->n; i++) {
        rcv->c[i].st = rcv->c[i].k >= k0 && rcv->c[i].k < k1 ? 0 : 9;
        if (rcv->c[i].st == 0)
            rcv->c[i].slot = slot++;
    }
    for (int i = 0; i < snd->n; i++)
        snd->c[i].st = snd->c[i].k >= k0 && snd->c[i].k < k1 ? 0 : 9;
    for (int left = 1; left;) {
        left = 0;
        for (int i = 0; i < snd->n; i++) {
            struct conn *c = &snd->c[i];
            for (int m = 0; m < 2 && c->st < 9; m++) {
                if (c->st == m) {
                    uint8_t *p = smem + pat_off(c, g_me, c->peer) + (m ? SMALL : 0);
                    if ((rc = nb_net_isend(NET, c->comm, p, len[m], 1 + m, c->mh, &c->req[m])))
                        die("isend", rc);
                    if (c->req[m])
                        c->st++;
                }
            }
            if (c->st == 2) {
                for (int m = 0; m < 2; m++) {
                    int done = 0;
                    if (c->req[m] && (rc = nb_net_test(NET, c->req[m], &done, NULL)))
                        die("test(send)", rc);
                    if (done)
                        c->req[m] = NULL;
                }
                if (!c->req[0] && !c->req[1])
                    c->st = 9;
            }
            left |= c->st < 9;
        }
        for (int i = 0; i < rcv->n; i++) {
            struct conn *c = &rcv->c[i];
            if (c->st >= 9)
                continue;
            /* Receive buffers: two per connection in flight, from a pool of XWIN pairs. */
            int b = c->slot;
            for (int m = 0; m < 2; m++) {
                if (c->st == m) {
                    void *p = rpool + (size_t)b * (SMALL + LARGE) + (m ? SMALL : 0);
                    if ((rc = nb_net_irecv(NET, c->comm, p, len[m], 1 + m, c->mh, &c->req[m])))
                        die("irecv", rc);
                    if (c->req[m])
                        c->st++;
                }
            }
            if (c->st == 2) {
                for (int m = 0; m < 2; m++) {
                    int done = 0, size = -1;
                    if (!c->req[m])
                        continue;
                    if ((rc = nb_net_test(NET, c->req[m], &done, &size)))
                        die("test(recv)", rc);
                    if (!done)
                        continue;
                    c->req[m] = NULL;
                    const uint8_t *p = rpool + (size_t)b * (SMALL + LARGE) + (m ? SMALL : 0);
                    size_t off = pat_off(c, c->peer, g_me) + (m ? SMALL : 0);
                    if ((size_t)size != len[m])
                        die("received size", size);
                    for (size_t j = 0; j < len[m]; j++)
                        if (p[j] != pat(off + j))
                            die("received bytes", (int)j);
                }
                if (!c->req[0] && !c->req[1])
                    c->st = 9;
            }
            left |= c->st < 9;
        }
    }
}

static void close_all(struct side *snd, struct side *rcv)
{
    for (int i = 0; i < snd->n; i++) {
        if (!snd->c[i].comm)
            continue;
        nb_net_dereg(NET, snd->c[i].comm, snd->c[i].mh);
        nb_net_close_send(NET, snd->c[i].comm);
        snd->c[i].comm = NULL;
    }
    for (int i = 0; i < rcv->n; i++) {
        if (rcv->c[i].lc)
            nb_net_close_listen(NET, rcv->c[i].lc);
        rcv->c[i].lc = NULL;
        if (!rcv->c[i].comm)
            continue;
        nb_net_dereg(NET, rcv->c[i].comm, rcv->c[i].mh);
        nb_net_close_recv(NET, rcv->c[i].comm);
        rcv->c[i].comm = NULL;
    }
}

/* Connections of channels [0, kmax): set up in windows, traffic in windows of XWIN. */
static void open_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, size_t slen,
                     uint8_t *rpool, size_t rlen, double *secs, double *cpu)
{
    plan(snd, rcv, kmax);
    barrier();
    double t0 = now(), c0 = cpu_now();
    for (int k = 0; k < kmax; k += o.window) {
        setup_window(snd, rcv, k, k + o.window < kmax ? k + o.window : kmax, smem, slen, rpool,
                     rlen);
        if (o.exhaust) {
            barrier();
            if (atomic_load(&g_sh->exhaust_at))
                break;
        }
    }
    barrier();
    if (secs)
        *secs = now() - t0;
    if (cpu)
        *cpu = cpu_now() - c0;
}

static void traffic_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, uint8_t *rpool)
{
    int per = XWIN / (o.procs - 1) > 0 ? XWIN / (o.procs - 1) : 1;
    for (int k = 0; k < kmax; k += per) {
        traffic_window(snd, rcv, k, k + per < kmax ? k + per : kmax, smem, rpool);
        barrier();
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* isend + irecv + test of 8 bytes over a connection from this process to itself, median of three
 * rounds of o.msgs, in microseconds of this process's CPU time. */
static double loop_cycle(uint8_t *smem, uint8_t *rpool)
{
    char h[HSIZE];
    void *lc = NULL, *sc = NULL, *rc = NULL, *smh = NULL, *rmh = NULL;
    int e;
    if ((e = nb_net_listen(NET, my_dev(), h, &lc)))
        die("listen(loop)", e);
    while (!sc || !rc) {
        if (!sc && (e = nb_net_connect(NET, my_dev(), h, &sc)))
            die("connect(loop)", e);
        if (!rc && (e = nb_net_accept(NET, lc, &rc)))
            die("accept(loop)", e);
    }
    nb_net_close_listen(NET, lc);
    if ((e = nb_net_reg(NET, sc, smem, 4096, &smh)) || (e = nb_net_reg(NET, rc, rpool, 4096, &rmh)))
        die("regMr(loop)", e);
    double us[3];
    for (int round = 0; round < 3; round++) {
        double t0 = cpu_now();
        for (int i = 0; i < o.msgs; i++) {
            void *rq = NULL, *sq = NULL;
            int rdone = 0, sdone = 0;
            while (!rq)
                if ((e = nb_net_irecv(NET, rc, rpool, 8, 5, rmh, &rq)))
                    die("irecv(cycle)", e);
            while (!sq)
                if ((e = nb_net_isend(NET, sc, smem, 8, 5, smh, &sq)))
                    die("isend(cycle)", e);
            while (!rdone || !sdone) {
                if (!sdone && (e = nb_net_test(NET, sq, &sdone, NULL)))
                    die("test(cycle)", e);
                if (!rdone && (e = nb_net_test(NET, rq, &rdone, NULL)))
                    die("test(cycle)", e);
            }
        }
        us[round] = (cpu_now() - t0) * 1e6 / o.msgs;
    }
    nb_net_dereg(NET, sc, smh);
    nb_net_dereg(NET, rc, rmh);
    nb_net_close_send(NET, sc);
    nb_net_close_recv(NET, rc);
    qsort(us, 3, sizeof(us[0]), cmp_d);
    return us[1];
}

/* With every connection open and idle: test() of a receive nothing will arrive for (process 1),
 * then 8-byte messages on process 0's first connection to process 1, one at a time. */
static void idle_costs(struct side *snd, struct side *rcv, uint8_t *smem, uint8_t *rpool,
                       struct result *r)
{
    int rc;
    if (g_me == 1) {
        void *req = NULL;
        int done = 0, calls = 200000;
        while (!req)
            if ((rc = nb_net_irecv(NET, rcv->c[0].comm, rpool, 8, 77, rcv->c[0].mh, &req)))
                die("irecv(idle)", rc);
        double t0 = cpu_now();
        for (int i = 0; i < calls; i++)
            if ((rc = nb_net_test(NET, req, &done, NULL)) || done)
                die("test(idle)", rc);
        r->test_ns = (cpu_now() - t0) * 1e9 / calls;
        barrier();
        while (!done)
            if ((rc = nb_net_test(NET, req, &done, NULL)))
                die("test(idle)", rc);
    } else if (g_me == 0) {
        barrier();
        void *req = NULL;
        int done = 0;
        while (!req)
            if ((rc = nb_net_isend(NET, snd->c[0].comm, smem, 8, 77, snd->c[0].mh, &req)))
                die("isend(idle)", rc);
        while (!done)
            if ((rc = nb_net_test(NET, req, &done, NULL)))
                die("test(idle)", rc);
    } else {
        barrier();
    }
    barrier();
    /* The cycle, in processes 0 and 1 one after the other, over a connection of the process to
     * itself (no scheduling between two processes in the figure): CPU time of this process. */
    for (int p = 0; p < 2; p++) {
        if (g_me == p)
            r->cycle_us = loop_cycle(smem, rpool);
        barrier();
    }
}

static int child(void)
{
    struct result *r = &g_sh->res[g_me];
    int ndev = 0, rc;
    char err[256];
    nb_net_set_logger(logger);
    if (o.plugin ? nb_net_load(NET, o.plugin, 0, 0, err, sizeof(err))
                 : nb_net_attach(NET, &ncclNetPlugin_v11, 11, "nccl-rail", err, sizeof(err))) {
        fprintf(stderr, "scale[%d]: %s\n", g_me, err);
        die("init", -1);
    }
    if ((rc = nb_net_devices(NET, &ndev)) || ndev < 2)
        die("devices (two plugin devices expected)", ndev);
    g_dev[0] = 0;
    g_dev[1] = 1;
    if (o.devs) { /* "A,B": by name, as NCCL_RAIL_RAILS names them ("a+b": fused) */
        char names[2][128] = {"", ""};
        if (sscanf(o.devs, "%127[^,],%127s", names[0], names[1]) != 2)
            die("--devs A,B", -EINVAL);
        for (int i = 0; i < 2; i++)
            if (nb_net_find_dev(NET, names[i], &g_dev[i], err, sizeof(err))) {
                fprintf(stderr, "scale[%d]: %s\n", g_me, err);
                die("--devs", -ENODEV);
            }
    }
    size_t slen = PAT_SPAN + SMALL + LARGE, rlen = (size_t)XWIN * (SMALL + LARGE);
    uint8_t *smem = aligned_alloc(4096, slen), *rpool = aligned_alloc(4096, rlen);
    struct side snd = {calloc((size_t)o.conns * MAXP, sizeof(struct conn)), 0};
    struct side rcv = {calloc((size_t)o.conns * MAXP, sizeof(struct conn)), 0};
    if (!smem || !rpool || !snd.c || !rcv.c)
        die("allocation", -ENOMEM);
    for (size_t i = 0; i < slen; i++)
        smem[i] = pat(i);
    memset(rpool, 0, rlen);
    if (o.exhaust) {
        open_all(&snd, &rcv, o.conns, smem, slen, rpool, rlen, NULL, NULL);
        int ok = atomic_load(&g_sh->exhaust_at);
        int upto = ok ? ok - 1 : o.conns; /* connections before the failing one */
        r->nsend = snd.n;
        r->nrecv = rcv.n;
        traffic_all(&snd, &rcv, upto, smem, rpool);
        barrier();
        close_all(&snd, &rcv);
        r->warns = g_warns;
        r->ok = 1;
        nb_net_finalize(NET);
        return 0;
    }
    /* Warm-up: one connection per pair, opened, used and closed (devices, caches, first QPs). */
    open_all(&snd, &rcv, 1, smem, slen, rpool, rlen, NULL, NULL);
    traffic_all(&snd, &rcv, 1, smem, rpool);
    close_all(&snd, &rcv);
    barrier();
    snapshot(&r->s[S_BASE]);
    open_all(&snd, &rcv, o.conns, smem, slen, rpool, rlen, &r->setup_s, &r->setup_cpu_s);
    snapshot(&r->s[S_CONN]);
    r->nsend = snd.n;
    r->nrecv = rcv.n;
    if (o.traffic)
        traffic_all(&snd, &rcv, o.conns, smem, rpool);
    barrier();
    snapshot(&r->s[S_TRAFFIC]);
    idle_costs(&snd, &rcv, smem, rpool, r);
    barrier();
    close_all(&snd, &rcv);
    barrier();
    snapshot(&r->s[S_CLOSED]);
    r->warns = g_warns;
    r->ok = 1;
    nb_net_finalize(NET);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: scale [--conns N] [--procs P] [--rails 1|2] [--qps Q] [--window W] "
                    "[--msgs M] [--no-traffic] [--provider shm|verbs] [--devs A,B] "
                    "[--plugin PATH] [--smaps]\n");
    exit(2);
}

static double per(long v, int n)
{
    return n > 0 ? (double)v / n : 0;
}

static void report(double wall)
{
    struct result sum = {0};
    int pairs = 0;
    double setup = 0, setup_cpu = 0;
    long d[S_N][2 + RAIL_VERBS_NCOUNTS] = {{0}};
    for (int p = 0; p < o.procs; p++) {
        const struct result *r = &g_sh->res[p];
        pairs += r->nsend;
        setup = r->setup_s > setup ? r->setup_s : setup;
        setup_cpu += r->setup_cpu_s;
        sum.warns += r->warns;
        for (int s = S_CONN; s < S_N; s++) {
            d[s][0] += r->s[s].rss_kib - r->s[S_BASE].rss_kib;
            d[s][1] += r->s[s].heap_kib - r->s[S_BASE].heap_kib;
            for (int i = 0; i < RAIL_VERBS_NCOUNTS; i++)
                d[s][2 + i] += r->s[s].cnt[i] - r->s[S_BASE].cnt[i];
        }
    }
    const struct result *s0 = &g_sh->res[0], *s1 = &g_sh->res[1];
    printf("scale procs=%d conns=%d rails=%d qps=%d window=%d pairs=%d provider=%s devs=%s "
           "plugin=%s\n",
           o.procs, o.conns, o.rails, o.qps, o.window, pairs, o.verbs ? "verbs" : "shm",
           o.devs ? o.devs : "0,1", o.plugin ? o.plugin : "linked-in");
    if (o.procs == 2)
        printf("scale per_conn send_rss_kib=%.1f recv_rss_kib=%.1f (after traffic)\n",
               per(s0->s[S_TRAFFIC].rss_kib - s0->s[S_BASE].rss_kib, pairs),
               per(s1->s[S_TRAFFIC].rss_kib - s1->s[S_BASE].rss_kib, pairs));
    printf("scale per_conn rss_kib=%.1f rss_traffic_kib=%.1f heap_kib=%.1f heap_traffic_kib=%.1f\n",
           per(d[S_CONN][0], pairs), per(d[S_TRAFFIC][0], pairs), per(d[S_CONN][1], pairs),
           per(d[S_TRAFFIC][1], pairs));
    if (o.procs == 2 && o.smaps) {
        smaps_report("send", &s0->s[S_BASE].sm, &s0->s[S_TRAFFIC].sm, pairs);
        smaps_report("recv", &s1->s[S_BASE].sm, &s1->s[S_TRAFFIC].sm, pairs);
    }
    if (!o.plugin)
        printf(
            "scale per_conn qps=%.2f cqs=%.2f cqes=%.1f mrs=%.2f reg_kib=%.1f reg_traffic_kib=%.1f "
            "user_mrs=%.2f\n",
            per(d[S_CONN][2 + RAIL_VERBS_QPS], pairs), per(d[S_CONN][2 + RAIL_VERBS_CQS], pairs),
            per(d[S_CONN][2 + RAIL_VERBS_CQES], pairs), per(d[S_CONN][2 + RAIL_VERBS_MRS], pairs),
            per(d[S_CONN][2 + RAIL_VERBS_MR_BYTES], pairs) / 1024,
            per(d[S_TRAFFIC][2 + RAIL_VERBS_MR_BYTES], pairs) / 1024,
            per(d[S_CONN][2 + RAIL_VERBS_USER_MRS], pairs));
    printf("scale per_conn setup_ms=%.3f setup_cpu_ms=%.3f (wall; CPU of all processes)\n",
           setup * 1e3 / (pairs > 0 ? pairs : 1), setup_cpu * 1e3 / (pairs > 0 ? pairs : 1));
    printf("scale idle test_ns=%.0f cycle_us=%.2f (CPU time; cycle: 8 B, median of 3 x %d)\n",
           s1->test_ns, s0->cycle_us > s1->cycle_us ? s0->cycle_us : s1->cycle_us, o.msgs);
    if (o.plugin)
        printf("scale closed heap_kib=%ld rss_kib=%ld (all processes, against the baseline)\n",
               d[S_CLOSED][1], d[S_CLOSED][0]);
    else
        printf("scale closed heap_kib=%ld shm_rings_kib=%ld rss_kib=%ld qps=%ld cqs=%ld mrs=%ld "
               "user_mrs=%ld (all processes, against the baseline)\n",
               d[S_CLOSED][1], d[S_CLOSED][2 + RAIL_VERBS_SHM_RINGS] / 1024, d[S_CLOSED][0],
               d[S_CLOSED][2 + RAIL_VERBS_QPS], d[S_CLOSED][2 + RAIL_VERBS_CQS],
               d[S_CLOSED][2 + RAIL_VERBS_MRS], d[S_CLOSED][2 + RAIL_VERBS_USER_MRS]);
    printf("scale warns=%d wall_s=%.1f\n", sum.warns, wall);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-traffic")) {
            o.traffic = 0;
            continue;
        }
        if (!strcmp(a, "--exhaust")) {
            o.exhaust = 1;
            continue;
        }
        if (!strcmp(a, "--smaps")) {
            o.smaps = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--plugin")) {
            o.plugin = v;
            continue;
        }
        if (!strcmp(a, "--devs")) {
            o.devs = v;
            continue;
        }
        if (!strcmp(a, "--provider") && (!strcmp(v, "shm") || !strcmp(v, "verbs"))) {
            o.verbs = !strcmp(v, "verbs");
            continue;
        }
        int x = atoi(v);
        if (!strcmp(a, "--conns") && x >= 1)
            o.conns = x;
        else if (!strcmp(a, "--procs") && x >= 2 && x <= MAXP)
            o.procs = x;
        else if (!strcmp(a, "--rails") && (x == 1 || x == 2))
            o.rails = x;
        else if (!strcmp(a, "--qps") && x >= 1 && x <= 128)
            o.qps = x;
        else if (!strcmp(a, "--window") && x >= 1)
            o.window = x;
        else if (!strcmp(a, "--msgs") && x >= 1)
            o.msgs = x;
        else
            usage();
    }
    if (o.window > o.conns)
        o.window = o.conns;
    char fabric[64], qps[16];
    snprintf(fabric, sizeof(fabric), "scale-%d", (int)getpid());
    snprintf(qps, sizeof(qps), "%d", o.qps);
    if (o.exhaust && o.plugin) {
        fprintf(stderr, "scale: --exhaust needs the linked-in plugin (no --plugin)\n");
        return 2;
    }
    if (!o.verbs) {
        setenv("NCCL_RAIL_VERBS_PROVIDER", "shm", 1);
        setenv("NCCL_RAIL_SHM_FABRIC", fabric, 1);
        setenv("NCCL_RAIL_RAILS", o.rails == 2 ? "shm0+shm2,shm1+shm3" : "shm0,shm1", 1);
    } else if (!o.devs) {
        fprintf(stderr, "scale: --provider verbs needs --devs A,B\n");
        return 2;
    } else {
        setenv("NCCL_RAIL_RAILS", o.devs, 0); /* ours: exactly these devices (a peer ignores it) */
    }
    setenv("NCCL_IB_QPS_PER_CONNECTION", qps, 1);
    setenv("NCCL_SOCKET_IFNAME", "lo", 0);
    /* Every connection keeps a socket: raise the descriptor limit to its hard limit. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    size_t hbytes = (size_t)o.procs * (size_t)o.procs * (size_t)o.conns * HSIZE;
    g_sh = mmap(NULL, sizeof(*g_sh) + hbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                -1, 0);
    if (g_sh == MAP_FAILED)
        return 1;
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&g_sh->bar, &ba, (unsigned)o.procs);
    double t0 = now();
    pid_t pid[MAXP];
    for (int p = 0; p < o.procs; p++) {
        pid[p] = fork();
        if (pid[p] == 0) {
            g_me = p;
            _exit(child());
        }
    }
    int bad = 0;
    for (int p = 0; p < o.procs; p++) {
        int st = 0;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            if (!bad) /* the others wait at a barrier forever: end them */
                for (int q = 0; q < o.procs; q++)
                    kill(pid[q], SIGKILL);
            bad = 1;
        }
    }
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm/nccl-rail-shm-%d-%s", (int)getuid(), fabric);
    unlink(path);
    for (int p = 0; p < o.procs && !bad; p++)
        bad = !g_sh->res[p].ok;
    if (bad) {
        fprintf(stderr, "scale: a process failed\n");
        return 1;
    }
    if (o.exhaust) {
        int at = atomic_load(&g_sh->exhaust_at);
        printf("scale exhaust conns=%d failed_at=%d verified=%d\n", o.conns, at,
               at ? at - 1 : o.conns);
        for (int p = 0; p < o.procs; p++) {
            const struct result *r = &g_sh->res[p];
            printf("scale exhaust proc=%d failed_at=%d warns=%d peer_hung=%d warn=%s\n", p,
                   r->fail_at, r->fail_warns, r->peer_hung, r->fail_warn);
        }
        return 0;
    }
    report(now() - t0);
    return 0;
}
