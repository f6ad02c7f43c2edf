/* SPDX-License-Identifier: Apache-2.0 */
/* Piece planning (protocol/net_pieces.c): exact cuts for chosen sizes (max message, split over
 * QPs and its 4 KiB floor, alignment, empty chunks, QP rotation, the piece cap), then thousands
 * of random chunks: pieces tile the chunk in order with no gap or overlap, none is larger than the
 * max message, all but the last have the same size, QPs rotate from qp0. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/net_pieces.h"

#define CAP 16

static int cut(int nqps, bool split, uint64_t max_chunk, int rail, uint64_t off, uint64_t len,
               unsigned qp0, struct rail_piece *out, int cap)
{
    const struct rail_piece_cfg cfg = {nqps, split, max_chunk};
    const struct rail_stripe_chunk sc = {rail, off, len};
    return rail_pieces_cut(&cfg, &sc, qp0, out, cap);
}

#define CHECK_PIECE(p, o, l, r, q)                                                                 \
    do {                                                                                           \
        CHECK_EQ_INT((p).off, o);                                                                  \
        CHECK_EQ_INT((p).len, l);                                                                  \
        CHECK_EQ_INT((p).rail, r);                                                                 \
        CHECK_EQ_INT((p).qp, q);                                                                   \
    } while (0)

static void chosen(void)
{
    struct rail_piece p[CAP];
    /* One piece when it fits, on qp0. */
    CHECK_EQ_INT(cut(1, false, 1 << 20, 0, 0, 65536, 0, p, CAP), 1);
    CHECK_PIECE(p[0], 0, 65536, 0, 0);
    /* The max message cuts: 1 MiB + 1 at 512 KiB -> 512K, 512K, 1. */
    CHECK_EQ_INT(cut(1, false, 512 << 10, 1, 4096, (1 << 20) + 1, 0, p, CAP), 3);
    CHECK_PIECE(p[0], 4096, 512 << 10, 1, 0);
    CHECK_PIECE(p[1], 4096 + (512 << 10), 512 << 10, 1, 0);
    CHECK_PIECE(p[2], 4096 + (1 << 20), 1, 1, 0);
    /* Without split_qps every piece stays on QP qp0 + k (rotation per piece). */
    CHECK_EQ_INT(cut(4, false, 1000, 0, 0, 2500, 3, p, CAP), 3);
    CHECK_PIECE(p[0], 0, 1000, 0, 3);
    CHECK_PIECE(p[1], 1000, 1000, 0, 0);
    CHECK_PIECE(p[2], 2000, 500, 0, 1);
    /* split_qps: 4 QPs, 1 MiB -> 4 x 256 KiB on QPs 2, 3, 0, 1. */
    CHECK_EQ_INT(cut(4, true, 1 << 30, 0, 0, 1 << 20, 2, p, CAP), 4);
    for (int k = 0; k < 4; k++)
        CHECK_PIECE(p[k], (uint64_t)k << 18, 1 << 18, 0, (2 + k) % 4);
    /* split_qps rounds the piece up to 128 bytes: 3 QPs, 3 x 4096 + 1 -> 4224, 4224, 3841. */
    CHECK_EQ_INT(cut(3, true, 1 << 30, 0, 0, 3 * 4096 + 1, 0, p, CAP), 3);
    CHECK_PIECE(p[0], 0, 4224, 0, 0);
    CHECK_PIECE(p[1], 4224, 4224, 0, 1);
    CHECK_PIECE(p[2], 8448, 3841, 0, 2);
    /* ...but not below 4 KiB per QP: 2 QPs, 8191 bytes stay one piece. */
    CHECK_EQ_INT(cut(2, true, 1 << 30, 0, 0, 8191, 0, p, CAP), 1);
    CHECK_PIECE(p[0], 0, 8191, 0, 0);
    CHECK_EQ_INT(cut(2, true, 1 << 30, 0, 0, 8192, 0, p, CAP), 2);
    /* The max message still caps split pieces. */
    CHECK_EQ_INT(cut(2, true, 1024, 0, 0, 8192, 0, p, CAP), 8);
    /* An empty chunk is one empty piece (a zero-byte message still writes its record after it). */
    CHECK_EQ_INT(cut(2, false, 1024, 1, 640, 0, 1, p, CAP), 1);
    CHECK_PIECE(p[0], 640, 0, 1, 1);
    /* A zero max message degrades to 1-byte pieces rather than looping. */
    CHECK_EQ_INT(cut(1, false, 0, 0, 0, 3, 0, p, CAP), 3);
    /* The cap: exactly cap pieces fit; one more is -E2BIG. */
    CHECK_EQ_INT(cut(1, false, 100, 0, 0, 1600, 0, p, 16), 16);
    CHECK_EQ_INT(cut(1, false, 100, 0, 0, 1601, 0, p, 16), -E2BIG);
    CHECK_EQ_INT(cut(1, false, 100, 0, 0, 100, 0, p, 0), -E2BIG);
}

