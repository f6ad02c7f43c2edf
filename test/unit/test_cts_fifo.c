/* SPDX-License-Identifier: Apache-2.0 */
/* The clear-to-send FIFO (protocol/cts_fifo.c) without verbs: chosen cases (a slot written in
 * parts, a torn entry, a slot overwritten by a later round, malformed entries, matching by tag and
 * index across grouped receives, head advance), then a simulated connection of thousands of
 * receive entries through the 64 slots (slot sequences wrap around the FIFO many times):
 * grouped receives with random tags, clear-to-send writes landing in a seeded random order, split
 * in two, or written twice (the re-post after a rail failure), receives that hold their CTS back,
 * a sender that goes eagerly when no entry is absorbed yet. Asserted: every receive entry gets
 * its message exactly once, a rendezvous send always lands in the entry with its (tag, index)
 * whose receive still holds that slot (read again in place, never rewritten before it is taken),
 * no slot is taken again before its receive released it, head <= scan <= head + RAIL_FIFO_SLOTS.
 * The sender's fast path (rail_cts_fifo_next) is tried on half the sends, and every answer of it is
 * compared with the general path's (news, absorb, find, take) on a copy of the state: the same
 * entry, slot and state after; chosen cases fail when any one of its conditions is dropped. A
 * calm stream (one receive at a time, its CTS landing at once: NCCL's ping-pong) takes it often. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/cts_fifo.h"

static uint64_t g_mem[RAIL_FIFO_BYTES / 8]; /* the sender's FIFO memory */
#define MEM ((uint8_t *)g_mem)
/* The entry layout under test (wire/cts_layout.h): every case runs with both. */
static unsigned g_bytes = RAIL_CTS_BYTES;

static struct rail_cts mk(uint64_t seq, int n, int e, int32_t tag, uint32_t index, uint64_t addr)
{
    struct rail_cts c;
    memset(&c, 0, sizeof(c));
    c.addr = addr;
    c.size = 4096;
    c.tag = tag;
    c.tag_index = index;
    c.nreqs = (uint16_t)n;
    c.entry = (uint16_t)e;
    c.seq = seq + 1;
    return c;
}

static void put(uint64_t seq, int e, const struct rail_cts *c)
{
    uint8_t *p = MEM + ((seq % RAIL_FIFO_SLOTS) * RAIL_MAX_RECVS + (unsigned)e) * g_bytes;
    if (g_bytes == RAIL_CTS_BYTES) {
        memcpy(p, c, sizeof(*c));
        return;
    }
    rail_cts_stage(p, g_bytes, c, RAIL_MAX_RAILS);
    rail_cts_stage_seq(p, g_bytes, c->seq);
}

/* Resolves the entry for (tag, index); false (and a failed check) when it is not there. */
static bool take(struct rail_cts_fifo *f, int32_t tag, uint32_t index)
{
    uint64_t seq;
    unsigned e;
    struct rail_shadow *sh = rail_cts_fifo_find(f, tag, index, &seq, &e);
    CHECK_MSG(sh != NULL, "no entry for tag %d #%u", tag, index);
    if (sh)
        rail_cts_fifo_resolve(f, sh);
    return sh != NULL;
}

