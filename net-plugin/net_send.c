/* Sending side. The receiver RDMA-writes clear-to-send (CTS) entries into this comm's FIFO:
 * one slot per irecv, one entry per grouped receive, each naming (tag, per-tag index, buffer,
 * keys). isend(tag) sends the j-th message with that tag, j = messages already sent with it:
 *   - rendezvous: the CTS entry (tag, j) is here -> RDMA WRITE the data into the receive buffer,
 *     then RDMA WRITE WITH IMM a size record (immediate = slot/entry) on the same QP; a single
 *     chunk of up to RAIL_IMM_DIRECT_MAX bytes is one RDMA WRITE WITH IMM of the data itself
 *     (immediate = slot/entry/size, no record);
 *   - eager: no such entry yet, size <= the eager limit and a bounce slot is free -> one RDMA
 *     WRITE WITH IMM of header + data into the receiver's bounce slot (immediate = slot);
 *     the CTS entry (tag, j) arrives later and is skipped as already satisfied;
 *   - otherwise *request = NULL: NCCL calls again.
 * Bounce slots are used in ring order; the receiver returns them by writing a freed count
 * (the credit word behind the FIFO). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "log.h"
#include "net_comm.h"
#include "net_data.h"
#include "net_verbs.h"

#define NO_REQ 0xFFFF

void rail_send_init_state(struct rail_send_comm *s)
{
    rail_tagmap_init(&s->sent);
    s->nfree = RAIL_SEND_REQS;
    for (int i = 0; i < RAIL_SEND_REQS; i++) {
        s->free_list[i] = (uint16_t)(RAIL_SEND_REQS - 1 - i);
        s->reqs[i].h.comm = &s->base;
    }
}

static struct rail_send_req *req_alloc(struct rail_send_comm *s)
{
    if (s->nfree == 0)
        return NULL;
    struct rail_send_req *q = &s->reqs[s->free_list[--s->nfree]];
    q->h.magic = RAIL_SREQ_MAGIC;
    q->wrs_left = 0;
    q->size = 0;
    q->error = 0;
    return q;
}

static void req_free(struct rail_send_comm *s, struct rail_send_req *q)
{
    q->h.magic = 0;
    s->free_list[s->nfree++] = (uint16_t)(q - s->reqs);
}

/* Copies the FIFO entry if it carries sequence `want`: 0 copied, 1 not written yet, 2 already
 * overwritten by a later round (every entry of that slot was satisfied eagerly). */
static int read_cts(const uint8_t *p, uint64_t want, struct rail_cts *out)
{
    const struct rail_cts *e = (const struct rail_cts *)p;
    uint64_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE), s2;
    if (s1 != want)
        return s1 > want && (s1 - want) % RAIL_FIFO_SLOTS == 0 ? 2 : 1;
    memcpy(out, p, sizeof(*out));
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    s2 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    if (s2 != want)
        return 2;
    return 0;
}

static bool slot_resolved(const struct rail_send_comm *s, unsigned slot)
{
    for (int e = 0; e < s->shadow_n[slot]; e++)
        if (!s->shadow[slot][e].resolved)
            return false;
    return true;
}

static void retire(struct rail_send_comm *s)
{
    while (s->head < s->scan && slot_resolved(s, s->head % RAIL_FIFO_SLOTS))
        s->head++;
}

/* Absorbs newly written FIFO slots into the shadow copy, validating every entry. */
static void absorb(struct rail_send_comm *s)
{
    char err[200];
    while (s->scan < s->head + RAIL_FIFO_SLOTS) {
        unsigned slot = (unsigned)(s->scan % RAIL_FIFO_SLOTS);
        const uint8_t *base = s->fifo + (size_t)slot * RAIL_MAX_RECVS * RAIL_CTS_BYTES;
        uint64_t want = s->scan + 1;
        struct rail_cts tmp[RAIL_MAX_RECVS];
        int st = read_cts(base, want, &tmp[0]), n;

        if (st == 1)
            break;
        if (st == 0 && rail_cts_check(&tmp[0], want, 0, s->base.nrails, err, sizeof(err)) != 0) {
            rail_comm_fail(&s->base, -EPROTO, "FIFO slot %llu: %s", (unsigned long long)s->scan,
                           err);
            return;
        }
        n = st == 0 ? tmp[0].nreqs : 0;
        for (int e = 1; e < n && st == 0; e++) {
            st = read_cts(base + (size_t)e * RAIL_CTS_BYTES, want, &tmp[e]);
            if (st == 1)
                return; /* the rest of the slot is still on its way */
            if (st == 0 && (rail_cts_check(&tmp[e], want, (unsigned)e, s->base.nrails, err,
                                           sizeof(err)) != 0 ||
                            tmp[e].nreqs != n)) {
                rail_comm_fail(&s->base, -EPROTO, "FIFO slot %llu entry %d: %s",
                               (unsigned long long)s->scan, e,
                               tmp[e].nreqs != n ? "entry count differs within the slot" : err);
                return;
            }
        }
        if (st == 2)
            n = 0;
        for (int e = 0; e < n; e++) {
            s->shadow[slot][e].cts = tmp[e];
            s->shadow[slot][e].resolved = tmp[e].tag_index < rail_tagmap_get(&s->sent, tmp[e].tag);
        }
        s->shadow_n[slot] = (uint8_t)n;
        s->scan++;
    }
    retire(s);
}

