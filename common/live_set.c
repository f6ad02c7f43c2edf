/* SPDX-License-Identifier: Apache-2.0 */
/* Live-object set (see live_set.h). */
#include "live_set.h"

#include <errno.h>
#include <stdlib.h>

int rail_live_add(struct rail_live_set *s, const void *p)
{
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    if (s->n == s->cap) {
        int ncap = s->cap ? s->cap * 2 : 16;
        const void **q = realloc(s->items, (size_t)ncap * sizeof(*q));
        if (q) {
            s->items = q;
            s->cap = ncap;
        } else {
            rc = -ENOMEM;
        }
    }
    if (rc == 0)
        s->items[s->n++] = p;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

bool rail_live_remove(struct rail_live_set *s, const void *p)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n && !found; i++)
        if (s->items[i] == p) {
            s->items[i] = s->items[--s->n];
            found = true;
        }
    if (s->n == 0) {
        free(s->items);
        s->items = NULL;
        s->cap = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}