static void chosen(void)
{
    struct rail_cts_fifo f;
    struct rail_tagmap sent;
    char err[256];
    uint64_t seq;
    unsigned e;
    memset(&f, 0, sizeof(f));
    f.entry_bytes = g_bytes;
    memset(g_mem, 0, sizeof(g_mem));
    rail_tagmap_init(&sent);

    /* Nothing written: no news, nothing absorbed. */
    CHECK(!rail_cts_fifo_news(&f, MEM));
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 0);
    /* Slot 0 with 3 entries, entry 2 still on its way: the slot waits. */
    struct rail_cts a0 = mk(0, 3, 0, 5, 0, 0x1000), a1 = mk(0, 3, 1, 6, 0, 0x2000),
                    a2 = mk(0, 3, 2, 5, 1, 0x3000);
    put(0, 0, &a0);
    put(0, 1, &a1);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 0);
    CHECK(rail_cts_fifo_news(&f, MEM)); /* written in part: absorb decides */
    put(0, 2, &a2);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 1);
    CHECK(!rail_cts_fifo_news(&f, MEM)); /* slot 1 never written */
    CHECK_EQ_INT(f.shadow_n[0], 3);
    /* Matching by tag and per-tag index. */
    struct rail_shadow *sh = rail_cts_fifo_find(&f, 5, 1, &seq, &e);
    struct rail_cts got;
    CHECK(sh && seq == 0 && e == 2);
    /* The shadow keeps 12 bytes of the 128-byte entry; the send reads the rest in place. */
    CHECK(sizeof(struct rail_shadow) <= 12);
    CHECK(sh && rail_cts_fifo_take(&f, MEM, 2, sh, seq, e, &got, err, sizeof(err)) == 0 &&
          got.addr == 0x3000 && got.tag == 5 && got.tag_index == 1);
    /* A peer rewriting the entry after it was absorbed is refused, never used: another (tag,
     * index) under the same sequence, another round, a torn or malformed entry. */
    struct rail_cts x = a2;
    x.tag_index = 7;
    put(0, 2, &x);
    CHECK(sh && rail_cts_fifo_take(&f, MEM, 2, sh, seq, e, &got, err, sizeof(err)) == -EPROTO &&
          strstr(err, "changed from tag 5 #1 to tag 5 #7") != NULL);
    x = a2;
    x.seq += RAIL_FIFO_SLOTS;
    put(0, 2, &x);
    CHECK(sh && rail_cts_fifo_take(&f, MEM, 2, sh, seq, e, &got, err, sizeof(err)) == -EPROTO &&
          strstr(err, "written again") != NULL);
    x = a2;
    x.seq = 0;
    put(0, 2, &x);
    CHECK(sh && rail_cts_fifo_take(&f, MEM, 2, sh, seq, e, &got, err, sizeof(err)) == -EPROTO);
    x = a2;
    x.entry = 1;
    put(0, 2, &x);
    CHECK(sh && rail_cts_fifo_take(&f, MEM, 2, sh, seq, e, &got, err, sizeof(err)) == -EPROTO &&
          strstr(err, "read again") != NULL);
    put(0, 2, &a2);
    CHECK(rail_cts_fifo_find(&f, 6, 1, &seq, &e) == NULL);
    CHECK(rail_cts_fifo_find(&f, 7, 0, &seq, &e) == NULL);
    if (sh)
        rail_cts_fifo_resolve(&f, sh);
    CHECK(rail_cts_fifo_find(&f, 5, 1, &seq, &e) == NULL); /* taken once only */
    CHECK_EQ_INT(f.head, 0);                               /* two entries still open */
    CHECK(take(&f, 5, 0));
    CHECK(take(&f, 6, 0));
    CHECK_EQ_INT(f.head, 1);

    /* Slot 1: its message for tag 9 #0 already went eagerly: resolved at once, head passes. */
    uint32_t ix;
    CHECK_EQ_INT(rail_tagmap_next(&sent, 9, &ix), 0);
    struct rail_cts b0 = mk(1, 1, 0, 9, 0, 0x4000);
    put(1, 0, &b0);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 2);
    CHECK_EQ_INT(f.head, 2);

    /* Slot 2 was never absorbed, and the receiver already wrote it again for round 2 + 64: the
     * old round is skipped as empty and the new one waits its turn. */
    struct rail_cts c0 = mk(2 + RAIL_FIFO_SLOTS, 1, 0, 9, 1, 0x5000);
    put(2, 0, &c0);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 3);
    CHECK_EQ_INT(f.shadow_n[2], 0);
    CHECK(rail_cts_fifo_find(&f, 9, 1, &seq, &e) == NULL);

    /* A torn entry (seq of another, non-matching round): not written yet. */
    struct rail_cts t = mk(3, 1, 0, 1, 0, 0x6000);
    struct rail_cts out;
    t.seq = 3 + 1 + 5;
    put(3, 0, &t);
    CHECK_EQ_INT(rail_cts_read_as(MEM + 3 * RAIL_MAX_RECVS * g_bytes, g_bytes, 4, &out), 1);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, 3);

    /* Malformed entries fail with the slot named. */
    struct rail_cts bad = mk(3, 9, 0, 1, 0, 0x6000); /* 9 > RAIL_MAX_RECVS entries */
    put(3, 0, &bad);
    err[0] = 0;
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), -EPROTO);
    CHECK(strstr(err, "FIFO slot 3") != NULL);
    struct rail_cts d0 = mk(3, 2, 0, 1, 0, 0x6000), d1 = mk(3, 3, 1, 1, 1, 0x7000);
    put(3, 0, &d0);
    put(3, 1, &d1);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), -EPROTO);
    CHECK(strstr(err, "entry count differs") != NULL);
    struct rail_cts n0 = mk(3, 1, 0, 1, 0, 0);
    n0.size = 10; /* NULL buffer of 10 bytes */
    put(3, 0, &n0);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), -EPROTO);

    /* A full window: 64 slots absorbed and unresolved; a 65th slot (sequence 64, the memory of
     * slot 0) is not read while slot 0 is still open. */
    memset(&f, 0, sizeof(f));
    f.entry_bytes = g_bytes;
    memset(g_mem, 0, sizeof(g_mem));
    for (uint64_t q = 0; q < RAIL_FIFO_SLOTS; q++) {
        struct rail_cts w = mk(q, 1, 0, 2, (uint32_t)q, 0x1000);
        put(q, 0, &w);
    }
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, RAIL_FIFO_SLOTS);
    struct rail_cts w = mk(RAIL_FIFO_SLOTS, 1, 0, 2, RAIL_FIFO_SLOTS, 0x1000);
    put(RAIL_FIFO_SLOTS, 0, &w);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, RAIL_FIFO_SLOTS);
    CHECK(take(&f, 2, 0)); /* slot 0 done: the next round of its memory may be read */
    CHECK_EQ_INT(f.head, 1);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(f.scan, RAIL_FIFO_SLOTS + 1);
    CHECK(rail_cts_fifo_find(&f, 2, RAIL_FIFO_SLOTS, &seq, &e) != NULL && seq == RAIL_FIFO_SLOTS);
    rail_tagmap_free(&sent);

    /* The receiver's slots. */
    static struct rail_cts_tail tl;
    struct rail_recv_req *r1 = (struct rail_recv_req *)&tl, *r2 = (struct rail_recv_req *)&f;
    memset(&tl, 0, sizeof(tl));
    CHECK(!rail_cts_tail_busy(&tl));
    CHECK_EQ_INT(rail_cts_tail_take(&tl, r1), 0);
    CHECK(rail_cts_tail_owner(&tl, 0) == r1);
    CHECK(rail_cts_tail_owner(&tl, RAIL_FIFO_SLOTS) == NULL); /* out of range */
    for (int k = 1; k < RAIL_FIFO_SLOTS; k++)
        (void)rail_cts_tail_take(&tl, r2);
    CHECK(rail_cts_tail_busy(&tl));    /* slot 0 again: r1 still holds it */
    rail_cts_tail_release(&tl, 0, r2); /* not r2's: nothing */
    CHECK(rail_cts_tail_busy(&tl));
    rail_cts_tail_release(&tl, 0, r1);
    CHECK(!rail_cts_tail_busy(&tl));
    CHECK_EQ_INT(rail_cts_tail_take(&tl, r2), RAIL_FIFO_SLOTS);
}

