/* SPDX-License-Identifier: Apache-2.0 */
/* The calibration on the tuner's real path (rail_tuner_create + rail_tuner_apply): calibrated
 * times re-rank the table, the rules file still wins, an entry NCCL marked IGNORE is never
 * revived, every bad file (wrong header, truncated, FIFO, 1 GB) gives a WARN and exactly the
 * default model's table, and one INFO line says what was applied. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decide/calib_apply.h"
#include "measure/calib_cache.h"
#include "check.h"
#include "log.h"
#include "abi/tuner_core.h"
#include "version.h"

#define AG      ncclFuncAllGather
#define C(a, p) ((a)*NCCL_NUM_PROTOCOLS + (p))

static char g_dir[] = "/tmp/rail_calib_tuner_XXXXXX";
static struct rail_topo g_topo;
static int g_warns;
static char g_warn[1200], g_info[2400];

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    if (level == NCCL_LOG_WARN) {
        g_warns++;
        vsnprintf(g_warn, sizeof(g_warn), fmt, ap);
    } else if (level == NCCL_LOG_INFO) {
        char msg[sizeof(g_info)];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        if (strstr(msg, "calibration "))
            memcpy(g_info, msg, sizeof(msg));
    }
    va_end(ap);
}

static const char *put(const char *name, const char *text)
{
    static char path[4][256];
    static int k;
    char *p = path[k++ % 4];
    FILE *f;
    snprintf(p, 256, "%s/%s", g_dir, name);
    f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static struct rail_tuner *make(int nnodes, const char *calib, const char *rules)
{
    struct rail_tuner_opts o = {
        .topo = &g_topo, .rules_path = rules, .lenient = 0, .calib_path = calib ? calib : ""};
    struct rail_tuner *t = NULL;
    CHECK_EQ_INT(rail_tuner_create(&t, 1, (size_t)nnodes, (size_t)nnodes, NULL, &o), 0);
    CHECK(t && t->model_active);
    return t;
}

/* The tuner's choice among the entries of `offer` (1 = available), -1 when it left all alone. */
static int choice_of(struct rail_tuner *t, int coll, size_t bytes, const int offer[], int *changed)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    int ch = -1;
    for (int c = 0; c < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; c++)
        table[c / NCCL_NUM_PROTOCOLS][c % NCCL_NUM_PROTOCOLS] = offer[c] ? 5.0f : -1.0f;
    rail_tuner_apply(t, coll, bytes, 1, 0, table, NULL);
    *changed = 0;
    for (int c = 0; c < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; c++) {
        float v = table[c / NCCL_NUM_PROTOCOLS][c % NCCL_NUM_PROTOCOLS];
        if (v == 0.0f)
            ch = c;
        if (!offer[c] && v != -1.0f)
            (*changed)++; /* an IGNORE entry written: never allowed */
    }
    return ch;
}

static int choice(struct rail_tuner *t, int coll, size_t bytes)
{
    int all[NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS], changed;
    for (int c = 0; c < NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS; c++)
        all[c] = 1;
    return choice_of(t, coll, bytes, all, &changed);
}

/* A calibration in which Ring/LL is by far the fastest AllGather on 8 nodes x 1 GPU at 1 MiB, a
 * size at which the model picks something else. */
static const char k_cal[] = "nccl-rail-calibration 1\n"
                            "AllGather,Ring,LL,8,8,1048576,10\n"
                            "AllGather,Ring,LL,8,8,2097152,11\n"
                            "AllGather,Ring,LL128,8,8,1048576,500\n"
                            "AllGather,Ring,LL128,8,8,2097152,600\n"
                            "AllGather,Ring,Simple,8,8,1048576,400\n"
                            "AllGather,Ring,Simple,8,8,2097152,500\n"
                            "AllGather,PAT,Simple,8,8,1048576,300\n"
                            "AllGather,PAT,Simple,8,8,2097152,350\n";

