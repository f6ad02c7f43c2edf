/* SPDX-License-Identifier: Apache-2.0 */
/* stripe scheduler: schedules compared field by field, weights within one 128-byte unit,
 * alignment and exact coverage over thousands of random sizes/weights/states, edge sizes,
 * round-robin of whole messages over rails that are up, the floor share, determinism, adaptive
 * convergence (open and closed loop), probing, rejoin, all rails down, re-send plans, and the two
 * knobs. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "fuzz.h"
#include "params.h"
#include "rails/stripe.h"

#define MAXC 64

static struct rail_stripe make(int nrails, enum rail_stripe_policy p, uint64_t min_stripe,
                               const uint32_t *speeds)
{
    struct rail_stripe_config cfg;
    struct rail_stripe s;
    char err[128] = "";
    rail_stripe_config_default(&cfg, nrails);
    cfg.policy = p;
    cfg.min_stripe = min_stripe;
    for (int r = 0; speeds && r < nrails; r++)
        cfg.speed_mbps[r] = speeds[r];
    int rc = rail_stripe_init(&s, &cfg, err, sizeof(err));
    CHECK_MSG(rc == 0, "init: %s", err);
    return s;
}

#define CHECK_CHUNK(c, r, off, len)                                                                \
    do {                                                                                           \
        CHECK_EQ_INT((c).rail, r);                                                                 \
        CHECK_EQ_INT((c).offset, off);                                                             \
        CHECK_EQ_INT((c).length, len);                                                             \
    } while (0)

/* The chunks cover [base, base + len) exactly once with 128-aligned offsets. */
static int covers(const struct rail_stripe_chunk *in, int n, uint64_t base, uint64_t len)
{
    struct rail_stripe_chunk c[2 * MAXC];
    if (n < 1 || n > 2 * MAXC)
        return 0;
    memcpy(c, in, sizeof(*c) * (size_t)n);
    for (int i = 1; i < n; i++) /* insertion sort by offset */
        for (int j = i; j > 0 && c[j].offset < c[j - 1].offset; j--) {
            struct rail_stripe_chunk t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    uint64_t at = base;
    for (int i = 0; i < n; i++) {
        if (c[i].offset != at || c[i].offset % RAIL_STRIPE_ALIGN)
            return 0;
        if (c[i].length == 0 && !(len == 0 && n == 1))
            return 0;
        at += c[i].length;
    }
    return at == base + len;
}

static void test_init_errors(void)
{
    struct rail_stripe_config cfg;
    struct rail_stripe s;
    char err[128];
    rail_stripe_config_default(&cfg, 0);
    CHECK_EQ_INT(rail_stripe_init(&s, &cfg, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "0 rails") != NULL);
    cfg.nrails = RAIL_STRIPE_MAX_RAILS + 1;
    CHECK_EQ_INT(rail_stripe_init(&s, &cfg, err, sizeof(err)), -EINVAL);
    cfg.nrails = 2;
    cfg.policy = (enum rail_stripe_policy)7;
    CHECK_EQ_INT(rail_stripe_init(&s, &cfg, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "policy") != NULL);
    cfg.policy = RAIL_STRIPE_EQUAL;
    cfg.min_stripe = RAIL_STRIPE_MAX_SIZE + 1;
    CHECK_EQ_INT(rail_stripe_init(&s, &cfg, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_stripe_init(NULL, &cfg, err, sizeof(err)), -EINVAL);
    rail_stripe_config_default(&cfg, 8);
    CHECK_EQ_INT(cfg.policy, RAIL_STRIPE_ADAPTIVE);
    CHECK_EQ_INT(cfg.min_stripe, RAIL_STRIPE_MIN_DEFAULT);
    CHECK_EQ_INT(rail_stripe_init(&s, &cfg, err, sizeof(err)), 0);
}

static void test_fixed_schedules(void)
{
    struct rail_stripe_chunk c[MAXC];
    uint16_t w[RAIL_STRIPE_MAX_RAILS];

    struct rail_stripe s = make(2, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1048576, c, MAXC), 2);
    CHECK_CHUNK(c[0], 0, 0, 524288);
    CHECK_CHUNK(c[1], 1, 524288, 524288);

    /* 3 equal rails: weights 342/341/341, boundaries rounded to 128 */
    s = make(3, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_weights(&s, w), 3);
    CHECK_EQ_INT(w[0], 342);
    CHECK_EQ_INT(w[1], 341);
    CHECK_EQ_INT(w[2], 341);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 300000, c, MAXC), 3);
    CHECK_CHUNK(c[0], 0, 0, 100224);
    CHECK_CHUNK(c[1], 1, 100224, 99840);
    CHECK_CHUNK(c[2], 2, 200064, 99936);

    /* weighted 400G + 200G: 683/341 */
    const uint32_t sp[2] = {400000, 200000};
    s = make(2, RAIL_STRIPE_WEIGHTED, 0, sp);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0], 683);
    CHECK_EQ_INT(w[1], 341);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1048576, c, MAXC), 2);
    CHECK_CHUNK(c[0], 0, 0, 699392);
    CHECK_CHUNK(c[1], 1, 699392, 349184);

    /* adaptive starts from the speeds */
    s = make(2, RAIL_STRIPE_ADAPTIVE, 0, sp);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0], 683);
    CHECK_EQ_INT(w[1], 341);
    CHECK_EQ_INT(rail_stripe_rate(&s, 0), 50000); /* 400 Gb/s = 50000 bytes/us */
    CHECK_EQ_INT(rail_stripe_rate(&s, 1), 25000);

    /* unknown speeds count as the mean of the known ones */
    const uint32_t sp3[3] = {400000, 0, 200000};
    s = make(3, RAIL_STRIPE_WEIGHTED, 0, sp3);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0] + w[1] + w[2], 1024);
    CHECK_EQ_INT(w[1], 341); /* 300 of 900 */
    s = make(8, RAIL_STRIPE_WEIGHTED, 0, NULL);
    CHECK_EQ_INT(rail_stripe_weights(&s, w), 8);
    for (int r = 0; r < 8; r++)
        CHECK_EQ_INT(w[r], 128);

    /* one rail: everything on it */
    s = make(1, RAIL_STRIPE_ADAPTIVE, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1000001, c, MAXC), 1);
    CHECK_CHUNK(c[0], 0, 0, 1000001);

    /* cap too small for a striped message: -E2BIG; a 1-chunk schedule fits in 1 */
    s = make(2, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1048576, c, 1), -E2BIG);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1048576, c, 0), -E2BIG);
    CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MAX_SIZE + 1, c, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MAX_SIZE, c, MAXC), 2);
    CHECK(covers(c, 2, 0, RAIL_STRIPE_MAX_SIZE));
    CHECK_EQ_INT(rail_stripe_schedule(&s, 100, NULL, MAXC), -EINVAL);
}

