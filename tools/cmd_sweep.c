/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail sweep: the nccl-tests runs that `nccl-rail calibrate` needs for one shape, one per
 * (collective, algorithm, protocol) NCCL can run there, each log starting with the
 * "# NCCL_ALGO=" / "# NCCL_PROTO=" lines calibrate reads (docs/calibration.md). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_log.h"
#include "cli.h"
#include "model/cost_model.h"
#include "strutil.h"

struct sweep_opts {
    long nnodes, gpn, sm;
    int nvswitch;   /* -1: sm >= 90 implies it (H100/B200 SXM boards) */
    unsigned colls; /* bit per ncclFunc_t */
    unsigned long long min_bytes, max_bytes;
    int slurm;
    const char *tests_dir, *out_dir, *launcher;
};

static const char *const k_test_name[RAIL_NUM_COLLS] = {"broadcast", "reduce", "all_gather",
                                                        "reduce_scatter", "all_reduce"};

static void sweep_usage(FILE *f)
{
    fprintf(f,
            "usage: nccl-rail sweep --nnodes N --gpus-per-node G [options]\n"
            "Prints one nccl-tests command per (collective, algorithm, protocol) NCCL can run on\n"
            "the shape, each writing a log that `nccl-rail calibrate` reads.\n"
            "  --colls LIST        comma-separated (default AllReduce,AllGather,ReduceScatter;\n"
            "                      Broadcast and Reduce also accepted)\n"
            "  --min-bytes N       smallest size (default 8)\n"
            "  --max-bytes N       largest size (default 8589934592)\n"
            "  --sm N              GPU compute capability x10 (default 90): LL128 from 70, NVLS\n"
            "                      and NVLSTree from 90 with NVSwitch\n"
            "  --nvswitch | --no-nvswitch  GPUs on NVSwitch (default: yes when --sm >= 90)\n"
            "  --nccl-tests DIR    where the *_perf binaries are (default ./build)\n"
            "  --out-dir DIR       where the logs go (default nccl-rail-logs)\n"
            "  --launcher CMD      command before the binary (default 'mpirun -np R -N G' with\n"
            "                      -x for the NCCL variables; '' runs the binary directly);\n"
            "                      shell code, pasted as given (paths are quoted)\n"
            "  --slurm             one sbatch script using srun instead\n");
}

static int parse_bytes(const char *s, unsigned long long *out)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || v == 0)
        return -EINVAL;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        v <<= 30, end++;
    if (*end || v > RAIL_CALIB_MAX_BYTES)
        return -EINVAL;
    *out = v;
    return 0;
}

/* Exact collective names (rail_calib_coll_exact): "allreducefoo" is not AllReduce. */
static int parse_colls(const char *s, unsigned *mask)
{
    char buf[256], *save = NULL, q[64];
    *mask = 0;
    if (strlen(s) >= sizeof(buf)) {
        fprintf(stderr, "sweep: --colls is longer than %zu characters\n", sizeof(buf) - 1);
        return -EINVAL;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = rail_calib_coll_exact(t, strlen(t));
        if (c < 0) {
            rail_quote(q, sizeof(q), t, strlen(t));
            fprintf(stderr,
                    "sweep: unknown collective '%s' (AllReduce, AllGather, ReduceScatter, "
                    "Broadcast, Reduce)\n",
                    q);
            return -EINVAL;
        }
        *mask |= 1u << c;
    }
    return *mask ? 0 : -EINVAL;
}

/* The plan is a shell script: a path from the command line goes into it single-quoted
 * ('it'\''s'), and one with a control character (a newline would end a comment line) is
 * refused. 0, or -EINVAL with the reason on stderr. */
static int shell_quote(const char *opt, const char *s, char *out, size_t len)
{
    size_t need = 3, o = 0;
    bool ctl = false;
    char q[128];
    for (const char *c = s; *c; c++) {
        ctl |= (unsigned char)*c < 0x20 || *c == 0x7f;
        need += *c == '\'' ? 4 : 1;
    }
    if (ctl || need > len) {
        rail_quote(q, sizeof(q), s, strlen(s));
        fprintf(stderr, "sweep: %s '%s': %s\n", opt, q,
                ctl ? "a control character is refused (the plan is a shell script)" : "too long");
        return -EINVAL;
    }
    out[o++] = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(out + o, "'\\''", 4); /* close, an escaped quote, reopen */
            o += 4;
        } else {
            out[o++] = *c;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
    return 0;
}

