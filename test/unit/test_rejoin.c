/* SPDX-License-Identifier: Apache-2.0 */
/* The rail failure and rejoin state machine (protocol/rejoin.c) without verbs: chosen cases
 * (failure, late completions, the last rail, the timer, each control frame in and out of turn,
 * failed rebuilds and connects), then two simulated ends of a 3-rail connection driven the way
 * net_health.c drives the core, over an in-order control channel, with seeded random port
 * flaps, completion errors, WRs that take a while to drain, rebuilds and connects that fail, a
 * control channel slower than the rejoin timer, frames that arrive out of turn (a DONE after the
 * rail failed again, a NAK or DOWN for a rail already down). After every step: up and ready are
 * never both set, a rail waiting for an ACK is neither, nup counts the rails up. Once the faults
 * stop, every rail ends up at both ends, each end's QPs connected to the other's current ones: no
 * rail is left half up, and no ACK ever connected QPs to ones the peer had already replaced. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "protocol/rejoin.h"
#include "wire/net_wire.h"

#define MS 1000000ull

static void chosen(void)
{
    struct rail_rejoin a = {0}, b = {0};
    bool carry;
    int nup = 2;
    rail_rejoin_init_up(&a);
    rail_rejoin_init_up(&b);
    CHECK(a.up && !a.ready && a.stage == RAIL_RJ_IDLE);

    /* Without failover nothing changes and the comm cannot carry on. */
    CHECK_EQ_INT(rail_rejoin_fail(&a, &nup, false, 0, &carry), 0);
    CHECK(!carry && a.up && nup == 2);
    /* A failure with another rail up: QPs to error, scheduler down, tell the peer. */
    unsigned act = rail_rejoin_fail(&a, &nup, true, 5 * MS, &carry);
    CHECK_EQ_INT(act, RAIL_RJ_DO_QPS_ERROR | RAIL_RJ_DO_SCHED_DOWN | RAIL_RJ_DO_SEND_DOWN);
    CHECK(carry && !a.up && nup == 1 && a.epoch == 1);
    CHECK_EQ_INT(a.next_try_ns, 5 * MS + RAIL_REJOIN_PERIOD_NS);
    /* A late completion of the same failure: nothing. */
    CHECK_EQ_INT(rail_rejoin_fail(&a, &nup, true, 6 * MS, &carry), 0);
    CHECK(carry && nup == 1 && a.epoch == 1);
    /* The last rail: the comm fails. */
    act = rail_rejoin_fail(&b, &nup, true, 6 * MS, &carry);
    CHECK(act & RAIL_RJ_DO_COMM_FAIL);
    CHECK(!(act & RAIL_RJ_DO_SEND_DOWN));
    CHECK(!carry && nup == 0);
    CHECK_EQ_INT(rail_rejoin_fail(&b, &nup, true, 7 * MS, &carry), 0);
    CHECK(!carry);

    /* The timer: not before next_try, not before the old WRs drained, not while up. */
    nup = 1;
    CHECK(!rail_rejoin_due(&a, 5 * MS, true));
    CHECK(!rail_rejoin_due(&a, a.next_try_ns, false));
    uint64_t t = a.next_try_ns;
    CHECK(rail_rejoin_due(&a, t, true));
    CHECK_EQ_INT(a.next_try_ns, t + RAIL_REJOIN_PERIOD_NS);
    CHECK(!rail_rejoin_due(&a, t, true)); /* once per period */
    rail_rejoin_requested(&a);
    CHECK(a.stage == RAIL_RJ_WAIT_ACK && !a.up && !a.ready);
    CHECK(!rail_rejoin_due(&a, t + 10 * RAIL_REJOIN_PERIOD_NS, true)); /* waiting for the ACK */

    /* Frames on the send side: REQ and DONE are the receive side's business. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_REQ, true, t), 0);
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_DONE, true, t), 0);
    /* NAK while waiting: idle, QPs to error, try again after the NAK pause. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_NAK, true, t), RAIL_RJ_DO_QPS_ERROR);
    CHECK(a.stage == RAIL_RJ_IDLE && a.next_try_ns == t + RAIL_REJOIN_NAK_NS);
    /* A stale NAK or ACK (not waiting): nothing. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_NAK, true, t), 0);
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_ACK, true, t), 0);
    CHECK(a.stage == RAIL_RJ_IDLE && a.next_try_ns == t + RAIL_REJOIN_NAK_NS);
    /* ACK while waiting: connect; a failed connect goes back to idle. */
    rail_rejoin_requested(&a);
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_REJOIN_ACK, true, t), RAIL_RJ_DO_CONNECT);
    CHECK_EQ_INT(rail_rejoin_connected(&a, false), RAIL_RJ_DO_QPS_ERROR);
    CHECK(a.stage == RAIL_RJ_IDLE && !a.up);
    rail_rejoin_requested(&a);
    CHECK_EQ_INT(rail_rejoin_connected(&a, true), RAIL_RJ_DO_BACK);
    rail_rejoin_back(&a, &nup);
    CHECK(a.up && !a.ready && a.stage == RAIL_RJ_IDLE && nup == 2);
    /* DOWN from the peer: fail; for a rail already down: nothing. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_DOWN, true, t), RAIL_RJ_DO_FAIL);
    (void)rail_rejoin_fail(&a, &nup, true, t, &carry);
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, RAIL_CTL_DOWN, true, t), 0);
    CHECK_EQ_INT(rail_rejoin_on_frame(&a, 99, true, t), RAIL_RJ_DO_PROTO);

    /* Receive side. */
    struct rail_rejoin r = {0};
    int rnup = 2;
    rail_rejoin_init_up(&r);
    /* A REQ for a rail still up here: fail it first, then answer. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_REQ, false, t),
                 RAIL_RJ_DO_FAIL | RAIL_RJ_DO_ANSWER);
    (void)rail_rejoin_fail(&r, &rnup, true, t, &carry);
    rail_rejoin_answered(&r, false);
    CHECK(!r.up && !r.ready);
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_REQ, false, t), RAIL_RJ_DO_ANSWER);
    rail_rejoin_answered(&r, true);
    CHECK(!r.up && r.ready);
    /* DOWN for a ready rail (the sender failed it again before DONE): fail it here too. */
    struct rail_rejoin r2 = r;
    CHECK_EQ_INT(rail_rejoin_on_frame(&r2, RAIL_CTL_DOWN, false, t), RAIL_RJ_DO_FAIL);
    /* ACK / NAK are the send side's business; a stale DONE (not ready) does nothing. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_ACK, false, t), 0);
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_NAK, false, t), 0);
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_DONE, false, t), RAIL_RJ_DO_BACK);
    rail_rejoin_back(&r, &rnup);
    CHECK(r.up && !r.ready && rnup == 2);
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_DONE, false, t), 0);
    /* A failure while ready: down, without counting a rail that was not up. */
    CHECK_EQ_INT(rail_rejoin_on_frame(&r, RAIL_CTL_REJOIN_REQ, false, t),
                 RAIL_RJ_DO_FAIL | RAIL_RJ_DO_ANSWER);
    (void)rail_rejoin_fail(&r, &rnup, true, t, &carry);
    rail_rejoin_answered(&r, true);
    CHECK(r.ready && rnup == 1);
    act = rail_rejoin_fail(&r, &rnup, true, t, &carry);
    CHECK(act & RAIL_RJ_DO_SEND_DOWN);
    CHECK(!r.ready && !r.up && rnup == 1 && carry);
}

