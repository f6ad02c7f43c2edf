/* SPDX-License-Identifier: Apache-2.0 */
/* Cost model: general properties on hand-built topologies (sizes, determinism, monotonicity,
 * nRanks == 1, confidence). */
#include <errno.h>

#include "check.h"
#include "model/model_table.h"
#include "test_cost_model_topos.h"

struct setup {
    const char *name;
    void (*make)(struct rail_topo *);
    int nnodes, rpn;
};

static const struct setup k_setups[] = {
    {"h100x1", topo_h100, 1, 8},      {"h100x2", topo_h100, 2, 8},
    {"h100x4", topo_h100, 4, 8},      {"roce x2", topo_h100_roce, 2, 8},
    {"b200x1", topo_b200, 1, 8},      {"b200x4", topo_b200, 4, 8},
    {"p4dx1", topo_p4d, 1, 8},        {"p4dx4", topo_p4d, 4, 8},
    {"a10gx1", topo_a10g, 1, 8},      {"a10gx2", topo_a10g, 2, 8},
    {"t4x1", topo_t4, 1, 4},          {"t4x3", topo_t4, 3, 4},
    {"1gpux8", topo_one_gpu, 8, 1},   {"1gpux2", topo_one_gpu, 2, 1},
    {"h100 4 of 8", topo_h100, 1, 4}, {"p5x1", topo_p5, 1, 8},
    {"p5x4", topo_p5, 4, 8},
};
#define NSETUPS ((int)(sizeof(k_setups) / sizeof(k_setups[0])))

static void build(const struct setup *s, struct rail_model *m)
{
    static struct rail_topo t;
    s->make(&t);
    struct rail_comm_shape shape = shape_of(s->nnodes, s->rpn);
    CHECK_EQ_INT(rail_model_build(m, &t, &shape, NULL), 0);
}

/* The structural model alone: the embedded table's coefficients without its measured residuals
 * (which follow nccl-tests times, themselves not monotonic in size). */
static void build_structural(const struct setup *s, struct rail_model *m)
{
    static struct rail_topo t;
    static struct rail_model_table coef_only;
    coef_only = *rail_model_table_builtin();
    coef_only.nresid = 0;
    coef_only.resid = NULL;
    s->make(&t);
    struct rail_comm_shape shape = shape_of(s->nnodes, s->rpn);
    CHECK_EQ_INT(rail_model_build_with(m, &t, &shape, NULL, &coef_only), 0);
}

static void test_names(void)
{
    CHECK_EQ_STR(rail_coll_name(ncclFuncBroadcast), "Broadcast");
    CHECK_EQ_STR(rail_coll_name(ncclFuncAllReduce), "AllReduce");
    CHECK_EQ_STR(rail_coll_name(5), "?");
    CHECK_EQ_STR(rail_coll_name(-1), "?");
    const char *algos[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                           "NVLSTree", "PAT"};
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        CHECK_EQ_STR(rail_algo_name(a), algos[a]);
    CHECK_EQ_STR(rail_algo_name(7), "?");
    CHECK_EQ_STR(rail_proto_name(NCCL_PROTO_LL), "LL");
    CHECK_EQ_STR(rail_proto_name(NCCL_PROTO_LL128), "LL128");
    CHECK_EQ_STR(rail_proto_name(NCCL_PROTO_SIMPLE), "Simple");
    CHECK_EQ_STR(rail_proto_name(3), "?");
}

static void test_bad_args(void)
{
    struct rail_model m;
    struct rail_topo t;
    topo_h100(&t);
    struct rail_comm_shape s = shape_of(1, 8);
    CHECK_EQ_INT(rail_model_build(NULL, &t, &s, NULL), -EINVAL);
    CHECK_EQ_INT(rail_model_build(&m, &t, NULL, NULL), -EINVAL);
    CHECK_EQ_INT(rail_model_build(&m, &t, &s, NULL), 0);
    CHECK(rail_model_time(NULL, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 1) == -1);
    CHECK(rail_model_time(&m, -1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 1) == -1);
    CHECK(rail_model_time(&m, 5, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 1) == -1);
    CHECK(rail_model_time(&m, ncclFuncAllReduce, 7, NCCL_PROTO_SIMPLE, 8, 1) == -1);
    CHECK(rail_model_time(&m, ncclFuncAllReduce, NCCL_ALGO_RING, 3, 8, 1) == -1);
    int a = 0, p = 0;
    CHECK(rail_model_pick(NULL, ncclFuncAllReduce, 8, 1, &a, &p) == -1);
    CHECK_EQ_INT(a, -1);
    CHECK_EQ_INT(p, -1);
}

/* LL wins for tiny messages on every topology and collective; huge ones never go to LL, and go to
 * Simple except across nodes, where LL128 may win (measured on 8-GPU nodes: p5_2x8_efa and
 * b200_16x8_ib have Ring/LL128 ahead of Ring/Simple at 1 GiB, test/fixtures/tuner-data). */