static struct rail_shadow *find_cts(struct rail_send_comm *s, int tag, uint32_t index,
                                    uint64_t *seq, unsigned *entry)
{
    for (uint64_t q = s->head; q < s->scan; q++) {
        unsigned slot = (unsigned)(q % RAIL_FIFO_SLOTS);
        for (int e = 0; e < s->shadow_n[slot]; e++) {
            struct rail_shadow *sh = &s->shadow[slot][e];
            if (!sh->resolved && sh->cts.tag == tag && sh->cts.tag_index == index) {
                *seq = q;
                *entry = (unsigned)e;
                return sh;
            }
        }
    }
    return NULL;
}

static int post_chain(struct rail_send_comm *s, int rail, int qp, struct ibv_send_wr *wr, int nwr)
{
    struct rail_link *l = &s->base.link[rail];
    int rc = rail_verbs_post_send(l->qps[qp].qp, wr);
    if (rc < 0) {
        rail_comm_fail(&s->base, rc, "%s: ibv_post_send on QP %#x failed: %s", l->dev->name,
                       l->qps[qp].qp->qp_num, strerror(-rc));
        return rc;
    }
    l->qps[qp].sq_out += nwr;
    s->base.rr++;
    return 0;
}

static void resolve(struct rail_send_comm *s, struct rail_send_req *q, struct rail_shadow *sh,
                    int nwr, size_t size)
{
    q->wrs_left = nwr;
    q->size = size;
    sh->resolved = true;
    retire(s);
}

/* A message of 1 .. RAIL_IMM_DIRECT_MAX bytes in one chunk: a single WRITE_WITH_IMM puts the
 * data into the receive buffer and tells the receiver its size, with no size record. */
static int send_direct(struct rail_send_comm *s, struct rail_send_req *q, struct rail_shadow *sh,
                       uint64_t seq, unsigned e, void *data, size_t size, int tag,
                       const struct rail_mr *m, void **request)
{
    const int rail = 0;
    int qp = (int)(s->base.rr % (unsigned)s->base.nqps), idx = (int)(q - s->reqs);
    struct ibv_sge sge = {(uintptr_t)data, (uint32_t)size, m->lkey[rail]};
    struct ibv_send_wr wr;
    uint32_t ignored;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = rail_wrid(RAIL_WR_LAST, rail, qp, idx);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(rail_imm_direct((unsigned)(seq % RAIL_FIFO_SLOTS), e, (uint32_t)size));
    wr.wr.rdma.remote_addr = sh->cts.addr;
    wr.wr.rdma.rkey = sh->cts.rkey[rail];
    int rc = post_chain(s, rail, qp, &wr, 1);
    if (rc < 0) {
        req_free(s, q);
        return rc;
    }
    resolve(s, q, sh, 1, size);
    *request = q;
    return rail_tagmap_next(&s->sent, tag, &ignored);
}

