/* SPDX-License-Identifier: Apache-2.0 */
/* The receive comm's constructor (net_accept.c calls it): its links (QPs, CQs), the records,
 * eager bounce and image slots and CTS staging regions registered on every rail, and the first
 * request block; moved out of net_recv.c as it stands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/net_recv_comm.h"

#include "protocol/net_recv.h"
#include "protocol/net_recv_blocks.h"

#include "gdr/net_gdr.h"
#include "params.h"
#include "protocol/net_link.h"
#include "protocol/net_qsize.h"
#include "wire/eager_image.h"

int rail_recv_comm_create(struct rail_netdev *g, int nrails, int nqps, unsigned cts_bytes, int rq,
                          int ctl_rq, struct rail_recv_comm **out, char *err, size_t errlen)
{
    struct rail_recv_comm *r = calloc(1, sizeof(*r));
    /* GPUDirect devices: no eager bounce slots (net_gdr.c, rail_gdr_eager_ok). */
    bool eager_ok = true;
    for (int k = 0; k < nrails; k++)
        eager_ok = eager_ok && rail_gdr_eager_ok(g->rail[k]);
    long long eager = eager_ok ? rail_param_int(RAIL_PARAM_EAGER_MAX) : 0;
    int rc = 0;
    if (!r)
        return -ENOMEM;
    r->base.ops = &rail_recv_comm_ops;
    r->base.magic = RAIL_RECV_MAGIC;
    r->base.nrails = nrails;
    r->base.nqps = nqps;
    r->base.fd = -1;
    r->base.group = g;
    r->cts_bytes = cts_bytes;
    r->eager_bytes = eager > 0 ? (uint32_t)eager : 0;
    rail_eager_ring_init(&r->ring, eager > 0 ? (int)rail_param_int(RAIL_PARAM_EAGER_SLOTS) : 0);
    r->slot_stride = RAIL_EAGER_HDR + r->eager_bytes;
    rail_recv_state_init(r);
    /* The receive side writes no eager data: no inline room. */
    struct rail_qshape shape = {.nqps = nqps,
                                .sq = RAIL_RECV_SQ,
                                .rq = rq,
                                .has_ctl = ctl_rq > 0,
                                .ctl_sq = RAIL_RECV_CTL_SQ,
                                .ctl_rq = ctl_rq};
    for (int k = 0; k < nrails && rc == 0; k++)
        rc = rail_link_create(&r->base, k, g->rail[k], &shape, err, errlen);
    for (int k = 0; k < nrails; k++)
        r->base.link[k].cq_work = 1; /* always polled (net_data.c) */
    if (rc == 0)
        rc = rail_region_alloc(RAIL_RECORDS_SIZE, &r->records);
    if (rc == 0)
        rc = rail_region_reg(&r->base, 0, r->records, RAIL_RECORDS_SIZE, true, err, errlen);
    if (rc == 0 && r->ring.slots) {
        /* The bounce slots, then the image slots (wire/eager_image.h). */
        uint64_t img = rail_image_region_off(r->ring.slots, r->slot_stride);
        size_t len = (size_t)img + (size_t)r->ring.slots * RAIL_IMAGE_STRIDE;
        rc = rail_region_alloc(len, &r->bounce);
        if (rc == 0) {
            r->images = r->bounce + img;
            rc = rail_region_reg(&r->base, 1, r->bounce, len, true, err, errlen);
        }
    }
    if (rc == 0)
        rc = rail_region_alloc(RAIL_STAGING_SIZE, &r->staging);
    if (rc == 0)
        rc = rail_region_reg(&r->base, 2, r->staging, RAIL_STAGING_SIZE, false, err, errlen);
    if (rc == 0)
        rc = rail_recv_block_alloc(r, 0, err, errlen);
    if (rc < 0) {
        if (rc == -ENOMEM && !err[0])
            snprintf(err, errlen, "out of memory for the receive comm");
        rail_comm_free(&r->base);
        return rc;
    }
    *out = r;
    return 0;
}
