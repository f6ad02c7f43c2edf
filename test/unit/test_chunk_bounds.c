/* SPDX-License-Identifier: Apache-2.0 */
/* Chunk sizes safe by construction (chunk_bounds.h): NCCL 2.30's buffer-derived ceilings per
 * (collective, algorithm, protocol), the multiple NCCL accepts, and the clamp, fed the chunk
 * sizes of NCCL issue #2408 (1 MiB and more: wrong results and Xid 31 past a buffer step). */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "decide/chunk_bounds.h"
#include "fuzz.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static const size_t k_issue_2408[] = {1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 64 * MiB};

static size_t clamp(const struct rail_chunk_buffs *b, int coll, int algo, int proto, size_t nccl,
                    size_t want, bool *reduced)
{
    return rail_chunk_clamp(b, coll, algo, proto, nccl, want, reduced);
}

/* NCCL 2.30.7's bufferMaxChunkSize with its default buffers. */
static void test_default_ceilings(void)
{
    struct rail_chunk_buffs b;
    rail_chunk_buffs_default(&b);
    CHECK_EQ_INT(b.bytes[NCCL_PROTO_LL], 524288);
    CHECK_EQ_INT(b.bytes[NCCL_PROTO_LL128], 4915200);
    CHECK_EQ_INT(b.bytes[NCCL_PROTO_SIMPLE], 4194304);

    /* Ring on Simple: 4 steps of 512 KiB for AllReduce/AllGather/ReduceScatter, 1 otherwise. */
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0),
                 2 * MiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0),
                 2 * MiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncReduceScatter, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0),
                 2 * MiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncBroadcast, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0),
                 512 * KiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0),
                 512 * KiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 0),
                 512 * KiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllGather, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 0),
                 512 * KiB);
    CHECK_EQ_INT(
        rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE, 0),
        512 * KiB);
    /* LL: half a 64 KiB step; LL128: 15/16 of a 600 KiB step. */
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_LL, 0), 32 * KiB);
    CHECK_EQ_INT(rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 0),
                 576000);
    /* NVLS: NCCL's own value is the ceiling (its buffers follow NCCL_NVLS_CHUNKSIZE). */
    CHECK_EQ_INT(
        rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 128 * KiB),
        128 * KiB);
    CHECK_EQ_INT(
        rail_chunk_max(&b, ncclFuncAllReduce, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, 64 * KiB),
        64 * KiB);
    /* Multiples: the grain, times chunkSteps on Ring/Simple. */
    CHECK_EQ_INT(rail_chunk_multiple(ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE), 2048);
    CHECK_EQ_INT(rail_chunk_multiple(ncclFuncBroadcast, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE), 512);
    CHECK_EQ_INT(rail_chunk_multiple(ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_LL), 16);
    CHECK_EQ_INT(rail_chunk_multiple(ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_LL128), 1920);
}

/* #2408's sizes: every answer stays within the buffer, and says it was reduced. */
static void test_issue_2408(void)
{
    struct rail_chunk_buffs b;
    bool reduced;
    rail_chunk_buffs_default(&b);
    for (size_t i = 0; i < sizeof(k_issue_2408) / sizeof(k_issue_2408[0]); i++) {
        size_t want = k_issue_2408[i];
        size_t v = clamp(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 512 * KiB, want,
                         &reduced);
        CHECK_EQ_INT(v, want <= 2 * MiB ? want : 2 * MiB);
        CHECK_EQ_INT(reduced, want > 2 * MiB);
        CHECK_EQ_INT(
            clamp(&b, ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 0, want, &reduced),
            512 * KiB);
        CHECK(reduced);
        CHECK_EQ_INT(
            clamp(&b, ncclFuncBroadcast, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, want, &reduced),
            512 * KiB);
        CHECK_EQ_INT(clamp(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_LL, 0, want, &reduced),
                     32 * KiB);
        CHECK_EQ_INT(
            clamp(&b, ncclFuncAllGather, NCCL_ALGO_RING, NCCL_PROTO_LL128, 0, want, &reduced),
            576000);
        CHECK_EQ_INT(clamp(&b, ncclFuncAllReduce, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 128 * KiB,
                           want, &reduced),
                     128 * KiB);
        CHECK(reduced);
        CHECK_EQ_INT(clamp(&b, ncclFuncAllReduce, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, 32 * KiB,
                           want, &reduced),
                     32 * KiB);
    }
}

