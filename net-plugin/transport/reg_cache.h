/* SPDX-License-Identifier: Apache-2.0 */
/* Memory registration cache behind regMr/deregMr. Verbs-free: registering and deregistering go
 * through callbacks, so the cache is unit-testable with fakes.
 *
 * Requests are widened to whole pages: [addr rounded down, addr+len rounded up). A request is
 * served by an existing entry with the same type and the same context (the per-device / per-PD
 * key) whose range *contains* the widened range; otherwise a new entry is registered, even when
 * it overlaps an existing one. Entries are reference counted: every successful get takes one
 * reference, every put drops one, the last put deregisters the entry (exactly once) and frees it.
 * All calls are thread-safe (one mutex). The callbacks run with that mutex held, so they must not
 * call back into the same cache; holding it across reg also guarantees that concurrent requests
 * for the same range register once. */
#ifndef NCCL_RAIL_REG_CACHE_H
#define NCCL_RAIL_REG_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct rail_reg_cache_ops {
    /* Register [start, start+len) (page-aligned, len > 0) of the given type. Returns 0 and sets
     * *handle (which may be NULL), or a negative errno (a positive value is negated). */
    int (*reg)(void *cb_ctx, uintptr_t start, size_t len, int type, void **handle);
    /* Undo one successful reg. */
    void (*dereg)(void *cb_ctx, void *handle);
    /* Optional (may be NULL): register a dma-buf range. fd and offset are the caller's, for addr
     * (not for start; start = addr rounded down to a page). Used by rail_reg_cache_get_dmabuf. */
    int (*reg_dmabuf)(void *cb_ctx, uintptr_t start, size_t len, int type, int fd, uint64_t offset,
                      void **handle);
};

struct rail_reg_cache;
struct rail_reg_entry;

struct rail_reg_cache_stats {
    uint64_t hits;      /* gets served by an existing entry */
    uint64_t regs;      /* successful reg callbacks */
    uint64_t deregs;    /* dereg callbacks */
    uint64_t reg_fails; /* failed reg callbacks */
    size_t entries;     /* live entries */
};

/* Cache whose entries are registered through ops with cb_ctx as the default context, using the
 * system page size. NULL on bad arguments (ops or ops->reg or ops->dereg NULL) or no memory.
 * ops is copied. */
struct rail_reg_cache *rail_reg_cache_create(const struct rail_reg_cache_ops *ops, void *cb_ctx);
/* Same with an explicit page size (a power of two >= 1). */
struct rail_reg_cache *rail_reg_cache_create_ex(const struct rail_reg_cache_ops *ops, void *cb_ctx,
                                                size_t page_size);

/* Find or register [addr, addr+len) of the given type with the cache's default context.
 * len 0 stands for the one page holding addr. Returns 0 with *out set (one reference taken),
 * -EINVAL (NULL cache/out/addr, range past the end of the address space), -ENOMEM, or the reg
 * callback's error; on error *out is NULL and nothing is cached. */
int rail_reg_cache_get(struct rail_reg_cache *c, const void *addr, size_t len, int type,
                       struct rail_reg_entry **out);
/* Same with an explicit context: entries are shared only between equal contexts (e.g. one per
 * protection domain), and reg/dereg receive ctx instead of the default cb_ctx. */
int rail_reg_cache_get_ctx(struct rail_reg_cache *c, void *ctx, const void *addr, size_t len,
                           int type, struct rail_reg_entry **out);
/* Same as rail_reg_cache_get_ctx, but a miss registers through ops->reg_dmabuf (-ENOTSUP when it
 * is NULL). Hits are looked up exactly like the other gets (a containing entry of the same type
 * and context, however it was registered). */
int rail_reg_cache_get_dmabuf(struct rail_reg_cache *c, void *ctx, const void *addr, size_t len,
                              int type, int fd, uint64_t offset, struct rail_reg_entry **out);

/* Drop one reference; the last one deregisters and frees the entry. Returns 0 (also for NULL c
 * or e), or -ENOENT, changing nothing, for an entry this cache does not hold (already released). */
int rail_reg_cache_put(struct rail_reg_cache *c, struct rail_reg_entry *e);

/* The reg callback's handle (e.g. the struct ibv_mr *). NULL for NULL e. */
void *rail_reg_entry_handle(const struct rail_reg_entry *e);
/* The registered page-aligned range. */
uintptr_t rail_reg_entry_start(const struct rail_reg_entry *e);
size_t rail_reg_entry_len(const struct rail_reg_entry *e);

void rail_reg_cache_get_stats(struct rail_reg_cache *c, struct rail_reg_cache_stats *s);

/* Deregister every entry still held (whatever its reference count) and free the cache. NULL is a
 * no-op. Returns the number of entries that were still held. */
size_t rail_reg_cache_destroy(struct rail_reg_cache *c);

#endif
