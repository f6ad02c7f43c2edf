/* SPDX-License-Identifier: Apache-2.0 */
#include "decide/chunk_bounds.h"

void rail_chunk_buffs_default(struct rail_chunk_buffs *b)
{
    b->bytes[NCCL_PROTO_LL] = RAIL_NCCL_LL_BUFFSIZE_DEFAULT;
    b->bytes[NCCL_PROTO_LL128] = RAIL_NCCL_LL128_BUFFSIZE_DEF;
    b->bytes[NCCL_PROTO_SIMPLE] = RAIL_NCCL_BUFFSIZE_DEFAULT;
}

static bool tuned_call(int coll, int algo, int proto)
{
    return coll >= 0 && coll < NCCL_NUM_FUNCTIONS && algo >= 0 && algo < NCCL_NUM_ALGORITHMS &&
           proto >= 0 && proto < NCCL_NUM_PROTOCOLS;
}

/* chunkSteps of (coll, algo, proto): only Ring on Simple pipelines several steps per chunk. */
static size_t chunk_steps(int coll, int algo, int proto)
{
    if (algo != NCCL_ALGO_RING || proto != NCCL_PROTO_SIMPLE)
        return 1;
    return coll == ncclFuncAllReduce || coll == ncclFuncAllGather || coll == ncclFuncReduceScatter
               ? RAIL_NCCL_STEPS / 2
               : 1;
}

static size_t grain(int proto)
{
    switch (proto) {
    case NCCL_PROTO_LL:
        return 16; /* one 16-byte line: 8 bytes of data, two flags */
    case NCCL_PROTO_LL128:
        return 1920; /* a warp's 8 lines of 128 bytes, 120 of each carrying data */
    default:
        return 512;
    }
}

size_t rail_chunk_multiple(int coll, int algo, int proto)
{
    if (!tuned_call(coll, algo, proto))
        return 0;
    return grain(proto) * chunk_steps(coll, algo, proto);
}

size_t rail_chunk_max(const struct rail_chunk_buffs *b, int coll, int algo, int proto,
                      size_t nccl_value)
{
    if (!b || !tuned_call(coll, algo, proto) || b->bytes[proto] <= 0)
        return 0;
    size_t chunk = (size_t)b->bytes[proto] / RAIL_NCCL_STEPS * chunk_steps(coll, algo, proto);
    if (proto == NCCL_PROTO_LL)
        chunk /= 2;
    else if (proto == NCCL_PROTO_LL128)
        chunk = chunk / 16 * 15;
    if ((algo == NCCL_ALGO_NVLS || algo == NCCL_ALGO_NVLS_TREE) && nccl_value < chunk)
        chunk = nccl_value;
    return chunk;
}

size_t rail_chunk_clamp(const struct rail_chunk_buffs *b, int coll, int algo, int proto,
                        size_t nccl_value, size_t want, bool *reduced)
{
    size_t max = rail_chunk_max(b, coll, algo, proto, nccl_value);
    size_t mult = rail_chunk_multiple(coll, algo, proto);
    size_t v = want;

    if (reduced)
        *reduced = false;
    if (max == 0 || mult == 0 || max < mult || want == 0)
        return 0;
    if (v > max) {
        v = max;
        if (reduced)
            *reduced = true;
    }
    v = v / mult * mult;
    return v < mult ? mult : v;
}