/* Buffers the operator changed: the ceilings follow; an unknown buffer answers nothing. */
static void test_buffers(void)
{
    struct rail_chunk_buffs b;
    bool reduced;
    rail_chunk_buffs_default(&b);
    b.bytes[NCCL_PROTO_SIMPLE] = 8 * MiB;
    CHECK_EQ_INT(
        clamp(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 8 * MiB, &reduced),
        4 * MiB);
    b.bytes[NCCL_PROTO_SIMPLE] = 1 * MiB; /* smaller than the default: 1 MiB no longer fits */
    CHECK_EQ_INT(
        clamp(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 1 * MiB, &reduced),
        512 * KiB);
    CHECK_EQ_INT(
        clamp(&b, ncclFuncAllReduce, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 0, 1 * MiB, &reduced),
        128 * KiB);
    b.bytes[NCCL_PROTO_SIMPLE] = 0;
    CHECK_EQ_INT(
        clamp(&b, ncclFuncAllReduce, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 64 * KiB, &reduced), 0);
    b.bytes[NCCL_PROTO_SIMPLE] = 1000; /* a step smaller than one grain: nothing is safe */
    CHECK_EQ_INT(clamp(&b, ncclFuncBroadcast, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 512, &reduced),
                 0);
    /* Calls the tuner does not decide: no answer. */
    rail_chunk_buffs_default(&b);
    CHECK_EQ_INT(clamp(&b, 11, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 64 * KiB, &reduced), 0);
    CHECK_EQ_INT(clamp(&b, -1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 64 * KiB, &reduced), 0);
    CHECK_EQ_INT(clamp(&b, 4, 7, NCCL_PROTO_SIMPLE, 0, 64 * KiB, &reduced), 0);
    CHECK_EQ_INT(clamp(&b, 4, NCCL_ALGO_RING, 3, 0, 64 * KiB, &reduced), 0);
    CHECK_EQ_INT(clamp(&b, 4, NCCL_ALGO_RING, -1, 0, 64 * KiB, &reduced), 0);
    CHECK_EQ_INT(clamp(NULL, 4, NCCL_ALGO_RING, 2, 0, 64 * KiB, &reduced), 0);
    /* Rounding: down to the multiple, never below one. */
    CHECK_EQ_INT(clamp(&b, 4, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 0, 65536, &reduced), 65280);
    CHECK(!reduced);
    CHECK_EQ_INT(clamp(&b, 4, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 0, 512, &reduced), 1920);
    CHECK_EQ_INT(clamp(&b, 4, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 3000, &reduced), 2048);
}

/* Every combination, random wants and buffers: 0, or a multiple within [multiple, max]. */
static void test_properties(void)
{
    uint32_t seed = 2408;
    int bad = 0;
    for (int iter = 0; iter < 20000; iter++) {
        struct rail_chunk_buffs b;
        for (int p = 0; p < 3; p++)
            b.bytes[p] = (long long)(fuzz_step(&seed) % (64u * MiB)) - 1024;
        int coll = (int)(fuzz_step(&seed) % 7) - 1, algo = (int)(fuzz_step(&seed) % 9) - 1;
        int proto = (int)(fuzz_step(&seed) % 5) - 1;
        size_t nccl = fuzz_step(&seed) % (4u * MiB), want = fuzz_step(&seed) % (1u << 30);
        bool reduced;
        size_t v = clamp(&b, coll, algo, proto, nccl, want, &reduced);
        size_t max = rail_chunk_max(&b, coll, algo, proto, nccl);
        size_t mult = rail_chunk_multiple(coll, algo, proto);
        if (v == 0)
            continue;
        if (v > max || mult == 0 || v % mult != 0 || v < mult || reduced != (want > max))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_default_ceilings();
    test_issue_2408();
    test_buffers();
    test_properties();
    return check_report("test_chunk_bounds");
}
