/* SPDX-License-Identifier: Apache-2.0 */
/* The clear-to-send FIFO (pure: no verbs, no I/O, no clock). The receiver RDMA-writes one slot per
 * irecv into the sender's FIFO memory: slot sequence q goes to slot q % RAIL_FIFO_SLOTS, one
 * struct rail_cts per grouped receive entry, each carrying seq = q + 1 (written last, read first
 * and last). The sender absorbs written slots in sequence order (keeping of each entry only what
 * matching needs: its shadow) and matches a send (tag, j-th message with that tag) against the
 * entry with that (tag, per-tag index).
 *
 * Receiver (struct rail_cts_tail): slot sequences are taken in order (tail); a slot is taken again
 * (by sequence q + RAIL_FIFO_SLOTS) only once the receive that held it was released.
 * Sender (struct rail_cts_fifo): head <= scan <= head + RAIL_FIFO_SLOTS. Slots [head, scan) were
 * absorbed: every entry validated once, and only what matching needs kept (tag, per-tag index,
 * resolved: 12 bytes of the 64- or 128-byte entry); a rendezvous send reads the entry it takes
 * again in place (rail_cts_fifo_take), validates it again and checks it is still the one matched,
 * so a peer rewriting a slot after the first check is refused, never used. An entry is resolved
 * once a rendezvous send took it or when a message with its (tag, index) was already sent eagerly;
 * head passes a slot only when every entry is resolved. A slot the receiver already wrote again for
 * a later round (every entry of the older round was satisfied eagerly, so it never needed
 * absorbing) is skipped as empty. test_cts_fifo checks this against reordered, partial, repeated
 * and wrapped-around slot writes. */
#ifndef NCCL_RAIL_CTS_FIFO_H
#define NCCL_RAIL_CTS_FIFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/cts_layout.h"
#include "wire/net_tagmap.h"
#include "wire/net_wire.h"

/* ---- receiver: which receive holds which slot ---- */

struct rail_recv_req; /* the owner of a slot, opaque here */

struct rail_cts_tail {
    uint64_t tail; /* next slot sequence to take */
    struct rail_recv_req *by_slot[RAIL_FIFO_SLOTS];
};

/* The next slot is still held by an older receive. */
bool rail_cts_tail_busy(const struct rail_cts_tail *t);
/* The next slot (not busy) goes to owner: returns its sequence. */
uint64_t rail_cts_tail_take(struct rail_cts_tail *t, struct rail_recv_req *owner);
/* owner, which took sequence seq, lets its slot go (nothing when the slot is not owner's). */
void rail_cts_tail_release(struct rail_cts_tail *t, uint64_t seq,
                           const struct rail_recv_req *owner);
/* The receive holding slot (an index, not a sequence), or NULL. */
struct rail_recv_req *rail_cts_tail_owner(const struct rail_cts_tail *t, unsigned slot);

/* ---- sender: what was absorbed of each entry (the entry itself stays in the FIFO memory) ---- */

struct rail_shadow {
    int32_t tag;
    uint32_t tag_index;
    bool resolved; /* sent by rendezvous, or already satisfied by an eager send */
};

struct rail_cts_fifo {
    /* Bytes of one entry of the FIFO memory (wire/cts_layout.h): RAIL_CTS_BYTES or
     * RAIL_CTS_COMPACT_BYTES, as the handshake settled; 0 reads as RAIL_CTS_BYTES. */
    unsigned entry_bytes;
    uint64_t head; /* first slot not yet fully resolved */
    uint64_t scan; /* next slot to absorb */
    struct rail_shadow shadow[RAIL_FIFO_SLOTS][RAIL_MAX_RECVS];
    uint8_t shadow_n[RAIL_FIFO_SLOTS];
    uint8_t unresolved[RAIL_FIFO_SLOTS]; /* entries of the slot not resolved yet */
};

/* Copies the FIFO entry of `bytes` bytes (wire/cts_layout.h) at p into *out if it carries sequence
 * `want`: 0 copied (out->seq = want), 1 not written yet, 2 already overwritten by a later round
 * (every entry of that slot was satisfied eagerly). */
