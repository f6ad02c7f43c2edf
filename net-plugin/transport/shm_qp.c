/* SPDX-License-Identifier: Apache-2.0 */
/* Completion queues and queue pairs of the shm provider (shm_qp.h). */
#include "transport/shm_qp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/net_verbs.h"
#include "transport/shm_engine.h"
#include "transport/shm_types.h"

static struct shm_ctx *ctx_of(struct ibv_context *ctx)
{
    return (struct shm_ctx *)ctx;
}

struct ibv_cq *shm_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int vector)
{
    (void)vector;
    if (cqe < 1 || cqe > SHM_MAX_CQE || channel) {
        errno = EINVAL;
        return NULL;
    }
    struct shm_cq *cq = calloc(1, sizeof(*cq));
    if (cq)
        cq->wc = calloc((size_t)cqe, sizeof(*cq->wc));
    if (!cq || !cq->wc) {
        free(cq);
        errno = ENOMEM;
        return NULL;
    }
    cq->ctx = ctx_of(ctx);
    cq->cap = cqe;
    cq->ibv.context = ctx;
    cq->ibv.cq_context = cq_context;
    cq->ibv.cqe = cqe;
    return &cq->ibv;
}

int shm_destroy_cq(struct ibv_cq *ibv)
{
    struct shm_cq *cq = (struct shm_cq *)ibv;
    if (cq->nqps)
        return EBUSY;
    free(cq->qps);
    free(cq->wc);
    free(cq);
    return 0;
}

static int cq_attach(struct shm_cq *cq, struct shm_qp *qp)
{
    for (int i = 0; i < cq->nqps; i++)
        if (cq->qps[i] == qp)
            return 0;
    if (cq->nqps == cq->qps_cap) {
        int cap = cq->qps_cap ? 2 * cq->qps_cap : 8;
        struct shm_qp **q = realloc(cq->qps, (size_t)cap * sizeof(*q));
        if (!q)
            return ENOMEM;
        cq->qps = q;
        cq->qps_cap = cap;
    }
    cq->qps[cq->nqps++] = qp;
    return 0;
}

static void cq_detach(struct shm_cq *cq, struct shm_qp *qp)
{
    for (int i = 0; i < cq->nqps; i++)
        if (cq->qps[i] == qp) {
            cq->qps[i] = cq->qps[--cq->nqps];
            return;
        }
}

static void qp_free(struct shm_qp *qp)
{
    free(qp->sq);
    free(qp->rq);
    free(qp->inline_buf);
    free(qp);
}

/* Zeroes len bytes at p writing only the partial pages at its ends: the whole pages inside are
 * dropped (MADV_DONTNEED: malloc's private anonymous memory then reads as zeros and is faulted in
 * when first written). A ring so costs resident memory where writes with immediate landed, as an
 * HCA's receive queue holds what was posted: the rings of a send comm's QPs, which receive none,
 * stay untouched but for their ends. A failed madvise, or other pages than 4 KiB multiples: memset.
 */
static void zero_lazily(void *p, size_t len)
{
    long page = sysconf(_SC_PAGESIZE); /* from the auxiliary vector: no system call */
    uintptr_t a = (uintptr_t)p, end = a + len;
    if (page > 0 && (page & (page - 1)) == 0) {
        uintptr_t mask = (uintptr_t)page - 1, lo = (a + mask) & ~mask, hi = end & ~mask;
        if (lo < hi && madvise((void *)lo, hi - lo, MADV_DONTNEED) == 0) {
            memset(p, 0, lo - a);
            memset((void *)hi, 0, end - hi);
            return;
        }
    }
    memset(p, 0, len);
}

static struct shm_ring *ring_for(struct shm_ctx *c, int slot)
{
    if (!c->rings[slot]) {
        c->rings[slot] = malloc(sizeof(struct shm_ring));
        if (c->rings[slot])
            rail_verbs_count(RAIL_VERBS_SHM_RINGS, (long)sizeof(struct shm_ring));
    }
    struct shm_ring *r = c->rings[slot];
    if (r) {
        zero_lazily(r, sizeof(*r));
        __atomic_thread_fence(__ATOMIC_RELEASE);
    }
    return r;
}

