/* SPDX-License-Identifier: Apache-2.0 */
/* Piece planning (pure: no verbs, no I/O): how one stripe chunk of a message (rails/stripe.h) is
 * cut into the pieces that single RDMA writes carry, and which QP of the rail each piece takes.
 * The send data path (net_send_post.c) posts one write per piece. */
#ifndef NCCL_RAIL_NET_PIECES_H
#define NCCL_RAIL_NET_PIECES_H

#include <stdbool.h>
#include <stdint.h>

#include "rails/stripe.h"

#define RAIL_PIECE_MIN_QP 4096 /* NCCL_IB_SPLIT_DATA_ON_QPS does not cut pieces below this */

struct rail_piece_cfg {
    int nqps;           /* QPs per rail (>= 1) */
    bool split_qps;     /* NCCL_IB_SPLIT_DATA_ON_QPS: spread one chunk over the rail's QPs */
    uint64_t max_chunk; /* largest write: the smallest max message over the rails */
};

struct rail_piece {
    uint64_t off, len; /* within the message */
    int rail, qp;
};

/* Cuts chunk `sc` into out[0..n): consecutive pieces tiling [sc->offset, sc->offset +
 * sc->length) in order, each at most max_chunk bytes (with split_qps and a chunk of at least
 * nqps x RAIL_PIECE_MIN_QP bytes, about length / nqps rounded up to RAIL_STRIPE_ALIGN), on QPs
 * qp0, qp0 + 1, ... modulo nqps. An empty chunk is one empty piece. Returns n, or -E2BIG when
 * more than cap pieces would result (out is then partly written). */
int rail_pieces_cut(const struct rail_piece_cfg *cfg, const struct rail_stripe_chunk *sc,
                    unsigned qp0, struct rail_piece *out, int cap);

/* NCCL_IB_ADAPTIVE_ROUTING for a device whose ports all have the InfiniBand link layer (all_ib)
 * or not: -2 (auto) is on for InfiniBand only, 0 off, any other value on. Pure. */
bool rail_ar_enabled(long long setting, bool all_ib);
/* Whether a message of nbytes may carry its data in a write with immediate: not above the
 * threshold when adaptive routing is on. Pure. */
bool rail_ar_imm_data_ok(bool ar, uint64_t threshold, uint64_t nbytes);
/* Traffic class of a QP: NCCL_IB_FIFO_TC (fifo_tc >= 0) on a RoCE receiver's QPs, which carry
 * the clear-to-send writes, else tc. Pure. */
int rail_qp_tc(bool receiver, bool roce, long long fifo_tc, int tc);

#endif
