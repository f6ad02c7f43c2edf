/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration file (calibration.h): parsing and its errors, the write/parse round trip, and the
 * times it gives a communicator (calib_apply.h): measured points, sizes between, node counts
 * between and beyond. */
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "measure/calibration.h"
#include "check.h"
#include "decide/calib_apply.h"
#include "model/cost_model.h"
#include "model/model_table.h"

static char g_err[1024];
static struct rail_calibration g_cal;

static int parse(const char *text)
{
    rail_calib_free(&g_cal);
    return rail_calib_parse(text, strlen(text), "cal.txt", &g_cal, g_err, sizeof(g_err));
}

#define CHECK_ERR(text, needle)                                                                    \
    do {                                                                                           \
        int rc_ = parse(text);                                                                     \
        CHECK_MSG(rc_ == -EINVAL && strstr(g_err, (needle)) != NULL && g_cal.n == 0,               \
                  "rc %d, err '%s', expected '%s'", rc_, g_err, (needle));                         \
    } while (0)

#define HDR "nccl-rail-calibration 1\n"

static void test_parse(void)
{
    CHECK_EQ_INT(parse("# comment\n\n" HDR "coll,algo,proto,nranks,nnodes,bytes,time_us\n"
                       "AllGather,Ring,Simple,8,8,1024,50\r\n"
                       "allgather,ring,simple,8,8,512,40.5\n"
                       "ReduceScatter,PAT,Simple,4,4,512,30\n"),
                 0);
    CHECK_EQ_INT(g_cal.n, 3);
    /* Sorted by (coll, algo, proto, ranks per node, nodes, bytes). */
    CHECK_EQ_INT(g_cal.rows[0].coll, ncclFuncAllGather);
    CHECK_EQ_INT(g_cal.rows[0].bytes, 512);
    CHECK_NEAR(g_cal.rows[0].time_us, 40.5, 1e-12);
    CHECK_EQ_INT(g_cal.rows[2].algo, NCCL_ALGO_PAT);

    CHECK_ERR("", "cal.txt: empty");
    CHECK_ERR("nccl-rail-calibration 2\nAllGather,Ring,Simple,8,8,1024,50\n",
              "cal.txt:1: wrong header 'nccl-rail-calibration 2'");
    CHECK_ERR("coll,algo,proto,nranks,nnodes,bytes,time_us\n", "cal.txt:1: wrong header");
    CHECK_ERR(HDR, "cal.txt: no rows");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024\n", "cal.txt:2: 6 fields, expected 7");
    CHECK_ERR(HDR "AllToAll,Ring,Simple,8,8,1024,5\n", ":2: unknown collective");
    CHECK_ERR(HDR "AllGather,Star,Simple,8,8,1024,5\n", ":2: unknown algorithm");
    CHECK_ERR(HDR "AllGather,Ring,LL64,8,8,1024,5\n", ":2: unknown protocol");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,3,1024,5\n", ":2: nranks '8' / nnodes '3'");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,-1,5\n", ":2: bytes '-1'");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,0\n", ":2: time_us '0'");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,nan\n", ":2: time_us 'nan'");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,5\nAllGather,Ring,Simple,8,8,1024,6\n",
              "cal.txt: two rows for AllGather Ring/Simple 8 ranks 8 nodes 1024 bytes");
    {
        char bin[] = HDR "AllGather\0,Ring";
        rail_calib_free(&g_cal);
        CHECK_EQ_INT(rail_calib_parse(bin, sizeof(bin) - 1, "b", &g_cal, g_err, sizeof(g_err)),
                     -EINVAL);
        CHECK(strstr(g_err, "b:2: NUL byte") != NULL);
    }
}

