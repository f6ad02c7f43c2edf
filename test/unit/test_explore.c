/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_EXPLORE on the tuner's real path (rail_tuner_create + rail_tuner_apply):
 *   - off by default: 100,000 calls, never anything but the choice;
 *   - on (0.05): about 5% of the calls of a cell run its runner-up, never another pair, and two
 *     contexts of one communicator (two ranks) pick exactly the same calls;
 *   - the runner-up is predicted at most NCCL_RAIL_EXPLORE_MAX_SLOWDOWN slower than the choice,
 *     is never an entry NCCL marked unavailable (then the choice runs), and a cell whose runner-up
 *     is slower than the bound is never explored;
 *   - rank-local inputs never split the ranks: regBuff set on one rank only (every 10th call)
 *     still gives identical pairs on every call for 100,000 calls;
 *   - refused with a rules file, with NCCL_ALGO set; explain never explores and leaves the
 *     counters alone;
 *   - an invalid value WARNs naming the variable and leaves exploring off; an invalid
 *     NCCL_RAIL_EXPLORE_MAX_SLOWDOWN too (never the looser default), one WARN per process. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "decide/explore.h"
#include "log.h"
#include "params.h"
#include "abi/tuner_core.h"
#include "warn_capture.h"

#define NC RAIL_DT_CANDIDATES

static struct rail_topo g_topo;
static struct rail_tuner *make(int nnodes, const char *rules)
{
    struct rail_tuner_opts o = {.topo = &g_topo, .rules_path = rules, .calib_path = ""};
    struct rail_tuner *t = NULL;
    CHECK_EQ_INT(rail_tuner_create(&t, 7, (size_t)nnodes, (size_t)nnodes, NULL, &o), 0);
    CHECK(t && t->model_active);
    return t;
}

/* The pair the call runs (the entry set to 0), offering `offer` (NULL: every pair). */
static int call(struct rail_tuner *t, int coll, size_t bytes, int reg_buff, const int *offer)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int c = 0; c < NC; c++)
        table[c / NCCL_NUM_PROTOCOLS][c % NCCL_NUM_PROTOCOLS] = !offer || offer[c] ? 5.0f : -1.0f;
    rail_tuner_apply(t, coll, bytes, 1, reg_buff, table, NULL);
    int ch = -1;
    for (int c = 0; c < NC; c++) {
        float v = table[c / NCCL_NUM_PROTOCOLS][c % NCCL_NUM_PROTOCOLS];
        if (v == 0.0f)
            ch = c;
        if (offer && !offer[c] && v != -1.0f)
            ch = -2; /* an unavailable entry revived: never allowed */
    }
    return ch;
}

/* A cell with a runner-up: the first AllGather size from 64 KiB up whose cell has one. */
static size_t explored_size(const struct rail_tuner *t, int coll)
{
    for (size_t b = 1 << 16; b <= (size_t)1 << 32; b <<= 1)
        if (t->explore->alt[coll][rail_dt_pipe(1)][rail_dt_bucket(b)] != RAIL_EXPLORE_NONE)
            return b;
    return 0;
}

static void test_off_by_default(void)
{
    unsetenv("NCCL_RAIL_EXPLORE");
    struct rail_tuner *t = make(8, NULL);
    CHECK(t->explore == NULL);
    int first = call(t, ncclFuncAllGather, 1 << 20, 0, NULL), other = 0;
    for (int i = 0; i < 100000; i++)
        other += call(t, ncclFuncAllGather, 1 << 20, 0, NULL) != first;
    CHECK_EQ_INT(other, 0);
    rail_tuner_destroy(t);
}

/* Two ranks fed the same calls, where one rank alone sees a registered buffer (regBuff 1) on every
 * 10th call and an unknown one (-1, v3) on every 7th: the calls on which the two ranks run
 * different pairs. Other cells' calls are interleaved. */
static int rank_local_disagreements(struct rail_tuner *r0, struct rail_tuner *r1, int coll,
                                    size_t bytes, int n)
{
    int disagree = 0;
    for (int i = 0; i < n; i++) {
        int reg0 = i % 10 == 0 ? 1 : i % 7 == 0 ? -1 : 0;
        disagree += call(r0, coll, bytes, reg0, NULL) != call(r1, coll, bytes, 0, NULL);
        if (i % 3 == 0) {
            size_t other = (size_t)64 << (i % 16);
            disagree += call(r0, ncclFuncAllReduce, other, i % 5 == 0, NULL) !=
                        call(r1, ncclFuncAllReduce, other, 0, NULL);
        }
    }
    return disagree;
}

