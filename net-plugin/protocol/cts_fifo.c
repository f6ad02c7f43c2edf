/* SPDX-License-Identifier: Apache-2.0 */
/* The clear-to-send FIFO: the receiver's slot ownership and what the sender absorbed of it
 * (cts_fifo.h). */
#include "protocol/cts_fifo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool rail_cts_tail_busy(const struct rail_cts_tail *t)
{
    return t->by_slot[t->tail % RAIL_FIFO_SLOTS] != NULL;
}

uint64_t rail_cts_tail_take(struct rail_cts_tail *t, struct rail_recv_req *owner)
{
    t->by_slot[t->tail % RAIL_FIFO_SLOTS] = owner;
    return t->tail++;
}

void rail_cts_tail_release(struct rail_cts_tail *t, uint64_t seq, const struct rail_recv_req *owner)
{
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS);
    if (t->by_slot[slot] == owner)
        t->by_slot[slot] = NULL;
}

struct rail_recv_req *rail_cts_tail_owner(const struct rail_cts_tail *t, unsigned slot)
{
    return slot < RAIL_FIFO_SLOTS ? t->by_slot[slot] : NULL;
}

int rail_cts_read_as(const uint8_t *p, unsigned bytes, uint64_t want, struct rail_cts *out)
{
    bool later;
    if (!rail_cts_seq_is(rail_cts_seq_load(p, bytes), want, bytes, &later))
        return later ? 2 : 1;
    rail_cts_unpack(p, bytes, want, out);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!rail_cts_seq_is(rail_cts_seq_load(p, bytes), want, bytes, &later))
        return 2;
    out->seq = want;
    return 0;
}

int rail_cts_read(const uint8_t *p, uint64_t want, struct rail_cts *out)
{
    return rail_cts_read_as(p, RAIL_CTS_BYTES, want, out);
}

static unsigned entry_bytes(const struct rail_cts_fifo *f)
{
    return f->entry_bytes ? f->entry_bytes : RAIL_CTS_BYTES;
}

/* head passes every slot whose entries are all resolved (a count per slot, no scan). */
static void retire(struct rail_cts_fifo *f)
{
    while (f->head < f->scan && f->unresolved[f->head % RAIL_FIFO_SLOTS] == 0)
        f->head++;
}

/* Whether s, loaded from the sequence word of slot f->scan, says the slot was not written since
 * absorbing last looked: it still holds the older round, or (first round) was never written. A
 * compact word holds the low 32 bits: there 0 is also the sequence 2^32 * k (slot sequence
 * 2^32 * k - 1), so it means "never written" only while the first round is absorbed. */
static bool older_or_unwritten(const struct rail_cts_fifo *f, uint64_t s, unsigned bytes)
{
    uint64_t older = f->scan + 1 - RAIL_FIFO_SLOTS;
    if (bytes == RAIL_CTS_COMPACT_BYTES)
        return (uint32_t)s == (uint32_t)older || (s == 0 && f->scan < RAIL_FIFO_SLOTS);
    return s == older || s == 0;
}

