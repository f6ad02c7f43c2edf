/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-tests log parser (calib_log.h) and the bounded file read under it (safe_file.h):
 * every training log parses to its shape and pair; every malformed input gives "name:line:
 * reason"; a FIFO, a directory and a 1 GB sparse file are refused before anything is read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "safe_file.h"
#include "measure/calib_log.h"
#include "check.h"
#include "model/cost_model.h"
#include "fuzz.h"

#define DATA RAIL_FIXTURES "/tuner-data/nccl-tests"

static char g_err[1024];
static struct rail_calib_run g_run;

static const char k_hdr[] =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  100 on hostA device  0 [0x18] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid  101 on hostA device  1 [0x28] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid  102 on hostB device  0 [0x18] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid  103 on hostB device  1 [0x28] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                       out-of-place                       "
    "in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";
static const char k_rows[] =
    "           8             2     float     sum      -1    20.50    0.00    0.00      0    "
    "20.10    0.00    0.00      0\n"
    "          16             4     float     sum      -1    21.00    0.00    0.00      0    "
    "20.90    0.00    0.00      0\n"
    "          32             8     float     sum      -1    22.25    0.00    0.00      0    "
    "22.00    0.00    0.00      0\n";

static int parse(const char *text, const char *name, const struct rail_calib_hint *hint)
{
    return rail_calib_log_parse(text, strlen(text), name, hint, &g_run, g_err, sizeof(g_err));
}

static char *join(const char *a, const char *b, const char *c)
{
    static char buf[16384];
    snprintf(buf, sizeof(buf), "%s%s%s", a, b, c ? c : "");
    return buf;
}

#define CHECK_ERR(rc, needle)                                                                      \
    do {                                                                                           \
        int rc_ = (rc);                                                                            \
        CHECK_MSG(rc_ == -EINVAL && strstr(g_err, (needle)) != NULL,                               \
                  "rc %d, err '%s', expected '%s'", rc_, g_err, (needle));                         \
    } while (0)

/* Every training log: the pair from its file name, ranks = Rank lines, nodes = distinct hosts. */
static void test_fixtures(void)
{
    DIR *top = opendir(DATA);
    struct dirent *s;
    int files = 0;

    CHECK(top != NULL);
    while (top && (s = readdir(top)) != NULL) {
        char dir[512];
        DIR *d;
        struct dirent *e;
        int gpn = 0, nodes = 0;
        if (s->d_name[0] == '.')
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", DATA, s->d_name);
        /* p5_8x1_efa: 8 nodes x 1 GPU; b200_16x8_ib: 16 x 8 */
        CHECK(sscanf(strchr(s->d_name, '_') + 1, "%dx%d", &nodes, &gpn) == 2);
        d = opendir(dir);
        while (d && (e = readdir(d)) != NULL) {
            char path[1024], *buf, algo[32], proto[32], *dot;
            size_t len;
            if (!strstr(e->d_name, ".log"))
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            CHECK_EQ_INT(rail_file_read_all(path, 64u << 20, 0, &buf, &len, g_err, sizeof(g_err)),
                         0);
            CHECK_MSG(rail_calib_log_parse(buf, len, path, NULL, &g_run, g_err, sizeof(g_err)) == 0,
                      "%s", g_err);
            free(buf);
            dot = strchr(e->d_name, '.');
            CHECK(sscanf(dot + 1, "%31[^.].%31[^.]", algo, proto) == 2);
            CHECK_EQ_STR(rail_algo_name(g_run.algo), algo);
            CHECK_EQ_STR(rail_proto_name(g_run.proto), proto);
            CHECK_EQ_INT(g_run.coll,
                         rail_calib_coll_from_name(e->d_name, (size_t)(dot - e->d_name)));
            CHECK_EQ_INT(g_run.nnodes, nodes);
            CHECK_EQ_INT(g_run.nranks, nodes * gpn);
            CHECK(g_run.npoints >= 3);
            for (int i = 1; i < g_run.npoints; i++)
                CHECK(g_run.pts[i].bytes > g_run.pts[i - 1].bytes);
            files++;
        }
        if (d)
            closedir(d);
    }
    if (top)
        closedir(top);
    CHECK_EQ_INT(files, 82);
}

