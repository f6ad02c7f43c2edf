/* SPDX-License-Identifier: Apache-2.0 */
/* The trained tuner table (docs/cost-model.md §12): what the measurements taught, as data.
 *
 * One text file, tuner-plugin/model/model_table.txt, written by `bench/tuner_eval --fit` and
 * embedded in the build (generated model_table_data.c). It holds, per network family and GPU
 * generation:
 *  - coef:   the step model's coefficients (cost_model_steps.c);
 *  - cover:  the shapes (collective, ranks per node, node count, size range) the measurements
 *            behind the table were taken at: the tuner changes NCCL's choice only near them;
 *  - resid:  log(measured / step model) of every training point, interpolated in log(nodes) for
 *            nearby shapes (cost_model_measured.c);
 *  - margin: the risk margin a change of NCCL's choice must clear, by distance from the nearest
 *            covered shape.
 * A new platform is new lines here plus a refit, not new code.
 *
 * Format, one record per line ('#' comments and blank lines skipped):
 *   nccl-rail-model-table 1
 *   margin M0 SLOPE OUTSIDE FADE_NODES FADE_BYTES
 *   coef FAMILY GEN NAME=VALUE ...
 *   cover FAMILY GEN COLL RPN NNODES BYTES_MIN BYTES_MAX [ALGO PROTO]
 *   resid FAMILY GEN COLL ALGO PROTO RPN NNODES BYTES LOG_RATIO
 * FAMILY: node (inside one node), efa, ib (InfiniBand and RoCE); GEN: volta, ampere, hopper,
 * blackwell. Pure parser and writer; the embedded copy is parsed once per process. */
#ifndef NCCL_RAIL_MODEL_TABLE_H
#define NCCL_RAIL_MODEL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nccl/nccl_tuner.h"

#define RAIL_MODEL_TABLE_FORMAT  "nccl-rail-model-table"
#define RAIL_MODEL_TABLE_VERSION 1
#define RAIL_MODEL_TABLE_MAX     (4u << 20) /* bytes of table text */

/* Network families: what is between the nodes (or nothing, inside one node). */
enum rail_family { RAIL_FAM_NODE, RAIL_FAM_EFA, RAIL_FAM_IB, RAIL_FAM_COUNT };

/* The step model's coefficients (cost_model_steps.c documents each). */
enum rail_step_param {
    RAIL_STEP_AI_LL, /* µs per NVLink (intra-node) ring step, per protocol */
    RAIL_STEP_AI_LL128,
    RAIL_STEP_AI_SIMPLE,
    RAIL_STEP_AN_LL, /* µs per network ring step, per protocol */
    RAIL_STEP_AN_LL128,
    RAIL_STEP_AN_SIMPLE,
    RAIL_STEP_BASE_LL, /* µs per collective, per protocol */
    RAIL_STEP_BASE_LL128,
    RAIL_STEP_BASE_SIMPLE,
    RAIL_STEP_EI_LL, /* share of the NVLink bandwidth a protocol reaches */
    RAIL_STEP_EI_LL128,
    RAIL_STEP_EI_SIMPLE,
    RAIL_STEP_ENET_LL, /* share of the NIC bandwidth, every ring step on the network */
    RAIL_STEP_ENET_LL128,
    RAIL_STEP_ENET_SIMPLE,
    RAIL_STEP_ENVL_LL, /* the same as the NVLink share of the steps grows (many ranks/node) */
    RAIL_STEP_ENVL_LL128,
    RAIL_STEP_ENVL_SIMPLE,
    RAIL_STEP_TREE_LAT,   /* a tree level's network latency, in network ring steps */
    RAIL_STEP_TREE_ILAT,  /* a tree's intra-node chain step, in NVLink ring steps */
    RAIL_STEP_TREE_BW_LL, /* tree network bandwidth, relative to a ring's, per protocol */
    RAIL_STEP_TREE_BW_LL128,
    RAIL_STEP_TREE_BW_SIMPLE,
    RAIL_STEP_TREE_F2,      /* bytes a node moves per AllReduce byte in a 2-node tree */
    RAIL_STEP_NVLSTREE_LAT, /* µs of an NVLSTree's NVLS part */
    RAIL_STEP_NVLSTREE_BW,  /* NVLSTree network bandwidth, relative to a ring's Simple */
    RAIL_STEP_PAT_BASE,     /* µs */
    RAIL_STEP_PAT_LAT,      /* µs x ranks^PAT_POW */
    RAIL_STEP_PAT_POW,
    RAIL_STEP_PAT_BW, /* relative to a ring's Simple */
    RAIL_STEP_NPARAMS
};

