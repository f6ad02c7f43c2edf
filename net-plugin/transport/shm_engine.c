/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's work engine (shm_engine.h). */
#include "transport/shm_engine.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "transport/shm_dev.h"
#include "transport/shm_peer.h"

#define MIN_COST 64 /* budget a work request costs at least (bounds the work of one poll) */

uint64_t shm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool shm_cq_push(struct ibv_cq *ibv, const struct ibv_wc *wc)
{
    struct shm_cq *cq = (struct shm_cq *)ibv;
    if (cq->count >= cq->cap)
        return false;
    cq->wc[(cq->head + cq->count) % cq->cap] = *wc;
    cq->count++;
    return true;
}

static bool cq_room(struct ibv_cq *ibv)
{
    const struct shm_cq *cq = (const struct shm_cq *)ibv;
    return cq->count < cq->cap;
}

/* How long RC retries before RETRY_EXC_ERR: 4.096 us x 2^timeout per try, retry_cnt + 1 tries
 * (timeout 0 is infinite). */
static uint64_t retry_ns(const struct shm_qp *qp)
{
    if (qp->timeout <= 0)
        return UINT64_MAX / 4;
    uint64_t t = 4096ull << (qp->timeout > 31 ? 31 : qp->timeout);
    return t * (uint64_t)(qp->retry_cnt + 1);
}

static enum ibv_wc_opcode wc_opcode(const struct shm_swr *w)
{
    return w->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
}

/* Requests leave this port and reach the responder's. */
static bool path_up(const struct shm_qp *qp)
{
    struct rail_shm_fabric *f = qp->ctx->fab;
    return shm_port_up(qp->ctx) && rail_shm_port_active(f, qp->remote_dev) &&
           rail_shm_drop_of(f, qp->ctx->dev) != RAIL_SHM_DROP_ALL;
}

/* The responder's answers (acknowledgements, read data) come back. */
static bool answers_up(const struct shm_qp *qp)
{
    return path_up(qp) && rail_shm_drop_of(qp->ctx->fab, qp->remote_dev) == RAIL_SHM_DROP_NONE;
}

static void fail_wr(struct shm_swr *w, enum ibv_wc_status st)
{
    w->state = SHM_WR_FAILED;
    w->status = (int)st;
}

/* No progress possible now: the retry timer runs (started at the first failed try). */
static void retry_later(const struct shm_qp *qp, struct shm_swr *w, uint64_t now)
{
    if (!w->deadline)
        w->deadline = now + retry_ns(qp);
    else if (now >= w->deadline)
        fail_wr(w, IBV_WC_RETRY_EXC_ERR);
}

/* The local iovecs of bytes [off, off + n) of w: their count, or -1 when a local key does not
 * cover its SGE (a local protection error). */
static int local_iov(struct shm_qp *qp, struct shm_swr *w, uint64_t off, uint64_t n,
                     struct iovec *iov)
{
    unsigned k = (unsigned)(w - qp->sq);
    if (w->inl) {
        iov[0].iov_base = qp->inline_buf + (size_t)k * (size_t)qp->max_inline + off;
        iov[0].iov_len = n;
        return 1;
    }
    int cnt = 0;
    uint64_t pos = 0;
    for (int i = 0; i < w->nsge && n > 0; i++) {
        const struct ibv_sge *s = &w->sge[i];
        if (!shm_lkey_ok(qp->ctx, s->lkey, s->addr, s->length))
            return -1;
        uint64_t end = pos + s->length;
        if (off < end) {
            uint64_t from = off - pos, take = s->length - from;
            if (take > n)
                take = n;
            iov[cnt].iov_base = (void *)(uintptr_t)(s->addr + from);
            iov[cnt].iov_len = take;
            cnt++;
            off += take;
            n -= take;
        }
        pos = end;
    }
    return cnt;
}

/* The responder refused the access: this request fails, and the responder's QP goes to the error
 * state too (it is told through its ring). */
