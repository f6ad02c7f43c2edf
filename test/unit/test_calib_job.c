/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration from production jobs (calib_job.h): the three readers (the rail profiler's files,
 * NCCL Inspector's Prometheus textfile and JSON) on good input and on every kind of bad input
 * (FILE:LINE: reason), the merge (the slowest rank, the median repetition, the fastest run, only
 * collectives every rank recorded), and the calibration file's "# source:" comments. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_inspector.h"
#include "measure/calib_job.h"
#include "measure/calib_prof.h"
#include "measure/calib_prom.h"
#include "measure/calibration.h"
#include "check.h"
#include "model/cost_model.h"
#include "prof_file_format.h"

static int prof(struct rail_job_set *s, const char *text, char *err, size_t errlen)
{
    return rail_calib_prof_parse(text, strlen(text), "r.prof", s, err, errlen);
}

static int prom(struct rail_job_set *s, const char *text, char *err, size_t errlen)
{
    return rail_calib_prom_parse(text, strlen(text), "g.prom", s, err, errlen);
}

static int json(struct rail_job_set *s, const char *text, int algo, int proto, char *err,
                size_t errlen)
{
    struct rail_calib_hint h = {-1, algo, proto};
    return rail_calib_inspector_parse(text, strlen(text), "h-pid1.log", &h, s, err, errlen);
}

/* Merge and return the rows as a calibration (sorted). */
static void merge(struct rail_job_set *s, struct rail_calibration *cal, struct rail_job_summary *js)
{
    struct rail_calib_row *rows;
    int n;
    memset(cal, 0, sizeof(*cal));
    CHECK_EQ_INT(rail_job_merge(s, &rows, &n, js), 0);
    CHECK_EQ_INT(rail_calib_add_rows(cal, rows, n), 0);
    free(rows);
}

#define PROF_HDR "nccl-rail-profile 1\n# about\n"

static void test_prof(void)
{
    struct rail_job_set s = {0};
    struct rail_calibration cal;
    struct rail_job_summary js;
    char err[512], text[1024];

    CHECK(rail_calib_prof_detect(PROF_HDR, strlen(PROF_HDR)));
    CHECK(!rail_calib_prof_detect("# nThread 1\n", 12));
    /* Two ranks of one communicator; collective 2 is missing on rank 1 (the ring's edge). */
    for (int rank = 0; rank < 2; rank++) {
        snprintf(text, sizeof(text),
                 PROF_HDR "comm 0x00ab rank %d nranks 2 nnodes 2\n" RAIL_PROF_COLUMNS "\n"
                          "1,AllReduce,Ring,LL,4,1048576,%s\n"
                          "%s"
                          "3,AllReduce,Ring,LL,4,1048576,%s\n"
                          "5,AllReduce,Ring,LL,4,1048576,%s\n"
                          "1,AllGather,PAT,Simple,2,4096,7.5\n",
                 rank, rank ? "110.0" : "100.0", rank ? "" : "2,AllReduce,Ring,LL,4,1048576,1.0\n",
                 rank ? "90.0" : "120.0", rank ? "300.0" : "95.0");
        CHECK_EQ_INT(prof(&s, text, err, sizeof(err)), 0);
    }
    CHECK_EQ_INT(s.nruns, 1);
    CHECK_EQ_INT((long)s.n, 9);
    merge(&s, &cal, &js);
    /* instances: #1 max(100,110) = 110, #3 max(120,90) = 120, #5 300: median 120. #2 left out. */
    CHECK_EQ_INT(js.incomplete, 1);
    CHECK_EQ_INT(js.instances, 4);
    CHECK_EQ_INT(cal.n, 2);
    if (cal.n == 2) {
        CHECK_EQ_INT(cal.rows[0].coll, ncclFuncAllGather);
        CHECK_EQ_INT(cal.rows[0].algo, NCCL_ALGO_PAT);
        CHECK_NEAR(cal.rows[0].time_us, 7.5, 1e-6);
        CHECK_EQ_INT(cal.rows[1].coll, ncclFuncAllReduce);
        CHECK_NEAR(cal.rows[1].time_us, 120.0, 1e-6);
        CHECK_EQ_INT(cal.rows[1].nranks, 2);
        CHECK_EQ_INT(cal.rows[1].origin, RAIL_CALIB_ORIGIN_JOB);
    }
    rail_calib_free(&cal);
    rail_job_free(&s);

    /* Errors: FILE:LINE: reason. */
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"nccl-rail-profile 2\n", "r.prof:1: wrong header"},
        {"", "r.prof: empty"},
        {PROF_HDR, "r.prof: no 'comm' line"},
        {PROF_HDR "1,AllReduce,Ring,LL,4,1024,1.0\n", "r.prof:3: a row before the 'comm' line"},
        {PROF_HDR "comm 0x1 rank 2 nranks 2 nnodes 1\n", "r.prof:3: rank, nranks or nnodes"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 3\n", "r.prof:3: rank, nranks or nnodes"},
        {PROF_HDR "comm 12 rank 0 nranks 2 nnodes 1\n", "r.prof:3: communicator id"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\ncomm 0x1 rank 1 nranks 2 nnodes 1\n",
         "r.prof:4: a second 'comm' line"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllReduce,Ring,LL,4,1024\n",
         "r.prof:4: 6 fields, expected 7"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllReduce,Star,LL,4,1024,1.0\n",
         "r.prof:4: unknown algorithm 'Star'"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllToAll,Ring,LL,4,1024,1.0\n",
         "r.prof:4: unknown collective"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllReduce,Ring,LL,65,1024,1.0\n",
         "r.prof:4: channels"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllReduce,Ring,LL,4,0,1.0\n",
         "r.prof:4: bytes"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n1,AllReduce,Ring,LL,4,1024,1e300\n",
         "r.prof:4: gpu_us"},
        {PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n-1,AllReduce,Ring,LL,4,1024,1.0\n",
         "r.prof:4: seq"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rail_job_set b = {0};
        int rc = prof(&b, bad[i].text, err, sizeof(err));
        CHECK_MSG(rc < 0 && strstr(err, bad[i].want), "case %zu: rc %d, '%s'", i, rc, err);
        rail_job_free(&b);
    }
    /* A line of 5000 characters, a NUL byte. */
    char *big = malloc(6000);
    memset(big, 'x', 5999);
    big[5999] = '\0';
    memcpy(big, PROF_HDR, strlen(PROF_HDR));
    CHECK(prof(&s, big, err, sizeof(err)) < 0 && strstr(err, "r.prof:3: line longer"));
    free(big);
    CHECK(rail_calib_prof_parse(PROF_HDR "comm\0", strlen(PROF_HDR) + 5, "r.prof", &s, err,
                                sizeof(err)) < 0 &&
          strstr(err, "NUL"));
    rail_job_free(&s);
}

#define PROM_LABELS(node, gpu, coll, size, pair)                                                   \
    "{version=\"v6.1\",slurm_job_id=\"77\",node=\"" node "\",gpu=\"" gpu "\",comm_name=\"DP "      \
    "Group 0\",n_nodes=\"2\",nranks=\"4\",collective=\"" coll "\",message_size=\"" size            \
    "\",algo_proto=\"" pair "\"}"

static void test_prom(void)
{
    struct rail_job_set s = {0};
    struct rail_calibration cal;
    struct rail_job_summary js;
    char err[512];
    const char *g0 =
        "# HELP nccl_collective_exec_time_microseconds Execution time\n"
        "# TYPE nccl_collective_exec_time_microseconds gauge\n"
        "nccl_bus_bandwidth_gbs" PROM_LABELS(
            "n0", "GPU0", "AllReduce", "4-5MB",
            "RING_LL128") " 1\n"
                          "nccl_collective_exec_time_microseconds" PROM_LABELS(
                              "n0", "GPU0", "AllReduce", "4-5MB",
                              "RING_LL128") " 250.5\n"
                                            "nccl_collective_exec_time_microseconds" PROM_LABELS(
                                                "n0", "GPU0", "AllGather", "64-65KB",
                                                "NVLS_TREE_SIMPLE") " 1.5e+01\n"
                                                                    "nccl_collective_exec_time_"
                                                                    "microseconds" PROM_LABELS(
                                                                        "n0", "GPU0", "AllReduce",
                                                                        "8-9KB",
                                                                        "unknown_unknown") " 9\n"
                                                                                           "nccl_"
                                                                                           "collect"
                                                                                           "ive_"
                                                                                           "exec_"
                                                                                           "time_"
                                                                                           "microse"
                                                                                           "cond"
                                                                                           "s" PROM_LABELS(
                                                                                               "n0",
                                                                                               "GPU"
                                                                                               "0",
                                                                                               "All"
                                                                                               "Gat"
                                                                                               "her"
                                                                                               "V",
                                                                                               "8-"
                                                                                               "9K"
                                                                                               "B",
                                                                                               "RIN"
                                                                                               "G_"
                                                                                               "SIM"
                                                                                               "PL"
                                                                                               "E") " 9\n"
                                                                                                    "nccl_p2p_exec_time_microseconds{p2p_operation=\"Send\",message_size=\"1-2MB\"} 3\n";
    const char *g1 = "nccl_collective_exec_time_microseconds" PROM_LABELS(
        "n1", "GPU0", "AllReduce", "4-5MB", "RING_LL128") " 260 1700000000000\n";
    CHECK(rail_calib_prom_detect(g0, strlen(g0)));
    CHECK(!rail_calib_prom_detect(PROF_HDR, strlen(PROF_HDR)));
    CHECK_EQ_INT(prom(&s, g0, err, sizeof(err)), 0);
    CHECK_EQ_INT(prom(&s, g1, err, sizeof(err)), 0);
    CHECK_EQ_INT(s.skips.no_pair, 1);
    CHECK_EQ_INT(s.skips.other, 1);
    merge(&s, &cal, &js);
    CHECK_EQ_INT(cal.n, 2);
    if (cal.n == 2) {
        /* AllGather: Inspector's size is per rank: 64 KiB x 4 ranks. */
        CHECK_EQ_INT(cal.rows[0].coll, ncclFuncAllGather);
        CHECK_EQ_INT(cal.rows[0].algo, NCCL_ALGO_NVLS_TREE);
        CHECK_EQ_INT(cal.rows[0].bytes, 65536 * 4);
        CHECK_NEAR(cal.rows[0].time_us, 15.0, 1e-6);
        CHECK_EQ_INT(cal.rows[1].bytes, 4 << 20);
        CHECK_EQ_INT(cal.rows[1].proto, NCCL_PROTO_LL128);
        CHECK_NEAR(cal.rows[1].time_us, 260.0, 1e-4); /* the slower node's mean */
        CHECK_EQ_INT(cal.rows[1].nnodes, 2);
    }
    rail_calib_free(&cal);
    rail_job_free(&s);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"nccl_x{a=\"1\n", "g.prom:1: unterminated label value"},
        {"nccl_x{a=\"1\"\n", "g.prom:1: expected ',' or '}' after a label"},
        {"nccl_x{a=1} 2\n", "g.prom:1: a label value without quotes"},
        {"nccl_x{a=\"\\q\"} 2\n", "g.prom:1: bad escape"},
        {"nccl_x{a=\"1\",a=\"2\"} 2\n", "g.prom:1: label 'a' twice"},
        {"nccl_x{a=\"1\"}\n", "g.prom:1: no value"},
        {"nccl_x{a=\"1\"} 2 3 4\n", "g.prom:1: trailing characters"},
        {"# only comments\n", "g.prom: no Prometheus sample"},
        {"nccl_collective_exec_time_microseconds{collective=\"AllReduce\"} 2\n",
         "g.prom:1: no 'message_size' label"},
        {"nccl_collective_exec_time_microseconds" PROM_LABELS("n", "g", "AllReduce", "4-6MB",
                                                              "RING_LL") " 2\n",
         "g.prom:1: message_size '4-6MB'"},
        {"nccl_collective_exec_time_microseconds" PROM_LABELS("n", "g", "AllReduce", "2048-2049KB",
                                                              "RING_LL") " 2\n",
         "g.prom:1: message_size"},
        {"nccl_collective_exec_time_microseconds" PROM_LABELS("n", "g", "AllReduce", "4-5MB",
                                                              "RING_LL") " -2\n",
         "g.prom:1: value"},
        {"nccl_x 1\n\nnccl_collective_exec_time_microseconds{n_nodes=\"3\",nranks=\"2\","
         "collective=\"AllReduce\",message_size=\"1-2B\",algo_proto=\"RING_LL\"} 2\n",
         "g.prom:3: n_nodes/nranks"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rail_job_set b = {0};
        int rc = prom(&b, bad[i].text, err, sizeof(err));
        CHECK_MSG(rc < 0 && strstr(err, bad[i].want), "case %zu: rc %d, '%s'", i, rc, err);
        rail_job_free(&b);
    }
    /* A 0 time and a "0B" bucket are skipped, not errors. */
    CHECK_EQ_INT(prom(&s,
                      "nccl_collective_exec_time_microseconds" PROM_LABELS(
                          "n", "g", "AllReduce", "0B",
                          "RING_LL") " 2\n"
                                     "nccl_collective_exec_time_microseconds" PROM_LABELS(
                                         "n", "g", "AllReduce", "1-2KB", "RING_LL") " 0\n",
                      err, sizeof(err)),
                 0);
    CHECK_EQ_INT(s.skips.no_size, 1);
    CHECK_EQ_INT(s.skips.no_time, 1);
    rail_job_free(&s);
}

