/* SPDX-License-Identifier: Apache-2.0 */
/* The two layouts of a clear-to-send entry in the sender's FIFO (pure, no I/O). The receiver
 * prepares a slot's entries in its staging memory (rail_cts_stage, then rail_cts_stage_seq
 * last) and RDMA-writes them into the sender's FIFO; the sender decodes them into struct
 * rail_cts (protocol/cts_fifo.c). Which layout a connection uses is settled in the handshake
 * (wire version 6, rail_meta.cts_bytes):
 *   - RAIL_CTS_BYTES (128): struct rail_cts as is, seq the last u64 (versions 4 and 5);
 *   - RAIL_CTS_COMPACT_BYTES (64): struct rail_cts_compact, the same fields without the reserved
 *     word and the padding, and seq as its low 32 bits in the last word. A slot's sequence is
 *     compared modulo 2^32: RAIL_FIFO_SLOTS divides 2^32, so an entry one round older (or
 *     newer) never matches, and a never-written entry (0) is older than every sequence of the
 *     first round. */
#ifndef NCCL_RAIL_CTS_LAYOUT_H
#define NCCL_RAIL_CTS_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/net_wire.h"

struct rail_cts_compact {
    uint64_t addr;
    uint64_t size;
    int32_t tag;
    uint32_t tag_index;
    uint16_t nreqs;
    uint16_t entry;
    uint32_t rkey[RAIL_MAX_RAILS];
    uint32_t seq; /* low 32 bits of slot sequence + 1; 0 = never written */
};

/* Whether b is an entry size of the wire (RAIL_CTS_BYTES or RAIL_CTS_COMPACT_BYTES). */
static inline bool rail_cts_bytes_ok(unsigned b)
{
    return b == RAIL_CTS_BYTES || b == RAIL_CTS_COMPACT_BYTES;
}

/* Writes the fields of c but seq (addr, size, tag, tag_index, nreqs, entry, the rkeys of the
 * first nrails rails) into the entry of `bytes` bytes at p; the rest of p stays as it is. */
void rail_cts_stage(uint8_t *p, unsigned bytes, const struct rail_cts *c, int nrails);
/* Writes the entry's sequence word (slot sequence + 1): after every other field. */
void rail_cts_stage_seq(uint8_t *p, unsigned bytes, uint64_t seq1);
/* The address of the entry's sequence word, and the sequence it holds as the sender compares it:
 * the full u64 (128-byte entries) or the low 32 bits (compact). */
const void *rail_cts_seq_at(const uint8_t *p, unsigned bytes);
uint64_t rail_cts_seq_load(const uint8_t *p, unsigned bytes);
/* Whether stored sequence s (as loaded) is `want` (slot sequence + 1); *later: it is a later
 * round of the same slot (want + k * RAIL_FIFO_SLOTS, k > 0). */
bool rail_cts_seq_is(uint64_t s, uint64_t want, unsigned bytes, bool *later);
/* Copies the entry at p into *out (seq set to want_seq when the stored word matches it, else to
 * what was stored), without any ordering: protocol/cts_fifo.c reads the sequence around it. */
void rail_cts_unpack(const uint8_t *p, unsigned bytes, uint64_t want_seq, struct rail_cts *out);

#endif