static void test_edge_sizes(void)
{
    struct rail_stripe_chunk c[MAXC];
    /* default threshold: whole, round-robin */
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, NULL);
    const uint64_t sizes[] = {0, 1, 127, 128, 129};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(rail_stripe_schedule(&s, sizes[i], c, MAXC), 1);
        CHECK_CHUNK(c[0], i % 2, 0, sizes[i]);
    }
    CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MIN_DEFAULT - 1, c, MAXC), 1);
    CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MIN_DEFAULT, c, MAXC), 2);
    CHECK_CHUNK(c[0], 0, 0, 65536);
    CHECK_CHUNK(c[1], 1, 65536, 65536);

    /* threshold 0: every size > 0 is split, size 0 is still one zero-length chunk */
    s = make(2, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 0, c, MAXC), 1);
    CHECK_CHUNK(c[0], 0, 0, 0);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1, c, MAXC), 1);
    CHECK_CHUNK(c[0], 1, 0, 1);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 127, c, MAXC), 1);
    CHECK_CHUNK(c[0], 1, 0, 127);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 128, c, MAXC), 1);
    CHECK_CHUNK(c[0], 0, 0, 128);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 129, c, MAXC), 2);
    CHECK_CHUNK(c[0], 0, 0, 128);
    CHECK_CHUNK(c[1], 1, 128, 1);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 257, c, MAXC), 2);
    CHECK_CHUNK(c[0], 0, 0, 128);
    CHECK_CHUNK(c[1], 1, 128, 129);
}

static void test_round_robin(void)
{
    struct rail_stripe_chunk c[MAXC];
    struct rail_stripe s = make(3, RAIL_STRIPE_ADAPTIVE, 4096, NULL);
    int got[12];
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(rail_stripe_schedule(&s, 100, c, MAXC), 1);
        got[i] = c[0].rail;
    }
    const int want[6] = {0, 1, 2, 0, 1, 2};
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(got[i], want[i]);
    /* a striped message does not move the cursor */
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 3);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1, c, MAXC), 1);
    CHECK_EQ_INT(c[0].rail, 0);
    /* rail 1 down: 2, 0, 2, 0 ... */
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 1, false), 0);
    CHECK(!rail_stripe_rail_up(&s, 1));
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(rail_stripe_schedule(&s, 4095, c, MAXC), 1);
        CHECK_EQ_INT(c[0].rail, i % 2 ? 0 : 2);
    }
    /* striped messages avoid it too */
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 2);
    CHECK(c[0].rail == 0 && c[1].rail == 2);
    /* back up: in the rotation again, from the cursor (after 0) */
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 1, true), 0);
    const int after[3] = {1, 2, 0};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(rail_stripe_schedule(&s, 0, c, MAXC), 1);
        CHECK_EQ_INT(c[0].rail, after[i]);
        CHECK_EQ_INT(c[0].length, 0);
    }
}

/* Per-rail clocks of the fake data path: every sample is a chunk that queued behind the rail's
 * previous one and finished its message, so its interval is exactly ns. */
static uint64_t g_clock[RAIL_STRIPE_MAX_RAILS];

static void clock_reset(void)
{
    for (int r = 0; r < RAIL_STRIPE_MAX_RAILS; r++)
        g_clock[r] = 1000000000;
}

static int sample(struct rail_stripe *s, int rail, uint64_t bytes, uint64_t ns)
{
    uint64_t post = g_clock[rail] - 1;
    g_clock[rail] += ns;
    return rail_stripe_on_completion(s, rail, bytes, post, g_clock[rail], true);
}

/* adaptive: feed each rail 1 MiB samples at its speed (bytes per ns) */
static void feed(struct rail_stripe *s, int rounds, const double *bytes_per_ns, int nrails)
{
    for (int i = 0; i < rounds; i++)
        for (int r = 0; r < nrails; r++)
            if (bytes_per_ns[r] > 0)
                sample(s, r, 1048576, (uint64_t)(1048576 / bytes_per_ns[r]));
}

static uint64_t g_loop_base = 1000000000;

/* A closed loop like the data path's: `window` messages of `size` in flight over FIFO rails of
 * the given bytes per ns and a pipelined latency, completions fed back in time order with their
 * last flag. Returns rail 1's share of the bytes of the second half of the messages. */