/* ---- the sender's fast path (rail_cts_fifo_next) against the general one ---- */

/* The parts of a sender's state that anything reads: head, scan, the counts of every slot and
 * the shadow entries of the absorbed slots [head, scan). */
static bool same_state(const struct rail_cts_fifo *a, const struct rail_cts_fifo *b)
{
    if (a->head != b->head || a->scan != b->scan || a->entry_bytes != b->entry_bytes ||
        memcmp(a->shadow_n, b->shadow_n, sizeof(a->shadow_n)) != 0 ||
        memcmp(a->unresolved, b->unresolved, sizeof(a->unresolved)) != 0)
        return false;
    for (uint64_t q = a->head; q < a->scan; q++) {
        unsigned slot = (unsigned)(q % RAIL_FIFO_SLOTS);
        for (int e = 0; e < a->shadow_n[slot]; e++) {
            const struct rail_shadow *x = &a->shadow[slot][e], *y = &b->shadow[slot][e];
            if (x->tag != y->tag || x->tag_index != y->tag_index || x->resolved != y->resolved)
                return false;
        }
    }
    return true;
}

static bool same_cts(const struct rail_cts *a, const struct rail_cts *b)
{
    return a->addr == b->addr && a->size == b->size && a->tag == b->tag &&
           a->tag_index == b->tag_index && a->nreqs == b->nreqs && a->entry == b->entry &&
           a->seq == b->seq && memcmp(a->rkey, b->rkey, sizeof(a->rkey)) == 0;
}

/* Tries the fast path on f for the send (tag, index = sent's count for tag) and the general path
 * (news, absorb, find, take: what net_send.c did before) on a copy of f, and checks that they
 * agree: TAKEN gives the entry, slot and state of the general path; NONE is no news and no
 * match; OTHER changes nothing. Returns the fast path's answer; *took (may be NULL) = the entry
 * (TAKEN). */
static int fast_vs_general(struct rail_cts_fifo *f, const struct rail_tagmap *sent, int32_t tag,
                           struct rail_cts *took, int *bad)
{
    static struct rail_cts_fifo before, g; /* large: not on the stack */
    uint32_t index = rail_tagmap_get(sent, tag);
    before = *f;
    g = *f;
    uint64_t fseq = ~0ull, gseq = ~0ull;
    unsigned ge = ~0u;
    struct rail_cts fc, gc;
    char err[256];
    int nx = rail_cts_fifo_next(f, MEM, tag, index, &fseq, &fc);
    bool news = rail_cts_fifo_news(&g, MEM), ok = true;
    int arc = news ? rail_cts_fifo_absorb(&g, MEM, 2, sent, err, sizeof(err)) : 0;
    struct rail_shadow *gsh = arc == 0 ? rail_cts_fifo_find(&g, tag, index, &gseq, &ge) : NULL;
    int trc = gsh ? rail_cts_fifo_take(&g, MEM, 2, gsh, gseq, ge, &gc, err, sizeof(err)) : -1;
    if (nx == RAIL_CTS_NEXT_TAKEN)
        ok = news && arc == 0 && gsh && gseq == fseq && ge == 0 && trc == 0 && same_cts(&fc, &gc) &&
             same_state(f, &g) && gsh == &g.shadow[fseq % RAIL_FIFO_SLOTS][0];
    else if (nx == RAIL_CTS_NEXT_NONE)
        ok = !news && !gsh && same_state(f, &g);
    else
        ok = nx == RAIL_CTS_NEXT_OTHER && same_state(f, &before);
    if (!ok) {
        fprintf(stderr,
                "fast path %d for tag %d #%u (head %llu scan %llu) disagrees with the general one "
                "(news %d absorb %d found %d slot %llu entry %u take %d)\n",
                nx, tag, index, (unsigned long long)before.head, (unsigned long long)before.scan,
                news, arc, gsh != NULL, (unsigned long long)gseq, ge, trc);
        ++*bad;
    }
    if (nx == RAIL_CTS_NEXT_TAKEN) { /* the inline resolve of what was just taken */
        static struct rail_cts_fifo r;
        r = *f;
        rail_cts_fifo_resolve(f, &f->shadow[fseq % RAIL_FIFO_SLOTS][0]);
        rail_cts_fifo_resolve_next(&r);
        if (!same_state(f, &r) || memcmp(f->shadow, r.shadow, sizeof(r.shadow)) != 0) {
            fprintf(stderr, "rail_cts_fifo_resolve_next differs after taking slot %llu\n",
                    (unsigned long long)fseq);
            ++*bad;
        }
        *f = before; /* the callers resolve (or not) themselves */
        nx = rail_cts_fifo_next(f, MEM, tag, index, &fseq, &fc);
    }
    if (took && nx == RAIL_CTS_NEXT_TAKEN)
        *took = fc;
    return nx;
}