static int parse_args(int argc, char **argv, struct sweep_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->sm = 90;
    o->nvswitch = -1;
    o->colls = 1u << ncclFuncAllReduce | 1u << ncclFuncAllGather | 1u << ncclFuncReduceScatter;
    o->min_bytes = 8;
    o->max_bytes = 8ull << 30;
    o->tests_dir = "./build";
    o->out_dir = "nccl-rail-logs";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = strcmp(a, "--nnodes") == 0 || strcmp(a, "--gpus-per-node") == 0 ||
                    strcmp(a, "--sm") == 0 || strcmp(a, "--colls") == 0 ||
                    strcmp(a, "--min-bytes") == 0 || strcmp(a, "--max-bytes") == 0 ||
                    strcmp(a, "--nccl-tests") == 0 || strcmp(a, "--out-dir") == 0 ||
                    strcmp(a, "--launcher") == 0;
        if (takes && !v) {
            fprintf(stderr, "sweep: %s needs a value\n", a);
            return -EINVAL;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            sweep_usage(stdout);
            return 1;
        } else if (strcmp(a, "--nnodes") == 0 || strcmp(a, "--gpus-per-node") == 0 ||
                   strcmp(a, "--sm") == 0) {
            long *dst = a[2] == 'n' ? &o->nnodes : (a[2] == 'g' ? &o->gpn : &o->sm);
            if (rail_parse_long(v, 10, a[2] == 's' ? 30 : 1, a[2] == 's' ? 200 : 65536, dst)) {
                fprintf(stderr, "sweep: %s: bad value '%s'\n", a, v);
                return -EINVAL;
            }
        } else if (strcmp(a, "--nvswitch") == 0 || strcmp(a, "--no-nvswitch") == 0) {
            o->nvswitch = a[2] == 'n' && a[3] == 'v';
            continue;
        } else if (strcmp(a, "--slurm") == 0) {
            o->slurm = 1;
            continue;
        } else if (strcmp(a, "--colls") == 0) {
            if (parse_colls(v, &o->colls))
                return -EINVAL;
        } else if (strcmp(a, "--min-bytes") == 0 || strcmp(a, "--max-bytes") == 0) {
            if (parse_bytes(v, a[3] == 'i' ? &o->min_bytes : &o->max_bytes)) {
                fprintf(stderr, "sweep: %s: bad byte count '%s'\n", a, v);
                return -EINVAL;
            }
        } else if (strcmp(a, "--nccl-tests") == 0) {
            o->tests_dir = v;
        } else if (strcmp(a, "--out-dir") == 0) {
            o->out_dir = v;
        } else if (strcmp(a, "--launcher") == 0) {
            o->launcher = v;
        } else {
            fprintf(stderr, "sweep: unknown argument '%s'\n", a);
            sweep_usage(stderr);
            return -EINVAL;
        }
        i++;
    }
    if (!o->nnodes || !o->gpn) {
        fprintf(stderr, "sweep: --nnodes and --gpus-per-node are required\n");
        return -EINVAL;
    }
    if (o->min_bytes > o->max_bytes) {
        fprintf(stderr, "sweep: --min-bytes is larger than --max-bytes\n");
        return -EINVAL;
    }
    if (o->nvswitch < 0)
        o->nvswitch = o->sm >= 90;
    return 0;
}

/* Whether NCCL 2.28 can run (coll, algo, proto) on the shape (docs/calibration.md, Sweep). */
static int runnable(const struct sweep_opts *o, int coll, int algo, int proto)
{
    int nvls = o->nvswitch && o->sm >= 90 && o->gpn >= 2;
    if (proto == NCCL_PROTO_LL128 && o->sm < 70)
        return 0;
    if (o->nnodes * o->gpn < 2)
        return 0;
    switch (algo) {
    case NCCL_ALGO_RING:
        return 1;
    case NCCL_ALGO_TREE:
        return coll == ncclFuncAllReduce;
    case NCCL_ALGO_PAT: /* NCCL_PAT_ENABLE auto: one GPU per node */
        return (coll == ncclFuncAllGather || coll == ncclFuncReduceScatter) && o->gpn == 1 &&
               o->nnodes >= 2 && proto == NCCL_PROTO_SIMPLE && o->sm >= 60;
    case NCCL_ALGO_NVLS: /* across nodes NVLS needs CollNet (SHARP) */
        return nvls && o->nnodes == 1 && proto == NCCL_PROTO_SIMPLE &&
               (coll == ncclFuncAllReduce || coll == ncclFuncAllGather ||
                coll == ncclFuncReduceScatter);
    case NCCL_ALGO_NVLS_TREE:
        return nvls && o->nnodes >= 2 && proto == NCCL_PROTO_SIMPLE && coll == ncclFuncAllReduce;
    default: /* CollNet needs SHARP, which a plan cannot know */
        return 0;
    }
}

