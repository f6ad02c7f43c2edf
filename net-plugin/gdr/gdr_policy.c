/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect RDMA decisions (pure): see gdr_policy.h. */
#include "gdr/gdr_policy.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl/nccl_net.h"
#include "topo.h"

const char *const rail_gdr_peermem_files[] = {
    "/sys/kernel/mm/memory_peers/nv_mem/version",
    "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
    "/sys/module/nvidia_peermem/version",
    NULL,
};

int rail_gdr_parse_level(const char *text)
{
    if (!text || !*text)
        return -ENOENT;
    bool digits = true;
    for (const char *p = text; *p; p++)
        if (!isdigit((unsigned char)*p))
            digits = false;
    if (digits) {
        /* NCCL's old numbering 0..4; anything larger means the farthest, SYS. */
        static const int legacy[] = {RAIL_PATH_LOC, RAIL_PATH_PIX, RAIL_PATH_PXB, RAIL_PATH_PHB,
                                     RAIL_PATH_SYS};
        long v = strlen(text) > 3 ? 99 : strtol(text, NULL, 10);
        return legacy[v > 4 ? 4 : v];
    }
    int p = rail_path_parse(text);
    return p >= 0 && p <= RAIL_PATH_SYS ? p : -EINVAL;
}

static const char *errno_name(int e)
{
    switch (e) {
    case EOPNOTSUPP:
        return "EOPNOTSUPP";
    case EPROTONOSUPPORT:
        return "EPROTONOSUPPORT";
    case EBADF:
        return "EBADF";
    case EINVAL:
        return "EINVAL";
    case ENOSYS:
        return "ENOSYS";
    case EPERM:
        return "EPERM";
    case EACCES:
        return "EACCES";
    case EFAULT:
        return "EFAULT";
    case ENOMEM:
        return "ENOMEM";
    default:
        return NULL;
    }
}

static void append(struct rail_gdr_decision *d, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(struct rail_gdr_decision *d, size_t *used, const char *fmt, ...)
{
    va_list ap;
    if (*used >= sizeof(d->reason))
        return;
    va_start(ap, fmt);
    int n = vsnprintf(d->reason + *used, sizeof(d->reason) - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n;
}

/* Why dma-buf cannot be used, or NULL when it can; the probe errno text goes into buf. */
static const char *dmabuf_blocker(const struct rail_gdr_inputs *in, char *buf, size_t len)
{
    int e = in->dmabuf_probe;
    if (!in->dmabuf_enable)
        return "dma-buf disabled (NCCL_DMABUF_ENABLE=0)";
    if (e == RAIL_GDR_PROBE_NONE || e < 0)
        return "dma-buf not probed (verbs without ibv_reg_dmabuf_mr)";
    if (e == EOPNOTSUPP || e == EPROTONOSUPPORT) {
        snprintf(buf, len, "dma-buf unsupported (%s)", errno_name(e));
        return buf;
    }
    if (in->cuda != 1)
        return "dma-buf unusable: no CUDA driver";
    if (in->cuda_version < 11070) {
        snprintf(buf, len, "dma-buf unusable: CUDA driver %d older than 11.7", in->cuda_version);
        return buf;
    }
    if (in->cuda_dmabuf == 0)
        return "dma-buf unusable: a GPU lacks CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED";
    if (in->cuda_dmabuf != 1)
        return "dma-buf unusable: GPU dma-buf support unknown (no GPU?)";
    return NULL;
}

static void describe_flush(const struct rail_gdr_inputs *in, struct rail_gdr_decision *d,
                           size_t *used)
{
    if (in->flush_disable)
        append(d, used, "; no flush (NCCL_GDR_FLUSH_DISABLE=1)");
    else if (!d->flush)
        append(d, used, "; no flush needed (compute capability %d.x)", in->cc_major);
    else if (in->force_flush)
        append(d, used, "; flush by RDMA read (NCCL_NET_FORCE_FLUSH=1)");
    else if (in->cc_major > 0)
        append(d, used, "; flush by RDMA read (compute capability %d.x < 9)", in->cc_major);
    else
        append(d, used, "; flush by RDMA read (GPU compute capability unknown)");
}

void rail_gdr_decide(const struct rail_gdr_inputs *in, struct rail_gdr_decision *d)
{
    char ebuf[128];
    size_t used = 0;
    const char *dev = in->dev && *in->dev ? in->dev : "?";

    memset(d, 0, sizeof(*d));
    int level = rail_gdr_parse_level(in->gdr_level);
    d->level_invalid = level == -EINVAL;
    d->level = level >= 0 ? level : RAIL_PATH_PXB;
    d->path_ok = in->path < 0 || in->path <= d->level;

    const char *no_dmabuf = dmabuf_blocker(in, ebuf, sizeof(ebuf));
    d->peermem = in->peermem != NULL;
    d->dmabuf = no_dmabuf == NULL;
    d->gdr = d->peermem || d->dmabuf;
    d->ptr_support =
        NCCL_PTR_HOST | (d->peermem ? NCCL_PTR_CUDA : 0) | (d->dmabuf ? NCCL_PTR_DMABUF : 0);
    /* Hopper and newer order GPU-bound PCIe writes themselves; older GPUs (and unknown ones, to be
     * safe) need a read through the NIC to make received data visible. */
    bool needed = in->force_flush || in->cc_major < 9;
    d->flush = d->gdr && d->path_ok && !in->flush_disable && needed;
    d->force_flush = d->gdr && !in->flush_disable && in->force_flush;

    if (!d->gdr) {
        append(d, &used, "GDR disabled for %s: no nvidia-peermem and no dma-buf (%s)", dev,
               no_dmabuf);
    } else {
        append(d, &used, "GDR enabled for %s: ", dev);
        if (d->peermem)
            append(d, &used, "nvidia-peermem loaded (%s)", in->peermem);
        else
            append(d, &used, "no nvidia-peermem");
        append(d, &used, ", %s", no_dmabuf ? no_dmabuf : "dma-buf supported");
        if (!d->path_ok)
            append(d, &used,
                   "; but NCCL will not use it: GPU-NIC path %s is beyond "
                   "NCCL_NET_GDR_LEVEL=%s",
                   rail_path_name((enum rail_path)in->path), rail_path_name(d->level));
        else
            describe_flush(in, d, &used);
    }
    if (d->level_invalid)
        append(d, &used, "; NCCL_NET_GDR_LEVEL='%s' not understood, using PXB", in->gdr_level);
}

enum rail_gdr_reg_method rail_gdr_reg_method(const struct rail_gdr_decision *d, int type)
{
    if (type == NCCL_PTR_HOST)
        return RAIL_GDR_REG_PLAIN;
    if (type != NCCL_PTR_CUDA || !d)
        return RAIL_GDR_REG_REFUSE;
    if (d->peermem)
        return RAIL_GDR_REG_PLAIN;
    return d->dmabuf ? RAIL_GDR_REG_DMABUF : RAIL_GDR_REG_REFUSE;
}

bool rail_gdr_relaxed_ordering(long long knob, bool verbs_has_ro)
{
    return knob != 0 && verbs_has_ro;
}
