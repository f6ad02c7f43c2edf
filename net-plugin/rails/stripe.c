/* SPDX-License-Identifier: Apache-2.0 */
/* Stripe scheduler (see stripe.h): integer weights with a floor share, a cumulative split on
 * 128-byte boundaries, round-robin for whole messages, and a decayed-sum rate estimate per rail. */
#include "rails/stripe.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wire/net_wire.h"
#include "params.h"

static_assert(RAIL_STRIPE_MAX_RAILS == RAIL_MAX_RAILS, "stripe and wire rail limits differ");
static_assert(RAIL_STRIPE_WEIGHT_ONE / RAIL_STRIPE_MAX_RAILS / RAIL_STRIPE_FLOOR_DIV >= 1,
              "the floor share must be at least one weight unit");
static_assert(RAIL_STRIPE_ADAPTIVE == 2,
              "policy values follow the NCCL_RAIL_STRIPE_POLICY choices");

/* Rate estimate per rail, from the completions of striped chunks in polling order. A chunk's
 * "interval" is the time from its post, or from the rail's previous completion when that came
 * later (the chunk was queued behind it): then bytes / interval is the rail's service rate, and the
 * sample goes into two decayed sums (each sample decays both by 1/2^DECAY_SHIFT, then adds), so
 * the rate is an exponentially weighted average in which a sample weighs by its time, and
 * completions polled together (one long interval, then zero) average out. The chunk that finishes
 * its message is also a sample, queued or not: its rail was that message's bottleneck.
 *
 * What the samples miss is a rail that is not the bottleneck: posted to while idle, its interval
 * includes the round-trip latency; paced by the bottleneck, its "queued" interval is the posting
 * period. Both understate it, and the split would settle with that rail idling. So every chunk that
 * finished before its message did also raises its rail's estimate by 1/2^PROBE_SHIFT: the rail
 * probes upwards until it takes enough to be a bottleneck too and gets measured. In the steady
 * state every rail is now and then the last one and inflates alike, which leaves the ratios, hence
 * the weights, right (bench/stripe_sim.c, docs/striping.md). */
#define DECAY_SHIFT   3
#define PROBE_SHIFT   5
#define PROBE_SPAN    16                  /* probing stops at 16x the fastest other rail */
#define PRIOR_NS      131072u             /* time weight of the starting estimate */
#define MAX_SAMPLE_B  ((uint64_t)1 << 36) /* keeps the sums far from overflow */
#define MAX_SAMPLE_NS ((uint64_t)1 << 40)
#define MAX_SUM_B     ((uint64_t)1 << 40) /* avg_bytes * 1024 < 2^50 */
#define NOMINAL_MBPS  100000u             /* starting rate when no speed is known */

static unsigned up_mask(const struct rail_stripe *s)
{
    return s->up_mask; /* kept by rail_stripe_init and rail_stripe_set_rail_state */
}

/* Inline, without a call: the build targets plain x86-64, where __builtin_popcount is a libgcc
 * call (~20 instructions); masks have at most RAIL_STRIPE_MAX_RAILS bits. */
