/* SPDX-License-Identifier: Apache-2.0 */
/* Forced-pair measurements (test/fixtures/tuner-data: measurements.csv and topo/<system>.xml)
 * loaded for the tuner's benchmarks: the rows sorted by (system, collective, nodes, ranks,
 * bytes, pair), one topology per system. */
#ifndef NCCL_RAIL_BENCH_TUNER_DATA_H
#define NCCL_RAIL_BENCH_TUNER_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo.h"

#define TD_MAX_ROWS    8192
#define TD_MAX_SYSTEMS 32
#define TD_NAME_LEN    48

struct td_row {
    int sys; /* index into td.names */
    int coll, nranks, nnodes, algo, proto;
    size_t bytes;
    double time_us;
};

struct td {
    int nrows, nsys;
    struct td_row rows[TD_MAX_ROWS];
    char names[TD_MAX_SYSTEMS][TD_NAME_LEN];
    int lo[TD_MAX_SYSTEMS], hi[TD_MAX_SYSTEMS]; /* each system's rows */
    struct rail_topo topo[TD_MAX_SYSTEMS];
};

/* Loads dir/measurements.csv and dir/topo/<system>.xml. 0, or -1 with a message on stderr. */
int td_load(const char *dir, struct td *d);
/* A system of its own from measured rows (coll, algo, proto, nranks, nnodes, bytes, time_us) and
 * its topology, for `nccl-rail fit`: 0, or -1 with the reason in err (too many systems or rows).
 * Call td_finish once every system is added. */
int td_add_system(struct td *d, const char *name, const struct rail_topo *topo,
                  const struct td_row *rows, int n, char *err, size_t errlen);
/* Sorts the rows and indexes each system's (as td_load does). */
void td_finish(struct td *d);

/* Rows a and b are the same measured point (system, collective, shape, size). */
bool td_same_point(const struct td_row *a, const struct td_row *b);
/* The end of the point starting at row i. */
int td_point_end(const struct td *d, int i);
/* The end of the (system, collective, shape) series starting at row i. */
int td_shape_end(const struct td *d, int i);
/* The system's index by name, or -1. */
int td_find(const struct td *d, const char *name);

#endif
