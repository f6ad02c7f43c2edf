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
 * to the latest channel stop (GPU globaltimer). A KernelCh handle names its slot and its channel,
 * so a stop or a state is taken only for a channel of the slot's collective that started and has
 * not stopped (not recorded) yet: an event of another collective is refused, never credited.
 * Freed slots are reused last-freed-last (a queue), so a late event of a finished collective
 * finds its slot free or running a collective that started ~1,000 collectives later. A
 * collective announced with no channel is not tracked (it has no GPU time to measure). When every
 * slot is in flight, an old slot whose Coll event has stopped but whose channels never all
 * reported is given up (counted as abandoned) for the new collective, so a missing event never
 * pins a slot for good; only with every slot's Coll still running is a new collective not
 * tracked (counted as busy). Memory stays bounded whatever NCCL sends. */
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
/* What a calibration takes (calibrate refuses larger values; test_profiler_abi checks that these
 * are within calib_log.h's RAIL_CALIB_MAX_BYTES / RAIL_CALIB_MAX_RANKS). */
#define RAIL_PROF_MAX_BYTES (1ull << 50)
#define RAIL_PROF_MAX_RANKS (1 << 20)

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
    uint64_t refused;     /* KernelCh events refused: no parent, a repeated channel, too many,
                           * or not of the slot's collective */
    uint64_t abandoned;   /* given up: every slot in flight, its channels never all reported */
};

struct rail_prof_slot;

struct rail_prof_ctx {
    pthread_mutex_t lock;
    uint64_t comm_id;
    int rank, nranks, nnodes;
    char comm_name[128]; /* sanitized */
    struct rail_prof_slot *slots;
    uint32_t *free_queue; /* free slots, the longest-free first */
    uint32_t free_head;
    int nfree;
    uint32_t hand; /* where the search for a slot to give up resumes */
    struct rail_prof_record *ring;
    uint32_t ring_cap, ring_head, ring_count;
    struct rail_prof_counts counts;
    /* Last NCCL string pointer decoded per kind (NCCL passes the same literals every time). */
    const char *last_str[4];
    int last_id[4];
};

/* 0 and a new context, -EINVAL when the shape is out of range (0 <= rank < nranks <=
 * RAIL_PROF_MAX_RANKS, 1 <= nnodes <= nranks), or -ENOMEM. ring_cap is clamped to the bounds
 * above. */
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
