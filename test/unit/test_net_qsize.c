/* SPDX-License-Identifier: Apache-2.0 */
/* Queue sizing of a connection (protocol/net_qsize.c), without verbs. The control QP of a
 * multi-rail send comm holds an eager write for every bounce slot a receiver can announce and
 * records beside them, never more than a data QP; the receive side's QP facing it holds every
 * write with immediate that QP keeps in flight plus the spare ones for a batch owed; one rail's
 * CQ holds every send and receive WR of all its QPs at once, whatever limits the device has
 * (chosen shapes, then seeded random shapes and limits). A CQ sized below its QPs' WRs could
 * overflow (IBV_WC_... lost completions, the QP in error); a queue above max_qp_wr is refused
 * by the device. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "protocol/net_qsize.h"

/* The WRs of s's QPs together, as rail_link_create creates them. */
static long wrs_of(const struct rail_qshape *s)
{
    long n = 0;
    for (int q = 0; q < s->nqps; q++) {
        bool ctl = s->has_ctl && q == s->nqps - 1;
        n += ctl ? s->ctl_sq + s->ctl_rq : s->sq + s->rq;
    }
    return n;
}

static void depths(void)
{
    int ctl = rail_qsize_ctl_send(126); /* NCCL_RAIL_SEND_QUEUE_DEPTH's default */
    CHECK_EQ_INT(ctl, 31);
    /* Every bounce slot's eager write and records beside them. */
    CHECK(ctl >= RAIL_EAGER_SLOTS + 1);
    CHECK_EQ_INT((ctl + 1) & ctl, 0);          /* entries + 1 a power of two: rxe keeps 32 slots */
    CHECK_EQ_INT(rail_qsize_ctl_send(32), 31); /* the knob's smallest value */
    CHECK_EQ_INT(rail_qsize_ctl_send(20), 20); /* never more than a data QP */
    CHECK_EQ_INT(rail_qsize_ctl_send(4096), 31);

    CHECK_EQ_INT(rail_qsize_recv_rq(0), RAIL_RECV_RQ + RAIL_REPOST_BATCH); /* older sender */
    CHECK_EQ_INT(rail_qsize_recv_rq(126), 158);
    CHECK_EQ_INT(rail_qsize_recv_rq(4096), RAIL_RECV_RQ + RAIL_REPOST_BATCH);
    /* The QP facing the control QP: everything it keeps in flight, plus a batch owed. */
    CHECK_EQ_INT(rail_qsize_recv_rq(ctl), 63);
    CHECK(rail_qsize_recv_rq(ctl) >= ctl + RAIL_REPOST_BATCH);
    CHECK(RAIL_RECV_CTL_SQ >= 1 && RAIL_RECV_CTL_SQ <= 63);
}

static void chosen(void)
{
    /* The send side of a two-rail comm: one data QP, the control QP. */
    struct rail_qshape s = {.nqps = 2,
                            .sq = 126,
                            .rq = 1,
                            .inl = 0,
                            .has_ctl = 1,
                            .ctl_sq = 31,
                            .ctl_rq = 1,
                            .ctl_inl = 256};
    CHECK_EQ_INT(rail_qshape_fit(&s, 0, 0), 127 + 32);
    CHECK_EQ_INT(s.sq, 126);
    CHECK_EQ_INT(s.ctl_sq, 31);
    /* Its receive side. */
    struct rail_qshape r = {
        .nqps = 2, .sq = 63, .rq = 158, .has_ctl = 1, .ctl_sq = 31, .ctl_rq = 63};
    CHECK_EQ_INT(rail_qshape_fit(&r, 0, 0), 221 + 94);
    /* One rail, four data QPs, no control QP: as before this sizing existed. */
    struct rail_qshape one = {.nqps = 4, .sq = 126, .rq = 1, .inl = 256};
    CHECK_EQ_INT(rail_qshape_fit(&one, 0, 0), 4 * 127);
    /* A device with small queues: every queue capped, the CQ follows. */
    struct rail_qshape capped = r;
    CHECK_EQ_INT(rail_qshape_fit(&capped, 40, 0), 40 + 40 + 31 + 40);
    CHECK_EQ_INT(capped.rq, 40);
    CHECK_EQ_INT(capped.ctl_rq, 40);
    /* A small CQ: each QP gets its share, receives at most half of it. */
    struct rail_qshape small = r;
    int cqe = rail_qshape_fit(&small, 0, 200);
    CHECK(cqe > 0 && cqe <= 200);
    CHECK_EQ_INT(cqe, wrs_of(&small));
    CHECK(small.rq <= 50 && small.sq + small.rq <= 100);
    /* Too small for 16 WRs a QP: refused, not a CQ that overflows. */
    struct rail_qshape tiny = r;
    CHECK_EQ_INT(rail_qshape_fit(&tiny, 0, 31), -E2BIG);
    struct rail_qshape bad = {.nqps = 1, .sq = 8, .rq = 8, .has_ctl = 1, .ctl_sq = 8, .ctl_rq = 8};
    CHECK_EQ_INT(rail_qshape_fit(&bad, 0, 0), -EINVAL); /* a control QP needs a data QP */
}

static void random_shapes(void)
{
    srand(2027);
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        struct rail_qshape s = {
            .nqps = 1 + rand() % 8, .sq = 1 + rand() % 600, .rq = 1 + rand() % 600};
        s.has_ctl = s.nqps > 1 && rand() % 2;
        s.ctl_sq = 1 + rand() % 100;
        s.ctl_rq = 1 + rand() % 200;
        int max_qp_wr = rand() % 3 ? 0 : 1 + rand() % 512;
        int max_cqe = rand() % 2 ? 0 : 16 + rand() % 4000;
        struct rail_qshape in = s;
        int cqe = rail_qshape_fit(&s, max_qp_wr, max_cqe);
        if (cqe == -E2BIG) {
            bad += max_cqe == 0 || max_cqe / in.nqps >= 16;
            continue;
        }
        bool ok = cqe > 0 && cqe == wrs_of(&s) && (max_cqe == 0 || cqe <= max_cqe);
        int q[4] = {s.sq, s.rq, s.ctl_sq, s.ctl_rq}, was[4] = {in.sq, in.rq, in.ctl_sq, in.ctl_rq};
        for (int k = 0; k < (s.has_ctl ? 4 : 2); k++) /* the control QP's only when there is one */
            ok = ok && q[k] >= 1 && q[k] <= was[k] && (max_qp_wr == 0 || q[k] <= max_qp_wr);
        if (max_cqe == 0 || wrs_of(&in) <= max_cqe)
            ok = ok && (max_qp_wr > 0 || (s.sq == in.sq && s.rq == in.rq && s.ctl_sq == in.ctl_sq &&
                                          s.ctl_rq == in.ctl_rq));
        if (!ok && bad++ < 3)
            fprintf(stderr,
                    "shape %d QPs%s sq %d rq %d ctl %d/%d, limits %d/%d: cqe %d, sq %d rq %d ctl "
                    "%d/%d\n",
                    in.nqps, in.has_ctl ? " (control)" : "", in.sq, in.rq, in.ctl_sq, in.ctl_rq,
                    max_qp_wr, max_cqe, cqe, s.sq, s.rq, s.ctl_sq, s.ctl_rq);
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    depths();
    chosen();
    random_shapes();
    return check_report("test_net_qsize");
}
