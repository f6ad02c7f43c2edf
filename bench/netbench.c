/* SPDX-License-Identifier: Apache-2.0 */
/* netbench: point-to-point bandwidth and latency of ANY NCCL net plugin, driven through its
 * exported ncclNetPlugin_vN table the way NCCL's proxy drives it (host memory, NCCL_PTR_HOST,
 * one receive per irecv). Two processes: this one sends (on --send-dev), a forked child
 * receives (on --recv-dev); listen handles and results travel over a socketpair.
 *
 *   bandwidth: --size bytes per message, --inflight sends and receives outstanding, --iters
 *              timed messages after --warmup untimed ones; timed at the sender from the first
 *              isend to the last send completion (perftest's definition), MB/s = 2^20 B/s as
 *              perftest prints it.
 *   latency:   --lat-size byte ping-pong over two connections (send-dev -> recv-dev and back),
 *              receives posted two ahead; one-way = round trip / 2.
 *   checks:    every bandwidth message carries its number at both ends and its size is checked;
 *              the first and the last are compared byte by byte (--verify-all: every one);
 *              every latency message is compared byte by byte.
 * Output: one key=value line per test on stdout. Exit status 0 when every transfer completed
 * and verified; no speed is judged. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl/nccl_net.h"
#include "netbench_util.h"

#define PONG_SALT    0x9e3779b97f4a7c15ull
#define MAX_INFLIGHT 32

/* ---- bandwidth ---- */

static int bw_send(struct peer *p, void *sc, double *secs, struct report *r)
{
    const struct nb_opts *o = p->o;
    struct buf b[MAX_INFLIGHT];
    void *req[MAX_INFLIGHT] = {0};
    long long g = 0;
    int rc = 0, nb = 0;

    for (; nb < o->inflight && rc == 0; nb++) {
        rc = nb_buf_alloc(p, sc, &b[nb], o->size, r);
        if (rc == 0)
            nb_fill(b[nb].p, o->size, (uint64_t)nb);
    }
    for (int phase = 0; phase < 2 && rc == 0; phase++) {
        int count = phase ? o->iters : o->warmup;
        if (nb_barrier(p)) {
            rc = nb_fail(r, "control socket closed");
            break;
        }
        double t0 = nb_now();
        for (int i = 0; i < count && rc == 0; i++, g++) {
            int k = (int)(g % o->inflight);
            if (req[k] && (rc = nb_wait(p, req[k], NULL, r)) != 0)
                break;
            req[k] = NULL;
            nb_stamp(b[k].p, o->size, (uint64_t)g);
            rc = nb_post_send(p, sc, b[k].p, o->size, b[k].mh, &req[k], r);
        }
        for (int k = 0; k < o->inflight && rc == 0; k++) {
            if (req[k])
                rc = nb_wait(p, req[k], NULL, r);
            req[k] = NULL;
        }
        if (phase)
            *secs = nb_now() - t0;
    }
    r->msgs = g;
    for (int k = 0; k < nb; k++)
        nb_buf_free(p, sc, &b[k]);
    return rc;
}

static int bw_check(struct peer *p, struct buf *b, int k, long long g, int size, long long last,
                    struct report *r)
{
    const struct nb_opts *o = p->o;
    int full = o->verify_all || g == 0 || g == last;
    if ((size_t)size != o->size)
        return nb_fail(r, "message %lld: the plugin reported %d bytes, %zu were sent", g, size,
                       o->size);
    long bad = nb_check_msg(b->p, o->size, k, (uint64_t)g, full);
    if (bad >= 0)
        return nb_fail(r, "message %lld: wrong byte at offset %ld", g, bad);
    r->full_checks += full;
    r->msgs++;
    return 0;
}

