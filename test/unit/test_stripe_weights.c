/* SPDX-License-Identifier: Apache-2.0 */
/* stripe weights (rails/stripe.c compute_weights, issue 27): the per-message computation visits
 * only the rails that are up, with an inline bit count; this checks that it gives the same
 * weights as the plain formulation it replaced (every rail index, pinning loop, largest
 * remainder with ties to the lower rail), kept here as the reference, over random rail counts,
 * policies, speeds, rate estimates (zero, tiny, equal, far apart) and rails down. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "rails/stripe.h"

static int ref_popcount(unsigned m)
{
    int n = 0;
    for (int i = 0; i < 32; i++)
        n += (int)(m >> i & 1);
    return n;
}

static uint64_t ref_raw(const struct rail_stripe *s, int r, unsigned mask)
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
        return s->rail[r].avg_bytes * 1024u / s->rail[r].avg_ns;
    default:
        return 1;
    }
}

/* The formulation before the change, loop for loop. */
static void ref_weights(const struct rail_stripe *s, unsigned mask, uint16_t w[])
{
    uint64_t raw[RAIL_STRIPE_MAX_RAILS] = {0};
    int nup = ref_popcount(mask);
    memset(w, 0, sizeof(uint16_t) * RAIL_STRIPE_MAX_RAILS);
    if (nup == 0)
        return;
    for (int r = 0; r < s->nrails; r++)
        if (mask >> r & 1)
            raw[r] = ref_raw(s, r, mask);
    const uint64_t floor = RAIL_STRIPE_WEIGHT_ONE / (unsigned)nup / RAIL_STRIPE_FLOOR_DIV;
    unsigned free_mask = mask;
    uint64_t remaining, sum;
    for (;;) {
        remaining = RAIL_STRIPE_WEIGHT_ONE - (uint64_t)ref_popcount(mask & ~free_mask) * floor;
        sum = 0;
        for (int r = 0; r < s->nrails; r++)
            if (free_mask >> r & 1)
                sum += raw[r];
        if (sum == 0) {
            for (int r = 0; r < s->nrails; r++)
                if (free_mask >> r & 1)
                    raw[r] = 1;
            sum = (uint64_t)ref_popcount(free_mask);
        }
        unsigned pin = 0;
        for (int r = 0; r < s->nrails; r++)
            if ((free_mask >> r & 1) && remaining * raw[r] < floor * sum)
                pin |= 1u << r;
        if (!pin)
            break;
        free_mask &= ~pin;
    }
    uint64_t rem[RAIL_STRIPE_MAX_RAILS] = {0}, given = 0;
    for (int r = 0; r < s->nrails; r++) {
        if (!(mask >> r & 1))
            continue;
        if (!(free_mask >> r & 1)) {
            w[r] = (uint16_t)floor;
            continue;
        }
        w[r] = (uint16_t)(remaining * raw[r] / sum);
        rem[r] = remaining * raw[r] % sum;
        given += w[r];
    }
    for (uint64_t left = remaining - given; left > 0; left--) {
        int best = -1;
        for (int r = 0; r < s->nrails; r++)
            if ((free_mask >> r & 1) && (best < 0 || rem[r] > rem[best]))
                best = r;
        w[best]++;
        free_mask &= ~(1u << best);
    }
}

/* A rate estimate of one of a few shapes, so that ties, pins and zero rates all occur. */
static void random_rate(uint32_t *seed, struct rail_stripe_rail_state *st)
{
    switch (fuzz_step(seed) >> 28) {
    case 0:
    case 1:
        st->avg_bytes = 0; /* measured 0: pinned, or "nothing measured" when all are */
        st->avg_ns = 1 + (fuzz_step(seed) >> 20);
        break;
    case 2:
    case 3:
        st->avg_bytes = 1000; /* equal rates: ties in the remainders */
        st->avg_ns = 1000;
        break;
    case 4:
        st->avg_bytes = 1 + (fuzz_step(seed) >> 24); /* tiny next to the others: pinned */
        st->avg_ns = 1u << 30;
        break;
    default:
        st->avg_bytes = ((uint64_t)fuzz_step(seed) << 8) + (fuzz_step(seed) >> 16);
        st->avg_ns = 1 + (fuzz_step(seed) >> 8);
        break;
    }
}

