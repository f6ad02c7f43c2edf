/* SPDX-License-Identifier: Apache-2.0 */
/* The trained tuner table (tuner-plugin/model/model_table.h) and what the model does with it: the
 * parser and writer, the embedded table, the step model's structure, the measured residuals
 * interpolated in log(nodes), and the coverage that sets the risk margin (docs/cost-model.md
 * §12). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/cost_model.h"
#include "decide/decision.h"
#include "model/model_table.h"
#include "test_cost_model_topos.h"

#define AR ncclFuncAllReduce
#define AG ncclFuncAllGather

static char g_err[512];

static int parse(const char *text, struct rail_model_table *t)
{
    return rail_model_table_parse(text, strlen(text), "t.txt", t, g_err, sizeof(g_err));
}

/* A coef line with every coefficient = v, except the ones overridden by the caller. */
static void coef_line(char *buf, size_t len, const char *fam, const char *gen, float v)
{
    size_t k = (size_t)snprintf(buf, len, "coef %s %s", fam, gen);
    for (int p = 0; p < RAIL_STEP_NPARAMS && k < len; p++) {
        float lo, hi, x = v;
        rail_step_param_range(p, &lo, &hi);
        x = x < lo ? lo : (x > hi ? hi : x);
        k += (size_t)snprintf(buf + k, len - k, " %s=%g", rail_step_param_name(p), (double)x);
    }
    snprintf(buf + k, len - k, "\n");
}

#define CHECK_PARSE_ERR(text, want)                                                                \
    do {                                                                                           \
        struct rail_model_table t_;                                                                \
        int rc_ = parse(text, &t_);                                                                \
        CHECK_MSG(rc_ == -EINVAL && strstr(g_err, want) != NULL, "rc %d err '%s' want '%s'", rc_,  \
                  g_err, want);                                                                    \
        CHECK(t_.nresid == 0 && t_.ncover == 0 && t_.resid == NULL);                               \
    } while (0)

static void test_parse_errors(void)
{
    char buf[4096];
    CHECK_PARSE_ERR("", "t.txt:0: empty table");
    CHECK_PARSE_ERR("# only a comment\n", "empty table");
    CHECK_PARSE_ERR("nccl-rail-model-table 2\n", "t.txt:1: not a 'nccl-rail-model-table 1'");
    CHECK_PARSE_ERR("nccl-rail-calibration 1\n", "not a 'nccl-rail-model-table 1'");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nwhat 1 2\n", "t.txt:2: unknown record 'what'");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nmargin 0.1 0.1 0.5 0.5\n", "margin takes 5");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nmargin 0.1 0.1 0.5 0 2\n", "not a number in range");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nmargin nan 0.1 0.5 0.5 2\n", "not a number");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\ncoef efa hopper ai_ll=1\n", "coef takes family");
    coef_line(buf, sizeof(buf), "efa", "hopper", 1.0f);
    {
        char bad[8300];
        snprintf(bad, sizeof(bad), "nccl-rail-model-table 1\n%s%s", buf, buf);
        CHECK_PARSE_ERR(bad, "a second coef line for efa hopper");
        snprintf(bad, sizeof(bad), "nccl-rail-model-table 1\n%s", buf);
        char *p = strstr(bad, "pat_pow=1");
        memcpy(p, "pat_pow=9", 9); /* outside [0.05, 2] */
        CHECK_PARSE_ERR(bad, "pat_pow: '9' is not a number in [0.05, 2]");
        snprintf(bad, sizeof(bad), "nccl-rail-model-table 1\n%s", buf);
        p = strstr(bad, "ai_ll=");
        memcpy(p, "ai_xx=", 6);
        CHECK_PARSE_ERR(bad, "'ai_xx' is not a coefficient");
        snprintf(bad, sizeof(bad), "nccl-rail-model-table 1\n%s", buf);
        p = strstr(bad, "efa");
        memcpy(p, "eth", 3);
        CHECK_PARSE_ERR(bad, "unknown family 'eth'");
    }
    CHECK_PARSE_ERR("nccl-rail-model-table 1\ncover efa hopper AllReduce 8 2 100 10\n",
                    "bad cover record");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\ncover efa pascal AllReduce 8 2 1 10\n",
                    "unknown GPU generation 'pascal'");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\ncover efa hopper AllReduce 8 2 1 10 Ring\n",
                    "cover takes 7 or 9 fields, found 8");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\ncover efa hopper AllReduce 8 2 1 10 Ring LL64\n",
                    "bad cover record pair");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nresid efa hopper AllReduce Ring LL 8 2 8 0x1\n",
                    "bad resid record");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nresid efa hopper AllReduce Ring LL 8 2 8 21\n",
                    "bad resid record");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nresid efa hopper AllReduce Warp LL 8 2 8 1\n",
                    "bad resid record");
    CHECK_PARSE_ERR("nccl-rail-model-table 1\nresid efa hopper AllReduce Ring LL 8 0 8 1\n",
                    "bad resid record");
    {
        char nul[] = "nccl-rail-model-table 1\nmargin 0.1 0.1 0.5 0.5 2\n";
        nul[30] = '\0';
        struct rail_model_table t;
        CHECK_EQ_INT(
            rail_model_table_parse(nul, sizeof(nul) - 1, "t.txt", &t, g_err, sizeof(g_err)),
            -EINVAL);
        CHECK(strstr(g_err, "NUL byte") != NULL);
    }
}

