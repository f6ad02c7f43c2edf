/* SPDX-License-Identifier: Apache-2.0 */
/* Injected verbs faults (NCCL_RAIL_FAULT, transport/verbs_fault_ops.c): each vf_* scenario sets a
 * fault spec in one side, then moves batches of messages (0 B .. 4 MiB: eager, rendezvous,
 * striped) and asserts the outcome its table row names:
 *   OK       a failover (or an event logged only): every message completes byte-exact, no
 *            call fails, the injection fired and the plugin logged the rail failure (want);
 *   ERR      the faulting side gets an error from isend/irecv/test within BOUND_S, the other side
 *            an error or complete messages within BOUND_S + PEER_S, no receive completes with
 *            wrong bytes, both closes return within CLOSE_S, the plugin's own WARN names the
 *            fault (want);
 *   CONNECT  the faulting side's accept/connect fails within BOUND_S (want logged), the other
 *            side's fails or its first batch errors;
 *   REGMR    regMr of the faulted 4 MiB buffer fails cleanly (want logged); the other messages
 *            then move byte-exact.
 * A scenario runs only where it applies (a fault-injection build, the device kind of its row:
 * one rail per device or dual-rail groups) and passes with a note elsewhere. Each side has its
 * own deadline (SIGALRM after DEADLINE_S), so nothing can hang the run.
 * vf_knob checks the variable itself: a malformed spec (fault builds) or any spec (other builds)
 * gives one WARN naming NCCL_RAIL_FAULT and traffic moves unharmed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it_scenarios.h"

#define NMSG       6
#define NBATCH     3
#define BOUND_S    30.0 /* the faulting side's error comes within this */
#define PEER_S     15.0 /* the other side's, after that */
#define CLOSE_S    5.0
#define DEADLINE_S 150u

enum vf_expect { VF_OK, VF_ERR, VF_CONNECT, VF_REGMR };
enum vf_mode { VF_SINGLE = 1, VF_DUAL = 2 };

struct vf_case {
    const char *name;
    enum vf_mode mode;
    char side; /* 's' or 'r': the side with the fault (its spec is the scenario's send/recv env) */
    enum vf_expect expect;
    const char *want; /* a plugin log line (not the injector's) must contain this */
    int pace;         /* the receiver pauses 10 ms after posting its small receives, the sender
                       * waits 100 ms before each batch: their clear-to-send entries are written
                       * (deferred) before the eager messages arrive */
};

