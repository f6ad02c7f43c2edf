/* SPDX-License-Identifier: Apache-2.0 */
#include "prof_core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/nccl_tuner.h"
#include "strutil.h"

/* A collective in flight. Aligned so that a handle's low 7 bits can say "KernelCh of this slot,
 * channel N". */
struct rail_prof_slot {
    struct rail_prof_ctx *ctx;
    uint64_t seq, bytes;
    uint64_t start_min, stop_max; /* GPU globaltimer, ns */
    uint64_t ch_started;          /* channel ids that started a KernelCh event */
    uint64_t ch_stopped;          /* ... that stopped it */
    uint64_t ch_recorded;         /* ... that recorded their stop state (GPU time) */
    uint8_t coll, algo, proto, nchannels;
    uint8_t nstarted, nstopped, nrecorded;
    uint8_t coll_stopped, in_use, bad_timing;
} __attribute__((aligned(128)));

#define KCH_TAG      ((uintptr_t)1)
#define KCH_CH_SHIFT 1
#define KCH_LOW_BITS ((uintptr_t)127)
_Static_assert(RAIL_PROF_MAX_CHANNELS <= 64, "a channel id must fit in the handle's 6 bits");

/* ---- NCCL's names ---- */

struct name_id {
    const char *name;
    int id;
};

static int lookup(const struct name_id *t, size_t n, const char *s)
{
    if (!s)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, t[i].name) == 0)
            return t[i].id;
    return -1;
}

#define LOOKUP(t, s) lookup((t), sizeof(t) / sizeof((t)[0]), (s))

int rail_prof_func_id(const char *s)
{
    static const struct name_id t[] = {{"AllReduce", ncclFuncAllReduce},
                                       {"AllGather", ncclFuncAllGather},
                                       {"ReduceScatter", ncclFuncReduceScatter},
                                       {"Broadcast", ncclFuncBroadcast},
                                       {"Reduce", ncclFuncReduce}};
    return LOOKUP(t, s);
}

int rail_prof_algo_id(const char *s)
{
    static const struct name_id t[] = {{"RING", NCCL_ALGO_RING},
                                       {"TREE", NCCL_ALGO_TREE},
                                       {"NVLS", NCCL_ALGO_NVLS},
                                       {"NVLS_TREE", NCCL_ALGO_NVLS_TREE},
                                       {"PAT", NCCL_ALGO_PAT},
                                       {"COLLNET_DIRECT", NCCL_ALGO_COLLNET_DIRECT},
                                       {"COLLNET_CHAIN", NCCL_ALGO_COLLNET_CHAIN}};
    return LOOKUP(t, s);
}

int rail_prof_proto_id(const char *s)
{
    static const struct name_id t[] = {
        {"SIMPLE", NCCL_PROTO_SIMPLE}, {"LL128", NCCL_PROTO_LL128}, {"LL", NCCL_PROTO_LL}};
    return LOOKUP(t, s);
}

int rail_prof_type_size(const char *s)
{
    static const struct name_id t[] = {
        {"ncclFloat32", 4}, {"ncclBfloat16", 2}, {"ncclFloat16", 2},    {"ncclFloat64", 8},
        {"ncclInt32", 4},   {"ncclInt64", 8},    {"ncclUint32", 4},     {"ncclUint64", 8},
        {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
    return LOOKUP(t, s);
}

enum { K_FUNC, K_ALGO, K_PROTO, K_TYPE, K_KINDS };

/* Decode with a small per-context cache of string pointers (under the context lock). */
static int decode(struct rail_prof_ctx *c, int kind, const char *s)
{
    static int (*const fn[K_KINDS])(const char *) = {rail_prof_func_id, rail_prof_algo_id,
                                                     rail_prof_proto_id, rail_prof_type_size};
    if (!s)
        return -1;
    if (c->last_str[kind] == s)
        return c->last_id[kind];
    int id = fn[kind](s);
    c->last_str[kind] = s;
    c->last_id[kind] = id;
    return id;
}

/* ---- context ---- */

int rail_prof_ctx_create(struct rail_prof_ctx **out, uint64_t comm_id, const char *comm_name,
                         int nnodes, int nranks, int rank, uint32_t ring_cap)
{
    struct rail_prof_ctx *c;
    *out = NULL;
    if (nranks < 1 || nranks > RAIL_PROF_MAX_RANKS || rank < 0 || rank >= nranks || nnodes < 1 ||
        nnodes > nranks)
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (ring_cap < RAIL_PROF_RING_MIN)
        ring_cap = RAIL_PROF_RING_MIN;
    if (ring_cap > RAIL_PROF_RING_MAX)
        ring_cap = RAIL_PROF_RING_MAX;
    c->slots = aligned_alloc(128, RAIL_PROF_INFLIGHT * sizeof(*c->slots));
    c->free_queue = calloc(RAIL_PROF_INFLIGHT, sizeof(*c->free_queue));
    c->ring = calloc(ring_cap, sizeof(*c->ring));
    if (!c->slots || !c->free_queue || !c->ring || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->slots);
        free(c->free_queue);
        free(c->ring);
        free(c);
        return -ENOMEM;
    }
    memset(c->slots, 0, RAIL_PROF_INFLIGHT * sizeof(*c->slots));
    for (int i = 0; i < RAIL_PROF_INFLIGHT; i++) {
        c->slots[i].ctx = c;
        c->free_queue[i] = (uint32_t)i; /* slot 0 first */
    }
    c->nfree = RAIL_PROF_INFLIGHT;
    c->ring_cap = ring_cap;
    c->comm_id = comm_id;
    c->nnodes = nnodes;
    c->nranks = nranks;
    c->rank = rank;
    snprintf(c->comm_name, sizeof(c->comm_name), "%s", comm_name ? comm_name : "");
    rail_text_sanitize(c->comm_name);
    *out = c;
    return 0;
}

void rail_prof_ctx_destroy(struct rail_prof_ctx *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c->slots);
    free(c->free_queue);
    free(c->ring);
    free(c);
}

