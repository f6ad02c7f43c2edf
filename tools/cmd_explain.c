/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail explain: the tuner's decision table for a topology and communicator shape. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "decide/calib_apply.h"
#include "cli_topo.h"
#include "explain_svg.h"
#include "model/model_table_file.h"
#include "safe_file.h"
#include "strutil.h"
#include "abi/tuner_core.h"

struct explain_opts {
    struct cli_topo_opts topo;
    long nranks, nnodes, pipe_ops;
    int coll; /* -1 all */
    int min_log2, max_log2;
    int csv;
    const char *rules;
    const char *calibration;
    const char *svg;
    int svg_nrows, svg_nnodes[EXPLAIN_SVG_MAX_ROWS];
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
            "  --calibration FILE  apply a calibration file (NCCL_RAIL_CALIBRATION_FILE, written\n"
            "                      by nccl-rail calibrate); default: that variable\n"
            "  --csv               machine-readable output\n"
            "  --svg FILE          also draw the chosen algorithm/protocol over message size x\n"
            "                      node count (same GPUs per node as the communicator)\n"
            "  --svg-nnodes LIST   node counts of the map (default 1,2,4,...,1024)\n"
            "The 'from' column says where each decision came from: rules (the rules file),\n"
            "calibration (measured times; 'calibration (job)' where job measurements are among\n"
            "them, CSV column measured_by: job or nccl-tests), model (the cost model) or NCCL\n"
            "(no opinion). At a measured size, the CSV column rule and a note under the table\n"
            "say whether a pair nobody measured was held back (docs/calibration.md). Where a\n"
            "strict do-no-harm rule decided, the rule column (class-unseen, class-unseen-gain,\n"
            "extrapolated, ring-step) and a note under the table say which (docs/cost-model.md\n"
            "§12).\n");
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

