/* SPDX-License-Identifier: Apache-2.0 */
/* rail_net_soak PLUGIN [--messages N] [--max-size B] [--seed S] [--window W] [--flap-up-ms U]
 *               [--flap-down-ms D] [--flap-if IF] [--send-dev A] [--recv-dev B]
 * Soak of the net plugin inside the fabric VM (run as root: it flaps a link). Two processes (send
 * side on the rail group A, default rxe0+rxe2; receive side on B, default rxe1+rxe3) move N
 * messages of seeded, log-distributed sizes (0 B .. max, 1 in 32 empty) with W in flight; every
 * byte is checked. After a warm-up (5 % of N) the parent flaps IF (default veth2, rail B) down
 * for D ms every U ms until 95 % of N, then leaves it up for the cool-down. Every 997 messages
 * one pooled buffer is deregistered and registered again on both sides.
 * Each side samples after the warm-up and at the end: VmRSS, the registrations it holds (regMr
 * minus deregMr calls), and the kernel's QP and MR counts of its devices (`rdma resource show`).
 * The end must be flat against the warm-up: RSS within +8 MiB, the registrations equal, QPs and
 * MRs within +-2 per device group (a rejoin replaces a rail's QPs). Prints the figures, one
 * "soak: ..." summary line and "N passed, M failed" (1 test). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_host.h"

#define MAXW         32
#define RSS_SLACK_KB (8 * 1024)
#define RES_SLACK    2
#define CHURN_EVERY  997

struct soak_cfg {
    const char *plugin, *send_dev, *recv_dev, *flap_if;
    long messages, max_size, seed;
    int window, up_ms, down_ms;
};

struct sample {
    long rss_kb, regs, qp, mr;
};

static struct soak_cfg g_cfg = {NULL,   "rxe0+rxe2", "rxe1+rxe3", "veth2", 20000,
                                262144, 1,           8,           3000,    1500};
static long g_regs; /* regMr minus deregMr calls of this side */

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Size of message i: 1 in 32 empty, else 2^u with u uniform in [0, log2(max)]. */
static size_t msg_size(long i)
{
    uint64_t r = splitmix((uint64_t)g_cfg.seed * 1000003u + (uint64_t)i);
    if ((r & 31) == 0)
        return 0;
    double lg = 0;
    for (long m = g_cfg.max_size; m > 1; m >>= 1)
        lg += 1;
    size_t sz = (size_t)exp2((double)(r >> 11) / (double)(1ull << 53) * lg);
    return sz > (size_t)g_cfg.max_size ? (size_t)g_cfg.max_size : sz;
}

static uint64_t msg_seed(long i)
{
    return (uint64_t)g_cfg.seed << 32 ^ (uint64_t)i;
}

static long vmrss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

static void take_sample(const char *devs, struct sample *s)
{
    char names[128], *save = NULL;
    s->rss_kb = vmrss_kb();
    s->regs = g_regs;
    s->qp = s->mr = 0;
    snprintf(names, sizeof(names), "%s", devs);
    for (char *d = strtok_r(names, "+", &save); d; d = strtok_r(NULL, "+", &save)) {
        long qp, mr;
        if (it_rdma_res(d, &qp, &mr) < 0) {
            s->qp = s->mr = -1;
            return;
        }
        s->qp += qp;
        s->mr += mr;
    }
}

static int reg(struct it_plugin *p, void *comm, struct it_buf *b)
{
    if (p->net->regMr(comm, b->p, (size_t)g_cfg.max_size, NCCL_PTR_HOST, &b->mh) != ncclSuccess)
        return it_fail("regMr failed");
    g_regs++;
    return 0;
}

static void dereg(struct it_plugin *p, void *comm, struct it_buf *b)
{
    if (b->mh && p->net->deregMr(comm, b->mh) == ncclSuccess)
        g_regs--;
    b->mh = NULL;
}