#define JREC(rank, sn, coll, bytes, us, src)                                                       \
    "{\"header\":{\"id\":\"0x7f8c\",\"rank\":" #rank ",\"n_ranks\":2,\"nnodes\":1},"               \
    "\"metadata\":{\"inspector_output_format_version\":\"v4.0\"},\"coll_perf\":{\"coll\":\"" coll  \
    "\",\"coll_sn\":" #sn ",\"coll_msg_size_bytes\":" #bytes ",\"coll_exec_time_us\":" #us         \
    ",\"coll_timing_source\":\"" src "\",\"coll_algobw_gbs\":1.5,\"coll_busbw_gbs\":\"nan\"}}\n"

static void test_inspector_json(void)
{
    struct rail_job_set s = {0};
    struct rail_calibration cal;
    struct rail_job_summary js;
    char err[512];
    const char *r0 = JREC(0, 1, "ReduceScatter", 1024, 40, "kernel_gpu")
        JREC(0, 2, "ReduceScatter", 1024, 44, "kernel_gpu")
            JREC(0, 3, "ReduceScatter", 1024, 41,
                 "kernel_cpu") "{\"header\":{\"id\":\"0x7f8c\",\"rank\":0,\"n_ranks\":2,\"nnodes\":"
                               "1},\"p2p_perf\":{}}\n";
    const char *r1 = JREC(1, 1, "ReduceScatter", 1024, 42, "kernel_gpu")
        JREC(1, 2, "ReduceScatter", 1024, 43, "kernel_gpu")
            JREC(1, 3, "ReduceScatter", 1024, 45, "kernel_gpu");

    CHECK(rail_calib_inspector_detect(r0, strlen(r0)));
    /* No pair in Inspector's JSON: an error that says what to do. */
    CHECK(json(&s, r0, -1, -1, err, sizeof(err)) < 0 &&
          strstr(err, "h-pid1.log:1: NCCL Inspector's JSON records no algorithm or protocol"));
    rail_job_free(&s);
    CHECK_EQ_INT(json(&s, r0, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, err, sizeof(err)), 0);
    CHECK_EQ_INT(json(&s, r1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, err, sizeof(err)), 0);
    CHECK_EQ_INT(s.skips.no_time, 1); /* CPU-timed */
    CHECK_EQ_INT(s.skips.other, 1);   /* p2p */
    merge(&s, &cal, &js);
    /* #1: 42, #2: 44; #3 only on rank 1 (rank 0's was CPU-timed): left out. Median 43. */
    CHECK_EQ_INT(js.incomplete, 1);
    CHECK_EQ_INT(cal.n, 1);
    if (cal.n == 1) {
        CHECK_EQ_INT(cal.rows[0].bytes, 2048); /* per rank x 2 ranks */
        CHECK_NEAR(cal.rows[0].time_us, 43.0, 1e-6);
        CHECK_EQ_INT(cal.rows[0].algo, NCCL_ALGO_RING);
    }
    rail_calib_free(&cal);
    rail_job_free(&s);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"header\":{}", "h-pid1.log:1: JSON: truncated object"},
        {"\n\n{\"a\":1}", "h-pid1.log:3: not an NCCL Inspector record"},
        {"{\"coll_perf\":{}}", "h-pid1.log:1: no 'header' object"},
        {JREC(0, 1, "AllReduce", 1024, 40, "kernel_gpu") "\n{\"header\":{\"id\":\"x\",\"rank\":"
                                                         "5,\"n_ranks\":2,\"nnodes\":1},"
                                                         "\"coll_perf\":{}}",
         "h-pid1.log:3: 'rank' out of range"},
        {"{\"header\":{\"id\":\"x\",\"rank\":0,\"n_ranks\":2,\"nnodes\":1},\"coll_perf\":{"
         "\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":-4,"
         "\"coll_exec_time_us\":3}}",
         "h-pid1.log:1: 'coll_msg_size_bytes' out of range"},
        {"[1,2]", "h-pid1.log:1: not a JSON object"},
        {"{} x", "h-pid1.log:1: not an NCCL Inspector record"},
        {"   ", "h-pid1.log: no JSON object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rail_job_set b = {0};
        int rc = json(&b, bad[i].text, NCCL_ALGO_RING, NCCL_PROTO_LL, err, sizeof(err));
        CHECK_MSG(rc < 0 && strstr(err, bad[i].want), "case %zu: rc %d, '%s'", i, rc, err);
        rail_job_free(&b);
    }
}