static int parse_nnodes_list(const char *arg, struct explain_opts *o)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", arg);
    o->svg_nrows = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long v;
        if (o->svg_nrows == EXPLAIN_SVG_MAX_ROWS || rail_parse_long(t, 10, 1, 1L << 16, &v) ||
            (o->svg_nrows && v <= o->svg_nnodes[o->svg_nrows - 1])) {
            fprintf(stderr,
                    "explain: --svg-nnodes wants at most %d increasing node counts, got '%s'\n",
                    EXPLAIN_SVG_MAX_ROWS, arg);
            return -EINVAL;
        }
        o->svg_nnodes[o->svg_nrows++] = (int)v;
    }
    return o->svg_nrows ? 0 : -EINVAL;
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
                                             {"calibration", required_argument, 0, 'K'},
                                             {"svg", required_argument, 0, 'S'},
                                             {"svg-nnodes", required_argument, 0, 'N'},
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
        case 'K':
            o->calibration = optarg;
            break;
        case 'S':
            o->svg = optarg;
            break;
        case 'N':
            if (parse_nnodes_list(optarg, o) < 0)
                return -EINVAL;
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

    /* Columns: every candidate the model considers possible for this collective. A row's choice
     * is the tuner's, or (from "NCCL") the pick of NCCL's own model where the tuner leaves the
     * table alone. */
    float times[RAIL_DT_CANDIDATES];
    rail_tuner_times(t, coll, 1 << 20, (int)o->pipe_ops, times);
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
        if (times[c] >= 0.0f)
            cands[nc++] = c;
    if (!o->csv) {
        printf("\n%s (predicted time in us; * = chosen)\n%10s  %-17s %-17s", rail_coll_name(coll),
               "size", "choice", "from");
        for (int i = 0; i < nc; i++) {
            char name[32];
            snprintf(name, sizeof(name), "%s/%s", rail_algo_name(cands[i] / NCCL_NUM_PROTOCOLS),
                     rail_proto_name(cands[i] % NCCL_NUM_PROTOCOLS));
            printf(" %15s", name);
        }
        printf("\n");
    }
    char notes[2048] = "", whynotes[4096] = "";
    size_t nk = 0, nw = 0;
    for (int l = o->min_log2; l <= o->max_log2; l++) {
        size_t bytes = (size_t)1 << l;
        enum rail_decision_from from;
        int nch = 0, choice = rail_tuner_explain(t, coll, bytes, (int)o->pipe_ops, &nch, &from);
        char sz[32], ch[40];
        rail_tuner_times(t, coll, bytes, (int)o->pipe_ops, times);
        format_size(sz, sizeof(sz), bytes);
        int a0, p0;
        if (choice >= 0)
            snprintf(ch, sizeof(ch), "%s/%s", rail_algo_name(choice / NCCL_NUM_PROTOCOLS),
                     rail_proto_name(choice % NCCL_NUM_PROTOCOLS));
        else if (t->model_active &&
                 rail_model_nccl_pick(&t->model, coll, bytes, (int)o->pipe_ops, &a0, &p0) >= 0) {
            /* The tuner leaves NCCL's table alone: show what NCCL's own model picks. */
            choice = a0 * NCCL_NUM_PROTOCOLS + p0;
            snprintf(ch, sizeof(ch), "%s/%s", rail_algo_name(a0), rail_proto_name(p0));
        } else
            snprintf(ch, sizeof(ch), "(NCCL default)");
        /* A calibrated decision says what measured it: job measurements (the rail profiler,
         * NCCL Inspector) or nccl-tests runs. */
        const char *measured = "";
        int rule = RAIL_CALIB_RULE_NONE;
        float spread = 1.0f;
        if (from == RAIL_FROM_CALIBRATION) {
            measured = rail_tuner_from_job(t, coll, bytes) ? "job" : "nccl-tests";
            rule = rail_tuner_calib_rule(t, coll, bytes, (int)o->pipe_ops, &spread);
        }
        /* A model cell (or NCCL's choice) a strict do-no-harm rule decided: which one. */
        char whytxt[96] = "";
        int why = from == RAIL_FROM_MODEL || from == RAIL_FROM_NCCL
                      ? rail_tuner_why(t, coll, bytes, (int)o->pipe_ops, whytxt, sizeof(whytxt))
                      : RAIL_DT_WHY_NONE;
        if (o->csv) {
            for (int i = 0; i < nc; i++) {
                int a = cands[i] / NCCL_NUM_PROTOCOLS, p = cands[i] % NCCL_NUM_PROTOCOLS;
                printf("%s,%zu,%s,%s,%.3f,%d,%d,%s,%s,%s\n", rail_coll_name(coll), bytes,
                       rail_algo_name(a), rail_proto_name(p), (double)times[cands[i]],
                       cands[i] == choice, cands[i] == choice ? nch : 0,
                       cands[i] == choice ? rail_decision_from_name(from) : "",
                       cands[i] == choice ? measured : "",
                       cands[i] != choice             ? ""
                       : rule != RAIL_CALIB_RULE_NONE ? rail_calib_rule_code(rule)
                                                      : rail_dt_why_code(why));
            }
            continue;
        }
        /* At a measured point: which rule decided (docs/calibration.md §4). */
        if (rule != RAIL_CALIB_RULE_NONE && rule != RAIL_CALIB_RULE_ALL_MEASURED &&
            nk < sizeof(notes))
            nk += (size_t)snprintf(notes + nk, sizeof(notes) - nk,
                                   "  %s: %s (ratios max/min %.1fx; agreeing means <= %.1fx)\n", sz,
                                   rail_calib_rule_name(rule), (double)spread,
                                   (double)RAIL_CALIB_AGREE);
        if (why != RAIL_DT_WHY_NONE && nw < sizeof(whynotes))
            nw += (size_t)snprintf(whynotes + nw, sizeof(whynotes) - nw, "  %s: %s\n", sz, whytxt);
        char fromtxt[32];
        snprintf(fromtxt, sizeof(fromtxt), "%s%s", rail_decision_from_name(from),
                 strcmp(measured, "job") == 0 ? " (job)" : "");
        printf("%10s  %-17s %-17s", sz, ch, fromtxt);
        for (int i = 0; i < nc; i++) {
            float us = times[cands[i]];
            printf(" %14.1f%c", (double)us, cands[i] == choice ? '*' : ' ');
        }
        printf("\n");
    }
    if (notes[0])
        printf("calibrated at measured sizes:\n%s", notes);
    if (whynotes[0])
        printf("decided by a strict do-no-harm rule (docs/cost-model.md §12.1, §12.5, §12.6):\n%s",
               whynotes);
}

