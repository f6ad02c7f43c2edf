/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail explain: the tuner's decision table for a topology and communicator shape. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_topo.h"
#include "strutil.h"
#include "tuner_core.h"

struct explain_opts {
    struct cli_topo_opts topo;
    long nranks, nnodes, pipe_ops;
    int coll; /* -1 all */
    int min_log2, max_log2;
    int csv;
    const char *rules;
};

static void explain_usage(FILE *f)
{
    fprintf(f,
            "usage: nccl-rail explain [topology] [--nranks N] [--nnodes N] [options]\n"
            "topology (default: the live node, as the plugin discovers it):\n"
            "  --profile NAME      built-in profile (dgx-a100, dgx-h100, hgx-b200, aws-p5, "
            "azure-ndv5)\n"
            "  --topo-file FILE    NCCL topology XML (as NCCL_TOPO_FILE)\n"
            "  --hwloc-xml FILE    hwloc XML export (lstopo --whole-io --of xml)\n"
            "  --sysfs-root DIR    root prefix for sysfs reads with --hwloc-xml or live\n"
            "communicator:\n"
            "  --nranks N          ranks in the communicator (default: GPUs of the node x nnodes)\n"
            "  --nnodes N          nodes (default 1)\n"
            "  --pipe-ops N        pipelined ops per call, as NCCL passes numPipeOps (default 1)\n"
            "output:\n"
            "  --coll NAME         only this collective (AllReduce, AllGather, ...)\n"
            "  --min-bytes N       smallest size (default 8)\n"
            "  --max-bytes N       largest size (default 8 GiB)\n"
            "  --rules FILE        apply a rules file (NCCL_TUNER_CONFIG_FILE format)\n"
            "  --csv               machine-readable output\n");
}

static int parse_coll(const char *s)
{
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        if (strcasecmp(s, rail_coll_name(c)) == 0)
            return c;
    return -1;
}

static int log2_floor(unsigned long long v)
{
    return v ? 63 - __builtin_clzll(v) : 0;
}

static int parse_args(int argc, char **argv, struct explain_opts *o)
{
    static const struct option longopts[] = {{"profile", required_argument, 0, 'p'},
                                             {"topo-file", required_argument, 0, 't'},
                                             {"hwloc-xml", required_argument, 0, 'x'},
                                             {"sysfs-root", required_argument, 0, 's'},
                                             {"nranks", required_argument, 0, 'r'},
                                             {"nnodes", required_argument, 0, 'n'},
                                             {"pipe-ops", required_argument, 0, 'o'},
                                             {"coll", required_argument, 0, 'c'},
                                             {"min-bytes", required_argument, 0, 'm'},
                                             {"max-bytes", required_argument, 0, 'M'},
                                             {"rules", required_argument, 0, 'R'},
                                             {"csv", no_argument, 0, 'C'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int ch;
    char *end;
    unsigned long long v;

    memset(o, 0, sizeof(*o));
    o->nnodes = 1;
    o->pipe_ops = 1;
    o->coll = -1;
    o->min_log2 = 3;
    o->max_log2 = 33;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            o->topo.profile = optarg;
            break;
        case 't':
            o->topo.topo_file = optarg;
            break;
        case 'x':
            o->topo.hwloc_xml = optarg;
            break;
        case 's':
            o->topo.sysfs_root = optarg;
            break;
        case 'r':
        case 'n':
        case 'o':
            if (rail_parse_long(optarg, 10, 1, 1L << 20,
                                ch == 'r'   ? &o->nranks
                                : ch == 'n' ? &o->nnodes
                                            : &o->pipe_ops) != 0) {
                fprintf(stderr, "explain: --%s needs an integer in [1, %u], got '%s'\n",
                        ch == 'r'   ? "nranks"
                        : ch == 'n' ? "nnodes"
                                    : "pipe-ops",
                        1u << 20, optarg);
                return -EINVAL;
            }
            break;
        case 'c':
            o->coll = parse_coll(optarg);
            if (o->coll < 0) {
                fprintf(stderr, "explain: unknown collective '%s'\n", optarg);
                return -EINVAL;
            }
            break;
        case 'm':
        case 'M':
            v = strtoull(optarg, &end, 0);
            if (*end || v < 1) {
                fprintf(stderr, "explain: bad byte count '%s'\n", optarg);
                return -EINVAL;
            }
            *(ch == 'm' ? &o->min_log2 : &o->max_log2) = log2_floor(v);
            break;
        case 'R':
            o->rules = optarg;
            break;
        case 'C':
            o->csv = 1;
            break;
        case 'h':
            explain_usage(stdout);
            return 1;
        default:
            explain_usage(stderr);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "explain: unexpected argument '%s'\n", argv[optind]);
        return -EINVAL;
    }
    if (o->min_log2 > o->max_log2 || o->max_log2 > 46) {
        fprintf(stderr, "explain: size range must satisfy min <= max <= 64 TiB\n");
        return -EINVAL;
    }
    return 0;
}