/* Each condition of the fast path, one case each (a case fails when its condition is dropped):
 * the next slot holds this send's entry; a group; another tag or index; an entry satisfied
 * eagerly; the slot after it written too (or overwritten by a later round); a malformed entry;
 * something absorbed still open; nothing written; the older round still there; a wrapped
 * sequence. */
static void fast_cases(void)
{
    static struct rail_cts_fifo f;
    struct rail_tagmap sent;
    struct rail_cts got;
    uint32_t ix;
    int bad = 0;
    memset(&f, 0, sizeof(f));
    f.entry_bytes = g_bytes;
    memset(g_mem, 0, sizeof(g_mem));
    rail_tagmap_init(&sent);

    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_NONE); /* empty */
    struct rail_cts a = mk(0, 1, 0, 4, 0, 0x1000);
    a.rkey[0] = 0x11;
    a.rkey[1] = 0x22;
    put(0, 0, &a);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 5, NULL, &bad), RAIL_CTS_NEXT_OTHER); /* tag */
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, &got, &bad), RAIL_CTS_NEXT_TAKEN);
    CHECK(got.addr == 0x1000 && got.rkey[1] == 0x22 && f.scan == 1 && f.head == 0);
    rail_cts_fifo_resolve(&f, &f.shadow[0][0]);
    CHECK_EQ_INT(rail_tagmap_next(&sent, 4, &ix), 0);
    CHECK_EQ_INT(f.head, 1);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_NONE);

    /* Slot 1 a group of two, entry 0 this send's: the general path absorbs both. */
    struct rail_cts g0 = mk(1, 2, 0, 4, 1, 0x2000), g1 = mk(1, 2, 1, 4, 2, 0x3000);
    put(1, 0, &g0);
    put(1, 1, &g1);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    struct rail_cts_fifo g = f;
    char err[256];
    CHECK_EQ_INT(rail_cts_fifo_absorb(&g, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK_EQ_INT(g.shadow_n[1], 2);

    /* Slot 1 a single entry, the slot after it written too: absorbing takes both. */
    struct rail_cts b = mk(1, 1, 0, 4, 1, 0x2000), c = mk(2, 1, 0, 4, 2, 0x3000);
    put(1, 0, &b);
    put(2, 0, &c);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    /* ... or overwritten by a later round (absorb skips it as empty). */
    struct rail_cts c2 = mk(2 + RAIL_FIFO_SLOTS, 1, 0, 4, 9, 0x3000);
    put(2, 0, &c2);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    memset(MEM + 2 * RAIL_MAX_RECVS * g_bytes, 0, g_bytes);
    /* Another index: the entry for #2 comes first (a later send's). */
    CHECK_EQ_INT(rail_cts_fifo_next(&f, MEM, 4, 2, &g.scan, &got), RAIL_CTS_NEXT_OTHER);
    /* A malformed entry (NULL buffer of 10 bytes): the general path says why. */
    struct rail_cts n = mk(1, 1, 0, 4, 1, 0);
    n.size = 10;
    put(1, 0, &n);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    struct rail_cts n2 = mk(1, 1, 0, 4, 1, 0x2000);
    n2.entry = 1; /* entry 1 of a 1-entry slot */
    put(1, 0, &n2);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    put(1, 0, &b);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, &got, &bad), RAIL_CTS_NEXT_TAKEN);
    CHECK(got.addr == 0x2000);
    /* Not resolved yet (its slot was busy, say): the next send of the tag goes the general way,
     * and so does a later one that finds it absorbed. */
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    rail_cts_fifo_resolve(&f, &f.shadow[1][0]);
    CHECK_EQ_INT(rail_tagmap_next(&sent, 4, &ix), 0);

    /* Slot 2 for tag 6 #0, already sent eagerly: absorb resolves it; the fast path leaves it. */
    CHECK_EQ_INT(rail_tagmap_next(&sent, 6, &ix), 0);
    struct rail_cts e = mk(2, 1, 0, 6, 0, 0x4000);
    put(2, 0, &e);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 6, NULL, &bad), RAIL_CTS_NEXT_OTHER);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK(f.head == 3 && f.scan == 3);

    /* Something absorbed still open (tag 7 #1 before its #0 was sent): a send of #0 whose entry
     * is the next slot goes the general way (the shadow is looked at first). */
    struct rail_cts h = mk(3, 1, 0, 7, 1, 0x5000), h0 = mk(4, 1, 0, 7, 0, 0x6000);
    put(3, 0, &h);
    CHECK_EQ_INT(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)), 0);
    CHECK(f.head == 3 && f.scan == 4);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 7, NULL, &bad), RAIL_CTS_NEXT_OTHER); /* nothing new */
    put(4, 0, &h0);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 7, NULL, &bad), RAIL_CTS_NEXT_OTHER);

    /* Wrapped: slot sequences around a multiple of RAIL_FIFO_SLOTS and 2^32 (compact entries
     * compare the low 32 bits); the older round of the slot still there reads as no news. */
    memset(&f, 0, sizeof(f));
    f.entry_bytes = g_bytes;
    f.head = f.scan = (1ull << 32) - 1;
    memset(g_mem, 0, sizeof(g_mem));
    struct rail_cts old = mk(f.scan - RAIL_FIFO_SLOTS, 1, 0, 4, 2, 0x7000);
    put(f.scan, 0, &old);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, NULL, &bad), RAIL_CTS_NEXT_NONE);
    struct rail_cts w = mk(f.scan, 1, 0, 4, 2, 0x8000);
    put(f.scan, 0, &w);
    CHECK_EQ_INT(fast_vs_general(&f, &sent, 4, &got, &bad), RAIL_CTS_NEXT_TAKEN);
    CHECK(got.addr == 0x8000 && f.scan == 1ull << 32);
    CHECK_EQ_INT(bad, 0);
    rail_tagmap_free(&sent);
}