static void access_error(struct shm_qp *qp, struct shm_swr *w, uint64_t ring)
{
    fail_wr(w, IBV_WC_REM_ACCESS_ERR);
    if (ring)
        (void)shm_peer_ring_fatal(qp, ring);
}

/* Moves one chunk of w's data. */
static void move_data(struct shm_qp *qp, struct shm_swr *w, uint64_t *budget, uint64_t now)
{
    int access = w->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
    uint64_t ring = 0;
    int rc = shm_peer_check(qp, w->rkey, w->raddr, w->len, access, &ring);
    if (rc == -EHOSTUNREACH) {
        retry_later(qp, w, now);
        return;
    }
    if (rc < 0) {
        access_error(qp, w, ring);
        return;
    }
    uint64_t ring_addr = ring;
    uint64_t n = w->len - w->off;
    if (n > SHM_CHUNK)
        n = SHM_CHUNK;
    struct iovec iov[SHM_MAX_SGE];
    int cnt = n ? local_iov(qp, w, w->off, n, iov) : 0;
    if (cnt < 0) {
        fail_wr(w, IBV_WC_LOC_PROT_ERR);
        return;
    }
    if (w->opcode == IBV_WR_RDMA_READ)
        rc = shm_peer_read(qp, w->raddr + w->off, iov, cnt, n);
    else
        rc = shm_peer_write(qp, w->raddr + w->off, iov, cnt, n);
    if (rc == -EHOSTUNREACH) {
        retry_later(qp, w, now);
        return;
    }
    if (rc < 0) {
        access_error(qp, w, ring_addr);
        return;
    }
    w->off += n;
    w->deadline = 0; /* it got through: the retry timer starts again */
    *budget = *budget > (n > MIN_COST ? n : MIN_COST) ? *budget - (n > MIN_COST ? n : MIN_COST) : 0;
    if (w->opcode != IBV_WR_RDMA_READ)
        rail_shm_add_tx(qp->ctx->fab, qp->ctx->dev, n);
    qp->remote_ring_addr = ring_addr;
    if (w->off < w->len) {
        w->state = SHM_WR_MOVING;
        return;
    }
    w->state = w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? SHM_WR_RING : SHM_WR_LANDED;
}

/* Puts w's immediate into the peer QP's ring (its data landed before). */
static void push_imm(struct shm_qp *qp, struct shm_swr *w, uint64_t now)
{
    if (qp->prod - qp->cached_tail >= SHM_RING) {
        uint64_t tail;
        if (shm_peer_ring_tail(qp, qp->remote_ring_addr, &tail) < 0) {
            retry_later(qp, w, now);
            return;
        }
        qp->cached_tail = tail;
        if (qp->prod - tail >= SHM_RING)
            return; /* receiver not ready (RNR), retried without limit (rnr_retry 7) */
    }
    struct shm_rent e = {.imm = w->imm,
                         .len = w->len,
                         .src_qpn = qp->ibv.qp_num,
                         .dst_qpn = qp->remote_qpn,
                         .seq = qp->prod + 1};
    if (shm_peer_ring_push(qp, qp->remote_ring_addr, qp->prod, &e) < 0) {
        retry_later(qp, w, now);
        return;
    }
    w->ring_idx = qp->prod;
    qp->prod++;
    w->deadline = 0;
    w->state = SHM_WR_LANDED;
}

static void step(struct shm_qp *qp, struct shm_swr *w, uint64_t *budget, uint64_t now)
{
    if (!path_up(qp)) {
        retry_later(qp, w, now);
        return;
    }
    if (w->state == SHM_WR_QUEUED || w->state == SHM_WR_MOVING)
        move_data(qp, w, budget, now);
    if (w->state == SHM_WR_RING)
        push_imm(qp, w, now);
    if (w->state == SHM_WR_LANDED && w->opcode == IBV_WR_RDMA_READ && answers_up(qp))
        w->state = SHM_WR_DONE; /* the read's data came back: that is its answer */
}

/* Bytes that landed without an acknowledgement yet: the requester sends no further request
 * beyond SHM_WINDOW_BYTES of them (as an HCA's limit of unacknowledged packets). */