static int print_run(const struct sweep_opts *o, int coll, int algo, int proto)
{
    const char *an = rail_algo_name(algo), *pn = rail_proto_name(proto);
    long nranks = o->nnodes * o->gpn;
    char launcher[512], path[PATH_MAX], bin[4 * PATH_MAX + 3], log[4 * PATH_MAX + 3];

    if (o->slurm) {
        printf("run %s %s %s\n", k_test_name[coll], an, pn);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/%s_perf", o->tests_dir, k_test_name[coll]);
    if (shell_quote("--nccl-tests", path, bin, sizeof(bin)))
        return -EINVAL;
    snprintf(path, sizeof(path), "%s/%s.%s.%s.log", o->out_dir, k_test_name[coll], an, pn);
    if (shell_quote("--out-dir", path, log, sizeof(log)))
        return -EINVAL;
    if (o->launcher)
        snprintf(launcher, sizeof(launcher), "%s%s", o->launcher, *o->launcher ? " " : "");
    else
        snprintf(launcher, sizeof(launcher), "mpirun -np %ld -N %ld -x NCCL_ALGO -x NCCL_PROTO ",
                 nranks, o->gpn);
    printf("{ echo '# NCCL_ALGO=%s'; echo '# NCCL_PROTO=%s'; NCCL_ALGO=%s NCCL_PROTO=%s "
           "%s%s -b %llu -e %llu -f 2 -g 1; } > %s 2>&1\n",
           an, pn, an, pn, launcher, bin, o->min_bytes, o->max_bytes, log);
    return 0;
}

int cli_sweep(int argc, char **argv)
{
    struct sweep_opts o;
    char out_q[4 * PATH_MAX], tests_q[4 * PATH_MAX];
    int rc = parse_args(argc, argv, &o), n = 0;

    if (rc == 0 && (shell_quote("--out-dir", o.out_dir, out_q, sizeof(out_q)) ||
                    shell_quote("--nccl-tests", o.tests_dir, tests_q, sizeof(tests_q))))
        rc = -EINVAL;
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (o.slurm) {
        printf("#!/bin/bash\n"
               "# nccl-rail sweep: %ld node(s) x %ld GPU(s)/node, sm%ld%s\n"
               "#SBATCH --job-name=nccl-rail-sweep\n#SBATCH --nodes=%ld\n"
               "#SBATCH --ntasks-per-node=%ld\n#SBATCH --gpus-per-node=%ld\n#SBATCH --exclusive\n"
               "set -u\nout=%s\ntests=%s\nmkdir -p \"$out\"\n"
               "run() { # test algo proto\n"
               "  { echo \"# NCCL_ALGO=$2\"; echo \"# NCCL_PROTO=$3\"; NCCL_ALGO=$2 "
               "NCCL_PROTO=$3 srun \"$tests/$1_perf\" -b %llu -e %llu -f 2 -g 1; } "
               "> \"$out/$1.$2.$3.log\" 2>&1\n}\n",
               o.nnodes, o.gpn, o.sm, o.nvswitch ? ", NVSwitch" : "", o.nnodes, o.gpn, o.gpn, out_q,
               tests_q, o.min_bytes, o.max_bytes);
    } else {
        printf("# nccl-rail sweep: %ld node(s) x %ld GPU(s)/node, sm%ld%s; then:\n"
               "#   nccl-rail calibrate -o calibration.txt %s\nmkdir -p %s\n",
               o.nnodes, o.gpn, o.sm, o.nvswitch ? ", NVSwitch" : "", out_q, out_q);
    }
    for (int coll = RAIL_NUM_COLLS - 1; coll >= 0; coll--) {
        if (!(o.colls & (1u << coll)))
            continue;
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                if (runnable(&o, coll, a, p)) {
                    if (print_run(&o, coll, a, p) != 0)
                        return 2;
                    n++;
                }
    }
    if (o.slurm)
        printf("echo \"%d run(s) done; now: nccl-rail calibrate -o calibration.txt $out\"\n", n);
    if (n == 0)
        fprintf(stderr, "sweep: NCCL has no algorithm to force on a single GPU\n");
    return n ? 0 : 1;
}