struct ibv_qp *shm_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    struct shm_ctx *c = ctx_of(pd->context);
    struct ibv_qp_cap *cap = &attr->cap;
    if (attr->qp_type != IBV_QPT_RC || !attr->send_cq || !attr->recv_cq || attr->srq ||
        cap->max_send_wr < 1 || cap->max_send_wr > SHM_MAX_WR || cap->max_recv_wr > SHM_MAX_WR ||
        cap->max_send_sge > SHM_MAX_SGE || cap->max_recv_sge > SHM_MAX_SGE ||
        cap->max_inline_data > SHM_MAX_INLINE) {
        errno = EINVAL;
        return NULL;
    }
    struct shm_qp *qp = calloc(1, sizeof(*qp));
    if (!qp) {
        errno = ENOMEM;
        return NULL;
    }
    qp->sq_cap = (int)cap->max_send_wr;
    qp->rq_cap = cap->max_recv_wr ? (int)cap->max_recv_wr : 1;
    qp->max_inline = (int)cap->max_inline_data;
    qp->sq = calloc((size_t)qp->sq_cap, sizeof(*qp->sq));
    qp->rq = calloc((size_t)qp->rq_cap, sizeof(*qp->rq));
    if (qp->max_inline)
        qp->inline_buf = malloc((size_t)qp->sq_cap * (size_t)qp->max_inline);
    if (!qp->sq || !qp->rq || (qp->max_inline && !qp->inline_buf)) {
        qp_free(qp);
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    int slot = -1;
    for (int i = 0; i < SHM_MAX_QP && slot < 0; i++)
        if (!c->qps[i])
            slot = i;
    int err = slot < 0 ? ENOMEM : 0;
    if (!err) {
        qp->ring = ring_for(c, slot);
        err = qp->ring ? 0 : ENOMEM;
    }
    if (!err)
        err = cq_attach((struct shm_cq *)attr->send_cq, qp);
    if (!err && (err = cq_attach((struct shm_cq *)attr->recv_cq, qp)) != 0)
        cq_detach((struct shm_cq *)attr->send_cq, qp);
    if (err) {
        pthread_mutex_unlock(&c->lock);
        qp_free(qp);
        errno = err;
        return NULL;
    }
    uint16_t gen = (uint16_t)((c->qp_gen[slot] + 1) & ((1u << (24 - SHM_QP_BITS)) - 1));
    if (gen == 0)
        gen = 1;
    c->qp_gen[slot] = gen;
    c->qps[slot] = qp;
    qp->ctx = c;
    qp->slot = slot;
    qp->ibv.context = pd->context;
    qp->ibv.qp_context = attr->qp_context;
    qp->ibv.pd = pd;
    qp->ibv.send_cq = attr->send_cq;
    qp->ibv.recv_cq = attr->recv_cq;
    qp->ibv.qp_num = (uint32_t)gen << SHM_QP_BITS | (uint32_t)slot;
    qp->ibv.state = IBV_QPS_RESET;
    qp->ibv.qp_type = IBV_QPT_RC;
    struct shm_qp_pub *pub = &c->dir->qp[slot];
    pub->ring = (uint64_t)(uintptr_t)qp->ring;
    atomic_store(&pub->state, (uint32_t)IBV_QPS_RESET);
    atomic_store(&pub->qpn, qp->ibv.qp_num);
    pthread_mutex_unlock(&c->lock);
    cap->max_recv_wr = (uint32_t)qp->rq_cap;
    return &qp->ibv;
}

static void set_state(struct shm_qp *qp, enum ibv_qp_state st)
{
    qp->ibv.state = st;
    atomic_store(&qp->ctx->dir->qp[qp->slot].state, (uint32_t)st);
}

