/* SPDX-License-Identifier: Apache-2.0 */
/* Scenarios of the net plugin integration test. Each runs as two processes: the receive side
 * (device --recv-dev) and the send side (device --send-dev), joined by a control socket. A side
 * returns 0 on success; it_main.c forks, times out and reports. */
#ifndef RAIL_IT_SCENARIOS_H
#define RAIL_IT_SCENARIOS_H

#include "it_util.h"

struct it_side {
    struct it_plugin *p; /* NULL for sides that do not load the plugin */
    int dev;             /* this side's device */
    int peer_dev;        /* the other side's device (for two-way scenarios) */
    int ctl;
    const char *name; /* the scenario's */
};

typedef int (*it_side_fn)(struct it_side *s);

struct it_scenario {
    const char *name;
    it_side_fn recv_side, send_side;
    int send_killed; /* the send side is expected to die by SIGKILL */
    int recv_killed;
    const char *env;      /* "NAME=VALUE" set in both sides before loading, or NULL */
    const char *env2;     /* a second one, or NULL */
    const char *send_env; /* "NAME=VALUE" set in the send side only, or NULL */
    const char *recv_env; /* ... in the receive side only */
    const char *decline;  /* init must fail with a last line containing this (both sides), */
    int decline_warn;     /* a WARN (the user's own value is wrong) when set, else an INFO */
    int low_memlock;      /* sides run with a 64 KiB RLIMIT_MEMLOCK and without CAP_IPC_LOCK */
    int (*setup)(const char *plugin); /* runs in both sides before loading, or NULL */
    /* Not on the shm verbs provider, for this reason (printed with SKIP), or NULL. */
    const char *kernel_only;
};

/* it_data.c */
int it_sizes_recv(struct it_side *s);
int it_sizes_send(struct it_side *s);
int it_multi_recv(struct it_side *s);
int it_multi_send(struct it_side *s);
int it_inflight_a(struct it_side *s);
int it_inflight_b(struct it_side *s);
int it_larger_recv(struct it_side *s);
int it_larger_send(struct it_side *s);
int it_smaller_recv(struct it_side *s);
int it_smaller_send(struct it_side *s);
int it_reuse_recv(struct it_side *s);
int it_reuse_send(struct it_side *s);

/* it_ece.c */
int it_ece_recv(struct it_side *s);
int it_ece_send(struct it_side *s);

/* it_eager.c */
int it_starved_recv(struct it_side *s);
int it_starved_send(struct it_side *s);

/* it_stream.c */
int it_stream_recv(struct it_side *s);
int it_stream_send(struct it_side *s);

/* it_fault.c */
int it_close_recv(struct it_side *s);
int it_close_send(struct it_side *s);
int it_killsend_recv(struct it_side *s);
int it_killsend_send(struct it_side *s);
int it_killrecv_recv(struct it_side *s);
int it_killrecv_send(struct it_side *s);
int it_garbage_send(struct it_side *s);
int it_hostile_recv(struct it_side *s);
int it_hostile_send(struct it_side *s);
int it_versions(struct it_side *s);
int it_rae_recv(struct it_side *s);
int it_rae_send(struct it_side *s);
int it_idle(struct it_side *s);

/* it_shim.c */
int it_v8_recv(struct it_side *s);
int it_v8_send(struct it_side *s);
int it_ifname_recv(struct it_side *s);
int it_ifname_send(struct it_side *s);

/* it_gdr.c: GPUDirect with the fake libcuda */
int it_gdr_setup_off(const char *plugin);
int it_gdr_setup_ampere(const char *plugin);
int it_gdr_setup_hopper(const char *plugin);
int it_gdr_off_recv(struct it_side *s);
int it_gdr_off_send(struct it_side *s);
int it_gdr_flush_recv(struct it_side *s);
int it_gdr_hopper_recv(struct it_side *s);
int it_gdr_force_recv(struct it_side *s);
int it_gdr_send(struct it_side *s);
int it_gdr_flush_fault_recv(struct it_side *s); /* fault-injection builds */
int it_gdr_flush_fault_send(struct it_side *s);
/* it_multirail.c (pass with a note unless both devices are rail groups, in the VM as root) */
int it_mr_recv(struct it_side *s);
int it_mr_stream_send(struct it_side *s);
int it_mr_failover_send(struct it_side *s);
int it_mr_alldown_send(struct it_side *s);
int it_mr_alldown_inflight_send(struct it_side *s);
int it_mr_rejoin_send(struct it_side *s);
/* Shared with it_onepiece.c: 1 when a multi-rail scenario can run (prints why not otherwise);
 * every fabric link up and the groups' ports ACTIVE again (links: it_link.h). */
int it_mr_applicable(struct it_side *s);
int it_links_restore(struct it_side *s);
/* it_onepiece.c */
int it_mr_onepiece_recv(struct it_side *s);
int it_mr_onepiece_send(struct it_side *s);
/* it_record.c */
int it_mr_record_recv(struct it_side *s);
int it_mr_record_send(struct it_side *s);

/* it_vfault.c: injected verbs faults (NCCL_RAIL_FAULT; fault-injection builds only) */
int it_vf_recv(struct it_side *s);
int it_vf_send(struct it_side *s);
int it_vf_knob_setup(const char *plugin);
int it_vf_knob_recv(struct it_side *s);
int it_vf_knob_send(struct it_side *s);

#endif
