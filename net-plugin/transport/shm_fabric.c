/* SPDX-License-Identifier: Apache-2.0 */
/* The shm provider's shared fabric file (shm_fabric.h). */
#include "transport/shm_fabric.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FABRIC_VERSION 1u

int rail_shm_fabric_path(const char *name, char *path, size_t len)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 64)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return -EINVAL;
    }
    if (name[0] == '.')
        return -EINVAL;
    if (snprintf(path, len, "/dev/shm/nccl-rail-shm-%u-%s", (unsigned)geteuid(), name) >= (int)len)
        return -EINVAL;
    return 0;
}

int rail_shm_fabric_open(const char *name, struct rail_shm_fabric **out, char *err, size_t errlen)
{
    char path[160];
    struct stat st;
    size_t size = sizeof(struct rail_shm_fabric);
    *out = NULL;
    if (rail_shm_fabric_path(name, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "fabric name '%.80s' is not 1-64 of [A-Za-z0-9_.-]",
                 name ? name : "");
        return -EINVAL;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
        return -e;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s is not a regular file of this user", path);
        close(fd);
        return -EPERM;
    }
    /* Every process grows it to the same size: the new bytes are zeros (ports up, no loss, no
     * endpoints), so concurrent first openers agree. */
    if ((size_t)st.st_size < size && ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot size %s: %s", path, strerror(e));
        close(fd);
        return -e;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", path, strerror(e));
        return -e;
    }
    struct rail_shm_fabric *f = p;
    uint64_t zero = 0;
    if (atomic_compare_exchange_strong(&f->magic, &zero, RAIL_SHM_MAGIC)) {
        f->version = FABRIC_VERSION;
        f->size = (uint32_t)size;
    } else if (atomic_load(&f->magic) != RAIL_SHM_MAGIC) {
        snprintf(err, errlen, "%s is not a fabric file", path);
        munmap(p, size);
        return -EPROTO;
    }
    *out = f;
    return 0;
}

void rail_shm_fabric_close(struct rail_shm_fabric *f)
{
    if (f)
        munmap(f, sizeof(*f));
}

int rail_shm_fabric_unlink(const char *name)
{
    char path[160];
    if (rail_shm_fabric_path(name, path, sizeof(path)) < 0)
        return -EINVAL;
    return unlink(path) == 0 ? 0 : -errno;
}

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
