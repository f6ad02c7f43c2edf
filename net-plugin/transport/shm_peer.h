/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's access to a peer process (process_vm_readv / process_vm_writev): its
 * published directory records, its registered memory and its QPs' receive rings. Every call
 * returns 0, -EHOSTUNREACH when the peer process or QP is not there (its packets are lost: the
 * requester retries until its timeout, as RC does), or -EACCES when the responder refuses the
 * access (a remote access error). Needs ptrace access to the peer (same user, or root; see
 * docs/net-plugin.md, "The shm verbs provider"). */
#ifndef NCCL_RAIL_SHM_PEER_H
#define NCCL_RAIL_SHM_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "transport/shm_types.h"

/* Checks that the connected peer QP is still there and ready (RTR or RTS), and that rkey grants
 * `access` (IBV_ACCESS_REMOTE_WRITE or _READ) to [addr, addr + len) in its process. *ring gets
 * the peer QP's ring address. */
int shm_peer_check(const struct shm_qp *qp, uint32_t rkey, uint64_t addr, uint64_t len, int access,
                   uint64_t *ring);
/* Copies the local iovecs (total bytes) to raddr in the peer, or from it. */
int shm_peer_write(const struct shm_qp *qp, uint64_t raddr, const struct iovec *liov, int n,
                   size_t total);
int shm_peer_read(const struct shm_qp *qp, uint64_t raddr, const struct iovec *liov, int n,
                  size_t total);
/* The peer ring's consumed count. */
int shm_peer_ring_tail(const struct shm_qp *qp, uint64_t ring, uint64_t *tail);
/* The connected peer QP's published state (0 when it was destroyed or replaced) and its ring's
 * consumed count, in one read of the peer: what decides whether a write is acknowledged. */
int shm_peer_ack_state(const struct shm_qp *qp, uint64_t ring, uint32_t *state, uint64_t *tail);
/* Writes entry `index` (mod SHM_RING) of the peer's ring: its fields, then its seq. */
int shm_peer_ring_push(const struct shm_qp *qp, uint64_t ring, uint64_t index,
                       const struct shm_rent *e);
/* Marks the peer's ring fatal: its QP goes to the error state at its next poll. */
int shm_peer_ring_fatal(const struct shm_qp *qp, uint64_t ring);

#endif