struct rail_step_coef {
    float v[RAIL_STEP_NPARAMS];
};

/* A shape the table's measurements were taken at. */
/* A shape the table's measurements were taken at. algo/proto name the one pair a published set
 * measured there (its alternatives are records of their own); RAIL_COVER_ANY for a training
 * system, whose measured pairs are its residual rows. */
#define RAIL_COVER_ANY 0xff
struct rail_table_cover {
    uint8_t family, gen, coll;
    uint8_t algo, proto;
    int rpn, nnodes;
    uint64_t bytes_min, bytes_max;
};

/* log(measured / step model) at one training point. */
struct rail_table_resid {
    uint8_t family, gen, coll, algo, proto;
    int rpn, nnodes;
    uint64_t bytes;
    float log_ratio;
};

struct rail_model_table {
    float margin0;      /* risk margin at a covered shape (0.05: 5% predicted gain) */
    float margin_slope; /* added per octave of nodes or ranks per node from the nearest one */
    float margin_out;   /* outside the covered range (the prior model must agree too) */
    float fade_nodes;   /* a residual fades as exp(-octaves / fade) away from its node count */
    float fade_bytes;   /* ... and away from its measured sizes */
    bool has_coef[RAIL_FAM_COUNT][NCCL_NUM_COMPCAPS];
    struct rail_step_coef coef[RAIL_FAM_COUNT][NCCL_NUM_COMPCAPS];
    int ncover;
    struct rail_table_cover *cover;
    int nresid; /* sorted by (family, gen, coll, algo, proto, rpn, nnodes, bytes) */
    struct rail_table_resid *resid;
};

/* Parse table text held in memory ("name:line: reason" on error). 0, or -EINVAL/-ENOMEM with
 * out empty. */
int rail_model_table_parse(const char *buf, size_t len, const char *name,
                           struct rail_model_table *out, char *err, size_t errlen);
/* The file text; 0 or -EIO. */
int rail_model_table_write(const struct rail_model_table *t, const char *comment, FILE *f);
void rail_model_table_free(struct rail_model_table *t);
/* Deep copy (dst is overwritten); 0 or -ENOMEM. */
int rail_model_table_copy(struct rail_model_table *dst, const struct rail_model_table *src);
/* Append records (the fitter builds tables this way); 0 or -ENOMEM. Call sort before use. */
int rail_model_table_add_cover(struct rail_model_table *t, const struct rail_table_cover *c);
int rail_model_table_add_resid(struct rail_model_table *t, const struct rail_table_resid *r);
void rail_model_table_sort(struct rail_model_table *t);

/* [lo, hi) of the residual rows of one series (family, gen, coll, algo, proto, rpn). */
void rail_model_table_series(const struct rail_model_table *t, int family, int gen, int coll,
                             int algo, int proto, int rpn, int *lo, int *hi);

/* The table embedded in this build, parsed at the first call (thread-safe). Never NULL: a table
 * that fails to parse (a build defect) is reported once and replaced by an empty one, under
 * which the tuner leaves NCCL's choices alone. */
const struct rail_model_table *rail_model_table_builtin(void);
/* The embedded text (generated from tuner-plugin/model/model_table.txt). */
extern const char rail_model_table_text[];
extern const size_t rail_model_table_text_len;

const char *rail_family_name(int family); /* "node", "efa", "ib", "?" */
const char *rail_gen_name(int gen);       /* "volta" ... "blackwell", "?" */
const char *rail_step_param_name(int p);  /* "ai_ll", ... */
/* The prior of a coefficient (the fitter starts there and is pulled towards it) and the range a
 * table may hold. */
float rail_step_param_prior(int p);
void rail_step_param_range(int p, float *lo, float *hi);

#endif
