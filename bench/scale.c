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
#include "scale.h"

extern const ncclNet_v11_t ncclNetPlugin_v11;

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
        open_all(&snd, &rcv, o.conns, smem, slen, rpool, rlen, NULL);
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
    open_all(&snd, &rcv, 1, smem, slen, rpool, rlen, NULL);
    traffic_all(&snd, &rcv, 1, smem, rpool);
    close_all(&snd, &rcv);
    barrier();
    snapshot(&r->s[S_BASE]);
    open_all(&snd, &rcv, o.conns, smem, slen, rpool, rlen, r);
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
    double setup = 0, setup_cpu = 0, user = 0, sys = 0;
    long minflt = 0, ncalls = 0, acalls = 0;
    long d[S_N][2 + RAIL_VERBS_NCOUNTS] = {{0}};
    for (int p = 0; p < o.procs; p++) {
        const struct result *r = &g_sh->res[p];
        pairs += r->nsend;
        setup = r->setup_s > setup ? r->setup_s : setup;
        setup_cpu += r->setup_cpu_s;
        user += r->setup_user_s;
        sys += r->setup_sys_s;
        minflt += r->setup_minflt;
        ncalls += r->connect_calls;
        acalls += r->accept_calls;
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
    printf("scale per_conn setup_user_ms=%.3f setup_sys_ms=%.3f setup_faults=%.1f "
           "connect_calls=%.1f accept_calls=%.1f (setup, all processes: getrusage)\n",
           user * 1e3 / (pairs > 0 ? pairs : 1), sys * 1e3 / (pairs > 0 ? pairs : 1),
           per(minflt, pairs), per(ncalls, pairs), per(acalls, pairs));
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
