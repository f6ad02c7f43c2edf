/* SPDX-License-Identifier: Apache-2.0 */
/* The rail failure and rejoin state machine of one rail of a connection (pure: no verbs, no I/O,
 * no clock read; time is passed in). net_health.c feeds it events (a local failure, the
 * rejoin timer, control frames from the peer) and carries out the actions it returns (move QPs to
 * the error state, rebuild and connect them, send a frame, update the stripe scheduler and the
 * telemetry), reporting back the outcome of the ones that can fail.
 *
 * States of a rail: UP (up: carries new work), DOWN (neither up nor ready; the send side may be
 * WAITING for the peer's answer to its REJOIN_REQ), and, on the receive side, READY (new QPs
 * connected and receives posted, waiting for REJOIN_DONE before its own writes use the rail).
 * The send side drives: DOWN -> (timer, drained, port ACTIVE, QPs rebuilt) WAITING -> (ACK,
 * connected) UP; the receive side answers: DOWN -> (REQ, drained, port ACTIVE, connected) READY
 * -> (DONE) UP. Any failure (or the peer's DOWN, or a REQ for a rail the receive side still uses)
 * takes a rail to DOWN and bumps its epoch. Invariants: up and ready are never both set; a rail
 * waiting for an ACK is neither; nup counts the rails that are up; a frame that does not fit the
 * rail's state (an ACK or NAK when not waiting, a DONE when not ready) changes nothing.
 * Frames carry no epoch on the wire: a frame is judged stale by the rail's state only, which is
 * enough because the send side has at most one REQ outstanding per rail (a failure while it
 * waits changes nothing: the rail is already down) and the control channel is in order, so an
 * ACK always answers the current REQ. */
#ifndef NCCL_RAIL_REJOIN_H
#define NCCL_RAIL_REJOIN_H

#include <stdbool.h>
#include <stdint.h>

#define RAIL_REJOIN_PERIOD_NS 200000000ull  /* between rejoin attempts of a rail */
#define RAIL_REJOIN_NAK_NS    1000000000ull /* after the peer said "not now" */

enum { RAIL_RJ_IDLE = 0, RAIL_RJ_WAIT_ACK };

struct rail_rejoin {
    bool up;        /* carries new work; false after a failure until it rejoins */
    bool ready;     /* receive side of a rejoin: QPs connected, peer not yet confirmed */
    int stage;      /* send side: RAIL_RJ_IDLE or RAIL_RJ_WAIT_ACK */
    uint32_t epoch; /* bumped at each failure */
    uint64_t next_try_ns;
};

/* What the caller does, in this order (a bit set of these). */
enum {
    RAIL_RJ_DO_FAIL = 1 << 0,       /* a frame: fail the rail first (rail_rejoin_fail) */
    RAIL_RJ_DO_QPS_ERROR = 1 << 1,  /* move the rail's QPs to the error state */
    RAIL_RJ_DO_SCHED_DOWN = 1 << 2, /* stripe scheduler: rail down; telemetry: a failover */
    RAIL_RJ_DO_COMM_FAIL = 1 << 3,  /* it was the last rail up: the comm fails */
    RAIL_RJ_DO_SEND_DOWN = 1 << 4,  /* WARN once and tell the peer (DOWN frame) */
    RAIL_RJ_DO_ANSWER = 1 << 5,     /* receive side: answer the REQ (rail_rejoin_answered) */
    RAIL_RJ_DO_CONNECT = 1 << 6, /* send side: connect to the ACK's QPs (rail_rejoin_connected) */
    RAIL_RJ_DO_BACK = 1 << 7,    /* the rail is up again: scheduler up, telemetry, INFO */
    RAIL_RJ_DO_PROTO = 1 << 8,   /* unknown frame kind: the comm fails */
};

void rail_rejoin_init_up(struct rail_rejoin *rj);

/* The rail failed (a completion error, a refused post, its port went down, the peer's word).
 * Returns the actions; *carry_on says whether the comm goes on (false: without failover, or it
 * was the last rail up). A rail already down changes nothing (a late completion of the same
 * failure). */
unsigned rail_rejoin_fail(struct rail_rejoin *rj, int *nup, bool failover, uint64_t now,
                          bool *carry_on);

/* Send side, from the periodic poll: true when a rejoin should start now (idle, its time has
 * come, every WR of the old QPs completed); the next attempt is then scheduled a period later.
 * The caller checks the port next, rebuilds the QPs and, when that worked, calls
 * rail_rejoin_requested and sends REJOIN_REQ. */
bool rail_rejoin_due(struct rail_rejoin *rj, uint64_t now, bool drained);
void rail_rejoin_requested(struct rail_rejoin *rj);

/* A control frame of kind RAIL_CTL_* for this rail from the peer; `sender`: this end drives
 * rejoins. Returns the actions (RAIL_RJ_DO_FAIL first when set). */
unsigned rail_rejoin_on_frame(struct rail_rejoin *rj, int kind, bool sender, uint64_t now);

/* Receive side, RAIL_RJ_DO_ANSWER (the rail is down here by then): when the old QPs have drained
 * and the port is ACTIVE the caller rebuilds, connects and posts receives, and gives the outcome:
 * ok -> READY (send ACK); not ok -> QPs to error (send NAK). Otherwise it sends NAK at once. */
void rail_rejoin_answered(struct rail_rejoin *rj, bool ok);

/* Send side, RAIL_RJ_DO_CONNECT: the outcome of connecting to the ACK's QPs. ok: returns
 * RAIL_RJ_DO_BACK (then send REJOIN_DONE); not ok: idle again, returns RAIL_RJ_DO_QPS_ERROR. */
unsigned rail_rejoin_connected(struct rail_rejoin *rj, bool ok);

/* RAIL_RJ_DO_BACK: the rail is up again (READY or WAITING -> UP). */
void rail_rejoin_back(struct rail_rejoin *rj, int *nup);

#endif