/* The map: one tuner per node count with the communicator's GPUs per node. */
static int write_svg(const struct explain_opts *o, const struct rail_topo *topo,
                     const struct rail_tuner *base)
{
    struct explain_svg_map *m = calloc(1, sizeof(*m));
    struct rail_tuner_opts topts = {
        .topo = topo, .rules_path = o->rules, .lenient = 0, .calib_path = o->calibration};
    long gpn = base->shape.nranks / base->shape.nnodes;
    char title[320], err[4096 + 512] = "";
    struct rail_file_out out;
    int rc = 0;

    if (!m)
        return 1;
    if (gpn < 1)
        gpn = 1;
    m->min_log2 = o->min_log2;
    m->max_log2 = o->max_log2;
    if (o->svg_nrows) {
        m->nrows = o->svg_nrows;
        memcpy(m->nnodes, o->svg_nnodes, sizeof(m->nnodes));
    } else {
        for (int n = 1; n <= 1024; n *= 2)
            m->nnodes[m->nrows++] = n;
    }
    for (int c = RAIL_NUM_COLLS - 1; c >= 0; c--)
        if (o->coll < 0 ? c >= ncclFuncAllGather : o->coll == c)
            m->colls[m->ncolls++] = c;
    for (int r = 0; r < m->nrows && rc == 0; r++) {
        struct rail_tuner *t = NULL;
        if (rail_tuner_create(&t, 0, (size_t)(gpn * m->nnodes[r]), (size_t)m->nnodes[r], NULL,
                              &topts) < 0) {
            rc = 1;
            break;
        }
        for (int p = 0; p < m->ncolls; p++)
            for (int l = m->min_log2; l <= m->max_log2; l++) {
                enum rail_decision_from from;
                int nch;
                m->choice[p][r][l - m->min_log2] = (signed char)rail_tuner_explain(
                    t, m->colls[p], (size_t)1 << l, (int)o->pipe_ops, &nch, &from);
                m->from[p][r][l - m->min_log2] =
                    (unsigned char)(from |
                                    (from == RAIL_FROM_CALIBRATION &&
                                             rail_tuner_from_job(t, m->colls[p], (size_t)1 << l)
                                         ? EXPLAIN_SVG_FROM_JOB
                                         : 0));
            }
        rail_tuner_destroy(t);
    }
    snprintf(title, sizeof(title), "nccl-rail tuner: %.120s, %ld GPU(s) per node%s%.100s",
             topo->origin, gpn, o->calibration ? ", calibration " : "",
             o->calibration ? o->calibration : "");
    rail_text_sanitize(title); /* XML text: valid UTF-8, no control characters */
    m->title = title;
    /* The output-file rule (safe_file.h): never opened, so a FIFO cannot block and a device
     * cannot swallow the map; a regular file or nothing is replaced, anything else refused. */
    if (rc == 0 && rail_file_out_open(&out, o->svg, err, sizeof(err)) == 0) {
        explain_svg_write(out.f, m);
        if (rail_file_out_commit(&out, err, sizeof(err)) != 0)
            rc = 1;
    } else if (rc == 0) {
        rc = 1;
    }
    if (rc != 0 && err[0])
        fprintf(stderr, "explain: cannot write %s\n", err);
    if (rc == 0 && !o->csv)
        printf("\nmap: %s (%d node counts x %d sizes)\n", o->svg, m->nrows,
               m->max_log2 - m->min_log2 + 1);
    free(m);
    return rc;
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
    topts.calib_path = o.calibration;
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
        if (t->model.table)
            printf("model table: %s\n", rail_model_table_name(t->model.table));
        if (t->calib) {
            int job = 0;
            for (int i = 0; i < t->calib->n; i++)
                job += t->calib->rows[i].origin == RAIL_CALIB_ORIGIN_JOB;
            printf("calibration: %d point(s) (%d from job measurements) from %s%s%s\n", t->calib->n,
                   job, o.calibration ? o.calibration : "NCCL_RAIL_CALIBRATION_FILE",
                   t->calib_active ? "" : " (nothing applies to this shape)",
                   t->calib_too_far ? "; some measured pairs are too far beyond the calibrated "
                                      "node counts: the model and its own rules decide there, "
                                      "except where their ratios carry (stable across node "
                                      "counts, or ring steps)"
                                    : "");
        }
    } else {
        printf("collective,bytes,algorithm,protocol,predicted_us,chosen,nchannels,from,measured_by,"
               "rule\n");
    }
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        if (o.coll < 0 || o.coll == c)
            print_coll(t, &o, c);
    rc = o.svg ? write_svg(&o, topo, t) : 0;
    rail_tuner_destroy(t);
    free(topo);
    return rc;
}
