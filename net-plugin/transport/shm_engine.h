/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's work engine: what an HCA does between a post and a completion. Work
 * requests of a QP run in order (RC), a large one in SHM_CHUNK steps, driven by the process's own
 * posts and polls (no thread); the data of a write with immediate is in the peer's memory before
 * its entry is in the peer's receive ring, and a work request completes once "acknowledged".
 * The fabric's port states decide what gets through: a request that cannot reach its responder
 * (a cable pulled, packets dropped, the peer process or QP gone) is retried until the QP's
 * timeout (4.096 us x 2^timeout x (retry_cnt + 1)) and then completes with RETRY_EXC_ERR; one
 * whose acknowledgement is lost has landed all the same. A refused rkey or range completes with
 * REM_ACCESS_ERR and moves both QPs to the error state. Every call runs under the context's lock.
 */
#ifndef NCCL_RAIL_SHM_ENGINE_H
#define NCCL_RAIL_SHM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/shm_types.h"

/* Moves up to *budget bytes of qp's work (decremented), takes what arrived in its receive ring,
 * and completes what is done into its CQs (in order). */
void shm_engine_progress(struct shm_qp *qp, uint64_t *budget, uint64_t now_ns);
/* The QP enters the error state: every work request not yet completed is flushed. */
void shm_engine_error(struct shm_qp *qp);
/* A completion into cq: false when it is full. */
bool shm_cq_push(struct ibv_cq *cq, const struct ibv_wc *wc);
uint64_t shm_now_ns(void);

#endif