static void test_roundtrip(void)
{
    char coef[4096], text[8192];
    struct rail_model_table a, b;
    coef_line(coef, sizeof(coef), "ib", "blackwell", 0.5f);
    snprintf(text, sizeof(text),
             "nccl-rail-model-table 1\r\n# comment\n\nmargin 0.03 0.04 0.5 0.5 2\n%s"
             "cover efa hopper AllGather 1 8 128 17179869184\n"
             "cover efa hopper AllReduce 8 2 1024 1024 Tree LL128\n"
             "resid efa hopper AllGather Ring LL 1 8 4096 -0.25\n"
             "resid efa hopper AllGather Ring LL 1 2 4096 0.125\n",
             coef);
    CHECK_EQ_INT(parse(text, &a), 0);
    CHECK(a.has_coef[RAIL_FAM_IB][NCCL_BLACKWELL_COMPCAP_IDX]);
    CHECK(!a.has_coef[RAIL_FAM_EFA][NCCL_HOPPER_COMPCAP_IDX]);
    CHECK_NEAR(a.margin_slope, 0.04, 1e-7);
    CHECK_EQ_INT(a.ncover, 2);
    CHECK_EQ_INT(a.cover[0].algo, RAIL_COVER_ANY);
    CHECK_EQ_INT(a.cover[1].algo, NCCL_ALGO_TREE);
    CHECK_EQ_INT(a.cover[1].proto, NCCL_PROTO_LL128);
    CHECK_EQ_INT(a.nresid, 2);
    CHECK_EQ_INT(a.resid[0].nnodes, 2); /* sorted by node count */
    CHECK_NEAR(a.resid[1].log_ratio, -0.25, 1e-7);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK_EQ_INT(rail_model_table_write(&a, "roundtrip", f), 0);
    long n = ftell(f);
    char *back = calloc(1, (size_t)n + 1);
    rewind(f);
    CHECK_EQ_INT((long)fread(back, 1, (size_t)n, f), n);
    fclose(f);
    CHECK_EQ_INT(parse(back, &b), 0);
    CHECK_EQ_INT(b.nresid, a.nresid);
    CHECK_EQ_INT(b.ncover, a.ncover);
    CHECK(memcmp(a.coef, b.coef, sizeof(a.coef)) == 0);
    CHECK_EQ_INT(b.cover[1].algo, NCCL_ALGO_TREE);
    CHECK_EQ_INT(b.cover[1].proto, NCCL_PROTO_LL128);
    for (int i = 0; i < a.nresid; i++) {
        const struct rail_table_resid *x = &a.resid[i], *y = &b.resid[i];
        CHECK(x->family == y->family && x->gen == y->gen && x->coll == y->coll &&
              x->algo == y->algo && x->proto == y->proto && x->rpn == y->rpn &&
              x->nnodes == y->nnodes && x->bytes == y->bytes && x->log_ratio == y->log_ratio);
    }
    int lo, hi;
    rail_model_table_series(&b, RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_RING,
                            NCCL_PROTO_LL, 1, &lo, &hi);
    CHECK_EQ_INT(hi - lo, 2);
    rail_model_table_series(&b, RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_RING,
                            NCCL_PROTO_LL, 8, &lo, &hi);
    CHECK_EQ_INT(hi - lo, 0);
    free(back);
    rail_model_table_free(&a);
    rail_model_table_free(&b);
}

