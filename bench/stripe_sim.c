/* SPDX-License-Identifier: Apache-2.0 */
/* Discrete-event simulation of the stripe scheduler (net-plugin/stripe.c) on two rails: a sender
 * keeps `window` messages in flight (NCCL's proxy posts a step when one completes), each message
 * is scheduled, its chunks queue FIFO on their rails, and completions are fed back to the
 * scheduler as the data path would. Prints figures only; see bench/README.md and
 * docs/striping.md for the model and how to read them.
 *
 * Rail model: a chunk occupies its rail for length / bandwidth, then completes `latency` later
 * (latency is pipelined: it does not hold the wire); completions stay in order per rail. A rail
 * that fails loses the chunks it has not completed and every chunk posted to it until the failure
 * is detected; then the scheduler marks it down and the lost chunks are re-sent through
 * rail_stripe_reschedule. A rail that comes back is marked up at once.
 *
 * usage: stripe_sim [window] [message KiB] [total MiB]   (defaults 8, 512, 2048)
 *        stripe_sim --sweep   (the fraction for several windows and message sizes) */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rails/stripe.h"

#define NR 2

struct rail_model {
    double nominal_gbps; /* what the port reports (the WEIGHTED policy's speed) */
    double gbps;         /* what it delivers */
    double latency_ns;
    double flap_period, flap_down, flap_phase;      /* down flap_down ns every flap_period */
    double spike_period, spike_len, spike_extra_ns; /* + spike_extra_ns latency */
};

struct scenario {
    const char *name;
    struct rail_model r[NR];
};

#define LAT    3000.0        /* ns: RDMA write to completion through one switch */
#define DETECT 100e3         /* ns from a rail failing to the data path marking it down */
#define CLOCK0 1000000000ull /* monotonic clock reading at simulated time 0 */
#define HEALTHY                                                                                    \
    {                                                                                              \
        400, 400, LAT, 0, 0, 0, 0, 0, 0                                                            \
    }
static const struct scenario g_scen[] = {
    {"2x400 healthy", {HEALTHY, HEALTHY}},
    {"400 + 200 (speeds known)", {HEALTHY, {200, 200, LAT, 0, 0, 0, 0, 0, 0}}},
    {"400 + 400 degraded to 200", {HEALTHY, {400, 200, LAT, 0, 0, 0, 0, 0, 0}}},
    {"400 + 400 flapping (1 ms down / 5 ms)", {HEALTHY, {400, 400, LAT, 5e6, 1e6, 2e6, 0, 0, 0}}},
    {"400 + 400 latency spike (+50 us, 1 ms / 5 ms)",
     {HEALTHY, {400, 400, LAT, 0, 0, 0, 5e6, 1e6, 50e3}}},
};

enum ev_kind { EV_COMPLETE, EV_DOWN, EV_DETECT, EV_UP, EV_MSG_DONE };

/* The rails a run uses (the design figure compares one rail with two), and whether a striped
 * message pays the plugin's two-phase size record (one more write to completion after its last
 * piece) before the sender can reuse its window slot. The scenario table keeps the bare model. */
static int g_nrails = NR;
static int g_two_phase;
struct event {
    double t;
    int kind, id;
    long seq; /* FIFO among equal times */
};

struct chunk {
    int msg, rail;
    uint64_t offset, length;
    double post;
    int lost, done;
};

struct message {
    uint64_t size;
    int pending, striped;
    double start;
};

struct sim {
    const struct scenario *sc;
    struct rail_stripe s;
    struct event *heap;
    int nheap, capheap;
    long seq;
    struct chunk *ch;
    int nch, capch;
    struct message *msg;
    int nmsg, posted, finished;
    double now;
    double busy[NR], last_done[NR];
    int phys_up[NR];
    int *lost;
    int nlost;
    uint64_t rail_bytes[NR], resent;
    double lat_sum;
};

static void *grow(void *p, int *cap, size_t elem)
{
    *cap = *cap ? *cap * 2 : 1024;
    p = realloc(p, (size_t)*cap * elem);
    if (!p) {
        fprintf(stderr, "stripe_sim: out of memory\n");
        exit(1);
    }
    return p;
}

