/* SPDX-License-Identifier: Apache-2.0 */
/* init / finalize / devices / getProperties. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compat_env.h"
#include "log.h"
#include "nccl/nccl_net.h"
#include "protocol/net_comm.h"
#include "gdr/net_gdr.h"
#include "abi/net_plugin.h"
#include "params.h"
#include "transport/shm_ece.h"
#include "transport/shm_fabric.h"
#include "transport/shm_verbs.h"
#ifdef RAIL_FAULT_INJECTION
#include "transport/verbs_fault_ops.h"
#endif

static const struct rail_net_ctx g_default_ctx = {RAIL_CTX_MAGIC, 0, -1};

const struct rail_net_ctx *rail_net_default_ctx(void)
{
    return &g_default_ctx;
}

/* NCCL_RAIL_VERBS_PROVIDER: the shm test provider goes in place of libibverbs before any device
 * is opened (and before the fault layer, which then wraps it). A refusal declines the plugin with
 * one INFO line. */
static int g_provider_rc;

static void provider_setup(void)
{
    if (rail_param_enum(RAIL_PARAM_VERBS_PROVIDER) != 1 /* shm */)
        return;
    char why[512] = "", note[128] = "";
    g_provider_rc = rail_shm_verbs_install(rail_param_str(RAIL_PARAM_SHM_FABRIC), note,
                                           sizeof(note), why, sizeof(why));
    for (int dev = 0; dev < RAIL_SHM_NDEV; dev++)
        rail_shm_ece_options(dev, (uint32_t)rail_param_int(RAIL_PARAM_SHM_ECE));
    if (g_provider_rc < 0)
        RAIL_INFO(NCCL_INIT | NCCL_NET, "net plugin declines: %s", why);
    else
        RAIL_INFO(NCCL_INIT | NCCL_NET,
                  "verbs provider shm: devices shm0..shm3 on fabric '%s' (shm0-shm1, shm2-shm3 "
                  "cabled), host memory only%s",
                  rail_param_str(RAIL_PARAM_SHM_FABRIC), note);
}

/* NCCL_RAIL_FAULT: the verbs fault layer goes in front of libibverbs before any device is
 * opened (fault builds only; elsewhere one WARN says it is ignored). */
static void fault_setup(void)
{
    const char *spec = rail_param_str(RAIL_PARAM_FAULT);
    if (!spec || !*spec)
        return;
#ifdef RAIL_FAULT_INJECTION
    char err[256] = "";
    int n = 0;
    if (rail_fault_install(spec, &n, err, sizeof(err)) < 0)
        RAIL_WARN(NCCL_NET, "NCCL_RAIL_FAULT=%s ignored: %s", spec, err);
    else
        RAIL_WARN(NCCL_NET, "NCCL_RAIL_FAULT=%s: %d verbs fault rule(s) armed (tests only)", spec,
                  n);
#else
    RAIL_WARN(NCCL_NET,
              "NCCL_RAIL_FAULT is set but this build has no fault injection (configure with "
              "-DRAIL_FAULT_INJECTION=ON): ignored");
#endif
}

/* NCCL's IB/NET variables set but not honoured, and unknown NCCL_IB_* / NCCL_RAIL_* names: one
 * line each, once per process (docs/compatibility.md, NCCL's network variables). */
extern char **environ;

static void env_finding(void *arg, const struct rail_env_finding *f)
{
    char line[512];
    (void)arg;
    rail_env_finding_text(f, line, sizeof(line));
    if (f->kind == RAIL_ENV_AS_IF)
        RAIL_INFO(NCCL_INIT | NCCL_ENV, "%s", line);
    else
        RAIL_WARN(NCCL_INIT | NCCL_ENV, "%s", line);
}

static void env_audit(void)
{
    (void)rail_env_audit(environ, env_finding, NULL);
}

int rail_net_init(void **ctx, uint64_t comm_id, int traffic_class, ncclDebugLogger_t logger)
{
    struct rail_net_ctx *c;
    int rc;

    static pthread_once_t provider_once = PTHREAD_ONCE_INIT, fault_once = PTHREAD_ONCE_INIT;
    static pthread_once_t audit_once = PTHREAD_ONCE_INIT;

    if (logger)
        rail_log_set_logger(logger);
    (void)pthread_once(&audit_once, env_audit);
    (void)pthread_once(&provider_once, provider_setup);
    if (g_provider_rc < 0) {
        if (ctx)
            *ctx = NULL;
        return g_provider_rc;
    }
    (void)pthread_once(&fault_once, fault_setup);
    if (ctx)
        *ctx = NULL;
    rc = rail_devices_init(rail_dev_reg_init);
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
    int rc = g_provider_rc < 0 ? g_provider_rc : rail_devices_init(rail_dev_reg_init);
    if (!ndev)
        return -EINVAL;
    *ndev = rc > 0 ? rc : 0;
    return rc < 0 ? rc : 0;
}

int rail_net_get_props(int dev, struct rail_net_props *p)
{
    struct rail_netdev *g = rail_device_group(dev);
    if (!p)
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    if (!g) {
        RAIL_WARN(NCCL_NET, "getProperties: device %d does not exist (%d devices)", dev,
                  rail_devices_count());
        return -EINVAL;
    }
    /* A device is its rails: speed is their sum, the PCI path and port those of the first. */
    struct rail_dev *d = g->rail[0];
    size_t max_msg = d->max_msg;
    int max_qp = d->max_qp;
    for (int r = 1; r < g->nrails; r++) {
        if (g->rail[r]->max_msg < max_msg)
            max_msg = g->rail[r]->max_msg;
        if (g->rail[r]->max_qp < max_qp)
            max_qp = g->rail[r]->max_qp;
    }
    size_t limit = 8 * max_msg;
    p->name = g->name;
    p->pci_path = d->pci_path;
    p->guid = d->guid;
    p->ptr_support = rail_gdr_ptr_support(d); /* GPUDirect: net_gdr.c; first rail, then all */
    p->reg_is_global = 1;
    /* GPUDirect only when every rail of the device can; a flush when any rail needs it. */
    p->force_flush = 0;
    for (int r = 0; r < g->nrails; r++) {
        p->ptr_support &= rail_gdr_ptr_support(g->rail[r]);
        p->force_flush |= rail_gdr_force_flush(g->rail[r]);
    }
    p->speed = g->speed;
    p->port = d->port;
    p->latency = 0;
    p->max_comms = max_qp > 0 ? max_qp : 1 << 16;
    p->max_recvs = RAIL_MAX_RECVS;
    p->max_p2p_bytes = limit < (size_t)MAX_NET_SIZE ? limit : (size_t)MAX_NET_SIZE;
    p->max_coll_bytes = (size_t)MAX_COLLNET_SIZE;
    p->dev = dev;
    p->rail_id = g->rail_id;
    p->plane_id = g->plane_id;
    return 0;
}
