/* SPDX-License-Identifier: Apache-2.0 */
/* rail_net_it PLUGIN.so [--send-dev NAME] [--recv-dev NAME] [SCENARIO...]
 * Runs each scenario as two processes (receive side on --recv-dev, send side on --send-dev),
 * loading the plugin like NCCL does, and prints "PASS name" / "FAIL name" and a closing
 * "N passed, M failed". Without scenario names every scenario runs. With the shm verbs provider
 * (NCCL_RAIL_VERBS_PROVIDER=shm, devices shmN) the scenarios that need kernel verbs (RoCE GIDs,
 * GPUDirect) print "SKIP name (why)" and the closing line adds ", K skipped". */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_scenarios.h"

#define SCENARIO_TIMEOUT_S 240
/* Why a scenario does not run on the shm verbs provider (it_scenario.kernel_only). */
#define SHM_NO_GID "RoCE GID selection: the shm provider's ports are InfiniBand (no GID table)"
#define SHM_NO_GDR "GPUDirect: the shm provider registers host memory only (ptrSupport HOST)"

static const struct it_scenario k_scenarios[] = {
    {.name = "sizes", .recv_side = it_sizes_recv, .send_side = it_sizes_send},
    {.name = "sizes_no_eager",
     .recv_side = it_sizes_recv,
     .send_side = it_sizes_send,
     .env = "NCCL_RAIL_EAGER_MAX=0"},
    /* No flagged image at all with NCCL_RAIL_EAGER_POLL_MAX=0, not even of a 0-byte message: in
     * fault builds every plain write of image size on the sender fails on every rail (a
     * failure of the connection); other builds ignore the rule with a WARN. */
    {.name = "sizes_no_images",
     .recv_side = it_sizes_recv,
     .send_side = it_sizes_send,
     .env = "NCCL_RAIL_EAGER_POLL_MAX=0",
     .send_env = "NCCL_RAIL_FAULT=post_send:op=write,max=1048,count=0"},
    {.name = "sizes_4qps",
     .recv_side = it_sizes_recv,
     .send_side = it_sizes_send,
     .env = "NCCL_IB_QPS_PER_CONNECTION=4"},
    /* Adaptive routing with a small threshold: every message above 200 bytes goes as plain
     * writes and its completion as the size record; eager stops at 200 bytes. In fault builds
     * any write with immediate larger than the largest eager write (64-byte header + 200)
     * fails the connection, so a message sent the old way fails the scenario. */
    {.name = "sizes_ar",
     .recv_side = it_sizes_recv,
     .send_side = it_sizes_send,
     .env = "NCCL_IB_ADAPTIVE_ROUTING=1",
     .env2 = "NCCL_IB_AR_THRESHOLD=200",
     .send_env = "NCCL_RAIL_FAULT=post_send:op=write_imm,min=265,count=0"},
    /* NCCL_IB_ECE_ENABLE (it_ece.c): each side's one ECE line, bytes exact. */
    {.name = "ece", .recv_side = it_ece_recv, .send_side = it_ece_send},
    {.name = "ece_mask",
     .recv_side = it_ece_recv,
     .send_side = it_ece_send,
     .send_env = "NCCL_RAIL_SHM_ECE=7"},
    {.name = "ece_off",
     .recv_side = it_ece_recv,
     .send_side = it_ece_send,
     .send_env = "NCCL_IB_ECE_ENABLE=0"},
    {.name = "ece_none",
     .recv_side = it_ece_recv,
     .send_side = it_ece_send,
     .recv_env = "NCCL_RAIL_SHM_ECE=0"},
    {.name = "ece_v4", .recv_side = it_ece_recv, .send_side = it_ece_send},
    {.name = "ece_set_fault_recv",
     .recv_side = it_ece_recv,
     .send_side = it_ece_send,
     .recv_env = "NCCL_RAIL_FAULT=set_ece:count=0"},
    {.name = "ece_set_fault_send",
     .recv_side = it_ece_recv,
     .send_side = it_ece_send,
     .send_env = "NCCL_RAIL_FAULT=set_ece:count=0"},
    {.name = "multirecv", .recv_side = it_multi_recv, .send_side = it_multi_send},
    {.name = "multirecv_ar",
     .recv_side = it_multi_recv,
     .send_side = it_multi_send,
     .env = "NCCL_IB_ADAPTIVE_ROUTING=1",
     .env2 = "NCCL_IB_AR_THRESHOLD=200",
     .send_env = "NCCL_RAIL_FAULT=post_send:op=write_imm,min=265,count=0"},
    {.name = "multirecv_no_eager",
     .recv_side = it_multi_recv,
     .send_side = it_multi_send,
     .env = "NCCL_RAIL_EAGER_MAX=0"},
    {.name = "inflight32", .recv_side = it_inflight_a, .send_side = it_inflight_b},
    {.name = "inflight32_sq32",
     .recv_side = it_inflight_a,
     .send_side = it_inflight_b,
     .env = "NCCL_RAIL_SEND_QUEUE_DEPTH=32"},
    /* On two rails every message striped (NCCL_RAIL_STRIPE_MIN=0: its size record on the rail's
     * control QP) or eager (16 bounce slots, written on the control QP too): 32 of them in flight
     * each way, more than the control QP's 31 send WRs; records and eager writes that find it
     * full wait for completions, none is lost, every byte checked (net_qsize.h). */
    {.name = "inflight32_ctl",
     .recv_side = it_inflight_a,
     .send_side = it_inflight_b,
     .env = "NCCL_RAIL_STRIPE_MIN=0",
     .env2 = "NCCL_RAIL_EAGER_SLOTS=16"},
    {.name = "inflight32_4qps",
     .recv_side = it_inflight_a,
     .send_side = it_inflight_b,
     .env = "NCCL_IB_QPS_PER_CONNECTION=4"},
    {.name = "stream", .recv_side = it_stream_recv, .send_side = it_stream_send},
    {.name = "stream_4qps",
     .recv_side = it_stream_recv,
     .send_side = it_stream_send,
     .env = "NCCL_IB_QPS_PER_CONNECTION=4"},
    {.name = "stream_eager64k",
     .recv_side = it_stream_recv,
     .send_side = it_stream_send,
     .env = "NCCL_RAIL_EAGER_MAX=65536"},
    {.name = "eager_starved", .recv_side = it_starved_recv, .send_side = it_starved_send},
    {.name = "eager_starved_3slots",
     .recv_side = it_starved_recv,
     .send_side = it_starved_send,
     .env = "NCCL_RAIL_EAGER_SLOTS=3"},
    {.name = "recv_larger", .recv_side = it_larger_recv, .send_side = it_larger_send},
    {.name = "recv_smaller", .recv_side = it_smaller_recv, .send_side = it_smaller_send},
    {.name = "listen_reuse", .recv_side = it_reuse_recv, .send_side = it_reuse_send},
    {.name = "close_inflight", .recv_side = it_close_recv, .send_side = it_close_send},
    {.name = "sender_killed",
     .recv_side = it_killsend_recv,
     .send_side = it_killsend_send,
     .send_killed = 1},
    {.name = "receiver_killed",
     .recv_side = it_killrecv_recv,
     .send_side = it_killrecv_send,
     .recv_killed = 1},
    {.name = "garbage_handle", .recv_side = it_idle, .send_side = it_garbage_send},
    {.name = "hostile_peer", .recv_side = it_hostile_recv, .send_side = it_hostile_send},
    {.name = "versions", .recv_side = it_idle, .send_side = it_versions},
    {.name = "shim_v8", .recv_side = it_v8_recv, .send_side = it_v8_send},
    {.name = "socket_ifname",
     .recv_side = it_ifname_recv,
     .send_side = it_ifname_send,
     .env = "NCCL_SOCKET_IFNAME==veth3"},
    {.name = "decline_hca_filter",
     .recv_side = it_idle,
     .send_side = it_idle,
     .env = "NCCL_IB_HCA=^rxe",
     .decline = "NCCL_IB_HCA",
     .decline_warn = 1},
    {.name = "decline_memlock",
     .recv_side = it_idle,
     .send_side = it_idle,
     .low_memlock = 1,
     .decline = "RLIMIT_MEMLOCK"},
    {.name = "gid_override",
     .recv_side = it_larger_recv,
     .send_side = it_larger_send,
     .env = "NCCL_RAIL_GID_INDEX=rxe0:1,rxe1:1",
     .kernel_only = SHM_NO_GID},
    {.name = "decline_gid_index",
     .recv_side = it_idle,
     .send_side = it_idle,
     .env = "NCCL_IB_GID_INDEX=200",
     .decline = "GID index 200",
     .kernel_only = SHM_NO_GID},
    {.name = "remote_access_error", .recv_side = it_rae_recv, .send_side = it_rae_send},
    {.name = "gdr_off",
     .recv_side = it_gdr_off_recv,
     .send_side = it_gdr_off_send,
     .setup = it_gdr_setup_off,
     .kernel_only = SHM_NO_GDR},
    {.name = "gdr_flush",
     .recv_side = it_gdr_flush_recv,
     .send_side = it_gdr_send,
     .setup = it_gdr_setup_ampere,
     .kernel_only = SHM_NO_GDR},
    {.name = "gdr_hopper",
     .recv_side = it_gdr_hopper_recv,
     .send_side = it_gdr_send,
     .setup = it_gdr_setup_hopper,
     .kernel_only = SHM_NO_GDR},
    {.name = "gdr_force_flush",
     .recv_side = it_gdr_force_recv,
     .send_side = it_gdr_send,
     .env = "NCCL_NET_FORCE_FLUSH=1",
     .setup = it_gdr_setup_hopper,
     .kernel_only = SHM_NO_GDR},
    {.name = "mr_stream", .recv_side = it_mr_recv, .send_side = it_mr_stream_send},
    {.name = "mr_stream_split_qps",
     .recv_side = it_mr_recv,
     .send_side = it_mr_stream_send,
     .env = "NCCL_IB_QPS_PER_CONNECTION=4",
     .env2 = "NCCL_IB_SPLIT_DATA_ON_QPS=1"},
    {.name = "mr_stream_no_failover",
     .recv_side = it_mr_recv,
     .send_side = it_mr_stream_send,
     .env = "NCCL_RAIL_FAILOVER=0"},
    {.name = "mr_failover",
     .recv_side = it_mr_recv,
     .send_side = it_mr_failover_send,
     .env = "NCCL_IB_TIMEOUT=12",
     .env2 = "NCCL_IB_RETRY_CNT=3"},
    {.name = "mr_alldown",
     .recv_side = it_mr_recv,
     .send_side = it_mr_alldown_send,
     .env = "NCCL_IB_TIMEOUT=12",
     .env2 = "NCCL_IB_RETRY_CNT=3"},
    {.name = "mr_alldown_inflight",
     .recv_side = it_mr_recv,
     .send_side = it_mr_alldown_inflight_send,
     .env = "NCCL_IB_TIMEOUT=12",
     .env2 = "NCCL_IB_RETRY_CNT=3"},
    {.name = "mr_rejoin",
     .recv_side = it_mr_recv,
     .send_side = it_mr_rejoin_send,
     .env = "NCCL_IB_TIMEOUT=12",
     .env2 = "NCCL_IB_RETRY_CNT=3"},
    /* it_vfault.c: injected verbs faults (NCCL_RAIL_FAULT, fault-injection builds) */
    {.name = "vf_knob",
     .recv_side = it_vf_knob_recv,
     .send_side = it_vf_knob_send,
     .env = "NCCL_RAIL_FAULT=bogus_kind",
     .setup = it_vf_knob_setup},
    {.name = "vf_post_recv_connect",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=post_recv"},
    {.name = "vf_reg_mr",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=reg_mr:min=4194304,max=4194304"},
    {.name = "vf_post_send",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=post_send:min=65536,after=2"},
    {.name = "vf_post_send_cts",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=post_send:op=write,min=64,after=3"},
    {.name = "vf_wc_retry",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=wc_retry:min=65536,after=2"},
    {.name = "vf_wc_rem_access",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=wc_rem_access:op=write,min=64,after=1"},
    {.name = "vf_cq_overrun",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=cq_overrun:after=3"},
    {.name = "vf_qp_fatal",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=qp_fatal:after=3"},
    {.name = "vf_device_fatal",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=device_fatal:after=1"},
    {.name = "vf_qp_fatal_logged",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .env = "NCCL_IB_RETURN_ASYNC_EVENTS=0",
     .send_env = "NCCL_RAIL_FAULT=qp_fatal:after=3"},
    {.name = "vf_device_fatal_logged",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .env = "NCCL_IB_RETURN_ASYNC_EVENTS=0",
     .recv_env = "NCCL_RAIL_FAULT=device_fatal:after=1"},
    {.name = "vf_gdr_flush_post",
     .recv_side = it_gdr_flush_fault_recv,
     .send_side = it_gdr_flush_fault_send,
     .recv_env = "NCCL_RAIL_FAULT=post_send:op=read",
     .setup = it_gdr_setup_ampere,
     .kernel_only = SHM_NO_GDR},
    {.name = "vf_gdr_flush_wc",
     .recv_side = it_gdr_flush_fault_recv,
     .send_side = it_gdr_flush_fault_send,
     .recv_env = "NCCL_RAIL_FAULT=wc_retry:op=read",
     .setup = it_gdr_setup_ampere,
     .kernel_only = SHM_NO_GDR},
    {.name = "vf2_post_send",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=post_send:dev=rxe0,min=65536,after=2"},
    {.name = "vf2_eager",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=post_send:dev=rxe0,op=write_imm,min=1024,max=8192"},
    /* flagged eager images (the 0- and 1-byte messages: plain writes of 24 and 32 bytes): a
     * refused post, and one that landed but reports an error, so the copy sent again on the
     * other rail lands on a message the receiver may already have taken */
    {.name = "vf2_eager_image",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=post_send:dev=rxe0,op=write,max=1048"},
    {.name = "vf2_eager_image_wc",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=wc_retry:dev=rxe0,op=write,max=1048"},
    {.name = "vf2_cts",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=post_send:dev=rxe1,op=write,min=64,after=1"},
    /* rail 0's data receive QP holds 158 WRs from connect (the sender's send queue depth 126 + 32
     * spare, wire version 6), the QP facing the control QP 63 (its 31 + 32: net_qsize.h); the
     * 222nd post is the first re-post of consumed receives (batched, net_recv.c) */
    {.name = "vf2_post_recv",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=post_recv:dev=rxe1,after=221"},
    {.name = "vf2_wc_retry",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=wc_retry:dev=rxe0,min=65536,after=2"},
    {.name = "vf2_wc_flush",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .recv_env = "NCCL_RAIL_FAULT=wc_flush:dev=rxe1,op=write,min=64,after=1"},
    {.name = "vf2_port_err",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=port_err:dev=rxe0,after=4"},
    {.name = "vf2_device_fatal",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=device_fatal:dev=rxe0,after=4"},
    {.name = "vf2_cts_stall",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=post_send:dev=rxe0,op=write_imm,min=1024,max=8192",
     .recv_env = "NCCL_RAIL_FAULT=stall:dev=rxe1,op=write,max=128"},
    {.name = "vf2_wc_retry_all",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=wc_retry:min=65536,after=2,count=0"},
    {.name = "vf2_port_err_all",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=port_err:after=4"},
    {.name = "vf2_wc_rem_access",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=wc_rem_access:dev=rxe0,min=65536,after=2"},
    {.name = "vf2_cq_overrun",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=cq_overrun:dev=rxe0,after=4"},
    {.name = "vf2_qp_fatal",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=qp_fatal:dev=rxe0,after=4"},
    {.name = "vf2_qp_fatal_all",
     .recv_side = it_vf_recv,
     .send_side = it_vf_send,
     .send_env = "NCCL_RAIL_FAULT=qp_fatal:after=4"},
    {.name = "mr_onepiece",
     .recv_side = it_mr_onepiece_recv,
     .send_side = it_mr_onepiece_send,
     .env = "NCCL_IB_TIMEOUT=12",
     .env2 = "NCCL_IB_RETRY_CNT=3"},
    {.name = "mr_record_ahead", .recv_side = it_mr_record_recv, .send_side = it_mr_record_send},
    {.name = "mr_record_ahead_off",
     .recv_side = it_mr_record_recv,
     .send_side = it_mr_record_send,
     .env = "NCCL_RAIL_CONTROL_QP=0"},
};
#define NSCENARIOS (int)(sizeof(k_scenarios) / sizeof(k_scenarios[0]))

static const char *g_plugin, *g_send_dev = "rxe0", *g_recv_dev = "rxe1";

/* Drops CAP_IPC_LOCK and lowers RLIMIT_MEMLOCK to 64 KiB, as in an unprivileged container. */
static int limit_memlock(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    struct rlimit rl = {65536, 65536};
    if (syscall(SYS_capget, &h, d) != 0)
        return it_fail("capget: %s", strerror(errno));
    d[0].effective &= ~(1u << CAP_IPC_LOCK);
    d[0].permitted &= ~(1u << CAP_IPC_LOCK);
    d[0].inheritable &= ~(1u << CAP_IPC_LOCK);
    if (syscall(SYS_capset, &h, d) != 0)
        return it_fail("capset: %s", strerror(errno));
    if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        return it_fail("setrlimit: %s", strerror(errno));
    return 0;
}

static int run_side(const struct it_scenario *sc, int recv, int ctl)
{
    struct it_plugin p;
    struct it_side s = {.p = &p, .ctl = ctl, .name = sc->name};
    g_it_role = recv ? "recv" : "send";
    /* Device and interface names as the fabric in use calls them (it_fabric_text). */
    if (sc->env)
        putenv((char *)it_fabric_text(sc->env));
    if (recv ? sc->recv_env : sc->send_env)
        putenv((char *)it_fabric_text(recv ? sc->recv_env : sc->send_env));
    if (sc->env2)
        putenv((char *)it_fabric_text(sc->env2));
    if (sc->low_memlock && limit_memlock())
        return 1;
    if (sc->setup && sc->setup(g_plugin))
        return 1;
    if (sc->decline)
        return it_load_declines(g_plugin, it_fabric_text(sc->decline), sc->decline_warn);
    if (it_load(&p, g_plugin))
        return 1;
    s.dev = it_dev(&p, recv ? g_recv_dev : g_send_dev);
    s.peer_dev = it_dev(&p, recv ? g_send_dev : g_recv_dev);
    if (s.dev < 0)
        return it_fail("device %s not found among %d", recv ? g_recv_dev : g_send_dev, p.ndev);
    int rc = (recv ? sc->recv_side : sc->send_side)(&s);
    it_unload(&p);
    return rc;
}

static pid_t spawn(const struct it_scenario *sc, int recv, int ctl, int other)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(other);
        _exit(run_side(sc, recv, ctl) ? 1 : 0);
    }
    return pid;
}

/* Waits for pid until the deadline; kills it after. Returns the wait status or -1. */
static int reap(pid_t pid, double deadline)
{
    int st;
    while (it_now() < deadline) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return -1;
        usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

static int side_ok(int st, int killed, const char *side, const char *name)
{
    if (st == -1) {
        fprintf(stderr, "%s: %s side hung (killed after %d s)\n", name, side, SCENARIO_TIMEOUT_S);
        return 0;
    }
    if (killed)
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "%s: %s side died of signal %d\n", name, side, WTERMSIG(st));
        return 0;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: %s side exited with status %d\n", name, side,
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return 0;
    }
    return 1;
}

static int g_skipped;

/* 1 passed, 0 failed, -1 skipped (not for this verbs provider). */
static int run_scenario(const struct it_scenario *sc)
{
    int sv[2];
    const char *prov = getenv("NCCL_RAIL_VERBS_PROVIDER");
    if (sc->kernel_only && prov && strcmp(prov, "shm") == 0) {
        printf("SKIP %s (%s)\n", sc->name, sc->kernel_only);
        fflush(stdout);
        g_skipped++;
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    double t0 = it_now(), deadline = t0 + SCENARIO_TIMEOUT_S;
    pid_t r = spawn(sc, 1, sv[0], sv[1]);
    pid_t s = spawn(sc, 0, sv[1], sv[0]);
    close(sv[0]);
    close(sv[1]);
    int rs = reap(r, deadline), ss = reap(s, deadline);
    int ok = side_ok(rs, sc->recv_killed, "recv", sc->name) &
             side_ok(ss, sc->send_killed, "send", sc->name);
    printf("%s %s (%.1f s)\n", ok ? "PASS" : "FAIL", sc->name, it_now() - t0);
    fflush(stdout);
    return ok;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, any = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s PLUGIN.so [--send-dev N] [--recv-dev N] [SCENARIO...]\n",
                argv[0]);
        return 2;
    }
    g_plugin = argv[1];
    signal(SIGPIPE, SIG_IGN);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--send-dev") && i + 1 < argc)
            g_send_dev = argv[++i];
        else if (!strcmp(argv[i], "--recv-dev") && i + 1 < argc)
            g_recv_dev = argv[++i];
    }
    printf("rail_net_it: sending on %s, receiving on %s\n", g_send_dev, g_recv_dev);
    fflush(stdout);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--send-dev") || !strcmp(argv[i], "--recv-dev")) {
            i++;
            continue;
        }
        int found = 0;
        for (int k = 0; k < NSCENARIOS; k++) {
            if (!strcmp(argv[i], k_scenarios[k].name)) {
                found = any = 1;
                int ok = run_scenario(&k_scenarios[k]);
                passed += ok == 1;
                failed += ok == 0;
            }
        }
        if (!found) {
            fprintf(stderr, "unknown scenario '%s'\n", argv[i]);
            failed++;
            any = 1;
        }
    }
    for (int k = 0; !any && k < NSCENARIOS; k++) {
        int ok = run_scenario(&k_scenarios[k]);
        passed += ok == 1;
        failed += ok == 0;
    }
    if (g_skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, g_skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