static void test_one_fixture_values(void)
{
    char *buf;
    size_t len;
    CHECK_EQ_INT(rail_file_read_all(DATA "/p5_8x1_efa/all_gather.PAT.Simple.log", 1u << 20, 0, &buf,
                                    &len, g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT(rail_calib_log_parse(buf, len, "all_gather.PAT.Simple.log", NULL, &g_run, g_err,
                                      sizeof(g_err)),
                 0);
    free(buf);
    CHECK_EQ_INT(g_run.coll, ncclFuncAllGather);
    CHECK_EQ_INT(g_run.algo, NCCL_ALGO_PAT);
    CHECK_EQ_INT(g_run.proto, NCCL_PROTO_SIMPLE);
    CHECK_EQ_INT(g_run.npoints, 28);
    CHECK_EQ_INT(g_run.pts[0].bytes, 128);
    CHECK_NEAR(g_run.pts[0].time_us, 1721.2, 1e-9);
    CHECK_EQ_INT(g_run.pts[27].bytes, 17179869184ull);
    CHECK_NEAR(g_run.pts[27].time_us, 401816.6, 1e-6);
}

static void test_sources_of_pair_and_collective(void)
{
    struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_LL128};
    struct rail_calib_hint coll = {ncclFuncBroadcast, -1, -1};

    /* No header lines: the pair from --algo/--proto, the collective from the file name. */
    CHECK_EQ_INT(parse(join(k_hdr, k_rows, NULL), "logs/all_reduce_perf.out", &h), 0);
    CHECK_EQ_INT(g_run.coll, ncclFuncAllReduce);
    CHECK_EQ_INT(g_run.algo, NCCL_ALGO_RING);
    CHECK_EQ_INT(g_run.proto, NCCL_PROTO_LL128);
    CHECK_EQ_INT(g_run.nranks, 4);
    CHECK_EQ_INT(g_run.nnodes, 2);
    CHECK_EQ_INT(g_run.npoints, 3);
    CHECK_NEAR(g_run.pts[2].time_us, 22.25, 1e-12); /* out-of-place, not in-place (22.00) */
    /* Nothing says the pair. */
    CHECK_ERR(parse(join(k_hdr, k_rows, NULL), "all_reduce.log", NULL), "forced algorithm");
    /* Header lines, the collective from the "Collective test starting" line over the name. */
    CHECK_EQ_INT(parse(join("# NCCL_ALGO=Tree\n# NCCL_PROTO=LL\n# Collective test starting: "
                            "reduce_scatter_perf\n",
                            k_hdr, k_rows),
                       "all_reduce.log", NULL),
                 0);
    CHECK_EQ_INT(g_run.coll, ncclFuncReduceScatter);
    CHECK_EQ_INT(g_run.algo, NCCL_ALGO_TREE);
    CHECK_EQ_INT(g_run.proto, NCCL_PROTO_LL);
    /* NCCL's own INFO line about the environment. */
    CHECK_EQ_INT(parse(join("host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to NVLSTree\n"
                            "host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n",
                            k_hdr, k_rows),
                       "x.log", &coll),
                 0);
    CHECK_EQ_INT(g_run.coll, ncclFuncBroadcast); /* --coll: neither the name nor a line says */
    CHECK_EQ_INT(g_run.algo, NCCL_ALGO_NVLS_TREE);
    /* Header and command line disagree. */
    CHECK_ERR(
        parse(join("# NCCL_ALGO=Tree\n# NCCL_PROTO=LL\n", k_hdr, k_rows), "all_reduce.log", &h),
        "--algo Ring");
    /* A list is not one forced algorithm. */
    CHECK_ERR(parse(join("# NCCL_ALGO=Ring,Tree\n# NCCL_PROTO=LL\n", k_hdr, k_rows),
                    "all_reduce.log", NULL),
              "all_reduce.log:1: NCCL_ALGO 'Ring,Tree'");
    /* No collective anywhere. */
    CHECK_ERR(parse(join(k_hdr, k_rows, NULL), "x.log", &h), "cannot tell the collective");
}

static void test_partial_and_repeated(void)
{
    struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_LL};
    char text[16384];
    /* A partial sweep (one row, no closing lines) is normal. */
    snprintf(text, sizeof(text), "%s%.*s", k_hdr, (int)(strchr(k_rows, '\n') - k_rows + 1), k_rows);
    CHECK_EQ_INT(parse(text, "all_gather.log", &h), 0);
    CHECK_EQ_INT(g_run.npoints, 1);
    /* The same run twice in one file: accepted, the faster time of a size kept. */
    snprintf(text, sizeof(text), "%s%s%s%s", k_hdr, k_rows, k_hdr,
             "           8             2     float     sum      -1    19.00    0.00    0.00      "
             "0    20.10    0.00    0.00      0\n");
    CHECK_EQ_INT(parse(text, "all_gather.log", &h), 0);
    CHECK_EQ_INT(g_run.npoints, 3);
    CHECK_NEAR(g_run.pts[0].time_us, 19.0, 1e-12);
}