static void test_share_and_ranks_agree(void)
{
    setenv("NCCL_RAIL_EXPLORE", "0.05", 1);
    unsetenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN");
    struct rail_tuner *r0 = make(8, NULL), *r1 = make(8, NULL), *ref;
    unsetenv("NCCL_RAIL_EXPLORE");
    ref = make(8, NULL); /* the same communicator without exploring: the choice */
    CHECK(r0->explore && r1->explore && !ref->explore);
    CHECK(r0->explore->ncells > 0);
    int coll = ncclFuncAllGather;
    size_t bytes = explored_size(r0, coll);
    CHECK(bytes > 0);
    int choice = call(ref, coll, bytes, 0, NULL);
    int alt = r0->explore->alt[coll][rail_dt_pipe(1)][rail_dt_bucket(bytes)];
    CHECK(choice >= 0 && alt != choice);
    int n = 20000, explored = 0, wrong = 0, disagree = 0;
    for (int i = 0; i < n; i++) {
        int a = call(r0, coll, bytes, 0, NULL), b = call(r1, coll, bytes, 0, NULL);
        disagree += a != b;
        explored += a == alt;
        wrong += a != alt && a != choice;
    }
    CHECK_EQ_INT(disagree, 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK_MSG(explored > n * 4 / 100 && explored < n * 6 / 100, "explored %d of %d calls", explored,
              n);
    /* Other cells' calls do not shift this cell's sequence: interleaving keeps the agreement. */
    for (int i = 0; i < 2000; i++) {
        int a = call(r0, coll, bytes, 0, NULL);
        (void)call(r0, ncclFuncAllReduce, (size_t)64 << (i % 16), 0, NULL);
        int b = call(r1, coll, bytes, 0, NULL);
        disagree += a != b;
    }
    CHECK_EQ_INT(disagree, 0);

    /* The runner-up within the bound, at the cell's middle size. */
    float times[NC];
    rail_tuner_times(ref, coll, bytes, 1, times);
    CHECK(times[alt] > 0.0f && times[alt] <= times[choice] * 1.25f * 1.001f);

    /* NCCL marks the runner-up unavailable: the choice runs, the entry stays -1. */
    int offer[NC];
    for (int c = 0; c < NC; c++)
        offer[c] = c != alt;
    int got_alt = 0;
    for (int i = 0; i < 5000; i++) {
        int c = call(r0, coll, bytes, 0, offer);
        CHECK(c != -2);
        got_alt += c == alt;
    }
    CHECK_EQ_INT(got_alt, 0);

    /* regBuff is rank-local (NCCL derives it from each rank's registrations): whatever one rank
     * passes, both ranks run the same pair on every call. */
    setenv("NCCL_RAIL_EXPLORE", "0.05", 1);
    struct rail_tuner *q0 = make(8, NULL), *q1 = make(8, NULL);
    unsetenv("NCCL_RAIL_EXPLORE");
    CHECK_EQ_INT(rank_local_disagreements(q0, q1, coll, bytes, 100000), 0);
    rail_tuner_destroy(q0);
    rail_tuner_destroy(q1);

    /* explain: the decision, never an exploration, counters untouched. */
    uint32_t before = r0->explore->calls[coll][rail_dt_pipe(1)][rail_dt_bucket(bytes)];
    for (int i = 0; i < 1000; i++) {
        int nch;
        enum rail_decision_from from;
        CHECK_EQ_INT(rail_tuner_explain(r0, coll, bytes, 1, &nch, &from), choice);
    }
    CHECK_EQ_INT(r0->explore->calls[coll][rail_dt_pipe(1)][rail_dt_bucket(bytes)], before);
    rail_tuner_destroy(r0);
    rail_tuner_destroy(r1);
    rail_tuner_destroy(ref);
}

/* A tight bound keeps fewer (or no) cells than a loose one, and every kept runner-up fits it. */
static void test_slowdown_bound(void)
{
    setenv("NCCL_RAIL_EXPLORE", "0.01", 1);
    setenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN", "1", 1);
    struct rail_tuner *tight = make(8, NULL);
    setenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN", "100", 1);
    struct rail_tuner *loose = make(8, NULL);
    unsetenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN");
    CHECK(tight->explore && loose->explore);
    CHECK(tight->explore->ncells < loose->explore->ncells);
    int checked = 0;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int p = 0; p < RAIL_DT_PIPES; p++)
            for (int b = 1; b < RAIL_DT_BUCKETS; b++) {
                int alt = tight->explore->alt[coll][p][b];
                if (alt == RAIL_EXPLORE_NONE)
                    continue;
                size_t lo, hi;
                rail_dt_bucket_range(b, &lo, &hi);
                const struct rail_dt_cell *cell = &tight->table.cell[coll][p][b];
                float times[NC];
                rail_tuner_times(tight, coll, (size_t)sqrt((double)lo * (double)hi),
                                 rail_dt_pipe_value(p), times);
                CHECK(times[alt] <= times[cell->cand[0]] * 1.01f * 1.001f);
                checked++;
            }
    CHECK(checked == tight->explore->ncells);
    rail_tuner_destroy(tight);
    rail_tuner_destroy(loose);
    unsetenv("NCCL_RAIL_EXPLORE");
}

