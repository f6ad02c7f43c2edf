/* SPDX-License-Identifier: Apache-2.0 */
/* Per-tag message counters of one connection (pure). Messages with the same tag are matched in
 * order: the j-th send with tag t goes to the j-th receive entry with tag t, which is what NCCL's
 * slot-by-slot matching amounts to. Both ends count per tag; the counters travel in CTS entries
 * and eager headers. Tags are arbitrary ints; the table grows as new tags appear. */
#ifndef NCCL_RAIL_NET_TAGMAP_H
#define NCCL_RAIL_NET_TAGMAP_H

#include <stddef.h>
#include <stdint.h>

struct rail_tagmap {
    struct rail_tag_slot {
        int32_t tag;
        uint32_t count;
        int used;
    } * slots;
    size_t cap; /* power of two, or 0 before the first insertion */
    size_t used;
    /* The slot rail_tagmap_next found last (NULL: none; reset when the table grows): NCCL uses
     * one tag per connection at a time, so most look-ups are for it. */
    struct rail_tag_slot *last;
};

/* Whether the message numbered index came before the one numbered count, both of one tag: modulo
 * 2^32 (serial number arithmetic), since a counter wraps after 2^32 messages of its tag (~6 hours
 * at 190,000 a second). The indices of one tag in flight or waiting span far less than 2^31 (the
 * FIFO slots and the eager ring bound them), so the signed difference orders them. A plain `<`
 * put a message whose receive was posted just before the wrap on the unexpected list, where
 * nothing took it (test_tag_wrap). */
static inline int rail_tag_before(uint32_t index, uint32_t count)
{
    return (int32_t)(index - count) < 0;
}

void rail_tagmap_init(struct rail_tagmap *m);
void rail_tagmap_free(struct rail_tagmap *m);
/* Current counter of tag (0 if never seen). */
uint32_t rail_tagmap_get(const struct rail_tagmap *m, int32_t tag);
/* Returns the current counter in *index and increments it; -ENOMEM when the table cannot grow. */
int rail_tagmap_next(struct rail_tagmap *m, int32_t tag, uint32_t *index);

/* The same two, inline when tag is the last one counted (the usual case: no call, no look-up);
 * otherwise the calls above. */
static inline uint32_t rail_tagmap_get_inl(const struct rail_tagmap *m, int32_t tag)
{
    if (m->last && m->last->tag == tag)
        return m->last->count;
    return rail_tagmap_get(m, tag);
}

static inline int rail_tagmap_next_inl(struct rail_tagmap *m, int32_t tag, uint32_t *index)
{
    if (m->last && m->last->tag == tag) {
        *index = m->last->count++;
        return 0;
    }
    return rail_tagmap_next(m, tag, index);
}

#endif
