/* SPDX-License-Identifier: Apache-2.0 */
/* Calibrated leave-one-node-count-out evaluation (docs/calibration.md, "Evaluation").
 *
 * For every AWS p5 system at one GPU per node in test/fixtures/tuner-data (2, 8, 32, 128 and 512
 * nodes): `nccl-rail calibrate`'s path (rail_calib_log_parse on the nccl-tests logs, then
 * rail_calib_from_runs) builds a calibration from the logs of the OTHER node counts only; the
 * tuner is created for the held-out shape with that file (rail_tuner_create, the plugin's path)
 * and offered, for every (collective, size) measured there, a cost table in which only the
 * measured pairs are available, holding NCCL's own predicted times. Its choice is the entry it
 * zeroes. NCCL's default is the fastest measured pair by NCCL 2.28's own model
 * (rail_model_nccl_time), as in test_regret. Regret = time(choice) / best measured time - 1.
 * Printed per system: NCCL's mean regret, the uncalibrated tuner's, the calibrated tuner's, and
 * calibrated / NCCL (the must-show: at most 0.3).
 *
 * usage: calib_eval [--data DIR] [--details]   (DIR: test/fixtures/tuner-data) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounded_read.h"
#include "calibration.h"
#include "tuner_core.h"

#define MAX_ROWS 4096
#define NSYS     5

static const char *const k_systems[NSYS] = {"p5_2x1_efa", "p5_8x1_efa", "p5_32x1_efa",
                                            "p5_128x1_efa", "p5_512x1_efa"};

struct meas {
    int sys, coll, algo, proto, nranks, nnodes;
    unsigned long long bytes;
    double time_us;
};

static struct meas g_rows[MAX_ROWS];
static int g_nrows;

static int sys_index(const char *s)
{
    for (int i = 0; i < NSYS; i++)
        if (strcmp(s, k_systems[i]) == 0)
            return i;
    return -1;
}

static int load_csv(const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "calib_eval: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) && g_nrows < MAX_ROWS) {
        char *fld[9], *save = NULL, *t = strtok_r(line, ",\n", &save);
        int n = 0;
        while (t && n < 9) {
            fld[n++] = t;
            t = strtok_r(NULL, ",\n", &save);
        }
        if (n < 8 || sys_index(fld[0]) < 0)
            continue;
        struct meas *m = &g_rows[g_nrows];
        m->sys = sys_index(fld[0]);
        m->coll = rail_calib_coll_from_name(fld[1], strlen(fld[1]));
        m->nranks = atoi(fld[2]);
        m->nnodes = atoi(fld[3]);
        m->bytes = strtoull(fld[4], NULL, 10);
        m->algo = rail_calib_algo_from_name(fld[5], strlen(fld[5]));
        m->proto = rail_calib_proto_from_name(fld[6], strlen(fld[6]));
        m->time_us = strtod(fld[7], NULL);
        if (m->coll >= 0 && m->algo >= 0 && m->proto >= 0)
            g_nrows++;
    }
    fclose(f);
    return 0;
}

/* The logs of every system but `skip`, through calibrate's parser, into a calibration file. */
static int write_calibration(const char *data, int skip, const char *out)
{
    struct rail_calib_run *runs = calloc(256, sizeof(*runs));
    struct rail_calibration cal;
    int nruns = 0, rc = 0;
    FILE *f;

    for (int s = 0; s < NSYS && rc == 0; s++) {
        char dir[1024];
        struct dirent **names;
        int n;
        if (s == skip)
            continue;
        snprintf(dir, sizeof(dir), "%s/nccl-tests/%s", data, k_systems[s]);
        n = scandir(dir, &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            char path[2048], err[512], *buf;
            size_t len;
            if (rc == 0 && strstr(names[i]->d_name, ".log") && nruns < 256) {
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
                rc = rail_read_file_bounded(path, 64u << 20, &buf, &len, err, sizeof(err));
                if (rc == 0) {
                    rc = rail_calib_log_parse(buf, len, path, NULL, &runs[nruns], err, sizeof(err));
                    free(buf);
                }
                if (rc < 0)
                    fprintf(stderr, "calib_eval: %s\n", err);
                else
                    nruns++;
            }
            free(names[i]);
        }
        if (n > 0)
            free(names);
    }
    if (rc == 0)
        rc = rail_calib_from_runs(runs, nruns, &cal);
    free(runs);
    if (rc < 0)
        return rc;
    f = fopen(out, "w");
    rc = f ? rail_calib_write(&cal, "calib_eval", f) : -errno;
    if (f)
        fclose(f);
    rail_calib_free(&cal);
    return rc;
}

/* The tuner's choice among the offered pairs (index into alts), NCCL's default when none. */
static int tuner_choice(struct rail_tuner *t, const struct meas **alts, int n, int nccl)
{
    float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            table[a][p] = NCCL_ALGO_PROTO_IGNORE;
    for (int i = 0; i < n; i++) {
        float v = rail_model_nccl_time(&t->model, alts[i]->coll, alts[i]->algo, alts[i]->proto,
                                       alts[i]->bytes, 1);
        table[alts[i]->algo][alts[i]->proto] = v > 0.0f ? v : 1e9f;
    }
    rail_tuner_apply(t, alts[0]->coll, alts[0]->bytes, 1, 0, table, NULL);
    for (int i = 0; i < n; i++)
        if (table[alts[i]->algo][alts[i]->proto] == 0.0f)
            return i;
    return nccl;
}