static void compare(uint32_t seed)
{
    struct rail_stripe_config cfg;
    struct rail_stripe s;
    char err[128] = "";
    int nrails = 1 + (int)((fuzz_step(&seed) >> 16) % RAIL_STRIPE_MAX_RAILS);
    rail_stripe_config_default(&cfg, nrails);
    cfg.policy = (enum rail_stripe_policy)((fuzz_step(&seed) >> 16) % 3);
    for (int r = 0; r < nrails; r++)
        cfg.speed_mbps[r] = (fuzz_step(&seed) >> 30) ? (fuzz_step(&seed) >> 12) % 400000 : 0;
    CHECK_MSG(rail_stripe_init(&s, &cfg, err, sizeof(err)) == 0, "init: %s", err);
    for (int r = 0; r < nrails; r++)
        random_rate(&seed, &s.rail[r]);
    for (int r = 0; r < nrails; r++)
        if ((fuzz_step(&seed) >> 29) == 0) {
            uint64_t b = s.rail[r].avg_bytes, ns = s.rail[r].avg_ns;
            CHECK_EQ_INT(rail_stripe_set_rail_state(&s, r, false), 0);
            s.rail[r].avg_bytes = b; /* a down rail keeps its estimate: not read */
            s.rail[r].avg_ns = ns;
        }
    uint16_t got[RAIL_STRIPE_MAX_RAILS], want[RAIL_STRIPE_MAX_RAILS];
    int nup = rail_stripe_weights(&s, got);
    ref_weights(&s, s.up_mask, want);
    CHECK_EQ_INT(nup, ref_popcount(s.up_mask));
    for (int r = 0; r < RAIL_STRIPE_MAX_RAILS; r++)
        CHECK_MSG(got[r] == want[r],
                  "seed %u, %d rails, policy %d, mask %#x: rail %d weight %u, "
                  "the reference %u",
                  seed, nrails, (int)cfg.policy, s.up_mask, r, got[r], want[r]);
}

/* Two rails up (weights_of_two's closed form) with rates chosen for its branches: a remainder
 * tie with a unit left over (1023:1025), either rail below the floor, one or both measured 0,
 * equal rates; rails 0+1 of 2, and 1+3 of 4 with the others down. */
static void two_rails(void)
{
    static const uint64_t rates[][2] = {{1023, 1025}, {1025, 1023}, {1, 4000}, {4000, 1},
                                        {0, 5},       {5, 0},       {0, 0},    {7, 7},
                                        {3, 5},       {1000, 1}};
    for (int shape = 0; shape < 2; shape++)
        for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
            struct rail_stripe_config cfg;
            struct rail_stripe s;
            char err[128] = "";
            int n = shape ? 4 : 2, a = shape ? 1 : 0, b = shape ? 3 : 1;
            rail_stripe_config_default(&cfg, n);
            cfg.policy = RAIL_STRIPE_ADAPTIVE;
            CHECK_MSG(rail_stripe_init(&s, &cfg, err, sizeof(err)) == 0, "init: %s", err);
            for (int r = 0; r < n; r++)
                if (r != a && r != b)
                    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, r, false), 0);
            s.rail[a].avg_bytes = rates[i][0];
            s.rail[b].avg_bytes = rates[i][1];
            s.rail[a].avg_ns = s.rail[b].avg_ns = 1024; /* measured() = the rate above */
            uint16_t got[RAIL_STRIPE_MAX_RAILS], want[RAIL_STRIPE_MAX_RAILS];
            CHECK_EQ_INT(rail_stripe_weights(&s, got), 2);
            ref_weights(&s, s.up_mask, want);
            for (int r = 0; r < RAIL_STRIPE_MAX_RAILS; r++)
                CHECK_MSG(got[r] == want[r],
                          "rates %llu:%llu on rails %d+%d: rail %d weight %u, the reference %u",
                          (unsigned long long)rates[i][0], (unsigned long long)rates[i][1], a, b, r,
                          got[r], want[r]);
        }
}

/* The split of rail_stripe_schedule (cumulative weights rounded to 128 bytes, empty chunks
 * left out), written out plainly. */