int rail_cts_fifo_absorb(struct rail_cts_fifo *f, const uint8_t *fifo_mem, int nrails,
                         const struct rail_tagmap *sent, char *err, size_t errlen)
{
    char why[200];
    unsigned bytes = entry_bytes(f);
    while (f->scan < f->head + RAIL_FIFO_SLOTS) {
        unsigned slot = (unsigned)(f->scan % RAIL_FIFO_SLOTS);
        const uint8_t *base = fifo_mem + (size_t)slot * RAIL_MAX_RECVS * bytes;
        uint64_t want = f->scan + 1;
        struct rail_shadow *sh = f->shadow[slot];
        struct rail_cts c;
        int st = rail_cts_read_as(base, bytes, want, &c), n;

        if (st == 1)
            break;
        if (st == 0 && !rail_cts_ok(&c, want, 0) &&
            rail_cts_check(&c, want, 0, nrails, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "FIFO slot %llu: %s", (unsigned long long)f->scan, why);
            return -EPROTO;
        }
        n = st == 0 ? c.nreqs : 0;
        /* Slot scan is outside [head, scan): nothing reads its shadow entries before shadow_n and
         * scan say they are there. */
        for (int e = 0; e < n && st == 0; e++) {
            if (e > 0) {
                st = rail_cts_read_as(base + (size_t)e * bytes, bytes, want, &c);
                if (st == 1)
                    return 0; /* the rest of the slot is still on its way */
                if (st == 0 &&
                    ((!rail_cts_ok(&c, want, (unsigned)e) &&
                      rail_cts_check(&c, want, (unsigned)e, nrails, why, sizeof(why)) != 0) ||
                     c.nreqs != n)) {
                    snprintf(err, errlen, "FIFO slot %llu entry %d: %s",
                             (unsigned long long)f->scan, e,
                             c.nreqs != n ? "entry count differs within the slot" : why);
                    return -EPROTO;
                }
            }
            sh[e].tag = c.tag;
            sh[e].tag_index = c.tag_index;
        }
        if (st == 2)
            n = 0;
        int left = 0;
        for (int e = 0; e < n; e++) {
            sh[e].resolved = rail_tag_before(sh[e].tag_index, rail_tagmap_get_inl(sent, sh[e].tag));
            left += !sh[e].resolved;
        }
        f->shadow_n[slot] = (uint8_t)n;
        f->unresolved[slot] = (uint8_t)left;
        f->scan++;
    }
    retire(f);
    return 0;
}

bool rail_cts_fifo_news(const struct rail_cts_fifo *f, const uint8_t *fifo_mem)
{
    if (f->scan >= f->head + RAIL_FIFO_SLOTS)
        return true; /* the shadow is full: absorbing retires resolved slots first */
    unsigned slot = (unsigned)(f->scan % RAIL_FIFO_SLOTS), bytes = entry_bytes(f);
    const uint8_t *e = fifo_mem + (size_t)slot * RAIL_MAX_RECVS * bytes;
    uint64_t s = rail_cts_seq_load(e, bytes);
    return !older_or_unwritten(f, s, bytes);
}

/* rail_cts_read_as of the entry at p whose sequence word was just loaded (acquire) as `want`: a
 * compact entry is copied in place (no second load before the fields, no call), then its word is
 * loaded again as rail_cts_read_as does; the same answer but for a peer's write between the two
 * first loads, which rail_cts_read_as reports as 1 or 2 and this as 2 (both: not this entry). */
static inline int read_loaded(const uint8_t *p, unsigned bytes, uint64_t want, struct rail_cts *out)
{
    if (bytes != RAIL_CTS_COMPACT_BYTES)
        return rail_cts_read_as(p, bytes, want, out);
    const struct rail_cts_compact *k = (const struct rail_cts_compact *)p;
    out->reserved = 0;
    out->addr = k->addr;
    out->size = k->size;
    out->tag = k->tag;
    out->tag_index = k->tag_index;
    out->nreqs = k->nreqs;
    out->entry = k->entry;
    memcpy(out->rkey, k->rkey, sizeof(out->rkey));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&k->seq, __ATOMIC_ACQUIRE) != (uint32_t)want)
        return 2;
    out->seq = want;
    return 0;
}

