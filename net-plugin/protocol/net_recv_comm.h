/* SPDX-License-Identifier: Apache-2.0 */
/* The receive comm's constructor (net_recv_comm.c). */
#ifndef NCCL_RAIL_NET_RECV_COMM_H
#define NCCL_RAIL_NET_RECV_COMM_H

#include <stddef.h>

#include "protocol/net_comm.h"

/* A receive comm: size records (mr[0]) and eager bounce slots (mr[1]), both remotely
 * writable, and the CTS staging area (mr[2]); it writes clear-to-send entries of cts_bytes
 * (what the sender's metadata announced: wire/cts_layout.h), and its QPs have rq receive WRs
 * each (rail_qsize_recv_rq: spare ones for what is owed included); ctl_rq > 0: the last QP of
 * each rail faces the sender's control QP and has ctl_rq receive WRs instead. */
int rail_recv_comm_create(struct rail_netdev *g, int nrails, int nqps, unsigned cts_bytes, int rq,
                          int ctl_rq, struct rail_recv_comm **out, char *err, size_t errlen);

#endif
