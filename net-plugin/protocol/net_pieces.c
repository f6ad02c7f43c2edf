/* SPDX-License-Identifier: Apache-2.0 */
#include "protocol/net_pieces.h"

#include <errno.h>

int rail_pieces_cut(const struct rail_piece_cfg *cfg, const struct rail_stripe_chunk *sc,
                    unsigned qp0, struct rail_piece *out, int cap)
{
    int n = 0, nq = cfg->split_qps ? cfg->nqps : 1;
    uint64_t len = sc->length, piece = len;
    if (nq > 1 && len / (uint64_t)nq >= RAIL_PIECE_MIN_QP)
        piece = ((len + (uint64_t)nq - 1) / (uint64_t)nq + RAIL_STRIPE_ALIGN - 1) &
                ~(uint64_t)(RAIL_STRIPE_ALIGN - 1);
    if (piece > cfg->max_chunk)
        piece = cfg->max_chunk;
    if (piece == 0)
        piece = 1;
    for (uint64_t off = 0, k = 0; off < len || (len == 0 && k == 0); off += piece, k++) {
        if (n == cap)
            return -E2BIG;
        struct rail_piece *p = &out[n++];
        p->off = sc->offset + off;
        p->len = len - off < piece ? len - off : piece;
        p->rail = sc->rail;
        p->qp = (int)((qp0 + (unsigned)k) % (unsigned)cfg->nqps);
        if (len == 0)
            break;
    }
    return n;
}

bool rail_ar_enabled(long long setting, bool all_ib)
{
    return setting == -2 ? all_ib : setting != 0;
}

bool rail_ar_imm_data_ok(bool ar, uint64_t threshold, uint64_t nbytes)
{
    return !ar || nbytes <= threshold;
}

int rail_qp_tc(bool receiver, bool roce, long long fifo_tc, int tc)
{
    return receiver && roce && fifo_tc >= 0 ? (int)fifo_tc : tc;
}