/* ---- the simulated connection ---- */

#define NTAG  3
#define NENT  6000 /* receive entries in all */
#define NREQ  32   /* receives in flight (RAIL_RECV_REQS) */
#define MAXEV 256

struct sreq {
    bool live, has_slot;
    int n, first; /* entries first .. first + n - 1 */
    uint64_t seq;
    int cts_inflight; /* CTS writes of this receive not landed yet */
};

struct ev {
    int req, e0, e1; /* entries [e0, e1) of the slot */
    uint64_t seq;
    struct rail_cts c[RAIL_MAX_RECVS];
};

struct sim {
    uint32_t seed;
    /* receiver */
    struct rail_cts_tail tail;
    struct rail_tagmap posted;
    struct sreq req[NREQ];
    int nent;                /* entries posted */
    int32_t tag[NENT];       /* entry -> tag */
    uint32_t index[NENT];    /* entry -> per-tag index */
    uint8_t got[NENT];       /* messages the entry received */
    int16_t entry_req[NENT]; /* entry -> its receive */
    int plan[NTAG];          /* entries of each tag that will ever be posted */
    int32_t plan_tag[NENT];
    uint8_t unexp[NTAG][NENT]; /* eager messages that came before their entry */
    int by_tagidx[NTAG][NENT]; /* (tag, index) -> entry + 1 */
    struct sreq *slot_owner[RAIL_FIFO_SLOTS];
    /* sender */
    struct rail_cts_fifo f;
    struct rail_tagmap sent;
    int sent_total;
    /* network */
    struct ev ev[MAXEV];
    int nev;
    int bad, rdv, eager, skipped;
    int fast[3]; /* answers of the fast path (RAIL_CTS_NEXT_*) */
};

static uint32_t rnd(struct sim *s, uint32_t n)
{
    return (fuzz_step(&s->seed) >> 8) % n;
}

static void deliver(struct sim *s, int ent, const char *how)
{
    if (s->got[ent]++) {
        fprintf(stderr, "entry %d (tag %d #%u) got a second message (%s)\n", ent, s->tag[ent],
                s->index[ent], how);
        s->bad++;
    }
}

static void queue_cts(struct sim *s, int k)
{
    struct sreq *q = &s->req[k];
    struct ev ev;
    ev.req = k;
    ev.seq = q->seq;
    for (int i = 0; i < q->n; i++) {
        int ent = q->first + i;
        ev.c[i] = mk(q->seq, q->n, i, s->tag[ent], s->index[ent], (uint64_t)ent + 1);
    }
    /* Whole, split in two (the entries land at different times), and sometimes twice (the
     * re-post on another rail after the first write's rail failed). */
    int cut = q->n > 1 && rnd(s, 3) == 0 ? 1 + (int)rnd(s, (uint32_t)q->n - 1) : q->n;
    int copies = rnd(s, 6) == 0 ? 2 : 1;
    for (int c = 0; c < copies; c++) {
        for (int part = 0; part < (cut < q->n ? 2 : 1); part++) {
            if (s->nev >= MAXEV) {
                s->bad++;
                return;
            }
            ev.e0 = part ? cut : 0;
            ev.e1 = part ? q->n : cut;
            s->ev[s->nev++] = ev;
            q->cts_inflight++;
        }
    }
}

static void try_cts(struct sim *s, int k)
{
    struct sreq *q = &s->req[k];
    if (rail_cts_tail_busy(&s->tail))
        return;
    struct sreq *prev = s->slot_owner[s->tail.tail % RAIL_FIFO_SLOTS];
    if (prev && prev->live && prev->has_slot &&
        prev->seq % RAIL_FIFO_SLOTS == s->tail.tail % RAIL_FIFO_SLOTS) {
        s->bad++; /* taken again before its receive released it */
        fprintf(stderr, "slot %llu taken while a live receive holds it\n",
                (unsigned long long)(s->tail.tail % RAIL_FIFO_SLOTS));
    }
    q->seq = rail_cts_tail_take(&s->tail, (struct rail_recv_req *)q);
    q->has_slot = true;
    s->slot_owner[q->seq % RAIL_FIFO_SLOTS] = q;
    queue_cts(s, k);
}