static int bw_recv(struct peer *p, void *rcomm, struct report *r)
{
    const struct nb_opts *o = p->o;
    struct buf b[MAX_INFLIGHT];
    void *req[MAX_INFLIGHT] = {0};
    long long msg[MAX_INFLIGHT], g = 0, last = (long long)o->warmup + o->iters - 1;
    int rc = 0, nb = 0, size = 0;

    for (; nb < o->inflight && rc == 0; nb++)
        rc = nb_buf_alloc(p, rcomm, &b[nb], o->size, r);
    for (int phase = 0; phase < 2 && rc == 0; phase++) {
        int count = phase ? o->iters : o->warmup;
        if (nb_barrier(p)) {
            rc = nb_fail(r, "control socket closed");
            break;
        }
        for (int i = 0; i < count && rc == 0; i++, g++) {
            int k = (int)(g % o->inflight);
            if (req[k]) {
                rc = nb_wait(p, req[k], &size, r);
                if (rc == 0)
                    rc = bw_check(p, &b[k], k, msg[k], size, last, r);
                if (rc)
                    break;
            }
            /* Clear what the check will look at, so stale bytes cannot pass. */
            if (o->verify_all || g == 0 || g == last || o->size < 16)
                memset(b[k].p, 0xEE, o->size);
            else
                nb_stamp(b[k].p, o->size, ~(uint64_t)0);
            msg[k] = g;
            rc = nb_post_recv(p, rcomm, b[k].p, o->size, b[k].mh, &req[k], r);
        }
        for (int k = 0; k < o->inflight && rc == 0; k++) {
            if (req[k]) {
                rc = nb_wait(p, req[k], &size, r);
                if (rc == 0)
                    rc = bw_check(p, &b[k], k, msg[k], size, last, r);
            }
            req[k] = NULL;
        }
    }
    for (int k = 0; k < nb; k++)
        nb_buf_free(p, rcomm, &b[k]);
    return rc;
}

/* ---- latency ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Ping-pong. The parent pings on sc and expects pongs on rcomm; the child echoes. */
static int lat_run(struct peer *p, int pinger, void *sc, void *rcomm, double *samples,
                   struct report *r)
{
    const struct nb_opts *o = p->o;
    const size_t size = o->lat_size;
    const int total = o->lat_warmup + o->lat_iters;
    struct buf sb[2] = {{0}}, rb[2] = {{0}};
    void *rreq[2] = {0};
    int rc = 0;

    for (int k = 0; k < 2 && rc == 0; k++) {
        rc = nb_buf_alloc(p, sc, &sb[k], size, r);
        if (rc == 0)
            rc = nb_buf_alloc(p, rcomm, &rb[k], size, r);
    }
    for (int k = 0; k < 2 && k < total && rc == 0; k++)
        rc = nb_post_recv(p, rcomm, rb[k].p, size, rb[k].mh, &rreq[k], r);
    if (rc == 0 && nb_barrier(p))
        rc = nb_fail(r, "control socket closed");
    double cal_s = 0;
    uint64_t cal_t = 0;
    for (int i = 0; i < total && rc == 0; i++) {
        int k = i % 2, got = -1;
        if (pinger && i == o->lat_warmup) { /* count the measured rounds' calls */
            p->calls.on = 1;
            cal_s = nb_now();
            cal_t = nb_ticks();
        }
        uint64_t in_seed = pinger ? (uint64_t)i ^ PONG_SALT : (uint64_t)i;
        uint64_t out_seed = pinger ? (uint64_t)i : (uint64_t)i ^ PONG_SALT;
        void *sreq = NULL;
        double t0 = nb_now(), t1;
        if (pinger) {
            nb_fill(sb[k].p, size, out_seed);
            rc = nb_post_send(p, sc, sb[k].p, size, sb[k].mh, &sreq, r);
        }
        if (rc == 0)
            rc = nb_wait(p, rreq[k], &got, r);
        t1 = nb_now();
        if (rc)
            break;
        if ((size_t)got != size) {
            rc = nb_fail(r, "latency message %d: the plugin reported %d bytes", i, got);
            break;
        }
        long bad = nb_compare(rb[k].p, 0, size, in_seed);
        if (bad >= 0) {
            rc = nb_fail(r, "latency message %d: wrong byte at offset %ld", i, bad);
            break;
        }
        r->msgs++;
        r->full_checks++;
        if (!pinger) {
            nb_fill(sb[k].p, size, out_seed);
            rc = nb_post_send(p, sc, sb[k].p, size, sb[k].mh, &sreq, r);
        }
        if (rc == 0 && i + 2 < total) {
            memset(rb[k].p, 0xEE, size);
            rc = nb_post_recv(p, rcomm, rb[k].p, size, rb[k].mh, &rreq[k], r);
        }
        if (rc == 0)
            rc = nb_wait(p, sreq, NULL, r);
        if (pinger && i >= o->lat_warmup)
            samples[i - o->lat_warmup] = (t1 - t0) * 0.5e6;
    }
    if (p->calls.on) {
        p->calls.on = 0;
        double s = nb_now() - cal_s;
        uint64_t t = nb_ticks() - cal_t;
        p->tick_ns = s > 0 && t > 0 ? s * 1e9 / (double)t : 0;
    }
    for (int k = 0; k < 2; k++) {
        nb_buf_free(p, sc, &sb[k]);
        nb_buf_free(p, rcomm, &rb[k]);
    }
    return rc;
}

