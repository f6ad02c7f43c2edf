/* SPDX-License-Identifier: Apache-2.0 */
/* Devices, contexts, protection domains and memory regions of the shm provider (shm_dev.h). */
#include "transport/shm_dev.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"

static struct rail_shm_fabric *g_fab;
static struct ibv_device g_devs[RAIL_SHM_NDEV];

int shm_dev_setup(const char *fabric, char *why, size_t whylen)
{
    char err[256];
    int rc = rail_shm_fabric_open(fabric, &g_fab, err, sizeof(err));
    if (rc < 0) {
        snprintf(why, whylen, "the shm fabric '%s': %s", fabric, err);
        return rc;
    }
    for (int i = 0; i < RAIL_SHM_NDEV; i++) {
        struct ibv_device *d = &g_devs[i];
        memset(d, 0, sizeof(*d));
        d->node_type = IBV_NODE_CA;
        d->transport_type = IBV_TRANSPORT_IB;
        snprintf(d->name, sizeof(d->name), "shm%d", i);
        snprintf(d->dev_name, sizeof(d->dev_name), "shm%d", i);
    }
    return 0;
}

struct ibv_device **shm_get_device_list(int *n)
{
    struct ibv_device **list = calloc(RAIL_SHM_NDEV + 1, sizeof(*list));
    if (!list) {
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < RAIL_SHM_NDEV; i++)
        list[i] = &g_devs[i];
    if (n)
        *n = RAIL_SHM_NDEV;
    return list;
}

void shm_free_device_list(struct ibv_device **list)
{
    free(list);
}

const char *shm_get_device_name(struct ibv_device *dev)
{
    return dev ? dev->name : NULL;
}

static struct shm_ctx *ctx_of(struct ibv_context *ctx)
{
    return (struct shm_ctx *)ctx;
}

/* One context per device and process, made at the first open and kept for the process's life:
 * its LID (what the plugin's device discovery read from a first, probing open) and the
 * directory peers read must not change between opens. */
static pthread_mutex_t g_open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shm_ctx *g_ctx[RAIL_SHM_NDEV];

static struct shm_ctx *ctx_make(struct ibv_device *dev, int idx)
{
    struct shm_ctx *c = calloc(1, sizeof(*c));
    struct shm_dir *dir = calloc(1, sizeof(*dir));
    if (!c || !dir) {
        free(c);
        free(dir);
        errno = ENOMEM;
        return NULL;
    }
    c->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->evfd < 0) {
        int e = errno;
        free(c);
        free(dir);
        errno = e;
        return NULL;
    }
    c->lid = rail_shm_ep_claim(g_fab, idx, (uint64_t)(uintptr_t)dir);
    if (c->lid < 0) {
        close(c->evfd);
        free(c);
        free(dir);
        errno = ENOSPC; /* every LID of the fabric taken */
        return NULL;
    }
    dir->magic = SHM_DIR_MAGIC;
    dir->lid = (uint32_t)c->lid;
    dir->dev = (uint32_t)idx;
    c->dir = dir;
    c->dev = idx;
    c->fab = g_fab;
    pthread_mutex_init(&c->lock, NULL);
    c->port_seen = rail_shm_port_active(g_fab, idx);
    c->ibv.device = dev;
    c->ibv.cmd_fd = -1;
    c->ibv.async_fd = c->evfd;
    c->ibv.num_comp_vectors = 1;
    return c;
}

struct ibv_context *shm_open_device(struct ibv_device *dev)
{
    int idx = dev ? rail_shm_dev_index(dev->name) : -1;
    if (idx < 0 || !g_fab) {
        errno = ENODEV;
        return NULL;
    }
    pthread_mutex_lock(&g_open_lock);
    if (!g_ctx[idx])
        g_ctx[idx] = ctx_make(dev, idx);
    struct shm_ctx *c = g_ctx[idx];
    pthread_mutex_unlock(&g_open_lock);
    return c ? &c->ibv : NULL;
}

int shm_close_device(struct ibv_context *ctx)
{
    return ctx ? 0 : EINVAL; /* the context lives as long as the process (see g_ctx) */
}

int shm_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
    struct shm_ctx *c = ctx_of(ctx);
    memset(attr, 0, sizeof(*attr));
    snprintf(attr->fw_ver, sizeof(attr->fw_ver), "shm");
    attr->sys_image_guid = htobe64(0x5348480000000000ull | (uint64_t)c->dev);
    attr->node_guid = attr->sys_image_guid;
    attr->max_mr_size = 1ull << 40;
    attr->max_qp = SHM_MAX_QP;
    attr->max_qp_wr = SHM_MAX_WR;
    attr->max_sge = SHM_MAX_SGE;
    attr->max_cq = SHM_MAX_QP;
    attr->max_cqe = SHM_MAX_CQE;
    attr->max_mr = SHM_MAX_MR;
    attr->max_pd = 1 << 16;
    attr->max_qp_rd_atom = 16;
    attr->max_qp_init_rd_atom = 16;
    attr->phys_port_cnt = 1;
    return 0;
}

