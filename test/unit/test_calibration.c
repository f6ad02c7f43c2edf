/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration file (calibration.h): parsing and its errors, the write/parse round trip, and the
 * predictions: measured points, sizes between and beyond, node counts between and beyond. */
#include <errno.h>
#include <unistd.h>

#include "calibration.h"
#include "check.h"
#include "cost_model.h"

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

static double predict(int nnodes, uint64_t bytes, enum rail_calib_how *how)
{
    return rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1, nnodes,
                           bytes, how);
}

static void test_predict(void)
{
    enum rail_calib_how how;
    /* Node counts 2 and 8 at 1 rank/node: latency floor 20 and 80 (grows with N), the rest 100. */
    CHECK_EQ_INT(parse(HDR "AllGather,Ring,Simple,2,2,1,20\n"
                           "AllGather,Ring,Simple,2,2,1000000,120\n"
                           "AllGather,Ring,Simple,8,8,1,80\n"
                           "AllGather,Ring,Simple,8,8,1000000,180\n"
                           "AllGather,Ring,Simple,16,2,1,7\n"
                           "AllGather,PAT,Simple,4,4,1,9\n"),
                 0);
    CHECK_NEAR(predict(2, 1000000, &how), 120.0, 1e-9);
    CHECK_EQ_INT(how, RAIL_CALIB_MEASURED);
    /* Sizes: log-log between two points, the smallest's time below, the slope beyond. */
    CHECK_NEAR(predict(2, 1000, &how), 20.0 * pow(6.0, 0.5), 1e-9);
    CHECK_EQ_INT(how, RAIL_CALIB_SIZE_FIT);
    CHECK_NEAR(predict(2, 0, &how), 20.0, 1e-9);
    CHECK_NEAR(predict(2, 2000000, &how), 120.0 + 100.0 * 1000000.0 / 999999.0, 1e-6);
    /* Node counts: floor 20 -> 80 is slope 1 in log-log, the rest interpolated in log(N). */
    CHECK_NEAR(predict(4, 1000000, &how), 40.0 + 100.0, 1e-9);
    CHECK_EQ_INT(how, RAIL_CALIB_NODES_INTERP);
    CHECK_NEAR(predict(32, 1000000, &how), 320.0 + 100.0, 1e-9);
    CHECK_EQ_INT(how, RAIL_CALIB_NODES_EXTRAP);
    CHECK_NEAR(predict(1, 1, &how), 10.0, 1e-9);
    /* Other ranks per node, other pairs, a single node count: nothing. */
    CHECK(rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 4, 2, 1,
                          &how) < 0);
    CHECK_EQ_INT(how, RAIL_CALIB_NONE);
    CHECK(rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, 2, 1, &how) <
          0);
    CHECK(rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 8, 1,
                          &how) < 0);
    CHECK_NEAR(
        rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 4, 1, &how),
        9.0, 1e-9);
    CHECK_NEAR(rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 2,
                               1, &how),
               7.0, 1e-9);
    /* One measured size: beyond it, time grows in proportion to the bytes. */
    CHECK_NEAR(rail_calib_time(&g_cal, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 8, 2,
                               4, &how),
               28.0, 1e-9);
    /* Extrapolation slope is clamped to 2 in log-log. */
    CHECK_EQ_INT(parse(HDR "AllGather,Ring,Simple,2,2,1,1\nAllGather,Ring,Simple,4,4,1,64\n"), 0);
    CHECK_NEAR(predict(8, 1, &how), 256.0, 1e-6);

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
    rail_calib_free(&g_cal);
    return check_report("test_calibration");
}