static void test_malformed(void)
{
    struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_LL};
    char text[16384], other[4096];
    const char *p;

    /* Truncated table: the last row cut in the middle. */
    snprintf(text, sizeof(text), "%s%.*s", k_hdr, (int)(strlen(k_rows) - 40), k_rows);
    CHECK_ERR(parse(text, "t.log", &h), "t.log:14: truncated table row");
    /* A row before the column header: not nccl-tests output (wrong header). */
    snprintf(text, sizeof(text), "#  Rank  0 Group  0 Pid  1 on h device 0\n%s", k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), "all_gather.log:2: table row before the result");
    /* A header without a time column. */
    CHECK_ERR(parse("#  size count type\n", "all_gather.log", &h), ":1: result table header");
    /* No table at all, no Rank lines. */
    CHECK_ERR(parse(k_hdr, "all_gather.log", &h), "no measurements");
    CHECK_ERR(parse(strstr(k_hdr, "#       size"), "all_gather.log", &h), "no '#  Rank");
    /* Mixed shapes: a second run on 8 ranks after a first on 4. */
    p = "#  Rank  0 Group  0 Pid  1 on hostA device 0 [0x18] X\n"
        "#  Rank  1 Group  0 Pid  1 on hostB device 0 [0x18] X\n";
    snprintf(other, sizeof(other), "%s%s", p, strstr(k_hdr, "#\n#   "));
    snprintf(text, sizeof(text), "%s%s%s%s", k_hdr, k_rows, other, k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), "mixed shapes in one file: 4 ranks on 2 nodes, "
                                                 "then 2 ranks on 2 nodes");
    /* Mixed pairs: the algorithm changes half way. */
    snprintf(text, sizeof(text), "# NCCL_ALGO=Ring\n%s%s# NCCL_ALGO=Tree\n%s", k_hdr, k_rows,
             k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), "mixed shapes in one file: NCCL_ALGO");
    /* Uneven ranks per node. */
    snprintf(text, sizeof(text),
             "#  Rank  0 Group  0 Pid  1 on a device 0\n#  Rank  1 Group  0 Pid  1 on a device 1\n"
             "#  Rank  2 Group  0 Pid  1 on b device 0\n%s%s",
             strstr(k_hdr, "#       size"), k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), "uneven ranks per node");
    /* Rank numbers with a hole. */
    snprintf(text, sizeof(text),
             "#  Rank  0 Group  0 Pid  1 on a device 0\n#  Rank  2 Group  0 Pid  1 on a device 1\n"
             "%s%s",
             strstr(k_hdr, "#       size"), k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), "not ranks 0..1");
    /* Wrong results, a failure, a bad time, a NUL byte, an overlong line. */
    snprintf(text, sizeof(text), "%s%s", k_hdr,
             "8 2 float sum -1 20.5 0.00 0.00 3 20.1 0.00 0.00 0\n");
    CHECK_ERR(parse(text, "all_gather.log", &h), "all_gather.log:12: the run reported 3 wrong");
    snprintf(text, sizeof(text), "%s%s%s", k_hdr, k_rows,
             "host: Test NCCL failure common.cu:100 'unhandled system error'\n");
    CHECK_ERR(parse(text, "all_gather.log", &h), ":15: nccl-tests reported a failure");
    snprintf(text, sizeof(text), "%s%s", k_hdr,
             "8 2 float sum -1 -4 0.00 0.00 0 20.1 0.00 0.00 0\n");
    CHECK_ERR(parse(text, "all_gather.log", &h), "time '-4' is not a positive");
    memcpy(text, "# x\0yz\n", 7);
    CHECK_ERR(rail_calib_log_parse(text, 7, "all_gather.log", &h, &g_run, g_err, sizeof(g_err)),
              ":1: NUL byte");
    memset(text, 'a', sizeof(text) - 1);
    CHECK_ERR(rail_calib_log_parse(text, sizeof(text) - 1, "all_gather.log", &h, &g_run, g_err,
                                   sizeof(g_err)),
              ":1: line longer than");
    CHECK_ERR(parse("", "all_gather.log", &h), "no '#  Rank");
    CHECK_ERR(parse(join(k_hdr, k_rows, NULL), "alltoall.log", &(struct rail_calib_hint){-1, 1, 1}),
              "cannot tell the collective");
}

