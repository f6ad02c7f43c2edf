/* SPDX-License-Identifier: Apache-2.0 */
/* Enhanced Connection Establishment (NCCL_IB_ECE_ENABLE), negotiated QP by QP in the handshake
 * as NCCL's IB transport does:
 *   - the sender (connect) reads each new QP's ECE (ibv_query_ece) and offers it in META_S,
 *     unless NCCL_IB_ECE_ENABLE=0 or the listener's plugin predates ECE (handle: version 4);
 *   - the receiver (accept) sets the offer on its QP of the same index before RTR (ibv_set_ece),
 *     reads back what the QP accepted (ibv_query_ece: the options both ends support) and returns
 *     it in META_R; as in NCCL the connecting side's NCCL_IB_ECE_ENABLE decides;
 *   - the sender sets what was accepted on its QP before RTR.
 * A provider without ECE (EOPNOTSUPP: rdma_rxe) means no ECE; a set that fails leaves that QP
 * pair without ECE with one WARN per device and side; nothing here fails a connection. One INFO
 * line per device, side and outcome: negotiated, not supported by provider, disabled, or the
 * peer's side had none. */
#ifndef NCCL_RAIL_NET_ECE_H
#define NCCL_RAIL_NET_ECE_H

#include <stdbool.h>

#include "protocol/net_comm.h"

/* Sender: the offer of rail `rail`'s QPs into *out (all zero: none). peer_ece: the listener
 * takes ECE frames (rail_handle.meta_version). */
void rail_ece_offer(struct rail_comm *c, int rail, bool peer_ece, struct rail_wire_ece *out);
/* Receiver, QPs in RESET/INIT: sets the peer's offer on rail `rail`'s QPs; *out = what they
 * accepted (all zero: none). peer_ece: the peer sent an ECE frame (else it predates ECE). */
void rail_ece_accept(struct rail_comm *c, int rail, bool peer_ece,
                     const struct rail_wire_ece *offer, struct rail_wire_ece *out);
/* Sender, QPs before RTR: sets what the receiver accepted on the QPs it was offered for. */
void rail_ece_apply(struct rail_comm *c, int rail, bool peer_ece,
                    const struct rail_wire_ece *offered, const struct rail_wire_ece *accepted);

#endif