static int popcount(unsigned m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* The rails of a mask in increasing order: for (unsigned m = mask; m; m &= m - 1) { r = lowest(m) }
 */
static int lowest(unsigned m)
{
    return __builtin_ctz(m);
}

/* Starting decayed sums for a rail of speed_mbps (bytes per ns = Mb/s / 8000). */
static void seed_estimate(struct rail_stripe_rail_state *st, uint32_t speed_mbps)
{
    st->avg_ns = PRIOR_NS;
    st->avg_bytes = (uint64_t)speed_mbps * PRIOR_NS / 8000u;
    st->seed_rate = st->avg_bytes * 1024u / PRIOR_NS;
}

/* Measured rate in 1/1024 bytes per ns: avg_bytes <= 2^40 and avg_ns >= 1 keep it below 2^50. */
static uint64_t measured(const struct rail_stripe_rail_state *st)
{
    return st->avg_bytes * 1024u / st->avg_ns;
}

/* Keep avg_bytes <= MAX_SUM_B (halving both sums keeps the rate) and avg_ns >= 1. */
static void normalise(struct rail_stripe_rail_state *st)
{
    while (st->avg_bytes > MAX_SUM_B) {
        st->avg_bytes >>= 1;
        st->avg_ns >>= 1;
    }
    if (st->avg_ns == 0)
        st->avg_ns = 1;
}

static void add_sample(struct rail_stripe_rail_state *st, uint64_t bytes, uint64_t ns)
{
    st->avg_bytes = st->avg_bytes - (st->avg_bytes >> DECAY_SHIFT) + bytes;
    st->avg_ns = st->avg_ns - (st->avg_ns >> DECAY_SHIFT) + ns;
    normalise(st);
}

/* The value a rail's share is proportional to, before the floor. */
static uint64_t raw_weight(const struct rail_stripe *s, int r, unsigned mask)
{
    switch (s->policy) {
    case RAIL_STRIPE_WEIGHTED: {
        if (s->rail[r].speed_mbps)
            return s->rail[r].speed_mbps;
        uint64_t sum = 0, known = 0;
        for (int i = 0; i < s->nrails; i++)
            if ((mask >> i & 1) && s->rail[i].speed_mbps) {
                sum += s->rail[i].speed_mbps;
                known++;
            }
        return known ? sum / known : 1;
    }
    case RAIL_STRIPE_ADAPTIVE:
        return measured(&s->rail[r]);
    default:
        return 1;
    }
}

/* compute_weights over exactly two rails a < b, in closed form (the same result; a dual-rail
 * NIC's every striped message runs it): at most one rail falls below the floor, since the two
 * floors sum to 1/8; that one gets the floor and the other the rest. Otherwise each gets its
 * proportional share, and the one unit the rounding may leave goes to the larger remainder, ties
 * to a. */
static inline __attribute__((always_inline)) void
weights_of_two_inl(int a, int b, uint64_t ra, uint64_t rb, uint16_t w[RAIL_STRIPE_MAX_RAILS])
{
    const uint64_t one = RAIL_STRIPE_WEIGHT_ONE, floor = one / 2 / RAIL_STRIPE_FLOOR_DIV;
    uint64_t sum = ra + rb;
    if (sum == 0) { /* nothing measured: equal shares */
        ra = rb = 1;
        sum = 2;
    }
    const uint64_t sa = one * ra, sb = one * rb, below = floor * sum;
    if (sa < below || sb < below) {
        int pinned = sa < below ? a : b;
        w[pinned] = (uint16_t)floor;
        w[pinned == a ? b : a] = (uint16_t)(one - floor);
        return;
    }
    w[a] = (uint16_t)(sa / sum);
    w[b] = (uint16_t)(sb / sum);
    if (w[a] + w[b] < one)
        w[sb % sum > sa % sum ? b : a]++;
}

static void weights_of_two(int a, int b, uint64_t ra, uint64_t rb,
                           uint16_t w[RAIL_STRIPE_MAX_RAILS])
{
    weights_of_two_inl(a, b, ra, rb, w);
}

/* Weights over the rails in mask: sum RAIL_STRIPE_WEIGHT_ONE, each at least the floor share,
 * the rest proportional to raw_weight (largest remainder, ties to the lower rail). Runs once per
 * striped message under the adaptive policy (every completion moves the estimates), so the loops
 * visit only the rails of the mask, in increasing order (test_stripe_weights checks the result
 * against the plain formulation over random states). */
static void compute_weights(const struct rail_stripe *s, unsigned mask,
                            uint16_t w[RAIL_STRIPE_MAX_RAILS])
{
    uint64_t raw[RAIL_STRIPE_MAX_RAILS], rem[RAIL_STRIPE_MAX_RAILS];
    memset(w, 0, sizeof(uint16_t) * RAIL_STRIPE_MAX_RAILS);
    if (mask == 0)
        return;
    for (unsigned m = mask; m; m &= m - 1) {
        int r = lowest(m);
        raw[r] = s->policy == RAIL_STRIPE_ADAPTIVE ? measured(&s->rail[r]) : raw_weight(s, r, mask);
    }
    unsigned rest = mask & (mask - 1);
    if (rest && !(rest & (rest - 1))) {
        weights_of_two(lowest(mask), lowest(rest), raw[lowest(mask)], raw[lowest(rest)], w);
        return;
    }

    /* Pin the rails whose proportional share falls below the floor, until none does. */
    const uint64_t floor =
        RAIL_STRIPE_WEIGHT_ONE / (unsigned)popcount(mask) / RAIL_STRIPE_FLOOR_DIV;
    unsigned free_mask = mask;
    uint64_t remaining = RAIL_STRIPE_WEIGHT_ONE, sum;
    for (;;) {
        sum = 0;
        for (unsigned m = free_mask; m; m &= m - 1)
            sum += raw[lowest(m)];
        if (sum == 0) { /* nothing measured: share the rest equally */
            for (unsigned m = free_mask; m; m &= m - 1)
                raw[lowest(m)] = 1;
            sum = (uint64_t)popcount(free_mask);
        }
        const uint64_t below = floor * sum;
        unsigned pin = 0;
        for (unsigned m = free_mask; m; m &= m - 1) {
            int r = lowest(m);
            if (remaining * raw[r] < below)
                pin |= 1u << r;
        }
        if (!pin)
            break;
        free_mask &= ~pin; /* never empties: the floors sum to at most 1/8 of the total */
        remaining -= (uint64_t)popcount(pin) * floor;
    }

    uint64_t given = 0;
    for (unsigned m = mask & ~free_mask; m; m &= m - 1)
        w[lowest(m)] = (uint16_t)floor;
    for (unsigned m = free_mask; m; m &= m - 1) {
        int r = lowest(m);
        uint64_t share = remaining * raw[r];
        w[r] = (uint16_t)(share / sum);
        rem[r] = share % sum;
        given += w[r];
    }
    for (uint64_t left = remaining - given; left > 0; left--) {
        int best = -1;
        for (unsigned m = free_mask; m; m &= m - 1) {
            int r = lowest(m);
            if (best < 0 || rem[r] > rem[best])
                best = r;
        }
        w[best]++;
        free_mask &= ~(1u << best); /* each rail gets at most one extra unit */
    }
}

/* The weights of the next striped message, recomputed when something moved them (under the
 * adaptive policy: every completion). A dual-rail comm with both rails up under the adaptive
 * policy, the common case, goes to weights_of_two directly: what compute_weights does for that
 * state (measured rates, mask 0b11), without its call, clearing and mask walk; the cache's other
 * entries stay 0 since with two rails nothing else ever writes them. test_stripe_weights compares
 * the schedules with the reference weights over random state sequences. */
static const uint16_t *current_weights(struct rail_stripe *s)
{
    if (!s->weights_valid) {
        if (s->nrails == 2 && s->up_mask == 3u && s->policy == RAIL_STRIPE_ADAPTIVE)
            weights_of_two(0, 1, measured(&s->rail[0]), measured(&s->rail[1]), s->weight);
        else
            compute_weights(s, up_mask(s), s->weight);
        s->weights_valid = true;
    }
    return s->weight;
}

/* Next rail of mask at or after *cursor; advances the cursor past it. mask must not be empty. */
static int rr_pick(unsigned *cursor, unsigned mask, int nrails)
{
    for (int i = 0; i < nrails; i++) {
        int r = (int)((*cursor + (unsigned)i) % (unsigned)nrails);
        if (mask >> r & 1) {
            *cursor = (unsigned)(r + 1) % (unsigned)nrails;
            return r;
        }
    }
    return -1;
}

/* Split [base, base + len) by w (sum RAIL_STRIPE_WEIGHT_ONE) into out: chunk boundaries are the
 * cumulative weights times len rounded to the nearest 128 bytes (the last one is len), so each
 * length is within 128 bytes of its exact share. base must be 128-aligned. Empty chunks are
 * left out. Returns the chunk count or -E2BIG. */
static int split(uint64_t base, uint64_t len, const uint16_t *w, int nrails,
                 struct rail_stripe_chunk *out, int cap)
{
    const uint64_t unit = (uint64_t)RAIL_STRIPE_ALIGN * RAIL_STRIPE_WEIGHT_ONE;
    uint64_t cum = 0, prev = 0;
    int n = 0;
    for (int r = 0; r < nrails; r++) {
        if (!w[r])
            continue;
        cum += w[r];
        uint64_t end = len;
        if (cum < RAIL_STRIPE_WEIGHT_ONE) { /* len < 2^52: len * cum < 2^62 */
            end = (len * cum + unit / 2) / unit * RAIL_STRIPE_ALIGN;
            if (end > len)
                end = len;
        }
        if (end <= prev)
            continue;
        if (n == cap)
            return -E2BIG;
        out[n++] =
            (struct rail_stripe_chunk){.rail = r, .offset = base + prev, .length = end - prev};
        prev = end;
    }
    return n;
}

/* Rail 0's end in split_two: rail 0's weight times len, rounded to the nearest 128 bytes, at most
 * len. */
static uint64_t end_of_two(uint64_t len, const uint16_t *w)
{
    const uint64_t unit = (uint64_t)RAIL_STRIPE_ALIGN * RAIL_STRIPE_WEIGHT_ONE;
    uint64_t end = (len * w[0] + unit / 2) / unit * RAIL_STRIPE_ALIGN;
    return end > len ? len : end;
}

/* split of [0, len) for a dual-rail comm with both rails up: the one boundary, rounded as split
 * rounds it. Both weights are at least the floor share (64 of 1024), so rail 0's cumulative
 * weight is below RAIL_STRIPE_WEIGHT_ONE and rail 1's is all of it, as split's loop finds. */
static int split_two(uint64_t len, const uint16_t *w, struct rail_stripe_chunk *out, int cap)
{
    uint64_t end = end_of_two(len, w);
    int n = 0;
    if (end > 0)
        out[n++] = (struct rail_stripe_chunk){.rail = 0, .offset = 0, .length = end};
    if (len > end) {
        if (n == cap)
            return -E2BIG;
        out[n++] = (struct rail_stripe_chunk){.rail = 1, .offset = end, .length = len - end};
    }
    return n;
}

void rail_stripe_config_default(struct rail_stripe_config *cfg, int nrails)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->nrails = nrails;
    cfg->policy = RAIL_STRIPE_ADAPTIVE;
    cfg->min_stripe = RAIL_STRIPE_MIN_DEFAULT;
}