/* Issue 22: sizes > 0, times plain decimals in [1e-3, 1e9] us; NCCL INFO lines of hosts whose
 * names start with a digit are log lines, not table rows. */
static void test_hostile_numbers(void)
{
    struct rail_calib_hint h = {-1, NCCL_ALGO_RING, NCCL_PROTO_LL};
    static const struct {
        const char *row, *err;
    } bad[] = {
        {"0 0 float sum -1 20.5 0.00 0.00 0 20.1 0.00 0.00 0\n",
         ":12: size '0': a size of 0 bytes cannot be calibrated"},
        {"8 2 float sum -1 1e308 0.00 0.00 0 20.1 0.00 0.00 0\n",
         ":12: out-of-place time '1e308' is outside"},
        {"8 2 float sum -1 1e-300 0.00 0.00 0 20.1 0.00 0.00 0\n",
         ":12: out-of-place time '1e-300' is outside"},
        {"8 2 float sum -1 0x1.4p4 0.00 0.00 0 20.1 0.00 0.00 0\n",
         ":12: out-of-place time '0x1.4p4' is not a positive plain decimal"},
        {"8 2 float sum -1 infinity 0.00 0.00 0 20.1 0.00 0.00 0\n",
         ":12: out-of-place time 'infinity' is not"},
    };
    char text[16384];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(text, sizeof(text), "%s%s", k_hdr, bad[i].row);
        CHECK_ERR(parse(text, "all_gather.log", &h), bad[i].err);
    }
    /* NCCL's own lines from hosts named 10-0-0-1 or 4node, before and inside the table. */
    snprintf(text, sizeof(text),
             "10-0-0-1:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n%s"
             "4node:99:99 [1] NCCL INFO comm 0x5 rank 1 nRanks 4 nNodes 2 - Init COMPLETE\n%s"
             "10-0-0-1:1234:1250 [0] NCCL INFO comm 0x5 rank 0 nranks 4 - Destroy COMPLETE\n",
             k_hdr, k_rows);
    CHECK_EQ_INT(parse(text, "all_gather.log", &h), 0);
    CHECK_EQ_INT(g_run.npoints, 3);
    CHECK_EQ_INT(g_run.nranks, 4);
    /* ... and a failure reported on such a line is still a failure. */
    snprintf(text, sizeof(text), "%s%s10-0-0-1:1234:1234 [0] NCCL WARN Test failure\n", k_hdr,
             k_rows);
    CHECK_ERR(parse(text, "all_gather.log", &h), ":15: nccl-tests reported a failure");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A FIFO without a writer, a directory and a 1 GB sparse file: refused at once, nothing read. */
/* Found by fuzz_calib_log: a non-table line of more than 32 words made the failure scan read a
 * token slot that was never set. Such a line is ignored like any other program output. */
static void test_long_text_line(void)
{
    char text[4096];
    int off = snprintf(text, sizeof(text), "# NCCL_ALGO=Ring\n# NCCL_PROTO=LL\n");
    for (int i = 0; i < 40; i++)
        off += snprintf(text + off, sizeof(text) - (size_t)off, "word%d ", i);
    snprintf(text + off, sizeof(text) - (size_t)off, "\n");
    int rc = parse(text, "all_reduce.log", NULL);
    CHECK_MSG(rc == -EINVAL, "rc %d", rc); /* no table at all: an error, not a crash */
}

