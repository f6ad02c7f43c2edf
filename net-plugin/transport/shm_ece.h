/* SPDX-License-Identifier: Apache-2.0 */
/* Enhanced Connection Establishment on the shm provider, emulated so that the plugin's
 * negotiation is testable: each device has a set of ECE option bits (default
 * SHM_ECE_DEFAULT_OPTIONS; 0 = the device has no ECE: both calls fail with EOPNOTSUPP, as
 * rdma_rxe does). A QP reports its device's options until set_ece; set_ece (RESET or INIT only,
 * before RTR, as devices require) keeps the intersection of the device's options and the ones
 * given, which query_ece then reports: what a responder accepted. */
#ifndef NCCL_RAIL_SHM_ECE_H
#define NCCL_RAIL_SHM_ECE_H

#include <infiniband/verbs.h>
#include <stdint.h>

#define SHM_ECE_VENDOR          0x5348u /* "SH" */
#define SHM_ECE_DEFAULT_OPTIONS 0x0000000du

/* The verbs seam's query_ece / set_ece (0 or a positive errno). */
int shm_query_ece(struct ibv_qp *qp, struct ibv_ece *ece);
int shm_set_ece(struct ibv_qp *qp, struct ibv_ece *ece);

/* Tests: the ECE options of device shmN of this process from now on (0: no ECE). */
void rail_shm_ece_options(int dev, uint32_t options);

#endif
