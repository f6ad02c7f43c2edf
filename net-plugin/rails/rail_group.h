/* SPDX-License-Identifier: Apache-2.0 */
/* Rail groups: which HCA ports (rails) one NCCL device of the net plugin stripes over. I/O-free:
 * the caller lists the usable ports (and, when it has a topology, the path class from each GPU to
 * each port) and gets the groups back; docs/striping.md ("Rails") describes the rules.
 *
 * Explicit (NCCL_RAIL_RAILS non-empty): a comma list of groups, each a '+' list of ports named
 * `ibdev` or `ibdev:port` ("mlx5_0+mlx5_1,mlx5_2:1+mlx5_3:1"). Each name must match exactly one
 * usable port; an unknown or ambiguous name, a port named twice (in one group or in two), more
 * than RAIL_MAX_RAILS ports in a group, a group mixing IB and Ethernet ports, an empty element,
 * white space or a malformed port number is -EINVAL with the offending element in err (the caller
 * WARNs and builds the automatic grouping instead). Ports not named are not used.
 *
 * Automatic with GPUs: each GPU's nearest ports (every port at its best path class; when those
 * mix link layers, only the preferred link layer's) form its group. GPUs with the same nearest
 * set share one group. A port already taken by a lower-numbered GPU's group stays there: a later
 * GPU gets only the nearest ports still free, and joins the group of its first nearest port when
 * none is. Groups come in order of their first GPU, then every port nearest to no GPU as a
 * single-rail group, in port order.
 *
 * Automatic without GPUs (no topology, or no GPU in it): one group per link layer, all its ports
 * in port order; the link layer with the larger total speed first, IB first on a tie.
 *
 * The preferred link layer of a set of ports is the one with the larger total speed, IB on a tie.
 * An automatic set of more than RAIL_MAX_RAILS ports is cut into ceil(n / RAIL_MAX_RAILS) groups
 * of consecutive ports whose sizes differ by at most one, the larger ones first (9 ports: 5 + 4).
 * Rails are always in port order. A group's name is its ports' names joined by '+' (a single-port
 * group is named like its port). The same input always gives the same groups. */
#ifndef NCCL_RAIL_RAIL_GROUP_H
#define NCCL_RAIL_RAIL_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/net_wire.h" /* RAIL_MAX_RAILS */
#include "topo.h"          /* enum rail_path, enum rail_link_layer, struct rail_topo */

#define RAIL_GROUP_MAX_PORTS     64                   /* input ports; = RAIL_TOPO_MAX_NICS */
#define RAIL_GROUP_MAX_GPUS      64                   /* = RAIL_TOPO_MAX_GPUS (a uint64_t mask) */
#define RAIL_GROUP_MAX_GROUPS    RAIL_GROUP_MAX_PORTS /* every group holds at least one port */
#define RAIL_GROUP_PORT_NAME_MAX 80                   /* bytes of a port name including the NUL */
/* A group name: RAIL_MAX_RAILS port names, '+' between them, and the NUL. */
#define RAIL_GROUP_NAME_MAX (RAIL_MAX_RAILS * RAIL_GROUP_PORT_NAME_MAX)

/* One usable port, as device discovery found it. Strings are borrowed for the call only. */
struct rail_group_port {
    const char *name;  /* unique: "mlx5_0", or "mlx5_0:2" when the HCA has several ports */
    const char *ibdev; /* verbs device name, "mlx5_0" */
    int port;          /* 1..255 */
    int link_layer;    /* enum rail_link_layer; RAIL_LINK_UNKNOWN counts as IB */
    int speed_mbps;    /* >= 0, 0 unknown */
    const char *busid; /* PCI bus id "0000:4e:00.0", NULL when none (soft RoCE) */
    int numa;          /* NUMA node, -1 unknown; carried for logs, not used for grouping */
};

/* Path classes from each GPU to each port (port = index in the port array). n_gpus 0: no
 * topology. Values above RAIL_PATH_SYS (NET, DIS, garbage) count as SYS. */
