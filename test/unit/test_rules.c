/* SPDX-License-Identifier: Apache-2.0 */
/* Rules file: parsing of every accepted form and every error class, loading (line numbers, CRLF,
 * BOM, lenient mode, huge/binary/overlong input) and first-match-wins lookup. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "decide/rules.h"

#define FIX(name) RAIL_FIXTURES "/rules/" name

static char g_err[1024];

/* ---- helpers ------------------------------------------------------------------------------ */

static int parse(const char *line, struct rail_rule *r)
{
    g_err[0] = '\0';
    return rail_rules_parse_line(line, r, g_err, sizeof(g_err));
}

/* Expect -EINVAL from parse_line with `needle` in the message. */
#define CHECK_PARSE_ERR(line, needle)                                                              \
    do {                                                                                           \
        struct rail_rule r_;                                                                       \
        int rc_ = parse((line), &r_);                                                              \
        CHECK_MSG(rc_ == -EINVAL && strstr(g_err, (needle)) != NULL,                               \
                  "line '%s': rc %d, err '%s', expected '%s'", (line), rc_, g_err, (needle));      \
    } while (0)

static char g_tmp[64];

/* Write len bytes into a fresh temporary file; returns its path (static buffer). */
static const char *tmpfile_with(const void *data, size_t len)
{
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rail_rules_XXXXXX");
    int fd = mkstemp(g_tmp);
    if (fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    if (len && write(fd, data, len) != (ssize_t)len) {
        perror("write");
        exit(2);
    }
    close(fd);
    return g_tmp;
}

static const char *tmpfile_str(const char *s)
{
    return tmpfile_with(s, strlen(s));
}

/* Load and expect `rc`; when rc < 0, expect the message to start with "path:line: " + reason. */
static void check_load_err(const char *path, int line, const char *reason)
{
    struct rail_rules rr;
    char want[1200];
    int rc = rail_rules_load(path, false, &rr, g_err, sizeof(g_err));
    snprintf(want, sizeof(want), "%s:%d: %s", path, line, reason);
    CHECK_EQ_INT(rc, -EINVAL);
    CHECK_MSG(strncmp(g_err, want, strlen(want)) == 0, "err '%s', expected prefix '%s'", g_err,
              want);
    CHECK_EQ_INT(rr.n, 0);
    CHECK(rr.rules == NULL);
    rail_rules_free(&rr);
}

/* Captures WARNs sent through NCCL's logger. */
static int g_warns;
static char g_last_warn[1200];

static void capture_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                           const char *fmt, ...)
{
    va_list ap;
    (void)file;
    (void)line;
    if (level != NCCL_LOG_WARN)
        return;
    g_warns++;
    CHECK(flags & NCCL_TUNING);
    va_start(ap, fmt);
    vsnprintf(g_last_warn, sizeof(g_last_warn), fmt, ap);
    va_end(ap);
}

/* ---- parse_line: accepted forms ----------------------------------------------------------- */

static void test_names(void)
{
    static const struct {
        const char *text;
        int value;
    } colls[] = {{"broadcast", ncclFuncBroadcast},
                 {"Broadcast", ncclFuncBroadcast},
                 {"reduce", ncclFuncReduce},
                 {"REDUCE", ncclFuncReduce},
                 {"allgather", ncclFuncAllGather},
                 {"AllGather", ncclFuncAllGather},
                 {"reducescatter", ncclFuncReduceScatter},
                 {"ReduceScatter", ncclFuncReduceScatter},
                 {"allreduce", ncclFuncAllReduce},
                 {"AllReduce", ncclFuncAllReduce}},
      algos[] = {{"tree", NCCL_ALGO_TREE},
                 {"Tree", NCCL_ALGO_TREE},
                 {"ring", NCCL_ALGO_RING},
                 {"RING", NCCL_ALGO_RING},
                 {"collnet_direct", NCCL_ALGO_COLLNET_DIRECT},
                 {"CollNetDirect", NCCL_ALGO_COLLNET_DIRECT},
                 {"collnet_chain", NCCL_ALGO_COLLNET_CHAIN},
                 {"CollNetChain", NCCL_ALGO_COLLNET_CHAIN},
                 {"nvls", NCCL_ALGO_NVLS},
                 {"NVLS", NCCL_ALGO_NVLS},
                 {"nvls_tree", NCCL_ALGO_NVLS_TREE},
                 {"NVLSTree", NCCL_ALGO_NVLS_TREE},
                 {"NVLS_Tree", NCCL_ALGO_NVLS_TREE},
                 {"pat", NCCL_ALGO_PAT},
                 {"PAT", NCCL_ALGO_PAT}},
      protos[] = {{"ll", NCCL_PROTO_LL},         {"LL", NCCL_PROTO_LL},
                  {"ll128", NCCL_PROTO_LL128},   {"LL128", NCCL_PROTO_LL128},
                  {"simple", NCCL_PROTO_SIMPLE}, {"Simple", NCCL_PROTO_SIMPLE}};
    char line[256];
    struct rail_rule r;

    for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
        snprintf(line, sizeof(line), "%s,0,1,ring,simple,-1,-1,-1", colls[i].text);
        CHECK_EQ_INT(parse(line, &r), 1);
        CHECK_EQ_INT(r.coll, colls[i].value);
    }
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        snprintf(line, sizeof(line), "allreduce,0,1,%s,simple,-1,-1,-1", algos[i].text);
        CHECK_EQ_INT(parse(line, &r), 1);
        CHECK_EQ_INT(r.algo, algos[i].value);
    }
    for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
        snprintf(line, sizeof(line), "allreduce,0,1,ring,%s,-1,-1,-1", protos[i].text);
        CHECK_EQ_INT(parse(line, &r), 1);
        CHECK_EQ_INT(r.proto, protos[i].value);
    }
    CHECK_EQ_STR(rail_rules_coll_str(ncclFuncReduceScatter), "reducescatter");
    CHECK_EQ_STR(rail_rules_algo_str(NCCL_ALGO_NVLS_TREE), "nvls_tree");
    CHECK_EQ_STR(rail_rules_algo_str(NCCL_ALGO_COLLNET_DIRECT), "collnet_direct");
    CHECK_EQ_STR(rail_rules_proto_str(NCCL_PROTO_LL128), "ll128");
    CHECK_EQ_STR(rail_rules_algo_str(7), "?");
    CHECK_EQ_STR(rail_rules_coll_str(-1), "?");
}

