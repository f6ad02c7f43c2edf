/* SPDX-License-Identifier: Apache-2.0 */
/* bench/scale --smaps: where a process's resident memory sits, from /proc/self/smaps, so that a
 * difference of two snapshots says which mappings a connection added. Mappings of an RDMA device
 * file (/dev/infiniband/uverbsN: the kernel's queue and completion rings that a kernel provider
 * such as rdma_rxe maps into the process) are kept apart and counted by their size. */
#ifndef NCCL_RAIL_SCALE_SMAPS_H
#define NCCL_RAIL_SCALE_SMAPS_H

enum { SM_UVERBS, SM_HEAP, SM_ANON, SM_SHM, SM_FILE, SM_OTHER, SM_NCAT };
#define SM_NSIZES 24

struct smaps_snap {
    long rss_kib[SM_NCAT]; /* Rss by kind of mapping */
    long maps[SM_NCAT];    /* mappings of that kind */
    int nsizes;            /* device-file mappings by size: */
    long size_kib[SM_NSIZES], size_maps[SM_NSIZES], size_rss_kib[SM_NSIZES];
};

/* Reads /proc/self/smaps; 0, or -errno (the snapshot is zero). */
int smaps_snapshot(struct smaps_snap *s);
/* Prints "scale smaps side=LABEL ..." lines: (after - before) / n per kind, then per size of the
 * device-file mappings that changed. */
void smaps_report(const char *label, const struct smaps_snap *before,
                  const struct smaps_snap *after, int n);

#endif
