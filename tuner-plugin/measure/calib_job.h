/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration from production jobs: what the job-measurement readers produce (the rail
 * profiler's files, calib_prof.h; NCCL Inspector's Prometheus textfile, calib_prom.h, and JSON,
 * calib_inspector.h) and how those records become calibration rows (docs/calibration.md §7).
 *
 * A record is one collective as one rank saw it: (run, rank, sequence number) and the measured
 * (collective, algorithm, protocol, bytes, GPU time). A run is one communicator of one job
 * (its NCCL comm id, or Inspector's job id and communicator name) with its ranks and nodes.
 *
 * Merging (rail_job_merge):
 *  1. ranks: the records of one collective (run, collective, sequence number, pair, bytes) on
 *     every rank that wrote a file for the run are one instance, whose time is the slowest
 *     rank's; a collective that some of those ranks did not record (the ring's window edges, a
 *     pair or size the ranks disagree on) is left out. Inspector's Prometheus lines are already
 *     means per rank and bucket: one instance per bucket, the slowest rank's mean;
 *  2. instances: per (run, collective, pair, bytes), the median instance time;
 *  3. runs: per calibration key (collective, pair, ranks, nodes, bytes) the faster run wins,
 *     as repeated nccl-tests runs do (calibration.h);
 *  4. sizes: a (collective, pair, ranks, nodes) series with more than RAIL_CALIB_MAX_POINTS
 *     distinct sizes (inference with variable token counts) is merged into log-spaced buckets,
 *     each point weighted by its collectives (calib_thin.h), so a calibration is always made.
 * Deterministic (sorted, no hashing order leaks into the result). Bounded: at most
 * RAIL_JOB_MAX_RECORDS records and RAIL_JOB_MAX_RUNS runs per command. */
#ifndef NCCL_RAIL_CALIB_JOB_H
#define NCCL_RAIL_CALIB_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "measure/calib_thin.h"
#include "measure/calibration.h"

#define RAIL_JOB_MAX_RECORDS (1u << 22) /* 128 MiB of records */
#define RAIL_JOB_MAX_RUNS    65536
/* NCCL numbers each communicator's collectives of one kind from 0: 2^48 is beyond any job (9
 * years at a million collectives a second); a larger one is a corrupt file. */
#define RAIL_JOB_MAX_SEQ ((1ull << 48) - 1)

enum rail_job_source {
    RAIL_JOB_SRC_PROFILER = 0, /* per collective, every rank's file: complete instances only */
    RAIL_JOB_SRC_INSPECTOR_JSON,
    RAIL_JOB_SRC_INSPECTOR_PROM, /* per-rank means: no sequence numbers, no completeness */
};

struct rail_job_run {
    uint64_t key; /* identity hash (rail_job_key) */
    int nranks, nnodes;
    int source;
};

struct rail_job_rec {
    uint32_t run;  /* index into rail_job_set.runs */
    uint32_t rank; /* the rank, or for Inspector's Prometheus lines a hash of node and GPU */
    uint64_t seq;  /* NCCL's sequence number (per collective kind); 0 for Prometheus lines */
    uint64_t bytes;
    float time_us;
    uint8_t coll, algo, proto, pad;
};

/* What the readers left out, and why (counted, never an error). */
struct rail_job_skips {
    long other;     /* not a collective the tuner decides (p2p, AllGatherV, ...) */
    long no_pair;   /* no algorithm/protocol ("unknown_unknown") */
    long no_time;   /* no usable time (0, or CPU-measured instead of GPU kernel timing) */
    long no_size;   /* 0 bytes */
    long nonfinite; /* a value that is not a number (Prometheus NaN, +Inf, -Inf) */
};

struct rail_job_set {
    struct rail_job_run *runs;
    int nruns, runs_cap;
    uint32_t *index; /* open addressing over runs by key; index_cap a power of two */
    uint32_t index_cap;
    struct rail_job_rec *recs;
    size_t n, cap;
    struct rail_job_skips skips;
};

/* Line by line over a buffer, for the job readers: at most RAIL_CALIB_MAX_LINE characters a
 * line (a longer one or a NUL byte is an error), "\r\n" taken as "\n". */
struct rail_job_lines {
    const char *buf;
    size_t len, pos;
    int lineno;
};
/* The next line into line[0..cap) (cap > RAIL_CALIB_MAX_LINE): 1, 0 at the end, or -EINVAL with
 * the reason in why (lineno is the bad line's). */
int rail_job_line(struct rail_job_lines *l, char *line, size_t cap, char *why, size_t whylen);

/* FNV-1a over bytes, chained: rail_job_key(rail_job_key(0, a, na), b, nb). */
uint64_t rail_job_key(uint64_t h, const void *data, size_t n);

/* The index of the run (key, nranks, nnodes, source), added when new: >= 0, or -E2BIG beyond
 * RAIL_JOB_MAX_RUNS, -ENOMEM. A key is one communicator for the profiler and Inspector's JSON
 * (its id): the same key with other ranks or nodes is -EEXIST (its files disagree; *other, when
 * not NULL, is the run they disagree with). For Inspector's Prometheus lines the key is a job and
 * communicator name, which several communicators may share: another shape is another run. */
int rail_job_run(struct rail_job_set *s, uint64_t key, int nranks, int nnodes, int source,
                 int *other);
/* Append one record: 0, -E2BIG beyond RAIL_JOB_MAX_RECORDS, -ENOMEM. */
int rail_job_add(struct rail_job_set *s, const struct rail_job_rec *r);
void rail_job_free(struct rail_job_set *s);

struct rail_job_summary {
    int runs;                        /* runs with at least one point */
    long instances;                  /* collectives used (each from every rank of its run) */
    long incomplete;                 /* collectives not seen by every rank of their run: left out */
    long uneven;                     /* instances of runs with uneven ranks per node: left out */
    int partial_runs;                /* runs whose files cover fewer ranks than nranks */
    int points;                      /* distinct (collective, pair, ranks, nodes, bytes) */
    struct rail_calib_thinning thin; /* step 4: series merged into buckets */
};

/* Rows (origin RAIL_CALIB_ORIGIN_JOB) from the records, distinct keys, at most
 * RAIL_CALIB_MAX_POINTS sizes per series; sorts s->recs in place. *rows is allocated (free it),
 * *nrows may be 0. 0, or -ENOMEM. */
int rail_job_merge(struct rail_job_set *s, struct rail_calib_row **rows, int *nrows,
                   struct rail_job_summary *sum);

#endif