/* Sender and receiver share the loop: post while the window has room, complete in order. */
static int soak_side(struct it_plugin *p, int dev, int ctl, int recv, int parent)
{
    const char *devs = recv ? g_cfg.recv_dev : g_cfg.send_dev;
    struct it_buf pool[MAXW];
    void *comm = NULL, *req[MAXW];
    long warm = g_cfg.messages / 20, flap_end = g_cfg.messages - g_cfg.messages / 20;
    struct sample s0 = {0}, s1 = {0};
    unsigned long long bytes = 0;
    int rc = 0;
    if (recv ? it_accept(p, dev, ctl, NULL, &comm) : it_connect(p, dev, ctl, &comm))
        return 1;
    for (int w = 0; w < g_cfg.window; w++) {
        pool[w].p = aligned_alloc(4096, (size_t)g_cfg.max_size);
        pool[w].mh = NULL;
        if (!pool[w].p || reg(p, comm, &pool[w]))
            return it_fail("pool buffer %d", w);
    }
    it_log_count_start();
    double t0 = it_now(), tw = t0;
    long posted = 0, done = 0;
    while (done < g_cfg.messages) {
        while (posted < g_cfg.messages && posted - done < g_cfg.window) {
            int w = (int)(posted % g_cfg.window);
            size_t sz = msg_size(posted);
            if (posted % CHURN_EVERY == CHURN_EVERY - 1) {
                dereg(p, comm, &pool[w]);
                if (reg(p, comm, &pool[w]))
                    return 1;
            }
            if (recv) {
                void *data = pool[w].p;
                size_t cap = (size_t)g_cfg.max_size;
                int tag = 7;
                if (it_irecv(p, comm, 1, &data, &cap, &tag, &pool[w].mh, &req[w]))
                    return it_fail("irecv of message %ld", posted);
            } else {
                it_fill(pool[w].p, sz, msg_seed(posted));
                if (it_isend(p, comm, pool[w].p, sz, 7, pool[w].mh, &req[w]))
                    return it_fail("isend of message %ld", posted);
            }
            posted++;
        }
        int w = (int)(done % g_cfg.window), got[8] = {0};
        int r = it_wait(p, req[w], got);
        if (r)
            return it_fail("message %ld (%zu B) failed: %d", done, msg_size(done), r);
        size_t sz = msg_size(done);
        if (recv) {
            long bad = it_check(pool[w].p, sz, msg_seed(done));
            if ((size_t)got[0] != sz || bad >= 0)
                return it_fail("message %ld: %d B received, %zu expected, first bad byte %ld", done,
                               got[0], sz, bad);
        }
        bytes += sz;
        done++;
        if (done == warm) {
            take_sample(devs, &s0);
            tw = it_now();
            if (!recv && it_ctl_signal(parent, 'F')) /* start flapping */
                return 1;
        }
        if (!recv && done == flap_end && it_ctl_signal(parent, 'X'))
            return 1;
        if (!recv && done % (g_cfg.messages / 10) == 0)
            fprintf(stderr,
                    "[send] %ld messages, %.1f s, %.0f msg/s since the start, VmRSS %ld kB\n", done,
                    it_now() - t0, (double)done / (it_now() - t0), vmrss_kb());
    }
    double t1 = it_now();
    take_sample(devs, &s1);
    double secs = t1 - tw > 0 ? t1 - tw : 1e-9;
    fprintf(stderr,
            "[%s] %ld messages, %.1f MB in %.1f s (after warm-up: %.0f msg/s, %.2f MB/s); "
            "failover lines %u, rejoin lines %u\n"
            "[%s] warm-up: VmRSS %ld kB, registrations %ld, QPs %ld, MRs %ld\n"
            "[%s] end:     VmRSS %ld kB, registrations %ld, QPs %ld, MRs %ld\n",
            g_it_role, g_cfg.messages, (double)bytes / 1e6, t1 - t0,
            (double)(g_cfg.messages - warm) / secs,
            (double)bytes * (double)(g_cfg.messages - warm) / (double)g_cfg.messages / 1e6 / secs,
            g_it_logs.failovers, g_it_logs.rejoins, g_it_role, s0.rss_kb, s0.regs, s0.qp, s0.mr,
            g_it_role, s1.rss_kb, s1.regs, s1.qp, s1.mr);
    if (s1.rss_kb - s0.rss_kb > RSS_SLACK_KB)
        rc |=
            it_fail("VmRSS grew by %ld kB (more than %d kB)", s1.rss_kb - s0.rss_kb, RSS_SLACK_KB);
    if (s1.regs != s0.regs)
        rc |= it_fail("registrations went from %ld to %ld", s0.regs, s1.regs);
    if (s0.qp < 0 || s1.qp < 0 || labs(s1.qp - s0.qp) > RES_SLACK ||
        labs(s1.mr - s0.mr) > RES_SLACK)
        rc |= it_fail("kernel QPs %ld -> %ld, MRs %ld -> %ld (tolerance %d, -1: unknown)", s0.qp,
                      s1.qp, s0.mr, s1.mr, RES_SLACK);
    if (!recv)
        printf(
            "soak: %ld messages (max %ld B, seed %ld), %.0f msg/s, %.2f MB/s, VmRSS %ld -> %ld kB, "
            "QPs %ld -> %ld, MRs %ld -> %ld, registrations %ld -> %ld, failovers %u\n",
            g_cfg.messages, g_cfg.max_size, g_cfg.seed, (double)(g_cfg.messages - warm) / secs,
            (double)bytes * (double)(g_cfg.messages - warm) / (double)g_cfg.messages / 1e6 / secs,
            s0.rss_kb, s1.rss_kb, s0.qp, s1.qp, s0.mr, s1.mr, s0.regs, s1.regs,
            g_it_logs.failovers);
    /* both sides finish their last message before either closes */
    if (it_ctl_signal(ctl, 'Z') || it_ctl_wait(ctl, 'Z'))
        rc = 1;
    for (int w = 0; w < g_cfg.window; w++) {
        dereg(p, comm, &pool[w]);
        free(pool[w].p);
    }
    if ((recv ? p->net->closeRecv(comm) : p->net->closeSend(comm)) != ncclSuccess)
        rc |= it_fail("close failed");
    return rc;
}