static uint64_t unacked(const struct shm_qp *qp)
{
    uint64_t n = 0;
    for (uint32_t a = qp->sq_head; a != qp->sq_next; a++) {
        const struct shm_swr *w = &qp->sq[a % (uint32_t)qp->sq_cap];
        if (w->state == SHM_WR_LANDED)
            n += w->len;
    }
    return n;
}

static bool complete(struct shm_qp *qp, const struct shm_swr *w, enum ibv_wc_status st,
                     enum ibv_wc_opcode op, struct ibv_cq *cq)
{
    struct ibv_wc wc;
    memset(&wc, 0, sizeof(wc));
    wc.wr_id = w ? w->wr_id : 0;
    wc.status = st;
    wc.opcode = op;
    wc.qp_num = qp->ibv.qp_num;
    wc.byte_len = w && op == IBV_WC_RDMA_READ ? w->len : 0;
    return shm_cq_push(cq, &wc);
}

/* Writes with immediate that arrived, each taking a posted receive (as far as the CQ has room). */
static void take_entries(struct shm_qp *qp)
{
    struct shm_ring *ring = qp->ring;
    while (qp->rq_count > 0 && cq_room(qp->ibv.recv_cq)) {
        struct shm_rent *e = &ring->ent[qp->cons % SHM_RING];
        if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != qp->cons + 1 ||
            e->dst_qpn != qp->ibv.qp_num)
            return;
        struct ibv_wc wc;
        memset(&wc, 0, sizeof(wc));
        wc.wr_id = qp->rq[qp->rq_head % (uint32_t)qp->rq_cap];
        wc.status = IBV_WC_SUCCESS;
        wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
        wc.wc_flags = IBV_WC_WITH_IMM;
        wc.imm_data = e->imm;
        wc.byte_len = e->len;
        wc.qp_num = qp->ibv.qp_num;
        wc.src_qp = e->src_qpn;
        shm_cq_push(qp->ibv.recv_cq, &wc);
        qp->rq_head++;
        qp->rq_count--;
        qp->cons++;
        atomic_store_explicit(&ring->tail, qp->cons, memory_order_release);
    }
}

/* Flushes every work request still queued (ERR state), as far as the CQs have room. */
static void flush(struct shm_qp *qp)
{
    while (qp->sq_count > 0) {
        struct shm_swr *w = &qp->sq[qp->sq_head % (uint32_t)qp->sq_cap];
        if (!complete(qp, w, IBV_WC_WR_FLUSH_ERR, wc_opcode(w), qp->ibv.send_cq))
            return;
        qp->sq_head++;
        qp->sq_count--;
    }
    qp->sq_next = qp->sq_head;
    while (qp->rq_count > 0) {
        struct ibv_wc wc;
        memset(&wc, 0, sizeof(wc));
        wc.wr_id = qp->rq[qp->rq_head % (uint32_t)qp->rq_cap];
        wc.status = IBV_WC_WR_FLUSH_ERR;
        wc.opcode = IBV_WC_RECV;
        wc.qp_num = qp->ibv.qp_num;
        if (!shm_cq_push(qp->ibv.recv_cq, &wc))
            return;
        qp->rq_head++;
        qp->rq_count--;
    }
    qp->flush = false;
}

void shm_engine_error(struct shm_qp *qp)
{
    if (qp->ibv.state == IBV_QPS_RTR || qp->ibv.state == IBV_QPS_RTS) {
        /* What already arrived was taken by an HCA on arrival: take it before the flush. */
        atomic_store(&qp->ctx->dir->qp[qp->slot].state, SHM_QPS_DRAINING);
        take_entries(qp);
    }
    qp->ibv.state = IBV_QPS_ERR;
    atomic_store(&qp->ctx->dir->qp[qp->slot].state, (uint32_t)IBV_QPS_ERR);
    qp->flush = true;
    flush(qp);
}