static void test_calibration_reranks(void)
{
    const char *path = put("cal.txt", k_cal);
    struct rail_tuner *base = make(8, NULL, NULL), *cal, *again;
    enum rail_decision_from from;
    int nch;

    CHECK(choice(base, AG, 1 << 20) != C(NCCL_ALGO_RING, NCCL_PROTO_LL));
    g_info[0] = '\0';
    cal = make(8, path, NULL);
    CHECK(cal->calib_active);
    CHECK_EQ_INT(choice(cal, AG, 1 << 20), C(NCCL_ALGO_RING, NCCL_PROTO_LL));
    CHECK_EQ_INT(rail_tuner_explain(cal, AG, 1 << 20, 1, &nch, &from),
                 C(NCCL_ALGO_RING, NCCL_PROTO_LL));
    CHECK_EQ_INT(from, RAIL_FROM_CALIBRATION);
    CHECK_EQ_INT(nch, 0); /* measured with NCCL's channels: none suggested */
    /* One INFO line: coverage and what applied. */
    CHECK(strstr(g_info, "covers 8 point(s): 1 shape(s), 4 pair(s)") != NULL);
    CHECK(strstr(g_info, "AllGather Ring/LL measured") != NULL);
    /* Other collectives have no calibration here: the model decides them, unchanged. */
    CHECK_EQ_INT(rail_tuner_explain(cal, ncclFuncAllReduce, 1 << 20, 1, &nch, &from),
                 choice(base, ncclFuncAllReduce, 1 << 20));
    CHECK(from != RAIL_FROM_CALIBRATION);
    CHECK(memcmp(&cal->table.cell[ncclFuncAllReduce], &base->table.cell[ncclFuncAllReduce],
                 sizeof(cal->table.cell[0])) == 0);
    /* v2 (no cost table) decides from the same calibrated table. */
    {
        int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF;
        rail_tuner_choose_v2(cal, AG, 1 << 20, 0, 0, 1, &algo, &proto, NULL);
        CHECK_EQ_INT(algo * NCCL_NUM_PROTOCOLS + proto, C(NCCL_ALGO_RING, NCCL_PROTO_LL));
    }
    /* Deterministic: the same file, the same table. */
    again = make(8, path, NULL);
    CHECK(memcmp(&again->table, &cal->table, sizeof(cal->table)) == 0);
    rail_tuner_destroy(again);

    /* Never revived: Ring/LL marked IGNORE by NCCL stays IGNORE, the next calibrated pair wins. */
    {
        int offer[NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS] = {0}, changed;
        offer[C(NCCL_ALGO_RING, NCCL_PROTO_LL128)] = 1;
        offer[C(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE)] = 1;
        offer[C(NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE)] = 1;
        CHECK_EQ_INT(choice_of(cal, AG, 1 << 20, offer, &changed),
                     C(NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE));
        CHECK_EQ_INT(changed, 0);
        /* Only pairs the calibration has nothing on offered: still only those. */
        memset(offer, 0, sizeof(offer));
        offer[C(NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE)] = 1;
        choice_of(cal, AG, 1 << 20, offer, &changed);
        CHECK_EQ_INT(changed, 0);
    }
    /* Next to it (9 nodes, 0.17 octave): the calibrated residual is extrapolated from 8 nodes,
     * fading with the distance, and said so in the INFO line. */
    {
        g_info[0] = '\0';
        struct rail_tuner *c9 = make(9, path, NULL);
        CHECK(c9->calib_active);
        CHECK(strstr(g_info, "AllGather Ring/LL extrapolated") != NULL);
        rail_tuner_destroy(c9);
    }
    /* An octave away (4 nodes) the residual has faded below one half: the calibration does not
     * apply as such, the INFO line says why; a cell differs from the table without it only where
     * ring pairs alone contend (ring steps carried whole, calib_apply.h): a calibrated cell
     * whose choice, if any, is a ring pair. */
    {
        g_info[0] = '\0';
        struct rail_tuner *b4 = make(4, NULL, NULL), *c4 = make(4, path, NULL);
        CHECK(strstr(g_info, "too far beyond the calibrated node counts") != NULL);
        for (int c = 0; c < RAIL_NUM_COLLS; c++)
            for (int p = 0; p < RAIL_DT_PIPES; p++)
                for (int b = 0; b < RAIL_DT_BUCKETS; b++) {
                    const struct rail_dt_cell *x = &c4->table.cell[c][p][b];
                    if (memcmp(x, &b4->table.cell[c][p][b], sizeof(*x)) == 0)
                        continue;
                    CHECK_EQ_INT(c, AG);
                    CHECK_EQ_INT(c4->table.source[c][p][b], RAIL_DT_SRC_CALIBRATION);
                    CHECK(x->n == 0 || x->cand[0] / NCCL_NUM_PROTOCOLS == NCCL_ALGO_RING);
                }
        rail_tuner_destroy(b4);
        rail_tuner_destroy(c4);
    }
    /* Far from it (128 nodes, 4 octaves) the residual has faded: the calibrated times are the
     * model's within 1%. */
    {
        struct rail_tuner *b128 = make(128, NULL, NULL), *c128 = make(128, path, NULL);
        float tb[RAIL_DT_CANDIDATES], tc[RAIL_DT_CANDIDATES];
        rail_tuner_times(b128, AG, 1 << 20, 1, tb);
        rail_tuner_times(c128, AG, 1 << 20, 1, tc);
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
            CHECK_MSG((tb[c] < 0.0f) == (tc[c] < 0.0f) &&
                          (tb[c] < 0.0f || fabs(tc[c] / tb[c] - 1.0) < 0.01),
                      "candidate %d: %g vs %g", c, (double)tb[c], (double)tc[c]);
        rail_tuner_destroy(b128);
        rail_tuner_destroy(c128);
    }
    /* Read at init only: the decisions stay when the file is gone. */
    CHECK_EQ_INT(unlink(path), 0);
    CHECK_EQ_INT(choice(cal, AG, 1 << 20), C(NCCL_ALGO_RING, NCCL_PROTO_LL));
    rail_tuner_destroy(cal);
    rail_tuner_destroy(base);
}

