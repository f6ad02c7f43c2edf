/* SPDX-License-Identifier: Apache-2.0 */
/* Completion polling shared by both comm kinds, and the net API's test() (net_data.c; isend:
 * net_send.h, irecv: net_recv.h, iflush: net_flush.h). */
#ifndef NCCL_RAIL_NET_DATA_H
#define NCCL_RAIL_NET_DATA_H

#include <stddef.h>

#include "protocol/net_comm.h"

/* Completion polling for either comm kind: what arrives without a completion (ops->poll), the
 * CQs, re-sends, and the listed send comms of other threads. */
int rail_comm_progress(struct rail_comm *c);
/* The same without ops->poll (its caller just did it). */
int rail_comm_progress_cqs(struct rail_comm *c);
/* A two-phase message needs its sender's completions polled before its size record goes out.
 * NCCL keeps testing its sends, but a caller may wait on a receive without touching the send
 * comm: such a send comm is listed, and every comm's progress (any thread) also polls the listed
 * ones it can enter. The owner brackets its own calls with enter/leave. Only multi-rail send
 * comms are ever listed (one-rail messages are never two-phase), so one-rail comms skip
 * enter/leave. */
void rail_send_enter(struct rail_send_comm *s);
void rail_send_leave(struct rail_send_comm *s);
void rail_send_help_list(struct rail_send_comm *s);
void rail_send_help_unlist(struct rail_send_comm *s);

/* sizes: NULL, or one int per receive entry (one for a send). */
int rail_net_test(void *request, int *done, int *sizes);

#endif