/* ---- two simulated ends ---- */

#define NR    3
#define MAXQ  512
#define S_END 0
#define R_END 1

struct frame {
    int kind, rail, gen;
};

struct end {
    struct rail_rejoin rj[NR];
    int nup;
    int gen[NR];          /* current QPs (renewed: +1) */
    int conn[NR];         /* the peer's QPs they are connected to, -1 none */
    bool err[NR];         /* QPs in the error state */
    int pending[NR];      /* WRs of the old QPs still to complete */
    bool failed;          /* the comm failed */
    struct frame q[MAXQ]; /* frames to this end, in order */
    int qh, qn;
};

struct sim {
    uint32_t seed;
    uint64_t now;
    bool port[NR];
    bool faults; /* random faults on (rail NR - 1 never gets any) */
    bool slow;   /* the control channel lags behind the rejoin timer */
    struct end e[2];
    int bad, rejoins, nak, stale_ack, ignored;
};

static uint32_t rnd(struct sim *s, uint32_t n)
{
    return (fuzz_step(&s->seed) >> 8) % n;
}

static void send_frame(struct sim *s, int from, int kind, int rail)
{
    struct end *to = &s->e[1 - from];
    if (to->qn >= MAXQ) {
        s->bad++;
        return;
    }
    to->q[(to->qh + to->qn++) % MAXQ] = (struct frame){kind, rail, s->e[from].gen[rail]};
}

static bool drained(struct end *e, int r)
{
    return e->pending[r] == 0;
}

