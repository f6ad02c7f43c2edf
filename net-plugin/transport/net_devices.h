/* SPDX-License-Identifier: Apache-2.0 */
/* Devices of the net plugin (transport layer): the verbs ports that passed the filters, opened
 * once per process, and the plugin devices NCCL sees (groups of ports that connections stripe
 * over, rails/rail_group.c). */
#ifndef NCCL_RAIL_NET_DEVICES_H
#define NCCL_RAIL_NET_DEVICES_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/net_wire.h" /* RAIL_MAX_RAILS */

struct rail_reg_cache;
struct rail_dev;

/* Called for each port once it is open (the registration cache is set up by a higher layer):
 * 0, or a negative errno with `why` filled, and the port is skipped. */
typedef int (*rail_port_init_fn)(struct rail_dev *d, char *why, size_t whylen);

struct rail_dev {
    int index;
    char name[80];  /* unique name reported to NCCL ("rxe0", or "mlx5_0:2" for a 2nd port) */
    char ibdev[64]; /* verbs device name */
    int port;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    int link_layer; /* IBV_LINK_LAYER_INFINIBAND or IBV_LINK_LAYER_ETHERNET */
    enum ibv_mtu mtu;
    uint16_t lid;
    int gid_index;  /* RoCE: the selected source GID; IB: 0 */
    int pkey_index; /* NCCL_IB_PKEY_VALUE's index in the port's table, else NCCL_IB_PKEY */
    union ibv_gid gid;
    uint64_t guid;
    int speed;    /* Mbps */
    int rail_id;  /* net v12 railId from NCCL_IB_HCA's name:port:rail:plane, -1 unknown */
    int plane_id; /* net v12 planeId, likewise */
    int max_qp, max_qp_wr, max_cqe, max_sge;
    uint32_t max_msg; /* largest single RDMA message of the port */
    char *pci_path;   /* NULL when the device has no PCI parent (soft RoCE) */
    struct rail_reg_cache *cache;
    pthread_mutex_t async_lock;
    _Atomic uint64_t next_async_ns;
    atomic_int fatal;            /* a fatal device event was seen: every comm on it fails */
    atomic_int port_down;        /* the port reported PORT_ERR and no PORT_ACTIVE since */
    atomic_uint readback_logged; /* QP attribute read-back lines logged (net_link.c) */
    atomic_uint ece_logged;      /* ECE outcome lines logged (protocol/net_ece.c) */
};

/* A plugin device as NCCL sees it: a group of rails (ports) that connections stripe over. */
struct rail_netdev {
    int index;
    char name[160];  /* the rails' names joined by '+' */
    char reason[48]; /* how the group was formed (explicit, auto: ...) */
    int nrails;
    struct rail_dev *rail[RAIL_MAX_RAILS];
    int speed;             /* Mbps, the sum over the rails */
    int rail_id, plane_id; /* net v12 railId/planeId, as NCCL reports a fused vNIC */
};

/* Discover once per process. Returns the device count (> 0), or a negative errno after logging
 * ONE INFO line saying why the plugin declines (no devices, all filtered, ...). Later calls
 * return the cached result. */
int rail_devices_init(rail_port_init_fn port_init);
int rail_devices_count(void); /* plugin devices = groups */
struct rail_netdev *rail_device_group(int index);
int rail_ports_count(void);
struct rail_dev *rail_port(int index);

#endif