/* Acknowledgements of what landed; the retry timer of what has none. An HCA answers a plain write
 * on arrival at a ready QP (here: the check before the data moved, shm_peer_check), and a write
 * with immediate once it took a posted receive (RNR otherwise: retried without limit). Here the
 * responder takes its ring's entries when it polls, and before it goes to the error state
 * (shm_engine_error: DRAINING, then ERR), so a write with immediate is answered once a read of
 * the responder (one per call) shows its ring's tail past the entry, waited for while the
 * responder is ready or DRAINING; a responder in ERR that never took it never answers (RC: the
 * requester retries until it gives up or its own QP is flushed, and the protocol sends it again
 * elsewhere). A responder gone or replaced since is taken to have answered on arrival. Counting a
 * write into a responder that goes to ERR as delivered lost its immediate (vf2_cts under ASan;
 * test_shm_engine checks both outcomes). */
static void acknowledge(struct shm_qp *qp, uint64_t now)
{
    uint32_t cap = (uint32_t)qp->sq_cap, state = 0;
    bool acks = answers_up(qp), asked = false;
    uint64_t tail = 0;
    for (uint32_t a = qp->sq_head; a != qp->sq_next; a++) {
        struct shm_swr *w = &qp->sq[a % cap];
        if (w->state != SHM_WR_LANDED)
            continue;
        if (!acks) {
            retry_later(qp, w, now);
            continue;
        }
        if (w->opcode != IBV_WR_RDMA_WRITE_WITH_IMM) {
            w->state = SHM_WR_DONE;
            continue;
        }
        if (!asked) {
            asked = true;
            if (shm_peer_ack_state(qp, qp->remote_ring_addr, &state, &tail) < 0)
                state = 0;
        }
        bool gone = state != IBV_QPS_RTR && state != IBV_QPS_RTS && state != SHM_QPS_DRAINING &&
                    state != IBV_QPS_ERR;
        if (gone || tail > w->ring_idx)
            w->state = SHM_WR_DONE;
        else if (state == IBV_QPS_ERR)
            retry_later(qp, w, now);
    }
}

static void take_arrivals(struct shm_qp *qp)
{
    if (atomic_load_explicit(&qp->ring->fatal, memory_order_relaxed)) {
        shm_engine_error(qp);
        return;
    }
    take_entries(qp);
}

void shm_engine_progress(struct shm_qp *qp, uint64_t *budget, uint64_t now)
{
    if (qp->ibv.state == IBV_QPS_ERR) {
        if (qp->flush)
            flush(qp);
        return;
    }
    if (qp->ibv.state == IBV_QPS_RTR || qp->ibv.state == IBV_QPS_RTS)
        take_arrivals(qp);
    if (qp->ibv.state != IBV_QPS_RTS)
        return;
    uint32_t cap = (uint32_t)qp->sq_cap;
    /* Requests go out in order, a window of them unacknowledged. */
    while (*budget > 0 && qp->sq_next - qp->sq_head < qp->sq_count &&
           qp->sq_next - qp->sq_head < SHM_WINDOW && unacked(qp) < SHM_WINDOW_BYTES) {
        struct shm_swr *w = &qp->sq[qp->sq_next % cap];
        step(qp, w, budget, now);
        if (w->state != SHM_WR_LANDED && w->state != SHM_WR_DONE && w->state != SHM_WR_FAILED)
            break;
        qp->sq_next++;
        if (w->state == SHM_WR_FAILED)
            break;
    }
    acknowledge(qp, now);
    /* Completions in order; the first error takes the QP to the error state. */
    while (qp->sq_count > 0) {
        struct shm_swr *w = &qp->sq[qp->sq_head % cap];
        if (w->state == SHM_WR_DONE) {
            if (w->signaled && !complete(qp, w, IBV_WC_SUCCESS, wc_opcode(w), qp->ibv.send_cq))
                return;
        } else if (w->state == SHM_WR_FAILED) {
            if (!complete(qp, w, (enum ibv_wc_status)w->status, wc_opcode(w), qp->ibv.send_cq))
                return;
            qp->sq_head++;
            qp->sq_count--;
            shm_engine_error(qp);
            return;
        } else {
            return;
        }
        qp->sq_head++;
        qp->sq_count--;
    }
}