static void post_recv(struct sim *s, bool calm)
{
    int k = 0;
    while (k < NREQ && s->req[k].live)
        k++;
    if (k == NREQ || s->nent >= NENT)
        return;
    struct sreq *q = &s->req[k];
    int left = NENT - s->nent;
    memset(q, 0, sizeof(*q));
    q->live = true;
    q->n = 1 + (int)rnd(s, (uint32_t)(left < RAIL_MAX_RECVS ? left : RAIL_MAX_RECVS));
    if (calm && rnd(s, 2))
        q->n = 1;
    q->first = s->nent;
    for (int i = 0; i < q->n; i++) {
        int ent = s->nent++;
        s->tag[ent] = s->plan_tag[ent];
        if (rail_tagmap_next(&s->posted, s->tag[ent], &s->index[ent]) != 0)
            s->bad++;
        s->entry_req[ent] = (int16_t)k;
        s->by_tagidx[s->tag[ent]][s->index[ent]] = ent + 1;
        if (s->unexp[s->tag[ent]][s->index[ent]]) {
            s->unexp[s->tag[ent]][s->index[ent]] = 0;
            deliver(s, ent, "eager, unexpected");
        }
    }
    if (rnd(s, 2) == 0) /* else held back, as a small receive does */
        try_cts(s, k);
}

static void land_cts(struct sim *s)
{
    int i = (int)rnd(s, (uint32_t)s->nev);
    struct ev ev = s->ev[i];
    s->ev[i] = s->ev[--s->nev];
    /* The write lands whole between two absorbs (a torn entry is a chosen case above). */
    for (int e = ev.e0; e < ev.e1; e++)
        put(ev.seq, e, &ev.c[e]);
    s->req[ev.req].cts_inflight--;
}

/* A rendezvous send of (tag, index) took entry e of slot seq, which reads c: it must be that
 * entry of the receive that still holds the slot. */
static bool rdv_right(struct sim *s, int32_t tag, uint32_t index, uint64_t seq, unsigned e,
                      const struct rail_cts *c)
{
    int ent = (int)c->addr - 1;
    struct sreq *q = ent >= 0 && ent < s->nent ? &s->req[s->entry_req[ent]] : NULL;
    bool right = q && s->tag[ent] == tag && s->index[ent] == index && q->live && q->has_slot &&
                 q->seq == seq && ent == q->first + (int)e &&
                 rail_cts_tail_owner(&s->tail, (unsigned)(seq % RAIL_FIFO_SLOTS)) ==
                     (struct rail_recv_req *)q;
    if (!right) {
        fprintf(stderr, "rendezvous for tag %d #%u matched entry %d of slot %llu wrongly\n", tag,
                index, ent, (unsigned long long)seq);
        s->bad++;
    }
    return right;
}

static void send_one(struct sim *s, bool calm)
{
    int32_t tag = (int32_t)rnd(s, NTAG);
    for (int k = 0; k < s->nent && calm && rnd(s, 4) != 0; k++)
        if (!s->got[k]) {
            tag = s->tag[k]; /* mostly the tag the receiver waits for */
            break;
        }
    uint32_t index = rail_tagmap_get(&s->sent, tag), ix;
    char err[256];
    uint64_t seq;
    unsigned e;
    struct rail_cts c;
    struct rail_shadow *sh = NULL;
    if ((int)index >= s->plan[tag])
        return;
    int nx = RAIL_CTS_NEXT_OTHER;
    if (rnd(s, 2)) {
        /* net_send.c's way: the fast path first (checked against the general path), the
         * general path when it says OTHER. */
        nx = fast_vs_general(&s->f, &s->sent, tag, &c, &s->bad);
        s->fast[nx]++;
        if (nx == RAIL_CTS_NEXT_TAKEN) {
            seq = s->f.scan - 1;
            e = 0;
            sh = &s->f.shadow[seq % RAIL_FIFO_SLOTS][0];
        }
    }
    if (nx == RAIL_CTS_NEXT_OTHER) {
        /* No news: absorbing must change nothing, and the sender may skip it (as net_send.c
         * does). */
        bool news = rail_cts_fifo_news(&s->f, MEM);
        uint64_t scan0 = s->f.scan;
        if (!news && rnd(s, 2)) {
            /* skipped */
        } else if (rail_cts_fifo_absorb(&s->f, MEM, 2, &s->sent, err, sizeof(err)) != 0) {
            fprintf(stderr, "absorb: %s\n", err);
            s->bad++;
            return;
        }
        CHECK_MSG(news || s->f.scan == scan0, "absorb took slot %llu although no news was seen",
                  (unsigned long long)scan0);
        sh = rail_cts_fifo_find(&s->f, tag, index, &seq, &e);
        if (sh && rail_cts_fifo_take(&s->f, MEM, 2, sh, seq, e, &c, err, sizeof(err)) != 0) {
            fprintf(stderr, "take: %s\n", err);
            s->bad++;
            return;
        }
    }
    if (sh) {
        if (!rdv_right(s, tag, index, seq, e, &c))
            return;
        rail_cts_fifo_resolve(&s->f, sh);
        deliver(s, (int)c.addr - 1, "rendezvous");
        s->rdv++;
    } else if (rnd(s, 3) == 0) {
        int ent = s->by_tagidx[tag][index] - 1;
        if (ent >= 0)
            deliver(s, ent, "eager");
        else
            s->unexp[tag][index] = 1;
        s->eager++;
    } else {
        return; /* NCCL calls again */
    }
    if (rail_tagmap_next(&s->sent, tag, &ix) != 0)
        s->bad++;
    s->sent_total++;
}