/* Data write(s) + size record for CTS entry `sh` (slot sequence seq, entry e). */
static int send_rdv(struct rail_send_comm *s, struct rail_shadow *sh, uint64_t seq, unsigned e,
                    void *data, size_t size, int tag, const struct rail_mr *m, void **request)
{
    const int rail = 0;
    struct rail_link *l = &s->base.link[rail];
    int qp = (int)(s->base.rr % (unsigned)s->base.nqps);
    bool too_big = size > sh->cts.size;
    size_t chunk = l->dev->max_msg, nchunks = too_big || !size ? 0 : (size + chunk - 1) / chunk;
    struct rail_send_req *q;

    if (nchunks > 8) {
        RAIL_WARN(NCCL_NET, "isend of %zu bytes exceeds 8 x the %zu-byte message limit of %s", size,
                  chunk, l->dev->name);
        return -E2BIG;
    }
    /* One chunk that fits the immediate: the data write itself completes the receive. */
    bool direct = nchunks == 1 && size <= RAIL_IMM_DIRECT_MAX;
    int nwr = direct ? 1 : (int)nchunks + 1;
    if (nwr > l->qps[qp].sq_max - l->qps[qp].sq_out)
        return 0; /* send queue full: NCCL retries */
    q = req_alloc(s);
    if (!q)
        return 0;
    int idx = (int)(q - s->reqs);
    if (direct)
        return send_direct(s, q, sh, seq, e, data, size, tag, m, request);
    struct rail_record *rec = (struct rail_record *)(s->local + (size_t)idx * RAIL_LOCAL_STRIDE);
    rec->size = too_big ? RAIL_RECORD_TOO_BIG : size;
    rec->seq = (uint32_t)(seq + 1);
    rec->entry = e;

    struct ibv_send_wr wr[9];
    struct ibv_sge sge[9];
    memset(wr, 0, sizeof(wr));
    for (size_t k = 0; k < nchunks; k++) {
        size_t off = k * chunk, len = size - off < chunk ? size - off : chunk;
        sge[k] = (struct ibv_sge){(uintptr_t)data + off, (uint32_t)len, m->lkey[rail]};
        wr[k].wr_id = rail_wrid(RAIL_WR_DATA, rail, qp, idx);
        wr[k].sg_list = &sge[k];
        wr[k].num_sge = 1;
        wr[k].opcode = IBV_WR_RDMA_WRITE;
        wr[k].send_flags = IBV_SEND_SIGNALED;
        wr[k].wr.rdma.remote_addr = sh->cts.addr + off;
        wr[k].wr.rdma.rkey = sh->cts.rkey[rail];
        wr[k].next = &wr[k + 1];
    }
    size_t k = nchunks;
    sge[k] = (struct ibv_sge){(uintptr_t)rec, sizeof(*rec), l->mr[1]->lkey};
    wr[k].wr_id = rail_wrid(RAIL_WR_LAST, rail, qp, idx);
    wr[k].sg_list = &sge[k];
    wr[k].num_sge = 1;
    wr[k].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr[k].send_flags = IBV_SEND_SIGNALED;
    wr[k].imm_data = htonl(rail_imm_rdv((unsigned)(seq % RAIL_FIFO_SLOTS), e));
    wr[k].wr.rdma.remote_addr =
        s->base.peer_addr1 +
        ((seq % RAIL_FIFO_SLOTS) * RAIL_MAX_RECVS + e) * (uint64_t)RAIL_RECORD_BYTES;
    wr[k].wr.rdma.rkey = l->peer_rkey1;
    wr[k].next = NULL;

    int rc = post_chain(s, rail, qp, wr, nwr);
    if (rc < 0) {
        req_free(s, q);
        return rc;
    }
    resolve(s, q, sh, nwr, size);
    uint32_t ignored;
    rc = rail_tagmap_next(&s->sent, tag, &ignored);
    if (too_big) {
        /* The record tells the receiver; this side reports the misuse too. */
        RAIL_WARN(NCCL_NET,
                  "isend of %zu bytes (tag %d) but the matching receive buffer holds "
                  "%llu bytes",
                  size, tag, (unsigned long long)sh->cts.size);
        q->error = -EINVAL;
    }
    *request = q;
    return rc;
}