static double closed_loop(struct rail_stripe *s, const double *bpn, double lat, int window,
                          uint64_t size, int nmsg)
{
    struct {
        int msg, rail;
        uint64_t len;
        double post, done;
    } ch[64];
    int nch = 0, posted = 0, finished = 0, pending[4096] = {0};
    double busy[2] = {0, 0}, last[2] = {0, 0}, now = 0, bytes[2] = {0, 0};
    while (finished < nmsg) {
        while (posted < nmsg && posted - finished < window) {
            struct rail_stripe_chunk c[MAXC];
            int n = rail_stripe_schedule(s, size, c, MAXC);
            if (n < 1 || nch + n > 64)
                return -1;
            pending[posted] = n;
            for (int i = 0; i < n; i++) {
                int r = c[i].rail;
                busy[r] = fmax(now, busy[r]) + (double)c[i].length / bpn[r];
                last[r] = fmax(busy[r] + lat, last[r]);
                ch[nch].msg = posted;
                ch[nch].rail = r;
                ch[nch].len = c[i].length;
                ch[nch].post = now;
                ch[nch++].done = last[r];
            }
            posted++;
        }
        int k = 0;
        for (int i = 1; i < nch; i++)
            if (ch[i].done < ch[k].done)
                k = i;
        now = ch[k].done;
        int m = ch[k].msg;
        rail_stripe_on_completion(s, ch[k].rail, ch[k].len, g_loop_base + (uint64_t)ch[k].post,
                                  g_loop_base + (uint64_t)now, pending[m] == 1);
        if (m >= nmsg / 2)
            bytes[ch[k].rail] += (double)ch[k].len;
        if (--pending[m] == 0)
            finished++;
        ch[k] = ch[--nch];
    }
    g_loop_base += (uint64_t)now + 1000000; /* the next loop starts later on the same clock */
    return bytes[1] / (bytes[0] + bytes[1]);
}

static void test_adaptive_convergence(void)
{
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    const uint32_t sp[2] = {400000, 400000};
    clock_reset();
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, sp);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[1], 512);
    /* rail 1 at half speed: its share goes to 1/3 */
    const double half[2] = {50.0, 25.0};
    feed(&s, 10, half, 2);
    rail_stripe_weights(&s, w);
    CHECK_MSG(w[1] < 400 && w[1] > 341, "after 10 rounds w1 = %d", w[1]);
    feed(&s, 60, half, 2);
    rail_stripe_weights(&s, w);
    CHECK_NEAR(w[1], 1024.0 / 3, 3);
    CHECK_EQ_INT(w[0] + w[1], 1024);
    CHECK_NEAR(rail_stripe_rate(&s, 1), 25000, 100);
    /* schedule follows: 3 MiB splits 2:1 within the weight rounding and one unit */
    struct rail_stripe_chunk c[MAXC];
    CHECK_EQ_INT(rail_stripe_schedule(&s, 3 << 20, c, MAXC), 2);
    CHECK_NEAR((double)c[1].length, 1048576.0, 3 * 3072 + 128);
    /* recovery: rail 1 back at full speed, shares back to even */
    const double full[2] = {50.0, 50.0};
    feed(&s, 80, full, 2);
    rail_stripe_weights(&s, w);
    CHECK_NEAR(w[1], 512, 3);

    /* other policies keep the measurement but not the weights */
    s = make(2, RAIL_STRIPE_EQUAL, 0, sp);
    feed(&s, 80, half, 2);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[1], 512);
    CHECK_NEAR(rail_stripe_rate(&s, 1), 25000, 100);

    /* completions polled together (one long interval, then the same instant) average out */
    clock_reset();
    s = make(2, RAIL_STRIPE_ADAPTIVE, 0, sp);
    for (int i = 0; i < 100; i++) {
        sample(&s, 0, 1 << 20, 20972);
        sample(&s, 1, 1 << 20, i % 2 ? 0 : 41943 * 2);
    }
    rail_stripe_weights(&s, w);
    CHECK_NEAR(w[1], 1024.0 / 3, 24); /* per-sample rates would give rail 1 nearly everything */

    /* closed loop, 8 x 512 KiB in flight, 3 us latency: the split converges to the speeds,
     * whichever rail is the slow one and whatever the starting weights say */
    s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, sp);
    CHECK_NEAR(closed_loop(&s, half, 3000, 8, 512 << 10, 2000), 1.0 / 3, 0.01);
    const uint32_t wrong[2] = {100000, 400000};
    s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, wrong);
    const double fast1[2] = {20.0, 60.0};
    CHECK_NEAR(closed_loop(&s, fast1, 3000, 8, 512 << 10, 2000), 0.75, 0.01);
    /* two messages in flight, 4 MiB each */
    s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, NULL);
    CHECK_NEAR(closed_loop(&s, half, 3000, 2, 4 << 20, 1000), 1.0 / 3, 0.01);
    /* a deep pipeline: chunks wait behind up to 31 others, their interval is not their sojourn */
    s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, sp);
    CHECK_NEAR(closed_loop(&s, half, 3000, 32, 256 << 10, 4000), 1.0 / 3, 0.01);
    /* equal rails stay even */
    s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, NULL);
    CHECK_NEAR(closed_loop(&s, full, 3000, 8, 512 << 10, 2000), 0.5, 0.01);
    /* rail 1 slows down, then recovers: never the bottleneck after its recovery, it gets its
     * share back only by probing */
    CHECK_NEAR(closed_loop(&s, half, 3000, 8, 512 << 10, 2000), 1.0 / 3, 0.01);
    CHECK_NEAR(closed_loop(&s, full, 3000, 8, 512 << 10, 2000), 0.5, 0.01);
    CHECK_NEAR(closed_loop(&s, half, 3000, 4, 128 << 10, 2000), 1.0 / 3, 0.01);
    CHECK_NEAR(closed_loop(&s, full, 3000, 4, 128 << 10, 2000), 0.5, 0.01);
}