/* Runs: the faster run of a point wins; uneven ranks per node are left out. */
static void test_runs(void)
{
    struct rail_job_set s = {0};
    struct rail_calibration cal;
    struct rail_job_summary js;
    int a = rail_job_run(&s, 1, 8, 2, RAIL_JOB_SRC_PROFILER, NULL);
    int b = rail_job_run(&s, 2, 8, 2, RAIL_JOB_SRC_PROFILER, NULL);
    int c = rail_job_run(&s, 3, 6, 4, RAIL_JOB_SRC_PROFILER, NULL);
    int other = -1;
    CHECK(a == 0 && b == 1 && c == 2);
    CHECK_EQ_INT(rail_job_run(&s, 1, 8, 2, RAIL_JOB_SRC_PROFILER, NULL), a);
    /* one communicator's files disagree: refused; Prometheus names may be shared: a new run */
    CHECK_EQ_INT(rail_job_run(&s, 1, 8, 4, RAIL_JOB_SRC_PROFILER, &other), -EEXIST);
    CHECK_EQ_INT(other, a);
    CHECK_EQ_INT(rail_job_run(&s, 1, 8, 4, RAIL_JOB_SRC_INSPECTOR_PROM, NULL), 3);
    CHECK_EQ_INT(rail_job_run(&s, 1, 8, 2, RAIL_JOB_SRC_INSPECTOR_PROM, NULL), 4);
    CHECK_EQ_INT(rail_job_run(&s, 1, 8, 4, RAIL_JOB_SRC_INSPECTOR_PROM, NULL), 3);
    struct rail_job_rec r = {.seq = 1, .bytes = 4096, .coll = 4, .algo = 1, .proto = 2};
    r.run = (uint32_t)a, r.time_us = 50.0f;
    rail_job_add(&s, &r);
    r.run = (uint32_t)b, r.time_us = 30.0f;
    rail_job_add(&s, &r);
    r.run = (uint32_t)c, r.time_us = 10.0f;
    rail_job_add(&s, &r);
    merge(&s, &cal, &js);
    CHECK_EQ_INT(cal.n, 1);
    if (cal.n == 1)
        CHECK_NEAR(cal.rows[0].time_us, 30.0, 1e-6);
    CHECK_EQ_INT(js.uneven, 1);
    CHECK_EQ_INT(js.runs, 2);
    CHECK_EQ_INT(js.points, 1);
    rail_calib_free(&cal);
    rail_job_free(&s);
    /* A profiler file with no row: nothing to merge (fuzz_calib_prof: qsort of NULL). */
    struct rail_calib_row *none = (void *)1;
    int nn = -1;
    CHECK_EQ_INT(prof(&s, PROF_HDR "comm 0x1 rank 0 nranks 2 nnodes 1\n", NULL, 0), 0);
    CHECK_EQ_INT(rail_job_merge(&s, &none, &nn, &js), 0);
    CHECK_EQ_INT(nn, 0);
    free(none);
    rail_job_free(&s);
    /* Many runs: the index grows and finds each again. */
    for (int i = 0; i < 5000; i++)
        CHECK_EQ_INT(rail_job_run(&s, (uint64_t)i * 7919, 8, 1, 0, NULL), i);
    int found = 0;
    for (int i = 0; i < 5000; i++)
        found += rail_job_run(&s, (uint64_t)i * 7919, 8, 1, 0, NULL) == i;
    CHECK_EQ_INT(found, 5000);
    rail_job_free(&s);
}

