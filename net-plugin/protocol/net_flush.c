/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect flush through loopback RDMA reads: see net_flush.h. */
#include "protocol/net_flush.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdr/net_gdr.h"
#include "log.h"
#include "nccl/nccl_net.h"
#include "params.h"
#include "protocol/net_comm.h"
#include "protocol/net_health.h"
#include "protocol/net_link.h"
#include "protocol/net_reg.h"
#include "transport/net_verbs.h"

#define FLUSH_REQS      RAIL_RECV_REQS /* one flush per receive request in flight at most */
#define FLUSH_HOST_SIZE 4096
#define FLUSH_SLOT      64 /* each rail reads into its own cache line of the host page */

struct flush_rail {
    struct rail_dev *dev;
    struct ibv_cq *cq;
    struct ibv_qp *qp; /* NULL: this rail needs no flush */
    struct ibv_mr *mr; /* the host page on this device */
};

struct flush_req {
    struct rail_req_head h;
    struct rail_flush *f;
    int left; /* reads not yet completed */
    int error;
};

struct rail_flush {
    struct rail_recv_comm *r;
    int nrails;
    struct flush_rail rail[RAIL_MAX_RAILS];
    uint8_t *host;
    int nfree;
    uint8_t free_list[FLUSH_REQS];
    struct flush_req reqs[FLUSH_REQS];
};

static int rail_setup(struct rail_flush *f, int i, struct rail_dev *d, char *err, size_t errlen)
{
    struct flush_rail *fr = &f->rail[i];
    int rc;

    fr->dev = d;
    rc = rail_verbs_reg_mr(d->pd, f->host, FLUSH_HOST_SIZE, IBV_ACCESS_LOCAL_WRITE, &fr->mr,
                           d->name, err, errlen);
    if (rc == 0)
        rc = rail_verbs_create_cq(d->ctx, FLUSH_REQS + 1, f, &fr->cq, d->name, err, errlen);
    if (rc == 0)
        rc = rail_verbs_create_qp(d->pd, fr->cq, FLUSH_REQS, 1, 1, NULL, f, &fr->qp, d->name, err,
                                  errlen);
    if (rc < 0)
        return rc;
    struct rail_qp_path path = {
        .port = d->port,
        .gid_index = d->gid_index,
        .pkey_index = d->pkey_index,
        .timeout = (int)rail_param_int(RAIL_PARAM_IB_TIMEOUT),
        .retry_cnt = (int)rail_param_int(RAIL_PARAM_IB_RETRY_CNT),
    };
    struct rail_qp_remote self = {
        .qpn = fr->qp->qp_num,
        .link_layer = d->link_layer,
        .lid = d->lid,
        .gid = d->gid,
        .mtu = d->mtu,
    };
    return rail_verbs_qp_connect(fr->qp, &path, &self, d->name, err, errlen);
}

int rail_flush_setup(struct rail_recv_comm *r, char *err, size_t errlen)
{
    struct rail_flush *f = NULL;
    int rc = 0;

    r->flush = NULL;
    for (int i = 0; i < r->base.nrails && rc == 0; i++) {
        struct rail_dev *d = r->base.link[i].dev;
        if (!rail_gdr_flush_needed(d))
            continue;
        if (!f) {
            f = calloc(1, sizeof(*f));
            if (!f || rail_region_alloc(FLUSH_HOST_SIZE, &f->host) < 0) {
                free(f);
                snprintf(err, errlen, "out of memory for the GPUDirect flush");
                return -ENOMEM;
            }
            f->r = r;
            f->nrails = r->base.nrails;
            r->flush = f;
        }
        rc = rail_setup(f, i, d, err, errlen);
        if (rc == 0)
            RAIL_INFO(NCCL_NET, "recv comm %p: GPUDirect flush through a loopback QP on %s",
                      (void *)r, d->name);
    }
    if (!f)
        return 0;
    for (int k = 0; k < FLUSH_REQS; k++)
        f->free_list[k] = (uint8_t)(FLUSH_REQS - 1 - k);
    f->nfree = FLUSH_REQS;
    if (rc < 0)
        rail_flush_destroy(r);
    return rc;
}

void rail_flush_destroy(struct rail_recv_comm *r)
{
    struct rail_flush *f = r ? r->flush : NULL;
    if (!f)
        return;
    for (int i = 0; i < RAIL_MAX_RAILS; i++) {
        rail_verbs_destroy_qp(f->rail[i].qp);
        rail_verbs_destroy_cq(f->rail[i].cq);
        rail_verbs_dereg_mr(f->rail[i].mr);
    }
    for (int k = 0; k < FLUSH_REQS; k++)
        f->reqs[k].h.ops = NULL;
    free(f->host);
    free(f);
    r->flush = NULL;
}

static int flush_req_test(struct rail_req_head *h, int *done, int *sizes)
{
    return rail_flush_test(h, done, sizes);
}

static const struct rail_req_ops flush_req_ops = {.test = flush_req_test};