static void test_io_bounds(void)
{
    char dir[] = "/tmp/rail_calib_log_XXXXXX", path[256], *buf = (char *)1;
    size_t len = 7;
    double t0;
    int fd;

    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/fifo.log", dir);
    CHECK_EQ_INT(mkfifo(path, 0600), 0);
    t0 = now_s();
    CHECK_EQ_INT(rail_file_read_all(path, 1u << 20, 0, &buf, &len, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file") != NULL);
    CHECK(buf == NULL && len == 0);
    CHECK(now_s() - t0 < 5.0); /* would block forever on a blocking open */
    unlink(path);

    snprintf(path, sizeof(path), "%s/huge.log", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 1ll << 30) == 0);
    close(fd);
    t0 = now_s();
    CHECK_EQ_INT(rail_file_read_all(path, 64u << 20, 0, &buf, &len, g_err, sizeof(g_err)), -EFBIG);
    CHECK(strstr(g_err, "1073741824 bytes, larger than") != NULL);
    CHECK(now_s() - t0 < 1.0);
    unlink(path);

    CHECK_EQ_INT(rail_file_read_all(dir, 1u << 20, 0, &buf, &len, g_err, sizeof(g_err)), -EISDIR);
    snprintf(path, sizeof(path), "%s/missing", dir);
    CHECK_EQ_INT(rail_file_read_all(path, 1u << 20, 0, &buf, &len, g_err, sizeof(g_err)), -ENOENT);
    snprintf(path, sizeof(path), "%s/ok.log", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "abc", 3) == 3);
    close(fd);
    CHECK_EQ_INT(rail_file_read_all(path, 3, 0, &buf, &len, g_err, sizeof(g_err)), 0);
    CHECK(len == 3 && buf && strcmp(buf, "abc") == 0);
    free(buf);
    CHECK_EQ_INT(rail_file_read_all(path, 2, 0, &buf, &len, g_err, sizeof(g_err)), -EFBIG);
    unlink(path);
    rmdir(dir);
}

static void test_names(void)
{
    CHECK_EQ_INT(rail_calib_coll_from_name("all_reduce_perf", 15), ncclFuncAllReduce);
    CHECK_EQ_INT(rail_calib_coll_from_name("ReduceScatter", 13), ncclFuncReduceScatter);
    CHECK_EQ_INT(rail_calib_coll_from_name("reduce_perf", 11), ncclFuncReduce);
    CHECK_EQ_INT(rail_calib_coll_from_name("sendrecv_perf", 13), -1);
    CHECK_EQ_INT(rail_calib_algo_from_name("nvls_tree", 9), NCCL_ALGO_NVLS_TREE);
    CHECK_EQ_INT(rail_calib_algo_from_name("PAT", 3), NCCL_ALGO_PAT);
    CHECK_EQ_INT(rail_calib_algo_from_name("Ring,Tree", 9), -1);
    CHECK_EQ_INT(rail_calib_proto_from_name("ll128", 5), NCCL_PROTO_LL128);
    CHECK_EQ_INT(rail_calib_proto_from_name("", 0), -1);
}

/* Deterministic mutations of a real log: every result is 0 or -EINVAL with a message. */
static void test_mutations(void)
{
    char *orig, *buf;
    size_t len;
    uint32_t seed = 12345;
    int ok = 0, bad = 0;
    CHECK_EQ_INT(rail_file_read_all(DATA "/p5_8x1_efa/all_gather.Ring.LL.log", 1u << 20, 0, &orig,
                                    &len, g_err, sizeof(g_err)),
                 0);
    buf = malloc(len);
    for (int it = 0; it < 3000 && buf; it++) {
        memcpy(buf, orig, len);
        for (int k = 0; k < 1 + (int)(fuzz_step(&seed) >> 16) % 4; k++)
            buf[(fuzz_step(&seed) >> 8) % len] = (char)(fuzz_step(&seed) >> 16);
        size_t n = (fuzz_step(&seed) >> 16) % 8 == 0 ? (fuzz_step(&seed) >> 8) % len : len;
        int rc = rail_calib_log_parse(buf, n, "all_gather.log", NULL, &g_run, g_err, sizeof(g_err));
        if (rc == 0)
            ok++;
        else if (rc == -EINVAL && strncmp(g_err, "all_gather.log", 14) == 0)
            bad++;
        else
            CHECK_MSG(0, "rc %d err '%s'", rc, g_err);
    }
    CHECK_MSG(ok > 0 && bad > 0, "ok %d bad %d", ok, bad);
    free(buf);
    free(orig);
}

int main(void)
{
    test_mutations();
    test_names();
    test_fixtures();
    test_one_fixture_values();
    test_sources_of_pair_and_collective();
    test_partial_and_repeated();
    test_malformed();
    test_hostile_numbers();
    test_long_text_line();
    test_io_bounds();
    return check_report("test_calib_log");
}