void rail_stripe_config_from_env(struct rail_stripe_config *cfg)
{
    int p = rail_param_enum(RAIL_PARAM_STRIPE_POLICY);
    cfg->policy = p >= 0 ? (enum rail_stripe_policy)p : RAIL_STRIPE_ADAPTIVE;
    cfg->min_stripe = (uint64_t)rail_param_int(RAIL_PARAM_STRIPE_MIN);
}

int rail_stripe_init(struct rail_stripe *s, const struct rail_stripe_config *cfg, char *err,
                     size_t errlen)
{
    if (!s || !cfg) {
        snprintf(err, errlen, "stripe scheduler: NULL argument");
        return -EINVAL;
    }
    if (cfg->nrails < 1 || cfg->nrails > RAIL_STRIPE_MAX_RAILS) {
        snprintf(err, errlen, "stripe scheduler: %d rails, 1..%d allowed", cfg->nrails,
                 RAIL_STRIPE_MAX_RAILS);
        return -EINVAL;
    }
    if (cfg->policy != RAIL_STRIPE_EQUAL && cfg->policy != RAIL_STRIPE_WEIGHTED &&
        cfg->policy != RAIL_STRIPE_ADAPTIVE) {
        snprintf(err, errlen, "stripe scheduler: unknown policy %d", (int)cfg->policy);
        return -EINVAL;
    }
    if (cfg->min_stripe > RAIL_STRIPE_MAX_SIZE) {
        snprintf(err, errlen, "stripe scheduler: minimum stripe size %llu above %llu",
                 (unsigned long long)cfg->min_stripe, (unsigned long long)RAIL_STRIPE_MAX_SIZE);
        return -EINVAL;
    }
    memset(s, 0, sizeof(*s));
    s->nrails = cfg->nrails;
    s->policy = cfg->policy;
    s->min_stripe = cfg->min_stripe;

    uint64_t known_sum = 0, known = 0;
    for (int r = 0; r < cfg->nrails; r++)
        if (cfg->speed_mbps[r]) {
            known_sum += cfg->speed_mbps[r];
            known++;
        }
    uint32_t fallback = known ? (uint32_t)(known_sum / known) : NOMINAL_MBPS;
    for (int r = 0; r < cfg->nrails; r++) {
        s->rail[r].up = true;
        s->up_mask |= 1u << r;
        s->rail[r].speed_mbps = cfg->speed_mbps[r];
        seed_estimate(&s->rail[r], cfg->speed_mbps[r] ? cfg->speed_mbps[r] : fallback);
    }
    return 0;
}