int rail_cts_fifo_next(struct rail_cts_fifo *f, const uint8_t *fifo_mem, int32_t tag,
                       uint32_t index, uint64_t *seq, struct rail_cts *out)
{
    if (f->head != f->scan)
        return RAIL_CTS_NEXT_OTHER;
    unsigned slot = (unsigned)(f->scan % RAIL_FIFO_SLOTS), bytes = entry_bytes(f);
    const uint8_t *base = fifo_mem + (size_t)slot * RAIL_MAX_RECVS * bytes;
    uint64_t want = f->scan + 1, s = rail_cts_seq_load(base, bytes);
    bool later;
    if (!rail_cts_seq_is(s, want, bytes, &later)) {
        /* rail_cts_fifo_news, from the same load */
        return older_or_unwritten(f, s, bytes) ? RAIL_CTS_NEXT_NONE : RAIL_CTS_NEXT_OTHER;
    }
    if (read_loaded(base, bytes, want, out) != 0 || !rail_cts_ok(out, want, 0) || out->nreqs != 1 ||
        out->tag != tag || out->tag_index != index)
        return RAIL_CTS_NEXT_OTHER;
    /* The slot after it: absorb would stop there (not written: read status 1). */
    unsigned next = (unsigned)((f->scan + 1) % RAIL_FIFO_SLOTS);
    if (rail_cts_seq_is(rail_cts_seq_load(fifo_mem + (size_t)next * RAIL_MAX_RECVS * bytes, bytes),
                        want + 1, bytes, &later) ||
        later)
        return RAIL_CTS_NEXT_OTHER;
    struct rail_shadow *sh = &f->shadow[slot][0];
    sh->tag = tag;
    sh->tag_index = index;
    sh->resolved = false; /* index is the count sent with tag: not below it */
    f->shadow_n[slot] = 1;
    f->unresolved[slot] = 1;
    *seq = f->scan++;
    return RAIL_CTS_NEXT_TAKEN;
}

struct rail_shadow *rail_cts_fifo_find(struct rail_cts_fifo *f, int32_t tag, uint32_t index,
                                       uint64_t *seq, unsigned *entry)
{
    for (uint64_t q = f->head; q < f->scan; q++) {
        unsigned slot = (unsigned)(q % RAIL_FIFO_SLOTS);
        for (int e = 0; e < f->shadow_n[slot]; e++) {
            struct rail_shadow *sh = &f->shadow[slot][e];
            if (!sh->resolved && sh->tag == tag && sh->tag_index == index) {
                *seq = q;
                *entry = (unsigned)e;
                return sh;
            }
        }
    }
    return NULL;
}

int rail_cts_fifo_take(const struct rail_cts_fifo *f, const uint8_t *fifo_mem, int nrails,
                       const struct rail_shadow *sh, uint64_t seq, unsigned e, struct rail_cts *out,
                       char *err, size_t errlen)
{
    unsigned slot = (unsigned)(seq % RAIL_FIFO_SLOTS), bytes = entry_bytes(f);
    const uint8_t *p = fifo_mem + ((size_t)slot * RAIL_MAX_RECVS + e) * bytes;
    char why[200];
    int st = rail_cts_read_as(p, bytes, seq + 1, out);
    if (st != 0) {
        snprintf(err, errlen, "FIFO slot %llu entry %u was %s before its rendezvous send",
                 (unsigned long long)seq, e, st == 1 ? "torn or cleared" : "written again");
        return -EPROTO;
    }
    if (!rail_cts_ok(out, seq + 1, e) &&
        rail_cts_check(out, seq + 1, e, nrails, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "FIFO slot %llu entry %u, read again: %s", (unsigned long long)seq, e,
                 why);
        return -EPROTO;
    }
    if (out->tag != sh->tag || out->tag_index != sh->tag_index) {
        snprintf(err, errlen,
                 "FIFO slot %llu entry %u changed from tag %d #%u to tag %d #%u after it was read",
                 (unsigned long long)seq, e, sh->tag, sh->tag_index, out->tag, out->tag_index);
        return -EPROTO;
    }
    return 0;
}

void rail_cts_fifo_resolve(struct rail_cts_fifo *f, struct rail_shadow *sh)
{
    if (sh->resolved)
        return;
    sh->resolved = true;
    f->unresolved[(size_t)(sh - &f->shadow[0][0]) / RAIL_MAX_RECVS]--;
    retire(f);
}