static void test_roundtrip(void)
{
    static struct rail_calib_run runs[2];
    struct rail_calibration c;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    runs[0] = (struct rail_calib_run){.coll = ncclFuncAllReduce,
                                      .algo = NCCL_ALGO_TREE,
                                      .proto = NCCL_PROTO_LL,
                                      .nranks = 16,
                                      .nnodes = 2,
                                      .npoints = 2};
    runs[0].pts[0] = (struct rail_calib_point){8, 12.5};
    runs[0].pts[1] = (struct rail_calib_point){16, 13.25};
    runs[1] = runs[0]; /* a repeated run: the faster time of a point is kept */
    runs[1].pts[0].time_us = 11.0;
    runs[1].pts[1].time_us = 14.0;
    CHECK_EQ_INT(rail_calib_from_runs(runs, 2, &c), 0);
    CHECK_EQ_INT(c.n, 2);
    CHECK_EQ_INT(rail_calib_write(&c, "test", f), 0);
    fclose(f);
    CHECK(strncmp(text, HDR "# test\n", strlen(HDR) + 7) == 0);
    CHECK_EQ_INT(parse(text), 0);
    CHECK_EQ_INT(g_cal.n, 2);
    CHECK_NEAR(g_cal.rows[0].time_us, 11.0, 1e-12);
    CHECK_NEAR(g_cal.rows[1].time_us, 13.25, 1e-12);
    CHECK_EQ_INT(g_cal.rows[1].nranks, 16);
    free(text);
    rail_calib_free(&c);
}

/* calib_apply: a calibrated pair's time is the model's times the calibration's residual,
 * log(measured / model at the calibrated node count), interpolated in log(nodes). */
static double model_at(const struct rail_topo *t, int nnodes, int coll, int algo, int proto,
                       size_t bytes)
{
    static struct rail_model m;
    struct rail_comm_shape s = {.nranks = nnodes, .nnodes = nnodes, .min_rpn = 1, .max_rpn = 1};
    CHECK_EQ_INT(rail_model_build(&m, t, &s, NULL), 0);
    return rail_model_time(&m, coll, algo, proto, bytes, 1);
}

static int apply_at(const struct rail_topo *t, int nnodes, size_t bytes, float out[21], float *dist)
{
    static struct rail_model m;
    static struct rail_calib_apply a;
    struct rail_comm_shape s = {.nranks = nnodes, .nnodes = nnodes, .min_rpn = 1, .max_rpn = 1};
    CHECK_EQ_INT(rail_model_build(&m, t, &s, NULL), 0);
    a = (struct rail_calib_apply){
        .model = &m, .cal = &g_cal, .topo = t, .rpn = 1, .nnodes = nnodes};
    rail_calib_apply_init(&a);
    int kind = rail_calib_apply_times(&a, ncclFuncAllGather, bytes, 1, out, dist);
    rail_calib_apply_fini(&a);
    return kind;
}

/* Two octaves beyond the only calibrated node count, where the residuals have faded below one
 * half: where ring pairs alone contend they are carried whole (a ring step of the same bytes
 * per rank: calib_apply.h), with the ring margin instead of the octaves'; before, nothing applied
 * there and the model decided (RAIL_DT_TIMES_MODEL). */