/* The plugin's own decision path: offer every entry, see which one the tuner zeroes. */
static int decide(struct rail_tuner *t, int coll, size_t nbytes, int pipe_ops, int *nch)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            table[a][p] = 1.0f;
    *nch = 0;
    rail_tuner_apply(t, coll, nbytes, pipe_ops, 0, table, nch);
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            if (table[a][p] == 0.0f)
                return a * NCCL_NUM_PROTOCOLS + p;
    return -1;
}

static void format_size(char *buf, size_t len, size_t v)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024 && v % 1024 == 0 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%zu %s", v, units[u]);
}

static void print_coll(struct rail_tuner *t, const struct explain_opts *o, int coll)
{
    int cands[RAIL_DT_CANDIDATES], nc = 0;
    const struct rail_model *m = &t->model;

    /* Columns: every candidate the model considers possible for this collective. */
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        if (rail_model_time(m, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS, 1 << 20,
                            (int)o->pipe_ops) >= 0.0f)
            cands[nc++] = c;
    if (!o->csv) {
        printf("\n%s (predicted time in us; * = chosen)\n%10s  %-16s", rail_coll_name(coll), "size",
               "choice");
        for (int i = 0; i < nc; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s/%s", rail_algo_name(cands[i] / NCCL_NUM_PROTOCOLS),
                     rail_proto_name(cands[i] % NCCL_NUM_PROTOCOLS));
            printf(" %15s", name);
        }
        printf("\n");
    }
    for (int l = o->min_log2; l <= o->max_log2; l++) {
        size_t bytes = (size_t)1 << l;
        int nch = 0, choice = decide(t, coll, bytes, (int)o->pipe_ops, &nch);
        char sz[32], ch[40];
        format_size(sz, sizeof(sz), bytes);
        if (choice >= 0)
            snprintf(ch, sizeof(ch), "%s/%s", rail_algo_name(choice / NCCL_NUM_PROTOCOLS),
                     rail_proto_name(choice % NCCL_NUM_PROTOCOLS));
        else
            snprintf(ch, sizeof(ch), "(NCCL default)");
        if (o->csv) {
            for (int i = 0; i < nc; i++) {
                int a = cands[i] / NCCL_NUM_PROTOCOLS, p = cands[i] % NCCL_NUM_PROTOCOLS;
                printf("%s,%zu,%s,%s,%.3f,%d,%d\n", rail_coll_name(coll), bytes, rail_algo_name(a),
                       rail_proto_name(p),
                       (double)rail_model_time(m, coll, a, p, bytes, (int)o->pipe_ops),
                       cands[i] == choice, cands[i] == choice ? nch : 0);
            }
            continue;
        }
        printf("%10s  %-16s", sz, ch);
        for (int i = 0; i < nc; i++) {
            float us = rail_model_time(m, coll, cands[i] / NCCL_NUM_PROTOCOLS,
                                       cands[i] % NCCL_NUM_PROTOCOLS, bytes, (int)o->pipe_ops);
            printf(" %14.1f%c", (double)us, cands[i] == choice ? '*' : ' ');
        }
        printf("\n");
    }
}

int cli_explain(int argc, char **argv)
{
    struct explain_opts o;
    struct rail_topo *topo = calloc(1, sizeof(*topo));
    struct rail_tuner *t = NULL;
    struct rail_tuner_opts topts = {.lenient = 0};
    char err[512];
    int rc = parse_args(argc, argv, &o);

    if (rc != 0 || !topo) {
        free(topo);
        return rc > 0 ? 0 : 2;
    }
    if (cli_topo_load(&o.topo, topo, err, sizeof(err)) < 0) {
        fprintf(stderr, "explain: %s\n", err);
        free(topo);
        return 1;
    }
    if (!o.nranks)
        o.nranks = (topo->n_gpus > 0 ? topo->n_gpus : 1) * o.nnodes;
    if (o.nnodes > o.nranks) {
        fprintf(stderr, "explain: --nnodes %ld exceeds --nranks %ld\n", o.nnodes, o.nranks);
        free(topo);
        return 2;
    }
    topts.topo = topo;
    topts.rules_path = o.rules;
    rc = rail_tuner_create(&t, 0, (size_t)o.nranks, (size_t)o.nnodes, NULL, &topts);
    if (rc < 0) {
        fprintf(stderr, "explain: cannot build the tuner (%s)\n", strerror(-rc));
        free(topo);
        return 1;
    }
    if (!o.csv) {
        cli_topo_print_summary(stdout, topo);
        printf(
            "communicator: %ld ranks on %ld node(s), %d-%d ranks per node, %ld pipelined op(s)\n",
            o.nranks, o.nnodes, t->shape.min_rpn, t->shape.max_rpn, o.pipe_ops);
        printf("model: %s%s\n",
               t->model_active ? "" : "INACTIVE (NCCL's choices stand): ", t->model.why);
    } else {
        printf("collective,bytes,algorithm,protocol,predicted_us,chosen,nchannels\n");
    }
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        if (o.coll < 0 || o.coll == c)
            print_coll(t, &o, c);
    rail_tuner_destroy(t);
    free(topo);
    return 0;
}
