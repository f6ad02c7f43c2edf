/* SPDX-License-Identifier: Apache-2.0 */
/* Access to a peer process of the shm provider (shm_peer.h). */
#include "transport/shm_peer.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "log.h"

/* The reason a transfer with the peer process failed, as the verbs outcome: gone (ESRCH) or not
 * ours to touch (EPERM: ptrace refused) is a lost packet; a bad address inside a registered
 * region is the responder's refusal. */
static int xfer_error(const struct shm_qp *qp, int e, bool data)
{
    static atomic_int warned;
    if (e == EPERM && !atomic_exchange(&warned, 1))
        RAIL_WARN(NCCL_NET,
                  "shm provider: access to process %d refused (EPERM): both processes need the "
                  "same user (or root) and a Yama ptrace_scope that allows it",
                  (int)qp->remote_pid);
    if (data && e == EFAULT)
        return -EACCES;
    return -EHOSTUNREACH;
}

static int rv(const struct shm_qp *qp, struct iovec *local, int nl, struct iovec *remote, int nr,
              size_t total, bool data)
{
    ssize_t n =
        process_vm_readv(qp->remote_pid, local, (unsigned long)nl, remote, (unsigned long)nr, 0);
    if (n < 0)
        return xfer_error(qp, errno, data);
    if ((size_t)n != total)
        return xfer_error(qp, EFAULT, data);
    return 0;
}

static int wv(const struct shm_qp *qp, const struct iovec *local, int nl, struct iovec *remote,
              int nr, size_t total, bool data)
{
    ssize_t n =
        process_vm_writev(qp->remote_pid, local, (unsigned long)nl, remote, (unsigned long)nr, 0);
    if (n < 0)
        return xfer_error(qp, errno, data);
    if ((size_t)n != total)
        return xfer_error(qp, EFAULT, data);
    return 0;
}

int shm_peer_check(const struct shm_qp *qp, uint32_t rkey, uint64_t addr, uint64_t len, int access,
                   uint64_t *ring)
{
    struct shm_qp_pub q;
    struct shm_mr_pub m;
    unsigned qs = qp->remote_qpn & (SHM_MAX_QP - 1), ms = rkey & (SHM_MAX_MR - 1);
    struct iovec local[2] = {{&q, sizeof(q)}, {&m, sizeof(m)}};
    struct iovec remote[2] = {
        {(void *)(uintptr_t)(qp->remote_dir + offsetof(struct shm_dir, qp) + qs * sizeof(q)),
         sizeof(q)},
        {(void *)(uintptr_t)(qp->remote_dir + offsetof(struct shm_dir, mr) + ms * sizeof(m)),
         sizeof(m)}};
    int rc = rv(qp, local, 2, remote, 2, sizeof(q) + sizeof(m), false);
    if (rc < 0)
        return rc;
    uint32_t st = atomic_load(&q.state);
    if (atomic_load(&q.qpn) != qp->remote_qpn || (st != IBV_QPS_RTR && st != IBV_QPS_RTS))
        return -EHOSTUNREACH; /* destroyed, replaced, or not ready: the packets are dropped */
    *ring = q.ring;
    if (atomic_load(&m.rkey) != rkey || rkey == 0 || !(m.access & (uint32_t)access) ||
        addr < m.addr || len > m.len || addr - m.addr > m.len - len)
        return -EACCES;
    return 0;
}

/* Small writes land in address order, cache line by cache line. The kernel copies each local
 * iovec with one string instruction, and x86 lets the stores of one string instruction become
 * visible out of order: a 128-byte clear-to-send entry could show its sequence word (its last
 * field, which says "written") before its first line's fields, and the sender read an entry
 * count from the previous round ("entry count differs within the slot", seen once in ~15
 * net_shm runs). An HCA's DMA writes in address order; giving every 64-byte line of the
 * destination its own local iovec makes the lines visible in order (TSO between instructions).
 * Bulk data (above SHM_ORDERED_MAX) relies only on whole 8-byte words, as NCCL's LL does. */
#define SHM_LINE        64u
#define SHM_ORDERED_MAX 4096u

