/* SPDX-License-Identifier: Apache-2.0 */
/* A receive comm's request free list and request blocks with their CTS staging regions
 * (net_recv_blocks.h). */
#include "protocol/net_recv_blocks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/net_link.h"
#include "transport/net_verbs.h"

void rail_recv_state_init(struct rail_recv_comm *r)
{
    rail_tagmap_init(&r->posted);
    r->nfree = RAIL_RECV_REQS;
    for (int i = 0; i < RAIL_RECV_REQS; i++)
        r->free_list[i] = (uint8_t)(RAIL_RECV_REQS - 1 - i);
}

int rail_recv_block_alloc(struct rail_recv_comm *r, int b, char *err, size_t errlen)
{
    struct rail_recv_req_block *k = calloc(1, sizeof(*k));
    size_t len = (size_t)RAIL_RECV_REQ_BLOCK * RAIL_RECV_STAGE(r->cts_bytes);
    int rc = k ? rail_region_alloc_reg(&r->base, len, &k->stage, k->mr, err, errlen) : -ENOMEM;
    if (rc < 0) {
        if (rc == -ENOMEM && !err[0])
            snprintf(err, errlen, "out of memory for receive requests");
        free(k);
        return rc;
    }
    for (int i = 0; i < RAIL_RECV_REQ_BLOCK; i++) {
        k->req[i].h.comm = &r->base;
        k->req[i].idx = (uint8_t)(b * RAIL_RECV_REQ_BLOCK + i);
        k->req[i].stage = k->stage + (size_t)i * RAIL_RECV_STAGE(r->cts_bytes);
        k->req[i].blk = k;
    }
    r->blk[b] = k;
    return 0;
}

void rail_recv_blocks_free(struct rail_recv_comm *r)
{
    for (int b = 0; b < RAIL_RECV_REQ_BLOCKS; b++) {
        struct rail_recv_req_block *k = r->blk[b];
        if (!k)
            continue;
        rail_region_free_reg(k->stage, k->mr);
        free(k);
        r->blk[b] = NULL;
    }
}
