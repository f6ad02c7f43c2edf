/* SPDX-License-Identifier: Apache-2.0 */
/* Memory handles. Registrations are cached per device (page-aligned, reference counted), so
 * registering the same buffer through many comms costs one ibv_reg_mr (regIsGlobal=1). A handle
 * holds one cache entry per rail of the comm it was registered through. */
#include "protocol/net_reg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_drv.h"
#include "log.h"
#include "nccl/nccl_net.h"
#include "gdr/net_gdr.h"
#include "protocol/net_comm.h"
#include "transport/net_verbs.h"
#include "transport/reg_cache.h"

#define USER_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static int reg_failed(struct rail_dev *d, const char *what, uintptr_t start, size_t len, int e)
{
    RAIL_WARN(NCCL_NET | NCCL_REG, "%s: %s(%#lx, %zu bytes) failed: %s%s", d->name, what,
              (unsigned long)start, len, strerror(e),
              e == ENOMEM || e == EPERM ? " (locked-memory limit? `ulimit -l unlimited`)" : "");
    return -e;
}

/* Registers with PCIe relaxed ordering when allowed; a device that refuses it gets the plain
 * access flags from then on (net_gdr.c logs that once). fd < 0: ibv_reg_mr of start; otherwise
 * ibv_reg_dmabuf_mr of the dma-buf fd at offset, mapped at iova start. */
static struct ibv_mr *reg_access(struct rail_dev *d, uintptr_t start, size_t len, int fd,
                                 uint64_t offset)
{
    int ro = rail_gdr_ro_access(d);
    for (;;) {
        int access = USER_ACCESS | ro;
        struct ibv_mr *mr;
        errno = 0;
        if (fd < 0)
            mr = rail_ibv->reg_mr(d->pd, (void *)start, len, access);
        else
            mr = rail_ibv->reg_dmabuf_mr(d->pd, offset, len, start, fd, access);
        if (!mr && errno == ENOSYS)
            errno = EOPNOTSUPP; /* no ibv_reg_dmabuf_mr in this libibverbs */
        if (mr) {
            rail_verbs_count(RAIL_VERBS_USER_MRS, 1);
            rail_verbs_count(RAIL_VERBS_USER_MR_BYTES, (long)mr->length);
        }
        if (mr || !ro || (errno != EINVAL && errno != EOPNOTSUPP))
            return mr;
        rail_gdr_ro_refused(d, errno);
        ro = 0;
    }
}

/* CUDA memory without peer memory: export the allocation as a dma-buf ourselves. */
static int reg_own_dmabuf(struct rail_dev *d, uintptr_t start, size_t len, struct ibv_mr **out)
{
    uintptr_t base = 0;
    size_t size = 0, page = 4096;
    int fd = -1, rc = rail_cuda_addr_range((void *)start, &base, &size);
    if (rc == 0 && (start < base || start + len > base + size)) {
        RAIL_WARN(NCCL_NET | NCCL_REG,
                  "%s: CUDA buffer [%#lx, +%zu) is not inside one allocation [%#lx, +%zu)", d->name,
                  (unsigned long)start, len, (unsigned long)base, size);
        return -EINVAL;
    }
    if (rc == 0)
        rc = rail_cuda_dmabuf_fd(base, (size + page - 1) & ~(page - 1), &fd);
    if (rc < 0) {
        RAIL_WARN(NCCL_NET | NCCL_REG, "%s: no dma-buf for CUDA buffer %#lx: %s (%s)", d->name,
                  (unsigned long)start, strerror(-rc), rail_cuda_status());
        return rc;
    }
    *out = reg_access(d, start, len, fd, start - base);
    int e = errno ? errno : EIO;
    close(fd);
    return *out ? 0 : reg_failed(d, "ibv_reg_dmabuf_mr", start, len, e);
}

