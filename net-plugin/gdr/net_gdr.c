/* SPDX-License-Identifier: Apache-2.0 */
/* Per-HCA GPUDirect facts and decisions: see net_gdr.h. */
#include "gdr/net_gdr.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cuda_drv.h"
#include "log.h"
#include "transport/net_devices.h"
#include "transport/net_verbs.h"
#include "params.h"
#include "topo_sysfs.h"

#define GDR_MAX_DEVS 64

struct gdr_state {
    struct rail_dev *dev; /* NULL until decided */
    struct rail_gdr_decision dec;
    atomic_bool ro_refused;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdr_state g_state[GDR_MAX_DEVS];

int rail_gdr_probe_dmabuf(struct ibv_pd *pd)
{
    if (!pd)
        return RAIL_GDR_PROBE_NONE;
    errno = 0;
    struct ibv_mr *mr = rail_ibv->reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
    if (mr) {
        (void)rail_ibv->dereg_mr(mr);
        return 0;
    }
    if (errno == ENOSYS)
        return RAIL_GDR_PROBE_NONE; /* the verbs library has no ibv_reg_dmabuf_mr */
    return errno ? errno : EIO;
}

/* Node-wide CUDA facts: lowest compute capability, dma-buf support of every GPU. */
static void cuda_facts(struct rail_gdr_inputs *in)
{
    int n = 0;
    in->cuda = rail_cuda_init() == 0;
    in->cuda_dmabuf = -1;
    if (!in->cuda)
        return;
    (void)rail_cuda_driver_version(&in->cuda_version);
    (void)rail_cuda_device_count(&n);
    for (int g = 0; g < n; g++) {
        int major = 0, dmabuf = 0;
        if (rail_cuda_device_attr(g, RAIL_CU_ATTR_CC_MAJOR, &major) == 0 && major > 0 &&
            (in->cc_major == 0 || major < in->cc_major))
            in->cc_major = major;
        if (rail_cuda_device_attr(g, RAIL_CU_ATTR_DMA_BUF_SUPPORTED, &dmabuf) == 0)
            in->cuda_dmabuf = in->cuda_dmabuf == 0 ? 0 : (dmabuf ? 1 : 0);
    }
}

static void decide(struct rail_dev *d, struct rail_gdr_decision *dec)
{
    const char *root = rail_sysfs_root_param();
    struct rail_gdr_inputs in = {.dev = d->name, .path = RAIL_GDR_PATH_UNKNOWN};

    if (rail_ibv->host_memory_only) {
        *dec = (struct rail_gdr_decision){.ptr_support = 1 /* NCCL_PTR_HOST */, .path_ok = true};
        snprintf(dec->reason, sizeof(dec->reason),
                 "GDR disabled for %s: the %s verbs provider moves host memory only (NCCL "
                 "stages GPU buffers through host memory)",
                 d->name, rail_ibv->provider);
        RAIL_INFO(NCCL_INIT | NCCL_NET, "%s", dec->reason);
        return;
    }

    for (int i = 0; rail_gdr_peermem_files[i] && !in.peermem; i++)
        if (rail_sysfs_exists(root, rail_gdr_peermem_files[i]))
            in.peermem = rail_gdr_peermem_files[i];
    cuda_facts(&in);
    in.dmabuf_probe = rail_gdr_probe_dmabuf(d->pd);
    in.gdr_level = rail_param_str(RAIL_PARAM_NET_GDR_LEVEL);
    in.dmabuf_enable = rail_param_bool(RAIL_PARAM_DMABUF_ENABLE);
    in.flush_disable = rail_param_bool(RAIL_PARAM_GDR_FLUSH_DISABLE);
    in.force_flush = rail_param_bool(RAIL_PARAM_NET_FORCE_FLUSH);
    rail_gdr_decide(&in, dec);
    RAIL_INFO(NCCL_INIT | NCCL_NET, "%s", dec->reason);
}

static struct gdr_state *state_of(struct rail_dev *d)
{
    if (!d || d->index < 0 || d->index >= GDR_MAX_DEVS)
        return NULL;
    struct gdr_state *s = &g_state[d->index];
    pthread_mutex_lock(&g_lock);
    if (s->dev != d) {
        decide(d, &s->dec);
        atomic_store(&s->ro_refused, false);
        s->dev = d;
    }
    pthread_mutex_unlock(&g_lock);
    return s;
}

const struct rail_gdr_decision *rail_gdr_get(struct rail_dev *d)
{
    static struct rail_gdr_decision host_only = {.ptr_support = 1 /* NCCL_PTR_HOST */,
                                                 .path_ok = true};
    struct gdr_state *s = state_of(d);
    return s ? &s->dec : &host_only;
}

int rail_gdr_ptr_support(struct rail_dev *d)
{
    return rail_gdr_get(d)->ptr_support;
}

int rail_gdr_force_flush(struct rail_dev *d)
{
    return rail_gdr_get(d)->force_flush;
}

bool rail_gdr_flush_needed(struct rail_dev *d)
{
    return rail_gdr_get(d)->flush;
}

bool rail_gdr_eager_ok(struct rail_dev *d)
{
    return !rail_gdr_get(d)->gdr;
}

int rail_gdr_ro_access(struct rail_dev *d)
{
#ifdef IBV_ACCESS_RELAXED_ORDERING
    struct gdr_state *s = state_of(d);
    if (s && !atomic_load(&s->ro_refused) &&
        rail_gdr_relaxed_ordering(rail_param_int(RAIL_PARAM_IB_PCI_RELAXED_ORDERING), true))
        return IBV_ACCESS_RELAXED_ORDERING;
#else
    (void)d;
#endif
    return 0;
}

void rail_gdr_ro_refused(struct rail_dev *d, int err)
{
    struct gdr_state *s = state_of(d);
    if (s && !atomic_exchange(&s->ro_refused, true))
        RAIL_INFO(NCCL_INIT | NCCL_NET | NCCL_REG,
                  "%s: registration with PCIe relaxed ordering refused (%s): registering without "
                  "it from now on",
                  d->name, strerror(err));
}