static void random_chunks(void)
{
    uint32_t seed = 12;
    struct rail_piece p[64];
    for (int it = 0; it < 20000; it++) {
        int nqps = 1 + (int)(fuzz_step(&seed) >> 16) % 8;
        bool split = fuzz_step(&seed) >> 31;
        uint64_t max_chunk = 128 + (fuzz_step(&seed) >> 8) % (1u << 22);
        uint64_t off = ((fuzz_step(&seed) >> 8) % 4096) * RAIL_STRIPE_ALIGN;
        uint64_t len = (fuzz_step(&seed) >> 4) % (1u << 24);
        unsigned qp0 = (fuzz_step(&seed) >> 16) % (unsigned)nqps;
        int rail = (int)(fuzz_step(&seed) >> 16) % 8;
        int n = cut(nqps, split, max_chunk, rail, off, len, qp0, p, 64);
        /* The count the rules of net_pieces.h give: pieces of the split size (when split and
         * large enough), capped by the max message. */
        uint64_t piece = len;
        if (split && nqps > 1 && len / (uint64_t)nqps >= RAIL_PIECE_MIN_QP)
            piece = (len + (uint64_t)nqps - 1) / (uint64_t)nqps;
        if (piece > max_chunk)
            piece = max_chunk;
        uint64_t want = len == 0 ? 1 : (len + piece - 1) / piece;
        if (want > 64) {
            CHECK_MSG(n == -E2BIG, "%llu bytes in pieces of %llu: %d, expected -E2BIG",
                      (unsigned long long)len, (unsigned long long)piece, n);
            continue;
        }
        /* Rounding the split size up to 128 bytes may only save pieces. */
        CHECK_MSG(n >= 1 && (uint64_t)n <= want, "%llu bytes: %d pieces, at most %llu expected",
                  (unsigned long long)len, n, (unsigned long long)want);
        if (n < 1)
            continue;
        uint64_t at = off;
        bool ok = true;
        for (int k = 0; k < n; k++) {
            ok = ok && p[k].off == at && p[k].rail == rail && p[k].len <= max_chunk &&
                 p[k].qp == (int)((qp0 + (unsigned)k) % (unsigned)nqps) &&
                 (k == n - 1 || p[k].len == p[0].len) && (len == 0 || p[k].len > 0);
            at += p[k].len;
        }
        ok = ok && at == off + len;
        if (split && nqps > 1 && len / (uint64_t)nqps >= RAIL_PIECE_MIN_QP && n > 1)
            ok = ok && (p[0].len % RAIL_STRIPE_ALIGN == 0 || p[0].len == max_chunk);
        CHECK_MSG(ok, "chunk %llu+%llu, %d QPs (split %d), max %llu: %d bad pieces",
                  (unsigned long long)off, (unsigned long long)len, nqps, split,
                  (unsigned long long)max_chunk, n);
    }
}

int main(void)
{
    chosen();
    random_chunks();
    return check_report("test_net_pieces");
}