/* rail_link_fail */
static bool link_fail(struct sim *s, int who, int r)
{
    struct end *e = &s->e[who];
    bool carry;
    unsigned act = rail_rejoin_fail(&e->rj[r], &e->nup, true, s->now, &carry);
    if (!act)
        return carry;
    e->err[r] = true;
    e->pending[r] = (int)rnd(s, 4);
    if (act & RAIL_RJ_DO_COMM_FAIL) {
        e->failed = true;
        return false;
    }
    if (act & RAIL_RJ_DO_SEND_DOWN)
        send_frame(s, who, RAIL_CTL_DOWN, r);
    return true;
}

static void renew(struct sim *s, struct end *e, int r)
{
    (void)s;
    e->gen[r]++;
    e->conn[r] = -1;
    e->err[r] = false;
}

/* try_rejoin (send side) */
static void try_rejoin(struct sim *s, int r)
{
    struct end *e = &s->e[S_END];
    if (!rail_rejoin_due(&e->rj[r], s->now, drained(e, r)))
        return;
    if (!s->port[r])
        return;
    if (s->faults && rnd(s, 10) == 0)
        return; /* rebuilding the QPs failed: WARN, next period */
    renew(s, e, r);
    rail_rejoin_requested(&e->rj[r]);
    send_frame(s, S_END, RAIL_CTL_REJOIN_REQ, r);
}

static void on_frame(struct sim *s, int who, struct frame f)
{
    struct end *e = &s->e[who];
    int r = f.rail;
    bool was_waiting = e->rj[r].stage == RAIL_RJ_WAIT_ACK;
    unsigned act = rail_rejoin_on_frame(&e->rj[r], f.kind, who == S_END, s->now);
    s->ignored += act == 0;
    if (act & RAIL_RJ_DO_PROTO) {
        s->bad++;
        return;
    }
    if (act & RAIL_RJ_DO_FAIL)
        link_fail(s, who, r);
    if (act & RAIL_RJ_DO_ANSWER) {
        if (!drained(e, r) || !s->port[r]) {
            send_frame(s, who, RAIL_CTL_REJOIN_NAK, r);
            s->nak++;
        } else {
            bool ok = !(s->faults && rnd(s, 10) == 0);
            renew(s, e, r);
            if (ok)
                e->conn[r] = f.gen;
            rail_rejoin_answered(&e->rj[r], ok);
            if (!ok) {
                e->err[r] = true;
                send_frame(s, who, RAIL_CTL_REJOIN_NAK, r);
            } else {
                send_frame(s, who, RAIL_CTL_REJOIN_ACK, r);
            }
        }
    }
    if (act & RAIL_RJ_DO_CONNECT) {
        if (f.gen != s->e[1 - who].gen[r])
            s->stale_ack++; /* the answer to an older REQ: connects to superseded QPs */
        bool ok = !(s->faults && rnd(s, 10) == 0);
        if (ok)
            e->conn[r] = f.gen;
        if (rail_rejoin_connected(&e->rj[r], ok) & RAIL_RJ_DO_QPS_ERROR) {
            e->err[r] = true;
        } else {
            rail_rejoin_back(&e->rj[r], &e->nup);
            send_frame(s, who, RAIL_CTL_REJOIN_DONE, r);
            s->rejoins++;
        }
    } else if (f.kind == RAIL_CTL_REJOIN_ACK && who == S_END && was_waiting) {
        s->bad++; /* an ACK while waiting must connect */
    }
    if (act & RAIL_RJ_DO_QPS_ERROR)
        e->err[r] = true;
    if (act & RAIL_RJ_DO_BACK)
        rail_rejoin_back(&e->rj[r], &e->nup);
}

/* Whether rail r works end to end right now. */
static bool works(const struct sim *s, int r)
{
    const struct end *a = &s->e[S_END], *b = &s->e[R_END];
    return s->port[r] && !a->err[r] && !b->err[r] && a->conn[r] == b->gen[r] &&
           b->conn[r] == a->gen[r];
}

static void check_end(struct sim *s, int who)
{
    struct end *e = &s->e[who];
    int n = 0;
    for (int r = 0; r < NR; r++) {
        const struct rail_rejoin *rj = &e->rj[r];
        n += rj->up;
        bool ok = !(rj->up && rj->ready) &&
                  (rj->stage == RAIL_RJ_IDLE || (!rj->up && !rj->ready && who == S_END)) &&
                  (!rj->ready || who == R_END);
        if (!ok) {
            fprintf(stderr, "end %d rail %d: up %d ready %d stage %d\n", who, r, rj->up, rj->ready,
                    rj->stage);
            s->bad++;
        }
    }
    if (n != e->nup) {
        fprintf(stderr, "end %d: nup %d but %d rails up\n", who, e->nup, n);
        s->bad++;
    }
}