/* Issue 29 item 5: a job that measured more distinct sizes of one series than a calibration
 * holds (600 > RAIL_CALIB_MAX_POINTS: inference with variable token counts) still gives a
 * calibration the tuner reads; the sizes are merged into log-spaced buckets whose point is the
 * mean weighted by the collectives measured, so a time linear in the size stays on its line. */
static void test_many_sizes(void)
{
    struct rail_job_set s = {0};
    struct rail_calibration cal, back;
    struct rail_job_summary js;
    char err[512], *text = NULL;
    size_t len = 0;
    int run = rail_job_run(&s, 42, 8, 1, RAIL_JOB_SRC_PROFILER, NULL);
    CHECK_EQ_INT(run, 0);
    for (int i = 0; i < 600; i++) {
        uint64_t bytes = 1000 + (uint64_t)i * 997;
        for (int rep = 0; rep < 1 + i % 3; rep++) {
            struct rail_job_rec r = {.run = (uint32_t)run,
                                     .seq = (uint64_t)(i * 4 + rep),
                                     .bytes = bytes,
                                     .time_us = (float)(5.0 + (double)bytes / 1e4),
                                     .coll = ncclFuncAllReduce,
                                     .algo = NCCL_ALGO_RING,
                                     .proto = NCCL_PROTO_SIMPLE};
            CHECK_EQ_INT(rail_job_add(&s, &r), 0);
        }
    }
    merge(&s, &cal, &js);
    CHECK_MSG(cal.n > 16 && cal.n <= RAIL_CALIB_MAX_POINTS, "%d rows", cal.n);
    for (int i = 0; i < cal.n; i++)
        CHECK_MSG(fabs(cal.rows[i].time_us - (5.0 + (double)cal.rows[i].bytes / 1e4)) < 0.01,
                  "row %d: %llu bytes, %g us", i, (unsigned long long)cal.rows[i].bytes,
                  cal.rows[i].time_us);
    FILE *m = open_memstream(&text, &len);
    CHECK_EQ_INT(rail_calib_write(&cal, "many sizes", m), 0);
    fclose(m);
    int rc = rail_calib_parse(text, len, "many.cal", &back, err, sizeof(err));
    CHECK_MSG(rc == 0 && back.n == cal.n, "rc %d, %d rows: %s", rc, back.n, err);
    if (rc == 0)
        rail_calib_free(&back);
    free(text);
    rail_calib_free(&cal);
    rail_job_free(&s);
}