static int send_eager(struct rail_send_comm *s, void *data, size_t size, int tag, uint32_t index,
                      const struct rail_mr *m, void **request)
{
    const int rail = 0;
    struct rail_link *l = &s->base.link[rail];
    int qp = (int)(s->base.rr % (unsigned)s->base.nqps);
    uint64_t freed = __atomic_load_n((uint64_t *)(s->fifo + RAIL_CREDIT_OFF), __ATOMIC_ACQUIRE);
    struct rail_send_req *q;

    if (freed > s->eager_posted) {
        rail_comm_fail(&s->base, -EPROTO, "receiver returned %llu eager slots, only %llu were used",
                       (unsigned long long)freed, (unsigned long long)s->eager_posted);
        return -EPROTO;
    }
    if (s->eager_posted - freed >= (uint64_t)s->eager_slots)
        return 0; /* no free bounce slot */
    if (l->qps[qp].sq_out >= l->qps[qp].sq_max)
        return 0;
    q = req_alloc(s);
    if (!q)
        return 0;
    int idx = (int)(q - s->reqs);
    unsigned b = (unsigned)(s->eager_posted % (uint64_t)s->eager_slots);
    struct rail_eager_hdr *h =
        (struct rail_eager_hdr *)(s->local + (size_t)idx * RAIL_LOCAL_STRIDE + 64);
    memset(h, 0, sizeof(*h));
    h->tag = tag;
    h->tag_index = index;
    h->size = size;
    h->seq = s->eager_posted;

    struct ibv_sge sge[2] = {{(uintptr_t)h, RAIL_EAGER_HDR, l->mr[1]->lkey},
                             {(uintptr_t)data, (uint32_t)size, m->lkey[rail]}};
    struct ibv_send_wr wr;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = rail_wrid(RAIL_WR_LAST, rail, qp, idx);
    wr.sg_list = sge;
    wr.num_sge = size ? 2 : 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htonl(rail_imm_eager(b));
    wr.wr.rdma.remote_addr =
        s->base.peer_addr2 + (uint64_t)b * (RAIL_EAGER_HDR + (uint64_t)s->eager_bytes);
    wr.wr.rdma.rkey = l->peer_rkey2;
    int rc = post_chain(s, rail, qp, &wr, 1);
    if (rc < 0) {
        req_free(s, q);
        return rc;
    }
    q->wrs_left = 1;
    q->size = size;
    s->eager_posted++;
    uint32_t ignored;
    rc = rail_tagmap_next(&s->sent, tag, &ignored);
    *request = q;
    return rc;
}

int rail_net_isend(void *comm, void *data, size_t size, int tag, void *mhandle, void **request)
{
    struct rail_send_comm *s = comm;
    const struct rail_mr *m = NULL;
    struct rail_shadow *sh;
    uint64_t seq;
    unsigned e;
    int rc;

    if (!request)
        return -EINVAL;
    *request = NULL;
    if (!s || s->base.magic != RAIL_SEND_MAGIC) {
        RAIL_WARN(NCCL_NET, "isend: %p is not a send comm of this plugin", comm);
        return -EINVAL;
    }
    rail_comm_progress(&s->base);
    rail_comm_health(&s->base, true);
    rc = rail_comm_error(&s->base);
    if (rc)
        return rc;
    rc = rail_mr_check(&s->base, mhandle, data, size, &m);
    if (rc)
        return rc;
    absorb(s);
    if (atomic_load(&s->base.error))
        return rail_comm_error(&s->base);
    uint32_t index = rail_tagmap_get(&s->sent, tag);
    sh = find_cts(s, tag, index, &seq, &e);
    if (sh)
        return send_rdv(s, sh, seq, e, data, size, tag, m, request);
    if (size <= s->eager_limit && s->eager_slots > 0)
        return send_eager(s, data, size, tag, index, m, request);
    return 0;
}

void rail_send_on_wc(struct rail_send_comm *s, int rail, const struct ibv_wc *wc)
{
    struct rail_link *l = &s->base.link[rail];
    int kind = rail_wrid_kind(wc->wr_id), idx = rail_wrid_idx(wc->wr_id);

    l->qps[rail_wrid_qp(wc->wr_id)].sq_out--;
    if (wc->status != IBV_WC_SUCCESS)
        rail_wc_error(&s->base, rail, wc);
    if ((kind == RAIL_WR_DATA || kind == RAIL_WR_LAST) && idx < RAIL_SEND_REQS &&
        s->reqs[idx].h.magic == RAIL_SREQ_MAGIC) {
        struct rail_send_req *q = &s->reqs[idx];
        q->wrs_left--;
        if (wc->status != IBV_WC_SUCCESS && !q->error)
            q->error = wc->status == IBV_WC_WR_FLUSH_ERR ? -EIO : -EREMOTEIO;
    } else if (kind != RAIL_WR_DATA && kind != RAIL_WR_LAST) {
        rail_comm_fail(&s->base, -EIO, "send comm got a completion of kind %d", kind);
    }
}

int rail_send_test(struct rail_send_req *q, int *done, int *sizes)
{
    struct rail_send_comm *s = (struct rail_send_comm *)q->h.comm;

    rail_comm_progress(&s->base);
    if (q->wrs_left == 0) {
        int err = q->error;
        if (err) {
            req_free(s, q);
            return atomic_load(&s->base.error) ? rail_comm_error(&s->base) : err;
        }
        if (sizes)
            sizes[0] = (int)q->size;
        req_free(s, q);
        *done = 1;
        return 0;
    }
    rail_comm_health(&s->base, true);
    return rail_comm_error(&s->base);
}