/* A chunk that finished before its message did makes its rail's estimate probe upwards (1/32 per
 * completion), up to twice its starting rate or 16x the fastest other rail; posted to an idle rail,
 * it does not lower it. */
static void test_probe(void)
{
    const uint32_t sp[2] = {400000, 400000};
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, 0, sp);
    uint64_t t = 1000000000, r1 = rail_stripe_rate(&s, 1);
    CHECK_EQ_INT(r1, 50000);
    for (int i = 0; i < 10; i++) {
        /* a slow-looking chunk (1 MiB in 1 ms) that was not last: no measurement, a probe */
        CHECK_EQ_INT(rail_stripe_on_completion(&s, 1, 1 << 20, t, t + 1000000, false), 0);
        t += 1000000;
    }
    CHECK_NEAR(rail_stripe_rate(&s, 1), 50000 * pow(1 + 1.0 / 32, 10), 50);
    for (int i = 0; i < 2000; i++, t += 1000000)
        rail_stripe_on_completion(&s, 1, 1 << 20, t, t + 1000000, false);
    CHECK_NEAR(rail_stripe_rate(&s, 1), 16 * 50000, 16 * 50000 / 32 + 1);
    /* the other rail slower: the cap is twice the starting rate */
    clock_reset();
    s = make(2, RAIL_STRIPE_ADAPTIVE, 0, sp);
    const double slow0[2] = {1.0, 0};
    feed(&s, 100, slow0, 1);
    for (int i = 0; i < 2000; i++, t += 1000000)
        rail_stripe_on_completion(&s, 1, 1 << 20, t, t + 1000000, false);
    CHECK_NEAR(rail_stripe_rate(&s, 1), 2 * 50000, 2 * 50000 / 32 + 1);
    /* a chunk queued behind the rail's previous one measures it even when it was not last (then
     * probes): 1 MiB every 100 us brings a 50000 bytes/us estimate near 10000 */
    for (int i = 0; i < 200; i++, t += 100000)
        rail_stripe_on_completion(&s, 0, 1 << 20, t - 1, t + 100000, false);
    CHECK_MSG(rail_stripe_rate(&s, 0) < 15000 && rail_stripe_rate(&s, 0) > 10000, "rate %llu",
              (unsigned long long)rail_stripe_rate(&s, 0));
    /* the last chunk of a message measures, even when it makes the estimate fall */
    uint64_t before = rail_stripe_rate(&s, 1);
    rail_stripe_on_completion(&s, 1, 1 << 20, t, t + 1000000, true);
    CHECK(rail_stripe_rate(&s, 1) < before);
    /* a completion polled before the rail's previous one counts with zero time */
    uint64_t r0 = rail_stripe_rate(&s, 0);
    rail_stripe_on_completion(&s, 0, 1 << 20, 5, 10, true);
    CHECK(rail_stripe_rate(&s, 0) > r0);
}

static void test_floor_share(void)
{
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    struct rail_stripe_chunk c[MAXC];
    clock_reset();
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, NULL);
    const double slow[2] = {50.0, 0.05}; /* rail 1 1000x slower */
    feed(&s, 100, slow, 2);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[1], 1024 / 2 / RAIL_STRIPE_FLOOR_DIV);
    CHECK_EQ_INT(w[0], 1024 - 64);
    CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MIN_DEFAULT, c, MAXC), 2);
    CHECK_CHUNK(c[1], 1, 122880, 8192);

    /* weighted: a 10 Gb/s rail next to 400 Gb/s ones still gets the floor */
    const uint32_t sp[4] = {400000, 400000, 400000, 10000};
    s = make(4, RAIL_STRIPE_WEIGHTED, 0, sp);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[3], 32);
    CHECK_EQ_INT(w[0], 331); /* 992 / 3, the two extra units to the lower rails */
    CHECK_EQ_INT(w[1], 331);
    CHECK_EQ_INT(w[2], 330);
    /* adaptive with a rail that never completes anything at all (rate 0) */
    s = make(3, RAIL_STRIPE_ADAPTIVE, 0, NULL);
    clock_reset();
    for (int i = 0; i < 400; i++) {
        sample(&s, 0, 1 << 20, 20000);
        sample(&s, 1, 1 << 20, 20000);
        sample(&s, 2, 1, (uint64_t)1 << 40);
    }
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[2], 1024 / 3 / 8);
    CHECK_EQ_INT(w[0] + w[1], 1024 - 42);
}