static bool rail_flush_owns(const void *request)
{
    const struct rail_req_head *h = request;
    return h && h->ops == &flush_req_ops;
}

static void req_release(struct flush_req *q)
{
    struct rail_flush *f = q->f;
    q->h.ops = NULL;
    f->free_list[f->nfree++] = (uint8_t)(q - f->reqs);
}

int rail_flush_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
                      void **request)
{
    struct rail_recv_comm *r = recv_comm;
    const struct rail_mr *m = NULL;
    int last = -1, rc;

    if (!request)
        return -EINVAL;
    *request = NULL;
    if (!r || !rail_comm_is_recv(&r->base)) {
        RAIL_WARN(NCCL_NET, "iflush: %p is not a receive comm of this plugin", recv_comm);
        return -EINVAL;
    }
    if (n < 0 || n > RAIL_MAX_RECVS || (n > 0 && (!data || !sizes || !mhandles))) {
        RAIL_WARN(NCCL_NET, "iflush: invalid arguments (n=%d)", n);
        return -EINVAL;
    }
    struct rail_flush *f = r->flush;
    if (!f)
        return 0; /* no rail of this comm needs a flush */
    rc = atomic_load(&r->base.error);
    if (rc < 0)
        return rail_comm_error(&r->base);
    for (int i = 0; i < n; i++)
        if (sizes[i] > 0)
            last = i;
    if (last < 0)
        return 0;
    rc = rail_mr_check(&r->base, mhandles[last], data[last], 1, &m);
    if (rc < 0)
        return rc;
    if (m->type == NCCL_PTR_HOST)
        return 0; /* host memory is coherent once the completion was seen */
    if (f->nfree == 0) {
        RAIL_WARN(NCCL_NET, "iflush: more than %d flushes in flight on recv comm %p", FLUSH_REQS,
                  (void *)r);
        return -EAGAIN;
    }
    struct flush_req *q = &f->reqs[f->free_list[--f->nfree]];
    q->h.ops = &flush_req_ops;
    q->h.comm = &r->base;
    q->f = f;
    q->left = 0;
    q->error = 0;
    for (int i = 0; i < f->nrails; i++) {
        struct flush_rail *fr = &f->rail[i];
        if (!fr->qp)
            continue;
        struct ibv_sge sge = {.addr = (uintptr_t)f->host + (uintptr_t)i * FLUSH_SLOT,
                              .length = 1,
                              .lkey = fr->mr->lkey};
        struct ibv_send_wr wr;
        memset(&wr, 0, sizeof(wr));
        wr.wr_id = (uint64_t)(q - f->reqs);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = (uintptr_t)data[last];
        wr.wr.rdma.rkey = m->rkey[i];
        rc = rail_verbs_post_send(fr->qp, &wr);
        if (rc < 0) {
            rail_comm_fail(&r->base, rc, "%s: posting the flush read failed: %s", fr->dev->name,
                           strerror(-rc));
            if (q->left == 0)
                req_release(q);
            return rc;
        }
        q->left++;
    }
    if (q->left == 0) {
        req_release(q);
        return 0;
    }
    *request = q;
    return 0;
}

/* Drains the flush completions of every rail into their requests. */
static void poll_all(struct rail_flush *f)
{
    struct ibv_wc wc[RAIL_POLL_BATCH];
    for (int i = 0; i < f->nrails; i++) {
        struct flush_rail *fr = &f->rail[i];
        int n;
        if (!fr->cq)
            continue;
        while ((n = rail_verbs_poll_cq(fr->cq, RAIL_POLL_BATCH, wc)) > 0) {
            for (int k = 0; k < n; k++) {
                if (wc[k].wr_id >= FLUSH_REQS)
                    continue;
                struct flush_req *q = &f->reqs[wc[k].wr_id];
                if (wc[k].status != IBV_WC_SUCCESS) {
                    q->error = -EIO;
                    rail_comm_fail(&f->r->base, -EIO,
                                   "%s: flush read failed: %s (vendor error %#x)", fr->dev->name,
                                   rail_verbs_wc_status_str(wc[k].status), wc[k].vendor_err);
                }
                if (q->left > 0)
                    q->left--;
            }
            if (n < RAIL_POLL_BATCH)
                break;
        }
        if (n < 0) {
            rail_comm_fail(&f->r->base, -EIO, "%s: ibv_poll_cq on the flush CQ failed",
                           fr->dev->name);
            return;
        }
    }
}

int rail_flush_test(void *request, int *done, int *sizes)
{
    struct flush_req *q = request;
    if (done)
        *done = 0;
    if (!rail_flush_owns(q) || !done)
        return -EINVAL;
    poll_all(q->f);
    if (q->left > 0) {
        int rc = atomic_load(&q->h.comm->error);
        return rc < 0 ? rail_comm_error(q->h.comm) : 0;
    }
    int rc = q->error;
    *done = 1;
    if (sizes)
        sizes[0] = 0;
    req_release(q);
    return rc;
}
