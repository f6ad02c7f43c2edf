/* SPDX-License-Identifier: Apache-2.0 */
/* Root-prefixed access to /sys and /proc, and the facts the topology needs from them (IB port
 * speed, link layer and state; PCIe max link; peer-memory GDR).
 *
 * Every path argument is absolute as seen on the node ("/sys/class/infiniband"); it is resolved
 * beneath root ("/" in production; a snapshot or fixture directory: NCCL_RAIL_SYSFS_ROOT, doctor
 * --root) one component at a time (root_path.h): a relative link that stays inside is followed,
 * an absolute link or ".." above the root is -EXDEV, so nothing outside the root is opened.
 * Functions return 0 (or a count) on success and a negative errno otherwise. Nothing is cached. */
#ifndef NCCL_RAIL_TOPO_SYSFS_H
#define NCCL_RAIL_TOPO_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#define RAIL_SYSFS_NAME_LEN 256

/* NCCL_RAIL_SYSFS_ROOT ("/" when unset). A value that is not an existing directory is used as
 * given (every read under it fails) after one WARN per process naming it. */
const char *rail_sysfs_root_param(void);

/* Read a small text file; trailing whitespace is removed. Returns the length or -errno
 * (-ENAMETOOLONG when root + path does not fit, -EFBIG when the file does not fit in buf,
 * -EINVAL/-EISDIR when it is not a regular file, -ELOOP when it is a symlink). Never blocks:
 * safe_file.h. */
int rail_sysfs_read(const char *root, const char *path, char *buf, size_t len);
/* True when path exists beneath root (any file type, links followed beneath the root). */
bool rail_sysfs_exists(const char *root, const char *path);
/* The resolved path as seen in the root ("/sys/devices/pci0000:48/..."), never leaving it:
 * -EXDEV for an absolute link or ".." above the root. */
int rail_sysfs_realpath(const char *root, const char *path, char *out, size_t len);
/* A name (from sysfs or the user) that is safe to paste into a path as one component: not empty,
 * no '/', not "." or "..", shorter than max_len. */
bool rail_sysfs_name_ok(const char *name, size_t max_len);
/* Entry names of a directory (no "." or ".."), sorted in version order (mlx5_2 < mlx5_10).
 * Returns the number stored (at most max) or -errno. */
int rail_sysfs_list(const char *root, const char *dir, char (*names)[RAIL_SYSFS_NAME_LEN], int max);

/* One IB/RoCE port as sysfs describes it: /sys/class/infiniband/<dev>/ports/<port>/. */
struct rail_sysfs_ib_port {
    int speed_mbps; /* from "rate" ("400 Gb/sec (4X NDR)", rail_ib_rate_parse), 0 unknown */
    int link_layer; /* enum rail_link_layer from "link_layer" */
    int state;      /* IBV_PORT_* number from "state" ("4: ACTIVE"), -1 unknown */
    bool active;    /* state == 4, or state unknown */
};
/* 0 when the port directory exists (individual files may still be missing: fields unknown),
 * -EINVAL for a device name with '/' or "..", -ENOENT otherwise. */
int rail_sysfs_ib_port(const char *root, const char *dev, int port, struct rail_sysfs_ib_port *out);

/* PCIe link of a device the way NCCL reads it: min(max_link_speed/width of the device, of its
 * upstream port). busid "0000:4d:00.0". gen 1..6, width in lanes. -ENOENT when unknown. */
int rail_sysfs_pcie_link(const char *root, const char *busid, int *gen, int *width);
/* numa_node of a PCI device (-1 when unknown or absent). */
int rail_sysfs_pci_numa(const char *root, const char *busid);

/* NCCL's peer-memory GDR check: nv_mem or nv_mem_nc memory_peers, or the nvidia_peermem module. */
bool rail_sysfs_peermem(const char *root);

#endif
