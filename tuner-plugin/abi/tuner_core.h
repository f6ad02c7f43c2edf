/* SPDX-License-Identifier: Apache-2.0 */
/* The tuner's per-communicator state and its version-independent entry points.
 * tuner_exports.c maps the NCCL ABI versions onto these; the CLI and tests use them directly. */
#ifndef NCCL_RAIL_TUNER_CORE_H
#define NCCL_RAIL_TUNER_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "measure/calibration.h"
#include "decide/chunk_bounds.h"
#include "model/cost_model.h"
#include "decide/decision.h"
#include "decide/rules.h"
#include "nccl/nccl_common.h"

struct rail_explore;

struct rail_tuner {
    uint64_t comm_id;
    struct rail_comm_shape shape;
    bool model_active; /* topology known and model confident */
    bool rules_active;
    bool user_forced; /* NCCL_ALGO or NCCL_PROTO set: v2 (which cannot see them) stays hands-off */
    struct rail_model model;
    /* The topology the model was built from: the caller's (opts->topo, which must outlive the
     * context) or the process-wide discovery cache. */
    const struct rail_topo *topo;
    struct rail_decision_table table;
    struct rail_rules rules;
    bool calib_active; /* some cell of the table was ranked from the calibration */
    int calib_too_far; /* calibrated pairs too far beyond their node counts to apply */
    /* NCCL_RAIL_CALIBRATION_FILE, parsed once per process and shared read-only by every
     * context (calib_cache.h); NULL when none or bad. */
    const struct rail_calibration *calib;
    /* NCCL_RAIL_EXPLORE (explore.h): NULL when off (the default), or refused for this context. */
    struct rail_explore *explore;
    /* NCCL's buffer sizes (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE) bounding every
     * chunk size answered (chunk_bounds.h), and the (algo, proto) pairs whose clamp was already
     * reported (bit algo * NCCL_NUM_PROTOCOLS + proto; one WARN each per communicator). */
    struct rail_chunk_buffs buffs;
    unsigned chunk_warned;
    /* Per collective, the trained node counts a ranking was carried from past the trained
     * range (extrapolate.h; 0 when nothing is carried), for explain. */
    int extrap_from[RAIL_NUM_COLLS][2];
    /* The trained node counts whose ring protocols were read at the same bytes per rank
     * (docs/cost-model.md §12.6), ascending; 0 for none. */
    int ring_from[RAIL_NUM_COLLS][2];
};

struct rail_tuner_opts {
    const struct rail_topo *topo;         /* NULL: discover (process-wide cache) */
    const char *rules_path;               /* NULL: NCCL_TUNER_CONFIG_FILE or ./nccl_tuner.conf */
    int lenient;                          /* -1: NCCL_RAIL_CONFIG_LENIENT */
    ncclTunerConstants_v5_t *constants;   /* v5/v6: NCCL's constants (IN/OUT), else NULL */
    const struct rail_model_table *table; /* trained table; NULL: the one embedded in the build */
    const char *calib_path;               /* NULL: NCCL_RAIL_CALIBRATION_FILE; "" none */
};

/* Build the tuner for one communicator. -EINVAL when the rules file is malformed (strict mode):
 * the caller fails NCCL's init. An unknown topology is not an error: the model stays inactive.
 * A calibration file (opts->calib_path or NCCL_RAIL_CALIBRATION_FILE) re-ranks the decision
 * table at this point only; a bad one WARNs and the model's table is used. */
int rail_tuner_create(struct rail_tuner **out, uint64_t comm_id, size_t nranks, size_t nnodes,
                      const ncclNvlDomainInfo_v5_t *nvl, const struct rail_tuner_opts *opts);
/* Free a context from rail_tuner_create. A pointer that is not a live context (a second destroy
 * of the same communicator) is not touched: one WARN, -ENOENT. NULL: 0. */
int rail_tuner_destroy(struct rail_tuner *t);

/* The tuner plugin's first INFO line (common/version.h's banner), naming the trained table in use
 * (NCCL_RAIL_MODEL_TABLE); NCCL's logger is installed before the table is looked up, so that what
 * reading a table file logs reaches NCCL's log. */
