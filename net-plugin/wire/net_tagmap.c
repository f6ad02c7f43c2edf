/* SPDX-License-Identifier: Apache-2.0 */
#include "wire/net_tagmap.h"

#include <errno.h>
#include <stdlib.h>

void rail_tagmap_init(struct rail_tagmap *m)
{
    m->slots = NULL;
    m->cap = m->used = 0;
    m->last = NULL;
}

void rail_tagmap_free(struct rail_tagmap *m)
{
    free(m->slots);
    rail_tagmap_init(m);
}

static size_t hash_tag(int32_t tag, size_t cap)
{
    uint32_t x = (uint32_t)tag * 2654435761u;
    return (size_t)(x ^ (x >> 16)) & (cap - 1);
}

static struct rail_tag_slot *find(const struct rail_tagmap *m, int32_t tag)
{
    if (m->last && m->last->tag == tag)
        return m->last;
    if (m->cap == 0)
        return NULL;
    for (size_t i = hash_tag(tag, m->cap), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
        struct rail_tag_slot *s = &m->slots[i];
        if (!s->used)
            return NULL;
        if (s->tag == tag)
            return s;
    }
    return NULL;
}

static void insert_slot(struct rail_tag_slot *slots, size_t cap, int32_t tag, uint32_t count)
{
    size_t i = hash_tag(tag, cap);
    while (slots[i].used)
        i = (i + 1) & (cap - 1);
    slots[i].used = 1;
    slots[i].tag = tag;
    slots[i].count = count;
}

static int grow(struct rail_tagmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    struct rail_tag_slot *ns = calloc(ncap, sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used)
            insert_slot(ns, ncap, m->slots[i].tag, m->slots[i].count);
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->last = NULL; /* it pointed into the old table */
    return 0;
}

uint32_t rail_tagmap_get(const struct rail_tagmap *m, int32_t tag)
{
    const struct rail_tag_slot *s = find(m, tag);
    return s ? s->count : 0;
}

int rail_tagmap_next(struct rail_tagmap *m, int32_t tag, uint32_t *index)
{
    struct rail_tag_slot *s = find(m, tag);
    if (!s) {
        /* Keep the load factor at or below one half. */
        if ((m->used + 1) * 2 > m->cap) {
            int rc = grow(m);
            if (rc < 0)
                return rc;
        }
        insert_slot(m->slots, m->cap, tag, 0);
        m->used++;
        s = find(m, tag);
    }
    m->last = s;
    *index = s->count++;
    return 0;
}