static int ev_less(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(struct sim *m, double t, int kind, int id)
{
    if (m->nheap == m->capheap)
        m->heap = grow(m->heap, &m->capheap, sizeof(*m->heap));
    int i = m->nheap++;
    m->heap[i] = (struct event){t, kind, id, m->seq++};
    while (i > 0 && ev_less(&m->heap[i], &m->heap[(i - 1) / 2])) {
        struct event x = m->heap[i];
        m->heap[i] = m->heap[(i - 1) / 2];
        m->heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

static struct event pop(struct sim *m)
{
    struct event top = m->heap[0];
    m->heap[0] = m->heap[--m->nheap];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, b = i;
        if (l < m->nheap && ev_less(&m->heap[l], &m->heap[b]))
            b = l;
        if (r < m->nheap && ev_less(&m->heap[r], &m->heap[b]))
            b = r;
        if (b == i)
            break;
        struct event x = m->heap[i];
        m->heap[i] = m->heap[b];
        m->heap[b] = x;
        i = b;
    }
    return top;
}

static double latency(const struct rail_model *r, double t)
{
    double l = r->latency_ns;
    if (r->spike_period > 0 && t >= 0 && fmod(t, r->spike_period) < r->spike_len)
        l += r->spike_extra_ns;
    return l;
}

/* Down time of a flapping rail in [0, T]. Windows start at phase + k * period. */
static double down_time(const struct rail_model *r, double T)
{
    double d = 0;
    if (r->flap_period <= 0)
        return 0;
    for (double t = r->flap_phase; t < T; t += r->flap_period)
        d += fmin(T, t + r->flap_down) - t;
    return d;
}

static void post_chunk(struct sim *m, int msg, int rail, uint64_t off, uint64_t len)
{
    if (m->nch == m->capch)
        m->ch = grow(m->ch, &m->capch, sizeof(*m->ch));
    int id = m->nch++;
    m->ch[id] = (struct chunk){msg, rail, off, len, m->now, 0, 0};
    if (!m->phys_up[rail]) { /* the data path does not know yet */
        m->ch[id].lost = 1;
        m->lost[m->nlost++] = id;
        return;
    }
    const struct rail_model *rm = &m->sc->r[rail];
    double start = fmax(m->now, m->busy[rail]);
    m->busy[rail] = start + (double)len / (rm->gbps / 8.0);
    double done = fmax(m->busy[rail] + latency(rm, m->busy[rail]), m->last_done[rail]);
    m->last_done[rail] = done;
    push(m, done, EV_COMPLETE, id);
}

static void post_message(struct sim *m, uint64_t size)
{
    struct rail_stripe_chunk c[RAIL_STRIPE_MAX_RAILS];
    int id = m->posted++;
    int n = rail_stripe_schedule(&m->s, size, c, RAIL_STRIPE_MAX_RAILS);
    if (n < 1) {
        fprintf(stderr, "stripe_sim: schedule failed (%d)\n", n);
        exit(1);
    }
    m->msg[id] = (struct message){size, n, n > 1, m->now};
    for (int i = 0; i < n; i++)
        post_chunk(m, id, c[i].rail, c[i].offset, c[i].length);
}

/* The failure of rail is known: mark it down, re-send what it lost, message by message. */
static void detect(struct sim *m, int rail)
{
    rail_stripe_set_rail_state(&m->s, rail, false);
    int n = m->nlost;
    int *ids = malloc(sizeof(int) * (size_t)(n ? n : 1));
    memcpy(ids, m->lost, sizeof(int) * (size_t)n);
    m->nlost = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0)
            continue;
        int msg = m->ch[ids[i]].msg;
        struct rail_stripe_chunk in[64], out[128];
        int k = 0;
        for (int j = i; j < n && k < 64; j++)
            if (ids[j] >= 0 && m->ch[ids[j]].msg == msg) {
                in[k++] =
                    (struct rail_stripe_chunk){rail, m->ch[ids[j]].offset, m->ch[ids[j]].length};
                ids[j] = -1;
            }
        int r = rail_stripe_reschedule(&m->s, rail, in, k, out, 128);
        if (r < 0) {
            fprintf(stderr, "stripe_sim: reschedule failed (%d)\n", r);
            exit(1);
        }
        m->msg[msg].pending += r - k;
        m->msg[msg].striped = 1;
        for (int j = 0; j < r; j++) {
            m->resent += out[j].length;
            post_chunk(m, msg, out[j].rail, out[j].offset, out[j].length);
        }
    }
    free(ids);
}