static void test_ring_steps_carried(void)
{
    static struct rail_topo topo;
    const int AG = ncclFuncAllGather, R = NCCL_ALGO_RING;
    const int LL = NCCL_PROTO_LL, LL128 = NCCL_PROTO_LL128, S = NCCL_PROTO_SIMPLE;
    double f[3] = {0.2, 0.0, 50.0}; /* measured / model at 8 nodes, per protocol */
    float out[21], dist;
    char err[256], text[512];
    CHECK_EQ_INT(rail_topo_load_profile("aws-p5", &topo, err, sizeof(err)), 0);
    /* 1 MiB on 2 nodes is read at the same bytes per rank on 8: 4 MiB. */
    double m8[3], m2[3];
    for (int p = 0; p < 3; p++) {
        m8[p] = model_at(&topo, 8, AG, R, p, 4u << 20);
        m2[p] = model_at(&topo, 2, AG, R, p, 1u << 20);
    }
    f[LL128] = f[LL] * 1.2 * m2[LL] / m2[LL128]; /* Ring/LL128 1.2x Ring/LL's time on 2 nodes */
    snprintf(text, sizeof(text),
             HDR "AllGather,Ring,LL,8,8,4194304,%.6f\nAllGather,Ring,LL128,8,8,4194304,%.6f\n"
                 "AllGather,Ring,Simple,8,8,4194304,%.6f\n",
             m8[LL] * f[LL], m8[LL128] * f[LL128], m8[S] * f[S]);
    CHECK_EQ_INT(parse(text), 0);
    /* Preconditions: Ring/LL and Ring/LL128 contend (within 2x), PAT (uncalibrated, scaled by
     * the calibrated pairs' mean residual) does not. */
    double best = fmin(m2[LL] * f[LL], m2[LL128] * f[LL128]);
    double mean = (log(f[0]) + log(f[1]) + log(f[2])) / 3.0;
    CHECK(fmax(m2[LL] * f[LL], m2[LL128] * f[LL128]) <= RAIL_CALIB_CONTEND * best);
    CHECK(model_at(&topo, 2, AG, NCCL_ALGO_PAT, S, 1u << 20) * exp(mean) >
          RAIL_CALIB_CONTEND * best);
    const struct rail_model_table *tab = rail_model_table_builtin();
    CHECK(exp(-2.0 / tab->fade_nodes) < RAIL_CALIB_MIN_WEIGHT);
    CHECK_EQ_INT(apply_at(&topo, 2, 1u << 20, out, &dist), RAIL_DT_TIMES_CAL_BEYOND);
    CHECK_NEAR(out[R * 3 + LL] / m2[LL], f[LL], 1e-3);
    CHECK_NEAR(out[R * 3 + LL128] / m2[LL128], f[LL128], 1e-3);
    /* The margin the decision table applies beyond (2 x slope x distance): the ring change. */
    CHECK_NEAR(2.0 * tab->margin_slope * dist, RAIL_CALIB_RING_CHANGE, 1e-5);
    /* Where PAT contends as well (its own series, at 8 nodes, fast), nothing is carried. */
    snprintf(text, sizeof(text),
             HDR "AllGather,PAT,Simple,8,8,4194304,%.6f\nAllGather,Ring,LL,8,8,4194304,%.6f\n"
                 "AllGather,Ring,LL128,8,8,4194304,%.6f\n",
             model_at(&topo, 8, AG, NCCL_ALGO_PAT, S, 4u << 20) * 0.01, m8[LL] * f[LL],
             m8[LL128] * f[LL128]);
    CHECK_EQ_INT(parse(text), 0);
    CHECK_EQ_INT(apply_at(&topo, 2, 1u << 20, out, &dist), RAIL_DT_TIMES_MODEL);
}

