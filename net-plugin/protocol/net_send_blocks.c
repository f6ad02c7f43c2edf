/* SPDX-License-Identifier: Apache-2.0 */
/* A send comm's request free list and request blocks (net_send_blocks.h). */
#include "protocol/net_send_blocks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/net_link.h"
#include "transport/net_verbs.h"

void rail_send_state_init(struct rail_send_comm *s)
{
    rail_tagmap_init(&s->sent);
    /* Lowest index on top: a block is first used only when every request of the blocks below
     * it is in flight (freed requests go back on top). */
    s->nfree = RAIL_SEND_REQS;
    for (int i = 0; i < RAIL_SEND_REQS; i++)
        s->free_list[i] = (uint16_t)(RAIL_SEND_REQS - 1 - i);
}

int rail_send_block_alloc(struct rail_send_comm *s, int b, char *err, size_t errlen)
{
    struct rail_send_req_block *k = calloc(1, sizeof(*k));
    size_t len = (size_t)RAIL_SEND_REQ_BLOCK * RAIL_LOCAL_STRIDE;
    int rc = k ? rail_region_alloc_reg(&s->base, len, &k->src, k->mr, err, errlen) : -ENOMEM;
    if (rc < 0) {
        if (rc == -ENOMEM && !err[0])
            snprintf(err, errlen, "out of memory for send requests");
        free(k);
        return rc;
    }
    for (int i = 0; i < RAIL_SEND_REQ_BLOCK; i++) {
        k->req[i].h.comm = &s->base;
        k->req[i].idx = (uint16_t)(b * RAIL_SEND_REQ_BLOCK + i);
        k->req[i].src = k->src + (size_t)i * RAIL_LOCAL_STRIDE;
        k->req[i].blk = k;
    }
    s->blk[b] = k;
    return 0;
}

void rail_send_blocks_free(struct rail_send_comm *s)
{
    for (int b = 0; b < RAIL_SEND_REQ_BLOCKS; b++) {
        struct rail_send_req_block *k = s->blk[b];
        if (!k)
            continue;
        rail_region_free_reg(k->src, k->mr);
        free(k);
        s->blk[b] = NULL;
    }
}