/* ---- processes ---- */

/* A device by name, or a fused one ("a+b", see nb_net_find_dev). */
static int find_dev(struct peer *p, const char *name, struct report *r)
{
    char err[200];
    if (nb_net_find_dev(&p->net, name, &p->dev, err, sizeof(err)) != 0)
        return nb_fail(r, "%s", err);
    return 0;
}

/* Sets up the connections: A (parent -> child) always, B (child -> parent) for latency. */
static int connect_all(struct peer *p, int parent, void **sc, void **rcomm, struct report *r)
{
    void *lc = NULL;
    int rc;
    *sc = *rcomm = NULL;
    if (parent) {
        rc = p->o->lat ? nb_listen_send(p, &lc, r) : 0;
        if (rc == 0)
            rc = nb_connect(p, sc, r);
        if (rc == 0 && p->o->lat)
            rc = nb_accept(p, lc, rcomm, r);
    } else {
        rc = nb_listen_send(p, &lc, r);
        if (rc == 0)
            rc = nb_accept(p, lc, rcomm, r);
        if (rc == 0 && p->o->lat)
            rc = nb_connect(p, sc, r);
    }
    if (lc)
        nb_net_close_listen(&p->net, lc);
    return rc;
}

static int child_main(struct peer *p)
{
    struct report r[2] = {{1, 0, 0, ""}, {1, 0, 0, ""}}; /* bandwidth, latency */
    char err[300];
    void *sc = NULL, *rcomm = NULL;
    const char *so = p->o->recv_plugin ? p->o->recv_plugin : p->o->plugin;
    int rc = nb_net_load(&p->net, so, p->o->abi, p->o->verbose, err, sizeof(err));
    if (rc)
        nb_fail(&r[0], "%s", err);
    if (rc == 0)
        rc = find_dev(p, p->o->recv_dev, &r[0]);
    if (rc == 0)
        rc = connect_all(p, 0, &sc, &rcomm, &r[0]);
    if (rc == 0 && p->o->bw)
        rc = bw_recv(p, rcomm, &r[0]);
    if (rc == 0 && p->o->lat)
        rc = lat_run(p, 0, sc, rcomm, NULL, &r[1]);
    if (rc)
        fprintf(stderr, "netbench (receiving process): %s\n", r[0].ok ? r[1].why : r[0].why);
    nb_ctl_io(p->ctl, r, sizeof(r), 1);
    if (sc)
        nb_net_close_send(&p->net, sc);
    if (rcomm)
        nb_net_close_recv(&p->net, rcomm);
    nb_net_finalize(&p->net);
    return rc ? 1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: netbench PLUGIN.so [--send-dev NAME] [--recv-dev NAME] [--test bw|lat|both]\n"
            "       [--size B] [--inflight N] [--iters N] [--warmup N] [--lat-size B]\n"
            "       [--lat-iters N] [--lat-warmup N] [--abi 6..12] [--verify-all]\n"
            "       [--timeout S] [--yield] [--recv-sleep US] [--verbose] [--log-raw]\n"
            "       [--recv-plugin SO]\n"
            "Devices default to $FABRIC_DEV0 / $FABRIC_DEV1 (else rxe0 / rxe1). Both processes\n"
            "poll without pause (as perftest does); after a poll that made no progress --yield\n"
            "calls sched_yield (as NCCL's proxy thread does) and --recv-sleep lets the receiving\n"
            "process sleep US microseconds (like perftest's passive server). A device \"a+b\"\n"
            "that the plugin does not list is made with its makeVDevice (a fused NIC).\n"
            "--log-raw prints the plugin's log formats unformatted (arguments that do not\n"
            "match their format would crash the formatting). --recv-plugin loads another\n"
            "plugin (another release) in the receiving process: mixed-version connections.\n");
}