static int modify_locked(struct shm_qp *qp, struct ibv_qp_attr *a, int mask)
{
    enum ibv_qp_state cur = qp->ibv.state;
    enum ibv_qp_state to = mask & IBV_QP_STATE ? a->qp_state : cur;
    if (to == IBV_QPS_ERR) {
        if (cur != IBV_QPS_ERR)
            shm_engine_error(qp);
        return 0;
    }
    if (to == IBV_QPS_RESET) {
        qp->sq_head = qp->sq_next = qp->sq_count = 0;
        qp->rq_head = qp->rq_count = 0;
        qp->flush = false;
        set_state(qp, IBV_QPS_RESET);
        return 0;
    }
    if (to == IBV_QPS_INIT && (cur == IBV_QPS_RESET || cur == IBV_QPS_INIT)) {
        if ((mask & IBV_QP_PORT) && a->port_num != 1)
            return EINVAL;
        if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
            return EINVAL; /* the port's PKey table has one entry (0xffff) */
        if (mask & IBV_QP_PKEY_INDEX)
            qp->given.pkey_index = a->pkey_index;
        if (mask & IBV_QP_PORT)
            qp->given.port_num = a->port_num;
        if (mask & IBV_QP_ACCESS_FLAGS)
            qp->given.qp_access_flags = a->qp_access_flags;
        set_state(qp, IBV_QPS_INIT);
        return 0;
    }
    if (to == IBV_QPS_RTR && cur == IBV_QPS_INIT) {
        if (!(mask & IBV_QP_DEST_QPN) || !(mask & IBV_QP_AV))
            return EINVAL;
        pid_t pid;
        uint64_t dir;
        int dev;
        if (rail_shm_ep_lookup(qp->ctx->fab, a->ah_attr.dlid, &pid, &dir, &dev) < 0)
            return EINVAL; /* no such LID on the fabric */
        qp->given.ah_attr = a->ah_attr;
        qp->given.dest_qp_num = a->dest_qp_num;
        if (mask & IBV_QP_PATH_MTU)
            qp->given.path_mtu = a->path_mtu;
        qp->remote_lid = a->ah_attr.dlid;
        qp->remote_qpn = a->dest_qp_num;
        qp->remote_pid = pid;
        qp->remote_dir = dir;
        qp->remote_dev = dev;
        qp->prod = qp->cached_tail = 0;
        qp->remote_ring_addr = 0;
        set_state(qp, IBV_QPS_RTR);
        return 0;
    }
    if (to == IBV_QPS_RTS && (cur == IBV_QPS_RTR || cur == IBV_QPS_RTS)) {
        if (mask & IBV_QP_TIMEOUT)
            qp->timeout = a->timeout;
        if (mask & IBV_QP_RETRY_CNT)
            qp->retry_cnt = a->retry_cnt;
        qp->given.timeout = (uint8_t)qp->timeout;
        qp->given.retry_cnt = (uint8_t)qp->retry_cnt;
        set_state(qp, IBV_QPS_RTS);
        return 0;
    }
    return EINVAL;
}

int shm_modify_qp(struct ibv_qp *ibv, struct ibv_qp_attr *attr, int mask)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    pthread_mutex_lock(&qp->ctx->lock);
    int rc = modify_locked(qp, attr, mask);
    pthread_mutex_unlock(&qp->ctx->lock);
    return rc;
}

int shm_query_qp(struct ibv_qp *ibv, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    (void)mask; /* like a device, every attribute is returned */
    pthread_mutex_lock(&qp->ctx->lock);
    *attr = qp->given;
    attr->qp_state = attr->cur_qp_state = qp->ibv.state;
    attr->cap.max_send_wr = (uint32_t)qp->sq_cap;
    attr->cap.max_recv_wr = (uint32_t)qp->rq_cap;
    attr->cap.max_inline_data = (uint32_t)qp->max_inline;
    if (init) {
        memset(init, 0, sizeof(*init));
        init->qp_context = qp->ibv.qp_context;
        init->send_cq = qp->ibv.send_cq;
        init->recv_cq = qp->ibv.recv_cq;
        init->qp_type = IBV_QPT_RC;
        init->cap = attr->cap;
    }
    pthread_mutex_unlock(&qp->ctx->lock);
    return 0;
}

int shm_destroy_qp(struct ibv_qp *ibv)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    struct shm_ctx *c = qp->ctx;
    pthread_mutex_lock(&c->lock);
    struct shm_qp_pub *pub = &c->dir->qp[qp->slot];
    atomic_store(&pub->qpn, 0);
    atomic_store(&pub->state, (uint32_t)IBV_QPS_RESET);
    cq_detach((struct shm_cq *)ibv->send_cq, qp);
    cq_detach((struct shm_cq *)ibv->recv_cq, qp);
    c->qps[qp->slot] = NULL;
    pthread_mutex_unlock(&c->lock);
    qp_free(qp);
    return 0;
}

static uint64_t wr_len(const struct ibv_send_wr *wr)
{
    uint64_t n = 0;
    for (int i = 0; i < wr->num_sge; i++)
        n += wr->sg_list[i].length;
    return n;
}