static int split_lines(uint64_t raddr, const struct iovec *liov, int n, size_t total,
                       struct iovec *out, int cap)
{
    int k = 0;
    uint64_t at = raddr;
    for (int i = 0; i < n; i++) {
        const uint8_t *p = liov[i].iov_base;
        size_t left = liov[i].iov_len;
        while (left > 0) {
            size_t room = SHM_LINE - (size_t)(at % SHM_LINE), take = left < room ? left : room;
            if (k == cap)
                return -1;
            out[k].iov_base = (void *)p;
            out[k].iov_len = take;
            k++;
            p += take;
            left -= take;
            at += take;
        }
    }
    return at - raddr == total ? k : -1;
}

int shm_peer_write(const struct shm_qp *qp, uint64_t raddr, const struct iovec *liov, int n,
                   size_t total)
{
    if (total == 0)
        return 0;
    struct iovec remote = {(void *)(uintptr_t)raddr, total};
    if (total <= SHM_ORDERED_MAX) {
        struct iovec lines[SHM_ORDERED_MAX / SHM_LINE + 2 * SHM_MAX_SGE];
        int k = split_lines(raddr, liov, n, total, lines, (int)(sizeof(lines) / sizeof(lines[0])));
        if (k > 0)
            return wv(qp, lines, k, &remote, 1, total, true);
    }
    return wv(qp, liov, n, &remote, 1, total, true);
}

int shm_peer_read(const struct shm_qp *qp, uint64_t raddr, const struct iovec *liov, int n,
                  size_t total)
{
    if (total == 0)
        return 0;
    struct iovec remote = {(void *)(uintptr_t)raddr, total};
    return rv(qp, (struct iovec *)liov, n, &remote, 1, total, true);
}

int shm_peer_ring_tail(const struct shm_qp *qp, uint64_t ring, uint64_t *tail)
{
    uint64_t t = 0;
    struct iovec local = {&t, sizeof(t)};
    struct iovec remote = {(void *)(uintptr_t)(ring + offsetof(struct shm_ring, tail)), sizeof(t)};
    int rc = rv(qp, &local, 1, &remote, 1, sizeof(t), false);
    if (rc == 0)
        *tail = t;
    return rc;
}

int shm_peer_ack_state(const struct shm_qp *qp, uint64_t ring, uint32_t *state, uint64_t *tail)
{
    struct shm_qp_pub q;
    uint64_t t = 0;
    unsigned qs = qp->remote_qpn & (SHM_MAX_QP - 1);
    struct iovec local[2] = {{&q, sizeof(q)}, {&t, sizeof(t)}};
    struct iovec remote[2] = {
        {(void *)(uintptr_t)(qp->remote_dir + offsetof(struct shm_dir, qp) + qs * sizeof(q)),
         sizeof(q)},
        {(void *)(uintptr_t)(ring + offsetof(struct shm_ring, tail)), sizeof(t)}};
    int rc = rv(qp, local, 2, remote, 2, sizeof(q) + sizeof(t), false);
    if (rc < 0)
        return rc;
    *state = atomic_load(&q.qpn) == qp->remote_qpn ? atomic_load(&q.state) : 0;
    *tail = t;
    return 0;
}

int shm_peer_ring_push(const struct shm_qp *qp, uint64_t ring, uint64_t index,
                       const struct shm_rent *e)
{
    uint64_t at = ring + offsetof(struct shm_ring, ent) + (index % SHM_RING) * sizeof(*e);
    /* Fields first, seq last: the kernel copies the iovecs in order, and x86-64 makes stores
     * visible in program order, so the consumer that sees seq sees the fields. */
    struct iovec local[2] = {{(void *)e, offsetof(struct shm_rent, seq)},
                             {(void *)&e->seq, sizeof(e->seq)}};
    struct iovec remote[2] = {
        {(void *)(uintptr_t)at, offsetof(struct shm_rent, seq)},
        {(void *)(uintptr_t)(at + offsetof(struct shm_rent, seq)), sizeof(e->seq)}};
    return wv(qp, local, 2, remote, 2, sizeof(*e), false);
}

int shm_peer_ring_fatal(const struct shm_qp *qp, uint64_t ring)
{
    uint32_t one = 1;
    struct iovec local = {&one, sizeof(one)};
    struct iovec remote = {(void *)(uintptr_t)(ring + offsetof(struct shm_ring, fatal)),
                           sizeof(one)};
    return wv(qp, &local, 1, &remote, 1, sizeof(one), false);
}