static void test_rules_win(void)
{
    const char *path = put("cal2.txt", k_cal);
    const char *rules = put("rules.conf", "allgather,0,4194304,ring,simple,-1,-1,-1\n");
    struct rail_tuner *t = make(8, path, rules);
    enum rail_decision_from from;
    int nch;
    CHECK_EQ_INT(choice(t, AG, 1 << 20), C(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
    CHECK_EQ_INT(rail_tuner_explain(t, AG, 1 << 20, 1, &nch, &from),
                 C(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
    CHECK_EQ_INT(from, RAIL_FROM_RULES);
    /* Above the rule's range the calibration decides again. */
    CHECK_EQ_INT(rail_tuner_explain(t, AG, 8u << 20, 1, &nch, &from) >= 0, 1);
    CHECK_EQ_INT(from, RAIL_FROM_CALIBRATION);
    rail_tuner_destroy(t);
}

/* Every bad input: init succeeds, one WARN naming the variable and the reason, the default table.
 */
static void check_fallback(const char *path, const char *reason)
{
    struct rail_tuner *base = make(8, NULL, NULL), *t;
    g_warns = 0;
    g_warn[0] = '\0';
    t = make(8, path, NULL);
    CHECK_EQ_INT(g_warns, 1);
    CHECK_MSG(strstr(g_warn, "NCCL_RAIL_CALIBRATION_FILE") && strstr(g_warn, reason) &&
                  strstr(g_warn, "using the default model"),
              "warn '%s', expected '%s'", g_warn, reason);
    CHECK(!t->calib_active && t->calib == NULL);
    CHECK(memcmp(&t->table, &base->table, sizeof(t->table)) == 0);
    rail_tuner_destroy(t);
    rail_tuner_destroy(base);
}

static void test_bad_files(void)
{
    char path[300];
    int fd;
    check_fallback(put("wrong.txt", "coll,algo,proto,nranks,nnodes,bytes,time_us\n"),
                   ":1: wrong header");
    check_fallback(put("trunc.txt", "nccl-rail-calibration 1\nAllGather,Ring,LL,8,8,10"),
                   ":2: 6 fields");
    snprintf(path, sizeof(path), "%s/missing.txt", g_dir);
    check_fallback(path, "No such file");
    snprintf(path, sizeof(path), "%s/fifo.txt", g_dir);
    CHECK_EQ_INT(mkfifo(path, 0600), 0);
    check_fallback(path, "not a regular file");
    snprintf(path, sizeof(path), "%s/huge.txt", g_dir);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 1ll << 30) == 0);
    close(fd);
    check_fallback(path, "1073741824 bytes, larger than");
    check_fallback(g_dir, "a directory");
}

/* Issue 22: one parsed copy per file and process, shared read-only; a rewritten file is read
 * again (its identity changed) while contexts holding the old contents keep them; the copy goes
 * with its last context. */
static void test_shared_calibration(void)
{
    const char *path = put("shared.txt", k_cal);
    struct rail_tuner *a = make(8, path, NULL), *b = make(8, path, NULL), *c;
    CHECK(a->calib != NULL && a->calib == b->calib);
    CHECK_EQ_INT(rail_calib_cache_entries(), 1);
    /* Rewritten in place with other times (same size): a new entry for new contexts. */
    char text[sizeof(k_cal) + 16];
    snprintf(text, sizeof(text), "%s", k_cal);
    char *last = strrchr(text, ','); /* the last row's time: 350 -> 450 */
    CHECK(last && last[1] >= '1' && last[1] <= '8');
    if (last)
        last[1]++;
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL); /* a later modification time even with a coarse file-system clock */
    put("shared.txt", text);
    c = make(8, path, NULL);
    CHECK(c->calib != NULL && c->calib != a->calib && c->calib->n == a->calib->n);
    CHECK_EQ_INT(rail_calib_cache_entries(), 2);
    CHECK(a->calib == b->calib && a->calib->n > 0); /* the old contents stay for their users */
    rail_tuner_destroy(a);
    CHECK_EQ_INT(rail_calib_cache_entries(), 2);
    rail_tuner_destroy(b);
    CHECK_EQ_INT(rail_calib_cache_entries(), 1);
    rail_tuner_destroy(c);
    CHECK_EQ_INT(rail_calib_cache_entries(), 0);
}

/* Issue 30 item 3: NCCL Inspector's measurements of a 2 x 8 job, four AllReduce pairs at 64 KiB.
 * Their calibrated/model ratios differ 8x, so the geometric mean scaling a pair nobody measured
 * (Tree/LL128, 13.5 us by the old rule) predicts nothing: the measured fastest (Ring/LL128,
 * 27 us) stands, and the rule that decided is reported. */
static const char k_job[] = "nccl-rail-calibration 1\n# source: job\n"
                            "AllReduce,Ring,LL,16,2,65536,45\n"
                            "AllReduce,Ring,LL128,16,2,65536,27\n"
                            "AllReduce,Ring,Simple,16,2,65536,36\n"
                            "AllReduce,Tree,LL,16,2,65536,40.5\n";

static struct rail_tuner *make_shape(int nranks, int nnodes, const char *calib)
{
    struct rail_tuner_opts o = {
        .topo = &g_topo, .rules_path = NULL, .lenient = 0, .calib_path = calib ? calib : ""};
    struct rail_tuner *t = NULL;
    CHECK_EQ_INT(rail_tuner_create(&t, 1, (size_t)nranks, (size_t)nnodes, NULL, &o), 0);
    CHECK(t && t->model_active);
    return t;
}

/* A 2 x 8 tuner calibrated with the four pairs meas[] measured at 64 KiB at the model's own
 * times x 1.3; *best_other: the fastest pair not measured, by the model. */
static struct rail_tuner *agreeing(const int meas[4], int *best_other)
{
    struct rail_tuner *m = make_shape(16, 2, NULL);
    float mt[RAIL_DT_CANDIDATES];
    char text[512];
    size_t k;
    rail_tuner_times(m, ncclFuncAllReduce, 65536, 1, mt);
    rail_tuner_destroy(m);
    k = (size_t)snprintf(text, sizeof(text), "nccl-rail-calibration 1\n# source: job\n");
    for (int i = 0; i < 4; i++)
        k += (size_t)snprintf(text + k, sizeof(text) - k, "AllReduce,%s,%s,16,2,65536,%.4f\n",
                              rail_algo_name(meas[i] / NCCL_NUM_PROTOCOLS),
                              rail_proto_name(meas[i] % NCCL_NUM_PROTOCOLS),
                              (double)mt[meas[i]] * 1.3);
    *best_other = -1;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        bool is_meas = false;
        for (int i = 0; i < 4; i++)
            is_meas |= meas[i] == c;
        if (!is_meas && mt[c] > 0.0f && (*best_other < 0 || mt[c] < mt[*best_other]))
            *best_other = c;
    }
    return make_shape(16, 2, put("agree.cal", text));
}

