/* SPDX-License-Identifier: Apache-2.0 */
/* Two-phase message state: pieces, the size record, what goes again (twophase.h). */
#include "protocol/twophase.h"

#include <string.h>

void rail_2ph_plan(struct rail_twophase *t, int n)
{
    t->n = (uint8_t)(n < 0 ? 0 : n > RAIL_REQ_CHUNKS ? RAIL_REQ_CHUNKS : n);
    t->left = 0;
    t->rec = 0;
    memset(t->piece, 0, sizeof(t->piece));
}

void rail_2ph_start(struct rail_twophase *t, bool empty)
{
    if (empty)
        t->n = 0;
    t->left = t->n;
    t->rec = 0;
}

void rail_2ph_piece_wait(struct rail_twophase *t, int k)
{
    t->piece[k] = RAIL_CH_PENDING;
}

bool rail_2ph_piece_failed(struct rail_twophase *t, int k)
{
    if (k < 0 || k >= t->n || t->piece[k] != RAIL_CH_POSTED)
        return false;
    t->piece[k] = RAIL_CH_PENDING;
    return true;
}

void rail_2ph_record_wait(struct rail_twophase *t)
{
    t->rec = RAIL_CH_PENDING;
}

bool rail_2ph_record_failed(struct rail_twophase *t)
{
    if (t->rec != RAIL_CH_POSTED)
        return false;
    t->rec = RAIL_CH_PENDING;
    return true;
}

void rail_2ph_record_settled(struct rail_twophase *t)
{
    t->rec = RAIL_CH_DONE;
}
