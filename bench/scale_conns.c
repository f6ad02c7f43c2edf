/* SPDX-License-Identifier: Apache-2.0 */
/* bench/scale: the connections of one process (scale.h): set up in windows, as NCCL's proxy calls
 * connect and accept, one 4 KiB and one 256 KiB message over each (byte-checked), idle costs,
 * close; die() and barrier(), which every process step uses. */
#include "scale.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "nccl/nccl_net.h"

/* The run's state (scale.h); scale.c's main sets the options. */
struct nb_net g_net;
struct scale_opts o = {64, 2, 1, 1, 1, 2000, 1, 0, 0, NULL, NULL, 0};
struct shared *g_sh;
int g_me, g_warns, g_counted;
char g_last_warn[640];
int g_dev[2];

void die(const char *what, int rc)
{
    fprintf(stderr, "scale[%d]: %s failed (%d)\n", g_me, what, rc);
    atomic_store(&g_sh->failed, 1);
    _exit(1);
}

void barrier(void)
{
    pthread_barrier_wait(&g_sh->bar);
    if (atomic_load(&g_sh->failed))
        _exit(1);
}

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

static double tv_s(const struct timeval *t)
{
    return (double)t->tv_sec + (double)t->tv_usec * 1e-6;
}

static long g_connect_calls, g_accept_calls; /* during open_all */

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
            g_connect_calls++;
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
            g_accept_calls++;
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
                /* --exhaust: accept in channel order, so that the K-th resource taken on this
                 * side is connection K's whatever order the peer's connects arrive in. */
                if (o.exhaust)
                    break;
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
    /* --exhaust: every connection before the failing one must be up on both sides. */
    for (int i = 0; i < rcv->n; i++)
        if (rcv->c[i].st == 0 && !rcv->c[i].comm)
            die("receive connection not set up, channel", rcv->c[i].k);
    for (int i = 0; i < snd->n; i++)
        if (snd->c[i].st == 0 && !snd->c[i].comm)
            die("send connection not set up, channel", snd->c[i].k);
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

void close_all(struct side *snd, struct side *rcv)
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
void open_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, size_t slen,
              uint8_t *rpool, size_t rlen, struct result *r)
{
    struct rusage u0, u1;
    plan(snd, rcv, kmax);
    barrier();
    g_connect_calls = g_accept_calls = 0;
    getrusage(RUSAGE_SELF, &u0);
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
    if (!r)
        return;
    r->setup_s = now() - t0;
    r->setup_cpu_s = cpu_now() - c0;
    getrusage(RUSAGE_SELF, &u1);
    r->setup_user_s = tv_s(&u1.ru_utime) - tv_s(&u0.ru_utime);
    r->setup_sys_s = tv_s(&u1.ru_stime) - tv_s(&u0.ru_stime);
    r->setup_minflt = u1.ru_minflt - u0.ru_minflt;
    r->connect_calls = g_connect_calls;
    r->accept_calls = g_accept_calls;
}

void traffic_all(struct side *snd, struct side *rcv, int kmax, uint8_t *smem, uint8_t *rpool)
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
void idle_costs(struct side *snd, struct side *rcv, uint8_t *smem, uint8_t *rpool, struct result *r)
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