static int dev_reg(void *cb_ctx, uintptr_t start, size_t len, int type, void **handle)
{
    struct rail_dev *d = cb_ctx;
    struct ibv_mr *mr = NULL;
    const struct rail_gdr_decision *g = type == NCCL_PTR_HOST ? NULL : rail_gdr_get(d);

    switch (rail_gdr_reg_method(g, type)) {
    case RAIL_GDR_REG_PLAIN:
        mr = reg_access(d, start, len, -1, 0);
        if (!mr)
            return reg_failed(d, "ibv_reg_mr", start, len, errno ? errno : ENOMEM);
        break;
    case RAIL_GDR_REG_DMABUF: {
        int rc = reg_own_dmabuf(d, start, len, &mr);
        if (rc < 0)
            return rc;
        break;
    }
    default:
        RAIL_WARN(NCCL_NET | NCCL_REG, "%s: cannot register a %s buffer: %s", d->name,
                  type == NCCL_PTR_CUDA ? "CUDA" : "buffer of unknown type",
                  g ? g->reason : "unknown memory type");
        return -EOPNOTSUPP;
    }
    *handle = mr;
    return 0;
}

/* NCCL's dma-buf: the cache passes the offset of the page-aligned start (see
 * rail_net_reg_mr_dmabuf). */
static int dev_reg_dmabuf(void *cb_ctx, uintptr_t start, size_t len, int type, int fd,
                          uint64_t offset, void **handle)
{
    struct rail_dev *d = cb_ctx;
    (void)type;
    struct ibv_mr *mr = reg_access(d, start, len, fd, offset);
    if (!mr)
        return reg_failed(d, "ibv_reg_dmabuf_mr", start, len, errno ? errno : EIO);
    *handle = mr;
    return 0;
}

static void dev_dereg(void *cb_ctx, void *handle)
{
    (void)cb_ctx;
    struct ibv_mr *mr = handle;
    if (!mr)
        return;
    long len = (long)mr->length;
    if (rail_ibv->dereg_mr(mr) == 0) {
        rail_verbs_count(RAIL_VERBS_USER_MRS, -1);
        rail_verbs_count(RAIL_VERBS_USER_MR_BYTES, -len);
    }
}

int rail_dev_reg_init(struct rail_dev *d, char *why, size_t whylen)
{
    static const struct rail_reg_cache_ops ops = {
        .reg = dev_reg, .dereg = dev_dereg, .reg_dmabuf = dev_reg_dmabuf};
    d->cache = rail_reg_cache_create(&ops, d);
    if (!d->cache) {
        snprintf(why, whylen, "%s: cannot create the registration cache", d->name);
        return -ENOMEM;
    }
    return 0;
}

/* Registration generations: unique per handle made, never 0 (rail_mr_check's cache). */
static atomic_uint_fast64_t g_mr_gen;

static struct rail_comm *comm_of(void *comm)
{
    struct rail_comm *c = comm;
    if (!rail_comm_live(c))
        return NULL;
    return c;
}

static void release(struct rail_mr *m)
{
    for (int r = 0; r < m->nrails; r++)
        if (m->ent[r])
            rail_reg_cache_put(m->dev[r]->cache, m->ent[r]);
    m->magic = RAIL_DEAD_MAGIC;
    free(m);
}