static const struct vf_case k_cases[] = {
    /* one rail per device: every fault ends in an error */
    {"vf_post_recv_connect", VF_SINGLE, 'r', VF_CONNECT, "ibv_post_recv", 0},
    {"vf_reg_mr", VF_SINGLE, 's', VF_REGMR, "Cannot allocate memory", 0},
    {"vf_post_send", VF_SINGLE, 's', VF_ERR, "ibv_post_send", 0},
    {"vf_post_send_cts", VF_SINGLE, 'r', VF_ERR, "clear-to-send", 0},
    {"vf_wc_retry", VF_SINGLE, 's', VF_ERR, "transport retry counter exceeded", 0},
    {"vf_wc_rem_access", VF_SINGLE, 'r', VF_ERR, "remote access error", 0},
    {"vf_cq_overrun", VF_SINGLE, 's', VF_ERR, "ibv_poll_cq failed", 0},
    {"vf_qp_fatal", VF_SINGLE, 's', VF_ERR, "local work queue catastrophic error", 0},
    {"vf_device_fatal", VF_SINGLE, 'r', VF_ERR, "fatal device event", 0},
    /* NCCL_IB_RETURN_ASYNC_EVENTS=0: the same events are logged only, the traffic carries on */
    {"vf_qp_fatal_logged", VF_SINGLE, 's', VF_OK, "NCCL_IB_RETURN_ASYNC_EVENTS=0: logged only", 0},
    {"vf_device_fatal_logged", VF_SINGLE, 'r', VF_OK, "NCCL_IB_RETURN_ASYNC_EVENTS=0: logged only",
     0},
    /* dual-rail with failover: one rail's fault fails over, byte-exact */
    {"vf2_post_send", VF_DUAL, 's', VF_OK, "rail 0 (rxe0) failed", 0},
    {"vf2_eager", VF_DUAL, 's', VF_OK, "rail 0 (rxe0) failed", 0},
    {"vf2_eager_image", VF_DUAL, 's', VF_OK, "rail 0 (rxe0) failed", 0},
    {"vf2_eager_image_wc", VF_DUAL, 's', VF_OK, "transport retry counter exceeded", 0},
    {"vf2_cts", VF_DUAL, 'r', VF_OK, "rail 0 (rxe1) failed", 0},
    {"vf2_post_recv", VF_DUAL, 'r', VF_OK, "rail 0 (rxe1) failed", 0},
    {"vf2_wc_retry", VF_DUAL, 's', VF_OK, "transport retry counter exceeded", 0},
    {"vf2_wc_flush", VF_DUAL, 'r', VF_OK, "rail 0 (rxe1) failed", 0},
    {"vf2_port_err", VF_DUAL, 's', VF_OK, "its port went down", 0},
    {"vf2_device_fatal", VF_DUAL, 's', VF_OK, "its device had a fatal event", 0},
    {"vf2_qp_fatal", VF_DUAL, 's', VF_OK, "local work queue catastrophic error", 0},
    /* the receiver's deferred CTS of an eager receive is stuck on rail 0 until the sender's
     * eager post fails that rail: flushed after its receive completed by eager, it must still
     * be written again, or the sender waits for that FIFO slot forever */
    {"vf2_cts_stall", VF_DUAL, 's', VF_OK, "rail 0 (rxe0) failed", 1},
    /* ... and errors where failover cannot help */
    {"vf2_wc_retry_all", VF_DUAL, 's', VF_ERR, "it was the last rail up", 0},
    {"vf2_port_err_all", VF_DUAL, 's', VF_ERR, "it was the last rail up", 0},
    {"vf2_wc_rem_access", VF_DUAL, 's', VF_ERR, "remote access error", 0},
    {"vf2_cq_overrun", VF_DUAL, 's', VF_ERR, "ibv_poll_cq failed", 0},
    {"vf2_qp_fatal_all", VF_DUAL, 's', VF_ERR, "it was the last rail up", 0},
};

static const size_t k_sizes[NMSG] = {0, 1, 4000, 65536, 1048589u, 4u << 20};

static struct {
    unsigned injected; /* "fault injection: ..." lines */
    unsigned want;     /* plugin lines containing the case's want */
    const char *pat;
} g_vf;

static void hook(ncclDebugLogLevel level, const char *msg)
{
    (void)level;
    if (strstr(msg, "fault injection:")) {
        g_vf.injected++;
        return;
    }
    if (g_vf.pat && strstr(msg, g_vf.pat))
        g_vf.want++;
}

static const struct vf_case *find_case(const char *name)
{
    for (size_t i = 0; name && i < sizeof(k_cases) / sizeof(k_cases[0]); i++)
        if (!strcmp(k_cases[i].name, name))
            return &k_cases[i];
    return NULL;
}

/* 1 when the case runs here; a note otherwise. */
static int applies(struct it_side *s, const struct vf_case *k)
{
    ncclNetProperties_v11_t a;
#ifndef RAIL_FAULT_INJECTION
    fprintf(stderr, "[%s] note: not a fault-injection build (RAIL_FAULT_INJECTION=OFF): skipped\n",
            g_it_role);
    return 0;
#endif
    if (s->p->net->getProperties(s->dev, &a) != ncclSuccess)
        return 0;
    int dual = strchr(a.name, '+') != NULL;
    if (dual != (k->mode == VF_DUAL)) {
        fprintf(stderr, "[%s] note: %s needs %s devices, %s is not: skipped\n", g_it_role, k->name,
                k->mode == VF_DUAL ? "dual-rail" : "single-rail", a.name);
        return 0;
    }
    return 1;
}

static uint64_t seed_of(int batch, int i)
{
    return 70000 + (uint64_t)batch * 64 + (uint64_t)i;
}

