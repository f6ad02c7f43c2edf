/* SPDX-License-Identifier: Apache-2.0 */
/* The operator's rules file (NCCL_TUNER_CONFIG_FILE): NCCL's example-tuner CSV format,
 *   collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff
 *   [,chunkSize]]] (chunkSize: the project's extension, answered by tuner v6 getChunkSize)
 * parsed strictly (every malformed line is an error naming file, line and reason) and matched
 * first-rule-wins. The format and the project's extensions are documented in docs/rules.md. */
#ifndef NCCL_RAIL_RULES_H
#define NCCL_RAIL_RULES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl/nccl_common.h"
#include "nccl/nccl_tuner.h"
#include "nccl_names.h"

#define RAIL_RULES_MAX_LINE   1024        /* characters per line, without the line ending */
#define RAIL_RULES_MAX_RULES  100000      /* rules per file */
#define RAIL_RULES_MAX_FILE   (64u << 20) /* bytes read at most */
#define RAIL_RULES_MAX_LINES  1000000     /* lines per file, blank and comment lines included */
#define RAIL_RULE_ANY         (-1)        /* wildcard for nnodes, nranks, pipe_ops, reg_buff */
#define RAIL_RULE_KEEP        (-1)        /* nchannels: keep NCCL's channel count */
#define RAIL_RULE_MAX_CHANNEL 64
#define RAIL_RULE_MIN_CHUNK   512
#define RAIL_RULE_MAX_CHUNK   (1 << 30)

struct rail_rule {
    int coll;                      /* ncclFunc_t, ncclFuncBroadcast..ncclFuncAllReduce */
    int algo;                      /* NCCL_ALGO_* */
    int proto;                     /* NCCL_PROTO_* */
    int nchannels;                 /* RAIL_RULE_KEEP or 1..RAIL_RULE_MAX_CHANNEL */
    uint64_t min_bytes, max_bytes; /* inclusive range, min_bytes <= max_bytes */
    int nnodes, nranks;            /* RAIL_RULE_ANY or >= 1 */
    int pipe_ops;                  /* RAIL_RULE_ANY or >= 1 */
    int reg_buff;                  /* RAIL_RULE_ANY, 0 or 1 */
    int chunk_bytes;               /* RAIL_RULE_KEEP or the chunk size NCCL 2.30 should use */
    int line;                      /* 1-based line in the file; 0 when parsed from a string */
};

struct rail_rules {
    int n;
    struct rail_rule *rules; /* n rules in file order */
    unsigned coll_mask;      /* bit c set when some rule has coll == c (fast reject in match) */
    int skipped;             /* lenient mode: malformed lines that were skipped */
    char path[PATH_MAX];     /* the file the rules came from ("" when none) */
};

/* Parse one line (no line ending; a trailing '\r' is an error here, rail_rules_load strips it).
 * Returns 1 and fills *out for a rule; 0 for a blank line, a comment or the column-header line;
 * -EINVAL with the reason in err (without file or line) otherwise. out->line is set to 0. */
int rail_rules_parse_line(const char *line, struct rail_rule *out, char *err, size_t errlen);

/* Load a rules file. out is always initialised (empty on failure) and must be released with
 * rail_rules_free. Returns 0, or a negative errno with "path:line: reason" (or "path: reason")
 * in err:
 *   - strict (lenient=false): the first malformed line fails the load (-EINVAL); a missing or
 *     unreadable file fails it (-ENOENT, -EACCES, -EISDIR, ...);
 *   - lenient: each malformed line is skipped with a WARN naming file, line and reason (counted
 *     in out->skipped); a missing or unreadable file gives a WARN and no rules, and returns 0.
 * -ENOMEM fails in both modes. The default ./nccl_tuner.conf (missing = fine) is the caller's
 * business: call this only when that file exists. */
int rail_rules_load(const char *path, bool lenient, struct rail_rules *out, char *err,
                    size_t errlen);

/* The first rule (in file order) matching the collective, the size (inclusive range) and the
 * communicator/call parameters, or NULL. No allocation, no I/O; a linear scan. */
const struct rail_rule *rail_rules_match(const struct rail_rules *r, int coll, size_t nbytes,
                                         int nnodes, int nranks, int pipe_ops, int reg_buff);

/* The chunk size a rule names for (coll, nbytes, shape) run as (algo, proto): the first rule
 * matching them (and not depending on numPipeOps or regBuff, which getChunkSize is not told)
 * gives its chunkSize; RAIL_RULE_KEEP when none does. */
int rail_rules_chunk(const struct rail_rules *r, int coll, size_t nbytes, int nnodes, int nranks,
                     int algo, int proto);

void rail_rules_free(struct rail_rules *r);

/* One rule as a canonical 10-field line ("allreduce,0,65536,tree,simple,2,1,-1,-1,1"; 11 with a
 * chunk size), which
 * rail_rules_parse_line reads back to the same rule. snprintf semantics. */
int rail_rule_format(const struct rail_rule *rule, char *buf, size_t len);

#endif