static void test_protocol_extremes(void)
{
    static struct rail_model m;
    for (int i = 0; i < NSETUPS; i++) {
        build(&k_setups[i], &m);
        CHECK_MSG(m.confident, "%s: %s", k_setups[i].name, m.why);
        for (int c = 0; c < RAIL_NUM_COLLS; c++) {
            int a, p;
            float t = rail_model_pick(&m, c, 8, 1, &a, &p);
            CHECK_MSG(t > 0 && p == NCCL_PROTO_LL, "%s %s 8 B: %s/%s", k_setups[i].name,
                      rail_coll_name(c), rail_algo_name(a), rail_proto_name(p));
            t = rail_model_pick(&m, c, GiB, 1, &a, &p);
            CHECK_MSG(t > 0 &&
                          (p == NCCL_PROTO_SIMPLE || (p == NCCL_PROTO_LL128 && m.shape.nnodes > 1)),
                      "%s %s 1 GiB: %s/%s", k_setups[i].name, rail_coll_name(c), rail_algo_name(a),
                      rail_proto_name(p));
            /* NCCL's own model agrees on these extremes. */
            rail_model_nccl_pick(&m, c, 8, 1, &a, &p);
            CHECK_EQ_INT(p, NCCL_PROTO_LL);
            rail_model_nccl_pick(&m, c, GiB, 1, &a, &p);
            CHECK_EQ_INT(p, NCCL_PROTO_SIMPLE);
        }
    }
}

/* Every time is either -1 (unsupported) or >= 0; supported sets do not depend on the size; the
 * structural model's times grow with the size (NCCL's Tree correction table makes Tree
 * non-monotonic between powers of two, so every combination is checked across doublings and
 * non-Tree ones on a fine grid too). */
static void test_times_sane_and_monotonic(void)
{
    static struct rail_model m;
    for (int i = 0; i < NSETUPS; i++) {
        build_structural(&k_setups[i], &m);
        for (int c = 0; c < RAIL_NUM_COLLS; c++)
            for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
                for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                    bool supported = rail_model_time(&m, c, a, p, 1, 1) >= 0;
                    float prev = -1.0f;
                    int bad = 0, neg = 0, flip = 0;
                    for (size_t n = 1; n <= 4 * GiB; n *= 2) {
                        float t = rail_model_time(&m, c, a, p, n, 1);
                        float tn = rail_model_nccl_time(&m, c, a, p, n, 1);
                        if (t < 0 && t != -1.0f)
                            neg++;
                        if (tn < 0 && tn != -1.0f)
                            neg++;
                        if ((t >= 0) != supported)
                            flip++;
                        if (t >= 0 && prev >= 0 && t < prev)
                            bad++;
                        prev = t;
                    }
                    if (a != NCCL_ALGO_TREE && supported) {
                        prev = -1.0f;
                        for (size_t n = 1000; n < 300 * MiB; n = n * 5 / 4) {
                            float t = rail_model_time(&m, c, a, p, n, 1);
                            if (t < prev)
                                bad++;
                            prev = t;
                        }
                    }
                    CHECK_MSG(!neg && !flip && !bad, "%s %s %s/%s: neg %d flip %d nonmono %d",
                              k_setups[i].name, rail_coll_name(c), rail_algo_name(a),
                              rail_proto_name(p), neg, flip, bad);
                }
        /* The best choice's time never decreases across doublings either. */
        for (int c = 0; c < RAIL_NUM_COLLS; c++) {
            float prev = 0.0f;
            for (size_t n = 1; n <= GiB; n *= 2) {
                float t = rail_model_pick(&m, c, n, 1, NULL, NULL);
                CHECK_MSG(t >= prev, "%s %s best at %zu: %g < %g", k_setups[i].name,
                          rail_coll_name(c), n, (double)t, (double)prev);
                prev = t;
            }
        }
    }
}

static void test_deterministic(void)
{
    static struct rail_model a, b;
    for (int i = 0; i < NSETUPS; i++) {
        memset(&a, 0x5a, sizeof(a));
        memset(&b, 0xa5, sizeof(b));
        build(&k_setups[i], &a);
        build(&k_setups[i], &b);
        CHECK_MSG(memcmp(&a, &b, sizeof(a)) == 0, "%s: two builds differ", k_setups[i].name);
        int diff = 0;
        for (int c = 0; c < RAIL_NUM_COLLS; c++)
            for (size_t n = 8; n <= GiB; n *= 8) {
                float ta = rail_model_pick(&a, c, n, 3, NULL, NULL);
                float tb = rail_model_pick(&b, c, n, 3, NULL, NULL);
                diff += memcmp(&ta, &tb, sizeof(ta)) != 0;
            }
        CHECK_EQ_INT(diff, 0);
    }
}