/* ---- events ---- */

static void slot_free(struct rail_prof_ctx *c, struct rail_prof_slot *s)
{
    s->in_use = 0;
    c->free_queue[(c->free_head + (uint32_t)c->nfree++) % RAIL_PROF_INFLIGHT] =
        (uint32_t)(s - c->slots);
}

/* Under the lock, every slot in flight: an old slot whose Coll event stopped and whose channels
 * never all reported is given up, or NULL when every collective is still running. The search
 * resumes where the last one stopped (slots are taken in queue order, so that is about the
 * oldest). */
static struct rail_prof_slot *give_up_one(struct rail_prof_ctx *c)
{
    for (int i = 0; i < RAIL_PROF_INFLIGHT; i++) {
        struct rail_prof_slot *s = &c->slots[c->hand];
        c->hand = (c->hand + 1) % RAIL_PROF_INFLIGHT;
        if (s->in_use && s->coll_stopped) {
            c->counts.abandoned++;
            return s;
        }
    }
    return NULL;
}

static void *start_coll(struct rail_prof_ctx *c, const struct rail_nccl_prof_coll *d)
{
    struct rail_prof_slot *s;
    int coll, algo, proto, size;

    pthread_mutex_lock(&c->lock);
    coll = decode(c, K_FUNC, d->func);
    algo = decode(c, K_ALGO, d->algo);
    proto = decode(c, K_PROTO, d->proto);
    size = decode(c, K_TYPE, d->datatype);
    /* What NCCL hands the tuner: the larger of the send and receive sizes. */
    uint64_t mult =
        coll == ncclFuncAllGather || coll == ncclFuncReduceScatter ? (uint64_t)c->nranks : 1u;
    if (coll < 0 || algo < 0 || proto < 0 || size < 0 || d->count == 0 ||
        d->count > RAIL_PROF_MAX_BYTES / (uint64_t)size / mult ||
        d->nChannels > RAIL_PROF_MAX_CHANNELS) {
        c->counts.other++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    if (d->nChannels == 0) { /* no channel, no GPU time; its events must not land elsewhere */
        c->counts.no_timing++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    if (c->nfree > 0) {
        s = &c->slots[c->free_queue[c->free_head]];
        c->free_head = (c->free_head + 1) % RAIL_PROF_INFLIGHT;
        c->nfree--;
    } else if (!(s = give_up_one(c))) {
        c->counts.busy++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    s->seq = d->seqNumber;
    s->bytes = (uint64_t)d->count * (uint64_t)size * mult;
    s->coll = (uint8_t)coll;
    s->algo = (uint8_t)algo;
    s->proto = (uint8_t)proto;
    s->nchannels = d->nChannels;
    s->start_min = UINT64_MAX;
    s->stop_max = 0;
    s->ch_started = s->ch_stopped = s->ch_recorded = 0;
    s->nstarted = s->nstopped = s->nrecorded = 0;
    s->coll_stopped = s->bad_timing = 0;
    s->in_use = 1;
    pthread_mutex_unlock(&c->lock);
    return s;
}

/* The parent handle NCCL passes back must be one of this context's slots. */
static struct rail_prof_slot *slot_of(struct rail_prof_ctx *c, const void *p)
{
    uintptr_t base = (uintptr_t)c->slots, v = (uintptr_t)p;
    if (!p || v < base || (v - base) % sizeof(struct rail_prof_slot) ||
        (v - base) / sizeof(struct rail_prof_slot) >= RAIL_PROF_INFLIGHT)
        return NULL;
    return (struct rail_prof_slot *)p;
}

static void *start_kernel_ch(struct rail_prof_ctx *c, const ncclProfilerEventDescr_v5_t *d)
{
    struct rail_prof_slot *s = slot_of(c, d->parentObj);
    unsigned ch = d->kernelCh.channelId;
    void *h = NULL;

    pthread_mutex_lock(&c->lock);
    if (!s || !s->in_use || ch >= RAIL_PROF_MAX_CHANNELS || (s->ch_started >> ch & 1) ||
        s->nstarted >= s->nchannels) {
        c->counts.refused++;
    } else {
        s->ch_started |= 1ull << ch;
        s->nstarted++;
        if (d->kernelCh.pTimer == 0)
            s->bad_timing = 1;
        else if (d->kernelCh.pTimer < s->start_min)
            s->start_min = d->kernelCh.pTimer;
        h = (void *)((uintptr_t)s | (uintptr_t)ch << KCH_CH_SHIFT | KCH_TAG);
    }
    pthread_mutex_unlock(&c->lock);
    return h;
}

void *rail_prof_start(struct rail_prof_ctx *c, const ncclProfilerEventDescr_v5_t *d)
{
    if (!c || !d)
        return NULL;
    if (d->type == ncclProfileColl)
        return start_coll(c, &d->coll);
    if (d->type == ncclProfileKernelCh)
        return start_kernel_ch(c, d);
    return NULL; /* group, API, launch, p2p, proxy, copy-engine events: not tracked */
}

/* Under the lock: a slot whose Coll stopped and whose channels all stopped becomes a record. */
static void maybe_complete(struct rail_prof_ctx *c, struct rail_prof_slot *s)
{
    if (!s->coll_stopped || s->nstopped < s->nchannels)
        return;
    uint64_t span = s->stop_max > s->start_min ? s->stop_max - s->start_min : 0;
    if (s->nchannels == 0 || s->bad_timing || s->nrecorded < s->nchannels || span == 0 ||
        span > RAIL_PROF_MAX_SPAN_NS) {
        c->counts.no_timing++;
    } else {
        struct rail_prof_record *r;
        if (c->ring_count < c->ring_cap) {
            r = &c->ring[(c->ring_head + c->ring_count) % c->ring_cap];
            c->ring_count++;
        } else {
            r = &c->ring[c->ring_head];
            c->ring_head = (c->ring_head + 1) % c->ring_cap;
            c->counts.overwritten++;
        }
        *r = (struct rail_prof_record){.seq = s->seq,
                                       .bytes = s->bytes,
                                       .gpu_ns = span,
                                       .coll = s->coll,
                                       .algo = s->algo,
                                       .proto = s->proto,
                                       .nchannels = s->nchannels};
        c->counts.recorded++;
    }
    slot_free(c, s);
}

void rail_prof_stop(void *handle)
{
    struct rail_prof_slot *s = (struct rail_prof_slot *)((uintptr_t)handle & ~KCH_LOW_BITS);
    uint64_t bit = 1ull << ((uintptr_t)handle >> KCH_CH_SHIFT & 63);
    struct rail_prof_ctx *c;

    if (!s)
        return;
    c = s->ctx;
    pthread_mutex_lock(&c->lock);
    if (!s->in_use) {
        c->counts.refused++;
    } else if ((uintptr_t)handle & KCH_TAG) {
        /* Only a channel of this collective that started and has not stopped yet. */
        if (!(s->ch_started & bit) || (s->ch_stopped & bit)) {
            c->counts.refused++;
        } else {
            s->ch_stopped |= bit;
            s->nstopped++;
            maybe_complete(c, s);
        }
    } else if (!s->coll_stopped) {
        s->coll_stopped = 1;
        maybe_complete(c, s);
    }
    pthread_mutex_unlock(&c->lock);
}

void rail_prof_record_state(void *handle, ncclProfilerEventState_t state,
                            const ncclProfilerEventStateArgs_v5_t *args)
{
    struct rail_prof_slot *s = (struct rail_prof_slot *)((uintptr_t)handle & ~KCH_LOW_BITS);
    uint64_t bit = 1ull << ((uintptr_t)handle >> KCH_CH_SHIFT & 63);

    if (!s || !((uintptr_t)handle & KCH_TAG) || state != ncclProfilerKernelChStop || !args)
        return;
    pthread_mutex_lock(&s->ctx->lock);
    if (s->in_use && (s->ch_started & bit) && !(s->ch_recorded & bit)) {
        s->ch_recorded |= bit;
        s->nrecorded++;
        if (args->kernelCh.pTimer == 0)
            s->bad_timing = 1;
        else if (args->kernelCh.pTimer > s->stop_max)
            s->stop_max = args->kernelCh.pTimer;
    } else {
        s->ctx->counts.refused++;
    }
    pthread_mutex_unlock(&s->ctx->lock);
}

uint32_t rail_prof_snapshot(struct rail_prof_ctx *c, struct rail_prof_record *out, uint32_t max,
                            struct rail_prof_counts *counts)
{
    uint32_t n;
    pthread_mutex_lock(&c->lock);
    n = c->ring_count < max ? c->ring_count : max;
    for (uint32_t i = 0; i < n; i++)
        out[i] = c->ring[(c->ring_head + c->ring_count - n + i) % c->ring_cap];
    if (counts)
        *counts = c->counts;
    pthread_mutex_unlock(&c->lock);
    return n;
}

int rail_prof_inflight(struct rail_prof_ctx *c)
{
    int n;
    pthread_mutex_lock(&c->lock);
    n = RAIL_PROF_INFLIGHT - c->nfree;
    pthread_mutex_unlock(&c->lock);
    return n;
}
