/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_VERBS_PROVIDER=shm: a userspace verbs provider for machines without RDMA, a test
 * provider behind the verbs seam (struct rail_verbs_ops). Devices shm0..shm3 on a host-wide
 * shared-memory fabric (NCCL_RAIL_SHM_FABRIC, shm_fabric.h: shm0-shm1 and shm2-shm3 cabled as two
 * rails), RC QPs between processes of this host, RDMA WRITE / WRITE WITH IMM / READ straight into
 * the peer's registered memory (process_vm_writev / process_vm_readv), completions and
 * immediates, ports that go down and up, host memory only. The SoftRoCE VM stays the proof on real
 * kernel verbs; docs/net-plugin.md, "The shm verbs provider". */
#ifndef NCCL_RAIL_SHM_VERBS_H
#define NCCL_RAIL_SHM_VERBS_H

#include <stddef.h>

/* The shm table. */
extern const struct rail_verbs_ops rail_shm_verbs_ops;

/* Checks that this process may write into its siblings (ptrace access: Yama's ptrace_scope,
 * seccomp), maps the fabric and puts the shm table in use, before any device is opened. 0, or
 * -errno with one line saying why in why (the plugin then declines). `note` gets what the
 * provider did to make it work (e.g. "PR_SET_PTRACER_ANY set (Yama ptrace_scope 1)"), or "". */
int rail_shm_verbs_install(const char *fabric, char *note, size_t notelen, char *why,
                           size_t whylen);

#endif