static int parse(int argc, char **argv, struct nb_opts *o)
{
    const char *d0 = getenv("FABRIC_DEV0"), *d1 = getenv("FABRIC_DEV1");
    *o = (struct nb_opts){.send_dev = d0 && *d0 ? d0 : "rxe0",
                          .recv_dev = d1 && *d1 ? d1 : "rxe1",
                          .bw = 1,
                          .lat = 1,
                          .size = 4194304,
                          .lat_size = 8,
                          .inflight = 8,
                          .iters = 64,
                          .warmup = 8,
                          .lat_iters = 1000,
                          .lat_warmup = 100,
                          .timeout = 60.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        long long n = v ? strtoll(v, &end, 0) : 0;
        int numeric = v && end && *end == '\0' && end != v;
        if (strcmp(a, "--verify-all") == 0) {
            o->verify_all = 1;
            continue;
        }
        if (strcmp(a, "--verbose") == 0) {
            o->verbose |= NB_LOG_INFO;
            continue;
        }
        if (strcmp(a, "--log-raw") == 0) {
            o->verbose |= NB_LOG_RAW;
            continue;
        }
        if (strcmp(a, "--yield") == 0) {
            o->yield = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (a[0] != '-') {
            if (o->plugin)
                return -1;
            o->plugin = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "netbench: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--send-dev") == 0)
            o->send_dev = v;
        else if (strcmp(a, "--recv-plugin") == 0)
            o->recv_plugin = v;
        else if (strcmp(a, "--recv-dev") == 0)
            o->recv_dev = v;
        else if (strcmp(a, "--test") == 0 &&
                 (!strcmp(v, "bw") || !strcmp(v, "lat") || !strcmp(v, "both"))) {
            o->bw = strcmp(v, "lat") != 0;
            o->lat = strcmp(v, "bw") != 0;
        } else if (numeric && n >= 1 && n <= (1ll << 31) && strcmp(a, "--size") == 0)
            o->size = (size_t)n;
        else if (numeric && n >= 1 && n <= (1 << 20) && strcmp(a, "--lat-size") == 0)
            o->lat_size = (size_t)n;
        else if (numeric && n >= 1 && n <= MAX_INFLIGHT && strcmp(a, "--inflight") == 0)
            o->inflight = (int)n;
        else if (numeric && n >= 1 && n <= 1000000 && strcmp(a, "--iters") == 0)
            o->iters = (int)n;
        else if (numeric && n >= 0 && n <= 1000000 && strcmp(a, "--warmup") == 0)
            o->warmup = (int)n;
        else if (numeric && n >= 1 && n <= 10000000 && strcmp(a, "--lat-iters") == 0)
            o->lat_iters = (int)n;
        else if (numeric && n >= 0 && n <= 1000000 && strcmp(a, "--lat-warmup") == 0)
            o->lat_warmup = (int)n;
        else if (numeric && n >= 6 && n <= 12 && strcmp(a, "--abi") == 0)
            o->abi = (int)n;
        else if (numeric && n >= 0 && n <= 1000000 && strcmp(a, "--recv-sleep") == 0)
            o->recv_sleep_us = (int)n;
        else if (numeric && n >= 1 && n <= 3600 && strcmp(a, "--timeout") == 0)
            o->timeout = (double)n;
        else {
            fprintf(stderr, "netbench: bad option or value: %s %s\n", a, v);
            return -1;
        }
    }
    if (!o->plugin) {
        fprintf(stderr, "netbench: no plugin given\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct nb_opts o;
    int sv[2], prc = parse(argc, argv, &o);
    if (prc) {
        usage(prc > 0 ? stdout : stderr);
        return prc > 0 ? 0 : 2;
    }
    /* Fork before anything touches verbs: each process loads the plugin itself. */
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("netbench: socketpair");
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("netbench: fork");
        return 1;
    }
    struct peer p = {.o = &o, .ctl = pid == 0 ? sv[1] : sv[0], .recv = pid == 0};
    close(pid == 0 ? sv[0] : sv[1]);
    if (pid == 0)
        _exit(child_main(&p));
    signal(SIGPIPE, SIG_IGN);

    struct report r = {1, 0, 0, ""}, lr = {1, 0, 0, ""}, cr[2];
    char err[300];
    void *sc = NULL, *rcomm = NULL;
    double bw_s = 0;
    double *samples = o.lat ? calloc((size_t)o.lat_iters, sizeof(double)) : NULL;
    int rc = nb_net_load(&p.net, o.plugin, o.abi, o.verbose, err, sizeof(err));
    if (rc)
        nb_fail(&r, "%s", err);
    else
        printf("netbench plugin=%s abi=v%d name=%s send=%s recv=%s mem=host poll=%s "
               "recv_sleep_us=%d\n",
               o.plugin, p.net.version, p.net.name, o.send_dev, o.recv_dev,
               o.yield ? "yield" : "spin", o.recv_sleep_us);
    fflush(stdout);
    if (rc == 0 && o.lat && !samples)
        rc = nb_fail(&r, "out of memory");
    if (rc == 0)
        rc = find_dev(&p, o.send_dev, &r);
    if (rc == 0)
        rc = connect_all(&p, 1, &sc, &rcomm, &r);
    if (rc == 0 && o.bw)
        rc = bw_send(&p, sc, &bw_s, &r);
    if (rc == 0 && o.lat)
        rc = lat_run(&p, 1, sc, rcomm, samples, &lr);
    if (rc != 0) /* unblock a child waiting for a barrier */
        shutdown(p.ctl, SHUT_WR);
    if (nb_ctl_io(p.ctl, cr, sizeof(cr), 0) != 0)
        cr[0] = cr[1] = (struct report){0, 0, 0, "the receiving process ended without a report"};
    int status = 0;
    waitpid(pid, &status, 0);

    int bw_ok = r.ok && cr[0].ok, lat_ok = bw_ok && lr.ok && cr[1].ok;
    if (o.bw && bw_ok) {
        double mbps = (double)o.size * o.iters / (1 << 20) / bw_s;
        printf("netbench bw size=%zu inflight=%d iters=%d warmup=%d seconds=%.3f MBps=%.2f "
               "bytes=%lld verified=OK msgs=%lld full=%lld\n",
               o.size, o.inflight, o.iters, o.warmup, bw_s, mbps, (long long)o.size * cr[0].msgs,
               cr[0].msgs, cr[0].full_checks);
    }
    if (o.lat && lat_ok) {
        int n = o.lat_iters;
        double sum = 0;
        qsort(samples, (size_t)n, sizeof(double), cmp_double);
        for (int i = 0; i < n; i++)
            sum += samples[i];
        printf("netbench lat size=%zu iters=%d warmup=%d median_us=%.2f avg_us=%.2f min_us=%.2f "
               "p99_us=%.2f verified=OK msgs=%lld\n",
               o.lat_size, n, o.lat_warmup, samples[n / 2], sum / n, samples[0],
               samples[(int)((n - 1) * 0.99)], lr.msgs + cr[1].msgs);
        /* Mean cost of one plugin call in the pinger's measured rounds (test: the call that
         * found the request done, and one that did not; isend includes the post's system call,
         * which under SoftRoCE runs the packet exchange itself). */
        double ns[NB_CALL_KINDS];
        for (int k = 0; k < NB_CALL_KINDS; k++)
            ns[k] = p.calls.n[k] ? (double)p.calls.ticks[k] * p.tick_ns / (double)p.calls.n[k] : 0;
        printf("netbench calls isend_ns=%.0f irecv_ns=%.0f recv_test_done_ns=%.0f "
               "recv_test_idle_ns=%.0f send_test_done_ns=%.0f send_test_idle_ns=%.0f\n",
               ns[NB_CALL_ISEND], ns[NB_CALL_IRECV], ns[NB_CALL_RECV_DONE], ns[NB_CALL_RECV_IDLE],
               ns[NB_CALL_SEND_DONE], ns[NB_CALL_SEND_IDLE]);
    }
    const char *why = !r.ok       ? r.why
                      : !cr[0].ok ? cr[0].why
                      : !lr.ok    ? lr.why
                      : !cr[1].ok ? cr[1].why
                                  : NULL;
    if (why)
        printf("netbench FAILED verified=NO: %s\n", why);
    free(samples);
    if (sc)
        nb_net_close_send(&p.net, sc);
    if (rcomm)
        nb_net_close_recv(&p.net, rcomm);
    nb_net_finalize(&p.net);
    return why || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ? 1 : 0;
}
