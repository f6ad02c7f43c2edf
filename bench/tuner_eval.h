/* SPDX-License-Identifier: Apache-2.0 */
/* tuner_eval's parts: replaying measured points through the tuner (tuner_eval_run.c) and the
 * held-out evaluations (tuner_eval_cv.c). */
#ifndef NCCL_RAIL_BENCH_TUNER_EVAL_H
#define NCCL_RAIL_BENCH_TUNER_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model_table.h"
#include "tuner_data.h"
#include "tuner_fit.h"

struct sys_result {
    int n;
    double proj[TD_MAX_ROWS / 2], nccl[TD_MAX_ROWS / 2]; /* regret per point */
};

/* Another tuner in the place of this one (bench/peer_tuner.c): per (system, collective, shape)
 * open() gives its context for that communicator (NULL: it leaves NCCL's choice everywhere),
 * choose() is offered the same cost table as this tuner would be and may change it. */
struct eval_peer {
    void *self;
    void *(*open)(void *self, size_t nranks, size_t nnodes);
    void (*choose)(void *self, void *ctx, int coll, size_t bytes,
                   float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]);
    void (*close)(void *self, void *ctx);
};

struct eval_opts {
    const char *data;
    const struct td *d;
    const struct rail_model_table *table; /* NULL: the embedded one */
    const char *calib_path;               /* NULL: none */
    const struct eval_peer *peer;         /* NULL: this tuner chooses */
    struct sys_result res[TD_MAX_SYSTEMS];
};

/* Replays the systems in mask; fills e->res. 0, or -1. */
int eval_run(struct eval_opts *e, uint64_t mask);
/* One CSV line per (point, pair) on stdout. */
int eval_dump(struct eval_opts *e, uint64_t mask);
/* The same without the header line (eval_dump_header), for dumps in parts. */
void eval_dump_header(void);
int eval_dump_rows(struct eval_opts *e, uint64_t mask);
/* The per-system table of e->res. */
void eval_print(const struct eval_opts *e, uint64_t mask, const char *title);
/* The regression bounds of ctest tuner_regret on e->res (0 passed, 1 failed). */
int eval_check(const struct eval_opts *e, uint64_t mask);
/* The same with other bounds on the ratios to NCCL's regret (per-system mean, pooled mean, p90). */
int eval_check_bounds(const struct eval_opts *e, uint64_t mask, double per_system, double pooled,
                      double p90);

int eval_read_table(const char *path, struct rail_model_table *t);
int eval_write_table(const char *path, const struct rail_model_table *t);
void eval_print_coef(const struct rail_model_table *t, const char *label);

/* System s replayed with a table fitted on the other systems (cached): e->res[s]. 0, or -1. */
int eval_held_out(struct eval_opts *e, const struct fit_opts *fo, int s);
/* Leave one system out; with check, the held-out bounds (eval_check) must hold: 0 or 1. */
int eval_loso(struct eval_opts *e, const struct fit_opts *fo, bool check);
/* eval_dump of every system replayed with the table fitted without it (--loso --dump). */
int eval_loso_dump(struct eval_opts *e, const struct fit_opts *fo);
/* A refit (fitted) against a table (shipped): the same records, coefficients and residuals within
 * rounding. 0 when they match. */
int eval_check_table(const struct rail_model_table *fitted, const struct rail_model_table *shipped);
void eval_lono(struct eval_opts *e, const struct fit_opts *fo);
/* Returns the number of held-out systems where the calibration does worse than the held-out
 * table alone (printed as CHECK lines). */
int eval_calibrated(struct eval_opts *e, const struct fit_opts *fo);
int eval_check_calibrated_points(struct eval_opts *e);

double eval_mean(const double *v, int n);
double eval_p90(const double *v, int n);

#endif