static void test_refusals(void)
{
    char path[] = "/tmp/rail_explore_rules_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char rule[] = "allgather,0,65536,ring,ll,-1,-1,-1,-1\n";
    CHECK(write(fd, rule, sizeof(rule) - 1) == (ssize_t)(sizeof(rule) - 1));
    close(fd);
    setenv("NCCL_RAIL_EXPLORE", "0.05", 1);
    struct rail_tuner *t = make(8, path);
    CHECK(t->explore == NULL); /* a rules file decides what may run */
    rail_tuner_destroy(t);
    unlink(path);
    setenv("NCCL_ALGO", "Ring", 1);
    t = make(8, NULL);
    CHECK(t->explore == NULL);
    rail_tuner_destroy(t);
    unsetenv("NCCL_ALGO");

    /* Invalid values: one WARN naming the variable, exploring off. */
    const char *bad[] = {"5%", "0.5", "-0.01", "nan", "0x1p-4", "1e400", "0.01x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("NCCL_RAIL_EXPLORE", bad[i], 1);
        g_warns = 0;
        t = make(8, NULL);
        CHECK_MSG(t->explore == NULL, "NCCL_RAIL_EXPLORE=%s explores", bad[i]);
        CHECK_MSG(g_warns == 1 && strstr(g_warn, "NCCL_RAIL_EXPLORE="), "%s: %d warn(s): %s",
                  bad[i], g_warns, g_warn);
        rail_tuner_destroy(t);
    }
    unsetenv("NCCL_RAIL_EXPLORE");
}

/* An invalid NCCL_RAIL_EXPLORE_MAX_SLOWDOWN never loosens the bound (the default 25% would):
 * exploring is off, with one WARN per process naming the variable, however many communicators. */
static void test_invalid_bound(void)
{
    const char *bad[] = {"0", "101", "-5", "abc", "25%", "1e9", "99999999999999999999"};
    setenv("NCCL_RAIL_EXPLORE", "0.05", 1);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN", bad[i], 1);
        g_warns = 0;
        g_warn[0] = '\0';
        for (int comm = 0; comm < 3; comm++) {
            struct rail_tuner *t = make(8, NULL);
            CHECK_MSG(t->explore == NULL, "NCCL_RAIL_EXPLORE_MAX_SLOWDOWN=%s explores", bad[i]);
            rail_tuner_destroy(t);
        }
        CHECK_MSG(g_warns == 1 && strstr(g_warn, "NCCL_RAIL_EXPLORE_MAX_SLOWDOWN="),
                  "%s: %d warn(s) for 3 communicators: %s", bad[i], g_warns, g_warn);
    }
    /* A valid bound afterwards explores again, silently. */
    setenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN", "25", 1);
    g_warns = 0;
    struct rail_tuner *t = make(8, NULL);
    CHECK(t->explore != NULL && g_warns == 0);
    rail_tuner_destroy(t);
    unsetenv("NCCL_RAIL_EXPLORE_MAX_SLOWDOWN");
    unsetenv("NCCL_RAIL_EXPLORE");
}

int main(void)
{
    char err[256];
    rail_log_set_logger(capture);
    CHECK_EQ_INT(rail_topo_load_profile("aws-p5", &g_topo, err, sizeof(err)), 0);
    test_off_by_default();
    test_share_and_ranks_agree();
    test_slowdown_bound();
    test_refusals();
    test_invalid_bound();
    return check_report("test_explore");
}
