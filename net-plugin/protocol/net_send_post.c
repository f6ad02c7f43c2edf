/* SPDX-License-Identifier: Apache-2.0 */
/* Posting of messages on the rails of a send comm, and their re-sending after a rail failure.
 *
 * A rendezvous message takes one of two shapes:
 *   - pipelined (one rail carries all of it): the data write(s) and the size record
 *     (WRITE WITH IMM) go back to back on one QP, whose ordering makes the record arrive after
 *     the data; a piece of up to RAIL_IMM_DIRECT_MAX bytes is a single WRITE WITH IMM. With
 *     failover, a rail failure before the last WR completed here leaves the message "unsure":
 *     once its WRs are back, the sender asks the receiver on a rail that is up (a query repeats
 *     the size record with RAIL_IMM_QUERY); the receiver first fails and drains that rail itself
 *     (nothing can land through it any more), then answers whether the receive got the message.
 *     Landed: done, nothing is written again. Not landed: it is re-sent two-phase. No data is
 *     ever written again into a buffer the receiver may have handed back to NCCL;
 *   - two-phase (striped over several rails): the
 *     data pieces are written on their rails first; only when every piece has completed here
 *     (acknowledged by the peer's HCA) is the size record written, on any rail that is up, on
 *     that rail's control QP when the comm has one (multi-rail): on a data QP it would queue
 *     behind the pieces of every message posted since.
 *     A piece whose rail fails before it completed is written again on a surviving rail; its
 *     bytes then land twice at the same place, which is harmless because the receiver does not
 *     own the message before the record arrives. A record whose completion was lost is written
 *     again; the receiver drops the duplicate (its sequence no longer matches).
 * A FIFO slot (and an eager bounce slot) is not reused while anything of the previous message
 * that used it is in flight or waiting to be re-sent, so a late duplicate never lands on a newer
 * message. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "protocol/net_send_post.h"

#include "log.h"
#include "protocol/net_clock.h"
#include "protocol/net_data.h"
#include "protocol/net_health.h"
#include "protocol/net_pieces.h"
#include "protocol/net_send_blocks.h"
#include "protocol/net_send_eager.h"
#include "protocol/net_send_wr.h"
#include "protocol/net_telemetry.h"
#include "transport/net_verbs.h"

static struct rail_record *record_of(struct rail_send_comm *s, struct rail_send_req *q)
{
    (void)s;
    return (struct rail_record *)q->src;
}

static uint64_t record_addr(const struct rail_send_comm *s, const struct rail_send_req *q)
{
    return s->base.peer_addr1 +
           ((q->seq % RAIL_FIFO_SLOTS) * RAIL_MAX_RECVS + q->entry) * (uint64_t)RAIL_RECORD_BYTES;
}

/* ---- data pieces ---- */

/* Cuts the scheduler's per-rail chunks into pieces (net_pieces.c). -E2BIG when more than
 * RAIL_REQ_CHUNKS result. */
static int cut_pieces(struct rail_send_comm *s, struct rail_send_req *q,
                      const struct rail_stripe_chunk *sc, int nsc)
{
    const bool one_qp = !s->split_qps || s->ndata == 1;
    struct rail_piece pc[RAIL_REQ_CHUNKS];
    int n = 0;
    for (int i = 0; i < nsc; i++) {
        struct rail_link *l = &s->base.link[sc[i].rail];
        unsigned qp0 = l->rr++ % (unsigned)s->ndata;
        if (one_qp && sc[i].length <= s->max_chunk) {
            /* The chunk is one piece on QP qp0, as rail_pieces_cut would cut it: no call. */
            if (n == RAIL_REQ_CHUNKS)
                return -E2BIG;
            struct rail_send_chunk *c = &q->ch[n++];
            c->off = sc[i].offset;
            c->len = sc[i].length;
            c->rail = (uint8_t)sc[i].rail;
            c->qp = (uint8_t)qp0;
            continue;
        }
        const struct rail_piece_cfg cfg = {s->ndata, s->split_qps, s->max_chunk};
        int m = rail_pieces_cut(&cfg, &sc[i], qp0, pc, RAIL_REQ_CHUNKS - n);
        if (m < 0)
            return m;
        for (int k = 0; k < m; k++) {
            struct rail_send_chunk *c = &q->ch[n++];
            c->off = pc[k].off;
            c->len = pc[k].len;
            c->rail = (uint8_t)pc[k].rail;
            c->qp = (uint8_t)pc[k].qp;
        }
    }
    rail_2ph_plan(&q->tp, n);
    return n;
}

