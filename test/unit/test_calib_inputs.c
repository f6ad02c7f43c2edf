/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 29 item 8, the job readers' side: a Prometheus textfile whose first metric is another
 * exporter's is still Inspector's; NaN/+Inf/-Inf samples are skipped, not fatal; a JSON key
 * written twice and a sequence number beyond any job are refused with FILE:LINE; rank files of
 * one communicator that disagree on nranks/nnodes are refused instead of becoming one-rank runs.
 * (The file-walking side, -o and links, is in test/check_calib_job_cli.sh.) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_inspector.h"
#include "measure/calib_job.h"
#include "measure/calib_prof.h"
#include "measure/calib_prom.h"
#include "check.h"
#include "model/cost_model.h"

#define LABELS                                                                                     \
    "{node=\"n0\",gpu=\"GPU0\",comm_name=\"DP\",n_nodes=\"1\",nranks=\"8\",collective="            \
    "\"AllReduce\",message_size=\"1-2MB\",algo_proto=\"RING_SIMPLE\"}"
#define METRIC "nccl_collective_exec_time_microseconds"

static void test_prom_inputs(void)
{
    struct rail_job_set s = {0};
    char err[512];
    const char *other_first = "# HELP process_cpu_seconds_total CPU\n"
                              "process_cpu_seconds_total 12.5\n"
                              "go_goroutines{instance=\"a\"} 7\n" METRIC LABELS " 55.5\n";
    CHECK(rail_calib_prom_detect(other_first, strlen(other_first)));
    CHECK_EQ_INT(
        rail_calib_prom_parse(other_first, strlen(other_first), "g.prom", &s, err, sizeof(err)), 0);
    CHECK_EQ_INT((long)s.n, 1);
    rail_job_free(&s);
    /* not Prometheus at all: an nccl-tests log is not taken for one */
    const char *log = "# nThread 1 nGpus 1\nnode1:1:1 [0] NCCL INFO x\n   1024  256 float sum\n";
    CHECK(!rail_calib_prom_detect(log, strlen(log)));
    const char *no_nccl = "process_cpu_seconds_total 12.5\n";
    CHECK(!rail_calib_prom_detect(no_nccl, strlen(no_nccl)));

    /* NaN, +Inf, -Inf: the text format's special values, skipped */
    const char *special = METRIC LABELS " NaN\n" METRIC LABELS " +Inf\n" METRIC LABELS " -Inf\n"
                                        "nccl_x 1\n" METRIC LABELS " 42\n";
    int rc = rail_calib_prom_parse(special, strlen(special), "g.prom", &s, err, sizeof(err));
    CHECK_MSG(rc == 0, "rc %d: %s", rc, err);
    CHECK_EQ_INT((long)s.n, 1);
    rail_job_free(&s);
    /* other non-numbers are still errors */
    const char *junk = METRIC LABELS " fast\n";
    CHECK(rail_calib_prom_parse(junk, strlen(junk), "g.prom", &s, err, sizeof(err)) < 0 &&
          strstr(err, "g.prom:1: value"));
    rail_job_free(&s);
}

#define JREC(rank, nranks, sn)                                                                     \
    "{\"header\":{\"id\":\"0x7f8c\",\"rank\":" #rank ",\"n_ranks\":" #nranks ",\"nnodes\":1},"     \
    "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":" #sn ",\"coll_msg_size_bytes\":1024,"      \
    "\"coll_exec_time_us\":40,\"coll_timing_source\":\"kernel_gpu\"}}\n"

static void test_json_inputs(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        /* a key twice: json-c keeps the last one silently */
        {"{\"header\":{\"id\":\"0x7f8c\",\"rank\":0,\"rank\":1,\"n_ranks\":2,\"nnodes\":1},"
         "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":1,\"coll_msg_size_bytes\":1024,"
         "\"coll_exec_time_us\":40}}",
         "h.log:1: JSON key 'rank' twice in one object"},
        {JREC(0, 2, 1) "{\n \"header\": {\"id\": \"0x7f8c\", \"rank\": 0, \"n_ranks\": 2,\n"
                       " \"nnodes\": 1},\n \"header\": {}}\n",
         "h.log:5: JSON key 'header' twice"},
        /* a sequence number beyond any job: json-c clamps 10^20 to INT64_MAX silently */
        {JREC(0, 2, 100000000000000000000), "h.log:1: 'coll_sn' out of range"},
        {JREC(0, 2, 1) JREC(0, 2, 281474976710656), "h.log:2: 'coll_sn' out of range"},
        /* one communicator's records disagree on its size */
        {JREC(0, 2, 1) JREC(1, 4, 1),
         "h.log:2: communicator '0x7f8c' has n_ranks 4 nnodes 1 here but n_ranks 2"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rail_job_set s = {0};
        struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE};
        char err[512] = "";
        int rc = rail_calib_inspector_parse(bad[i].text, strlen(bad[i].text), "h.log", &h, &s, err,
                                            sizeof(err));
        CHECK_MSG(rc < 0 && strstr(err, bad[i].want), "case %zu: rc %d '%s'", i, rc, err);
        rail_job_free(&s);
    }
    /* the largest sequence number allowed is read */
    struct rail_job_set s = {0};
    struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE};
    char err[512];
    const char *ok = JREC(0, 2, 281474976710655);
    CHECK_EQ_INT(rail_calib_inspector_parse(ok, strlen(ok), "h.log", &h, &s, err, sizeof(err)), 0);
    rail_job_free(&s);
}

#define PROF(rank, nranks, seq)                                                                    \
    "nccl-rail-profile 1\ncomm 0x00ab rank " #rank " nranks " #nranks " nnodes 2\n" #seq           \
    ",AllReduce,Ring,LL,4,1048576,100.0\n"

static void test_prof_inputs(void)
{
    struct rail_job_set s = {0};
    char err[512];
    const char *r0 = PROF(0, 2, 1), *r1 = PROF(1, 4, 1);
    /* rank files of one communicator that disagree on nranks: refused, not two one-rank runs */
    CHECK_EQ_INT(rail_calib_prof_parse(r0, strlen(r0), "r0.prof", &s, err, sizeof(err)), 0);
    int rc = rail_calib_prof_parse(r1, strlen(r1), "r1.prof", &s, err, sizeof(err));
    CHECK_MSG(rc < 0 && strstr(err, "r1.prof:2: communicator 0x00000000000000ab has nranks 4 "
                                    "nnodes 2 here but nranks 2 nnodes 2"),
              "rc %d '%s'", rc, err);
    rail_job_free(&s);
    /* a sequence number beyond any job */
    const char *big = PROF(0, 2, 18446744073709551615);
    rc = rail_calib_prof_parse(big, strlen(big), "r0.prof", &s, err, sizeof(err));
    CHECK_MSG(rc < 0 && strstr(err, "r0.prof:3: seq is not a sequence number"), "rc %d '%s'", rc,
              err);
    rail_job_free(&s);
}

int main(void)
{
    test_prom_inputs();
    test_json_inputs();
    test_prof_inputs();
    return check_report("test_calib_inputs");
}