static void test_predict(void)
{
    static struct rail_topo topo;
    const int AG = ncclFuncAllGather, P = NCCL_ALGO_PAT, S = NCCL_PROTO_SIMPLE;
    const int RS_ = NCCL_ALGO_RING * 3 + NCCL_PROTO_SIMPLE, PS = P * 3 + S;
    float out[21], dist;
    char err[256];
    CHECK_EQ_INT(rail_topo_load_profile("aws-p5", &topo, err, sizeof(err)), 0);
    /* PAT (read at the same size) at 2 and 8 nodes, one rank each; Ring/Simple at 2 only. */
    CHECK_EQ_INT(parse(HDR "AllGather,PAT,Simple,2,2,1048576,100\n"
                           "AllGather,PAT,Simple,2,2,4194304,300\n"
                           "AllGather,PAT,Simple,8,8,1048576,400\n"
                           "AllGather,PAT,Simple,8,8,4194304,900\n"
                           "AllGather,Ring,Simple,2,2,1048576,150\n"),
                 0);
    double r2 = log(100.0 / model_at(&topo, 2, AG, P, S, 1048576));
    double r8 = log(400.0 / model_at(&topo, 8, AG, P, S, 1048576));
    /* Measured here, every calibrated pair at this size: the measured times, no margin. */
    CHECK_EQ_INT(apply_at(&topo, 2, 1048576, out, &dist), RAIL_DT_TIMES_CAL_MEASURED);
    CHECK_NEAR(out[PS], 100.0, 1e-3);
    CHECK_NEAR(out[RS_], 150.0, 1e-3);
    CHECK_NEAR(dist, 0.0, 1e-9);
    /* Between two measured sizes: the residual in log(bytes). */
    CHECK_EQ_INT(apply_at(&topo, 2, 2097152, out, &dist), RAIL_DT_TIMES_CAL_NEAR);
    double r2b = log(300.0 / model_at(&topo, 2, AG, P, S, 4194304));
    CHECK_NEAR(out[PS] / model_at(&topo, 2, AG, P, S, 2097152), exp(0.5 * (r2 + r2b)), 1e-4);
    /* 4 nodes: halfway between 2 and 8 in log(nodes). Ring/Simple, only at 2, is an octave beyond
     * it: faded below RAIL_CALIB_MIN_WEIGHT, it does not apply (scaled like the uncalibrated
     * pairs, by PAT's residual, the only one that applies). */
    const struct rail_model_table *tab = rail_model_table_builtin();
    CHECK(exp(-1.0 / tab->fade_nodes) < RAIL_CALIB_MIN_WEIGHT);
    CHECK_EQ_INT(apply_at(&topo, 4, 1048576, out, &dist), RAIL_DT_TIMES_CAL_NEAR);
    double r4 = 0.5 * r2 + 0.5 * r8;
    CHECK_NEAR(out[PS] / model_at(&topo, 4, AG, P, S, 1048576), exp(r4), 1e-4);
    CHECK_NEAR(out[RS_] / model_at(&topo, 4, AG, NCCL_ALGO_RING, S, 1048576), exp(r4), 1e-4);
    CHECK_NEAR(dist, 1.0, 1e-6);
    /* 9 nodes: 0.17 octave beyond 8, the residual fades with the table's fade_nodes and still
     * applies (weight above one half). */
    double d9 = log(9.0 / 8.0) / log(2.0);
    CHECK(exp(-d9 / tab->fade_nodes) >= RAIL_CALIB_MIN_WEIGHT);
    CHECK_EQ_INT(apply_at(&topo, 9, 1048576, out, &dist), RAIL_DT_TIMES_CAL_BEYOND);
    CHECK_NEAR(out[PS] / model_at(&topo, 9, AG, P, S, 1048576),
               exp(r8 * exp(-d9 / tab->fade_nodes)), 1e-4);
    CHECK_NEAR(dist, d9, 1e-5);
    /* 32 nodes: two octaves beyond 8, faded far below one half: nothing applies, the model's
     * times (and its own do-no-harm rules) decide. */
    CHECK_EQ_INT(apply_at(&topo, 32, 1048576, out, &dist), RAIL_DT_TIMES_MODEL);
    CHECK_NEAR(out[PS] / model_at(&topo, 32, AG, P, S, 1048576), 1.0, 1e-6);
    CHECK_NEAR(dist, 0.0, 1e-9);
    /* Another number of ranks per node: nothing calibrated, the model's times. */
    {
        static struct rail_model m;
        static struct rail_calib_apply a;
        struct rail_comm_shape s = {.nranks = 16, .nnodes = 2, .min_rpn = 8, .max_rpn = 8};
        CHECK_EQ_INT(rail_model_build(&m, &topo, &s, NULL), 0);
        a = (struct rail_calib_apply){
            .model = &m, .cal = &g_cal, .topo = &topo, .rpn = 8, .nnodes = 2};
        rail_calib_apply_init(&a);
        CHECK_EQ_INT(rail_calib_apply_times(&a, AG, 1048576, 1, out, &dist), RAIL_DT_TIMES_MODEL);
        rail_calib_apply_fini(&a);
    }

    {
        struct rail_calib_cover cv;
        CHECK_EQ_INT(parse(HDR "AllGather,Ring,Simple,2,2,1,20\nAllGather,Ring,Simple,2,2,8,20\n"
                               "AllGather,Ring,Simple,8,8,1,80\nAllReduce,Tree,LL,16,2,64,7\n"),
                     0);
        rail_calib_cover(&g_cal, &cv);
        CHECK_EQ_INT(cv.rows, 4);
        CHECK_EQ_INT(cv.pairs, 2);
        CHECK_EQ_INT(cv.shapes, 3);
        CHECK_EQ_INT(cv.nnodes_min, 2);
        CHECK_EQ_INT(cv.nnodes_max, 8);
        CHECK_EQ_INT(cv.rpn_max, 8);
        CHECK_EQ_INT(cv.bytes_max, 64);
    }
}