/* now: the clock for a striped message's adaptive weights (one read for all its pieces), 0
 * otherwise. */
static int post_piece(struct rail_send_comm *s, struct rail_send_req *q, int k, uint64_t now)
{
    struct rail_send_chunk *c = &q->ch[k];
    struct ibv_sge sge = {q->data + c->off, (uint32_t)c->len, q->lkey[c->rail]};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(
        &wr, &sge, rail_wrid(RAIL_WR_DATA, c->rail, c->qp, rail_send_req_index(s, q) | k << 16),
        q->raddr + c->off, q->rkey[c->rail]);
    c->post_ns = now;
    int rc = rail_send_post_wr(s, c->rail, c->qp, &wr, 1);
    if (rc == 0) {
        rail_2ph_piece_posted(&q->tp, k);
        rail_tel_stripe(&s->base, c->rail, c->len);
    }
    return rc;
}

/* ---- the size record (two-phase) ---- */

/* The message's size record, WRITE WITH IMM `imm`, on rail: as the record itself (chunk
 * RAIL_CHUNK_REC) or as a query about it (RAIL_CHUNK_ASK). 0 posted, 1 no room, -errno. Always
 * inline: record_now's post of every two-phase record had two calls' prologues around it. */
static inline __attribute__((always_inline)) int post_record_inl(struct rail_send_comm *s,
                                                                 struct rail_send_req *q, int rail,
                                                                 unsigned chunk, uint32_t imm)
{
    struct rail_link *l = &s->base.link[rail];
    int qp = rail_send_control_qp(s, l);
    if (rail_send_sq_room(l, qp) < 1)
        return 1;
    struct ibv_sge sge = {(uintptr_t)record_of(s, q), sizeof(struct rail_record),
                          rail_send_src_lkey(q, rail)};
    struct ibv_send_wr wr;
    rail_verbs_fill_write(
        &wr, &sge, rail_wrid(RAIL_WR_LAST, rail, qp, rail_send_req_index(s, q) | chunk << 16),
        record_addr(s, q), l->peer_rkey1);
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(imm);
    return rail_send_post_wr(s, rail, qp, &wr, 1);
}

static int post_record_as(struct rail_send_comm *s, struct rail_send_req *q, int rail,
                          unsigned chunk, uint32_t imm)
{
    return post_record_inl(s, q, rail, chunk, imm);
}

static inline __attribute__((always_inline)) int post_record(struct rail_send_comm *s,
                                                             struct rail_send_req *q, int rail)
{
    int rc = post_record_inl(s, q, rail, RAIL_CHUNK_REC,
                             rail_imm_rdv((unsigned)(q->seq % RAIL_FIFO_SLOTS), q->entry));
    if (rc == 0) {
        rail_2ph_record_posted(&q->tp);
        q->rec_rail = (uint8_t)rail;
    }
    return rc;
}

/* The record (or eager write) waits for rail_send_retry. */
static void record_pending(struct rail_send_comm *s, struct rail_send_req *q)
{
    rail_2ph_record_wait(&q->tp);
    s->npending++;
}

/* Posts the record on `prefer` when it is up, else on the next rail up; else it waits. Always
 * inline (into piece_done and the empty message's post): as a call its prologue and epilogue
 * were ~20 of its ~56 instructions per two-rail message. */
static inline __attribute__((always_inline)) void record_now(struct rail_send_comm *s,
                                                             struct rail_send_req *q, int prefer)
{
    int rail = s->base.link[prefer].rj.up ? prefer : rail_pick_up(&s->base, (unsigned)prefer);
    if (rail < 0 || post_record(s, q, rail) != 0)
        record_pending(s, q);
}

/* ---- pipelined: data and record on one QP ---- */

/* Inlined into its one caller (a call cost a prologue and an epilogue of 18 instructions). */
static inline __attribute__((always_inline)) int post_pipelined(struct rail_send_comm *s,
                                                                struct rail_send_req *q)
{
    struct rail_send_chunk *c0 = &q->ch[0];
    int rail = c0->rail, qp = c0->qp, idx = rail_send_req_index(s, q);
    struct rail_link *l = &s->base.link[rail];
    size_t nbytes = q->too_big ? 0 : q->size;