int rail_stripe_schedule(struct rail_stripe *s, uint64_t size, struct rail_stripe_chunk *out,
                         int cap)
{
    if (!s || !out || size > RAIL_STRIPE_MAX_SIZE)
        return -EINVAL;
    unsigned mask = up_mask(s);
    if (!mask)
        return -ENETDOWN;
    if (cap < 1)
        return -E2BIG;
    if (s->nrails == 1) { /* what both ways below give one rail, without weights or a split */
        out[0] = (struct rail_stripe_chunk){.rail = 0, .offset = 0, .length = size};
        return 1;
    }
    if (size == 0 || size < s->min_stripe) {
        int r = rr_pick(&s->rr_next, mask, s->nrails);
        out[0] = (struct rail_stripe_chunk){.rail = r, .offset = 0, .length = size};
        return 1;
    }
    const uint16_t *w = current_weights(s);
    if (s->nrails == 2 && mask == 3u)
        return split_two(size, w, out, cap);
    return split(0, size, w, s->nrails, out, cap);
}

uint64_t rail_stripe_two_end(struct rail_stripe *s, uint64_t size)
{
    /* current_weights for the caller's state (two rails, both up), its adaptive case's
     * weights_of_two with the rails 0 and 1 as constants. */
    assert(s->nrails == 2 && s->up_mask == 3u); /* the caller's check (stripe.h) */
    if (!s->weights_valid) {
        if (s->policy == RAIL_STRIPE_ADAPTIVE)
            weights_of_two_inl(0, 1, measured(&s->rail[0]), measured(&s->rail[1]), s->weight);
        else
            compute_weights(s, up_mask(s), s->weight);
        s->weights_valid = true;
    }
    return end_of_two(size, s->weight);
}