static int run_side(int recv, int ctl, int parent)
{
    struct it_plugin p;
    g_it_role = recv ? "recv" : "send";
    if (it_load(&p, g_cfg.plugin))
        return 1;
    int dev = it_dev(&p, recv ? g_cfg.recv_dev : g_cfg.send_dev);
    if (dev < 0)
        return it_fail("device %s not found", recv ? g_cfg.recv_dev : g_cfg.send_dev);
    int rc = soak_side(&p, dev, ctl, recv, parent);
    it_unload(&p);
    return rc;
}

static int link_set(const char *state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "ip link set %s %s", g_cfg.flap_if, state);
    return system(cmd) == 0 ? 0 : it_fail("'%s' failed", cmd);
}

/* The parent: flaps the link between the send side's 'F' and 'X'. Returns the number of flaps. */
static int flapper(int fd)
{
    int flaps = 0;
    if (it_ctl_wait(fd, 'F'))
        return -1;
    fprintf(stderr, "[flap] %s down %d ms every %d ms\n", g_cfg.flap_if, g_cfg.down_ms,
            g_cfg.up_ms);
    for (;;) {
        double end = it_now() + g_cfg.up_ms / 1000.0;
        while (it_now() < end && !it_ctl_ready(fd))
            usleep(20000);
        if (it_ctl_ready(fd))
            break;
        if (link_set("down"))
            return -1;
        flaps++;
        usleep((useconds_t)g_cfg.down_ms * 1000);
        if (link_set("up"))
            return -1;
    }
    uint8_t x = 0;
    if (it_ctl_recv(fd, &x, 1) || x != 'X')
        return -1;
    fprintf(stderr, "[flap] stopped after %d flaps; %s stays up\n", flaps, g_cfg.flap_if);
    return flaps;
}

int main(int argc, char **argv)
{
    int sv[2], fl[2];
    if (argc < 2) {
        fprintf(stderr, "usage: rail_net_soak PLUGIN [--messages N] [--max-size B] ...\n");
        return 2;
    }
    g_cfg.plugin = argv[1];
    for (int a = 2; a + 1 < argc; a += 2) {
        const char *k = argv[a], *v = argv[a + 1];
        if (!strcmp(k, "--messages"))
            g_cfg.messages = atol(v);
        else if (!strcmp(k, "--max-size"))
            g_cfg.max_size = atol(v);
        else if (!strcmp(k, "--seed"))
            g_cfg.seed = atol(v);
        else if (!strcmp(k, "--window"))
            g_cfg.window = atoi(v);
        else if (!strcmp(k, "--flap-up-ms"))
            g_cfg.up_ms = atoi(v);
        else if (!strcmp(k, "--flap-down-ms"))
            g_cfg.down_ms = atoi(v);
        else if (!strcmp(k, "--flap-if"))
            g_cfg.flap_if = v;
        else if (!strcmp(k, "--send-dev"))
            g_cfg.send_dev = v;
        else if (!strcmp(k, "--recv-dev"))
            g_cfg.recv_dev = v;
        else {
            fprintf(stderr, "rail_net_soak: unknown option %s\n", k);
            return 2;
        }
    }
    if (g_cfg.messages < 100 || g_cfg.max_size < 1 || g_cfg.window < 1 || g_cfg.window > MAXW ||
        g_cfg.up_ms < 1 || g_cfg.down_ms < 1) {
        fprintf(stderr, "rail_net_soak: bad option value\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || socketpair(AF_UNIX, SOCK_STREAM, 0, fl))
        return 1;
    fflush(NULL);
    pid_t r = fork();
    if (r == 0) {
        close(sv[0]);
        _exit(run_side(1, sv[1], -1) ? 1 : 0);
    }
    pid_t s = fork();
    if (s == 0) {
        close(sv[1]);
        _exit(run_side(0, sv[0], fl[1]) ? 1 : 0);
    }
    close(sv[0]);
    close(sv[1]);
    close(fl[1]);
    int flaps = flapper(fl[0]);
    if (flaps < 0)
        (void)link_set("up");
    int st_r = 0, st_s = 0;
    waitpid(s, &st_s, 0);
    waitpid(r, &st_r, 0);
    int ok =
        flaps > 0 && WIFEXITED(st_s) && !WEXITSTATUS(st_s) && WIFEXITED(st_r) && !WEXITSTATUS(st_r);
    printf("soak: %d flaps of %s; send side %s, receive side %s\n", flaps, g_cfg.flap_if,
           WIFEXITED(st_s) && !WEXITSTATUS(st_s) ? "ok" : "FAILED",
           WIFEXITED(st_r) && !WEXITSTATUS(st_r) ? "ok" : "FAILED");
    printf("%s soak\n%d passed, %d failed\n", ok ? "PASS" : "FAIL", ok, !ok);
    return ok ? 0 : 1;
}