static void fail(struct sim *m, int rail)
{
    m->phys_up[rail] = 0;
    for (int i = 0; i < m->nch; i++)
        if (m->ch[i].rail == rail && !m->ch[i].done && !m->ch[i].lost) {
            m->ch[i].lost = 1;
            m->lost[m->nlost++] = i;
        }
}

struct result {
    double gbs, fraction, split[NR], resent_mib, msg_us;
};

static struct result run(const struct scenario *sc, enum rail_stripe_policy p, int window,
                         uint64_t msg_bytes, uint64_t total)
{
    struct sim m;
    memset(&m, 0, sizeof(m));
    m.sc = sc;
    struct rail_stripe_config cfg;
    char err[128];
    rail_stripe_config_default(&cfg, g_nrails);
    cfg.policy = p;
    for (int r = 0; r < g_nrails; r++) {
        cfg.speed_mbps[r] = (uint32_t)(sc->r[r].nominal_gbps * 1000);
        m.phys_up[r] = 1;
    }
    if (rail_stripe_init(&m.s, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "stripe_sim: %s\n", err);
        exit(1);
    }
    m.nmsg = (int)(total / msg_bytes);
    m.msg = calloc((size_t)m.nmsg, sizeof(*m.msg));
    m.lost = malloc(sizeof(int) * ((size_t)m.nmsg * 4 + 64)); /* lost chunks between detections */
    /* flap events up to far past any plausible end */
    double horizon = 2.0 * (double)total / 12.5;
    for (int r = 0; r < NR; r++)
        for (double t = sc->r[r].flap_phase; sc->r[r].flap_period > 0 && t < horizon;
             t += sc->r[r].flap_period) {
            push(&m, t, EV_DOWN, r);
            push(&m, t + DETECT, EV_DETECT, r);
            push(&m, t + sc->r[r].flap_down, EV_UP, r);
        }
    for (int i = 0; i < window && m.posted < m.nmsg; i++)
        post_message(&m, msg_bytes);
    while (m.finished < m.nmsg && m.nheap) {
        struct event e = pop(&m);
        m.now = e.t;
        if (e.kind == EV_DOWN) {
            fail(&m, e.id);
        } else if (e.kind == EV_DETECT) {
            detect(&m, e.id);
        } else if (e.kind == EV_UP) {
            m.phys_up[e.id] = 1;
            m.busy[e.id] = m.last_done[e.id] = m.now;
            rail_stripe_set_rail_state(&m.s, e.id, true);
        } else if (e.kind == EV_COMPLETE) {
            struct chunk *c = &m.ch[e.id];
            if (c->lost)
                continue;
            c->done = 1;
            m.rail_bytes[c->rail] += c->length;
            struct message *g = &m.msg[c->msg];
            if (g->striped)
                rail_stripe_on_completion(&m.s, c->rail, c->length,
                                          CLOCK0 + (uint64_t)llround(c->post),
                                          CLOCK0 + (uint64_t)llround(m.now), g->pending == 1);
            if (--g->pending == 0)
                push(&m, m.now + (g_two_phase && g->striped ? LAT : 0), EV_MSG_DONE, c->msg);
        } else if (e.kind == EV_MSG_DONE) {
            m.finished++;
            m.lat_sum += m.now - m.msg[e.id].start;
            if (m.posted < m.nmsg)
                post_message(&m, msg_bytes);
        }
    }
    double T = m.now, cap = 0; /* bytes the rails could have carried in [0, T] */
    for (int r = 0; r < g_nrails; r++)
        cap += sc->r[r].gbps / 8.0 * (T - down_time(&sc->r[r], T));
    struct result res;
    uint64_t done = (uint64_t)m.nmsg * msg_bytes, sent = m.rail_bytes[0] + m.rail_bytes[1];
    res.gbs = (double)done / T;
    res.fraction = (double)done / cap;
    for (int r = 0; r < NR; r++)
        res.split[r] = r < g_nrails ? (double)m.rail_bytes[r] / (double)sent : 0;
    res.resent_mib = (double)m.resent / 1048576.0;
    res.msg_us = m.lat_sum / m.nmsg / 1000.0;
    free(m.heap);
    free(m.ch);
    free(m.msg);
    free(m.lost);
    return res;
}