static void test_rejoin(void)
{
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    struct rail_stripe_chunk c[MAXC];
    const double even[3] = {50.0, 50.0, 50.0};
    clock_reset();
    struct rail_stripe s = make(3, RAIL_STRIPE_ADAPTIVE, RAIL_STRIPE_MIN_DEFAULT, NULL);
    feed(&s, 50, even, 3);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 2, false), 0);
    CHECK_EQ_INT(rail_stripe_weights(&s, w), 2);
    CHECK_EQ_INT(w[2], 0);
    CHECK_EQ_INT(w[0] + w[1], 1024);
    /* completions on a rail that is down are ignored */
    uint64_t before = rail_stripe_rate(&s, 2);
    CHECK_EQ_INT(sample(&s, 2, 1 << 20, 1), 0);
    CHECK_EQ_INT(rail_stripe_rate(&s, 2), before);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 2, false), 0); /* again: no change */
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 2);
    CHECK(c[0].rail != 2 && c[1].rail != 2);

    /* rejoin: half the slowest rail's rate: 1/5 of the total */
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 2, true), 0);
    CHECK_NEAR(rail_stripe_rate(&s, 2), rail_stripe_rate(&s, 0) / 2, 2);
    CHECK_EQ_INT(rail_stripe_weights(&s, w), 3);
    CHECK_NEAR(w[2], 1024 / 5, 1);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 3);
    CHECK_EQ_INT(c[2].rail, 2);
    /* its own completions bring it back to an equal share */
    feed(&s, 40, even, 3);
    rail_stripe_weights(&s, w);
    CHECK_NEAR(w[2], 341, 4);
    /* up again while up: nothing changes */
    uint64_t r2 = rail_stripe_rate(&s, 2);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 2, true), 0);
    CHECK_EQ_INT(rail_stripe_rate(&s, 2), r2);

    /* equal policy: a rail that comes back gets its equal share at once */
    s = make(2, RAIL_STRIPE_EQUAL, 0, NULL);
    rail_stripe_set_rail_state(&s, 0, false);
    rail_stripe_set_rail_state(&s, 0, true);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0], 512);

    /* the only rail coming back keeps its own history */
    s = make(2, RAIL_STRIPE_ADAPTIVE, 0, NULL);
    const double two[2] = {50.0, 25.0};
    feed(&s, 60, two, 2);
    uint64_t r1 = rail_stripe_rate(&s, 1);
    rail_stripe_set_rail_state(&s, 0, false);
    rail_stripe_set_rail_state(&s, 1, false);
    rail_stripe_set_rail_state(&s, 1, true);
    CHECK_EQ_INT(rail_stripe_rate(&s, 1), r1);

    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 2, true), -EINVAL);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, -1, true), -EINVAL);
    CHECK_EQ_INT(rail_stripe_on_completion(&s, 2, 1, 1, 2, true), -EINVAL);
    CHECK_EQ_INT(rail_stripe_rate(&s, 5), 0);
    CHECK(!rail_stripe_rail_up(&s, 7));
}

static void test_all_down(void)
{
    struct rail_stripe_chunk c[MAXC], o[MAXC];
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 2);
    rail_stripe_set_rail_state(&s, 0, false);
    /* the re-send of rail 1's chunk has no survivor once rail 1 is the only one up */
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 1, c, 2, o, MAXC), -ENETDOWN);
    rail_stripe_set_rail_state(&s, 1, false);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 0, c, MAXC), -ENETDOWN);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), -ENETDOWN);
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    CHECK_EQ_INT(rail_stripe_weights(&s, w), 0);
    CHECK_EQ_INT(w[0] + w[1], 0);
    rail_stripe_set_rail_state(&s, 1, true);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 1 << 20, c, MAXC), 1);
    CHECK_CHUNK(c[0], 1, 0, 1 << 20);
}

static void test_reschedule(void)
{
    struct rail_stripe_chunk c[MAXC], o[MAXC];
    struct rail_stripe s = make(3, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_schedule(&s, 3 << 20, c, MAXC), 3);
    CHECK_CHUNK(c[1], 1, 1050624, 1047552);
    rail_stripe_set_rail_state(&s, 1, false);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 1, c, 3, o, MAXC), 2);
    CHECK_CHUNK(o[0], 0, 1050624, 523776);
    CHECK_CHUNK(o[1], 2, 1574400, 523776);
    /* failed_rail is left out even when it is still marked up */
    s = make(3, RAIL_STRIPE_EQUAL, 0, NULL);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 1, c, 3, o, MAXC), 2);
    CHECK_CHUNK(o[0], 0, 1050624, 523776);
    CHECK(rail_stripe_rail_up(&s, 1));
    /* no chunk on the failed rail: nothing to do */
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 1, c, 1, o, MAXC), 0);
    /* too little room: -E2BIG and the round-robin cursor does not move */
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 1, c, 3, o, 1), -E2BIG);

    /* chunks below the threshold go whole, round-robin over the survivors */
    s = make(3, RAIL_STRIPE_ADAPTIVE, 4096, NULL);
    struct rail_stripe_chunk small[3] = {{2, 0, 0}, {2, 4096, 1000}, {2, 8192, 4096}};
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 2, small, 2, o, 1), -E2BIG);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 2, small, 3, o, MAXC), 4);
    CHECK_CHUNK(o[0], 0, 0, 0);
    CHECK_CHUNK(o[1], 1, 4096, 1000);
    CHECK_CHUNK(o[2], 0, 8192, 2048);
    CHECK_CHUNK(o[3], 1, 10240, 2048);
    /* the cursor moved past rail 1: the next whole message goes to rail 2 */
    CHECK_EQ_INT(rail_stripe_schedule(&s, 10, c, MAXC), 1);
    CHECK_EQ_INT(c[0].rail, 2);

    /* bad input */
    struct rail_stripe_chunk bad[1] = {{0, 100, 50}};
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 0, bad, 1, o, MAXC), -EINVAL);
    bad[0] = (struct rail_stripe_chunk){5, 0, 50};
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 0, bad, 1, o, MAXC), -EINVAL);
    bad[0] = (struct rail_stripe_chunk){0, RAIL_STRIPE_MAX_SIZE - 128, 256};
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 0, bad, 1, o, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 3, small, 3, o, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 2, NULL, 3, o, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 2, small, 3, NULL, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_reschedule(&s, 2, small, 0, NULL, 0), 0);
}

static uint64_t rnd64(uint32_t *seed)
{
    uint64_t hi = fuzz_step(seed) >> 8, lo = fuzz_step(seed) >> 8;
    return hi << 24 | lo;
}

/* Random rails, policies, speeds, states, measurements and sizes: every schedule is exact,
 * aligned, on rails that are up, one chunk per rail, each within 128 bytes of its weight; every
 * re-send plan covers exactly the failed rail's bytes; a copy of the state schedules the same. */
