/* init / finalize / devices / getProperties. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nccl/nccl_net.h"
#include "net_comm.h"
#include "net_gdr.h"
#include "net_plugin.h"

static const struct rail_net_ctx g_default_ctx = {RAIL_CTX_MAGIC, 0, -1};

const struct rail_net_ctx *rail_net_default_ctx(void)
{
    return &g_default_ctx;
}

int rail_net_init(void **ctx, uint64_t comm_id, int traffic_class, ncclDebugLogger_t logger)
{
    struct rail_net_ctx *c;
    int rc;

    if (logger)
        rail_log_set_logger(logger);
    if (ctx)
        *ctx = NULL;
    rc = rail_devices_init();
    if (rc < 0)
        return rc;
    if (!ctx)
        return 0;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->magic = RAIL_CTX_MAGIC;
    c->comm_id = comm_id;
    c->traffic_class = traffic_class;
    *ctx = c;
    return 0;
}

int rail_net_finalize(void *ctx)
{
    struct rail_net_ctx *c = ctx;
    if (!c || c == &g_default_ctx)
        return 0;
    if (c->magic != RAIL_CTX_MAGIC) {
        RAIL_WARN(NCCL_NET, "finalize: %p is not a context of this plugin", ctx);
        return -EINVAL;
    }
    c->magic = RAIL_DEAD_MAGIC;
    free(c);
    return 0;
}

int rail_net_devices(int *ndev)
{
    int rc = rail_devices_init();
    if (!ndev)
        return -EINVAL;
    *ndev = rc > 0 ? rc : 0;
    return rc < 0 ? rc : 0;
}

int rail_net_get_props(int dev, struct rail_net_props *p)
{
    struct rail_dev *d = rail_device(dev);
    if (!p)
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    if (!d) {
        RAIL_WARN(NCCL_NET, "getProperties: device %d does not exist (%d devices)", dev,
                  rail_devices_count());
        return -EINVAL;
    }
    size_t limit = 8 * (size_t)d->max_msg;
    p->name = d->name;
    p->pci_path = d->pci_path;
    p->guid = d->guid;
    p->ptr_support = rail_gdr_ptr_support(d); /* GPUDirect: net_gdr.c */
    p->reg_is_global = 1;
    p->force_flush = rail_gdr_force_flush(d);
    p->speed = d->speed;
    p->port = d->port;
    p->latency = 0;
    p->max_comms = d->max_qp > 0 ? d->max_qp : 1 << 16;
    p->max_recvs = RAIL_MAX_RECVS;
    p->max_p2p_bytes = limit < (size_t)MAX_NET_SIZE ? limit : (size_t)MAX_NET_SIZE;
    p->max_coll_bytes = (size_t)MAX_COLLNET_SIZE;
    p->dev = dev;
    return 0;
}
