/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's shared fabric: ports and endpoint registry (shm_fabric.h); the file itself
 * in shm_fabric_file.c. */
#include "transport/shm_fabric.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int rail_shm_dev_index(const char *name)
{
    if (name && strncmp(name, "shm", 3) == 0 && name[3] >= '0' && name[3] < '0' + RAIL_SHM_NDEV &&
        name[4] == '\0')
        return name[3] - '0';
    return -1;
}

bool rail_shm_port_active(struct rail_shm_fabric *f, int dev)
{
    if (dev < 0 || dev >= RAIL_SHM_NDEV)
        return false;
    return !atomic_load(&f->port[dev].down) && !atomic_load(&f->port[rail_shm_pair(dev)].down);
}

void rail_shm_set_down(struct rail_shm_fabric *f, int dev, bool down)
{
    if (dev >= 0 && dev < RAIL_SHM_NDEV)
        atomic_store(&f->port[dev].down, down ? 1u : 0u);
}

void rail_shm_set_drop(struct rail_shm_fabric *f, int dev, enum rail_shm_drop mode)
{
    if (dev >= 0 && dev < RAIL_SHM_NDEV)
        atomic_store(&f->port[dev].drop, (uint32_t)mode);
}

enum rail_shm_drop rail_shm_drop_of(struct rail_shm_fabric *f, int dev)
{
    if (dev < 0 || dev >= RAIL_SHM_NDEV)
        return RAIL_SHM_DROP_ALL;
    return (enum rail_shm_drop)atomic_load_explicit(&f->port[dev].drop, memory_order_relaxed);
}

void rail_shm_add_tx(struct rail_shm_fabric *f, int dev, uint64_t bytes)
{
    if (dev >= 0 && dev < RAIL_SHM_NDEV)
        atomic_fetch_add_explicit(&f->port[dev].tx_bytes, bytes, memory_order_relaxed);
}

uint64_t rail_shm_tx_bytes(struct rail_shm_fabric *f, int dev)
{
    if (dev < 0 || dev >= RAIL_SHM_NDEV)
        return 0;
    return atomic_load(&f->port[dev].tx_bytes);
}

static bool pid_gone(int32_t pid)
{
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

int rail_shm_ep_claim(struct rail_shm_fabric *f, int dev, uint64_t dir)
{
    int32_t me = (int32_t)getpid();
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < RAIL_SHM_MAX_EP; i++) {
            struct rail_shm_ep *e = &f->ep[i];
            int32_t cur = atomic_load(&e->pid);
            if (cur != 0 && !(pass == 1 && pid_gone(cur)))
                continue;
            if (!atomic_compare_exchange_strong(&e->pid, &cur, me))
                continue;
            atomic_store(&e->dev, (uint32_t)dev);
            atomic_store(&e->dir, dir);
            return i + 1;
        }
    }
    return -ENOSPC;
}

void rail_shm_ep_release(struct rail_shm_fabric *f, int lid)
{
    if (lid < 1 || lid > RAIL_SHM_MAX_EP)
        return;
    struct rail_shm_ep *e = &f->ep[lid - 1];
    int32_t me = (int32_t)getpid();
    atomic_store(&e->dir, 0);
    atomic_compare_exchange_strong(&e->pid, &me, 0);
}

int rail_shm_ep_lookup(struct rail_shm_fabric *f, int lid, pid_t *pid, uint64_t *dir, int *dev)
{
    if (lid < 1 || lid > RAIL_SHM_MAX_EP)
        return -ENOENT;
    struct rail_shm_ep *e = &f->ep[lid - 1];
    int32_t p = atomic_load(&e->pid);
    uint64_t d = atomic_load(&e->dir);
    if (p <= 0 || d == 0)
        return -ENOENT;
    *pid = p;
    *dir = d;
    if (dev)
        *dev = (int)atomic_load(&e->dev);
    return 0;
}
