/* Memory handles. Registrations are cached per device (page-aligned, reference counted), so
 * registering the same buffer through many comms costs one ibv_reg_mr (regIsGlobal=1). A handle
 * holds one cache entry per rail of the comm it was registered through. */
#include "net_reg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nccl/nccl_net.h"
#include "net_comm.h"
#include "reg_cache.h"

#define USER_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static int dev_reg(void *cb_ctx, uintptr_t start, size_t len, int type, void **handle)
{
    struct rail_dev *d = cb_ctx;
    struct ibv_mr *mr;
    (void)type;
    errno = 0;
    mr = ibv_reg_mr(d->pd, (void *)start, len, USER_ACCESS);
    if (!mr) {
        int e = errno ? errno : ENOMEM;
        RAIL_WARN(NCCL_NET | NCCL_REG, "%s: ibv_reg_mr(%#lx, %zu bytes) failed: %s%s", d->name,
                  (unsigned long)start, len, strerror(e),
                  e == ENOMEM || e == EPERM ? " (locked-memory limit? `ulimit -l unlimited`)" : "");
        return -e;
    }
    *handle = mr;
    return 0;
}

static void dev_dereg(void *cb_ctx, void *handle)
{
    (void)cb_ctx;
    if (handle)
        (void)ibv_dereg_mr(handle);
}

int rail_dev_reg_init(struct rail_dev *d, char *why, size_t whylen)
{
    static const struct rail_reg_cache_ops ops = {
        .reg = dev_reg, .dereg = dev_dereg, .reg_dmabuf = NULL};
    d->cache = rail_reg_cache_create(&ops, d);
    if (!d->cache) {
        snprintf(why, whylen, "%s: cannot create the registration cache", d->name);
        return -ENOMEM;
    }
    return 0;
}

static struct rail_comm *comm_of(void *comm)
{
    struct rail_comm *c = comm;
    if (!c || (c->magic != RAIL_SEND_MAGIC && c->magic != RAIL_RECV_MAGIC))
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

int rail_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
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
    m->type = type;
    for (int r = 0; r < c->nrails; r++) {
        struct rail_dev *d = c->link[r].dev;
        struct rail_reg_entry *e = NULL;
        if (size == 0) { /* nothing to register: a handle for empty transfers */
            m->dev[r] = d;
            m->nrails = r + 1;
            continue;
        }
        int rc = rail_reg_cache_get(d->cache, data, size, type, &e);
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

int rail_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
                           void **mhandle)
{
    (void)offset;
    (void)fd;
    if (mhandle)
        *mhandle = NULL;
    if (type == NCCL_PTR_HOST)
        return rail_net_reg_mr(comm, data, size, type, mhandle);
    RAIL_WARN(NCCL_NET | NCCL_REG, "regMrDmaBuf: dma-buf registration is not supported yet");
    return -EOPNOTSUPP;
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

int rail_mr_check(const struct rail_comm *c, const void *mhandle, const void *data, size_t size,
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
    *out = m;
    return 0;
}
