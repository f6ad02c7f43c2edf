/* SPDX-License-Identifier: Apache-2.0 */
/* The shared-memory "fabric" of the shm verbs provider (NCCL_RAIL_VERBS_PROVIDER=shm): one small
 * file in /dev/shm that every process of one user and host using the same fabric name maps
 * (removed when the last one leaves). It holds
 *   - the four ports shm0..shm3, cabled in pairs (shm0-shm1 is rail A, shm2-shm3 rail B, like the
 *     SoftRoCE fabric's veth pairs): each port's administrative state (a port is ACTIVE when it
 *     and its cable peer are up), a packet-loss mode (everything leaving it, or only the
 *     acknowledgements) and the bytes it sent;
 *   - the endpoint registry: one entry per opened device context (its LID), naming the process
 *     and the address of the context's directory of QPs and memory regions in that process.
 * Test harnesses pull cables and drop packets by writing the port states (rail_shm_set_down,
 * rail_shm_set_drop). Verbs-free. */
#ifndef NCCL_RAIL_SHM_FABRIC_H
#define NCCL_RAIL_SHM_FABRIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RAIL_SHM_NDEV   4
#define RAIL_SHM_MAX_EP 1024                  /* LIDs 1..1024 */
#define RAIL_SHM_MAGIC  0x5241494c53484d31ull /* "RAILSHM1" */

enum rail_shm_drop {
    RAIL_SHM_DROP_NONE = 0,
    RAIL_SHM_DROP_ALL,  /* every packet leaving the port is lost (requests and answers) */
    RAIL_SHM_DROP_ACKS, /* only the answers leaving it: writes into it land, unacknowledged */
};

struct rail_shm_port {
    _Atomic uint32_t down; /* the cable at this end is pulled */
    _Atomic uint32_t drop; /* enum rail_shm_drop */
    _Atomic uint64_t tx_bytes;
};

struct rail_shm_ep {
    _Atomic int32_t pid; /* 0: free */
    _Atomic uint32_t dev;
    _Atomic uint64_t dir; /* address of the context's directory in that process */
};

struct rail_shm_fabric {
    _Atomic uint64_t magic;
    uint32_t version, size;
    struct rail_shm_port port[RAIL_SHM_NDEV];
    struct rail_shm_ep ep[RAIL_SHM_MAX_EP];
};

/* /dev/shm/nccl-rail-shm-UID-NAME; a name is 1..64 of [A-Za-z0-9_.-]. 0 or -EINVAL. */
int rail_shm_fabric_path(const char *name, char *path, size_t len);
/* Maps (creating when absent) the fabric `name`: 0, or -errno with the reason in err. Only a
 * regular file of this user is used (mode 0600); another user's file at the name is skipped with
 * a WARN naming it (the fabric is then NAME+1..+7, the first absent or ours). The file is removed
 * by the last process that closes it or exits; files of this user nobody holds (their processes
 * were killed) are removed at a process's first open, and a file nobody holds starts from zeros.
 * (shm_fabric_file.c explains the locking.) */
int rail_shm_fabric_open(const char *name, struct rail_shm_fabric **out, char *err, size_t errlen);
/* Unmaps; the last holder removes the file. */
void rail_shm_fabric_close(struct rail_shm_fabric *f);
/* The file behind an open fabric: 0, or -ENOENT. */
int rail_shm_fabric_file(const struct rail_shm_fabric *f, char *path, size_t len);
/* Removes the fabric file NAME (tests, at the end of a run). */
int rail_shm_fabric_unlink(const char *name);

/* "shm0".."shm3" -> 0..3, anything else -1. */
int rail_shm_dev_index(const char *name);
/* The port's cable peer: shm0 <-> shm1, shm2 <-> shm3. */
static inline int rail_shm_pair(int dev)
{
    return dev ^ 1;
}
/* ACTIVE: neither end of the port's cable is pulled. */
bool rail_shm_port_active(struct rail_shm_fabric *f, int dev);
void rail_shm_set_down(struct rail_shm_fabric *f, int dev, bool down);
void rail_shm_set_drop(struct rail_shm_fabric *f, int dev, enum rail_shm_drop mode);
enum rail_shm_drop rail_shm_drop_of(struct rail_shm_fabric *f, int dev);
void rail_shm_add_tx(struct rail_shm_fabric *f, int dev, uint64_t bytes);
uint64_t rail_shm_tx_bytes(struct rail_shm_fabric *f, int dev);

/* Takes a free registry entry (or one whose process is gone) for this process's context of
 * port dev with its directory at dir: the LID (1..RAIL_SHM_MAX_EP), or -ENOSPC. */
int rail_shm_ep_claim(struct rail_shm_fabric *f, int dev, uint64_t dir);
void rail_shm_ep_release(struct rail_shm_fabric *f, int lid);
/* The process and directory behind lid: 0, or -ENOENT (free or out of range). */
int rail_shm_ep_lookup(struct rail_shm_fabric *f, int lid, pid_t *pid, uint64_t *dir, int *dev);

#endif