static void sweep(void)
{
    static const struct {
        int window;
        long kib;
    } shapes[] = {{1, 1024}, {2, 512}, {4, 128}, {8, 512}, {8, 4096}, {32, 256}, {64, 128}};
    printf("fraction of capacity per pipeline shape (messages in flight x KiB), 2048 MiB each\n\n");
    printf("%-46s %-9s", "scenario", "policy");
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        char h[32];
        snprintf(h, sizeof(h), "%dx%ld", shapes[k].window, shapes[k].kib);
        printf(" %8s", h);
    }
    printf("\n");
    for (size_t i = 0; i < sizeof(g_scen) / sizeof(g_scen[0]); i++)
        for (int p = RAIL_STRIPE_EQUAL; p <= RAIL_STRIPE_ADAPTIVE; p++) {
            printf("%-46s %-9s", p ? "" : g_scen[i].name,
                   rail_stripe_policy_name((enum rail_stripe_policy)p));
            for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
                printf(" %8.3f", run(&g_scen[i], (enum rail_stripe_policy)p, shapes[k].window,
                                     (uint64_t)shapes[k].kib * 1024, (uint64_t)2048 << 20)
                                     .fraction);
            printf("\n");
        }
}

/* Issue 12's ratio at 2x400 Gb/s: two healthy rails against one, the adaptive policy, with the
 * two-phase size record of striped messages included (one-piece messages are pipelined). */
static void design_figure(int window, long kib, long mib)
{
    struct result one, two;
    g_two_phase = 1;
    g_nrails = 1;
    one = run(&g_scen[0], RAIL_STRIPE_ADAPTIVE, window, (uint64_t)kib * 1024,
              (uint64_t)mib * 1048576);
    g_nrails = NR;
    two = run(&g_scen[0], RAIL_STRIPE_ADAPTIVE, window, (uint64_t)kib * 1024,
              (uint64_t)mib * 1048576);
    g_two_phase = 0;
    printf("\ndesign figure, 2x400 Gb/s, adaptive, two-phase size record of striped messages "
           "included:\none rail %.1f GB/s, two rails %.1f GB/s (split %.3f/%.3f, %.1f us per "
           "message): two rails / one rail = %.2f\n",
           one.gbs, two.gbs, two.split[0], two.split[1], two.msg_us, two.gbs / one.gbs);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--sweep") == 0) {
        sweep();
        return 0;
    }
    int window = argc > 1 ? atoi(argv[1]) : 8;
    long kib = argc > 2 ? atol(argv[2]) : 512, mib = argc > 3 ? atol(argv[3]) : 2048;
    if (window < 1 || kib < 1 || mib < 1 || (uint64_t)mib * 1024 < (uint64_t)kib) {
        fprintf(stderr, "usage: stripe_sim [window >= 1] [message KiB] [total MiB] | --sweep\n");
        return 2;
    }
    printf("stripe_sim: %d messages of %ld KiB in flight, %ld MiB per run, latency %.0f us, "
           "failure detected after %.0f us, NCCL_RAIL_STRIPE_MIN %d\n",
           window, kib, mib, LAT / 1000, DETECT / 1000, RAIL_STRIPE_MIN_DEFAULT);
    printf("fraction = delivered bytes / what the rails could carry while up (sum of their "
           "actual bandwidths)\n\n");
    printf("%-46s %-9s %8s %8s %13s %9s %9s\n", "scenario", "policy", "GB/s", "fraction",
           "split r0/r1", "resent", "msg us");
    for (size_t i = 0; i < sizeof(g_scen) / sizeof(g_scen[0]); i++) {
        for (int p = RAIL_STRIPE_EQUAL; p <= RAIL_STRIPE_ADAPTIVE; p++) {
            struct result r = run(&g_scen[i], (enum rail_stripe_policy)p, window,
                                  (uint64_t)kib * 1024, (uint64_t)mib * 1048576);
            printf("%-46s %-9s %8.1f %8.3f %6.3f/%.3f %5.0f MiB %9.1f\n", p ? "" : g_scen[i].name,
                   rail_stripe_policy_name((enum rail_stripe_policy)p), r.gbs, r.fraction,
                   r.split[0], r.split[1], r.resent_mib, r.msg_us);
        }
    }
    design_figure(window, kib, mib);
    return 0;
}