static void complete_recvs(struct sim *s)
{
    for (int k = 0; k < NREQ; k++) {
        struct sreq *q = &s->req[k];
        if (!q->live)
            continue;
        bool all = true;
        for (int i = 0; i < q->n; i++)
            all = all && s->got[q->first + i];
        if (!all) {
            if (!q->has_slot && rnd(s, 4) == 0)
                try_cts(s, k); /* a held-back CTS goes after all */
            continue;
        }
        if (q->cts_inflight)
            continue; /* a receive waits for its own CTS write to complete */
        if (q->has_slot)
            rail_cts_tail_release(&s->tail, q->seq, (struct rail_recv_req *)q);
        q->live = false;
    }
}

/* calm: one receive at a time whose clear-to-send lands at once (NCCL's ping-pong: the case
 * the fast path is for); else up to NREQ receives, writes landing in random order. */
static void stream_as(uint32_t seed, bool calm)
{
    static struct sim sim; /* large: not on the stack */
    struct sim *s = &sim;
    memset(s, 0, sizeof(*s));
    s->f.entry_bytes = g_bytes;
    memset(g_mem, 0, sizeof(g_mem));
    s->seed = seed;
    rail_tagmap_init(&s->posted);
    rail_tagmap_init(&s->sent);
    for (int k = 0; k < NENT; k++) {
        s->plan_tag[k] = (int32_t)rnd(s, NTAG);
        s->plan[s->plan_tag[k]]++;
    }
    long steps = 0;
    while ((s->sent_total < NENT || (calm && s->nent < NENT)) && steps < 200L * NENT &&
           s->bad == 0) {
        bool idle = true;
        for (int k = 0; k < NREQ && calm; k++)
            idle = idle && !s->req[k].live;
        if (calm ? idle : rnd(s, 3) == 0)
            post_recv(s, calm);
        while (s->nev && (calm || rnd(s, 2) == 0)) {
            land_cts(s);
            if (!calm)
                break;
        }
        send_one(s, calm);
        complete_recvs(s);
        bool window = s->f.head <= s->f.scan && s->f.scan <= s->f.head + RAIL_FIFO_SLOTS &&
                      s->f.scan <= s->tail.tail;
        if (!window) {
            fprintf(stderr, "head %llu scan %llu tail %llu\n", (unsigned long long)s->f.head,
                    (unsigned long long)s->f.scan, (unsigned long long)s->tail.tail);
            s->bad++;
        }
        steps++;
    }
    /* Every write lands, the sender absorbs what is left: every slot it saw is retired (an
     * entry satisfied eagerly is resolved at absorb, a rendezvous one when it was sent). */
    while (s->nev)
        land_cts(s);
    char err[256];
    CHECK(rail_cts_fifo_absorb(&s->f, MEM, 2, &s->sent, err, sizeof(err)) == 0);
    CHECK_MSG(s->f.head == s->f.scan && s->f.scan == s->tail.tail,
              "seed %u: head %llu scan %llu tail %llu after the stream", seed,
              (unsigned long long)s->f.head, (unsigned long long)s->f.scan,
              (unsigned long long)s->tail.tail);
    int once = 0;
    for (int k = 0; k < NENT; k++)
        once += s->got[k] == 1;
    CHECK_MSG(s->bad == 0, "seed %u: %d violation(s)", seed, s->bad);
    CHECK_MSG(once == NENT, "seed %u: %d of %d entries got their message exactly once (%ld steps)",
              seed, once, NENT, steps);
    CHECK_MSG(calm ? s->fast[RAIL_CTS_NEXT_TAKEN] > 0 && s->fast[RAIL_CTS_NEXT_NONE] > 0
                   : s->fast[RAIL_CTS_NEXT_OTHER] > 0,
              "seed %u: fast path took %d, none %d, other %d: not every answer was checked", seed,
              s->fast[0], s->fast[1], s->fast[2]);
    CHECK_MSG(s->tail.tail > 4 * RAIL_FIFO_SLOTS && s->rdv > 0 && s->eager > 0,
              "seed %u: %llu slots, %d rendezvous, %d eager: the stream did not wrap or mix", seed,
              (unsigned long long)s->tail.tail, s->rdv, s->eager);
    rail_tagmap_free(&s->posted);
    rail_tagmap_free(&s->sent);
}

static void stream(uint32_t seed)
{
    stream_as(seed, false);
}

static void stream_calm(uint32_t seed)
{
    stream_as(seed, true);
}

/* The compact layout (wire version 6): every field and all 8 rkeys survive the round trip, the
 * sequence word is the entry's last, and sequences compare modulo 2^32 (the slot rounds around
 * 2^32 are told apart; never-written reads as not yet written). */
