/* SPDX-License-Identifier: Apache-2.0 */
/* netcost: the CPU cost of one message through ANY NCCL net plugin, for callgrind
 * (bench/net_cpu.sh runs it). One process holds both ends: it listens on --recv-dev, connects
 * from --send-dev and accepts, then for each --sizes entry runs --warmup untimed and --iters
 * measured cycles of
 *
 *     irecv (one receive) ; isend (again while it returns no request) ;
 *     test the send and the receive until both are done
 *
 * with host memory (NCCL_PTR_HOST), one message in flight. Every plugin call goes through one of
 * the wrappers nc_isend / nc_irecv / nc_test, which turn callgrind's collection on around the
 * call alone (run with --collect-atstart=no; --collect picks which kinds of call: isend, irecv,
 * stest = tests of sends, rtest = tests of receives); after each size's measured cycles the driver
 * asks callgrind for a dump named "netcost size=N", so each dump holds exactly those cycles' calls.
 * A last dump "netcost idle" holds --idle tests of a receive that nothing was sent to (the cost
 * of a test that finds nothing, to subtract where the fabric completes asynchronously).
 *
 * --idle-sleep US: after a round of tests that found nothing, sleep (outside the plugin) before
 * the next, doubling up to 16x: where the "NIC" is kernel work (SoftRoCE) this lets it finish
 * instead of counting thousands of polls. 0 (default): poll without pause (the shm provider moves
 * data only inside the plugin's calls, so its counts are deterministic).
 *
 * Output: one line per size with the calls made (isend, isend that returned no request, irecv,
 * tests that found their request done, tests that found nothing), and whether the last message
 * arrived byte-exact. Exit 1 when a call failed, a transfer did not complete within --timeout
 * seconds, or a byte differed. Without valgrind it runs the same calls and prints the same
 * counts. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl/nccl_net.h"
#include "netbench_abi.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT /* no valgrind headers: the same calls, nothing counted */
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#define CALLGRIND_ZERO_STATS       ((void)0)
#define CALLGRIND_TOGGLE_COLLECT   ((void)0)
#endif

#define TAG       0x4e43
#define MAX_SIZES 16

struct opts {
    const char *plugin, *send_dev, *recv_dev;
    size_t sizes[MAX_SIZES];
    int nsizes, iters, warmup, idle, idle_sleep_us, verbose;
    double timeout;
};

struct counts {
    long long isend, isend_null, irecv, test_done, test_idle;
};

/* Which calls callgrind collects (--collect): bits of these. */
enum { NC_ISEND = 1, NC_IRECV = 2, NC_STEST = 4, NC_RTEST = 8, NC_ALL = 15 };
static int g_collect = NC_ALL;

/* The only code callgrind collects in (--collect-atstart=no): each wrapper turns collection on
 * around its one plugin call (a client request, so no tail call or inlining can move the
 * boundary), when --collect names that kind of call. */
