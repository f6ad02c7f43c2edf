/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail explain --svg: a map of the tuner's chosen (algorithm, protocol) over message size
 * (x, log2) and node count (y), one panel per collective, one colour per pair, a legend, and a
 * mark on cells decided by the calibration (hollow where it rests on job measurements) or the
 * rules file. Plain SVG text. */
#ifndef NCCL_RAIL_EXPLAIN_SVG_H
#define NCCL_RAIL_EXPLAIN_SVG_H

#include <stdio.h>

#include "abi/tuner_core.h"

#define EXPLAIN_SVG_MAX_ROWS 24
#define EXPLAIN_SVG_FROM_JOB 0x80

struct explain_svg_map {
    const char *title;
    int ncolls, colls[RAIL_NUM_COLLS];
    int min_log2, max_log2;
    int nrows, nnodes[EXPLAIN_SVG_MAX_ROWS];
    /* choice[coll panel][row][size - min_log2]: candidate or -1; from: enum rail_decision_from,
     * with EXPLAIN_SVG_FROM_JOB set where the calibrated times include job measurements */
    signed char choice[RAIL_NUM_COLLS][EXPLAIN_SVG_MAX_ROWS][64];
    unsigned char from[RAIL_NUM_COLLS][EXPLAIN_SVG_MAX_ROWS][64];
};

/* Colour of a candidate as "#rrggbb": hue per algorithm, lightness per protocol. */
void explain_svg_colour(int cand, char out[8]);
int explain_svg_write(FILE *f, const struct explain_svg_map *m);

#endif