int rail_stripe_reschedule(struct rail_stripe *s, int failed_rail,
                           const struct rail_stripe_chunk *chunks, int n,
                           struct rail_stripe_chunk *out, int cap)
{
    if (!s || failed_rail < 0 || failed_rail >= s->nrails || n < 0 || (n > 0 && !chunks) ||
        cap < 0 || (cap > 0 && !out))
        return -EINVAL;
    int nfailed = 0;
    for (int i = 0; i < n; i++) {
        const struct rail_stripe_chunk *c = &chunks[i];
        if (c->rail < 0 || c->rail >= s->nrails || c->offset % RAIL_STRIPE_ALIGN ||
            c->offset > RAIL_STRIPE_MAX_SIZE || c->length > RAIL_STRIPE_MAX_SIZE - c->offset)
            return -EINVAL;
        nfailed += c->rail == failed_rail;
    }
    if (nfailed == 0)
        return 0;
    unsigned mask = up_mask(s) & ~(1u << failed_rail);
    if (!mask)
        return -ENETDOWN;

    uint16_t w[RAIL_STRIPE_MAX_RAILS];
    compute_weights(s, mask, w);
    unsigned cursor = s->rr_next;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const struct rail_stripe_chunk *c = &chunks[i];
        if (c->rail != failed_rail)
            continue;
        if (c->length == 0 || c->length < s->min_stripe) {
            if (k == cap)
                return -E2BIG;
            out[k++] = (struct rail_stripe_chunk){.rail = rr_pick(&cursor, mask, s->nrails),
                                                  .offset = c->offset,
                                                  .length = c->length};
            continue;
        }
        int m = split(c->offset, c->length, w, s->nrails, out + k, cap - k);
        if (m < 0)
            return m;
        k += m;
    }
    s->rr_next = cursor;
    return k;
}

int rail_stripe_set_rail_state(struct rail_stripe *s, int rail, bool up)
{
    if (!s || rail < 0 || rail >= s->nrails)
        return -EINVAL;
    struct rail_stripe_rail_state *st = &s->rail[rail];
    if (st->up == up)
        return 0;
    if (up) {
        /* Rejoin at half the rate of the slowest rail that is up, with its time weight, so the
         * rail's own completions take over at the usual pace. Alone, it keeps its history. */
        int slowest = -1;
        for (int r = 0; r < s->nrails; r++)
            if (s->rail[r].up &&
                (slowest < 0 || measured(&s->rail[r]) < measured(&s->rail[slowest])))
                slowest = r;
        if (slowest >= 0) {
            st->avg_bytes = s->rail[slowest].avg_bytes / 2;
            st->avg_ns = s->rail[slowest].avg_ns;
        }
    }
    st->up = up;
    s->up_mask = up ? s->up_mask | 1u << rail : s->up_mask & ~(1u << rail);
    st->last_done_ns = 0; /* nothing outstanding on it any more */
    s->weights_valid = false;
    return 0;
}

/* The probe of a chunk that finished before its message did: its rail's estimate rises by
 * 1/2^PROBE_SHIFT while it is below twice its starting rate or others (16x the fastest other
 * rail up). */
static inline __attribute__((always_inline)) void probe_below(struct rail_stripe_rail_state *st,
                                                              uint64_t others)
{
    uint64_t cap = 2 * st->seed_rate;
    if (others > cap)
        cap = others;
    if (measured(st) < cap) {
        st->avg_bytes += (st->avg_bytes >> PROBE_SHIFT) + 1;
        normalise(st);
    }
}