    /* Adaptive routing: above the threshold the data goes as plain writes, the record after. */
    if (q->tp.n == 1 && nbytes > 0 && nbytes <= RAIL_IMM_DIRECT_MAX &&
        rail_ar_imm_data_ok(s->ar, s->ar_threshold, nbytes)) {
        if (rail_send_sq_room(l, qp) < 1)
            return 1;
        struct ibv_sge sge = {q->data, (uint32_t)nbytes, q->lkey[rail]};
        struct ibv_send_wr wr;
        rail_verbs_fill_write(&wr, &sge, rail_wrid(RAIL_WR_LAST, rail, qp, idx), q->raddr,
                              q->rkey[rail]);
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        wr.imm_data = htonl(
            rail_imm_direct((unsigned)(q->seq % RAIL_FIFO_SLOTS), q->entry, (uint32_t)nbytes));
        int rc = rail_send_post_wr(s, rail, qp, &wr, 1);
        if (rc == 0) {
            q->wrs_left = 1;
            rail_tel_whole(&s->base, rail, nbytes);
        }
        return rc;
    }
    struct ibv_send_wr wr[RAIL_REQ_CHUNKS + 1];
    struct ibv_sge sge[RAIL_REQ_CHUNKS + 1];
    int n = nbytes ? q->tp.n : 0;
    if (rail_send_sq_room(l, qp) < n + 1)
        return 1;
    for (int k = 0; k < n; k++) {
        sge[k] = (struct ibv_sge){q->data + q->ch[k].off, (uint32_t)q->ch[k].len, q->lkey[rail]};
        rail_verbs_fill_write(&wr[k], &sge[k], rail_wrid(RAIL_WR_DATA, rail, qp, idx),
                              q->raddr + q->ch[k].off, q->rkey[rail]);
        wr[k].next = &wr[k + 1];
    }
    sge[n] = (struct ibv_sge){(uintptr_t)record_of(s, q), sizeof(struct rail_record),
                              rail_send_src_lkey(q, rail)};
    rail_verbs_fill_write(&wr[n], &sge[n], rail_wrid(RAIL_WR_LAST, rail, qp, idx),
                          record_addr(s, q), l->peer_rkey1);
    wr[n].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr[n].imm_data = htonl(rail_imm_rdv((unsigned)(q->seq % RAIL_FIFO_SLOTS), q->entry));
    int rc = rail_send_post_wr(s, rail, qp, wr, n + 1);
    if (rc == 0) {
        q->wrs_left = n + 1;
        rail_tel_whole(&s->base, rail, nbytes);
    }
    return rc;
}

/* Whether every QP has room for its pieces of q (n pieces cut from nsc chunks) and, without a
 * control QP, for the record after them. n == nsc: each chunk is one piece, and the scheduler
 * gives each rail at most one chunk, so each piece is alone on its QP: one compare each. Else
 * the pieces are counted per QP. */
static bool room_for_pieces(const struct rail_send_comm *s, const struct rail_send_req *q, int n,
                            int nsc)
{
    const int rec = s->ctl_qp < 0;
    if (n == nsc) {
        for (int k = 0; k < n; k++)
            if (rail_send_sq_room(&s->base.link[q->ch[k].rail], q->ch[k].qp) < 1 + rec)
                return false;
        return true;
    }
    int need[RAIL_MAX_RAILS][8] = {{0}};
    for (int k = 0; k < n; k++)
        if (q->ch[k].qp < 8)
            need[q->ch[k].rail][q->ch[k].qp]++;
    for (int r = 0; r < s->base.nrails; r++)
        for (int p = 0; p < 8 && p < s->ndata; p++)
            if (need[r][p] && rail_send_sq_room(&s->base.link[r], p) < need[r][p] + rec)
                return false;
    return true;
}

