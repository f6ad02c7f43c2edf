/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the two-host and soak programs: what the guest's sysfs says about links and RDMA
 * ports, counters of the plugin's log lines, and a control channel over TCP. */
#ifndef RAIL_IT_HOST_H
#define RAIL_IT_HOST_H

#include <stdint.h>

#include "it_util.h"

/* The first unsigned number in a sysfs file, or `dflt` when it cannot be read. */
unsigned long long it_sys_ull(const char *path, unsigned long long dflt);
unsigned long long it_tx_bytes(const char *ifname);
int it_carrier(const char *ifname); /* 1 up, 0 down, -1 unknown */
int it_port_active(const char *dev);
/* Polls until the condition holds or timeout_s passes: 0, or -1 on timeout. */
int it_wait_carrier(const char *ifname, int up, double timeout_s);
int it_wait_port(const char *dev, double timeout_s);

/* Counts of the plugin's log lines since it_log_count_start(). */
struct it_log_counts {
    unsigned failovers; /* "rail N (...) failed: ..." */
    unsigned rejoins;   /* "rail N (...) rejoined" */
    unsigned errors;    /* "returning error ... to NCCL" */
    unsigned warns;
};
extern struct it_log_counts g_it_logs;
void it_log_count_start(void);

/* 1 when fd has data (or EOF) to read now. */
int it_ctl_ready(int fd);
/* TCP control channel: listen on addr:port and accept one peer, or connect (retrying up to
 * timeout_s). Returns the fd or -1. */
int it_tcp_listen_accept(const char *addr, int port, double timeout_s);
int it_tcp_connect(const char *addr, int port, double timeout_s);

/* Kernel RDMA resources of a device from `rdma res show` (qp, mr): -1 when unknown. */
int it_rdma_res(const char *dev, long *qp, long *mr);

#endif
