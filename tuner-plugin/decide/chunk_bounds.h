/* SPDX-License-Identifier: Apache-2.0 */
/* Chunk sizes safe by construction: the bounds NCCL derives from its buffers for one
 * (collective, algorithm, protocol), and the clamp every chunk size the tuner answers through
 * getChunkSize (tuner v6/v7) goes through. Pure, no I/O: the buffer sizes come in.
 *
 * Facts from NCCL 2.30.7's calcCollChunking (src/enqueue.cc), the caller of getChunkSize:
 *  - a step is buffSizes[proto] / NCCL_STEPS (8); the buffer sizes are NCCL_LL_BUFFSIZE,
 *    NCCL_LL128_BUFFSIZE, NCCL_BUFFSIZE, by default 512 KiB (LL), 4800 KiB (LL128), 4 MiB;
 *  - a chunk is chunkSteps steps: Ring on Simple takes the collective's chunkSteps (4 for
 *    AllReduce, AllGather, ReduceScatter; 1 for Broadcast, Reduce), everything else 1; LL carries
 *    half of it (a flag per 8 bytes), LL128 15/16 (a flag word per 128-byte line);
 *  - that is NCCL's own ceiling (bufferMaxChunkSize); NCCL clamps a tuner's answer to it and then
 *    rounds it down to the protocol's grain (LL 16, LL128 1920, Simple 512 bytes);
 *  - NVLS and NVLS tree run on buffers NCCL sizes from NCCL_NVLS_CHUNKSIZE (128 KiB), not from
 *    NCCL_BUFFSIZE, and NCCL's ceiling above does not cover them: for those the largest safe
 *    answer is the chunk size NCCL passed in.
 * NCCL issue #2408 (chunks of 1 MiB and more past a buffer step: wrong results, Xid 31) is the
 * failure this guards against. */
#ifndef NCCL_RAIL_CHUNK_BOUNDS_H
#define NCCL_RAIL_CHUNK_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>

#include "nccl/nccl_tuner.h"

#define RAIL_NCCL_STEPS               8
#define RAIL_NCCL_LL_BUFFSIZE_DEFAULT 524288  /* 8 lines x 512 threads x 8 steps x 16 bytes */
#define RAIL_NCCL_LL128_BUFFSIZE_DEF  4915200 /* 120 x 640 threads x 8 steps x 8 bytes */
#define RAIL_NCCL_BUFFSIZE_DEFAULT    4194304 /* 4 MiB */

/* NCCL's buffer size per protocol in bytes; <= 0: unknown (the tuner then answers nothing). */
struct rail_chunk_buffs {
    long long bytes[NCCL_NUM_PROTOCOLS];
};

void rail_chunk_buffs_default(struct rail_chunk_buffs *b);

/* The largest chunk NCCL's buffers hold for (coll, algo, proto); 0 when the call is not one the
 * tuner decides (coll outside 0..4, an algorithm or protocol NCCL does not have) or the buffer
 * size is unknown. For NVLS and NVLS tree, nccl_value (what NCCL passed in) bounds it too. */
size_t rail_chunk_max(const struct rail_chunk_buffs *b, int coll, int algo, int proto,
                      size_t nccl_value);

/* The multiple every answer is: the protocol's grain, times chunkSteps on Ring/Simple so that
 * each slice stays grain-aligned (NCCL's own chunk sizes all are). */
size_t rail_chunk_multiple(int coll, int algo, int proto);

/* The answer for `want`: at most rail_chunk_max, a multiple of rail_chunk_multiple, at least one
 * multiple. 0 when no answer is safe (NCCL's value must stand). *reduced: want was above the
 * bound (the caller warns). */
size_t rail_chunk_clamp(const struct rail_chunk_buffs *b, int coll, int algo, int proto,
                        size_t nccl_value, size_t want, bool *reduced);

#endif
