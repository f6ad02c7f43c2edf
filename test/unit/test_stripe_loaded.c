/* SPDX-License-Identifier: Apache-2.0 */
/* stripe scheduler told how busy each rail is (rail_stripe_schedule_loaded): every rail idle or
 * a message below the threshold gives exactly rail_stripe_schedule's schedule; any rail up busy
 * sends the message whole to the least loaded rail per unit of weight, ties in round-robin order;
 * rails down are never chosen; errors. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rails/stripe.h"

#define MAXC RAIL_STRIPE_MAX_RAILS

static struct rail_stripe make(int nrails, enum rail_stripe_policy p, const uint32_t *speeds)
{
    struct rail_stripe_config cfg;
    struct rail_stripe s;
    char err[128] = "";
    rail_stripe_config_default(&cfg, nrails);
    cfg.policy = p;
    for (int r = 0; speeds && r < nrails; r++)
        cfg.speed_mbps[r] = speeds[r];
    CHECK_MSG(rail_stripe_init(&s, &cfg, err, sizeof(err)) == 0, "init: %s", err);
    return s;
}

/* With a rail idle (or a small message) the schedule and the state after it are
 * rail_stripe_schedule's, field by field. */
static void test_idle_is_plain(void)
{
    const uint64_t sizes[] = {0, 1, 65536, 131071, 131072, 4194304};
    const uint32_t loads[][RAIL_STRIPE_MAX_RAILS] = {{0, 0}, {3, 0}, {0, 5}, {2, 2}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t j = 0; j < sizeof(loads) / sizeof(loads[0]); j++) {
            bool busy = loads[j][0] || loads[j][1];
            if (busy && sizes[i] >= RAIL_STRIPE_MIN_DEFAULT)
                continue; /* the busy case, below */
            struct rail_stripe a = make(2, RAIL_STRIPE_ADAPTIVE, NULL), b = a;
            struct rail_stripe_chunk ca[MAXC], cb[MAXC];
            memset(ca, 0, sizeof(ca));
            memset(cb, 0, sizeof(cb));
            int na = rail_stripe_schedule(&a, sizes[i], ca, MAXC);
            int nb = rail_stripe_schedule_loaded(&b, sizes[i], loads[j], cb, MAXC);
            CHECK_EQ_INT(nb, na);
            CHECK(memcmp(ca, cb, sizeof(ca)) == 0);
            CHECK(memcmp(&a, &b, sizeof(a)) == 0);
        }
    /* 4 MiB with one rail idle goes whole to the idle one. */
    struct rail_stripe s = make(2, RAIL_STRIPE_EQUAL, NULL);
    struct rail_stripe_chunk c[MAXC];
    const uint32_t one_idle[RAIL_STRIPE_MAX_RAILS] = {7, 0};
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, 4194304, one_idle, c, MAXC), 1);
    CHECK_EQ_INT(c[0].rail, 1);
    CHECK_EQ_INT(c[0].length, 4194304);
    /* A rail down with a stale count does not make the others busy: split over the rest. */
    struct rail_stripe t = make(3, RAIL_STRIPE_EQUAL, NULL);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&t, 1, false), 0);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(
                     &t, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){0, 4, 0}, c, MAXC),
                 2);
    CHECK_EQ_INT(c[0].rail, 0);
    CHECK_EQ_INT(c[1].rail, 2);
}

static int whole(struct rail_stripe *s, uint64_t size, const uint32_t *load)
{
    struct rail_stripe_chunk c[MAXC];
    int n = rail_stripe_schedule_loaded(s, size, load, c, MAXC);
    CHECK_EQ_INT(n, 1);
    if (n != 1)
        return -1;
    CHECK_EQ_INT(c[0].offset, 0);
    CHECK_EQ_INT(c[0].length, size);
    return c[0].rail;
}

static void test_busy_whole(void)
{
    struct rail_stripe s = make(2, RAIL_STRIPE_EQUAL, NULL);
    /* Least loaded wins. */
    CHECK_EQ_INT(whole(&s, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){3, 1}), 1);
    CHECK_EQ_INT(whole(&s, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){1, 4}), 0);
    /* Equal loads alternate (the round-robin cursor moves past the rail chosen). */
    const uint32_t eq[RAIL_STRIPE_MAX_RAILS] = {2, 2};
    int r0 = whole(&s, 1048576, eq), r1 = whole(&s, 1048576, eq), r2 = whole(&s, 1048576, eq);
    CHECK(r0 != r1);
    CHECK_EQ_INT(r2, r0);

    /* Weighted 300 + 100: rail 0 takes three times the queue before rail 1 gets one. */
    struct rail_stripe w = make(2, RAIL_STRIPE_WEIGHTED, (const uint32_t[]){300, 100});
    CHECK_EQ_INT(whole(&w, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){2, 1}), 0);
    CHECK_EQ_INT(whole(&w, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){6, 1}), 1);

    /* A rail down is never chosen, however idle its stale count says it is. */
    struct rail_stripe d = make(3, RAIL_STRIPE_EQUAL, NULL);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&d, 1, false), 0);
    for (int i = 0; i < 6; i++) {
        int r = whole(&d, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){5, 0, 5});
        CHECK(r == 0 || r == 2);
    }
    /* One rail up and busy: that rail, whole. */
    CHECK_EQ_INT(rail_stripe_set_rail_state(&d, 2, false), 0);
    CHECK_EQ_INT(whole(&d, 4194304, (const uint32_t[RAIL_STRIPE_MAX_RAILS]){9, 0, 0}), 0);
}

static void test_errors(void)
{
    struct rail_stripe s = make(2, RAIL_STRIPE_ADAPTIVE, NULL), before = s;
    struct rail_stripe_chunk c[MAXC];
    const uint32_t busy[RAIL_STRIPE_MAX_RAILS] = {1, 1};
    CHECK_EQ_INT(rail_stripe_min(&s), RAIL_STRIPE_MIN_DEFAULT);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, 4194304, NULL, c, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, 4194304, busy, NULL, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, RAIL_STRIPE_MAX_SIZE + 1, busy, c, MAXC), -EINVAL);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, 4194304, busy, c, 0), -E2BIG);
    CHECK(memcmp(&s, &before, sizeof(s)) == 0);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 0, false), 0);
    CHECK_EQ_INT(rail_stripe_set_rail_state(&s, 1, false), 0);
    CHECK_EQ_INT(rail_stripe_schedule_loaded(&s, 4194304, busy, c, MAXC), -ENETDOWN);
}

int main(void)
{
    test_idle_is_plain();
    test_busy_whole();
    test_errors();
    return check_report("test_stripe_loaded");
}
