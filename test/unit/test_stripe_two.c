/* SPDX-License-Identifier: Apache-2.0 */
/* rail_stripe_on_completion's lean path (rails/stripe.c, issue 27): a piece of a striped message
 * on a dual-rail comm with both rails up under the adaptive policy, not queued, in order, its
 * bytes and interval in range, is taken without the general path's clamps and mask walk. This
 * compares the call with rail_stripe_on_completion_general on copies of 200,000 random states
 * (rail counts, policies, rails down, estimates, previous completion times, bytes, post and done
 * times at and around every bound): the return value and every byte of the scheduler must match.
 * Dropping any term of the lean path's condition makes some state differ. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#define XORSHIFT_SEED 0x27e2u
#include "xorshift.h"
#include "rails/stripe.h"

#define SAMPLE_B  ((uint64_t)1 << 36) /* MAX_SAMPLE_B in stripe.c */
#define SAMPLE_NS ((uint64_t)1 << 40) /* MAX_SAMPLE_NS */

static uint64_t rnd64(void)
{
    return (uint64_t)rnd(1u << 31) << 33 ^ (uint64_t)rnd(1u << 31) << 2 ^ rnd(4);
}

/* A value of a few magnitudes: 0, small, around 2^20, large. */
static uint64_t magnitude(void)
{
    switch (rnd(5)) {
    case 0:
        return rnd(3);
    case 1:
        return 1 + rnd(1000);
    case 2:
        return ((uint64_t)1 << 20) + rnd(1u << 22);
    case 3:
        return rnd64() >> 20;
    default:
        return rnd64() >> (4 + rnd(20));
    }
}

static uint64_t pick_bytes(void)
{
    switch (rnd(8)) {
    case 0:
        return 0;
    case 1:
        return SAMPLE_B;
    case 2:
        return SAMPLE_B + 1 + rnd(3);
    case 3:
        return SAMPLE_B - rnd(3);
    case 4:
        return rnd64();
    default:
        return 1 + rnd(1u << 20);
    }
}

static void random_state(struct rail_stripe *s)
{
    struct rail_stripe_config cfg;
    char err[128];
    int nrails = rnd(4) ? 2 : 1 + (int)rnd(4);
    rail_stripe_config_default(&cfg, nrails);
    cfg.policy = rnd(4) ? RAIL_STRIPE_ADAPTIVE : (enum rail_stripe_policy)rnd(3);
    for (int r = 0; r < nrails; r++)
        cfg.speed_mbps[r] = rnd(4) ? 1 + rnd(400000) : 0;
    CHECK_MSG(rail_stripe_init(s, &cfg, err, sizeof(err)) == 0, "init: %s", err);
    for (int r = 0; r < nrails; r++) {
        if (rnd(3) == 0)
            s->rail[r].avg_bytes = magnitude();
        if (rnd(3) == 0)
            s->rail[r].avg_ns = 1 + magnitude();
        if (rnd(4) == 0)
            s->rail[r].seed_rate = magnitude();
        s->rail[r].last_done_ns = rnd(4) ? magnitude() : 0;
    }
    s->weights_valid = rnd(2);
    if (rnd(6) == 0)
        rail_stripe_set_rail_state(s, (int)rnd((unsigned)nrails), false);
}

static void compare_one(int i)
{
    struct rail_stripe a, b;
    random_state(&a);
    int rail = rnd(16) ? (int)rnd((unsigned)a.nrails) : (int)rnd(12) - 2;
    uint64_t bytes = pick_bytes();
    uint64_t last_done = rail >= 0 && rail < a.nrails ? a.rail[rail].last_done_ns : 0;
    uint64_t post;
    switch (rnd(4)) {
    case 0:
        post = last_done > 0 ? last_done - 1 - rnd(1000) % last_done : 0;
        break;
    case 1:
        post = last_done;
        break;
    default:
        post = last_done + rnd(1u << 30);
    }
    uint64_t done;
    switch (rnd(8)) {
    case 0:
        done = post - rnd(3);
        break;
    case 1:
        done = post + SAMPLE_NS;
        break;
    case 2:
        done = post + SAMPLE_NS + 1 + rnd(3);
        break;
    case 3:
        done = post + rnd64();
        break;
    default:
        done = post + 1 + rnd(1u << 24);
    }
    bool last = rnd(2);
    memcpy(&b, &a, sizeof(a));
    int ra = rail_stripe_on_completion(&a, rail, bytes, post, done, last);
    int rb = rail_stripe_on_completion_general(&b, rail, bytes, post, done, last);
    CHECK_MSG(ra == rb && memcmp(&a, &b, sizeof(a)) == 0,
              "state %d: %d rails, policy %d, mask %#x, rail %d, %llu bytes, post %llu done %llu "
              "last %d: lean %d, general %d, states %s",
              i, a.nrails, (int)a.policy, a.up_mask, rail, (unsigned long long)bytes,
              (unsigned long long)post, (unsigned long long)done, (int)last, ra, rb,
              memcmp(&a, &b, sizeof(a)) ? "differ" : "agree");
}

int main(void)
{
    for (int i = 0; i < 200000 && g_checks_failed < 5; i++)
        compare_one(i);
    /* NULL comes back as the general path returns it. */
    CHECK_EQ_INT(rail_stripe_on_completion(NULL, 0, 1, 1, 2, true),
                 rail_stripe_on_completion_general(NULL, 0, 1, 1, 2, true));
    return check_report("test_stripe_two");
}