void rail_tuner_banner(ncclDebugLogger_t logger, int abi);

/* Cost-table tuning (v3..v6). Never writes a value >= 0 into an IGNORE entry.
 * reg_buff: 0/1 as NCCL passes it (v4+), -1 when the ABI version does not say (v3): then only
 * rules with a wildcard regBuff match. */
void rail_tuner_apply(struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, int reg_buff,
                      float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int *nchannels);

/* v2: choose (algorithm, protocol) subject to NCCL's support flags; both stay untouched
 * (NCCL_ALGO_UNDEF / NCCL_PROTO_UNDEF from NCCL) when the tuner has no opinion. */
void rail_tuner_choose_v2(struct rail_tuner *t, int coll, size_t nbytes, int collnet_support,
                          int nvls_support, int num_pipe_ops, int *algo, int *proto,
                          int *nchannels);

/* v6/v7 getChunkSize: *chunk_size (NCCL's value on entry) is set only where the operator's rules
 * file names a chunk size for this call run as (algo, proto) (docs/rules.md); the model never
 * answers (no measurement it was trained on varied the chunk size), so NCCL's own value stands
 * everywhere else. Every answer is clamped to what NCCL's buffers hold for (coll, algo, proto)
 * and made a multiple NCCL accepts (chunk_bounds.h); a rule asking for more gets one WARN per
 * (algo, proto) and communicator. Returns 1 when it answered. */
int rail_tuner_chunk_size(struct rail_tuner *t, int coll, size_t nbytes, int algo, int proto,
                          size_t *chunk_size);

/* Where a decision came from (explain). */
enum rail_decision_from {
    RAIL_FROM_NCCL = 0,    /* the tuner has no opinion: NCCL's own choice stands */
    RAIL_FROM_MODEL,       /* the cost model's ranking */
    RAIL_FROM_CALIBRATION, /* the ranking used NCCL_RAIL_CALIBRATION_FILE times */
    RAIL_FROM_RULES,       /* a rule of the rules file */
};
const char *rail_decision_from_name(enum rail_decision_from f); /* "model", "calibration", ... */

/* What rail_tuner_apply decides when NCCL offers every pair (regBuff 0): the candidate
 * (algo * NCCL_NUM_PROTOCOLS + proto) or -1, its channel suggestion and where it came from. */
int rail_tuner_explain(struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, int *nch,
                       enum rail_decision_from *from);

/* For a decision from the calibration (rail_tuner_explain): whether job measurements (the rail
 * profiler's, NCCL Inspector's; "# source: job") are among the times it was ranked on. */
bool rail_tuner_from_job(const struct rail_tuner *t, int coll, size_t nbytes);

/* For a calibrated decision at a measured point: which rule decided (enum rail_calib_rule,
 * calib_apply.h; rail_calib_rule_name) and the spread of the measured pairs' calibrated/model
 * ratios there. RAIL_CALIB_RULE_NONE elsewhere. */
int rail_tuner_calib_rule(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops,
                          float *spread);

/* Which strict do-no-harm rule decided the model's cell of (coll, nbytes), as one phrase
 * ("platform class not in training: NCCL's choice kept", "extrapolated from 32-128 nodes"), or
 * "" where none did; returns enum rail_dt_why. */
int rail_tuner_why(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops, char *buf,
                   size_t len);

/* The predicted times (µs, < 0 impossible) the decision table ranked for one size: the model's,
 * or the calibrated ones when a calibration applies (calib_apply.h). */
void rail_tuner_times(const struct rail_tuner *t, int coll, size_t nbytes, int num_pipe_ops,
                      float out[RAIL_DT_CANDIDATES]);

/* Discovery cache used when opts->topo is NULL: 0 and a pointer valid for the process lifetime,
 * or a negative errno (the failure is cached too, so every communicator agrees). */
int rail_tuner_topology(const struct rail_topo **out, char *why, size_t whylen);

#endif
