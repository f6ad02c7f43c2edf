/* SPDX-License-Identifier: Apache-2.0 */
/* Registration cache (see reg_cache.h): a mutex-protected array of refcounted entries. */
#include "transport/reg_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rail_reg_entry {
    uintptr_t start, end; /* page-aligned, end exclusive */
    int type;
    void *ctx;
    void *handle;
    long refs;
};

struct rail_reg_cache {
    pthread_mutex_t lock;
    struct rail_reg_cache_ops ops;
    void *cb_ctx;
    uintptr_t page_mask; /* page_size - 1 */
    struct rail_reg_entry **e;
    size_t n, cap;
    struct rail_reg_cache_stats st;
};

struct rail_reg_cache *rail_reg_cache_create_ex(const struct rail_reg_cache_ops *ops, void *cb_ctx,
                                                size_t page_size)
{
    if (!ops || !ops->reg || !ops->dereg || page_size == 0 || (page_size & (page_size - 1)))
        return NULL;
    struct rail_reg_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->ops = *ops;
    c->cb_ctx = cb_ctx;
    c->page_mask = (uintptr_t)page_size - 1;
    return c;
}

struct rail_reg_cache *rail_reg_cache_create(const struct rail_reg_cache_ops *ops, void *cb_ctx)
{
    long ps = sysconf(_SC_PAGESIZE);
    return rail_reg_cache_create_ex(ops, cb_ctx, ps > 0 ? (size_t)ps : 4096);
}

/* Widen [addr, addr+len) (len 0 = one byte) to whole pages. */
static int page_range(const struct rail_reg_cache *c, const void *addr, size_t len,
                      uintptr_t *start, uintptr_t *end)
{
    uintptr_t a = (uintptr_t)addr;
    if (len == 0)
        len = 1;
    if (len > UINTPTR_MAX - a)
        return -EINVAL;
    uintptr_t last = a + len; /* exclusive */
    if (last > UINTPTR_MAX - c->page_mask)
        return -EINVAL;
    *start = a & ~c->page_mask;
    *end = (last + c->page_mask) & ~c->page_mask;
    return 0;
}

static struct rail_reg_entry *find_containing(struct rail_reg_cache *c, void *ctx, uintptr_t start,
                                              uintptr_t end, int type)
{
    for (size_t i = 0; i < c->n; i++) {
        struct rail_reg_entry *e = c->e[i];
        if (e->ctx == ctx && e->type == type && e->start <= start && e->end >= end)
            return e;
    }
    return NULL;
}

static int append(struct rail_reg_cache *c, struct rail_reg_entry *e)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct rail_reg_entry **ne = realloc(c->e, cap * sizeof(*ne));
        if (!ne)
            return -ENOMEM;
        c->e = ne;
        c->cap = cap;
    }
    c->e[c->n++] = e;
    return 0;
}

static int get_common(struct rail_reg_cache *c, void *ctx, const void *addr, size_t len, int type,
                      bool dmabuf, int fd, uint64_t offset, struct rail_reg_entry **out)
{
    if (out)
        *out = NULL;
    if (!c || !out || !addr)
        return -EINVAL;
    uintptr_t start, end;
    int rc = page_range(c, addr, len, &start, &end);
    if (rc)
        return rc;
    pthread_mutex_lock(&c->lock);
    struct rail_reg_entry *e = find_containing(c, ctx, start, end, type);
    if (e) {
        e->refs++;
        c->st.hits++;
        *out = e;
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    if (dmabuf && !c->ops.reg_dmabuf) {
        pthread_mutex_unlock(&c->lock);
        return -ENOTSUP;
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        pthread_mutex_unlock(&c->lock);
        return -ENOMEM;
    }
    void *handle = NULL;
    rc = dmabuf ? c->ops.reg_dmabuf(ctx, start, end - start, type, fd, offset, &handle)
                : c->ops.reg(ctx, start, end - start, type, &handle);
    if (rc != 0) {
        c->st.reg_fails++;
        pthread_mutex_unlock(&c->lock);
        free(e);
        return rc < 0 ? rc : -rc;
    }
    c->st.regs++;
    *e = (struct rail_reg_entry){
        .start = start, .end = end, .type = type, .ctx = ctx, .handle = handle, .refs = 1};
    if (append(c, e) != 0) {
        c->ops.dereg(ctx, handle);
        c->st.deregs++;
        pthread_mutex_unlock(&c->lock);
        free(e);
        return -ENOMEM;
    }
    c->st.entries = c->n;
    *out = e;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int rail_reg_cache_get_ctx(struct rail_reg_cache *c, void *ctx, const void *addr, size_t len,
                           int type, struct rail_reg_entry **out)
{
    return get_common(c, ctx, addr, len, type, false, -1, 0, out);
}

int rail_reg_cache_get(struct rail_reg_cache *c, const void *addr, size_t len, int type,
                       struct rail_reg_entry **out)
{
    return get_common(c, c ? c->cb_ctx : NULL, addr, len, type, false, -1, 0, out);
}

int rail_reg_cache_get_dmabuf(struct rail_reg_cache *c, void *ctx, const void *addr, size_t len,
                              int type, int fd, uint64_t offset, struct rail_reg_entry **out)
{
    return get_common(c, ctx, addr, len, type, true, fd, offset, out);
}

int rail_reg_cache_put(struct rail_reg_cache *c, struct rail_reg_entry *e)
{
    if (!c || !e)
        return 0;
    pthread_mutex_lock(&c->lock);
    size_t i = 0;
    while (i < c->n && c->e[i] != e)
        i++;
    if (i == c->n) {
        pthread_mutex_unlock(&c->lock);
        return -ENOENT;
    }
    if (--e->refs > 0) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    c->e[i] = c->e[--c->n];
    c->st.entries = c->n;
    c->ops.dereg(e->ctx, e->handle);
    c->st.deregs++;
    pthread_mutex_unlock(&c->lock);
    free(e);
    return 0;
}

void *rail_reg_entry_handle(const struct rail_reg_entry *e)
{
    return e ? e->handle : NULL;
}

uintptr_t rail_reg_entry_start(const struct rail_reg_entry *e)
{
    return e ? e->start : 0;
}

size_t rail_reg_entry_len(const struct rail_reg_entry *e)
{
    return e ? (size_t)(e->end - e->start) : 0;
}

void rail_reg_cache_get_stats(struct rail_reg_cache *c, struct rail_reg_cache_stats *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof(*s));
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    *s = c->st;
    pthread_mutex_unlock(&c->lock);
}

size_t rail_reg_cache_destroy(struct rail_reg_cache *c)
{
    if (!c)
        return 0;
    size_t left = c->n;
    for (size_t i = 0; i < c->n; i++) {
        c->ops.dereg(c->e[i]->ctx, c->e[i]->handle);
        free(c->e[i]);
    }
    free(c->e);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return left;
}