/* Issue 22: numbers are checked where they enter. A 0-byte row used to reach log(0) and make
 * the slower pair win; 1e308, 1e-300 and hex floats used to pass as times. */
static void test_hostile_numbers(void)
{
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,0,5\n",
              ":2: bytes '0': a size of 0 bytes cannot be calibrated");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,1e308\n", ":2: time_us '1e308' is outside");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,1e-300\n", ":2: time_us '1e-300' is outside");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,0x1p4\n",
              ":2: time_us '0x1p4' is not a positive plain decimal number");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,inf\n", ":2: time_us 'inf' is not");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,+5\n", ":2: time_us '+5' is not");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,5e\n", ":2: time_us '5e' is not");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,.\n", ":2: time_us '.' is not");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,1024,1e400\n", ":2: time_us '1e400' is outside");
    CHECK_ERR(HDR "AllGather,Ring,Simple,8,8,2251799813685248,5\n", ":2: bytes '2251799813685248'");
    /* What nccl-tests and rail_calib_write print still parses. */
    CHECK_EQ_INT(parse(HDR
                       "AllGather,Ring,Simple,8,8,1,0.001\nAllGather,Ring,Simple,8,8,2,1.5e2\n"
                       "AllGather,Ring,Simple,8,8,4,1000000000\nAllGather,Ring,Simple,8,8,8,.5\n"),
                 0);
    CHECK_EQ_INT(g_cal.n, 4);
    CHECK_NEAR(g_cal.rows[1].time_us, 150.0, 1e-9);
}

/* Per series at most 32 node counts and 256 sizes per node count: prediction cost is bounded. */
static void test_limits(void)
{
    static char text[1 << 16];
    size_t k = (size_t)snprintf(text, sizeof(text), HDR);
    for (int n = 1; n <= 33; n++)
        k += (size_t)snprintf(text + k, sizeof(text) - k, "AllGather,Ring,LL,%d,%d,8,5\n", n, n);
    CHECK_ERR(text, "more than 32 node counts for AllGather Ring/LL at 1 rank(s) per node");
    k = (size_t)snprintf(text, sizeof(text), HDR);
    for (int b = 1; b <= 257; b++)
        k += (size_t)snprintf(text + k, sizeof(text) - k, "AllGather,Ring,LL,2,2,%d,5\n", b);
    CHECK_ERR(text, "more than 256 sizes per node count");
    k -= strlen("AllGather,Ring,LL,2,2,257,5\n");
    text[k] = '\0';
    CHECK_EQ_INT(parse(text), 0);
}

int main(void)
{
    test_limits();
    test_parse();
    test_hostile_numbers();
    test_roundtrip();
    test_predict();
    test_ring_steps_carried();
    rail_calib_free(&g_cal);
    return check_report("test_calibration");
}
