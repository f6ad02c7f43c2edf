/* SPDX-License-Identifier: Apache-2.0 */
/* The rail failure and rejoin state machine (rejoin.h). */
#include "protocol/rejoin.h"

#include "wire/net_wire.h"

void rail_rejoin_init_up(struct rail_rejoin *rj)
{
    rj->up = true;
    rj->ready = false;
    rj->stage = RAIL_RJ_IDLE;
    rj->next_try_ns = 0;
}

unsigned rail_rejoin_fail(struct rail_rejoin *rj, int *nup, bool failover, uint64_t now,
                          bool *carry_on)
{
    if (!failover) {
        *carry_on = false;
        return 0;
    }
    if (!rj->up && !rj->ready) {
        *carry_on = *nup > 0; /* already down: a late completion of the same failure */
        return 0;
    }
    bool was_up = rj->up;
    rj->up = rj->ready = false;
    rj->stage = RAIL_RJ_IDLE;
    rj->epoch++;
    rj->next_try_ns = now + RAIL_REJOIN_PERIOD_NS;
    if (was_up)
        (*nup)--;
    *carry_on = *nup > 0;
    return RAIL_RJ_DO_QPS_ERROR | RAIL_RJ_DO_SCHED_DOWN |
           (*nup == 0 ? RAIL_RJ_DO_COMM_FAIL : RAIL_RJ_DO_SEND_DOWN);
}

bool rail_rejoin_due(struct rail_rejoin *rj, uint64_t now, bool drained)
{
    if (rj->up || rj->stage != RAIL_RJ_IDLE || now < rj->next_try_ns || !drained)
        return false;
    rj->next_try_ns = now + RAIL_REJOIN_PERIOD_NS;
    return true;
}

void rail_rejoin_requested(struct rail_rejoin *rj)
{
    rj->stage = RAIL_RJ_WAIT_ACK;
}

unsigned rail_rejoin_on_frame(struct rail_rejoin *rj, int kind, bool sender, uint64_t now)
{
    switch (kind) {
    case RAIL_CTL_DOWN:
        return rj->up || rj->ready ? RAIL_RJ_DO_FAIL : 0;
    case RAIL_CTL_REJOIN_REQ:
        if (sender)
            return 0;
        /* it failed on the other side only: fail it here too, then rejoin */
        return (rj->up || rj->ready ? RAIL_RJ_DO_FAIL : 0) | RAIL_RJ_DO_ANSWER;
    case RAIL_CTL_REJOIN_ACK:
        return sender && rj->stage == RAIL_RJ_WAIT_ACK ? RAIL_RJ_DO_CONNECT : 0;
    case RAIL_CTL_REJOIN_NAK:
        if (!sender || rj->stage != RAIL_RJ_WAIT_ACK)
            return 0;
        rj->stage = RAIL_RJ_IDLE;
        rj->next_try_ns = now + RAIL_REJOIN_NAK_NS;
        return RAIL_RJ_DO_QPS_ERROR;
    case RAIL_CTL_REJOIN_DONE:
        if (sender || !rj->ready)
            return 0;
        return RAIL_RJ_DO_BACK;
    }
    return RAIL_RJ_DO_PROTO;
}

void rail_rejoin_answered(struct rail_rejoin *rj, bool ok)
{
    if (ok)
        rj->ready = true; /* receives posted; our own writes wait for REJOIN_DONE */
}

unsigned rail_rejoin_connected(struct rail_rejoin *rj, bool ok)
{
    if (!ok) {
        rj->stage = RAIL_RJ_IDLE;
        return RAIL_RJ_DO_QPS_ERROR;
    }
    return RAIL_RJ_DO_BACK;
}

void rail_rejoin_back(struct rail_rejoin *rj, int *nup)
{
    rj->up = true;
    rj->ready = false;
    rj->stage = RAIL_RJ_IDLE;
    (*nup)++;
}