static void test_job_keeps_promise(void)
{
    const int AR = ncclFuncAllReduce, ring_ll128 = C(NCCL_ALGO_RING, NCCL_PROTO_LL128);
    struct rail_tuner *t = make_shape(16, 2, put("job.cal", k_job));
    enum rail_decision_from from;
    float spread = 0.0f, times[RAIL_DT_CANDIDATES];
    int nch;

    CHECK_EQ_INT(choice(t, AR, 65536), ring_ll128);
    CHECK_EQ_INT(rail_tuner_explain(t, AR, 65536, 1, &nch, &from), ring_ll128);
    CHECK_EQ_INT(from, RAIL_FROM_CALIBRATION);
    CHECK(rail_tuner_from_job(t, AR, 65536));
    CHECK_EQ_INT(rail_tuner_calib_rule(t, AR, 65536, 1, &spread), RAIL_CALIB_RULE_HELD_SPREAD);
    CHECK_MSG(spread > 8.0f && spread < 9.0f, "spread %g", (double)spread);
    /* The unmeasured pairs rank behind the measured fastest, by at least the table's margin. */
    rail_tuner_times(t, AR, 65536, 1, times);
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        if (c != ring_ll128 && times[c] >= 0.0f)
            CHECK_MSG(times[c] > 27.0f * 1.02f, "candidate %d at %g us", c, (double)times[c]);
    /* NCCL offers only the unmeasured pairs and the slowest measured one: the tuner still
     * forces only what NCCL offered. */
    {
        int offer[NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS] = {0}, changed;
        offer[C(NCCL_ALGO_TREE, NCCL_PROTO_LL128)] = 1;
        offer[C(NCCL_ALGO_RING, NCCL_PROTO_LL)] = 1;
        int ch = choice_of(t, AR, 65536, offer, &changed);
        CHECK(ch < 0 || offer[ch]);
        CHECK_EQ_INT(changed, 0);
    }
    rail_tuner_destroy(t);

    /* Ratios that agree (each pair measured at the model's own time x 1.3): a pair nobody
     * measured that the model predicts faster than every measured one by more than the margin
     * may displace the measured fastest (Tree/LL and Tree/LL128 against Ring/LL, LL128, Simple
     * and Tree/Simple); one predicted only 0.2% faster may not (Tree/LL128 against Tree/LL). */
    static const int slow[] = {
        C(NCCL_ALGO_RING, NCCL_PROTO_LL), C(NCCL_ALGO_RING, NCCL_PROTO_LL128),
        C(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE), C(NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE)};
    static const int with_tree_ll[] = {
        C(NCCL_ALGO_RING, NCCL_PROTO_LL), C(NCCL_ALGO_RING, NCCL_PROTO_LL128),
        C(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE), C(NCCL_ALGO_TREE, NCCL_PROTO_LL)};
    int best_other = -1;
    t = agreeing(slow, &best_other);
    CHECK_EQ_INT(rail_tuner_calib_rule(t, AR, 65536, 1, &spread), RAIL_CALIB_RULE_UNMEASURED);
    CHECK_MSG(spread < 1.01f, "spread %g", (double)spread);
    CHECK(best_other == C(NCCL_ALGO_TREE, NCCL_PROTO_LL) ||
          best_other == C(NCCL_ALGO_TREE, NCCL_PROTO_LL128));
    CHECK_EQ_INT(choice(t, AR, 65536), best_other);
    rail_tuner_destroy(t);
    t = agreeing(with_tree_ll, &best_other);
    CHECK_EQ_INT(rail_tuner_calib_rule(t, AR, 65536, 1, &spread), RAIL_CALIB_RULE_HELD_MARGIN);
    /* The measured fastest is NCCL's own pick here: the tuner leaves it (or forces it). */
    int ch = choice(t, AR, 65536);
    CHECK_MSG(ch < 0 || ch == C(NCCL_ALGO_TREE, NCCL_PROTO_LL), "choice %d", ch);
    rail_tuner_destroy(t);
}