static int ref_split(uint64_t len, const uint16_t *w, int nrails, struct rail_stripe_chunk *out)
{
    uint64_t cum = 0, prev = 0;
    int n = 0;
    for (int r = 0; r < nrails; r++) {
        if (!w[r])
            continue;
        cum += w[r];
        uint64_t end = len;
        if (cum < RAIL_STRIPE_WEIGHT_ONE) {
            end = (len * cum + RAIL_STRIPE_WEIGHT_ONE * RAIL_STRIPE_ALIGN / 2) /
                  (RAIL_STRIPE_WEIGHT_ONE * RAIL_STRIPE_ALIGN) * RAIL_STRIPE_ALIGN;
            if (end > len)
                end = len;
        }
        if (end <= prev)
            continue;
        out[n++] = (struct rail_stripe_chunk){.rail = r, .offset = prev, .length = end - prev};
        prev = end;
    }
    return n;
}

/* Striped schedules over random state sequences (2 to 4 rails going down and back up, every
 * policy, completions moving the estimates): each must be the split of the reference weights of
 * the state it was made in (and with room for one chunk only, -E2BIG when it needs two). The
 * scheduler caches its weights, and a dual-rail comm with both rails up under the adaptive policy
 * takes a short way to them (current_weights), and any policy a short split (split_two): this
 * fails if the weights' short way is taken with a rail down or under another policy, or the short
 * split with a rail down. */
static void schedules(uint32_t seed)
{
    struct rail_stripe_config cfg;
    struct rail_stripe s;
    char err[128] = "";
    int nrails = 2 + (int)((fuzz_step(&seed) >> 16) % 3);
    rail_stripe_config_default(&cfg, nrails);
    cfg.policy = (enum rail_stripe_policy)((fuzz_step(&seed) >> 16) % 3);
    cfg.min_stripe = 4096;
    for (int r = 0; r < nrails; r++)
        cfg.speed_mbps[r] = (fuzz_step(&seed) >> 30) ? (fuzz_step(&seed) >> 12) % 400000 : 0;
    CHECK_MSG(rail_stripe_init(&s, &cfg, err, sizeof(err)) == 0, "init: %s", err);
    uint64_t now = 1000000;
    for (int step = 0; step < 60; step++) {
        int r = (int)((fuzz_step(&seed) >> 16) % (unsigned)nrails);
        switch (fuzz_step(&seed) >> 29) {
        case 0:
            CHECK_EQ_INT(rail_stripe_set_rail_state(&s, r, !rail_stripe_rail_up(&s, r)), 0);
            continue;
        case 1:
        case 2: {
            uint64_t post = now, bytes = 1 + (fuzz_step(&seed) >> 8);
            now += 1 + (fuzz_step(&seed) >> 12);
            CHECK_EQ_INT(rail_stripe_on_completion(&s, r, bytes, post, now, fuzz_step(&seed) & 1),
                         0);
            continue;
        }
        default:
            break;
        }
        uint64_t size = cfg.min_stripe + (fuzz_step(&seed) >> 8);
        struct rail_stripe_chunk got[RAIL_STRIPE_MAX_RAILS], want[RAIL_STRIPE_MAX_RAILS];
        int n = rail_stripe_schedule(&s, size, got, RAIL_STRIPE_MAX_RAILS);
        if (s.up_mask == 0) {
            CHECK_EQ_INT(n, -ENETDOWN);
            continue;
        }
        uint16_t w[RAIL_STRIPE_MAX_RAILS];
        ref_weights(&s, s.up_mask, w);
        int m = ref_split(size, w, nrails, want);
        struct rail_stripe_chunk one[1];
        CHECK_EQ_INT(rail_stripe_schedule(&s, size, one, 1), m > 1 ? -E2BIG : 1);
        CHECK_MSG(n == m, "seed %u step %d, %d rails, policy %d, mask %#x: %d chunks, want %d",
                  seed, step, nrails, (int)cfg.policy, s.up_mask, n, m);
        for (int k = 0; k < n && k < m; k++)
            CHECK_MSG(got[k].rail == want[k].rail && got[k].offset == want[k].offset &&
                          got[k].length == want[k].length,
                      "seed %u step %d, %d rails, policy %d, mask %#x: chunk %d rail %d +%llu, "
                      "want rail %d +%llu",
                      seed, step, nrails, (int)cfg.policy, s.up_mask, k, got[k].rail,
                      (unsigned long long)got[k].length, want[k].rail,
                      (unsigned long long)want[k].length);
    }
}

int main(void)
{
    two_rails();
    uint32_t sseed = 2727;
    for (int i = 0; i < 20000; i++)
        schedules(fuzz_step(&sseed));
    uint32_t seed = 27;
    for (int i = 0; i < 200000; i++)
        compare(fuzz_step(&seed));
    return check_report("test_stripe_weights");
}
