/* SPDX-License-Identifier: Apache-2.0 */
/* Per-rail connection resources (net_link.c). */
#ifndef NCCL_RAIL_NET_LINK_H
#define NCCL_RAIL_NET_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/net_comm.h"

int rail_wire_ll(int verbs_ll);
/* Page-aligned, zeroed. */
int rail_region_alloc(size_t size, uint8_t **out);
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

/* A send comm over every rail of g with nqps data QPs each (plus one control QP per rail when g
 * has several rails: base.nqps counts it): FIFO/credit region (mr[0], remotely writable) and the
 * per-request local sources (mr[1]). */
int rail_send_comm_create(struct rail_netdev *g, int nqps, struct rail_send_comm **out, char *err,
                          size_t errlen);
/* A receive comm: size records (mr[0]) and eager bounce slots (mr[1]), both remotely
 * writable, and the CTS staging area (mr[2]). */
int rail_recv_comm_create(struct rail_netdev *g, int nrails, int nqps, struct rail_recv_comm **out,
                          char *err, size_t errlen);
/* Destroys QPs, CQs and registrations, frees the regions, closes the socket. NULL is fine. */
void rail_comm_free(struct rail_comm *c);

#endif