static void test_fuzz(void)
{
    uint32_t seed = 20240611;
    int bad_cover = 0, bad_weight = 0, bad_rail = 0, bad_floor = 0, bad_resched = 0, bad_determ = 0,
        bad_down = 0, scheduled = 0, rescheduled = 0;
    for (int iter = 0; iter < 4000; iter++) {
        int nrails = 1 + (int)(fuzz_step(&seed) >> 16) % RAIL_STRIPE_MAX_RAILS;
        uint32_t sp[RAIL_STRIPE_MAX_RAILS];
        for (int r = 0; r < nrails; r++)
            sp[r] = (fuzz_step(&seed) >> 16) % 4 == 0 ? 0 : 1000 + (fuzz_step(&seed) >> 12);
        uint64_t min = (fuzz_step(&seed) >> 16) % 3 == 0 ? 0 : (fuzz_step(&seed) >> 12);
        struct rail_stripe s =
            make(nrails, (enum rail_stripe_policy)((fuzz_step(&seed) >> 16) % 3), min, sp);
        for (int k = (int)(fuzz_step(&seed) >> 16) % 50; k > 0; k--)
            rail_stripe_on_completion(&s, (int)(fuzz_step(&seed) >> 16) % nrails,
                                      rnd64(&seed) >> (fuzz_step(&seed) >> 16) % 48,
                                      rnd64(&seed) >> (fuzz_step(&seed) >> 16) % 48,
                                      rnd64(&seed) >> (fuzz_step(&seed) >> 16) % 48,
                                      fuzz_step(&seed) >> 31);
        unsigned up = 0;
        for (int pass = 0; pass < 2; pass++) { /* the second pass rejoins some rails */
            up = 0;
            for (int r = 0; r < nrails; r++) {
                bool u = (fuzz_step(&seed) >> 16) % 4 != 0;
                rail_stripe_set_rail_state(&s, r, u);
                up |= (unsigned)u << r;
            }
            rail_stripe_on_completion(&s, (int)(fuzz_step(&seed) >> 16) % nrails,
                                      fuzz_step(&seed) >> 8, fuzz_step(&seed) >> 12,
                                      fuzz_step(&seed) >> 10, fuzz_step(&seed) >> 31);
        }
        uint64_t size;
        switch ((fuzz_step(&seed) >> 16) % 4) {
        case 0:
            size = (fuzz_step(&seed) >> 16) % 300;
            break;
        case 1:
            size = (fuzz_step(&seed) >> 8) % (1u << 22);
            break;
        case 2:
            size = rnd64(&seed) % ((uint64_t)1 << 40);
            break;
        default:
            size = rnd64(&seed) % (RAIL_STRIPE_MAX_SIZE + 1);
        }
        uint16_t w[RAIL_STRIPE_MAX_RAILS];
        int nup = rail_stripe_weights(&s, w);
        struct rail_stripe copy = s;
        struct rail_stripe_chunk c[MAXC], c2[MAXC], o[MAXC];
        int n = rail_stripe_schedule(&s, size, c, MAXC);
        if (!up) {
            bad_down += n != -ENETDOWN;
            continue;
        }
        scheduled++;
        int n2 = rail_stripe_schedule(&copy, size, c2, MAXC);
        bad_determ += n2 != n;
        for (int i = 0; i < n && n == n2; i++)
            bad_determ += c[i].rail != c2[i].rail || c[i].offset != c2[i].offset ||
                          c[i].length != c2[i].length;
        if (n < 1 || !covers(c, n, 0, size)) {
            bad_cover++;
            continue;
        }
        unsigned seen = 0;
        for (int i = 0; i < n; i++) {
            if (!(up >> c[i].rail & 1) || (seen >> c[i].rail & 1))
                bad_rail++;
            seen |= 1u << c[i].rail;
        }
        /* striped: each rail up within one 128-byte unit of size * w / 1024 (none: <= 128) */
        for (int r = 0; r < nrails && size >= min; r++) {
            if (!(up >> r & 1))
                continue;
            uint64_t got = 0;
            for (int i = 0; i < n; i++)
                if (c[i].rail == r)
                    got = c[i].length;
            double want = (double)size * w[r] / 1024.0;
            if (fabs((double)got - want) > 128.0 + want * 1e-12)
                bad_weight++;
        }
        /* every rail up gets bytes when its floor share is at least two units */
        if (size >= min && size > 0 &&
            size / 1024 * (1024 / (unsigned)nup / RAIL_STRIPE_FLOOR_DIV) >= 256 && seen != up)
            bad_floor++;

        /* a random rail of the schedule fails */
        int failed = c[(fuzz_step(&seed) >> 16) % (unsigned)n].rail;
        if (nup == 1) {
            bad_resched += rail_stripe_reschedule(&s, failed, c, n, o, MAXC) != -ENETDOWN;
            continue;
        }
        int m = rail_stripe_reschedule(&s, failed, c, n, o, MAXC);
        if (m < 1) {
            bad_resched++;
            continue;
        }
        rescheduled++;
        struct rail_stripe_chunk all[2 * MAXC];
        int k = 0;
        for (int i = 0; i < n; i++)
            if (c[i].rail != failed)
                all[k++] = c[i];
        for (int i = 0; i < m; i++) {
            if (o[i].rail == failed || !(up >> o[i].rail & 1))
                bad_resched++;
            all[k++] = o[i];
        }
        if (!covers(all, k, 0, size))
            bad_resched++;
    }
    CHECK_EQ_INT(bad_cover, 0);
    CHECK_EQ_INT(bad_weight, 0);
    CHECK_EQ_INT(bad_rail, 0);
    CHECK_EQ_INT(bad_floor, 0);
    CHECK_EQ_INT(bad_resched, 0);
    CHECK_EQ_INT(bad_determ, 0);
    CHECK_EQ_INT(bad_down, 0);
    CHECK_MSG(scheduled > 3000 && rescheduled > 1000, "scheduled %d, rescheduled %d", scheduled,
              rescheduled);
}