static void test_fields(void)
{
    struct rail_rule r;

    /* 8 fields: numPipeOps and regBuff are wildcards. */
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1", &r), 1);
    CHECK_EQ_INT(r.coll, ncclFuncAllReduce);
    CHECK_EQ_INT(r.min_bytes, 0);
    CHECK_EQ_INT(r.max_bytes, 65536);
    CHECK_EQ_INT(r.algo, NCCL_ALGO_TREE);
    CHECK_EQ_INT(r.proto, NCCL_PROTO_SIMPLE);
    CHECK_EQ_INT(r.nchannels, 2);
    CHECK_EQ_INT(r.nnodes, 1);
    CHECK_EQ_INT(r.nranks, -1);
    CHECK_EQ_INT(r.pipe_ops, -1);
    CHECK_EQ_INT(r.reg_buff, -1);
    CHECK_EQ_INT(r.line, 0);
    /* 9 and 10 fields. */
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1,4", &r), 1);
    CHECK_EQ_INT(r.pipe_ops, 4);
    CHECK_EQ_INT(r.reg_buff, -1);
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1,4,0", &r), 1);
    CHECK_EQ_INT(r.pipe_ops, 4);
    CHECK_EQ_INT(r.reg_buff, 0);
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1,-1,1", &r), 1);
    CHECK_EQ_INT(r.reg_buff, 1);
    /* Empty optional fields are the same as omitted ones (spreadsheet exports). */
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1,,", &r), 1);
    CHECK_EQ_INT(r.pipe_ops, -1);
    CHECK_EQ_INT(r.reg_buff, -1);
    CHECK_EQ_INT(parse("allreduce,0,65536,tree,simple,2,1,-1,", &r), 1);
    CHECK_EQ_INT(r.pipe_ops, -1);
    /* Spaces and tabs around fields. */
    CHECK_EQ_INT(parse(" \tallreduce , 0 ,\t65536\t, tree , simple , 2 , 1 , -1 , 3 , 1 \t", &r),
                 1);
    CHECK_EQ_INT(r.max_bytes, 65536);
    CHECK_EQ_INT(r.pipe_ops, 3);
    CHECK_EQ_INT(r.reg_buff, 1);
    /* Largest values. */
    CHECK_EQ_INT(parse("allreduce,18446744073709551615,18446744073709551615,ring,ll,64,2147483647,"
                       "2147483647,2147483647,1",
                       &r),
                 1);
    CHECK(r.min_bytes == UINT64_MAX && r.max_bytes == UINT64_MAX);
    CHECK_EQ_INT(r.nchannels, 64);
    CHECK_EQ_INT(r.nnodes, 2147483647);
    CHECK_EQ_INT(r.pipe_ops, 2147483647);
    /* Leading zeros are decimal, not octal. */
    CHECK_EQ_INT(parse("allreduce,010,0065536,ring,ll,08,-1,-1", &r), 1);
    CHECK_EQ_INT(r.min_bytes, 10);
    CHECK_EQ_INT(r.nchannels, 8);
}

static void test_extensions(void)
{
    struct rail_rule r;

    /* * in every numeric field. */
    CHECK_EQ_INT(parse("allreduce,*,*,ring,simple,*,*,*,*,*", &r), 1);
    CHECK(r.min_bytes == 0 && r.max_bytes == UINT64_MAX);
    CHECK_EQ_INT(r.nchannels, RAIL_RULE_KEEP);
    CHECK_EQ_INT(r.nnodes, -1);
    CHECK_EQ_INT(r.nranks, -1);
    CHECK_EQ_INT(r.pipe_ops, -1);
    CHECK_EQ_INT(r.reg_buff, -1);
    /* -1 as max_bytes: no upper bound (NCCL's strtoull reads it as 2^64-1 too). */
    CHECK_EQ_INT(parse("allreduce,0,-1,ring,simple,-1,-1,-1", &r), 1);
    CHECK(r.max_bytes == UINT64_MAX);
    /* Size suffixes, KiB units, either case. */
    CHECK_EQ_INT(parse("allreduce,1k,64K,ring,simple,-1,-1,-1", &r), 1);
    CHECK_EQ_INT(r.min_bytes, 1024);
    CHECK_EQ_INT(r.max_bytes, 65536);
    CHECK_EQ_INT(parse("allreduce,1m,4G,ring,simple,-1,-1,-1", &r), 1);
    CHECK_EQ_INT(r.min_bytes, 1048576);
    CHECK_EQ_INT(r.max_bytes, 4294967296LL);
    CHECK_EQ_INT(parse("allreduce,0,17179869183G,ring,simple,-1,-1,-1", &r), 1);
    CHECK(r.max_bytes == (UINT64_MAX >> 30) << 30);
    /* Blank lines, comments (also indented) and the column header are not rules. */
    CHECK_EQ_INT(parse("", &r), 0);
    CHECK_EQ_INT(parse(" \t ", &r), 0);
    CHECK_EQ_INT(parse("# allreduce,0,1,ring,simple,-1,-1,-1", &r), 0);
    CHECK_EQ_INT(parse("   #comment, with, commas", &r), 0);
    CHECK_EQ_INT(parse("#", &r), 0);
    CHECK_EQ_INT(parse("collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,"
                       "nRanks",
                       &r),
                 0);
    CHECK_EQ_INT(parse("Collective_Type, min_bytes, max_bytes, algorithm, protocol, channels, "
                       "nnodes, nranks, numpipeops, regbuff",
                       &r),
                 0);
}

