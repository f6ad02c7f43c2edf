/* SPDX-License-Identifier: Apache-2.0 */
/* Two-phase message state (pure: no verbs, no I/O, no clock). A rendezvous message striped over
 * several rails, or any message of a connection with failover, is written in two phases: its data
 * pieces first, each on its rail, then, once every piece has completed here (acknowledged by the
 * peer's HCA), the size record that hands the message to the receiver. A piece or record whose
 * rail fails (its completion is a flush error, or the post is refused) waits as PENDING and goes
 * again on a rail that is up (net_send_post.c). An eager message uses the record state for its
 * single write.
 *
 * Per item: 0 (planned) -> POSTED -> DONE, and POSTED -> PENDING -> POSTED after a failure. Only a
 * POSTED item takes a completion: a duplicate or late one (the item is DONE, PENDING or never
 * posted) changes nothing and is reported as such. Invariants (test_twophase checks them against
 * a reordered, duplicating stream that loses rails mid-message): `left` counts the pieces not yet
 * DONE; the record becomes due exactly once, when the last piece is DONE, so it never goes before
 * every byte range has landed; every piece is DONE exactly once. */
#ifndef NCCL_RAIL_TWOPHASE_H
#define NCCL_RAIL_TWOPHASE_H

#include <stdbool.h>
#include <stdint.h>

#define RAIL_REQ_CHUNKS 16 /* data pieces of one message (rails x QPs x max-message splits) */

enum { RAIL_CH_POSTED = 1, RAIL_CH_DONE, RAIL_CH_PENDING };

struct rail_twophase {
    uint8_t n;    /* data pieces */
    uint8_t left; /* pieces not yet done (two-phase) */
    uint8_t rec;  /* the size record (two-phase) or the eager write: 0 or RAIL_CH_* */
    uint8_t piece[RAIL_REQ_CHUNKS];
};

/* n pieces planned (0..RAIL_REQ_CHUNKS), nothing posted. */
void rail_2ph_plan(struct rail_twophase *t, int n);
/* The message goes two-phase: `empty` (no data) leaves only the record. */
void rail_2ph_start(struct rail_twophase *t, bool empty);
/* Inline (the state changes of every piece and record completion and of every send test): as
 * calls they cost 11 plugin instructions per striped message. */
static inline bool rail_2ph_done(const struct rail_twophase *t)
{
    return t->left == 0 && t->rec == RAIL_CH_DONE;
}

/* Every piece done and the record posted (or done): what is left is the record's completion. */
static inline bool rail_2ph_handed(const struct rail_twophase *t)
{
    return t->left == 0 && (t->rec == RAIL_CH_POSTED || t->rec == RAIL_CH_DONE);
}

static inline void rail_2ph_piece_posted(struct rail_twophase *t, int k)
{
    t->piece[k] = RAIL_CH_POSTED;
}
/* Piece k could not be posted (its rail failed meanwhile): it waits to go again. */
void rail_2ph_piece_wait(struct rail_twophase *t, int k);
/* Piece k completed: 1 when it was the last one (the record is due now), 0 when others are left,
 * -1 for a duplicate or late completion (ignored). */
static inline int rail_2ph_piece_ok(struct rail_twophase *t, int k)
{
    if (k < 0 || k >= t->n || t->piece[k] != RAIL_CH_POSTED)
        return -1;
    t->piece[k] = RAIL_CH_DONE;
    t->left--;
    return t->left == 0;
}
/* Piece k failed with its rail: true when it now waits to go again (false: not in flight). */
bool rail_2ph_piece_failed(struct rail_twophase *t, int k);

static inline void rail_2ph_record_posted(struct rail_twophase *t)
{
    t->rec = RAIL_CH_POSTED;
}
/* The record could not go now (no rail up, no room): it waits to go again. */
void rail_2ph_record_wait(struct rail_twophase *t);
/* The record (or eager write) completed: true, or false for a duplicate or late completion. */
static inline bool rail_2ph_record_ok(struct rail_twophase *t)
{
    if (t->rec != RAIL_CH_POSTED)
        return false;
    t->rec = RAIL_CH_DONE;
    return true;
}
/* The record failed with its rail: true when it now waits to go again. */
bool rail_2ph_record_failed(struct rail_twophase *t);
/* The eager write failed, but the receiver already returned its slot: it got there. */
void rail_2ph_record_settled(struct rail_twophase *t);

#endif