static void test_single_rank(void)
{
    static struct rail_model m;
    struct rail_topo t;
    topo_h100(&t);
    struct rail_comm_shape s = shape_of(1, 1);
    CHECK_EQ_INT(rail_model_build(&m, &t, &s, NULL), 0);
    CHECK(m.confident);
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                float want = a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE ? 0.0f : -1.0f;
                CHECK(rail_model_time(&m, c, a, p, MiB, 1) == want);
                CHECK(rail_model_nccl_time(&m, c, a, p, MiB, 1) == want);
            }
    int a, p;
    CHECK(rail_model_pick(&m, ncclFuncAllReduce, GiB, 1, &a, &p) == 0.0f);
    CHECK_EQ_INT(a, NCCL_ALGO_RING);
    CHECK_EQ_INT(p, NCCL_PROTO_SIMPLE);
}

/* numPipeOps multiplies Ring latency; other algorithms pay it once per 10 batched ops. */
static void test_pipe_ops(void)
{
    static struct rail_model m;
    build(&k_setups[1], &m); /* h100x2 */
    const int AR = ncclFuncAllReduce;
    float r1 = rail_model_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, 1);
    float r4 = rail_model_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, 4);
    CHECK_NEAR(r4 - r1, 3 * m.lat[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 1e-3);
    float t1 = rail_model_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_LL, 8, 1);
    float t10 = rail_model_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_LL, 8, 10);
    float t11 = rail_model_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_LL, 8, 11);
    CHECK(t1 == t10);
    CHECK_NEAR(t11 - t1, m.lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL], 1e-3);
    CHECK(rail_model_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_LL, 8, 0) == r1);
}

static void expect_unsure(const char *what, const struct rail_topo *t, struct rail_comm_shape s)
{
    static struct rail_model m;
    CHECK_EQ_INT(rail_model_build(&m, t, &s, NULL), 0);
    CHECK_MSG(!m.confident, "%s: confident (%s)", what, m.why);
    CHECK_MSG(m.why[0] != '\0', "%s: no reason", what);
    ncclTunerConstants_v5_t c, d;
    rail_model_default_constants(&c);
    d = c;
    CHECK_EQ_INT(rail_model_tune_constants(&m, t, &c), 0);
    CHECK(memcmp(&c, &d, sizeof(c)) == 0);
    /* Still a usable table for explain output. */
    CHECK(rail_model_pick(&m, ncclFuncAllReduce, MiB, 1, NULL, NULL) >= 0);
}

static void test_unknown_topology(void)
{
    static struct rail_topo t;
    expect_unsure("NULL topology", NULL, shape_of(1, 8));
    memset(&t, 0, sizeof(t));
    expect_unsure("empty topology", &t, shape_of(1, 8));
    expect_unsure("empty topology, 2 nodes", &t, shape_of(2, 8));
    topo_h100(&t);
    for (int g = 0; g < t.n_gpus; g++)
        t.gpus[g].sm = 0;
    expect_unsure("sm unknown", &t, shape_of(1, 8));
    topo_h100(&t);
    t.gpus[3].sm = 0;
    expect_unsure("one sm unknown", &t, shape_of(1, 8));
    topo_h100(&t);
    expect_unsure("more ranks per node than GPUs", &t, shape_of(2, 16));
    t.n_nics = 0;
    expect_unsure("multi-node without NIC", &t, shape_of(2, 8));
    topo_h100(&t);
    for (int n = 0; n < t.n_nics; n++)
        t.nics[n].active = false;
    expect_unsure("multi-node, every NIC down", &t, shape_of(2, 8));
    topo_h100(&t);
    struct rail_comm_shape bad = {0, 0, 0, 0, false};
    expect_unsure("invalid shape", &t, bad);
    bad = (struct rail_comm_shape){8, 16, 1, 1, false};
    expect_unsure("more nodes than ranks", &t, bad);

    /* Known enough: a single node without NICs, or a NIC of unknown speed. */
    static struct rail_model m;
    t.n_nics = 0;
    struct rail_comm_shape s = shape_of(1, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_MSG(m.confident, "%s", m.why);
    topo_h100(&t);
    for (int n = 0; n < t.n_nics; n++)
        t.nics[n].speed_mbps = 0;
    s = shape_of(2, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_MSG(m.confident, "%s", m.why);
    CHECK_NEAR(m.bw_inter, 12.0, 1e-3); /* NCCL's NET_BW for an unknown speed */
}

int main(void)
{
    test_names();
    test_bad_args();
    test_protocol_extremes();
    test_times_sane_and_monotonic();
    test_deterministic();
    test_single_rank();
    test_pipe_ops();
    test_unknown_topology();
    return check_report("test_cost_model_basic");
}