/* The calibration file keeps where its rows came from. */
static void test_source_comment(void)
{
    const char *text = "nccl-rail-calibration 1\n"
                       "coll,algo,proto,nranks,nnodes,bytes,time_us\n"
                       "AllReduce,Ring,LL,8,1,1024,10\n"
                       "# source: job\n"
                       "AllReduce,Ring,LL,8,1,2048,20\n"
                       "# source: nccl-tests\n"
                       "AllReduce,Ring,LL,8,1,4096,30\n";
    struct rail_calibration c;
    char err[512], *out = NULL;
    size_t len = 0;
    CHECK_EQ_INT(rail_calib_parse(text, strlen(text), "c.cal", &c, err, sizeof(err)), 0);
    CHECK_EQ_INT(c.n, 3);
    if (c.n == 3) {
        CHECK_EQ_INT(c.rows[0].origin, RAIL_CALIB_ORIGIN_TESTS);
        CHECK_EQ_INT(c.rows[1].origin, RAIL_CALIB_ORIGIN_JOB);
        CHECK_EQ_INT(c.rows[2].origin, RAIL_CALIB_ORIGIN_TESTS);
    }
    FILE *m = open_memstream(&out, &len);
    CHECK_EQ_INT(rail_calib_write(&c, "t", m), 0);
    fclose(m);
    CHECK_MSG(strstr(out, "1024,10\n# source: job\nAllReduce,Ring,LL,8,1,2048,20\n# source: "
                          "nccl-tests\n"),
              "%s", out);
    /* A job row faster than the nccl-tests row of the same point replaces it, origin included. */
    struct rail_calib_row job = c.rows[0];
    job.time_us = 5.0;
    job.origin = RAIL_CALIB_ORIGIN_JOB;
    CHECK_EQ_INT(rail_calib_add_rows(&c, &job, 1), 0);
    CHECK_EQ_INT(c.n, 3);
    CHECK(c.n == 3 && c.rows[0].origin == RAIL_CALIB_ORIGIN_JOB && c.rows[0].time_us == 5.0);
    free(out);
    rail_calib_free(&c);
    const char *typo = "nccl-rail-calibration 1\n# source: jobs\nAllReduce,Ring,LL,8,1,1024,10\n";
    CHECK(rail_calib_parse(typo, strlen(typo), "c.cal", &c, err, sizeof(err)) < 0 &&
          strstr(err, "c.cal:2: unknown source 'jobs'"));
}

int main(void)
{
    test_prof();
    test_prom();
    test_inspector_json();
    test_runs();
    test_many_sizes();
    test_source_comment();
    return check_report("test_calib_job");
}