static void compact(void)
{
    uint8_t p[RAIL_CTS_COMPACT_BYTES + 8];
    memset(p, 0xEE, sizeof(p));
    struct rail_cts c = mk(41, 3, 2, -7, 1234, 0x7f0012345678ull), out;
    c.size = 0x123456789ull;
    for (int rl = 0; rl < RAIL_MAX_RAILS; rl++)
        c.rkey[rl] = 0xA0000000u + (uint32_t)rl;
    rail_cts_stage(p, RAIL_CTS_COMPACT_BYTES, &c, RAIL_MAX_RAILS);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 42, &out), 1); /* seq not yet */
    rail_cts_stage_seq(p, RAIL_CTS_COMPACT_BYTES, 42);
    CHECK(p[RAIL_CTS_COMPACT_BYTES - 4] == 42 && p[RAIL_CTS_COMPACT_BYTES] == 0xEE);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 42, &out), 0);
    CHECK(out.addr == c.addr && out.size == c.size && out.tag == -7 && out.tag_index == 1234 &&
          out.nreqs == 3 && out.entry == 2 && out.seq == 42 &&
          memcmp(out.rkey, c.rkey, sizeof(c.rkey)) == 0);
    char err[128];
    CHECK_EQ_INT(rail_cts_check(&out, 42, 2, RAIL_MAX_RAILS, err, sizeof(err)), 0);
    /* A later round of the slot: 2 (overwritten); an older one or another slot's: 1. */
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 42 + RAIL_FIFO_SLOTS, &out), 1);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 43, &out), 1);
    rail_cts_stage_seq(p, RAIL_CTS_COMPACT_BYTES, 42 + RAIL_FIFO_SLOTS);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 42, &out), 2);
    /* Around 2^32: sequence 2^32 + 5 is stored as 5 and read as the full sequence. */
    uint64_t big = (1ull << 32) + 5;
    rail_cts_stage_seq(p, RAIL_CTS_COMPACT_BYTES, big);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, big, &out), 0);
    CHECK(out.seq == big);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, big - RAIL_FIFO_SLOTS, &out), 2);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, big + RAIL_FIFO_SLOTS, &out), 1);
    rail_cts_stage_seq(p, RAIL_CTS_COMPACT_BYTES, 0);
    CHECK_EQ_INT(rail_cts_read_as(p, RAIL_CTS_COMPACT_BYTES, 1, &out), 1);
    /* The sender's region: the FIFO is half, the credit and answers follow it. */
    CHECK(RAIL_FIFO_BYTES_OF(RAIL_CTS_COMPACT_BYTES) * 2 == RAIL_FIFO_BYTES);
    CHECK(RAIL_SEND_REGION - RAIL_SEND_REGION_OF(RAIL_CTS_COMPACT_BYTES) == RAIL_FIFO_BYTES / 2);
}

/* Slot sequences around 2^32: a compact entry's sequence word holds the low 32 bits, so slot
 * sequence 2^32 - 1 is written as 0, which in the first round means "never written". It must
 * read as news there (the sender would never absorb that slot again: every later rendezvous of
 * the comm would wait forever), and a never-written slot of the first round must not. */
static void wrapped(void)
{
    static struct rail_cts_fifo f;
    struct rail_tagmap sent;
    char err[256];
    uint64_t seq;
    unsigned e;
    rail_tagmap_init(&sent);
    memset(&f, 0, sizeof(f));
    f.entry_bytes = g_bytes;
    memset(g_mem, 0, sizeof(g_mem));
    CHECK(!rail_cts_fifo_news(&f, MEM)); /* first round, never written */
    /* The rounds before: every slot holds its older round. */
    for (uint64_t q = (1ull << 32) - 3; q < (1ull << 32) + 3; q++) {
        struct rail_cts old = mk(q - RAIL_FIFO_SLOTS, 1, 0, 3, 0, 0x1000);
        put(q, 0, &old);
    }
    for (uint64_t q0 = (1ull << 32) - 3; q0 < (1ull << 32) + 2; q0++) {
        f.head = f.scan = q0;
        CHECK_MSG(!rail_cts_fifo_news(&f, MEM), "slot sequence %llu: older round read as news",
                  (unsigned long long)q0);
        struct rail_cts c = mk(q0, 1, 0, 3, 0, 0x2000);
        put(q0, 0, &c);
        CHECK_MSG(rail_cts_fifo_news(&f, MEM), "slot sequence %llu written, no news",
                  (unsigned long long)q0);
        err[0] = 0;
        CHECK_MSG(rail_cts_fifo_absorb(&f, MEM, 2, &sent, err, sizeof(err)) == 0, "%s", err);
        CHECK(f.scan == q0 + 1 && rail_cts_fifo_find(&f, 3, 0, &seq, &e) != NULL && seq == q0);
    }
    rail_tagmap_free(&sent);
}

int main(void)
{
    compact();
    chosen();
    wrapped();
    fast_cases();
    fuzz_seeds(stream, 10, 2654435761u);
    fuzz_seeds(stream_calm, 4, 40503u);
    g_bytes = RAIL_CTS_COMPACT_BYTES; /* the same cases over the compact layout */
    chosen();
    wrapped();
    fast_cases();
    fuzz_seeds(stream, 10, 2654435761u);
    fuzz_seeds(stream_calm, 4, 40503u);
    return check_report("test_cts_fifo");
}
