/* SPDX-License-Identifier: Apache-2.0 */
/* GPUDirect RDMA decisions of the net plugin, pure (no I/O): from what the node offers (peer-memory
 * module, CUDA dma-buf support, the HCA's dma-buf probe, the GPU's compute capability, the
 * GPU-NIC path) and the NCCL knobs, what the plugin reports to NCCL (ptrSupport, forceFlush),
 * whether it sets up the RDMA-read flush, how it registers a CUDA buffer, and one line saying why
 * (`nccl-rail doctor` prints it; the plugin logs it once per HCA). */
#ifndef NCCL_RAIL_GDR_POLICY_H
#define NCCL_RAIL_GDR_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* The files NCCL's IB transport checks for a peer-memory module, relative to the sysfs root;
 * NULL-terminated. */
extern const char *const rail_gdr_peermem_files[];

/* rail_gdr_inputs.dmabuf_probe: the errno of ibv_reg_dmabuf_mr(pd, 0, 0, 0, fd -1, 0); 0 when that
 * call unexpectedly succeeded (supported); RAIL_GDR_PROBE_NONE when not probed (no verbs support
 * for dma-buf in this build, or no device). */
#define RAIL_GDR_PROBE_NONE (-1)
/* rail_gdr_inputs.path: GPU-NIC path not known (the plugin does not know which GPU will use the
 * NIC; NCCL applies NCCL_NET_GDR_LEVEL itself). */
#define RAIL_GDR_PATH_UNKNOWN (-1)

struct rail_gdr_inputs {
    const char *dev;     /* HCA name, for the reason line */
    const char *peermem; /* the peer-memory file found (rail_gdr_peermem_files[i]) or NULL */
    int cuda;            /* 1 CUDA driver loaded, 0 not (then the CUDA fields below are unknown) */
    int cuda_version;    /* cuDriverGetVersion, 0 unknown */
    int cuda_dmabuf;     /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED of every GPU: 1, 0, -1 unknown */
    int cc_major;        /* lowest GPU compute capability major, 0 unknown */
    int dmabuf_probe;    /* see RAIL_GDR_PROBE_NONE */
    int path;            /* enum rail_path GPU->NIC, or RAIL_GDR_PATH_UNKNOWN */
    /* knobs (raw text for the level: parsed here) */
    const char *gdr_level; /* NCCL_NET_GDR_LEVEL, NULL/"" = unset */
    bool dmabuf_enable;    /* NCCL_DMABUF_ENABLE */
    bool flush_disable;    /* NCCL_GDR_FLUSH_DISABLE */
    bool force_flush;      /* NCCL_NET_FORCE_FLUSH */
};

struct rail_gdr_decision {
    int ptr_support;    /* NCCL_PTR_HOST always, | CUDA with peermem, | DMABUF when dma-buf works */
    bool peermem;       /* CUDA pointers register directly (ibv_reg_mr) */
    bool dmabuf;        /* CUDA memory registers through dma-buf */
    bool gdr;           /* ptr_support has CUDA or DMABUF */
    bool path_ok;       /* the path is within NCCL_NET_GDR_LEVEL (true when unknown) */
    int level;          /* enum rail_path of NCCL_NET_GDR_LEVEL (default PXB) */
    bool level_invalid; /* the knob was set but not understood (default used) */
    bool flush;         /* the plugin sets up the loopback flush QP and iflush reads */
    int force_flush;    /* props.forceFlush */
    char reason[400];   /* "GDR enabled for rxe0: ..." */
};

/* Parses NCCL_NET_GDR_LEVEL as NCCL does: a path name LOC..SYS (case-insensitive here), or a
 * legacy integer 0..4 = LOC, PIX, PXB, PHB, SYS (larger = SYS). Returns the enum rail_path or
 * -EINVAL. NULL/"" returns -ENOENT (unset). */
int rail_gdr_parse_level(const char *text);

/* Fills d from in. Never fails (in and d must be non-NULL). */
void rail_gdr_decide(const struct rail_gdr_inputs *in, struct rail_gdr_decision *d);

/* How regMr registers a buffer of the given NCCL_PTR_* type on an HCA with decision d. */
enum rail_gdr_reg_method {
    RAIL_GDR_REG_PLAIN = 0, /* ibv_reg_mr (host memory, or CUDA memory with peermem) */
    RAIL_GDR_REG_DMABUF,    /* CUDA memory: our own dma-buf fd, then ibv_reg_dmabuf_mr */
    RAIL_GDR_REG_REFUSE,    /* CUDA memory without any GPUDirect path, or an unknown type */
};
enum rail_gdr_reg_method rail_gdr_reg_method(const struct rail_gdr_decision *d, int type);

/* NCCL_IB_PCI_RELAXED_ORDERING (0 off, 1/2 on where available) and whether the verbs library
 * offers relaxed ordering (IBV_ACCESS_RELAXED_ORDERING through ibv_reg_mr_iova2). */
bool rail_gdr_relaxed_ordering(long long knob, bool verbs_has_ro);

#endif