/* The embedded table is what bench/tuner_eval --fit wrote from the fixtures. */
static void test_builtin(void)
{
    const struct rail_model_table *t = rail_model_table_builtin();
    CHECK(t == rail_model_table_builtin());
    CHECK(t->has_coef[RAIL_FAM_EFA][NCCL_HOPPER_COMPCAP_IDX]);
    /* One InfiniBand system (B200, one node count) is not enough to fit coefficients. */
    CHECK(!t->has_coef[RAIL_FAM_IB][NCCL_BLACKWELL_COMPCAP_IDX]);
    CHECK(t->nresid > 1500);
    CHECK(t->ncover >= 16);
    CHECK(t->margin0 > 0.0f && t->margin_slope > 0.0f && t->margin_out >= 0.5f);
}

/* A table whose coefficients make the step model's structure visible. */
static void make_table(struct rail_model_table *t)
{
    char coef[4096], text[8192];
    coef_line(coef, sizeof(coef), "efa", "hopper", 1.0f);
    snprintf(text, sizeof(text), "nccl-rail-model-table 1\nmargin 0.05 0.1 0.5 0.5 2\n%s", coef);
    CHECK_EQ_INT(parse(text, t), 0);
    struct rail_step_coef *c = &t->coef[RAIL_FAM_EFA][NCCL_HOPPER_COMPCAP_IDX];
    for (int p = 0; p < 3; p++) {
        c->v[RAIL_STEP_AI_LL + p] = 1.0f;  /* 1 us per NVLink step */
        c->v[RAIL_STEP_AN_LL + p] = 10.0f; /* 10 us per network step */
        c->v[RAIL_STEP_BASE_LL + p] = 0.0f;
    }
}

static void test_step_structure(void)
{
    static struct rail_topo topo;
    static struct rail_model m;
    struct rail_model_table t;
    make_table(&t);
    topo_p5(&topo);
    struct rail_comm_shape s = shape_of(4, 8); /* 32 ranks on 4 nodes */
    CHECK_EQ_INT(rail_model_build_with(&m, &topo, &s, NULL, &t), 0);
    CHECK(m.trained);
    CHECK_EQ_INT(m.family, RAIL_FAM_EFA);
    /* Ring AllGather: 31 steps, 3 of them across the network; AllReduce twice that. */
    CHECK_NEAR(m.lat[AG][NCCL_ALGO_RING][NCCL_PROTO_LL], 28 * 1.0 + 3 * 10.0, 1e-4);
    CHECK_NEAR(m.lat[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 56 * 1.0 + 6 * 10.0, 1e-4);
    /* Tree: 7 NVLink steps up and down the node's chain, 2 levels between 4 nodes. */
    float ilat = t.coef[RAIL_FAM_EFA][NCCL_HOPPER_COMPCAP_IDX].v[RAIL_STEP_TREE_ILAT];
    float tlat = t.coef[RAIL_FAM_EFA][NCCL_HOPPER_COMPCAP_IDX].v[RAIL_STEP_TREE_LAT];
    CHECK_NEAR(m.lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL], 2 * 7 * ilat + 2 * 2 * 10 * tlat, 1e-4);
    /* Ring bandwidth: the slower of the node's NICs and a GPU's NVLinks, per traffic. */
    double bn = 8 * m.bw_inter, bi = m.bw_intra; /* efficiencies 1 in this table */
    CHECK_NEAR(m.bw[AG][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], fmin(bn, bi) / (31.0 / 32.0), 1e-2);
    /* What NCCL does not offer stays unoffered, and the prior is kept for the outside rule. */
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                CHECK((m.bw[c][a][p] > 0.0f) == (m.nccl_bw[c][a][p] > 0.0f));
    CHECK(memcmp(m.prior_bw, m.bw, sizeof(m.bw)) != 0);
    /* A single node is never the step model's: the prior decides inside a node. */
    s = shape_of(1, 8);
    CHECK_EQ_INT(rail_model_build_with(&m, &topo, &s, NULL, &t), 0);
    CHECK(!m.trained);
    CHECK_EQ_INT(m.family, RAIL_FAM_NODE);
    CHECK(memcmp(m.prior_bw, m.bw, sizeof(m.bw)) == 0);
    rail_model_table_free(&t);
}