/* 0 posted, 1 no room (nothing posted: call again), -errno. */
int rail_send_post_rdv(struct rail_send_comm *s, struct rail_send_req *q)
{
    struct rail_stripe_chunk sc[RAIL_STRIPE_MAX_RAILS];
    uint64_t nbytes = q->too_big ? 0 : q->size;
    int nsc, n;

    if (rail_stripe_one_whole(&s->sched, nbytes) && (!s->split_qps || s->ndata == 1) &&
        nbytes <= s->max_chunk) {
        /* One rail up, one piece: what the scheduler (the whole message on rail 0) and
         * cut_pieces (one piece on the rail's next data QP) give, without them. */
        struct rail_send_chunk *c = &q->ch[0];
        c->off = 0;
        c->len = nbytes;
        c->rail = 0;
        c->qp = (uint8_t)(s->base.link[0].rr++ % (unsigned)s->ndata);
        rail_2ph_plan(&q->tp, 1);
        nsc = n = 1;
        q->striped = false;
    } else {
        nsc = rail_stripe_schedule(&s->sched, nbytes, sc, RAIL_STRIPE_MAX_RAILS);
        if (nsc < 0) {
            if (nsc == -ENETDOWN)
                return atomic_load(&s->base.error) ? atomic_load(&s->base.error) : 1;
            return nsc;
        }
        q->striped = nsc > 1;
        n = cut_pieces(s, q, sc, nsc);
        if (n < 0) {
            RAIL_WARN(NCCL_NET,
                      "isend of %zu bytes needs more than %d pieces of at most %llu bytes", q->size,
                      RAIL_REQ_CHUNKS, (unsigned long long)s->max_chunk);
            return n;
        }
    }
    struct rail_record *rec = record_of(s, q);
    rec->size = q->too_big ? RAIL_RECORD_TOO_BIG : q->size;
    rec->seq = (uint32_t)(q->seq + 1);
    rec->entry = q->entry;
    q->unsure = 0;
    if (nsc == 1) {
        q->kind = RAIL_SREQ_PIPE;
        int rc = post_pipelined(s, q); /* counts the message (its one chunk: sc[0].rail) */
        if (rc == 0)
            s->slot_busy[q->seq % RAIL_FIFO_SLOTS] = (uint16_t)q->wrs_left;
        return rc;
    }
    /* Two-phase: every QP must take its pieces now, or nothing is posted. */
    if (!room_for_pieces(s, q, n, nsc))
        return 1;
    q->kind = RAIL_SREQ_2PH;
    if (q->striped)
        rail_tel_striped_msg(&s->base);
    else
        rail_tel_msg(&s->base, sc[0].rail);
    s->n2ph++;
    rail_send_help_list(s);
    bool empty = nbytes == 0;
    rail_2ph_start(&q->tp, empty);
    s->slot_busy[q->seq % RAIL_FIFO_SLOTS] = (uint16_t)((empty ? 0 : n) + 1);
    if (empty) {
        record_now(s, q, sc[0].rail);
        return 0;
    }
    uint64_t now = q->striped ? rail_now_ns() : 0; /* pieces posted back to back */
    for (int k = 0; k < n; k++) {
        int rc = post_piece(s, q, k, now);
        if (rc < 0)
            return rc;
        if (rc == 1) { /* its rail failed while posting: send it elsewhere */
            rail_2ph_piece_wait(&q->tp, k);
            s->npending++;
        }
    }
    return 0;
}

/* ---- unsure pipelined messages: ask the receiver ---- */

/* The rail under a PIPE message failed before its last WR completed here. */
static void mark_unsure(struct rail_send_comm *s, struct rail_send_req *q, int rail)
{
    if (q->unsure)
        return;
    q->unsure = RAIL_UNSURE_WAIT;
    q->unsure_rail = (uint8_t)rail;
    s->nunsure++;
    s->base.rejoin_hold++; /* the receiver must drain this rail's old QPs before answering */
    s->slot_busy[q->seq % RAIL_FIFO_SLOTS]++; /* the slot stays taken until the answer */
    s->n2ph++;
    rail_send_help_list(s);
}

/* The query: the message's size record again (same bytes), WRITE WITH IMM RAIL_IMM_QUERY. */
static int post_ask(struct rail_send_comm *s, struct rail_send_req *q)
{
    int rail = rail_pick_up(&s->base, q->unsure_rail + 1u);
    if (rail < 0)
        return 1;
    return post_record_as(
        s, q, rail, RAIL_CHUNK_ASK,
        rail_imm_query((unsigned)(q->seq % RAIL_FIFO_SLOTS), q->entry, q->unsure_rail));
}

/* Not landed: the whole message goes again, two-phase, on the rails that are up. */
static void resend_two_phase(struct rail_send_comm *s, struct rail_send_req *q)
{
    unsigned slot = (unsigned)(q->seq % RAIL_FIFO_SLOTS);
    q->kind = RAIL_SREQ_2PH;
    rail_2ph_start(&q->tp, q->too_big || q->size == 0);
    s->slot_busy[slot] = (uint16_t)(q->tp.n + 1);
    for (int k = 0; k < q->tp.n; k++) {
        rail_2ph_piece_wait(&q->tp, k);
        s->npending++;
    }
    if (q->tp.n == 0)
        record_pending(s, q);
}