struct rail_group_gpus {
    int n_gpus;
    uint8_t path[RAIL_GROUP_MAX_GPUS][RAIL_GROUP_MAX_PORTS]; /* enum rail_path */
};

enum rail_group_reason {
    RAIL_GROUP_EXPLICIT = 0,   /* NCCL_RAIL_RAILS */
    RAIL_GROUP_AUTO_GPU = 1,   /* nearest ports of the GPUs in `gpus` */
    RAIL_GROUP_AUTO_NOGPU = 2, /* no topology or no GPU: all ports of one link layer */
    RAIL_GROUP_AUTO_SPARE = 3, /* GPUs known, but this port is nearest to none of them */
};

struct rail_group {
    char name[RAIL_GROUP_NAME_MAX]; /* "mlx5_0+mlx5_1" */
    int nrails;                     /* 1..RAIL_MAX_RAILS */
    int port[RAIL_MAX_RAILS];       /* indices into the port array, in rail order */
    int speed_mbps;                 /* sum of the rails' speeds */
    int link_layer;                 /* RAIL_LINK_IB or RAIL_LINK_ETH */
    int reason;                     /* enum rail_group_reason */
    uint64_t gpus;                  /* AUTO_GPU: bit g set for each GPU g this group serves */
    int path;                       /* AUTO_GPU: path class of those GPUs to the rails, else -1 */
    int part, nparts;               /* a cut set: part 1..nparts; 1 of 1 otherwise */
};

struct rail_groups {
    int n;
    struct rail_group g[RAIL_GROUP_MAX_GROUPS]; /* ~45 KB: keep it static or on the heap */
};

/* Build the groups of nports ports. gpus NULL (or n_gpus 0): no topology. spec: the value of
 * NCCL_RAIL_RAILS, NULL or "" for the automatic grouping. Returns 0 (out->n >= 1 when nports >=
 * 1), or -EINVAL with the reason in err and out->n = 0: bad spec (naming the element), or bad
 * input (NULL or duplicate names, a port outside 1..255, a link layer that is not IB/ETH/unknown,
 * negative speed, more than RAIL_GROUP_MAX_PORTS ports or RAIL_GROUP_MAX_GPUS GPUs). err may be
 * NULL. With a bad spec, calling again with spec NULL gives the automatic grouping. */
int rail_group_build(const struct rail_group_port *ports, int nports,
                     const struct rail_group_gpus *gpus, const char *spec, struct rail_groups *out,
                     char *err, size_t errlen);

/* Fill out from a loaded topology: GPU g's path class to each port. A port maps to the topology
 * NIC of the same verbs name and port (a NIC with port 0 = any port), else to the NIC with the
 * same PCI bus id; a port that maps to none is SYS for every GPU. Returns 0, or -EINVAL for NULL
 * arguments or nports outside 0..RAIL_GROUP_MAX_PORTS. t with no GPU gives n_gpus 0. */
int rail_group_gpus_from_topo(const struct rail_topo *t, const struct rail_group_port *ports,
                              int nports, struct rail_group_gpus *out);

/* "explicit", "auto-gpu", "auto-nogpu", "auto-spare"; "?" for anything else. */
const char *rail_group_reason_name(int reason);

/* One line for INFO logs: "[0] rxe0+rxe2 2 rails 20000 Mbps (auto: no GPU)",
 * "[1] mlx5_0+mlx5_1 2 rails 800000 Mbps (auto: GPU 0-1 at PXB)", "... (NCCL_RAIL_RAILS)",
 * "... (auto: nearest to no GPU)", with ", part 1 of 2" inside the parentheses for a cut set.
 * Returns 0, -ENOSPC when buf is too small (truncated, NUL-terminated), -EINVAL for NULL. */
int rail_group_describe(const struct rail_group *g, int index, char *buf, size_t len);

#endif