struct vf_run {
    struct it_plugin *p;
    void *comm;
    int recv;
    int nmsg;
    struct it_buf b[NMSG];
    void *req[NMSG];
    int err;       /* first error (ncclResult_t) seen */
    double err_at; /* seconds after the first post */
    int wrong;     /* a completed receive with wrong bytes or size */
    int done_all;  /* every batch completed */
    int pace;      /* see struct vf_case */
};

/* Posts one batch: 0, or the call's error (recorded). */
static int post_batch(struct vf_run *v, int batch, double t0)
{
    if (v->pace && !v->recv)
        usleep(100000);
    for (int i = 0; i < v->nmsg; i++) {
        ncclResult_t r;
        v->req[i] = NULL;
        if (v->pace && v->recv && i == 3)
            usleep(10000);
        if (v->recv) {
            void *data = v->b[i].p;
            size_t cap = k_sizes[i];
            int tag = i;
            memset(v->b[i].p, 0xA5, k_sizes[i]);
            do
                r = v->p->net->irecv(v->comm, 1, &data, &cap, &tag, &v->b[i].mh, NULL, &v->req[i]);
            while (r == ncclSuccess && !v->req[i] && it_now() - t0 < BOUND_S + PEER_S);
        } else {
            it_fill(v->b[i].p, k_sizes[i], seed_of(batch, i));
            do
                r = v->p->net->isend(v->comm, v->b[i].p, k_sizes[i], i, v->b[i].mh, NULL,
                                     &v->req[i]);
            while (r == ncclSuccess && !v->req[i] && it_now() - t0 < BOUND_S + PEER_S);
        }
        if (r != ncclSuccess) {
            v->err = r;
            v->err_at = it_now() - t0;
            fprintf(stderr, "[%s] batch %d: %s %d failed with %d after %.2f s\n", g_it_role, batch,
                    v->recv ? "irecv" : "isend", i, r, v->err_at);
            return r;
        }
        if (!v->req[i])
            return it_fail("batch %d: %s %d neither posted nor failed", batch,
                           v->recv ? "irecv" : "isend", i);
    }
    return 0;
}

/* Waits for the batch: 0 when all done, the error when one fails, -1 on timeout. */
static int wait_batch(struct vf_run *v, int batch, double t0, double limit)
{
    int left = v->nmsg;
    while (left) {
        for (int i = 0; i < v->nmsg; i++) {
            int done = 0, sz[8] = {0};
            if (!v->req[i])
                continue;
            ncclResult_t r = v->p->net->test(v->req[i], &done, sz);
            if (r != ncclSuccess) {
                v->err = r;
                v->err_at = it_now() - t0;
                fprintf(stderr, "[%s] batch %d message %d: test error %d after %.2f s\n", g_it_role,
                        batch, i, r, v->err_at);
                return r;
            }
            if (!done)
                continue;
            v->req[i] = NULL;
            left--;
            if (!v->recv)
                continue;
            long bad = it_check(v->b[i].p, k_sizes[i], seed_of(batch, i));
            if ((size_t)sz[0] != k_sizes[i] || bad >= 0) {
                v->wrong = 1;
                return it_fail("batch %d message %d (%zu B) reported done with %d bytes, first "
                               "wrong byte at %ld",
                               batch, i, k_sizes[i], sz[0], bad);
            }
        }
        if (it_now() - t0 > limit) {
            fprintf(stderr, "[%s] batch %d: %d of %d messages pending after %.0f s\n", g_it_role,
                    batch, left, v->nmsg, limit);
            return -1;
        }
    }
    return 0;
}

/* Every batch; stops at the first error. Returns 0 unless wrong data or a hang was seen. */
static int run_batches(struct vf_run *v, double limit)
{
    double t0 = it_now();
    for (int batch = 0; batch < NBATCH; batch++) {
        if (post_batch(v, batch, t0))
            return v->err ? 0 : 1;
        int rc = wait_batch(v, batch, t0, limit);
        if (v->wrong)
            return 1;
        if (rc == -1)
            return it_fail("no completion and no error within %.0f s", limit);
        if (rc)
            return 0;
    }
    v->done_all = 1;
    return 0;
}