/* ---- parse_line: every error class -------------------------------------------------------- */

static void test_errors(void)
{
    char line[RAIL_RULES_MAX_LINE + 64];

    /* Unknown names: field named, value quoted, choices listed. */
    CHECK_PARSE_ERR("alreduce,0,1,ring,simple,-1,-1,-1",
                    "field 1 (collective_type): unknown collective 'alreduce'; expected broadcast");
    CHECK_PARSE_ERR("sendrecv,0,1,ring,simple,-1,-1,-1", "unknown collective 'sendrecv'");
    CHECK_PARSE_ERR("all_reduce,0,1,ring,simple,-1,-1,-1", "unknown collective 'all_reduce'");
    CHECK_PARSE_ERR("allreduce,0,1,rign,simple,-1,-1,-1",
                    "field 4 (algorithm): unknown algorithm 'rign'; expected tree, ring");
    CHECK_PARSE_ERR("allreduce,0,1,collnet,simple,-1,-1,-1", "unknown algorithm 'collnet'");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simpel,-1,-1,-1",
                    "field 5 (protocol): unknown protocol 'simpel'; expected ll, ll128 or simple");
    CHECK_PARSE_ERR("allreduce,0,1,ring,\"simple\",-1,-1,-1", "unknown protocol '\"simple\"'");
    /* Bad numbers and trailing garbage. */
    CHECK_PARSE_ERR("allreduce,abc,1,ring,simple,-1,-1,-1",
                    "field 2 (min_bytes): bad byte count 'abc'");
    CHECK_PARSE_ERR("allreduce,0,1.5,ring,simple,-1,-1,-1",
                    "field 3 (max_bytes): bad byte count '1.5'");
    CHECK_PARSE_ERR("allreduce,0x10,1,ring,simple,-1,-1,-1", "bad byte count '0x10'");
    CHECK_PARSE_ERR("allreduce,+5,10,ring,simple,-1,-1,-1", "bad byte count '+5'");
    CHECK_PARSE_ERR("allreduce,1e6,1e7,ring,simple,-1,-1,-1", "bad byte count '1e6'");
    CHECK_PARSE_ERR("allreduce,0,64 K,ring,simple,-1,-1,-1", "bad byte count '64 K'");
    CHECK_PARSE_ERR("allreduce,0,64KB,ring,simple,-1,-1,-1", "bad byte count '64KB'");
    CHECK_PARSE_ERR("allreduce,0,64T,ring,simple,-1,-1,-1", "bad byte count '64T'");
    CHECK_PARSE_ERR("allreduce,0,K,ring,simple,-1,-1,-1", "bad byte count 'K'");
    CHECK_PARSE_ERR("allreduce,0,-2,ring,simple,-1,-1,-1", "bad byte count '-2'");
    CHECK_PARSE_ERR("allreduce,-1,10,ring,simple,-1,-1,-1",
                    "field 2 (min_bytes): -1 is only allowed as max_bytes");
    CHECK_PARSE_ERR("allreduce,0,18446744073709551616,ring,simple,-1,-1,-1",
                    "field 3 (max_bytes): byte count '18446744073709551616' is larger than 2^64-1");
    CHECK_PARSE_ERR("allreduce,0,17179869184G,ring,simple,-1,-1,-1", "is larger than 2^64-1");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,2x,-1,-1", "field 6 (channels): bad number '2x'");
    CHECK_PARSE_ERR("allreduce,0,65536,tree,simple,2,1,-1 # small",
                    "field 8 (nRanks): bad number '-1 # small'");
    CHECK_PARSE_ERR("allreduce,0,65536,tree,simple,2,1,-1 # small",
                    "(a # comment must be on a line of its own)");
    CHECK_PARSE_ERR("allreduce,0,65536,tree,simple,2,1 # small", "7 fields");
    CHECK(strstr(g_err, "(a # comment must be on a line of its own)"));
    CHECK_PARSE_ERR("allreduce,0,65536,tree,simple,2,1,-1x", "field 8 (nRanks)");
    CHECK(strstr(g_err, "comment") == NULL);
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,1 2,-1", "field 7 (nNodes): bad number '1 2'");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-01", "field 9 (numPipeOps): bad number");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,99999999999", "field 8 (nRanks): "
                                                                   "'99999999999' is out of range");
    /* Out-of-range values. */
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,0,-1,-1",
                    "field 6 (channels): '0' is out of range; expected -1 (keep NCCL's) or 1..64");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,65,-1,-1", "field 6 (channels): '65' is out of");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-2,-1,-1", "field 6 (channels): bad number '-2'");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,0,-1", "field 7 (nNodes): '0' is out of range");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,0", "field 8 (nRanks): '0' is out of range");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,0",
                    "field 9 (numPipeOps): '0' is out of range");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,2",
                    "field 10 (regBuff): '2' is out of range; expected -1 (any), 0 or 1");
    CHECK_PARSE_ERR("allreduce,100,99,ring,simple,-1,-1,-1",
                    "min_bytes 100 is greater than max_bytes 99");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,4,2", "nRanks 2 is less than nNodes 4");
    /* Field count and empty fields. */
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1", "7 fields; expected 8 to 11");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,-1,-1", "12 fields; expected 8 to");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,-1,", "12 fields");
    CHECK_PARSE_ERR("garbage", "1 field; expected 8 to 11");
    /* The 11th field (the project's extension): a chunk size for tuner v6 getChunkSize. */
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,511",
                    "field 11 (chunkSize): '511' is out of range; expected -1 (keep NCCL's) or a "
                    "chunk size in bytes, 512..1073741824");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,1073741825", "out of range");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,64k", "bad number '64k'");
    {
        struct rail_rule r;
        char buf[160];
        CHECK_EQ_INT(rail_rules_parse_line("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,", &r, g_err,
                                           sizeof(g_err)),
                     1);
        CHECK_EQ_INT(r.chunk_bytes, RAIL_RULE_KEEP);
        CHECK_EQ_INT(rail_rules_parse_line("allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,524288", &r,
                                           g_err, sizeof(g_err)),
                     1);
        CHECK_EQ_INT(r.chunk_bytes, 524288);
        rail_rule_format(&r, buf, sizeof(buf));
        CHECK_EQ_STR(buf, "allreduce,0,1,ring,simple,-1,-1,-1,-1,-1,524288");
        CHECK_EQ_INT(
            rail_rules_parse_line("allreduce,0,1,ring,simple,-1,-1,-1", &r, g_err, sizeof(g_err)),
            1);
        rail_rule_format(&r, buf, sizeof(buf));
        CHECK_EQ_STR(buf, "allreduce,0,1,ring,simple,-1,-1,-1,-1,-1"); /* 10 fields without one */
    }
    CHECK_PARSE_ERR("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w", "23 fields");
    CHECK_PARSE_ERR("allreduce,,1,ring,simple,-1,-1,-1", "field 2 (min_bytes): empty");
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1, ", "field 8 (nRanks): empty");
    CHECK_PARSE_ERR(",,,,,,,", "field 1 (collective_type): empty");
    /* A header that does not match the columns. */
    CHECK_PARSE_ERR("collective_type,min,max,algorithm,protocol,channels,nNodes,nRanks",
                    "column header: field 2 is 'min', expected 'min_bytes'");
    CHECK_PARSE_ERR("collective_type,min_bytes", "column header with 2 fields");
    /* Control characters (but tabs are spaces), quoted safely. */
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1\r", "control character 0x0d at column 35");
    CHECK_PARSE_ERR("allreduce\x01,0,1", "control character 0x01 at column 10");
    CHECK_PARSE_ERR("# comment \x1b[31m", "control character 0x1b at column 11");
    CHECK(strstr(g_err, "on a line of its own") == NULL);
    CHECK_PARSE_ERR("allreduce,0,1,ring,simple,-1,-1,-1\x7f", "control character 0x7f");
    CHECK_PARSE_ERR("all\xc3\xa9,0,1,ring,simple,-1,-1,-1", "unknown collective 'all\\xc3\\xa9'");
    CHECK_PARSE_ERR("allreduce,0,1,ring,'s',-1,-1,-1", "unknown protocol '\\x27s\\x27'");
    /* Overlong: 1024 characters are fine, 1025 are not; long values are cut in messages. */
    memset(line, ' ', sizeof(line));
    memcpy(line, "allreduce,0,1,ring,simple,-1,-1,-1", 34);
    line[RAIL_RULES_MAX_LINE] = '\0';
    struct rail_rule r;
    CHECK_EQ_INT(parse(line, &r), 1);
    line[RAIL_RULES_MAX_LINE] = ' ';
    line[RAIL_RULES_MAX_LINE + 1] = '\0';
    CHECK_PARSE_ERR(line, "line is longer than 1024 characters");
    memset(line, 'x', 200);
    memcpy(line + 200, ",0,1,ring,simple,-1,-1,-1", 26);
    CHECK_PARSE_ERR(line, "unknown collective 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
    CHECK(strlen(g_err) < 300);
    /* A NULL or tiny error buffer is fine. */
    CHECK_EQ_INT(rail_rules_parse_line("bad", &r, NULL, 0), -EINVAL);
    char tiny[4];
    CHECK_EQ_INT(rail_rules_parse_line("alreduce,0,1,ring,simple,-1,-1,-1", &r, tiny, sizeof(tiny)),
                 -EINVAL);
    CHECK_EQ_STR(tiny, "fie");
}

