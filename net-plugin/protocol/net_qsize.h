/* SPDX-License-Identifier: Apache-2.0 */
/* Work-request sizing of a connection's queues (net_qsize.c): how many send and receive WRs each
 * QP of a rail holds, its CQ with them, and the device's limits applied. Pure: no verbs. */
#ifndef NCCL_RAIL_NET_QSIZE_H
#define NCCL_RAIL_NET_QSIZE_H

#include "wire/net_wire.h"

#define RAIL_RECV_RQ 288 /* receive WRs per QP on the receiving side, for an older sender */
/* Receive WRs are posted again in batches off the completing call; the receiving side's RQs
 * have this many spare entries for what is owed (net_recv.c, repost_owed). */
#define RAIL_REPOST_BATCH 32

/* What a send comm's control QP carries at once (one per rail of a multi-rail send comm, the
 * last QP of the rail): eager writes, at most one per bounce slot a receiver can announce
 * (RAIL_EAGER_SLOTS: a slot is not written again before its write completed), and the size
 * records and queries of two-phase messages, RAIL_CTL_RECORDS of them (a record is posted once
 * its message's pieces completed and is acknowledged one round trip later). A record or eager
 * write that finds the queue full waits for a completion (net_send_post.c, net_send_eager.c:
 * every post checks the room first), so this is a depth that makes waiting rare, not a bound
 * that could be exceeded. 16 + 15 = 31: providers that round entries + 1 up to a power of two
 * (rdma_rxe) keep 32 slots. */
#define RAIL_CTL_RECORDS 15

/* Send WRs of the receive side's QP facing a control QP. The receive side's writes (a
 * clear-to-send per receive in flight, at most RAIL_RECV_REQS, the eager credit, answers to
 * queries) rotate over the rail's QPs and wait when the next one is full, so with a data QP
 * beside it this one carries at most every other write: half of RAIL_RECV_SQ (net_comm.h) keeps
 * the rail's room for them as on one QP. 31: rdma_rxe keeps 32 slots. */
#define RAIL_RECV_CTL_SQ 31

/* The work requests of one rail's QPs. The first nqps - has_ctl QPs are data QPs of sq send and
 * rq receive WRs with inl bytes of inline data asked; with has_ctl the last one is the control
 * QP (send side) or its peer (receive side), sized ctl_sq / ctl_rq / ctl_inl. */
struct rail_qshape {
    int nqps;
    int sq, rq, inl;
    int has_ctl;
    int ctl_sq, ctl_rq, ctl_inl;
};

/* Send WRs of a send comm's control QP: RAIL_EAGER_SLOTS + RAIL_CTL_RECORDS, never more than
 * the data QPs' send_depth (NCCL_RAIL_SEND_QUEUE_DEPTH). */
int rail_qsize_ctl_send(int send_depth);

/* Receive WRs a receive comm posts on a QP whose sending peer keeps at most `depth` WRs in flight
 * (0: not announced, a sender older than wire version 6: RAIL_RECV_RQ), plus RAIL_REPOST_BATCH
 * spare ones for those consumed and not yet posted again. */
int rail_qsize_recv_rq(int depth);

/* Applies a device's limits to s (max_qp_wr: WRs per queue; max_cqe: entries of the rail's one
 * CQ; <= 0: no limit): every queue at most max_qp_wr, and when the QPs' WRs together exceed
 * max_cqe each QP gets at most max_cqe / nqps of them (receives at most half). Returns the CQ
 * entries, which hold every send and receive WR of every QP at once (a CQ never overflows), or
 * -E2BIG when fewer than 16 a QP would remain. */
int rail_qshape_fit(struct rail_qshape *s, int max_qp_wr, int max_cqe);

#endif
