/* SPDX-License-Identifier: Apache-2.0 */
/* Paths under a root directory (doctor --root, NCCL_RAIL_SYSFS_ROOT): a snapshot of another
 * machine must never make us open a file outside it.
 *
 * A path ("/sys/class/infiniband/mlx5_0/ports/1/rate", as seen on the snapshot's machine) is
 * resolved one component at a time from a descriptor of the root, each component opened with
 * O_NOFOLLOW relative to its parent (openat), the way openat2(RESOLVE_BENEATH) does it in the
 * kernel, and on every kernel:
 *  - a symbolic link is followed only when it is relative (sysfs links are: "../../devices/...");
 *    an absolute link is -EXDEV (it names the other machine's file, or this machine's);
 *  - ".." above the root is -EXDEV (it does not stop at the root silently);
 *  - at most RAIL_ROOT_MAX_LINKS links per path (-ELOOP), directories at most RAIL_ROOT_MAX_DEPTH
 *    deep (-ENAMETOOLONG);
 *  - RAIL_ROOT_NOFOLLOW: the last component must not be a symbolic link (-ELOOP).
 * The root "/" (or NULL or "") is this machine: the kernel resolves the path as usual. */
#ifndef NCCL_RAIL_ROOT_PATH_H
#define NCCL_RAIL_ROOT_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define RAIL_ROOT_MAX_LINKS 40
#define RAIL_ROOT_MAX_DEPTH 128

enum {
    RAIL_ROOT_NOFOLLOW = 1 << 0, /* refuse a symbolic link as the last component */
};

/* True for the live root ("/", "" or NULL). */
bool rail_root_is_live(const char *root);

/* open(2) of path beneath root with oflags (O_CLOEXEC and O_NOFOLLOW are added; O_PATH,
 * O_DIRECTORY, O_NONBLOCK as the caller needs). Returns the descriptor or -errno. When canon is
 * not NULL it receives the resolved path as seen in the root ("/sys/devices/pci0000:17/...",
 * -ENAMETOOLONG when it does not fit). path must be absolute; a relative one is taken from the
 * root as well. */
int rail_root_open(const char *root, const char *path, int oflags, int rflags, char *canon,
                   size_t canonlen);

/* strerror(-rc), with -EXDEV said as what it means here ("leaves the root: ..."). */
const char *rail_root_strerror(int rc);

/* The resolved path as seen in the root (realpath without leaving it): 0 or -errno. */
int rail_root_resolve(const char *root, const char *path, char *out, size_t len);

#endif
