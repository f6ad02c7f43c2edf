/* SPDX-License-Identifier: Apache-2.0 */
/* mr_record_ahead: the size record of a striped message does not wait behind the data of the
 * messages posted after it. Pairs of messages (256 KiB, then 8 MiB) go out on idle rails of a
 * dual-rail device; each is striped over both rails and so two-phase (pieces, then the record
 * once they completed here). When the small receive completes, the receiver counts how much of
 * the large message has landed already. A record written on a data QP arrives only after the
 * pieces posted before it on that QP, the large message's piece of that rail among them; on the
 * rail's control QP it goes right after the small message's own pieces completed, while the
 * large one has only begun. Every message must also arrive byte-exact, and the send comm's INFO
 * line must name the control QP and its send queue (31 WRs, sized by what it carries: net_qsize.h)
 * and the receive comm's the receive queue of the QP facing it (31 + 32 spare).
 * mr_record_ahead_off: NCCL_RAIL_CONTROL_QP=0, no control QP in that line, the share printed but
 * not asserted (so on the shm provider: there data moves only in the sender's own calls, and the
 * share follows the scheduler). Runs only on rail groups, in the fabric VM as root or on the shm
 * fabric (passes with a note otherwise). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_scenarios.h"

#define NP      8
#define SMALL   (256u << 10)
#define LARGE   (8u << 20)
#define BATCHES 3
#define POISON  0x5Au
/* The median share of the large message landed when the small one before it completes must stay
 * below this (percent). A record behind the data puts it at 50 or more (the large message's piece
 * on the record's rail, and what the other rail carried meanwhile: 67-100 % measured); on the
 * control QP 6-72 % per message, medians 19-24 % (SoftRoCE queues deep: the record still waits
 * behind the packets already sent and the acknowledgements of the small message's pieces). */
#define MAX_MEDIAN_PCT 50

static size_t size_of(int i)
{
    return i % 2 ? LARGE : SMALL;
}

static uint64_t seed_of(int batch, int i)
{
    return 90000 + (uint64_t)batch * NP + (uint64_t)i;
}

/* Percent of buf's 8-byte words that no longer hold the poison (a word of the pattern equals it
 * with probability 2^-64). */
static int landed_pct(const uint8_t *buf, size_t size)
{
    uint64_t poison, w;
    size_t n = 0;
    memset(&poison, POISON, sizeof(poison));
    for (size_t k = 0; k < size; k += 8) {
        memcpy(&w, buf + k, 8);
        n += w != poison;
    }
    return (int)(n * 100 / (size / 8));
}

/* Whether the comm runs with a control QP: NCCL_RAIL_CONTROL_QP unset or 1. */
static int control_qp_on(void)
{
    const char *v = getenv("NCCL_RAIL_CONTROL_QP");
    return !v || strcmp(v, "0") != 0;
}

/* The send comm's INFO line ("... x 1 data QP(s) of 126 send WRs + 1 control QP of 31 send WRs
 * ..."): 1 with, 0 without, -1 not seen; the control QP's send WRs (-1: not named). The receive
 * comm's ("... of 158 receive WRs (the last, facing a control QP, of 63) ..."): the receive WRs
 * of the QP facing the control QP, 0 when the line names none, -1 not seen. */
static int g_ctl_seen = -1, g_ctl_sq = -1, g_ctl_rq = -1;
static void send_comm_line(ncclDebugLogLevel level, const char *msg)
{
    if (level == NCCL_LOG_INFO && strstr(msg, "send comm ") && strstr(msg, " data QP(s)")) {
        const char *c = strstr(msg, "+ 1 control QP");
        g_ctl_seen = c != NULL;
        if (!c || sscanf(c, "+ 1 control QP of %d send WRs", &g_ctl_sq) != 1)
            g_ctl_sq = -1;
    }
}