static void test_residuals(void)
{
    static struct rail_topo topo;
    static struct rail_model m;
    struct rail_model_table t;
    make_table(&t);
    /* PAT (follows the size) and Ring (follows the bytes per rank) at 2 and 8 nodes, 1 per node. */
    struct rail_table_resid rows[] = {
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 2, 4096,
         0.4f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 2, 8192,
         0.8f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 8, 4096,
         -0.2f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, 2, 1024,
         0.3f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, 8, 4096,
         0.1f},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        CHECK_EQ_INT(rail_model_table_add_resid(&t, &rows[i]), 0);
    rail_model_table_sort(&t);
    topo_p5(&topo);
    const int P = NCCL_ALGO_PAT, S = NCCL_PROTO_SIMPLE, R = NCCL_ALGO_RING, L = NCCL_PROTO_LL;
    struct rail_comm_shape s = shape_of(2, 1);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 4096), 0.4, 1e-6); /* measured */
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 5793), 0.6, 1e-3); /* log(bytes) */
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 32768), 0.8 * exp(-2.0 / 2.0), 1e-5); /* fades */
    CHECK_NEAR(rail_model_residual(&m, AG, R, S, 4096), 0.0, 1e-9);                    /* no rows */
    s = shape_of(4, 1); /* between 2 and 8 nodes: halfway in log(nodes) */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 4096), 0.5 * 0.4 + 0.5 * -0.2, 1e-6);
    /* A ring is read at the same bytes per rank: 2 KiB on 4 ranks is 1 KiB on 2, 4 KiB on 8. */
    CHECK_NEAR(rail_model_residual(&m, AG, R, L, 2048), 0.5 * 0.3 + 0.5 * 0.1, 1e-6);
    /* 8 KiB was measured at 2 nodes, not at 8 (an octave beyond its 4 KiB: coverage e^-1/2): the
     * residual measured at the size counts for more than the one extrapolated to it (issue 30;
     * was 0.5 x 0.8 + 0.5 x -0.2 e^-1/2 = 0.34). */
    double c8 = exp(-1.0 / 2.0), w2 = 0.5, w8 = 0.5 * c8;
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 8192), (w2 * 0.8 + w8 * -0.2) / (w2 + w8), 1e-5);
    /* Beyond both (2 and 3 octaves): the same mix, applied as far as the nearer one reaches. */
    double ca = exp(-2.0 / 2.0), cb = exp(-3.0 / 2.0);
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 32768),
               (0.5 * ca * 0.8 + 0.5 * cb * -0.2) / (0.5 * ca + 0.5 * cb) * ca, 1e-5);
    s = shape_of(32, 1); /* two octaves beyond 8 nodes: the residual fades (fade_nodes 0.5) */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 4096), -0.2 * exp(-2.0 / 0.5), 1e-6);
    /* The model's time carries the residual. */
    float with = rail_model_time(&m, AG, P, S, 4096, 1);
    struct rail_model_table none = t;
    none.nresid = 0;
    static struct rail_model m2;
    rail_model_build_with(&m2, &topo, &s, NULL, &none);
    CHECK_NEAR(with / rail_model_time(&m2, AG, P, S, 4096, 1), exp(-0.2 * exp(-4.0)), 1e-5);
    /* Another number of ranks per node has no residual. */
    s = shape_of(4, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 4096), 0.0, 1e-9);
    rail_model_table_free(&t);
}

/* PAT's residual between node counts: by size up to RAIL_PAT_PER_RANK_FROM bytes per rank (its
 * 32 KiB bump lines up by size), at the same bytes per rank beyond (its bandwidth knee does). */
