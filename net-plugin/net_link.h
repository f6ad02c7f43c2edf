/* Per-rail connection resources (net_link.c). */
#ifndef NCCL_RAIL_NET_LINK_H
#define NCCL_RAIL_NET_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_comm.h"

int rail_wire_ll(int verbs_ll);
/* Page-aligned, zeroed. */
int rail_region_alloc(size_t size, uint8_t **out);
/* Registers p on every rail of c into link[r].mr[slot]. */
int rail_region_reg(struct rail_comm *c, int slot, void *p, size_t size, bool remote, char *err,
                    size_t errlen);
/* This end's rail description for the metadata frame (QPNs included). */
void rail_link_describe(const struct rail_comm *c, int rail, struct rail_meta_rail *mr);
/* The peer's metadata must describe as many rails and QPs, with the same link layers. */
int rail_link_check_peer(const struct rail_comm *c, const struct rail_meta *peer, char *err,
                         size_t errlen);
/* Moves every QP to RTS against the peer's QPs; keeps the peer's region keys. */
int rail_link_connect(struct rail_comm *c, const struct rail_meta *peer, int sl, int tc, char *err,
                      size_t errlen);

#endif
