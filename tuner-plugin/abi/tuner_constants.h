/* SPDX-License-Identifier: Apache-2.0 */
/* The tuning constants of each tuner ABI version, through that version's own layout only.
 *
 * The tuner's model knows four compute-capability rows (Volta .. Blackwell: the v5/v6 layout).
 * NCCL 2.32 hands a v7 plugin constants with a fifth row (Rubin) and every per-compcap table at
 * new offsets. A v7 init copies NCCL's v7 constants into a v5-shaped working copy
 * (rail_constants_from_v7), lets the model refine that copy, and writes back only the entries
 * the copy holds (rail_constants_to_v7): the latencies and rows 0..3 of each table, each at its
 * v7 offset. The Rubin row is never read into the model nor written: it stays as NCCL set it.
 * Pure functions, no I/O. */
#ifndef NCCL_RAIL_TUNER_CONSTANTS_H
#define NCCL_RAIL_TUNER_CONSTANTS_H

#include "nccl/nccl_tuner.h"

/* dst (v5 layout) <- the latencies and the Volta .. Blackwell rows of src (v7 layout). */
void rail_constants_from_v7(ncclTunerConstants_v5_t *dst, const ncclTunerConstants_v7_t *src);

/* dst (v7 layout) <- every entry of src (v5 layout), each into its v7 place; dst's Rubin rows
 * are not touched. Returns the number of entries whose value changed. */
int rail_constants_to_v7(ncclTunerConstants_v7_t *dst, const ncclTunerConstants_v5_t *src);

#endif