static int nc_isend(const struct nb_net *n, void *sc, void *d, size_t size, void *mh, void **req)
{
    int on = g_collect & NC_ISEND;
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    int rc = nb_net_isend(n, sc, d, size, TAG, mh, req);
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

static int nc_irecv(const struct nb_net *n, void *rc, void *d, size_t size, void *mh, void **req)
{
    int on = g_collect & NC_IRECV;
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    int r = nb_net_irecv(n, rc, d, size, TAG, mh, req);
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    return r;
}

/* A test of a send (size NULL) or of a receive. */
static int nc_test(const struct nb_net *n, void *req, int *done, int *size)
{
    int on = g_collect & (size ? NC_RTEST : NC_STEST);
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    int rc = nb_net_test(n, req, done, size);
    if (on)
        CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bench {
    const struct opts *o;
    struct nb_net net;
    void *sc, *rc;
    uint8_t *sbuf, *rbuf;
    void *smh, *rmh;
    int idle_us; /* the current pause after a round that found nothing */
};

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "netcost: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static void pause_idle(struct bench *b)
{
    if (!b->o->idle_sleep_us)
        return;
    usleep((useconds_t)b->idle_us);
    if (b->idle_us < 16 * b->o->idle_sleep_us)
        b->idle_us *= 2;
}

/* One message: irecv, isend, tests until both are done. */
static int cycle(struct bench *b, size_t size, struct counts *c)
{
    void *sreq = NULL, *rreq = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION;
    int sdone = 0, rdone = 0, got = -1;
    double end = now() + b->o->timeout;
    b->idle_us = b->o->idle_sleep_us;
    if (nc_irecv(&b->net, b->rc, b->rbuf, size, b->rmh, &rreq) != 0)
        return fail("%s returned an error (size %lld)", "irecv", (long long)size);
    c->irecv++;
    if (!rreq || rreq == (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION)
        return fail("%s gave no request with nothing in flight (size %lld)", "irecv",
                    (long long)size);
    for (;;) {
        if (nc_isend(&b->net, b->sc, b->sbuf, size, b->smh, &sreq) != 0)
            return fail("%s returned an error (size %lld)", "isend", (long long)size);
        c->isend++;
        if (sreq)
            break;
        c->isend_null++;
        /* The receive's progress may be what the send waits for (its clear-to-send). */
        if (!rdone && nc_test(&b->net, rreq, &rdone, &got) != 0)
            return fail("%s returned an error (size %lld)", "test", (long long)size);
        rdone ? c->test_done++ : c->test_idle++;
        pause_idle(b);
        if (now() > end)
            return fail("%s found no receive for a message of %lld bytes", "isend",
                        (long long)size);
    }
    while (!sdone || !rdone) {
        int progress = 0;
        if (!sdone) {
            if (nc_test(&b->net, sreq, &sdone, NULL) != 0)
                return fail("%s of a send returned an error (size %lld)", "test", (long long)size);
            sdone ? c->test_done++ : c->test_idle++;
            progress |= sdone;
        }
        if (!rdone) {
            if (nc_test(&b->net, rreq, &rdone, &got) != 0)
                return fail("%s of a receive returned an error (size %lld)", "test",
                            (long long)size);
            rdone ? c->test_done++ : c->test_idle++;
            progress |= rdone;
        }
        if (!progress)
            pause_idle(b);
        if (!(sdone && rdone) && now() > end)
            return fail("%s: a message of %lld bytes did not complete", "test", (long long)size);
    }
    if (got != (int)size)
        return fail("%s reported a receive of %lld bytes", "test", (long long)got);
    return 0;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint8_t)(seed >> 56);
    }
}

static int run_size(struct bench *b, size_t size)
{
    struct counts w = {0}, c = {0};
    char name[64];
    int rc = 0;
    for (int i = 0; i < b->o->warmup && rc == 0; i++)
        rc = cycle(b, size, &w);
    memset(b->rbuf, 0xEE, size);
    CALLGRIND_ZERO_STATS;
    for (int i = 0; i < b->o->iters && rc == 0; i++)
        rc = cycle(b, size, &c);
    snprintf(name, sizeof(name), "netcost size=%zu", size);
    CALLGRIND_DUMP_STATS_AT(name);
    if (rc)
        return rc;
    int exact = memcmp(b->sbuf, b->rbuf, size) == 0;
    printf("netcost size=%zu msgs=%d isend=%lld isend_null=%lld irecv=%lld test_done=%lld "
           "test_idle=%lld verified=%s\n",
           size, b->o->iters, c.isend, c.isend_null, c.irecv, c.test_done, c.test_idle,
           exact ? "OK" : "NO");
    fflush(stdout);
    return exact ? 0
                 : fail("%s: the last message of %lld bytes differs", "verify", (long long)size);
}

/* --idle tests of a receive nothing was sent to; then the message that completes it. */
static int run_idle(struct bench *b)
{
    void *rreq = (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION, *sreq = NULL;
    int done = 0, got = 0, n = 0;
    if (nc_irecv(&b->net, b->rc, b->rbuf, 8, b->rmh, &rreq) != 0 || !rreq)
        return fail("%s of the idle probe failed (%lld)", "irecv", 0ll);
    CALLGRIND_ZERO_STATS;
    for (; n < b->o->idle && !done; n++)
        if (nc_test(&b->net, rreq, &done, &got) != 0)
            return fail("%s of the idle probe failed (%lld)", "test", (long long)n);
    CALLGRIND_DUMP_STATS_AT("netcost idle");
    printf("netcost idle tests=%d found_done=%d\n", n, done);
    double end = now() + b->o->timeout;
    while (!sreq) {
        if (nc_isend(&b->net, b->sc, b->sbuf, 8, b->smh, &sreq) != 0 || now() > end)
            return fail("%s of the idle probe failed (%lld)", "isend", 0ll);
        if (!done && nc_test(&b->net, rreq, &done, &got) != 0)
            return fail("%s of the idle probe failed (%lld)", "test", 0ll);
    }
    for (int sdone = 0; !sdone || !done;) {
        if (!sdone && nc_test(&b->net, sreq, &sdone, NULL) != 0)
            return fail("%s of the idle probe failed (%lld)", "test", 0ll);
        if (!done && nc_test(&b->net, rreq, &done, &got) != 0)
            return fail("%s of the idle probe failed (%lld)", "test", 0ll);
        if (now() > end)
            return fail("%s: the idle probe's message did not complete (%lld)", "test", 0ll);
    }
    return 0;
}

static int setup(struct bench *b)
{
    const struct opts *o = b->o;
    char err[300], handle[NCCL_NET_HANDLE_MAXSIZE];
    void *lc = NULL;
    int sdev = -1, rdev = -1;
    size_t max = 0;
    if (nb_net_load(&b->net, o->plugin, 0, o->verbose, err, sizeof(err)) != 0 ||
        nb_net_find_dev(&b->net, o->send_dev, &sdev, err, sizeof(err)) != 0 ||
        nb_net_find_dev(&b->net, o->recv_dev, &rdev, err, sizeof(err)) != 0) {
        fprintf(stderr, "netcost: %s\n", err);
        return -1;
    }
    printf("netcost plugin=%s abi=v%d name=%s send=%s recv=%s mem=host inflight=1\n", o->plugin,
           b->net.version, b->net.name, o->send_dev, o->recv_dev);
    memset(handle, 0, sizeof(handle));
    if (nb_net_listen(&b->net, rdev, handle, &lc) != 0 || !lc)
        return fail("%s on device %lld failed", "listen", (long long)rdev);
    /* Both ends in this process: connect and accept in turn until both are made. */
    double end = now() + o->timeout;
    while (!b->sc || !b->rc) {
        if (!b->sc && nb_net_connect(&b->net, sdev, handle, &b->sc) != 0)
            return fail("%s from device %lld failed", "connect", (long long)sdev);
        if (!b->rc && nb_net_accept(&b->net, lc, &b->rc) != 0)
            return fail("%s on device %lld failed", "accept", (long long)rdev);
        if (now() > end)
            return fail("%s did not complete within %lld s", "connect/accept",
                        (long long)o->timeout);
    }
    nb_net_close_listen(&b->net, lc);
    for (int i = 0; i < o->nsizes; i++)
        max = o->sizes[i] > max ? o->sizes[i] : max;
    max = (max + 4095) & ~(size_t)4095;
    b->sbuf = aligned_alloc(4096, max);
    b->rbuf = aligned_alloc(4096, max);
    if (!b->sbuf || !b->rbuf)
        return fail("%s of %lld bytes failed", "allocation", (long long)max);
    fill(b->sbuf, max, 0x6e6574636f7374ull);
    memset(b->rbuf, 0xEE, max);
    if (nb_net_reg(&b->net, b->sc, b->sbuf, max, &b->smh) != 0 ||
        nb_net_reg(&b->net, b->rc, b->rbuf, max, &b->rmh) != 0)
        return fail("%s of %lld bytes failed", "regMr", (long long)max);
    return 0;
}

static void teardown(struct bench *b)
{
    if (b->smh)
        nb_net_dereg(&b->net, b->sc, b->smh);
    if (b->rmh)
        nb_net_dereg(&b->net, b->rc, b->rmh);
    if (b->sc)
        nb_net_close_send(&b->net, b->sc);
    if (b->rc)
        nb_net_close_recv(&b->net, b->rc);
    if (b->net.table)
        nb_net_finalize(&b->net);
    free(b->sbuf);
    free(b->rbuf);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: netcost PLUGIN.so [--send-dev NAME] [--recv-dev NAME] [--sizes B,B,...]\n"
               "       [--iters N] [--warmup N] [--idle N] [--idle-sleep US] [--timeout S]\n"
               "       [--collect isend,irecv,stest,rtest] [--verbose] [--log-raw]\n"
               "Devices default to $FABRIC_DEV0 / $FABRIC_DEV1 (else rxe0 / rxe1); \"a+b\" that\n"
               "the plugin does not list is made with its makeVDevice. Run it under callgrind:\n"
               "bench/net_cpu.sh.\n");
}

static int parse_sizes(struct opts *o, const char *v)
{
    o->nsizes = 0;
    while (*v) {
        char *end;
        long long n = strtoll(v, &end, 0);
        if (end == v || n < 1 || n > (1ll << 30) || o->nsizes == MAX_SIZES || (*end && *end != ','))
            return -1;
        o->sizes[o->nsizes++] = (size_t)n;
        v = *end ? end + 1 : end;
    }
    return o->nsizes ? 0 : -1;
}

/* --collect isend,irecv,stest,rtest (any of them; default all) */
static int parse_collect(const char *v)
{
    static const char *const names[] = {"isend", "irecv", "stest", "rtest"};
    g_collect = 0;
    while (*v) {
        size_t len = strcspn(v, ","), k = 0;
        while (k < 4 && !(strlen(names[k]) == len && strncmp(v, names[k], len) == 0))
            k++;
        if (k == 4)
            return -1;
        g_collect |= 1 << k;
        v += len + (v[len] == ',');
    }
    return g_collect ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
    const char *d0 = getenv("FABRIC_DEV0"), *d1 = getenv("FABRIC_DEV1");
    *o = (struct opts){.send_dev = d0 && *d0 ? d0 : "rxe0",
                       .recv_dev = d1 && *d1 ? d1 : "rxe1",
                       .sizes = {8, 65536, 524288, 4194304},
                       .nsizes = 4,
                       .iters = 100,
                       .warmup = 20,
                       .idle = 1000,
                       .timeout = 60.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        long long n = v ? strtoll(v, &end, 0) : 0;
        int numeric = v && end && *end == '\0' && end != v;
        if (strcmp(a, "--verbose") == 0 || strcmp(a, "--log-raw") == 0) {
            o->verbose |= a[2] == 'v' ? NB_LOG_INFO : NB_LOG_RAW;
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
            fprintf(stderr, "netcost: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--send-dev") == 0)
            o->send_dev = v;
        else if (strcmp(a, "--recv-dev") == 0)
            o->recv_dev = v;
        else if (strcmp(a, "--sizes") == 0 && parse_sizes(o, v) == 0)
            ;
        else if (numeric && n >= 1 && n <= 1000000 && strcmp(a, "--iters") == 0)
            o->iters = (int)n;
        else if (numeric && n >= 0 && n <= 1000000 && strcmp(a, "--warmup") == 0)
            o->warmup = (int)n;
        else if (numeric && n >= 0 && n <= 1000000 && strcmp(a, "--idle") == 0)
            o->idle = (int)n;
        else if (numeric && n >= 0 && n <= 100000 && strcmp(a, "--idle-sleep") == 0)
            o->idle_sleep_us = (int)n;
        else if (strcmp(a, "--collect") == 0 && parse_collect(v) == 0)
            ;
        else if (numeric && n >= 1 && n <= 3600 && strcmp(a, "--timeout") == 0)
            o->timeout = (double)n;
        else {
            fprintf(stderr, "netcost: bad option or value: %s %s\n", a, v);
            return -1;
        }
    }
    if (!o->plugin) {
        fprintf(stderr, "netcost: no plugin given\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    int prc = parse(argc, argv, &o);
    if (prc) {
        usage(prc > 0 ? stdout : stderr);
        return prc > 0 ? 0 : 2;
    }
    struct bench b = {.o = &o};
    int rc = setup(&b);
    for (int i = 0; i < o.nsizes && rc == 0; i++)
        rc = run_size(&b, o.sizes[i]);
    if (rc == 0 && o.idle > 0)
        rc = run_idle(&b);
    teardown(&b);
    if (rc)
        printf("netcost FAILED\n");
    return rc ? 1 : 0;
}