static void resolve_unsure(struct rail_send_comm *s)
{
    const uint64_t *answers = (const uint64_t *)(s->fifo + RAIL_ANSWER_OFF_OF(s->cts.entry_bytes));
    for (int i = 0; i < RAIL_SEND_REQS && s->nunsure; i++) {
        struct rail_send_req *q = rail_send_req_at(s, i);
        if (!q || !q->h.ops || q->kind != RAIL_SREQ_PIPE || !q->unsure)
            continue;
        if (q->unsure == RAIL_UNSURE_WAIT) {
            if (q->wrs_left == 0 && post_ask(s, q) == 0)
                q->unsure = RAIL_UNSURE_ASKING;
            continue;
        }
        if (q->unsure != RAIL_UNSURE_ASKED) /* the query's own completion first */
            continue;
        unsigned slot = (unsigned)(q->seq % RAIL_FIFO_SLOTS);
        uint64_t ans =
            __atomic_load_n(&answers[slot * RAIL_MAX_RECVS + q->entry], __ATOMIC_ACQUIRE);
        if (!RAIL_ANSWER_IS(ans, (uint32_t)(q->seq + 1)))
            continue;
        q->unsure = 0;
        s->nunsure--;
        s->base.rejoin_hold--;
        if (RAIL_ANSWER_LANDED(ans)) {
            RAIL_INFO(NCCL_NET,
                      "send comm %p: message of slot %u landed before rail %d failed: done, "
                      "not sent again",
                      (void *)s, slot, q->unsure_rail);
            s->slot_busy[slot]--;
            s->n2ph--;
            continue;
        }
        RAIL_INFO(NCCL_NET,
                  "send comm %p: message of slot %u did not land before rail %d failed: "
                  "sent again on the rails that are up",
                  (void *)s, slot, q->unsure_rail);
        resend_two_phase(s, q);
    }
}

static void ask_done(struct rail_send_comm *s, struct rail_send_req *q, int rail,
                     const struct ibv_wc *wc)
{
    if (wc->status == IBV_WC_SUCCESS) {
        if (q->unsure == RAIL_UNSURE_ASKING)
            q->unsure = RAIL_UNSURE_ASKED;
        return;
    }
    rail_tel_error(&s->base, rail);
    if (rail_wc_rail_failure(wc->status) &&
        rail_link_fail(&s->base, rail, rail_verbs_wc_status_str(wc->status))) {
        q->unsure = RAIL_UNSURE_WAIT; /* ask again on another rail */
        return;
    }
    rail_wc_error(&s->base, rail, wc);
    if (!q->error)
        q->error = -EIO;
}

/* ---- completions ---- */

/* Out of line (rail_send_on_wc_inl's piece completion, and the general path's): always inline it
 * was 1 instruction more per two-rail message, and every completion's drain grew. */
__attribute__((noinline)) void rail_send_piece_done(struct rail_send_comm *s,
                                                    struct rail_send_req *q, int k, int rail)
{
    struct rail_send_chunk *c = &q->ch[k];
    if (q->tp.piece[k] != RAIL_CH_POSTED) /* k < q->tp.n: both callers checked it */
        return;                           /* a duplicate or late completion */
    q->tp.piece[k] = RAIL_CH_DONE;        /* rail_2ph_piece_ok without its range check */
    bool last = --q->tp.left == 0;
    s->slot_busy[q->seq % RAIL_FIFO_SLOTS]--;
    if (c->post_ns)
        rail_stripe_on_completion(&s->sched, rail, c->len, c->post_ns, rail_now_ns(), last);
    if (last)
        record_now(s, q, rail);
}

static void item_failed(struct rail_send_comm *s, struct rail_send_req *q, int k)
{
    if (k == RAIL_CHUNK_REC) {
        if (!rail_send_eager_returned(s, q) && rail_2ph_record_failed(&q->tp))
            s->npending++;
        return;
    }
    if (rail_2ph_piece_failed(&q->tp, k))
        s->npending++;
}

