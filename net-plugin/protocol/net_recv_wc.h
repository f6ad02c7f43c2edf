/* SPDX-License-Identifier: Apache-2.0 */
/* The receive comm's in-place completion paths for the usual completion of a striped (two-phase)
 * message: its size record (net_recv.c's recv_on_wc takes every other completion). */
#ifndef NCCL_RAIL_NET_RECV_WC_H
#define NCCL_RAIL_NET_RECV_WC_H

#include <arpa/inet.h>
#include <stdbool.h>

#include "protocol/net_comm.h"
#include "protocol/net_qsize.h"
#include "transport/net_verbs.h"
#include "wire/net_wire.h"

/* What both in-place receive completions (this record and net_recv.c's recv_on_data) need of a
 * successful receive WR's completion: its rail up, no batch re-post due, the owing QP (at) the
 * same, an RDMA write with an immediate. */
static inline __attribute__((always_inline)) bool
rail_recv_wc_lean_ok(const struct rail_recv_comm *r, const struct rail_link *l, int qp, int at,
                     const struct ibv_wc *wc)
{
    return l->rj.up && l->qps[qp].rq_owed + 1 < RAIL_REPOST_BATCH &&
           (!r->owes || r->owes_at == at) && wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
           (wc->wc_flags & IBV_WC_WITH_IMM);
}

/* The receive WR it consumed, owed by QP at (posted again by the next rail_recv_repost_owed). */
static inline __attribute__((always_inline)) void
rail_recv_wc_owe(struct rail_recv_comm *r, struct rail_link *l, int qp, int at)
{
    l->qps[qp].rq_posted--;
    l->qps[qp].rq_owed++;
    r->owes = true;
    r->owes_at = at;
}

/* A successful receive WR's completion (the caller checked status and kind) that is a size
 * record (immediate: bits 9..31 clear, slot and entry below) for an entry of the receive that
 * holds the slot, not done yet, the record's seq the slot's and its entry this one, its size
 * within the buffer; on a rail that is up, with no batch re-post due and the owing QP unchanged.
 * Taken here with exactly recv_on_wc_any's effects (the receive WR counted as owed, the entry
 * done with the record's size; on_record's failover drop test passes for such a record, so the
 * same with failover or without): true. false, changing nothing, for everything else.
 * test_recv_record compares the two over many states. */
static inline __attribute__((always_inline)) bool
rail_recv_record_lean(struct rail_recv_comm *r, int rail, const struct ibv_wc *wc)
{
    int qp = rail_wrid_qp(wc->wr_id), at = rail * RAIL_MAX_QPS + qp;
    struct rail_link *l = &r->base.link[rail];
    uint32_t imm = ntohl(wc->imm_data);
    if (!rail_recv_wc_lean_ok(r, l, qp, at, wc) || imm >> 9)
        return false;
    unsigned slot = imm >> 3, entry = imm & 7u; /* slot < 64 = RAIL_FIFO_SLOTS */
    struct rail_recv_req *q = r->fifo.by_slot[slot];
    if (!q || (int)entry >= q->n || q->e[entry].done)
        return false;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const struct rail_record *rec =
        (const struct rail_record *)(r->records +
                                     ((size_t)slot * RAIL_MAX_RECVS + entry) * RAIL_RECORD_BYTES);
    uint64_t size = rec->size;
    struct rail_recv_entry *e = &q->e[entry];
    if (rec->seq != (uint32_t)(q->slot_seq + 1) || rec->entry != entry ||
        size == RAIL_RECORD_TOO_BIG || size > e->cap)
        return false;
    rail_recv_wc_owe(r, l, qp, at);
    e->size = size;
    e->done = true;
    q->left--;
    return true;
}

#endif
