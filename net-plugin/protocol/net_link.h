/* SPDX-License-Identifier: Apache-2.0 */
/* Per-rail connection resources, and the teardown every comm kind shares (net_link.c). */
#ifndef NCCL_RAIL_NET_LINK_H
#define NCCL_RAIL_NET_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/net_comm.h"
#include "transport/net_verbs.h"

struct rail_qshape;

/* Rail `rail` of c over dev: its CQ and the QPs of `want` (net_qsize.h), capped by the device;
 * each QP keeps its own send and receive depth and inline size (struct rail_qp). */
int rail_link_create(struct rail_comm *c, int rail, struct rail_dev *dev,
                     const struct rail_qshape *want, char *err, size_t errlen);
void rail_comm_destroy_links(struct rail_comm *c);
/* Posts count receive WRs on QP qp of rail (inline: the receive side's per-message repost). */
static inline int rail_post_recvs(struct rail_comm *c, int rail, int qp, int count)
{
    /* One WR, built once, posted count times: it takes no buffer (what consumes it is a write
     * with immediate), and a provider does not change a posted WR. */
    struct rail_qp *p = &c->link[rail].qps[qp];
    struct ibv_recv_wr wr = {.wr_id = rail_wrid(RAIL_WR_RECV, rail, qp, 0)};
    for (int i = 0; i < count; i++) {
        int rc = rail_verbs_post_recv(p->qp, &wr);
        if (rc < 0)
            return rc;
        p->rq_posted++;
    }
    return 0;
}
int rail_wire_ll(int verbs_ll);
/* Page-aligned, zeroed. */
int rail_region_alloc(size_t size, uint8_t **out);
/* A region of size bytes (rail_region_alloc) registered for local writes on every rail of c into
 * mr[0..nrails) (all NULL on entry): 0, or -errno with nothing left allocated (err says why when a
 * registration failed). */
int rail_region_alloc_reg(const struct rail_comm *c, size_t size, uint8_t **out, struct ibv_mr **mr,
                          char *err, size_t errlen);
/* What rail_region_alloc_reg made: every registration of mr (RAIL_MAX_RAILS entries, NULL
 * skipped), then the region. */
void rail_region_free_reg(uint8_t *p, struct ibv_mr **mr);
/* Registers p on every rail of c into link[r].mr[slot]. */
int rail_region_reg(struct rail_comm *c, int slot, void *p, size_t size, bool remote, char *err,
                    size_t errlen);
/* This end's rail description for the metadata frame (QPNs included). */
void rail_link_describe(const struct rail_comm *c, int rail, struct rail_meta_rail *mr);
/* The peer's metadata must describe as many QPs, at most as many rails (the connection uses the
 * first min(local, peer) rails, local rail i with remote rail i), with the same link layers. */
int rail_link_check_peer(const struct rail_comm *c, const struct rail_meta *peer, char *err,
                         size_t errlen);
/* Moves every QP of one rail to RTS against the peer's QPs of that rail. */
int rail_link_connect_one(struct rail_comm *c, int rail, const struct rail_meta_rail *peer, int sl,
                          int tc, char *err, size_t errlen);
/* Moves every QP of c->nrails rails to RTS; keeps the peer's region keys; all rails up. */
int rail_link_connect(struct rail_comm *c, const struct rail_meta *peer, int sl, int tc, char *err,
                      size_t errlen);

/* Destroys QPs, CQs and registrations, frees the regions, closes the socket. NULL is fine. */
void rail_comm_free(struct rail_comm *c);

#endif