static void test_pat_per_rank(void)
{
    static struct rail_topo topo;
    static struct rail_model m;
    struct rail_model_table t;
    make_table(&t);
    const int P = NCCL_ALGO_PAT, S = NCCL_PROTO_SIMPLE;
    struct rail_table_resid rows[] = {
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 2, 4096, 0.3f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 2, 8192, 0.5f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 2, 262144, 0.2f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 2, 1048576, 0.6f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 8, 4096, -0.1f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 8, 8192, 0.1f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 8, 1048576, -0.4f},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, P, S, 1, 8, 4194304, 0.4f},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        CHECK_EQ_INT(rail_model_table_add_resid(&t, &rows[i]), 0);
    rail_model_table_sort(&t);
    topo_p5(&topo);
    struct rail_comm_shape s = shape_of(4, 1); /* halfway between 2 and 8 nodes in log(nodes) */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    /* 8 KiB is 2 KiB per rank: read at 8 KiB on both node counts (0.5 and 0.1); per rank it
     * would be 4 KiB on 2 nodes (0.3) and 16 KiB on 8. */
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 8192), 0.5 * 0.5 + 0.5 * 0.1, 1e-6);
    /* 1 MiB is 256 KiB per rank: 512 KiB on 2 nodes (0.4, halfway in log(bytes)), 2 MiB on 8
     * (0.0); by size it would be 0.5 x 0.6 + 0.5 x -0.4 = 0.1. */
    CHECK_NEAR(rail_model_residual(&m, AG, P, S, 1048576), 0.5 * 0.4 + 0.5 * 0.0, 1e-5);
    /* Just under the threshold per rank (64 KiB - 1 per rank) still by size. */
    size_t under = 4 * (RAIL_PAT_PER_RANK_FROM - 1);
    float r_under = rail_model_residual(&m, AG, P, S, under);
    double x = log((double)under / 8192.0) / log(262144.0 / 8192.0);
    double ra = 0.5 + x * (0.2 - 0.5);
    /* 8 nodes: between 8 KiB (0.1) and 1 MiB (-0.4) in log(bytes). */
    double xb = log((double)under / 8192.0) / log(1048576.0 / 8192.0);
    double rb = 0.1 + xb * (-0.4 - 0.1);
    CHECK_NEAR(r_under, 0.5 * ra + 0.5 * rb, 1e-4);
    rail_model_table_free(&t);
}