static char g_banner[512];
static void capture_banner(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                           const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    if (level == NCCL_LOG_INFO && !g_banner[0])
        vsnprintf(g_banner, sizeof(g_banner), fmt, ap);
    va_end(ap);
}

/* Issue 30 item 4: the tuner's first INFO line names the table in use (NCCL_RAIL_MODEL_TABLE). */
static void test_banner_names_table(void)
{
    g_banner[0] = '\0';
    rail_tuner_banner(capture_banner, 6);
    CHECK_MSG(strstr(g_banner, "tuner plugin, ABI v6, model table embedded") != NULL, "'%s'",
              g_banner);
    setenv("NCCL_RAIL_MODEL_TABLE", "none", 1);
    g_banner[0] = '\0';
    rail_tuner_banner(capture_banner, 6);
    CHECK_MSG(strstr(g_banner, "model table none") != NULL, "'%s'", g_banner);
    unsetenv("NCCL_RAIL_MODEL_TABLE");
    g_banner[0] = '\0';
    rail_version_banner(capture_banner, RAIL_PLUGIN_NET, 6, NULL);
    CHECK_MSG(strstr(g_banner, "model table") == NULL, "'%s'", g_banner);
}

int main(void)
{
    char err[256], cmd[400];
    CHECK(mkdtemp(g_dir) != NULL);
    CHECK_EQ_INT(rail_topo_load_profile("aws-p5", &g_topo, err, sizeof(err)), 0);
    rail_log_set_logger(capture);
    test_calibration_reranks();
    test_rules_win();
    test_bad_files();
    test_shared_calibration();
    test_job_keeps_promise();
    test_banner_names_table();
    rail_log_set_logger(NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
    CHECK_EQ_INT(system(cmd), 0);
    return check_report("test_calib_tuner");
}