static void recv_comm_line(ncclDebugLogLevel level, const char *msg)
{
    if (level == NCCL_LOG_INFO && strstr(msg, "recv comm ") && strstr(msg, " receive WRs")) {
        const char *c = strstr(msg, "(the last, facing a control QP, of ");
        if (!c || sscanf(c, "(the last, facing a control QP, of %d)", &g_ctl_rq) != 1)
            g_ctl_rq = 0;
    }
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int it_mr_record_recv(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b[NP];
    void *rc, *req[NP];
    int pct[BATCHES * NP / 2], npct = 0, err = 0;
    if (!it_mr_applicable(s))
        return 0;
    memset(b, 0, sizeof(b));
    g_it_log_hook = recv_comm_line;
    int arc = it_accept(p, s->dev, s->ctl, NULL, &rc);
    g_it_log_hook = NULL;
    if (arc)
        return 1;
    int line_err = 0; /* reported at the end: the sender waits for the batches */
    if (g_ctl_rq != (control_qp_on() ? 63 : 0))
        line_err =
            it_fail("the receive comm's INFO line names %d receive WRs for the QP facing the "
                    "control QP, want %d",
                    g_ctl_rq, control_qp_on() ? 63 : 0);
    for (int i = 0; i < NP && !err; i++)
        err = it_buf_alloc(p, rc, &b[i], size_of(i));
    for (int batch = 0; batch < BATCHES && !err; batch++) {
        for (int i = 0; i < NP; i++)
            memset(b[i].p, (int)POISON, size_of(i));
        for (int i = 0; i < NP && !err; i++) {
            void *data = b[i].p;
            size_t cap = size_of(i);
            int tag = i;
            err = it_irecv(p, rc, 1, &data, &cap, &tag, &b[i].mh, &req[i]);
        }
        if (err || it_ctl_signal(s->ctl, 'B'))
            break;
        for (int i = 0; i < NP && !err; i++) {
            int sz[8] = {0};
            if (it_wait(p, req[i], sz) != 0) {
                err = it_fail("batch %d message %d: test failed or timed out", batch, i);
                break;
            }
            if (i % 2 == 0 && i + 1 < NP) {
                pct[npct] = landed_pct(b[i + 1].p, LARGE);
                fprintf(stderr,
                        "[recv] batch %d: message %d done with %d %% of message %d landed\n", batch,
                        i, pct[npct], i + 1);
                npct++;
            }
            if (sz[0] != (int)size_of(i))
                err =
                    it_fail("batch %d message %d: %d bytes, want %zu", batch, i, sz[0], size_of(i));
        }
        for (int i = 0; i < NP && !err; i++) {
            long bad = it_check(b[i].p, size_of(i), seed_of(batch, i));
            if (bad >= 0)
                err = it_fail("batch %d message %d: first wrong byte at %ld", batch, i, bad);
        }
        if (it_ctl_signal(s->ctl, err ? 'F' : 'R'))
            return 1;
    }
    if (!err && npct > 0) {
        qsort(pct, (size_t)npct, sizeof(pct[0]), cmp_int);
        int median = pct[npct / 2];
        /* The shm provider moves data only inside the sender's own calls: how much of the large
         * message lands before the receiver gets to see the small one follows the scheduler
         * (25 % idle, 65 % measured under a parallel ctest), not the wire. */
        const char *prov = getenv("NCCL_RAIL_VERBS_PROVIDER");
        bool shm = prov && strcmp(prov, "shm") == 0;
        fprintf(stderr,
                "[recv] median share of the large message landed when the small one "
                "before it completed: %d %%%s\n",
                median,
                !control_qp_on() ? " (no control QP: not asserted)"
                : shm            ? " (shm provider: not asserted, it follows the scheduler)"
                                 : "");
        if (median >= MAX_MEDIAN_PCT && control_qp_on() && !shm)
            err = it_fail("when a small striped message completed, a median %d %% of the large one "
                          "after it had landed already (want < %d %%): its size record waited "
                          "behind later data",
                          median, MAX_MEDIAN_PCT);
    }
    for (int i = 0; i < NP; i++)
        it_buf_free(p, NULL, &b[i]);
    return (p->net->closeRecv(rc) != ncclSuccess) || err || line_err;
}

int it_mr_record_send(struct it_side *s)
{
    struct it_plugin *p = s->p;
    struct it_buf b[NP];
    void *sc, *req[NP];
    int err = 0;
    if (!it_mr_applicable(s))
        return 0;
    memset(b, 0, sizeof(b));
    g_it_log_hook = send_comm_line;
    int rc = it_connect(p, s->dev, s->ctl, &sc);
    g_it_log_hook = NULL;
    if (rc)
        return 1;
    const char *knob = getenv("NCCL_RAIL_CONTROL_QP");
    if (g_ctl_seen != control_qp_on())
        err = it_fail("the send comm's INFO line %s, want %s (NCCL_RAIL_CONTROL_QP=%s)",
                      g_ctl_seen < 0   ? "was not seen"
                      : g_ctl_seen > 0 ? "names a control QP"
                                       : "names no control QP",
                      control_qp_on() ? "one" : "none", knob ? knob : "unset");
    if (!err && control_qp_on() && g_ctl_sq != 31)
        err =
            it_fail("the send comm's control QP has %d send WRs, want 31 (net_qsize.h)", g_ctl_sq);
    for (int i = 0; i < NP && !err; i++)
        err = it_buf_alloc(p, sc, &b[i], size_of(i));
    for (int batch = 0; batch < BATCHES && !err; batch++) {
        for (int i = 0; i < NP; i++)
            it_fill(b[i].p, size_of(i), seed_of(batch, i));
        if (it_ctl_wait(s->ctl, 'B'))
            return 1;
        /* A pair at a time (small, large) on idle rails: a pair behind the previous large
         * message would measure how far apart the rails finish it instead. Then the small one
         * is waited for, as only test() lets the sender write its record. */
        for (int i = 0; i < NP && !err; i += 2) {
            err = it_isend(p, sc, b[i].p, size_of(i), i, b[i].mh, &req[i]);
            if (!err)
                err = it_isend(p, sc, b[i + 1].p, size_of(i + 1), i + 1, b[i + 1].mh, &req[i + 1]);
            for (int k = i; k < i + 2 && !err; k++)
                if (it_wait(p, req[k], NULL) != 0)
                    err = it_fail("batch %d message %d: test failed or timed out", batch, k);
        }
        if (!err && it_ctl_wait(s->ctl, 'R'))
            err = it_fail("batch %d: the receiver failed", batch);
    }
    for (int i = 0; i < NP; i++)
        it_buf_free(p, NULL, &b[i]);
    if (p->net->closeSend(sc) != ncclSuccess)
        err = err ? err : it_fail("closeSend failed");
    return err;
}