__attribute__((noinline)) void rail_send_on_wc_general(struct rail_send_comm *s, int rail,
                                                       const struct ibv_wc *wc)
{
    struct rail_link *l = &s->base.link[rail];
    int kind = rail_wrid_kind(wc->wr_id), idx = rail_wrid_idx(wc->wr_id);
    int k = rail_wrid_chunk(wc->wr_id);
    struct rail_send_req *q = idx < RAIL_SEND_REQS ? rail_send_req_at(s, idx) : NULL;
    if (q && !q->h.ops)
        q = NULL;

    l->qps[rail_wrid_qp(wc->wr_id)].sq_out--;
    l->cq_work--;
    if (kind != RAIL_WR_DATA && kind != RAIL_WR_LAST) {
        rail_comm_fail(&s->base, -EIO, "send comm got a completion of kind %d", kind);
        return;
    }
    if (!q)
        return;
    if (k == RAIL_CHUNK_ASK) {
        ask_done(s, q, rail, wc);
        return;
    }
    if (q->kind == RAIL_SREQ_PIPE) {
        q->wrs_left--;
        s->slot_busy[q->seq % RAIL_FIFO_SLOTS]--;
        if (wc->status != IBV_WC_SUCCESS) {
            if (s->base.failover && rail_wc_rail_failure(wc->status)) {
                rail_tel_error(&s->base, rail);
                if (rail_link_fail(&s->base, rail, rail_verbs_wc_status_str(wc->status))) {
                    mark_unsure(s, q, rail);
                    return;
                }
            }
            rail_wc_error(&s->base, rail, wc);
            if (!q->error)
                q->error = wc->status == IBV_WC_WR_FLUSH_ERR ? -EIO : -EREMOTEIO;
        }
        return;
    }
    if (k != RAIL_CHUNK_REC && k >= q->tp.n) {
        rail_comm_fail(&s->base, -EIO, "completion for piece %d of a %d-piece message", k, q->tp.n);
        return;
    }
    if (wc->status != IBV_WC_SUCCESS) {
        rail_tel_error(&s->base, rail);
        if (!rail_wc_rail_failure(wc->status) ||
            !rail_link_fail(&s->base, rail, rail_verbs_wc_status_str(wc->status))) {
            rail_wc_error(&s->base, rail, wc);
            if (!q->error)
                q->error = -EIO;
            return;
        }
        item_failed(s, q, k);
        return;
    }
    if (k != RAIL_CHUNK_REC) {
        rail_send_piece_done(s, q, k, rail);
        return;
    }
    if (rail_2ph_record_ok(&q->tp)) /* else a duplicate or late completion */
        rail_send_record_done(s, q);
}

/* The common completion on its fast path (rail_send_on_wc_inl, net_send_post.h), the rest through
 * the general one: what the comm's on_wc table entry and test_send_on_wc call. */
void rail_send_on_wc(struct rail_send_comm *s, int rail, const struct ibv_wc *wc)
{
    rail_send_on_wc_inl(s, rail, wc);
}

/* Re-posts pieces, records and eager writes whose rail failed, on rails that are up. Not inlined
 * (LTO would put it into net_send.c's send_retry, whose every call then saved and restored six
 * registers to find nothing due: 22 instructions per send poll instead of 6). */
__attribute__((noinline)) void rail_send_retry(struct rail_send_comm *s)
{
    if (s->nunsure && !atomic_load(&s->base.error))
        resolve_unsure(s);
    if (!s->npending || atomic_load(&s->base.error))
        return;
    for (int i = 0; i < RAIL_SEND_REQS && s->npending; i++) {
        struct rail_send_req *q = rail_send_req_at(s, i);
        if (!q || !q->h.ops)
            continue;
        for (int k = 0; k < q->tp.n && q->kind == RAIL_SREQ_2PH; k++) {
            struct rail_send_chunk *c = &q->ch[k];
            if (q->tp.piece[k] != RAIL_CH_PENDING)
                continue;
            int rail = rail_pick_up(&s->base, c->rail + 1u);
            if (rail < 0)
                return;
            struct rail_link *l = &s->base.link[rail];
            int qp = (int)(l->rr++ % (unsigned)s->ndata);
            if (rail_send_sq_room(l, qp) < 1)
                continue;
            c->rail = (uint8_t)rail;
            c->qp = (uint8_t)qp;
            q->striped = true; /* re-sent pieces feed the adaptive weights */
            if (post_piece(s, q, k, rail_now_ns()) < 0) /* q->striped, set above */
                return;
            if (q->tp.piece[k] == RAIL_CH_POSTED)
                s->npending--;
        }
        if (q->tp.rec != RAIL_CH_PENDING)
            continue;
        if (rail_send_eager_returned(s, q)) { /* returned by the receiver meanwhile */
            s->npending--;
            continue;
        }
        int rail = rail_pick_up(&s->base, q->rec_rail + 1u);
        if (rail < 0)
            return;
        int rc = q->kind == RAIL_SREQ_EAGER ? rail_send_post_eager_on(s, q, rail)
                                            : post_record(s, q, rail);
        if (rc < 0)
            return;
        if (rc == 0)
            s->npending--;
    }
}