static void test_trust(void)
{
    static struct rail_topo topo;
    static struct rail_model m;
    struct rail_model_table t;
    float margin, dist;
    make_table(&t);
    struct rail_table_cover c[] = {
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AR, RAIL_COVER_ANY, RAIL_COVER_ANY, 8, 2, 8,
         1ull << 34},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AR, RAIL_COVER_ANY, RAIL_COVER_ANY, 8, 64, 8,
         1ull << 34},
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AG, RAIL_COVER_ANY, RAIL_COVER_ANY, 1, 8, 1 << 20,
         1 << 30},
        /* A published set: one pair measured at one size on 4 nodes. */
        {RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 8, 4,
         1 << 30, 1 << 30},
    };
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(rail_model_table_add_cover(&t, &c[i]), 0);
    topo_p5(&topo);
    struct rail_comm_shape s = shape_of(2, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(rail_model_trust(&m, AR, 1 << 20, &margin, &dist), 1); /* measured here */
    CHECK_NEAR(dist, 0.0, 1e-9);
    CHECK_NEAR(margin, 0.05, 1e-6);
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1 << 20, &margin, &dist), 0); /* AG only at 1/node */
    CHECK_NEAR(margin, 0.5, 1e-6);
    s = shape_of(16, 8); /* inside 2..64 nodes, 2 octaves from 64, 3 from 2 */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(rail_model_trust(&m, AR, 1 << 20, &margin, &dist), 1);
    CHECK_NEAR(dist, 2.0, 1e-6);
    CHECK_NEAR(margin, 0.05 + 0.1 * 2.0, 1e-6);
    s = shape_of(128, 8); /* beyond the largest covered node count */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(rail_model_trust(&m, AR, 1 << 20, &margin, &dist), 0);
    s = shape_of(8, 4); /* between 1 and 8 ranks per node for AllGather? AG covers 1 only */
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1 << 20, &margin, &dist), 0);
    CHECK_EQ_INT(rail_model_trust(&m, AR, 1 << 20, &margin, &dist), 0); /* AR at 8/node only */
    s = shape_of(8, 1);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1 << 20, &margin, &dist), 1);
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1 << 18, &margin, &dist), 1); /* 2 octaves below */
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1 << 17, &margin, &dist), 0); /* 3 octaves below */
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1ull << 32, &margin, &dist), 1);
    CHECK_EQ_INT(rail_model_trust(&m, AG, 1ull << 33, &margin, &dist), 0);
    /* The published pair counts as measured at its very shape and size, nowhere else. */
    s = shape_of(4, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK(rail_model_pair_measured(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1 << 30));
    CHECK(rail_model_pair_measured(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1u << 31));
    CHECK(!rail_model_pair_measured(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1 << 26));
    CHECK(!rail_model_pair_measured(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1 << 30));
    CHECK(!rail_model_pair_measured(&m, AG, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1 << 30));
    s = shape_of(8, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK(!rail_model_pair_measured(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1 << 30));
    /* Another family (InfiniBand) or one node: nothing covered. */
    topo_h100(&topo);
    s = shape_of(2, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    CHECK_EQ_INT(m.family, RAIL_FAM_IB);
    CHECK_EQ_INT(rail_model_trust(&m, AR, 1 << 20, &margin, &dist), 0);
    rail_model_table_free(&t);
}

/* Do no harm (decision.c): a change of NCCL's choice must clear the margin, and outside the
 * covered range the prior must see the gain too. */
static int changed_cells(const struct rail_decision_table *dt)
{
    int n = 0;
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int b = 0; b < RAIL_DT_BUCKETS; b++)
            n += dt->cell[c][0][b].n > 0;
    return n;
}

static void test_do_no_harm(void)
{
    static struct rail_topo topo;
    static struct rail_model m;
    static struct rail_decision_table dt;
    struct rail_model_table t;
    struct rail_table_cover cov = {
        RAIL_FAM_EFA, NCCL_HOPPER_COMPCAP_IDX, 0, RAIL_COVER_ANY, RAIL_COVER_ANY, 8, 2, 1,
        1ull << 40};
    make_table(&t);
    for (int c = 0; c < RAIL_NUM_COLLS; c++) {
        cov.coll = (uint8_t)c;
        CHECK_EQ_INT(rail_model_table_add_cover(&t, &cov), 0);
    }
    topo_p5(&topo);
    struct rail_comm_shape s = shape_of(2, 8);
    /* Covered, no margin: the (odd) model of make_table disagrees with NCCL somewhere. */
    t.margin0 = 0.0f;
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    rail_dt_build(&dt, &m, false);
    int free_changes = changed_cells(&dt);
    CHECK(free_changes > 0);
    /* A cell whose best is what NCCL picks all over the bucket is left alone. */
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int b = 0; b < RAIL_DT_BUCKETS; b++) {
            const struct rail_dt_cell *cell = &dt.cell[c][0][b];
            size_t lo, hi;
            int a1, p1, a2, p2;
            rail_dt_bucket_range(b, &lo, &hi);
            if (!cell->n || lo > hi || rail_model_nccl_pick(&m, c, lo, 1, &a1, &p1) < 0.0f ||
                rail_model_nccl_pick(&m, c, hi, 1, &a2, &p2) < 0.0f)
                continue;
            CHECK(!(a1 == a2 && p1 == p2 && cell->cand[0] == a1 * NCCL_NUM_PROTOCOLS + p1));
        }
    /* A huge margin: nothing changes. */
    t.margin0 = 1000.0f;
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    rail_dt_build(&dt, &m, false);
    CHECK_EQ_INT(changed_cells(&dt), 0);
    /* A margin between: fewer changes, each a subset of the free ones. */
    t.margin0 = 0.3f;
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    rail_dt_build(&dt, &m, false);
    CHECK(changed_cells(&dt) < free_changes);
    /* Outside the covered range (64 nodes) with no outside margin: a change needs the prior to
     * predict the gain as well. */
    t.margin0 = 0.0f;
    t.margin_out = 0.0f;
    s = shape_of(64, 8);
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    rail_dt_build(&dt, &m, false);
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int b = 0; b < RAIL_DT_BUCKETS; b++) {
            const struct rail_dt_cell *cell = &dt.cell[c][0][b];
            size_t lo, hi;
            int a, p;
            rail_dt_bucket_range(b, &lo, &hi);
            if (!cell->n || lo > hi)
                continue;
            size_t mid = (size_t)sqrt((double)lo * (double)(hi > lo ? hi : lo));
            if (rail_model_nccl_pick(&m, c, mid, 1, &a, &p) < 0.0f)
                continue;
            int k = cell->cand[0];
            CHECK(rail_model_prior_time(&m, c, k / 3, k % 3, mid, 1) <
                  rail_model_prior_time(&m, c, a, p, mid, 1) * 1.001f);
        }
    /* And with the table's outside margin (50%), nothing here changes. */
    t.margin_out = 0.5f;
    rail_model_build_with(&m, &topo, &s, NULL, &t);
    rail_dt_build(&dt, &m, false);
    CHECK(changed_cells(&dt) < free_changes);
    rail_model_table_free(&t);
}

int main(void)
{
    test_parse_errors();
    test_roundtrip();
    test_builtin();
    test_step_structure();
    test_residuals();
    test_pat_per_rank();
    test_trust();
    test_do_no_harm();
    return check_report("test_model_table");
}
