/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect RDMA facts of each HCA, read once per device on first use (I/O side of gdr_policy.h):
 * the peer-memory files under the sysfs root (NCCL_RAIL_SYSFS_ROOT), the HCA's dma-buf probe
 * ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0), and the CUDA driver's attributes (common/cuda_drv.h).
 * One INFO line per HCA says what was decided and why. Thread-safe. */
#ifndef NCCL_RAIL_NET_GDR_H
#define NCCL_RAIL_NET_GDR_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdr/gdr_policy.h"

struct rail_dev;

/* The decision for d (never NULL for a non-NULL d). */
const struct rail_gdr_decision *rail_gdr_get(struct rail_dev *d);
/* props.ptrSupport / props.forceFlush of d. */
int rail_gdr_ptr_support(struct rail_dev *d);
int rail_gdr_force_flush(struct rail_dev *d);
/* Receive comms on d set up the loopback flush QP. */
bool rail_gdr_flush_needed(struct rail_dev *d);

/* Eager messages land in host bounce slots and are copied out by the CPU, which cannot write GPU
 * memory: receive comms on a device with GPUDirect offer no bounce slots (the sender then uses
 * rendezvous writes straight into the receive buffer for every size). */
bool rail_gdr_eager_ok(struct rail_dev *d);

/* The errno of ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0) through the verbs seam (0 if it succeeded),
 * or RAIL_GDR_PROBE_NONE when the verbs library has no ibv_reg_dmabuf_mr. */
int rail_gdr_probe_dmabuf(struct ibv_pd *pd);

/* IBV_ACCESS_RELAXED_ORDERING when NCCL_IB_PCI_RELAXED_ORDERING allows it and d has not refused it
 * yet, else 0. */
int rail_gdr_ro_access(struct rail_dev *d);
/* A registration with relaxed ordering failed with err: stop asking on d (one INFO line). */
void rail_gdr_ro_refused(struct rail_dev *d, int err);

#endif
