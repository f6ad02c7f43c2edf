/* SPDX-License-Identifier: Apache-2.0 */
/* ECE of the shm provider (shm_ece.h). */
#include "transport/shm_ece.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "transport/shm_types.h"

static _Atomic uint32_t g_options[RAIL_SHM_NDEV] = {
    SHM_ECE_DEFAULT_OPTIONS, SHM_ECE_DEFAULT_OPTIONS, SHM_ECE_DEFAULT_OPTIONS,
    SHM_ECE_DEFAULT_OPTIONS};

void rail_shm_ece_options(int dev, uint32_t options)
{
    if (dev >= 0 && dev < RAIL_SHM_NDEV)
        atomic_store(&g_options[dev], options);
}

static uint32_t device_options(const struct shm_qp *qp)
{
    int dev = qp->ctx->dev;
    return dev >= 0 && dev < RAIL_SHM_NDEV ? atomic_load(&g_options[dev]) : 0;
}

int shm_query_ece(struct ibv_qp *ibv, struct ibv_ece *ece)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    uint32_t caps = device_options(qp);
    if (!caps)
        return EOPNOTSUPP;
    pthread_mutex_lock(&qp->ctx->lock);
    memset(ece, 0, sizeof(*ece));
    ece->vendor_id = SHM_ECE_VENDOR;
    ece->options = qp->ece_set ? qp->ece_options : caps;
    pthread_mutex_unlock(&qp->ctx->lock);
    return 0;
}

int shm_set_ece(struct ibv_qp *ibv, struct ibv_ece *ece)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    uint32_t caps = device_options(qp);
    if (!caps)
        return EOPNOTSUPP;
    if (ece->vendor_id != SHM_ECE_VENDOR || ece->comp_mask != 0)
        return EINVAL;
    pthread_mutex_lock(&qp->ctx->lock);
    int rc = 0;
    if (qp->ibv.state != IBV_QPS_RESET && qp->ibv.state != IBV_QPS_INIT) {
        rc = EINVAL; /* ECE applies at the transitions to RTR and RTS */
    } else {
        qp->ece_options = caps & ece->options;
        qp->ece_set = true;
    }
    pthread_mutex_unlock(&qp->ctx->lock);
    return rc;
}