/* Queues one work request: 0 or a positive errno. */
static int queue_send(struct shm_qp *qp, const struct ibv_send_wr *wr)
{
    if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM &&
        wr->opcode != IBV_WR_RDMA_READ)
        return EINVAL;
    if (wr->num_sge < 0 || wr->num_sge > SHM_MAX_SGE || (wr->num_sge && !wr->sg_list))
        return EINVAL;
    if (qp->sq_count >= (uint32_t)qp->sq_cap)
        return ENOMEM;
    uint64_t len = wr_len(wr);
    bool inl = (wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ;
    if (len > UINT32_MAX || (inl && len > (uint64_t)qp->max_inline))
        return EINVAL;
    uint32_t k = (qp->sq_head + qp->sq_count) % (uint32_t)qp->sq_cap;
    struct shm_swr *w = &qp->sq[k];
    memset(w, 0, sizeof(*w));
    w->wr_id = wr->wr_id;
    w->opcode = (uint8_t)wr->opcode;
    w->signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
    w->nsge = (uint8_t)wr->num_sge;
    w->imm = wr->imm_data;
    w->raddr = wr->wr.rdma.remote_addr;
    w->rkey = wr->wr.rdma.rkey;
    w->len = (uint32_t)len;
    w->inl = inl;
    if (inl) { /* the caller may reuse its buffer as soon as the post returns */
        uint8_t *dst = qp->inline_buf + (size_t)k * (size_t)qp->max_inline;
        for (int i = 0; i < wr->num_sge; i++) {
            memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
            dst += wr->sg_list[i].length;
        }
    } else {
        for (int i = 0; i < wr->num_sge; i++)
            w->sge[i] = wr->sg_list[i];
    }
    qp->sq_count++;
    return 0;
}

int shm_post_send(struct ibv_qp *ibv, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    int rc = 0;
    pthread_mutex_lock(&qp->ctx->lock);
    if (qp->ibv.state != IBV_QPS_RTS && qp->ibv.state != IBV_QPS_ERR)
        rc = EINVAL;
    for (; wr && rc == 0; wr = wr->next)
        if ((rc = queue_send(qp, wr)) != 0)
            break;
    if (rc && bad)
        *bad = wr;
    if (qp->ibv.state == IBV_QPS_ERR)
        qp->flush = qp->flush || qp->sq_count > 0;
    uint64_t budget = SHM_CHUNK;
    shm_engine_progress(qp, &budget, shm_now_ns());
    pthread_mutex_unlock(&qp->ctx->lock);
    return rc;
}

int shm_post_recv(struct ibv_qp *ibv, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct shm_qp *qp = (struct shm_qp *)ibv;
    int rc = 0;
    pthread_mutex_lock(&qp->ctx->lock);
    if (qp->ibv.state == IBV_QPS_RESET)
        rc = EINVAL;
    for (; wr && rc == 0; wr = wr->next) {
        if (wr->num_sge > SHM_MAX_SGE || qp->rq_count >= (uint32_t)qp->rq_cap) {
            rc = wr->num_sge > SHM_MAX_SGE ? EINVAL : ENOMEM;
            break;
        }
        qp->rq[(qp->rq_head + qp->rq_count) % (uint32_t)qp->rq_cap] = wr->wr_id;
        qp->rq_count++;
    }
    if (rc && bad)
        *bad = wr;
    if (qp->ibv.state == IBV_QPS_ERR)
        qp->flush = qp->flush || qp->rq_count > 0;
    pthread_mutex_unlock(&qp->ctx->lock);
    return rc;
}

static int pop(struct shm_cq *cq, int n, struct ibv_wc *wc)
{
    int got = 0;
    while (got < n && cq->count > 0) {
        wc[got++] = cq->wc[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
    }
    return got;
}

int shm_poll_cq(struct ibv_cq *ibv, int n, struct ibv_wc *wc)
{
    struct shm_cq *cq = (struct shm_cq *)ibv;
    if (n < 0)
        return -1;
    pthread_mutex_lock(&cq->ctx->lock);
    int got = pop(cq, n, wc);
    if (got < n && cq->nqps > 0) {
        uint64_t budget = SHM_POLL_BUDGET, now = shm_now_ns();
        unsigned start = cq->rr++;
        for (int i = 0; i < cq->nqps; i++)
            shm_engine_progress(cq->qps[(start + (unsigned)i) % (unsigned)cq->nqps], &budget, now);
        got += pop(cq, n - got, wc + got);
    }
    pthread_mutex_unlock(&cq->ctx->lock);
    return got;
}