int rail_cts_read_as(const uint8_t *p, unsigned bytes, uint64_t want, struct rail_cts *out);
/* The same for a 128-byte entry (RAIL_CTS_BYTES). */
int rail_cts_read(const uint8_t *p, uint64_t want, struct rail_cts *out);
/* Absorbs the slots written into fifo_mem (RAIL_FIFO_BYTES_OF(f->entry_bytes)) since the last
 * call, validating every
 * entry (rail_cts_check); an entry whose (tag, index) comes before `sent`'s count for its tag
 * (rail_tag_before: modulo 2^32) is resolved at once (it went eagerly). 0, or -EPROTO with the slot
 * and the reason in err. */
int rail_cts_fifo_absorb(struct rail_cts_fifo *f, const uint8_t *fifo_mem, int nrails,
                         const struct rail_tagmap *sent, char *err, size_t errlen);
/* Whether rail_cts_fifo_absorb has anything to do: the next slot to absorb was written (or
 * overwritten by a later round) since the last call. One load of that slot's first sequence word;
 * false means what was absorbed is already up to date. */
bool rail_cts_fifo_news(const struct rail_cts_fifo *f, const uint8_t *fifo_mem);
/* The unresolved entry for (tag, index) in [head, scan): *seq and *entry say where; NULL when it
 * has not been absorbed (yet). */
struct rail_shadow *rail_cts_fifo_find(struct rail_cts_fifo *f, int32_t tag, uint32_t index,
                                       uint64_t *seq, unsigned *entry);
/* Reads entry e of slot sequence seq (found for sh) from fifo_mem into *out for a rendezvous send:
 * 0 when it is still the entry absorbed (same sequence, valid, same tag and index), -EPROTO with
 * the reason in err when the peer rewrote it meanwhile. */
int rail_cts_fifo_take(const struct rail_cts_fifo *f, const uint8_t *fifo_mem, int nrails,
                       const struct rail_shadow *sh, uint64_t seq, unsigned e, struct rail_cts *out,
                       char *err, size_t errlen);
/* The sender's common case in one read (net_send.c tries it first; the general path is
 * rail_cts_fifo_news, _absorb, _find and _take). When every absorbed entry is resolved (head ==
 * scan):
 *   - RAIL_CTS_NEXT_TAKEN: the next slot (sequence scan) holds one entry, well formed
 *     (rail_cts_ok), with exactly (tag, index), and the slot after it is not written: absorbing
 *     would take that slot alone, leave its entry unresolved, and rail_cts_fifo_find would return
 *     it. It is absorbed so (the same shadow, counts and scan) from this one read, *out is the
 *     entry, *seq its slot sequence (entry 0: shadow[*seq % RAIL_FIFO_SLOTS][0]);
 *   - RAIL_CTS_NEXT_NONE: the next slot was not written since (rail_cts_fifo_news is false):
 *     absorbing would change nothing and find finds nothing;
 *   - RAIL_CTS_NEXT_OTHER (and whenever head != scan): anything else; nothing changed.
 * `index` must be the number of messages already sent with tag (what absorb compares against).
 * test_cts_fifo compares the outcome with the general path's over seeded streams. */
#define RAIL_CTS_NEXT_TAKEN 0
#define RAIL_CTS_NEXT_NONE  1
#define RAIL_CTS_NEXT_OTHER 2
int rail_cts_fifo_next(struct rail_cts_fifo *f, const uint8_t *fifo_mem, int32_t tag,
                       uint32_t index, uint64_t *seq, struct rail_cts *out);
/* A rendezvous send took sh: resolved, and head moves past every fully resolved slot. */
void rail_cts_fifo_resolve(struct rail_cts_fifo *f, struct rail_shadow *sh);
/* rail_cts_fifo_resolve of the entry rail_cts_fifo_next took last (RAIL_CTS_NEXT_TAKEN, nothing
 * absorbed or resolved since: head + 1 == scan, that slot's one entry open), inline: resolved,
 * and head at scan. test_cts_fifo compares it with rail_cts_fifo_resolve after every take. */
static inline void rail_cts_fifo_resolve_next(struct rail_cts_fifo *f)
{
    unsigned slot = (unsigned)((f->scan - 1) % RAIL_FIFO_SLOTS);
    f->shadow[slot][0].resolved = true;
    f->unresolved[slot] = 0;
    f->head = f->scan;
}

#endif