int main(int argc, char **argv)
{
    const char *data = RAIL_FIXTURES "/tuner-data";
    char csv[1024], tmp[] = "/tmp/calib_eval_XXXXXX";
    int details = 0, fd;
    double sum_ratio = 0.0, worst_ratio = 0.0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--details") == 0)
            details = 1;
        else {
            fprintf(stderr, "usage: calib_eval [--data DIR] [--details]\n");
            return 2;
        }
    }
    snprintf(csv, sizeof(csv), "%s/measurements.csv", data);
    if (load_csv(csv) < 0 || (fd = mkstemp(tmp)) < 0)
        return 1;
    close(fd);
    printf("%-14s %5s %6s %10s %10s %10s %8s\n", "held out", "nodes", "sets", "NCCL", "model",
           "calibrated", "cal/NCCL");
    for (int s = 0; s < NSYS; s++) {
        struct rail_topo *topo = calloc(1, sizeof(*topo));
        struct rail_tuner *tcal = NULL, *tmod = NULL;
        struct rail_tuner_opts o = {.lenient = 0, .rules_path = NULL};
        char err[512], path[1024];
        double r_nccl = 0, r_mod = 0, r_cal = 0;
        int sets = 0, nnodes = 0;

        snprintf(path, sizeof(path), "%s/topo/%s.xml", data, k_systems[s]);
        if (rail_topo_load_nccl_xml(path, topo, err, sizeof(err)) < 0 &&
            rail_topo_load_profile("aws-p5", topo, err, sizeof(err)) < 0) {
            fprintf(stderr, "calib_eval: no topology for %s: %s\n", k_systems[s], err);
            return 1;
        }
        if (write_calibration(data, s, tmp) < 0)
            return 1;
        for (int i = 0; i < g_nrows; i++)
            if (g_rows[i].sys == s)
                nnodes = g_rows[i].nnodes;
        o.topo = topo;
        o.calib_path = tmp;
        if (rail_tuner_create(&tcal, 0, (size_t)nnodes, (size_t)nnodes, NULL, &o) < 0)
            return 1;
        o.calib_path = "";
        if (rail_tuner_create(&tmod, 0, (size_t)nnodes, (size_t)nnodes, NULL, &o) < 0)
            return 1;
        /* One set per (collective, size) of the held-out system. */
        for (int i = 0; i < g_nrows; i++) {
            const struct meas *alts[16], *r = &g_rows[i];
            int n = 0, best = 0, nccl = 0, dup = 0, c_cal, c_mod;
            float nbest = -1.0f;
            if (r->sys != s)
                continue;
            for (int k = 0; k < i && !dup; k++)
                dup =
                    g_rows[k].sys == s && g_rows[k].coll == r->coll && g_rows[k].bytes == r->bytes;
            if (dup)
                continue;
            for (int k = i; k < g_nrows && n < 16; k++)
                if (g_rows[k].sys == s && g_rows[k].coll == r->coll && g_rows[k].bytes == r->bytes)
                    alts[n++] = &g_rows[k];
            if (n < 2)
                continue;
            for (int k = 0; k < n; k++) {
                float t = rail_model_nccl_time(&tmod->model, r->coll, alts[k]->algo, alts[k]->proto,
                                               r->bytes, 1);
                if (alts[k]->time_us < alts[best]->time_us)
                    best = k;
                if (t >= 0.0f && (nbest < 0.0f || t < nbest)) {
                    nbest = t;
                    nccl = k;
                }
            }
            c_cal = tuner_choice(tcal, alts, n, nccl);
            c_mod = tuner_choice(tmod, alts, n, nccl);
            sets++;
            r_nccl += alts[nccl]->time_us / alts[best]->time_us - 1.0;
            r_mod += alts[c_mod]->time_us / alts[best]->time_us - 1.0;
            r_cal += alts[c_cal]->time_us / alts[best]->time_us - 1.0;
            if (details)
                printf("  %s %12llu best %s/%s  NCCL %s/%s  model %s/%s  calibrated %s/%s\n",
                       rail_coll_name(r->coll), r->bytes, rail_algo_name(alts[best]->algo),
                       rail_proto_name(alts[best]->proto), rail_algo_name(alts[nccl]->algo),
                       rail_proto_name(alts[nccl]->proto), rail_algo_name(alts[c_mod]->algo),
                       rail_proto_name(alts[c_mod]->proto), rail_algo_name(alts[c_cal]->algo),
                       rail_proto_name(alts[c_cal]->proto));
        }
        if (sets) {
            double ratio = r_nccl > 0 ? r_cal / r_nccl : 0.0;
            printf("%-14s %5d %6d %10.4f %10.4f %10.4f %8.3f\n", k_systems[s], nnodes, sets,
                   r_nccl / sets, r_mod / sets, r_cal / sets, ratio);
            sum_ratio += ratio;
            if (ratio > worst_ratio)
                worst_ratio = ratio;
        }
        rail_tuner_destroy(tcal);
        rail_tuner_destroy(tmod);
        free(topo);
    }
    unlink(tmp);
    printf("mean regret ratio calibrated/NCCL over systems: %.3f, worst system: %.3f "
           "(must-show: each at most 0.3)\n",
           sum_ratio / NSYS, worst_ratio);
    return 0;
}
