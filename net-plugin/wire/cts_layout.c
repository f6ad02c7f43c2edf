/* SPDX-License-Identifier: Apache-2.0 */
#include "wire/cts_layout.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

static_assert(sizeof(struct rail_cts_compact) == RAIL_CTS_COMPACT_BYTES, "compact CTS layout");
static_assert(offsetof(struct rail_cts_compact, seq) == RAIL_CTS_COMPACT_BYTES - 4,
              "compact CTS seq is the last word");
static_assert(((uint64_t)1 << 32) % RAIL_FIFO_SLOTS == 0, "slot rounds modulo 2^32");

void rail_cts_stage(uint8_t *p, unsigned bytes, const struct rail_cts *c, int nrails)
{
    if (bytes == RAIL_CTS_COMPACT_BYTES) {
        struct rail_cts_compact *k = (struct rail_cts_compact *)p;
        k->addr = c->addr;
        k->size = c->size;
        k->tag = c->tag;
        k->tag_index = c->tag_index;
        k->nreqs = c->nreqs;
        k->entry = c->entry;
        for (int rl = 0; rl < nrails; rl++)
            k->rkey[rl] = c->rkey[rl];
        return;
    }
    /* Field by field: reserved, pad and the rkeys of rails the comm lacks stay as they are. */
    struct rail_cts *e = (struct rail_cts *)p;
    e->addr = c->addr;
    e->size = c->size;
    e->tag = c->tag;
    e->tag_index = c->tag_index;
    e->nreqs = c->nreqs;
    e->entry = c->entry;
    for (int rl = 0; rl < nrails; rl++)
        e->rkey[rl] = c->rkey[rl];
}

void rail_cts_stage_seq(uint8_t *p, unsigned bytes, uint64_t seq1)
{
    if (bytes == RAIL_CTS_COMPACT_BYTES)
        ((struct rail_cts_compact *)p)->seq = (uint32_t)seq1;
    else
        ((struct rail_cts *)p)->seq = seq1;
}

const void *rail_cts_seq_at(const uint8_t *p, unsigned bytes)
{
    return bytes == RAIL_CTS_COMPACT_BYTES
               ? (const void *)&((const struct rail_cts_compact *)p)->seq
               : (const void *)&((const struct rail_cts *)p)->seq;
}

uint64_t rail_cts_seq_load(const uint8_t *p, unsigned bytes)
{
    if (bytes == RAIL_CTS_COMPACT_BYTES)
        return __atomic_load_n(&((const struct rail_cts_compact *)p)->seq, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&((const struct rail_cts *)p)->seq, __ATOMIC_ACQUIRE);
}

bool rail_cts_seq_is(uint64_t s, uint64_t want, unsigned bytes, bool *later)
{
    if (bytes == RAIL_CTS_COMPACT_BYTES) {
        uint32_t d = (uint32_t)s - (uint32_t)want;
        *later = d != 0 && d < 0x80000000u && d % RAIL_FIFO_SLOTS == 0;
        return d == 0;
    }
    *later = s > want && (s - want) % RAIL_FIFO_SLOTS == 0;
    return s == want;
}

void rail_cts_unpack(const uint8_t *p, unsigned bytes, uint64_t want_seq, struct rail_cts *out)
{
    if (bytes != RAIL_CTS_COMPACT_BYTES) {
        memcpy(out, p, sizeof(*out));
        return;
    }
    struct rail_cts_compact k;
    memcpy(&k, p, sizeof(k));
    /* Field by field, no memset of the 128-byte entry: nothing reads its pad (rail_cts_check
     * and the sender read the named fields only). */
    out->reserved = 0;
    out->addr = k.addr;
    out->size = k.size;
    out->tag = k.tag;
    out->tag_index = k.tag_index;
    out->nreqs = k.nreqs;
    out->entry = k.entry;
    memcpy(out->rkey, k.rkey, sizeof(out->rkey));
    out->seq = k.seq == (uint32_t)want_seq ? want_seq : k.seq;
}