static void step(struct sim *s)
{
    s->now += rnd(s, 300) * MS;
    if (s->faults) {
        int r = (int)rnd(s, NR - 1); /* rail NR - 1 stays healthy: the comm never dies */
        uint32_t k = rnd(s, 40);
        if (k == 0)
            s->port[r] = !s->port[r];
        else if (k == 1 && s->e[k & 1].rj[r].up)
            link_fail(s, (int)rnd(s, 2), r); /* a completion error on that rail */
    }
    for (int who = 0; who < 2; who++) {
        struct end *e = &s->e[who];
        for (int r = 0; r < NR; r++) {
            if (e->pending[r] && rnd(s, 3) == 0)
                e->pending[r]--;
            /* rails_poll (net_health.c): the port went down */
            if ((e->rj[r].up || e->rj[r].ready) && !s->port[r])
                link_fail(s, who, r);
            /* A rail used while it does not work end to end: its writes fail. */
            if (e->rj[r].up && !works(s, r) && rnd(s, 3) == 0)
                link_fail(s, who, r);
        }
        for (int k = s->slow ? rnd(s, 8) == 0 : (int)rnd(s, 3); k > 0 && e->qn; k--) {
            struct frame f = e->q[e->qh];
            e->qh = (e->qh + 1) % MAXQ;
            e->qn--;
            on_frame(s, who, f);
        }
    }
    if (s->e[S_END].nup != NR)
        for (int r = 0; r < NR; r++)
            if (!s->e[S_END].rj[r].up)
                try_rejoin(s, r);
    check_end(s, S_END);
    check_end(s, R_END);
}

static bool settled(const struct sim *s)
{
    for (int r = 0; r < NR; r++)
        if (!s->e[S_END].rj[r].up || !s->e[R_END].rj[r].up || !works(s, r))
            return false;
    return s->e[S_END].qn == 0 && s->e[R_END].qn == 0;
}

static void run(uint32_t seed)
{
    static struct sim sim; /* large: not on the stack */
    struct sim *s = &sim;
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    s->now = 1000 * MS;
    for (int r = 0; r < NR; r++) {
        s->port[r] = true;
        for (int who = 0; who < 2; who++) {
            rail_rejoin_init_up(&s->e[who].rj[r]);
            s->e[who].conn[r] = 0;
        }
    }
    s->e[S_END].nup = s->e[R_END].nup = NR;
    s->faults = true;
    s->slow = seed & 1;
    for (int i = 0; i < 20000 && !s->bad; i++)
        step(s);
    /* The faults stop: every rail must come back at both ends, connected to each other. */
    s->faults = false;
    for (int r = 0; r < NR; r++)
        s->port[r] = true;
    int i = 0;
    while (!settled(s) && i < 5000 && !s->bad && !s->e[0].failed && !s->e[1].failed) {
        step(s);
        i++;
    }
    CHECK_MSG(s->bad == 0 && !s->e[0].failed && !s->e[1].failed,
              "seed %u: %d violation(s), comm failed %d/%d", seed, s->bad, s->e[0].failed,
              s->e[1].failed);
    /* One REQ outstanding per rail and an in-order channel: an ACK never names QPs that its
     * sender has replaced since (frames need no epoch for that). */
    CHECK_MSG(s->stale_ack == 0, "seed %u: %d ACKs connected to superseded QPs", seed,
              s->stale_ack);
    CHECK_MSG(settled(s), "seed %u: not every rail back at both ends after %d quiet steps", seed,
              i);
    CHECK_MSG(s->rejoins > 20 && s->nak > 0 && s->ignored > 0,
              "seed %u: only %d rejoins, %d NAKs, %d ignored frames exercised", seed, s->rejoins,
              s->nak, s->ignored);
    printf("seed %u%s: %d rejoins, %d NAKs, %d frames out of turn ignored, %d stale ACKs, settled "
           "after %d quiet steps\n",
           seed, s->slow ? " (slow channel)" : "", s->rejoins, s->nak, s->ignored, s->stale_ack, i);
    if (!settled(s))
        for (int r = 0; r < NR; r++)
            fprintf(stderr,
                    "  rail %d: S up %d stage %d gen %d conn %d err %d | R up %d ready %d gen %d "
                    "conn %d err %d\n",
                    r, s->e[0].rj[r].up, s->e[0].rj[r].stage, s->e[0].gen[r], s->e[0].conn[r],
                    s->e[0].err[r], s->e[1].rj[r].up, s->e[1].rj[r].ready, s->e[1].gen[r],
                    s->e[1].conn[r], s->e[1].err[r]);
}

int main(void)
{
    chosen();
    fuzz_seeds(run, 20, 40503u);
    return check_report("test_rejoin");
}