/* fd < 0: regMr; otherwise regMrDmaBuf with NCCL's dma-buf fd, offset being that of data. */
static int reg_common(void *comm, void *data, size_t size, int type, int fd, uint64_t offset,
                      void **mhandle)
{
    struct rail_comm *c = comm_of(comm);
    struct rail_mr *m;

    if (!mhandle)
        return -EINVAL;
    *mhandle = NULL;
    if (!c) {
        RAIL_WARN(NCCL_NET | NCCL_REG, "regMr: %p is not a send or receive comm of this plugin",
                  comm);
        return -EINVAL;
    }
    if (!data && size) {
        RAIL_WARN(NCCL_NET | NCCL_REG, "regMr: NULL buffer of %zu bytes", size);
        return -EINVAL;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    m->magic = RAIL_MR_MAGIC;
    m->gen = atomic_fetch_add_explicit(&g_mr_gen, 1, memory_order_relaxed) + 1;
    m->type = type;
    for (int r = 0; r < c->nrails; r++) {
        struct rail_dev *d = c->link[r].dev;
        struct rail_reg_entry *e = NULL;
        if (size == 0) { /* nothing to register: a handle for empty transfers */
            m->dev[r] = d;
            m->nrails = r + 1;
            continue;
        }
        int rc;
        if (fd < 0)
            rc = rail_reg_cache_get(d->cache, data, size, type, &e);
        else
            rc = rail_reg_cache_get_dmabuf(d->cache, d, data, size, type, fd, offset, &e);
        if (rc < 0) {
            release(m);
            return rc;
        }
        struct ibv_mr *mr = rail_reg_entry_handle(e);
        m->dev[r] = d;
        m->ent[r] = e;
        m->nrails = r + 1;
        m->lkey[r] = mr->lkey;
        m->rkey[r] = mr->rkey;
        if (r == 0) {
            m->start = rail_reg_entry_start(e);
            m->len = rail_reg_entry_len(e);
        }
    }
    *mhandle = m;
    return 0;
}

int rail_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
    return reg_common(comm, data, size, type, -1, 0, mhandle);
}

int rail_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
                           void **mhandle)
{
    if (mhandle)
        *mhandle = NULL;
    if (type == NCCL_PTR_HOST || fd < 0)
        return rail_net_reg_mr(comm, data, size, type, mhandle);
    /* The cache registers whole pages: hand it the dma-buf offset of data's page. */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t delta = (uintptr_t)data & (page - 1);
    if (offset < delta) {
        RAIL_WARN(NCCL_NET | NCCL_REG,
                  "regMrDmaBuf: buffer %p at dma-buf offset %llu does not start on a page of the "
                  "dma-buf",
                  data, (unsigned long long)offset);
        return -EINVAL;
    }
    return reg_common(comm, data, size, type, fd, offset - delta, mhandle);
}

int rail_net_dereg_mr(void *comm, void *mhandle)
{
    struct rail_mr *m = mhandle;
    (void)comm;
    if (!m)
        return 0;
    if (m->magic != RAIL_MR_MAGIC) {
        RAIL_WARN(NCCL_NET | NCCL_REG, "deregMr: %p is not a live memory handle", mhandle);
        return -EINVAL;
    }
    release(m);
    return 0;
}

int rail_mr_check_full(struct rail_comm *c, const void *mhandle, const void *data, size_t size,
                       const struct rail_mr **out)
{
    const struct rail_mr *m = mhandle;
    uintptr_t a = (uintptr_t)data;

    if (!m || m->magic != RAIL_MR_MAGIC) {
        RAIL_WARN(NCCL_NET, "%p is not a memory handle of this plugin", mhandle);
        return -EINVAL;
    }
    if (m->nrails < c->nrails) {
        RAIL_WARN(NCCL_NET, "memory handle covers %d rail(s), the comm uses %d", m->nrails,
                  c->nrails);
        return -EINVAL;
    }
    for (int r = 0; r < c->nrails; r++) {
        if (m->dev[r] != c->link[r].dev) {
            RAIL_WARN(NCCL_NET, "memory handle registered on %s, comm rail %d is on %s",
                      m->dev[r]->name, r, c->link[r].dev->name);
            return -EINVAL;
        }
    }
    if (size && (a < m->start || a + size < a || a + size > m->start + m->len)) {
        RAIL_WARN(NCCL_NET, "buffer [%p, +%zu) lies outside its registration [%#lx, +%zu)", data,
                  size, (unsigned long)m->start, m->len);
        return -EINVAL;
    }
    c->mr_ok = m;
    c->mr_ok_gen = m->gen;
    *out = m;
    return 0;
}