static int close_comm(struct vf_run *v)
{
    double t0 = it_now();
    ncclResult_t r = v->recv ? v->p->net->closeRecv(v->comm) : v->p->net->closeSend(v->comm);
    double dt = it_now() - t0;
    for (int i = 0; i < NMSG; i++)
        if (v->b[i].p)
            it_buf_free(v->p, NULL, &v->b[i]);
    if (dt > CLOSE_S)
        return it_fail("close took %.2f s (bound %.0f s)", dt, CLOSE_S);
    if (r != ncclSuccess)
        fprintf(stderr, "[%s] close returned %d after an error (allowed)\n", g_it_role, r);
    return 0;
}

static int establish(struct it_side *s, struct vf_run *v, double limit)
{
    double t0 = it_now();
    if (v->recv) {
        char handle[NCCL_NET_HANDLE_MAXSIZE];
        void *lc = NULL;
        if (s->p->net->listen(s->p->ctx, s->dev, handle, &lc) != ncclSuccess || !lc)
            return it_fail("listen failed");
        if (it_ctl_send(s->ctl, handle, sizeof(handle)))
            return 1;
        ncclResult_t r;
        do
            r = s->p->net->accept(lc, &v->comm, NULL);
        while (r == ncclSuccess && !v->comm && it_now() - t0 < limit);
        s->p->net->closeListen(lc);
        if (r != ncclSuccess)
            return r;
    } else {
        char handle[NCCL_NET_HANDLE_MAXSIZE];
        if (it_ctl_recv(s->ctl, handle, sizeof(handle)))
            return 1;
        int r = it_connect_handle(s->p, s->dev, handle, &v->comm, limit);
        if (r > 0)
            return r;
    }
    if (!v->comm)
        return -1;
    return 0;
}

static int vf_side(struct it_side *s, int recv)
{
    const struct vf_case *k = find_case(s->name);
    struct vf_run v;
    int faulty, rc = 0;
    if (!k)
        return it_fail("no vfault case named %s", s->name ? s->name : "(null)");
    if (!applies(s, k))
        return 0;
    alarm(DEADLINE_S);
    faulty = k->side == (recv ? 'r' : 's');
    memset(&v, 0, sizeof(v));
    memset(&g_vf, 0, sizeof(g_vf));
    g_vf.pat = it_fabric_text(k->want);
    g_it_log_hook = hook;
    v.p = s->p;
    v.recv = recv;
    v.nmsg = k->expect == VF_REGMR ? NMSG - 1 : NMSG;
    v.pace = k->pace;

    double t0 = it_now();
    int erc = establish(s, &v, BOUND_S + PEER_S);
    if (k->expect == VF_CONNECT) {
        if (erc == 0) {
            /* The side that did not fault may connect: its first batch must then fail. */
            if (faulty) {
                close_comm(&v);
                return it_fail("the connection was made although its setup faulted");
            }
            for (int i = 0; i < NMSG; i++)
                if (it_buf_alloc(v.p, v.comm, &v.b[i], k_sizes[i] ? k_sizes[i] : 1))
                    return 1;
            rc = run_batches(&v, BOUND_S + PEER_S);
            if (!rc && !v.err)
                rc = it_fail("the batches completed although the peer's setup failed");
            return close_comm(&v) || rc;
        }
        if (erc < 0)
            return it_fail("connection setup neither completed nor failed in %.0f s",
                           BOUND_S + PEER_S);
        fprintf(stderr, "[%s] connection setup failed with %d after %.2f s (expected)\n", g_it_role,
                erc, it_now() - t0);
        if (faulty && (!g_vf.injected || !g_vf.want))
            return it_fail("injections %u, log lines naming '%s' %u", g_vf.injected, k->want,
                           g_vf.want);
        return 0;
    }
    if (erc)
        return it_fail("connection setup failed (%d)", erc);
    for (int i = 0; i < v.nmsg; i++)
        if (it_buf_alloc(v.p, v.comm, &v.b[i], k_sizes[i] ? k_sizes[i] : 1))
            return 1;
    if (k->expect == VF_REGMR && faulty) {
        void *mh = NULL;
        void *buf = NULL;
        if (posix_memalign(&buf, 4096, k_sizes[NMSG - 1]))
            return it_fail("out of memory");
        ncclResult_t r = v.p->net->regMr(v.comm, buf, k_sizes[NMSG - 1], NCCL_PTR_HOST, &mh);
        free(buf);
        if (r == ncclSuccess)
            return it_fail("regMr of the faulted buffer succeeded");
        fprintf(stderr, "[%s] regMr of %zu bytes failed with %d (expected)\n", g_it_role,
                k_sizes[NMSG - 1], r);
    }

    rc = run_batches(&v, k->expect == VF_ERR ? BOUND_S + (faulty ? 0 : PEER_S) : 2 * BOUND_S);
    if (rc == 0) {
        if (k->expect == VF_ERR && faulty && !v.err)
            rc = it_fail("every batch completed although the fault must fail the connection");
        if (k->expect != VF_ERR && v.err)
            rc = it_fail("error %d although the fault should be survived", v.err);
    }
    /* The faulting side closes at once after its error; the other then sees the peer gone. */
    if (close_comm(&v))
        rc = 1;
    if (faulty && (!g_vf.injected || !g_vf.want))
        rc = it_fail("injections %u, plugin log lines naming '%s' %u", g_vf.injected, k->want,
                     g_vf.want);
    if (rc == 0)
        fprintf(stderr, "[%s] %s: %s%s (%.2f s)\n", g_it_role, k->name,
                v.err ? "error as expected" : "all byte-exact",
                faulty ? ", fault injected and logged" : "", it_now() - t0);
    alarm(0);
    return rc;
}

