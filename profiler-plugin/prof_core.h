/* SPDX-License-Identifier: Apache-2.0 */
/* The profiler's per-communicator core: NCCL's Coll and KernelCh events in, a bounded ring of
 * completed collectives out (collective, bytes, algorithm, protocol, channels, GPU time). No I/O,
 * no environment, no allocation after rail_prof_ctx_create: every event costs a mutex and a few
 * stores (bench/prof_cost).
 *
 * A collective occupies one in-flight slot from its Coll start until the Coll event has stopped
 * and every one of its nChannels channels has started and stopped a KernelCh event (in any
 * order, from any thread); then its record goes into the ring (the oldest is overwritten when it
 * is full) and the slot is free again. Its GPU time is the span from the earliest channel start
 * to the latest channel stop (GPU globaltimer). A slot is never reused while NCCL may still hold
 * a handle into it: at most nChannels KernelCh handles (one per distinct channel) are handed out
 * per slot, and the slot is freed only when all have stopped. With every slot in flight a new
 * collective is not tracked (counted as busy): memory stays bounded whatever NCCL sends. */
#ifndef NCCL_RAIL_PROF_CORE_H
#define NCCL_RAIL_PROF_CORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "nccl/nccl_profiler.h"

#define RAIL_PROF_INFLIGHT     1024             /* slots per communicator */
#define RAIL_PROF_RING_MIN     16               /* NCCL_RAIL_PROFILE_RING bounds */
#define RAIL_PROF_RING_MAX     1048576          /* 32 MiB of records per communicator */
#define RAIL_PROF_MAX_CHANNELS 64               /* NCCL's MAXCHANNELS */
#define RAIL_PROF_MAX_SPAN_NS  1000000000000ull /* 1000 s: a longer span is not a measurement */

/* One completed collective (32 bytes). */
struct rail_prof_record {
    uint64_t seq;    /* NCCL's sequence number of the collective (per function) */
    uint64_t bytes;  /* the size NCCL gives the tuner: count x type size (x nranks for
                      * AllGather and ReduceScatter) */
    uint64_t gpu_ns; /* earliest channel start to latest channel stop */
    uint8_t coll, algo, proto, nchannels; /* ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_* */
    uint32_t pad;
};

/* What was not recorded, and why. */
struct rail_prof_counts {
    uint64_t recorded;    /* records that went into the ring */
    uint64_t overwritten; /* records the ring dropped (oldest first) */
    uint64_t busy;        /* collectives not tracked: every slot in flight */
    uint64_t no_timing;   /* completed without a valid GPU time (no channel, clock went back) */
    uint64_t other;       /* not a collective the tuner decides (name, type or size unknown) */
    uint64_t refused;     /* KernelCh events refused: no parent, a repeated channel, too many */
};

struct rail_prof_slot;

struct rail_prof_ctx {
    pthread_mutex_t lock;
    uint64_t comm_id;
    int rank, nranks, nnodes;
    char comm_name[128]; /* sanitized */
    struct rail_prof_slot *slots;
    uint32_t *free_stack;
    int nfree;
    struct rail_prof_record *ring;
    uint32_t ring_cap, ring_head, ring_count;
    struct rail_prof_counts counts;
    /* Last NCCL string pointer decoded per kind (NCCL passes the same literals every time). */
    const char *last_str[4];
    int last_id[4];
};

/* 0 and a new context, or -ENOMEM. ring_cap is clamped to the bounds above. */
int rail_prof_ctx_create(struct rail_prof_ctx **out, uint64_t comm_id, const char *comm_name,
                         int nnodes, int nranks, int rank, uint32_t ring_cap);
void rail_prof_ctx_destroy(struct rail_prof_ctx *c);

/* The event entry points (the ABI shims call these). Handles are opaque; NULL = not tracked. */
void *rail_prof_start(struct rail_prof_ctx *c, const ncclProfilerEventDescr_v5_t *d);
void rail_prof_stop(void *handle);
void rail_prof_record_state(void *handle, ncclProfilerEventState_t state,
                            const ncclProfilerEventStateArgs_v5_t *args);

/* Copy the ring (oldest first, at most max records) and the counters under the lock. Returns the
 * number of records copied. */
uint32_t rail_prof_snapshot(struct rail_prof_ctx *c, struct rail_prof_record *out, uint32_t max,
                            struct rail_prof_counts *counts);
/* Slots in flight now (tests). */
int rail_prof_inflight(struct rail_prof_ctx *c);

/* NCCL's names as the profiler descriptor spells them (ncclFuncToString, ncclAlgoToString,
 * ncclProtoToString, ncclDatatypeToString): the project's ids, or -1 (a type: its size in bytes,
 * or -1). Exact, case-sensitive. */
int rail_prof_func_id(const char *s);
int rail_prof_algo_id(const char *s);
int rail_prof_proto_id(const char *s);
int rail_prof_type_size(const char *s);

#endif