static void probe(struct rail_stripe *s, int rail)
{
    uint64_t others = 0;
    for (unsigned m = up_mask(s) & ~(1u << rail); m; m &= m - 1) { /* the other rails up */
        uint64_t other = PROBE_SPAN * measured(&s->rail[lowest(m)]);
        if (other > others)
            others = other;
    }
    probe_below(&s->rail[rail], others);
}

__attribute__((noinline)) int rail_stripe_on_completion_general(struct rail_stripe *s, int rail,
                                                                uint64_t bytes, uint64_t post_ns,
                                                                uint64_t done_ns, bool last)
{
    if (!s || rail < 0 || rail >= s->nrails)
        return -EINVAL;
    struct rail_stripe_rail_state *st = &s->rail[rail];
    if (!st->up || bytes == 0)
        return 0;
    if (bytes > MAX_SAMPLE_B)
        bytes = MAX_SAMPLE_B;
    bool queued = post_ns < st->last_done_ns;
    uint64_t from = queued ? st->last_done_ns : post_ns;
    uint64_t ns = done_ns > from ? done_ns - from : 0; /* polled out of order: 0 */
    if (ns > MAX_SAMPLE_NS)
        ns = MAX_SAMPLE_NS;
    if (done_ns > st->last_done_ns)
        st->last_done_ns = done_ns;

    if (last || queued)
        add_sample(st, bytes, ns);
    if (!last) /* probe, up to twice the starting rate or 16x the fastest other rail */
        probe(s, rail);
    if (s->policy == RAIL_STRIPE_ADAPTIVE)
        s->weights_valid = false;
    return 0;
}

/* The common completion: a piece on rail 0 or 1 with those two rails up and no other (a
 * dual-rail comm with both rails up), under the adaptive policy, of 1..MAX_SAMPLE_B bytes, not
 * queued (the rail's previous completion came before this piece was posted) and done_ns - post_ns
 * at most MAX_SAMPLE_NS (a completion polled out of order wraps above it). Then the general
 * path's checks all pass, the interval is done_ns - post_ns (done_ns >= post_ns >= the rail's
 * last completion, which done_ns becomes), the sample is taken only for the last piece and the
 * probe looks at the one other rail: the same state afterwards, without the clamps and the mask
 * walk. test_stripe_two compares the two over many random states. */
int rail_stripe_on_completion(struct rail_stripe *s, int rail, uint64_t bytes, uint64_t post_ns,
                              uint64_t done_ns, bool last)
{
    if (s && s->up_mask == 3u && s->policy == RAIL_STRIPE_ADAPTIVE && (unsigned)rail < 2u &&
        bytes - 1 < MAX_SAMPLE_B) {
        struct rail_stripe_rail_state *st = &s->rail[rail];
        uint64_t ns = done_ns - post_ns; /* out of order: above MAX_SAMPLE_NS */
        if (post_ns >= st->last_done_ns && ns <= MAX_SAMPLE_NS) {
            st->last_done_ns = done_ns;
            s->weights_valid = false;
            if (last) {
                add_sample(st, bytes, ns);
                return 0;
            }
            probe_below(st, PROBE_SPAN * measured(&s->rail[rail ^ 1]));
            return 0;
        }
    }
    return rail_stripe_on_completion_general(s, rail, bytes, post_ns, done_ns, last);
}

int rail_stripe_weights(const struct rail_stripe *s, uint16_t w[RAIL_STRIPE_MAX_RAILS])
{
    if (!s) {
        memset(w, 0, sizeof(uint16_t) * RAIL_STRIPE_MAX_RAILS);
        return 0;
    }
    unsigned mask = up_mask(s);
    compute_weights(s, mask, w);
    return popcount(mask);
}

uint64_t rail_stripe_rate(const struct rail_stripe *s, int rail)
{
    if (!s || rail < 0 || rail >= s->nrails)
        return 0;
    return s->rail[rail].avg_bytes * 1000u / s->rail[rail].avg_ns;
}

bool rail_stripe_rail_up(const struct rail_stripe *s, int rail)
{
    return s && rail >= 0 && rail < s->nrails && s->rail[rail].up;
}

const char *rail_stripe_policy_name(enum rail_stripe_policy p)
{
    switch (p) {
    case RAIL_STRIPE_EQUAL:
        return "equal";
    case RAIL_STRIPE_WEIGHTED:
        return "weighted";
    case RAIL_STRIPE_ADAPTIVE:
        return "adaptive";
    }
    return "?";
}