/* ---- format round trip -------------------------------------------------------------------- */

static void test_format(void)
{
    struct rail_rule a, b;
    char buf[256];

    CHECK_EQ_INT(parse("ReduceScatter,1K,-1,NVLSTree,LL128,*,2,16,3,0", &a), 1);
    CHECK_EQ_INT(
        rail_rule_format(&a, buf, sizeof(buf)),
        (int)strlen("reducescatter,1024,18446744073709551615,nvls_tree,ll128,-1,2,16,3,0"));
    CHECK_EQ_STR(buf, "reducescatter,1024,18446744073709551615,nvls_tree,ll128,-1,2,16,3,0");
    CHECK_EQ_INT(parse(buf, &b), 1);
    CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

/* ---- loading ------------------------------------------------------------------------------ */

static void test_load_nccl_example(void)
{
    struct rail_rules rr;
    char buf[256];

    CHECK_EQ_INT(rail_rules_load(FIX("nccl_example.conf"), false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_STR(g_err, "");
    CHECK_EQ_INT(rr.n, 10);
    CHECK_EQ_INT(rr.skipped, 0);
    CHECK_EQ_STR(rr.path, FIX("nccl_example.conf"));
    CHECK_EQ_INT(rr.coll_mask, 0x1f);
    /* The README's first line, as NCCL's example would read it. */
    CHECK_EQ_INT(rr.rules[0].line, 5);
    CHECK_EQ_INT(rail_rule_format(&rr.rules[0], buf, sizeof(buf)) > 0, 1);
    CHECK_EQ_STR(buf, "allreduce,0,65536,tree,simple,2,1,-1,-1,1");
    rail_rule_format(&rr.rules[1], buf, sizeof(buf));
    CHECK_EQ_STR(buf, "allreduce,65537,1048576,ring,simple,4,4,32,1,0");
    rail_rule_format(&rr.rules[2], buf, sizeof(buf));
    CHECK_EQ_STR(buf, "allreduce,1048577,4294967295,ring,ll128,-1,-1,-1,4,-1");
    rail_rule_format(&rr.rules[3], buf, sizeof(buf));
    CHECK_EQ_STR(buf, "broadcast,0,32768,tree,simple,-1,1,-1,-1,-1");
    CHECK_EQ_INT(rr.rules[4].line, 9);
    CHECK_EQ_INT(rr.rules[5].line, 12);
    rail_rule_format(&rr.rules[9], buf, sizeof(buf));
    CHECK_EQ_STR(buf, "reduce,0,4294967295,tree,simple,-1,-1,-1,-1,-1");
    CHECK_EQ_INT(rr.rules[9].line, 16);

    /* Matching as the README describes it. */
    const struct rail_rule *m;
    m = rail_rules_match(&rr, ncclFuncAllReduce, 4096, 1, 8, 1, 1); /* single node, registered */
    CHECK(m == &rr.rules[0]);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 4096, 1, 8, 1, 0); /* not registered */
    CHECK(m == NULL);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 65537, 4, 32, 1, 0);
    CHECK(m == &rr.rules[1]);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 65537, 4, 32, 2, 0); /* pipeOps differ */
    CHECK(m == NULL);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 1 << 30, 16, 128, 4, 1);
    CHECK(m == &rr.rules[2] && m->proto == NCCL_PROTO_LL128 && m->nchannels == -1);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 4294967296ULL, 16, 128, 4, 1); /* past max */
    CHECK(m == NULL);
    m = rail_rules_match(&rr, ncclFuncBroadcast, 32768, 1, 4, 7, 0);
    CHECK(m == &rr.rules[3]);
    m = rail_rules_match(&rr, ncclFuncReduce, 0, 3, 24, 9, 1);
    CHECK(m == &rr.rules[9]);
    m = rail_rules_match(&rr, ncclFuncAllGather, 1000, 2, 16, 1, 0);
    CHECK(m == &rr.rules[6] && m->nchannels == 4);
    m = rail_rules_match(&rr, ncclFuncAllGather, 1000, 3, 24, 1, 0);
    CHECK(m == NULL);
    rail_rules_free(&rr);
    CHECK(rr.rules == NULL && rr.n == 0);
    rail_rules_free(&rr); /* twice is fine */
}

