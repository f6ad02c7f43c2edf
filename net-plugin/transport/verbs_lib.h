/* SPDX-License-Identifier: Apache-2.0 */
/* libibverbs, loaded at run time as NCCL loads it (NCCL_IBVERBS_LIB), never linked: the library
 * behind the verbs seam's default table (rail_verbs_default_ops, net_verbs.h). */
#ifndef NCCL_RAIL_VERBS_LIB_H
#define NCCL_RAIL_VERBS_LIB_H

#include <infiniband/verbs.h>
#include <stddef.h>

/* What is loaded when NCCL_IBVERBS_LIB is unset (rdma-core's runtime soname). */
#define RAIL_VERBS_DEFAULT_LIB "libibverbs.so.1"

/* Loads NCCL_IBVERBS_LIB (a path or soname; unset: RAIL_VERBS_DEFAULT_LIB) with RTLD_NOW |
 * RTLD_LOCAL and resolves every function the default table calls by its exported name and
 * symbol version, once per process (later calls return the first answer). 0, or -errno with one
 * line in why naming the variable, the library and dlerror() or the missing function. Optional
 * functions a library lacks (dma-buf registration, ...) turn their feature off with one INFO
 * line. The device discovery of the libibverbs provider and `nccl-rail doctor` call it; the shm
 * provider never does (no libibverbs in the process). */
int rail_verbs_load(char *why, size_t whylen);

/* What rail_verbs_load() loaded, or why it refused. */
struct rail_verbs_lib_info {
    int rc;               /* 0 loaded, -errno refused, 1 not tried yet */
    const char *variable; /* NCCL_IBVERBS_LIB's value, NULL when unset */
    const char *name;     /* what was passed to dlopen: the value or RAIL_VERBS_DEFAULT_LIB */
    char path[512];       /* the file the dynamic loader mapped (dlinfo), "" when none */
    char missing[256];    /* optional functions the library lacks, "" when none */
    char why[1024];       /* the refusal when rc < 0 */
};
void rail_verbs_lib_info(struct rail_verbs_lib_info *out);

/* The seam's own names of completion statuses and asynchronous events, for providers without
 * libibverbs (shm) and a library without the string functions. */
const char *rail_verbs_wc_status_name(enum ibv_wc_status status);
const char *rail_verbs_event_name(enum ibv_event_type type);

#endif
