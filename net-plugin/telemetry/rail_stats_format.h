/* SPDX-License-Identifier: Apache-2.0 */
/* Snapshots of the multi-rail telemetry (rail_stats.h) and their pure formatters and reader:
 * snapshot -> JSON (json-c), Prometheus text exposition format, a human table, the INFO summary
 * line; JSON text -> snapshot. No I/O except rail_stats_load_file. */
#ifndef NCCL_RAIL_RAIL_STATS_FORMAT_H
#define NCCL_RAIL_RAIL_STATS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry/rail_stats_types.h"

#define RAIL_STATS_JSON_FORMAT  "nccl-rail-stats" /* the "format" member of a JSON snapshot */
#define RAIL_STATS_JSON_VERSION 1

struct rail_stats_rail_snap {
    char dev[RAIL_STATS_NAME_LEN]; /* "" = the connection's device */
    uint64_t bytes, messages, stripes, errors, failovers, rejoins;
    uint64_t rate;   /* bytes per microsecond */
    uint32_t weight; /* 1/1024 */
    bool up;
};

struct rail_stats_conn_snap {
    uint64_t id;
    enum rail_stats_dir dir;
    char dev[RAIL_STATS_NAME_LEN];
    char peer[RAIL_STATS_PEER_LEN];
    uint64_t created_unix_ms;
    uint64_t striped_messages;
    int nrails; /* 1..RAIL_STATS_MAX_RAILS */
    struct rail_stats_rail_snap rail[RAIL_STATS_MAX_RAILS];
};

/* Sums over the rails of a connection, or over closed connections. messages counts whole
 * messages plus striped ones (each once). */
struct rail_stats_totals {
    uint64_t connections; /* closed totals only (1 for a connection's own totals) */
    uint64_t bytes, messages, stripes, errors, failovers, rejoins;
};

struct rail_stats_snapshot {
    int64_t pid;
    uint64_t time_unix_ms;
    uint64_t interval_ms; /* of the writer that wrote it, 0 when none */
    int nconns;
    struct rail_stats_conn_snap *conns; /* malloc'd, nconns entries */
    struct rail_stats_totals closed;    /* connections closed so far */
};

/* A snapshot is taken with rail_stats_snapshot_take (rail_stats.h); this frees what it holds. */
void rail_stats_snapshot_free(struct rail_stats_snapshot *s);

/* Per-connection sums over its rails; each saturates at UINT64_MAX instead of wrapping (the
 * counters may come from a file). */
void rail_stats_conn_totals(const struct rail_stats_conn_snap *c, struct rail_stats_totals *out);
/* How old a timestamp is at now: "12.3 s old", or "4.0 s in the future (clocks differ?)". */
void rail_stats_age_text(uint64_t now_unix_ms, uint64_t then_unix_ms, char *buf, size_t len);
const char *rail_stats_dir_name(enum rail_stats_dir dir); /* "send" / "recv" */

/* Formatters: *out receives a malloc'd NUL-terminated text (free it). 0, -EINVAL (NULL
 * arguments) or -ENOMEM. JSON is written with json-c, compact (no spaces), one line + "\n". */
int rail_stats_format_json(const struct rail_stats_snapshot *s, char **out);
int rail_stats_format_prometheus(const struct rail_stats_snapshot *s, char **out);
/* The table `nccl-rail stats` prints. */
int rail_stats_format_table(const struct rail_stats_snapshot *s, char **out);

/* The INFO line logged at close (without the "RAIL " prefix); truncated to len. */
void rail_stats_summary_line(const struct rail_stats_conn_snap *c, uint64_t now_unix_ms, char *buf,
                             size_t len);

/* "%p" -> pid, "%%" -> "%" ; any other '%' is kept. 0, -EINVAL (empty or NULL pattern) or
 * -ENAMETOOLONG (does not fit len). */
int rail_stats_expand_path(const char *pattern, long pid, char *out, size_t len);

/* Parse a JSON snapshot (the format above; unknown members are ignored, missing or mistyped ones
 * are errors). 0, or -EINVAL with what and where in err (out is then empty), or -ENOMEM. */
int rail_stats_parse_json(const char *text, struct rail_stats_snapshot *out, char *err,
                          size_t errlen);
/* Read path and parse it. -ENOENT etc. from the read, -EPROTONOSUPPORT when the file is in the
 * Prometheus text format, otherwise as rail_stats_parse_json; err names the file. */
int rail_stats_load_file(const char *path, struct rail_stats_snapshot *out, char *err,
                         size_t errlen);

#endif
