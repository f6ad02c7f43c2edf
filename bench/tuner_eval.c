/* SPDX-License-Identifier: Apache-2.0 */
/* Regret of the tuner's choices against forced-(algorithm, protocol) measurements
 * (test/fixtures/tuner-data), with NCCL 2.28.9's default as the anchor, and the fitter of the
 * trained table (tuner_fit.c).
 *
 * Every point (system, collective, ranks, nodes, size) with at least two measured pairs is replayed
 * as an ABI client would: the tuner is built for the system's NCCL topology file and communicator
 * (rail_tuner_create), then offered a cost table in which only the measured pairs are not IGNORE,
 * holding NCCL's own predicted times (rail_tuner_apply); its choice is the entry it set to 0, or
 * NCCL's when it left the table alone. NCCL's default is the offered pair with the lowest time by
 * NCCL's model. Regret = measured time of the choice / best measured time - 1.
 *
 * usage: tuner_eval [--data DIR] [--table FILE] [--calibration FILE] [--dump] [--fit] [--out FILE]
 * [--loso] [--lono]
 *                   [--calibrated] [--check] [--check-table] [--check-calibration]
 *                   [--margin M0,SLOPE,OUT,FADE_N,FADE_B]
 *                   [--lambda L] [--prior W]
 *   --calibration FILE: replay with NCCL_RAIL_CALIBRATION_FILE=FILE;
 *   --margin, --lambda, --prior: the fitter's settings (tuner_fit.h; defaults are the shipped
 *          table's);
 *   (no mode): the table embedded in the build (or --table) on every system;
 *   --fit: fit the table on every system (with the published sets' cover records), print it,
 *          write it to --out FILE (tuner-plugin/model/model_table.txt is the shipped one);
 *   --loso: each system replayed with a table fitted on the others;
 *   --lono: each P5 node count (1 and 8 GPUs per node) replayed with a table fitted on all data
 *           but that node count;
 *   --calibrated: the same held-out node counts, with the table fitted without the node count
 *           plus a calibration (NCCL_RAIL_CALIBRATION_FILE) made from the other node counts'
 *           nccl-tests logs; per sweep also a reference: the pair chosen from the same node
 *           count's measurements with only the size held out (docs/calibration.md §6);
 *   --check: the shipped table against the regression bounds (ctest tuner_regret); with
 *          --loso, the held-out bounds too (ctest tuner_loso);
 *   --check-table: refit and compare with the embedded table (ctest tuner_table);
 *   --check-calibration: each P5 sweep calibrated from its own logs is never worse than the
 *          default table at a measured point (ctest tuner_calibration);
 *   --dump: one CSV line per (point, pair): measured time, both models, both picks; with --loso,
 *          each system replayed with the table fitted without it. */
#include "tuner_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr,
            "usage: tuner_eval [--data DIR] [--table FILE] [--calibration FILE] [--dump] [--fit] "
            "[--out FILE] "
            "[--loso] [--lono] [--calibrated] [--check] [--check-table] [--check-calibration] "
            "[--margin M0,SLOPE,OUT,FN,FB] "
            "[--lambda L] [--prior W]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static struct td d;
    struct eval_opts e = {.data = RAIL_FIXTURES "/tuner-data"};
    struct fit_opts fo;
    bool dump = false, fit = false, loso = false, lono = false, check = false, calibrated = false;
    bool check_table = false, check_cal = false;
    const char *out = NULL, *table_path = NULL;
    struct rail_model_table table;

    fit_opts_default(&fo);
    fo.published = RAIL_FIXTURES "/measurements/published.csv";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            e.data = argv[++i];
        else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc)
            table_path = argv[++i];
        else if (strcmp(argv[i], "--calibration") == 0 && i + 1 < argc)
            e.calib_path = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--margin") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%f,%f,%f,%f,%f", &fo.margin[0], &fo.margin[1], &fo.margin[2],
                       &fo.margin[3], &fo.margin[4]) != 5)
                return usage();
        } else if (strcmp(argv[i], "--lambda") == 0 && i + 1 < argc)
            fo.lambda = atof(argv[++i]);
        else if (strcmp(argv[i], "--prior") == 0 && i + 1 < argc)
            fo.prior_w = atof(argv[++i]);
        else if (strcmp(argv[i], "--dump") == 0)
            dump = true;
        else if (strcmp(argv[i], "--fit") == 0)
            fit = true;
        else if (strcmp(argv[i], "--loso") == 0)
            loso = true;
        else if (strcmp(argv[i], "--lono") == 0)
            lono = true;
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--check-table") == 0)
            check_table = true;
        else if (strcmp(argv[i], "--check-calibration") == 0)
            check_cal = true;
        else if (strcmp(argv[i], "--calibrated") == 0)
            calibrated = true;
        else
            return usage();
    }
    if (td_load(e.data, &d) < 0)
        return 1;
    e.d = &d;
    uint64_t all = d.nsys >= 64 ? ~0ull : (1ull << d.nsys) - 1;
    if (table_path) {
        if (eval_read_table(table_path, &table) < 0)
            return 1;
        e.table = &table;
    }
    if (dump && loso)
        return eval_loso_dump(&e, &fo) < 0;
    if (dump)
        return eval_dump(&e, all) < 0;
    if (check_cal)
        return eval_check_calibrated_points(&e) != 0;
    if (check_table) { /* the embedded table is what --fit writes from these fixtures */
        struct rail_model_table t;
        if (tuner_fit(&d, all, &fo, &t) < 0)
            return 1;
        int rc = eval_check_table(&t, table_path ? &table : rail_model_table_builtin());
        rail_model_table_free(&t);
        if (table_path)
            rail_model_table_free(&table);
        return rc != 0;
    }
    if (fit) {
        struct rail_model_table t;
        fo.log = stdout;
        if (tuner_fit(&d, all, &fo, &t) < 0)
            return 1;
        eval_print_coef(&t, "fit on all systems");
        e.table = &t;
        if (eval_run(&e, all) < 0)
            return 1;
        eval_print(&e, all, "Fitted table, all systems (in sample)");
        int rc = out ? eval_write_table(out, &t) : 0;
        rail_model_table_free(&t);
        if (rc < 0)
            return 1;
        fo.log = NULL;
    } else {
        if (eval_run(&e, all) < 0)
            return 1;
        eval_print(&e, all,
                   table_path ? "Table from --table, all systems" : "Shipped table, all systems");
        if (check && eval_check(&e, all) != 0)
            return 1;
    }
    e.table = table_path ? &table : NULL;
    if (loso && eval_loso(&e, &fo, check) != 0)
        return 1;
    if (lono)
        eval_lono(&e, &fo);
    if (calibrated && eval_calibrated(&e, &fo) != 0 && check)
        return 1;
    return 0;
}
