/* SPDX-License-Identifier: Apache-2.0 */
/* The shm verbs provider's table and its installation (shm_verbs.h). */
#include "transport/shm_verbs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "safe_file.h"
#include "transport/net_verbs.h"
#include "transport/shm_dev.h"
#include "transport/shm_ece.h"
#include "transport/shm_qp.h"
#include "transport/verbs_lib.h"

const struct rail_verbs_ops rail_shm_verbs_ops = {
    .provider = "shm",
    .kernel_devices = false,
    .host_memory_only = true,
    .get_device_list = shm_get_device_list,
    .free_device_list = shm_free_device_list,
    .get_device_name = shm_get_device_name,
    .open_device = shm_open_device,
    .close_device = shm_close_device,
    .query_device = shm_query_device,
    .query_port = shm_query_port,
    .query_gid = shm_query_gid,
    .query_pkey = shm_query_pkey,
    .alloc_pd = shm_alloc_pd,
    .dealloc_pd = shm_dealloc_pd,
    .create_cq = shm_create_cq,
    .destroy_cq = shm_destroy_cq,
    .create_qp = shm_create_qp,
    .modify_qp = shm_modify_qp,
    .query_qp = shm_query_qp,
    .query_ece = shm_query_ece,
    .set_ece = shm_set_ece,
    .destroy_qp = shm_destroy_qp,
    .reg_mr = shm_reg_mr,
    .dereg_mr = shm_dereg_mr,
    .reg_dmabuf_mr = shm_reg_dmabuf_mr,
    .post_send = shm_post_send,
    .post_recv = shm_post_recv,
    .poll_cq = shm_poll_cq,
    .get_async_event = shm_get_async_event,
    .ack_async_event = shm_ack_async_event,
    .wc_status_str = rail_verbs_wc_status_name, /* no libibverbs in the process */
    .event_type_str = rail_verbs_event_name,
};

/* Yama's ptrace_scope (0..3), or -1 without Yama. */
static int yama_scope(void)
{
    char *text = NULL;
    size_t len = 0;
    int scope = -1;
    if (rail_file_read_all("/proc/sys/kernel/yama/ptrace_scope", 64, 0, &text, &len, NULL, 0) ==
        0) {
        scope = atoi(text);
        free(text);
    }
    return scope;
}

/* CAP_SYS_PTRACE (bit 19 of CapEff). */
static int has_sys_ptrace(void)
{
    char *text = NULL, *line;
    size_t len;
    int cap = 0;
    if (rail_file_read_all("/proc/self/status", 1 << 20, 0, &text, &len, NULL, 0) != 0)
        return 0;
    line = strstr(text, "\nCapEff:");
    unsigned long long v;
    if (line && sscanf(line + 1, "CapEff: %llx", &v) == 1)
        cap = (v >> 19) & 1;
    free(text);
    return cap;
}

int rail_shm_verbs_install(const char *fabric, char *note, size_t notelen, char *why, size_t whylen)
{
    note[0] = '\0';
    int scope = yama_scope();
    if (scope >= 3) {
        snprintf(why, whylen,
                 "NCCL_RAIL_VERBS_PROVIDER=shm: Yama ptrace_scope is %d (/proc/sys/kernel/yama/"
                 "ptrace_scope): no process may write into another's memory (process_vm_writev)",
                 scope);
        return -EPERM;
    }
    if (scope == 2 && !has_sys_ptrace()) {
        snprintf(why, whylen,
                 "NCCL_RAIL_VERBS_PROVIDER=shm: Yama ptrace_scope is 2 and this process lacks "
                 "CAP_SYS_PTRACE: it may not write into its peers' memory (fix: run as root, or "
                 "echo 1 > /proc/sys/kernel/yama/ptrace_scope)");
        return -EPERM;
    }
    if (scope == 1) {
        /* Siblings may not trace each other under scope 1: let any process of this user in. */
        if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0) {
            snprintf(why, whylen,
                     "NCCL_RAIL_VERBS_PROVIDER=shm: Yama ptrace_scope is 1 and "
                     "prctl(PR_SET_PTRACER_ANY) failed: %s",
                     strerror(errno));
            return -EPERM;
        }
        snprintf(note, notelen, "; PR_SET_PTRACER_ANY set (Yama ptrace_scope 1)");
    }
    /* A seccomp filter (containers) may refuse the calls themselves. */
    uint64_t probe = 0x5348, got = 0;
    struct iovec l = {&got, sizeof(got)}, r = {&probe, sizeof(probe)};
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(got) || got != probe) {
        snprintf(why, whylen,
                 "NCCL_RAIL_VERBS_PROVIDER=shm: process_vm_readv is refused here (%s): a "
                 "container's seccomp profile? (fix: --cap-add SYS_PTRACE or a profile that "
                 "allows process_vm_readv/writev)",
                 strerror(errno ? errno : EIO));
        return -EPERM;
    }
    int rc = shm_dev_setup(fabric, why, whylen);
    if (rc < 0)
        return rc;
    (void)rail_verbs_set_ops(&rail_shm_verbs_ops);
    return 0;
}
