/* SPDX-License-Identifier: Apache-2.0 */
/* Completion queues and RC queue pairs of the shm provider: the verbs seam's table entries for
 * them (posting and polling included). A post runs its QP's first chunk of work at once; a poll
 * moves up to SHM_POLL_BUDGET bytes over the QPs completing on that CQ (shm_engine.c). */
#ifndef NCCL_RAIL_SHM_QP_H
#define NCCL_RAIL_SHM_QP_H

#include <infiniband/verbs.h>

struct ibv_cq *shm_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int vector);
int shm_destroy_cq(struct ibv_cq *cq);
/* RC only; the capabilities granted are written back into attr->cap. */
struct ibv_qp *shm_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* RESET -> INIT -> RTR (dest_qp_num and the LID of ah_attr name the peer QP) -> RTS (timeout,
 * retry_cnt); ERR from any state. A positive errno on failure. */
int shm_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
/* The attributes modify_qp accepted, the current state and the queue capacities. */
int shm_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init);
int shm_destroy_qp(struct ibv_qp *qp);
int shm_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int shm_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int shm_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

#endif