int it_vf_recv(struct it_side *s)
{
    return vf_side(s, 1);
}

int it_vf_send(struct it_side *s)
{
    return vf_side(s, 0);
}

/* vf_knob, both sides: NCCL_RAIL_FAULT=bogus_kind gives exactly one WARN naming the variable at
 * init (fault builds: the spec is refused; other builds: no fault layer), nothing is injected,
 * and the batches move byte-exact. */
static unsigned g_knob_warns, g_knob_inject;
static char g_knob_line[512];

static void knob_hook(ncclDebugLogLevel level, const char *msg)
{
    if (strstr(msg, "fault injection:"))
        g_knob_inject++;
    else if (level == NCCL_LOG_WARN && strstr(msg, "NCCL_RAIL_FAULT")) {
        g_knob_warns++;
        snprintf(g_knob_line, sizeof(g_knob_line), "%s", msg);
    }
}

int it_vf_knob_setup(const char *plugin)
{
    (void)plugin;
    g_it_log_hook = knob_hook; /* before the plugin loads: the WARN comes from init */
    return 0;
}

static int knob_side(struct it_side *s, int recv)
{
    struct vf_run v;
#ifdef RAIL_FAULT_INJECTION
    const char *why = "unknown fault kind 'bogus_kind'";
#else
    const char *why = "no fault injection";
#endif
    alarm(DEADLINE_S);
    if (g_knob_warns != 1 || !strstr(g_knob_line, why))
        return it_fail("%u WARNs naming NCCL_RAIL_FAULT (want 1 with '%s'; last: '%s')",
                       g_knob_warns, why, g_knob_line);
    memset(&v, 0, sizeof(v));
    v.p = s->p;
    v.recv = recv;
    v.nmsg = NMSG;
    if (establish(s, &v, BOUND_S + PEER_S))
        return it_fail("connection setup failed");
    for (int i = 0; i < v.nmsg; i++)
        if (it_buf_alloc(v.p, v.comm, &v.b[i], k_sizes[i] ? k_sizes[i] : 1))
            return 1;
    int rc = run_batches(&v, 2 * BOUND_S);
    if (!rc && !v.done_all)
        rc = it_fail("error %d with an ignored NCCL_RAIL_FAULT", v.err);
    if (close_comm(&v))
        rc = 1;
    if (g_knob_inject)
        rc = it_fail("%u faults injected from an ignored spec", g_knob_inject);
    alarm(0);
    return rc;
}

int it_vf_knob_recv(struct it_side *s)
{
    return knob_side(s, 1);
}

int it_vf_knob_send(struct it_side *s)
{
    return knob_side(s, 0);
}
