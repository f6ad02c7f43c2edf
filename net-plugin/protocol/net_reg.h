/* SPDX-License-Identifier: Apache-2.0 */
/* regMr / regMrDmaBuf / deregMr over the per-device registration cache. */
#ifndef NCCL_RAIL_NET_REG_H
#define NCCL_RAIL_NET_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/net_comm.h"

struct rail_dev;

/* Creates d->cache (registrations go to d->pd). */
int rail_dev_reg_init(struct rail_dev *d, char *why, size_t whylen);

int rail_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
int rail_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
                           void **mhandle);
int rail_net_dereg_mr(void *comm, void *mhandle);
/* mhandle is a live registration of c's device(s) that covers [data, data + size): 0 and *out,
 * or -EINVAL with a WARN. */
static inline int rail_mr_check(struct rail_comm *c, const void *mhandle, const void *data,
                                size_t size, const struct rail_mr **out);
/* The whole check (every rail's device); on success it remembers the handle in c. */
int rail_mr_check_full(struct rail_comm *c, const void *mhandle, const void *data, size_t size,
                       const struct rail_mr **out);

/* rail_mr_hit: the handle that last passed on this comm, same registration generation (not another
 * handle made at the same address since): its devices and rail count were checked then and do not
 * change; the buffer's range is checked every time. Everything else takes the whole check. */
static inline bool rail_mr_hit(const struct rail_comm *c, const struct rail_mr *m, const void *data,
                               size_t size)
{
    uintptr_t a = (uintptr_t)data;
    return m && m == c->mr_ok && m->magic == RAIL_MR_MAGIC && m->gen == c->mr_ok_gen &&
           (!size || (a >= m->start && a + size >= a && a + size <= m->start + m->len));
}

static inline int rail_mr_check(struct rail_comm *c, const void *mhandle, const void *data,
                                size_t size, const struct rail_mr **out)
{
    const struct rail_mr *m = mhandle;
    if (rail_mr_hit(c, m, data, size)) {
        *out = m;
        return 0;
    }
    return rail_mr_check_full(c, mhandle, data, size, out);
}

#endif
