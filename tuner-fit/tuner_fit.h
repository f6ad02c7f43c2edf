/* SPDX-License-Identifier: Apache-2.0 */
/* Fits the trained tuner table (tuner-plugin/model/model_table.h) on forced-pair measurements:
 *  - per network family and GPU generation with enough points, the step model's coefficients by
 *    Levenberg-Marquardt on log(predicted / measured), centred per measured point (a decision
 *    only needs the pairs' ratios right) plus a small weight on the point's mean (the absolute
 *    level) and a pull towards each coefficient's prior;
 *  - the residual of every measured time against the fitted model;
 *  - the covered shapes, from the measurements and (optionally) the published sets
 *    (test/fixtures/measurements/published.csv) that validate the prior inside one node. */
#ifndef NCCL_RAIL_BENCH_TUNER_FIT_H
#define NCCL_RAIL_BENCH_TUNER_FIT_H

#include <stdio.h>

#include "model/model_table.h"
#include "tuner_data.h"

#define RAIL_FIT_MAX_PUBLISHED (16u << 20) /* bytes of a published-sets CSV */

struct fit_opts {
    double lambda;         /* weight of a point's mean log error */
    double prior_w;        /* weight of log(coefficient / prior) */
    int min_points;        /* points a family and generation needs to be fitted */
    const char *published; /* published.csv for cover records (NULL: none) */
    float margin[5];       /* margin0, slope, outside, fade_nodes, fade_bytes */
    FILE *log;             /* progress (NULL: quiet) */
};

void fit_opts_default(struct fit_opts *o);

/* The table fitted on the systems in mask. 0, or -1 (message on stderr). */
int tuner_fit(const struct td *d, uint64_t mask, const struct fit_opts *o,
              struct rail_model_table *out);

/* The family and GPU generation the model gives a system's topology across nodes. */
void tuner_fit_family(const struct td *d, int sys, int *family, int *gen);

#endif
