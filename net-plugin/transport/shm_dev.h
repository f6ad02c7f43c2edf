/* SPDX-License-Identifier: Apache-2.0 */
/* Devices of the shm verbs provider: shm0..shm3 (ports of the shared fabric, shm_fabric.h),
 * their contexts (a LID in the fabric's registry, the directory peers read), protection
 * domains, memory regions, queries and the port's asynchronous events. The verbs seam's table
 * entries of these calls (transport/shm_verbs.c puts them in struct rail_verbs_ops). */
#ifndef NCCL_RAIL_SHM_DEV_H
#define NCCL_RAIL_SHM_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/shm_types.h"

/* Maps the fabric every context of this process joins: 0, or -errno with the reason in why. */
int shm_dev_setup(const char *fabric, char *why, size_t whylen);

struct ibv_device **shm_get_device_list(int *n);
void shm_free_device_list(struct ibv_device **list);
const char *shm_get_device_name(struct ibv_device *dev);
struct ibv_context *shm_open_device(struct ibv_device *dev);
int shm_close_device(struct ibv_context *ctx);
int shm_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int shm_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
int shm_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
/* One PKey: the default partition 0xffff at index 0. */
int shm_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey);
struct ibv_pd *shm_alloc_pd(struct ibv_context *ctx);
int shm_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *shm_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);
int shm_dereg_mr(struct ibv_mr *mr);
/* Host memory only: always NULL with errno EOPNOTSUPP. */
struct ibv_mr *shm_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                 int fd, int access);
/* PORT_ERR / PORT_ACTIVE when the port's state changed since the last event; -1 (EAGAIN) when
 * nothing happened. */
int shm_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev);
void shm_ack_async_event(struct ibv_async_event *ev);

/* Under the context's lock: lkey names a local region of c holding [addr, addr + len). */
bool shm_lkey_ok(const struct shm_ctx *c, uint32_t lkey, uint64_t addr, uint64_t len);
/* The port of c is ACTIVE (neither end of its cable pulled). */
bool shm_port_up(const struct shm_ctx *c);

#endif