static void test_load_all_forms(void)
{
    struct rail_rules rr;

    CHECK_EQ_INT(rail_rules_load(FIX("good_all_forms.conf"), false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 7);
    if (rr.n == 7) {
        CHECK_EQ_INT(rr.rules[0].line, 5);
        CHECK_EQ_INT(rr.rules[0].algo, NCCL_ALGO_NVLS_TREE);
        CHECK_EQ_INT(rr.rules[0].max_bytes, 65536);
        CHECK_EQ_INT(rr.rules[1].line, 6);
        CHECK_EQ_INT(rr.rules[1].min_bytes, 65536);
        CHECK_EQ_INT(rr.rules[1].max_bytes, 1 << 20);
        CHECK_EQ_INT(rr.rules[1].proto, NCCL_PROTO_LL128);
        CHECK_EQ_INT(rr.rules[2].coll, ncclFuncAllGather);
        CHECK(rr.rules[2].max_bytes == UINT64_MAX);
        CHECK_EQ_INT(rr.rules[3].min_bytes, 1LL << 30);
        CHECK_EQ_INT(rr.rules[3].max_bytes, 4LL << 30);
        CHECK_EQ_INT(rr.rules[3].nchannels, 64);
        CHECK_EQ_INT(rr.rules[4].algo, NCCL_ALGO_PAT);
        CHECK_EQ_INT(rr.rules[4].pipe_ops, -1);
        CHECK_EQ_INT(rr.rules[4].reg_buff, 1);
        CHECK_EQ_INT(rr.rules[5].algo, NCCL_ALGO_COLLNET_CHAIN);
        CHECK_EQ_INT(rr.rules[6].line, 11);
    }
    rail_rules_free(&rr);
}

static void test_load_errors(void)
{
    check_load_err(FIX("bad_unknown_algo.conf"), 4,
                   "field 4 (algorithm): unknown algorithm 'rign'; expected");
    check_load_err(FIX("bad_min_gt_max.conf"), 3,
                   "min_bytes 4294967295 is greater than max_bytes 32769");
    check_load_err(FIX("bad_field_count.conf"), 5, "7 fields; expected 8 to 11");
    check_load_err(FIX("bad_channels.conf"), 3, "field 6 (channels): '0' is out of range");
    check_load_err(FIX("bad_trailing_garbage.conf"), 2,
                   "field 8 (nRanks): bad number '-1 # small messages'");
    check_load_err(FIX("mixed_for_lenient.conf"), 3, "field 5 (protocol): unknown protocol");

    /* A NUL byte names its column; the load stops there. */
    static const char nul[] = "allreduce,0,1,ring,simple,-1,-1,-1\nallre\0duce,0,1\n";
    check_load_err(tmpfile_with(nul, sizeof(nul) - 1), 2, "NUL byte at column 6");
    unlink(g_tmp);

    /* Missing file, directory, bad arguments. */
    struct rail_rules rr;
    CHECK_EQ_INT(rail_rules_load("/nonexistent/rules.conf", false, &rr, g_err, sizeof(g_err)),
                 -ENOENT);
    CHECK_EQ_STR(g_err, "/nonexistent/rules.conf: cannot read rules file: no such file");
    CHECK_EQ_INT(rr.n, 0);
    CHECK_EQ_INT(rail_rules_load(RAIL_FIXTURES, false, &rr, g_err, sizeof(g_err)), -EISDIR);
    CHECK(strstr(g_err, RAIL_FIXTURES ": cannot read rules file") == g_err);
    CHECK_EQ_INT(rail_rules_load("", false, &rr, g_err, sizeof(g_err)), -EINVAL);
    CHECK_EQ_STR(g_err, "empty rules file path");
    CHECK_EQ_INT(rail_rules_load(NULL, true, &rr, g_err, sizeof(g_err)), -EINVAL);
    char longpath[PATH_MAX + 8];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    CHECK_EQ_INT(rail_rules_load(longpath, false, &rr, g_err, sizeof(g_err)), -ENAMETOOLONG);
    CHECK_EQ_INT(rail_rules_load(FIX("bad_min_gt_max.conf"), false, &rr, NULL, 0), -EINVAL);
    rail_rules_free(&rr);
}

static void test_lenient(void)
{
    struct rail_rules rr;

    rail_log_set_logger(capture_logger);
    g_warns = 0;
    CHECK_EQ_INT(rail_rules_load(FIX("mixed_for_lenient.conf"), true, &rr, g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT(rr.n, 3);
    CHECK_EQ_INT(rr.skipped, 4);
    CHECK_EQ_INT(g_warns, 4);
    CHECK_MSG(strstr(g_last_warn, FIX("mixed_for_lenient.conf") ":7: min_bytes 100 is greater"),
              "last warn '%s'", g_last_warn);
    CHECK(strstr(g_last_warn, "line skipped (NCCL_RAIL_CONFIG_LENIENT=1)"));
    if (rr.n == 3) {
        CHECK_EQ_INT(rr.rules[0].line, 2);
        CHECK_EQ_INT(rr.rules[1].line, 4);
        CHECK_EQ_INT(rr.rules[2].line, 8);
    }
    rail_rules_free(&rr);

    /* Missing file: a WARN and no rules. */
    g_warns = 0;
    CHECK_EQ_INT(rail_rules_load("/nonexistent/rules.conf", true, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 0);
    CHECK_EQ_INT(g_warns, 1);
    CHECK(strstr(g_last_warn, "/nonexistent/rules.conf: no such file; continuing without rules"));
    CHECK(rail_rules_match(&rr, ncclFuncAllReduce, 1, 1, 1, 1, 0) == NULL);
    rail_rules_free(&rr);
    rail_log_set_logger(NULL);
}

static void test_line_endings(void)
{
    struct rail_rules rr;

    /* CRLF, a UTF-8 byte-order mark and a last line without a newline. */
    const char *p = tmpfile_str("\xEF\xBB\xBF# exported from a spreadsheet\r\n"
                                "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
                                "nNodes,nRanks\r\n"
                                "\r\n"
                                "allreduce,0,65536,tree,simple,2,1,-1\r\n"
                                "allgather,0,4294967295,ring,simple,4,2,-1");
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_STR(g_err, "");
    CHECK_EQ_INT(rr.n, 2);
    if (rr.n == 2) {
        CHECK_EQ_INT(rr.rules[0].line, 4);
        CHECK_EQ_INT(rr.rules[0].nnodes, 1);
        CHECK_EQ_INT(rr.rules[1].line, 5);
        CHECK_EQ_INT(rr.rules[1].nranks, -1);
    }
    rail_rules_free(&rr);
    unlink(p);
    /* A BOM is only skipped at the start of the file; rules right after it parse. */
    p = tmpfile_str("\xEF\xBB\xBF"
                    "allreduce,0,1,ring,simple,-1,-1,-1\n\xEF\xBB\xBF"
                    "allreduce,0,1,ring,simple,-1,-1,-1\n");
    check_load_err(p, 2,
                   "field 1 (collective_type): unknown collective '\\xef\\xbb\\xbfallreduce'");
    unlink(p);
    /* Error line numbers are right with CRLF; a lone CR inside a line is an error. */
    p = tmpfile_str("# x\r\nallreduce,0,1,ring,simple,-1,-1,-1\r\nreduce,0,1,ring,simple,-1,-1,-2"
                    "\r\n");
    check_load_err(p, 3, "field 8 (nRanks): bad number '-2'");
    unlink(p);
    p = tmpfile_str("allreduce,0,1,ring,simple,-1,-1,-1\rallreduce,0,1,ring,simple,-1,-1,-1\n");
    check_load_err(p, 1, "control character 0x0d at column 35");
    unlink(p);
}

static void test_empty_and_devices(void)
{
    struct rail_rules rr;

    const char *p = tmpfile_with("", 0);
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 0);
    CHECK(rr.rules == NULL);
    CHECK(rail_rules_match(&rr, ncclFuncAllReduce, 0, 1, 1, 1, 0) == NULL);
    rail_rules_free(&rr);
    unlink(p);
    p = tmpfile_str("\xEF\xBB\xBF");
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 0);
    rail_rules_free(&rr);
    unlink(p);
    p = tmpfile_str("\n\n# only comments\n   \n\t\n");
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 0);
    rail_rules_free(&rr);
    unlink(p);
    /* Regular files only, opened without blocking: devices, FIFOs and directories are refused
     * with what they are (a FIFO used to hang the load forever). */
    CHECK_EQ_INT(rail_rules_load("/dev/null", false, &rr, g_err, sizeof(g_err)), -EINVAL);
    CHECK_EQ_STR(g_err,
                 "/dev/null: cannot read rules file: not a regular file (a character device)");
    CHECK_EQ_INT(rail_rules_load("/dev/zero", false, &rr, g_err, sizeof(g_err)), -EINVAL);
    CHECK_EQ_INT(rail_rules_load("/tmp", false, &rr, g_err, sizeof(g_err)), -EISDIR);
    CHECK_EQ_STR(g_err, "/tmp: cannot read rules file: not a regular file (a directory)");
    {
        char fifo[] = "/tmp/rail_rules_fifo_XXXXXX";
        int fd = mkstemp(fifo);
        CHECK(fd >= 0);
        close(fd);
        unlink(fifo);
        CHECK(mkfifo(fifo, 0600) == 0);
        alarm(20); /* a regression hangs here: fail by SIGALRM rather than forever */
        CHECK_EQ_INT(rail_rules_load(fifo, false, &rr, g_err, sizeof(g_err)), -EINVAL);
        CHECK(strstr(g_err, "not a regular file (a FIFO)") != NULL);
        CHECK_EQ_INT(rail_rules_load(fifo, true, &rr, g_err, sizeof(g_err)), 0);
        alarm(0);
        unlink(fifo);
    }
    /* Bare line endings within the byte limit: refused by the line count, before parsing. */
    {
        size_t n = RAIL_RULES_MAX_LINES + 1;
        char *nl = malloc(n + 1);
        CHECK(nl != NULL);
        if (nl) {
            memset(nl, '\n', n);
            nl[n] = '\0';
            p = tmpfile_str(nl);
            CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), -E2BIG);
            CHECK(strstr(g_err, "more than 1000000 lines") != NULL);
            nl[n - 1] = '\0'; /* exactly the limit: fine */
            unlink(p);
            p = tmpfile_str(nl);
            CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
            rail_rules_free(&rr);
            unlink(p);
            free(nl);
        }
    }
    rail_rules_free(&rr);
}

