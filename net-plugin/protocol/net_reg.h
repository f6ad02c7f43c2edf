/* SPDX-License-Identifier: Apache-2.0 */
/* regMr / regMrDmaBuf / deregMr over the per-device registration cache. */
#ifndef NCCL_RAIL_NET_REG_H
#define NCCL_RAIL_NET_REG_H

#include <stddef.h>
#include <stdint.h>

struct rail_dev;
struct rail_comm;
struct rail_mr;

/* Creates d->cache (registrations go to d->pd). */
int rail_dev_reg_init(struct rail_dev *d, char *why, size_t whylen);

int rail_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
int rail_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
                           void **mhandle);
int rail_net_dereg_mr(void *comm, void *mhandle);
/* mhandle is a live registration of c's device(s) that covers [data, data + size): 0 and *out,
 * or -EINVAL with a WARN. */
int rail_mr_check(const struct rail_comm *c, const void *mhandle, const void *data, size_t size,
                  const struct rail_mr **out);

#endif