/* Two schedulers fed the same calls give the same schedules, field by field. */
static void test_determinism(void)
{
    const uint32_t sp[4] = {400000, 200000, 400000, 100000};
    struct rail_stripe a = make(4, RAIL_STRIPE_ADAPTIVE, 65536, sp);
    struct rail_stripe b = make(4, RAIL_STRIPE_ADAPTIVE, 65536, sp);
    uint32_t seed = 7;
    int diff = 0;
    for (int i = 0; i < 2000; i++) {
        int r = (int)(fuzz_step(&seed) >> 16) % 4;
        uint64_t bytes = fuzz_step(&seed) >> 10, post = (uint64_t)i * 10000,
                 done = post + (fuzz_step(&seed) >> 14);
        bool last = fuzz_step(&seed) >> 31;
        rail_stripe_on_completion(&a, r, bytes, post, done, last);
        rail_stripe_on_completion(&b, r, bytes, post, done, last);
        if (i % 97 == 0) {
            bool u = i % 194 != 0;
            rail_stripe_set_rail_state(&a, r, u);
            rail_stripe_set_rail_state(&b, r, u);
        }
        uint64_t size = fuzz_step(&seed) >> 8;
        struct rail_stripe_chunk ca[MAXC], cb[MAXC];
        int na = rail_stripe_schedule(&a, size, ca, MAXC);
        int nb = rail_stripe_schedule(&b, size, cb, MAXC);
        if (na != nb) {
            diff++;
            continue;
        }
        for (int k = 0; k < na; k++)
            diff += ca[k].rail != cb[k].rail || ca[k].offset != cb[k].offset ||
                    ca[k].length != cb[k].length;
    }
    CHECK_EQ_INT(diff, 0);
}

static void test_completion_input(void)
{
    clock_reset();
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, 0, NULL);
    uint64_t r0 = rail_stripe_rate(&s, 0);
    CHECK_EQ_INT(r0, 12500); /* nominal 100 Gb/s when no speed is known */
    CHECK_EQ_INT(rail_stripe_on_completion(&s, 0, 0, 1000, 2000, true), 0);
    CHECK_EQ_INT(rail_stripe_rate(&s, 0), r0);
    CHECK_EQ_INT(rail_stripe_on_completion(NULL, 0, 1, 1, 2, true), -EINVAL);
    CHECK_EQ_INT(rail_stripe_on_completion(&s, -1, 1, 1, 2, true), -EINVAL);
    /* huge values are clamped, nothing overflows: the rate stays finite and positive */
    for (int i = 0; i < 200; i++)
        sample(&s, 0, UINT64_MAX, 1);
    CHECK(rail_stripe_rate(&s, 0) > 0);
    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0] + w[1], 1024);
    CHECK_EQ_INT(w[1], 64);
    for (int i = 0; i < 200; i++)
        sample(&s, 1, 1, UINT64_MAX / 4);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[1], 64);
    for (int i = 0; i < 5000; i++) /* probing without end stays bounded */
        rail_stripe_on_completion(&s, 1, UINT64_MAX, 1, 2, false);
    rail_stripe_weights(&s, w);
    CHECK_EQ_INT(w[0] + w[1], 1024);
    CHECK(w[1] >= 64);
}

static void test_knobs(void)
{
    const struct rail_param_def *pol = rail_param_def(RAIL_PARAM_STRIPE_POLICY);
    const struct rail_param_def *min = rail_param_def(RAIL_PARAM_STRIPE_MIN);
    char err[128];
    /* the table's defaults and choices match the enum and the constant */
    CHECK_EQ_INT(rail_param_parse_enum(pol, pol->def, err, sizeof(err)), RAIL_STRIPE_ADAPTIVE);
    CHECK_EQ_INT(rail_param_parse_enum(pol, "equal", err, sizeof(err)), RAIL_STRIPE_EQUAL);
    CHECK_EQ_INT(rail_param_parse_enum(pol, "weighted", err, sizeof(err)), RAIL_STRIPE_WEIGHTED);
    CHECK_EQ_INT(strtoll(min->def, NULL, 0), RAIL_STRIPE_MIN_DEFAULT);
    CHECK_EQ_STR(rail_stripe_policy_name(RAIL_STRIPE_EQUAL), "equal");
    CHECK_EQ_STR(rail_stripe_policy_name(RAIL_STRIPE_WEIGHTED), "weighted");
    CHECK_EQ_STR(rail_stripe_policy_name(RAIL_STRIPE_ADAPTIVE), "adaptive");
    CHECK_EQ_STR(rail_stripe_policy_name((enum rail_stripe_policy)9), "?");

    struct rail_stripe_config cfg;
    unsetenv("NCCL_RAIL_STRIPE_POLICY");
    unsetenv("NCCL_RAIL_STRIPE_MIN");
    rail_stripe_config_default(&cfg, 2);
    cfg.policy = RAIL_STRIPE_EQUAL;
    cfg.min_stripe = 5;
    rail_stripe_config_from_env(&cfg);
    CHECK_EQ_INT(cfg.policy, RAIL_STRIPE_ADAPTIVE);
    CHECK_EQ_INT(cfg.min_stripe, RAIL_STRIPE_MIN_DEFAULT);
    setenv("NCCL_RAIL_STRIPE_POLICY", "Weighted", 1);
    setenv("NCCL_RAIL_STRIPE_MIN", "4096", 1);
    rail_stripe_config_from_env(&cfg);
    CHECK_EQ_INT(cfg.policy, RAIL_STRIPE_WEIGHTED);
    CHECK_EQ_INT(cfg.min_stripe, 4096);
    CHECK_EQ_INT(cfg.nrails, 2);
    setenv("NCCL_RAIL_STRIPE_POLICY", "fastest", 1);
    setenv("NCCL_RAIL_STRIPE_MIN", "-1", 1);
    rail_stripe_config_from_env(&cfg);
    CHECK_EQ_INT(cfg.policy, RAIL_STRIPE_ADAPTIVE);
    CHECK_EQ_INT(cfg.min_stripe, RAIL_STRIPE_MIN_DEFAULT);
    unsetenv("NCCL_RAIL_STRIPE_POLICY");
    unsetenv("NCCL_RAIL_STRIPE_MIN");
}