static void test_overlong_lines(void)
{
    static char text[8192];
    struct rail_rules rr;
    size_t o = 0;

    o += (size_t)snprintf(text + o, sizeof(text) - o, "allreduce,0,1,ring,simple,-1,-1,-1\n#");
    memset(text + o, 'x', 5000); /* line 2: a 5001-character comment */
    o += 5000;
    o += (size_t)snprintf(text + o, sizeof(text) - o, "\nreduce,0,1,tree,ll,-1,-1,-1\n#%01023d\n",
                          7); /* 1024: fine */
    const char *p = tmpfile_str(text);
    check_load_err(p, 2, "line is longer than 1024 characters (5001)");

    /* Lenient: the rest of the long line is dropped and reading resumes on the next line. */
    rail_log_set_logger(capture_logger);
    g_warns = 0;
    CHECK_EQ_INT(rail_rules_load(p, true, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 2);
    CHECK_EQ_INT(rr.skipped, 1);
    CHECK_EQ_INT(g_warns, 1);
    if (rr.n == 2) {
        CHECK_EQ_INT(rr.rules[1].line, 3);
        CHECK_EQ_INT(rr.rules[1].coll, ncclFuncReduce);
    }
    rail_rules_free(&rr);
    rail_log_set_logger(NULL);
    unlink(p);
}

static void test_big_file(void)
{
    const int nlines = 10000;
    char *text = malloc((size_t)nlines * 64);
    struct rail_rules rr;
    size_t o = 0;

    /* Rule i covers [i*1000, i*1000+999]; every 100th line is a comment. */
    for (int i = 0; i < nlines; i++)
        o += (size_t)(i % 100 == 99 ? sprintf(text + o, "# comment %d\n", i)
                                    : sprintf(text + o, "allreduce,%d,%d,ring,simple,%d,-1,-1\n",
                                              i * 1000, i * 1000 + 999, i % 64 + 1));
    const char *p = tmpfile_with(text, o);
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, nlines - nlines / 100);
    const struct rail_rule *m = rail_rules_match(&rr, ncclFuncAllReduce, 9998500, 1, 1, 1, 0);
    CHECK(m && m->line == 9999 && m->nchannels == 9998 % 64 + 1);
    m = rail_rules_match(&rr, ncclFuncAllReduce, 4321, 1, 1, 1, 0);
    CHECK(m && m->line == 5);
    CHECK(rail_rules_match(&rr, ncclFuncAllReduce, 99000, 1, 1, 1, 0) == NULL); /* comment line */
    CHECK(rail_rules_match(&rr, ncclFuncAllReduce, 10000000, 1, 1, 1, 0) == NULL);
    CHECK(rail_rules_match(&rr, ncclFuncBroadcast, 5, 1, 1, 1, 0) == NULL);
    rail_rules_free(&rr);
    unlink(p);

    /* The rule limit: one more is an error (strict) or cut with one WARN (lenient). */
    free(text);
    const int many = RAIL_RULES_MAX_RULES + 1;
    text = malloc((size_t)many * 40);
    o = 0;
    for (int i = 0; i < many; i++)
        o += (size_t)sprintf(text + o, "allreduce,0,1,ring,simple,-1,-1,-1\n");
    p = tmpfile_with(text, o);
    check_load_err(p, many, "more than 100000 rules");
    rail_log_set_logger(capture_logger);
    g_warns = 0;
    CHECK_EQ_INT(rail_rules_load(p, true, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, RAIL_RULES_MAX_RULES);
    CHECK_EQ_INT(g_warns, 1);
    rail_log_set_logger(NULL);
    rail_rules_free(&rr);
    unlink(p);
    free(text);
}

static void test_binary_garbage(void)
{
    static unsigned char junk[1 << 16];
    struct rail_rules rr;
    uint32_t x = 12345;

    for (size_t i = 0; i < sizeof(junk); i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (unsigned char)(x >> 16);
    }
    const char *p = tmpfile_with(junk, sizeof(junk));
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strncmp(g_err, p, strlen(p)) == 0 && g_err[strlen(p)] == ':');
    for (const char *c = g_err; *c; c++) /* the message is printable */
        CHECK_MSG(*c >= 0x20 && *c < 0x7f, "byte 0x%02x in '%s'", (unsigned char)*c, g_err);
    rail_log_set_stderr_level(NCCL_LOG_NONE); /* hundreds of WARNs */
    CHECK_EQ_INT(rail_rules_load(p, true, &rr, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rr.n, 0);
    CHECK(rr.skipped > 0);
    rail_log_set_stderr_level(NCCL_LOG_WARN);
    rail_rules_free(&rr);
    unlink(p);
}

/* ---- matching ----------------------------------------------------------------------------- */

static void test_match(void)
{
    struct rail_rules rr;
    const char *p = tmpfile_str("allreduce,100,200,tree,ll,2,-1,-1\n"      /* 1 */
                                "allreduce,100,200,ring,simple,3,-1,-1\n"  /* 2: shadowed */
                                "allreduce,0,*,ring,ll128,-1,2,16\n"       /* 3 */
                                "allreduce,0,*,nvls,simple,-1,-1,8,2\n"    /* 4 */
                                "allreduce,0,*,pat,simple,-1,-1,-1,-1,1\n" /* 5 */
                                "allreduce,0,*,ring,ll,5,-1,-1,3,0\n"      /* 6 */
                                "broadcast,0,0,tree,simple,-1,-1,-1\n" /* 7 */);
    CHECK_EQ_INT(rail_rules_load(p, false, &rr, g_err, sizeof(g_err)), 0);
    unlink(p);
    CHECK_EQ_INT(rr.n, 7);
    CHECK_EQ_INT(rr.coll_mask, (1u << ncclFuncAllReduce) | (1u << ncclFuncBroadcast));
#define LINE_OF(...)                                                                               \
    (rail_rules_match(&rr, __VA_ARGS__) ? rail_rules_match(&rr, __VA_ARGS__)->line : 0)
    /* Inclusive range edges, first match wins. */
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 100, 1, 1, 1, 0), 1);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 200, 1, 1, 1, 0), 1);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 150, 4, 32, 9, 1), 1);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 201, 1, 1, 1, 0), 0);
    /* Exact nNodes and nRanks. */
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 201, 2, 16, 1, 0), 3);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 2, 16, 1, 0), 3);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 2, 15, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 16, 1, 0), 0);
    /* numPipeOps. */
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 8, 2, 0), 4);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 8, 3, 0), 6);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 8, 1, 0), 0);
    /* regBuff. */
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 4, 1, 1), 5);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 4, 3, 1), 5);
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, 99, 1, 4, 3, 0), 6);
    /* Huge sizes match the * max. */
    CHECK_EQ_INT(LINE_OF(ncclFuncAllReduce, SIZE_MAX, 1, 4, 1, 1), 5);
    /* Zero-byte range, other collectives, out-of-range collective numbers. */
    CHECK_EQ_INT(LINE_OF(ncclFuncBroadcast, 0, 1, 1, 1, 0), 7);
    CHECK_EQ_INT(LINE_OF(ncclFuncBroadcast, 1, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(ncclFuncReduce, 150, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(ncclFuncSendRecv, 150, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(-1, 150, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(31, 150, 1, 1, 1, 0), 0);
    CHECK_EQ_INT(LINE_OF(1000, 150, 1, 1, 1, 0), 0);
#undef LINE_OF
    CHECK(rail_rules_match(NULL, ncclFuncAllReduce, 1, 1, 1, 1, 0) == NULL);
    rail_rules_free(&rr);
}

int main(void)
{
    test_names();
    test_fields();
    test_extensions();
    test_errors();
    test_format();
    test_load_nccl_example();
    test_load_all_forms();
    test_load_errors();
    test_lenient();
    test_line_endings();
    test_empty_and_devices();
    test_overlong_lines();
    test_big_file();
    test_binary_garbage();
    test_match();
    return check_report("test_rules");
}