bool shm_port_up(const struct shm_ctx *c)
{
    return rail_shm_port_active(c->fab, c->dev);
}

int shm_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
    struct shm_ctx *c = ctx_of(ctx);
    if (port != 1)
        return EINVAL;
    memset(attr, 0, sizeof(*attr));
    attr->state = shm_port_up(c) ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    attr->phys_state = attr->state == IBV_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
    attr->max_mtu = IBV_MTU_4096;
    attr->active_mtu = IBV_MTU_4096;
    attr->gid_tbl_len = 1;
    attr->pkey_tbl_len = 1;
    attr->max_msg_sz = 1u << 30;
    attr->lid = (uint16_t)c->lid;
    attr->sm_lid = 1;
    attr->active_width = 2;  /* 4x */
    attr->active_speed = 32; /* EDR: 100 Gb/s */
    attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
    return 0;
}

int shm_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
    struct shm_ctx *c = ctx_of(ctx);
    if (port != 1 || index != 0)
        return EINVAL;
    memset(gid, 0, sizeof(*gid));
    gid->raw[0] = 0xfe;
    gid->raw[1] = 0x80;
    uint64_t guid = htobe64(0x5348480000000000ull | (uint64_t)c->dev);
    memcpy(gid->raw + 8, &guid, 8);
    return 0;
}

int shm_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
    (void)ctx;
    if (port != 1 || index != 0 || !pkey)
        return EINVAL;
    *pkey = htobe16(0xffff);
    return 0;
}

struct ibv_pd *shm_alloc_pd(struct ibv_context *ctx)
{
    struct shm_pd *pd = calloc(1, sizeof(*pd));
    if (!pd) {
        errno = ENOMEM;
        return NULL;
    }
    pd->ibv.context = ctx;
    return &pd->ibv;
}

int shm_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}

struct ibv_mr *shm_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct shm_ctx *c = ctx_of(pd->context);
    struct shm_mr *mr = calloc(1, sizeof(*mr));
    if (!mr) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    int slot = -1;
    for (int i = 0; i < SHM_MAX_MR && slot < 0; i++)
        if (!c->mrs[i])
            slot = i;
    if (slot < 0) {
        pthread_mutex_unlock(&c->lock);
        free(mr);
        errno = ENOMEM; /* every region slot taken */
        return NULL;
    }
    uint32_t gen = (c->mr_gen[slot] + 1) & ((1u << (32 - SHM_MR_BITS)) - 1);
    if (gen == 0)
        gen = 1;
    c->mr_gen[slot] = gen;
    uint32_t key = gen << SHM_MR_BITS | (uint32_t)slot;
    mr->slot = slot;
    mr->access = access;
    mr->ibv.context = pd->context;
    mr->ibv.pd = pd;
    mr->ibv.addr = addr;
    mr->ibv.length = len;
    mr->ibv.lkey = key;
    mr->ibv.rkey = key;
    struct shm_mr_pub *pub = &c->dir->mr[slot];
    pub->access = (uint32_t)access;
    pub->addr = (uint64_t)(uintptr_t)addr;
    pub->len = len;
    atomic_store(&pub->rkey, key); /* last: a peer sees a complete record or none */
    c->mrs[slot] = mr;
    pthread_mutex_unlock(&c->lock);
    return &mr->ibv;
}

int shm_dereg_mr(struct ibv_mr *ibv)
{
    struct shm_mr *mr = (struct shm_mr *)ibv;
    struct shm_ctx *c = ctx_of(ibv->context);
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->dir->mr[mr->slot].rkey, 0);
    c->mrs[mr->slot] = NULL;
    pthread_mutex_unlock(&c->lock);
    free(mr);
    return 0;
}

struct ibv_mr *shm_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                 int fd, int access)
{
    (void)pd, (void)offset, (void)len, (void)iova, (void)fd, (void)access;
    errno = EOPNOTSUPP;
    return NULL;
}

bool shm_lkey_ok(const struct shm_ctx *c, uint32_t lkey, uint64_t addr, uint64_t len)
{
    const struct shm_mr *mr = c->mrs[lkey & (SHM_MAX_MR - 1)];
    if (!mr || mr->ibv.lkey != lkey)
        return false;
    uint64_t a = (uint64_t)(uintptr_t)mr->ibv.addr;
    return addr >= a && len <= mr->ibv.length && addr - a <= mr->ibv.length - len;
}

int shm_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
    struct shm_ctx *c = ctx_of(ctx);
    int up = shm_port_up(c);
    pthread_mutex_lock(&c->lock);
    int changed = up != c->port_seen;
    c->port_seen = up;
    pthread_mutex_unlock(&c->lock);
    if (!changed) {
        errno = EAGAIN;
        return -1;
    }
    memset(ev, 0, sizeof(*ev));
    ev->event_type = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
    ev->element.port_num = 1;
    return 0;
}

void shm_ack_async_event(struct ibv_async_event *ev)
{
    (void)ev;
}