/* One rail (the scheduler's short cut for it): every size is one chunk on rail 0 from offset 0,
 * under every policy and threshold, after completions too; the argument and down errors stay. */
static void test_one_rail(void)
{
    struct rail_stripe_chunk c[MAXC];
    const uint64_t sizes[] = {0,     1,     127,    128,         129,
                              65535, 65536, 524288, 4194304 + 1, RAIL_STRIPE_MAX_SIZE};
    const enum rail_stripe_policy pol[] = {RAIL_STRIPE_EQUAL, RAIL_STRIPE_WEIGHTED,
                                           RAIL_STRIPE_ADAPTIVE};
    const uint32_t speed[1] = {200000};
    for (int p = 0; p < 3; p++) {
        for (int t = 0; t < 2; t++) {
            struct rail_stripe s = make(1, pol[p], t ? RAIL_STRIPE_MIN_DEFAULT : 0, speed);
            for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
                c[0] = (struct rail_stripe_chunk){.rail = 7, .offset = 1, .length = 1};
                CHECK_EQ_INT(rail_stripe_schedule(&s, sizes[i], c, MAXC), 1);
                CHECK_CHUNK(c[0], 0, 0, sizes[i]);
                CHECK_EQ_INT(rail_stripe_on_completion(&s, 0, sizes[i], 1000, 2000 + i, true), 0);
            }
            CHECK_EQ_INT(rail_stripe_schedule(&s, RAIL_STRIPE_MAX_SIZE + 1, c, MAXC), -EINVAL);
            CHECK_EQ_INT(rail_stripe_schedule(&s, 128, c, 0), -E2BIG);
            CHECK_EQ_INT(rail_stripe_schedule(&s, 128, NULL, MAXC), -EINVAL);
            CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 0, false), 0);
            CHECK_EQ_INT(rail_stripe_schedule(&s, 128, c, MAXC), -ENETDOWN);
            CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 0, true), 0);
            CHECK_EQ_INT(rail_stripe_schedule(&s, 524288, c, MAXC), 1);
            CHECK_CHUNK(c[0], 0, 0, 524288);
            uint16_t w[RAIL_STRIPE_MAX_RAILS];
            CHECK_EQ_INT(rail_stripe_weights(&s, w), 1);
            CHECK_EQ_INT(w[0], RAIL_STRIPE_WEIGHT_ONE);
        }
    }
}

/* rail_stripe_one_whole (the inline answer of the one-rail send path) against the call: true only
 * where rail_stripe_schedule gives the whole message on rail 0 and changes nothing; over one-,
 * two- and eight-rail schedulers, rails up and down, every policy and sizes around the limits.
 * Fails when any of its three conditions is dropped. */
static void test_one_whole(void)
{
    struct rail_stripe_chunk c[MAXC];
    const uint64_t sizes[] = {
        0,         1, 128, 131071, 131072, 524288, RAIL_STRIPE_MAX_SIZE, RAIL_STRIPE_MAX_SIZE + 1,
        UINT64_MAX};
    const int rails[] = {1, 2, 8};
    const uint32_t speed[RAIL_STRIPE_MAX_RAILS] = {100000, 200000};
    int whole = 0, not_whole = 0;
    for (int ri = 0; ri < 3; ri++)
        for (int p = 0; p < 3; p++)
            for (int down = 0; down < 2; down++)
                for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
                    struct rail_stripe s = make(rails[ri], (enum rail_stripe_policy)p, 0, speed);
                    if (down)
                        CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 0, false), 0);
                    struct rail_stripe before = s;
                    bool fast = rail_stripe_one_whole(&s, sizes[i]);
                    c[0] = (struct rail_stripe_chunk){.rail = 7, .offset = 1, .length = 1};
                    int n = rail_stripe_schedule(&s, sizes[i], c, MAXC);
                    bool call = n == 1 && c[0].rail == 0 && c[0].offset == 0 &&
                                c[0].length == sizes[i] && memcmp(&s, &before, sizeof(s)) == 0;
                    /* One rail: the same answer; more: never whole on rail 0 by the inline
                     * form (the call may pick rail 0 round-robin). */
                    CHECK_MSG(rails[ri] == 1 ? fast == call : !fast,
                              "%d rail(s), policy %d, rail 0 %s, size %llu: inline says %d, the "
                              "call gives %d chunk(s)",
                              rails[ri], p, down ? "down" : "up", (unsigned long long)sizes[i],
                              fast, n);
                    whole += fast;
                    not_whole += !fast;
                }
    CHECK(whole > 0 && not_whole > 0);
}

int main(void)
{
    test_init_errors();
    test_one_whole();
    test_fixed_schedules();
    test_edge_sizes();
    test_one_rail();
    test_round_robin();
    test_adaptive_convergence();
    test_probe();
    test_floor_share();
    test_rejoin();
    test_all_down();
    test_reschedule();
    test_fuzz();
    test_determinism();
    test_completion_input();
    test_knobs();
    return check_report("test_stripe");
}
