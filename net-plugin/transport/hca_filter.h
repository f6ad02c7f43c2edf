/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_HCA: which IB devices and ports the plugin may use. I/O-free.
 *
 * Syntax, as NCCL 2.30+: a comma list of `name[:port[:rail[:plane]]]`. The first character may be
 * `^` (exclude the listed HCAs instead of selecting them), the next one `=` (exact names;
 * otherwise each name is a prefix, so `mlx5_1` also matches `mlx5_10`), in that order
 * (`^=mlx5_1`). A port restricts the entry to that port; no port (or an empty field, `mlx5_0::2`)
 * means every port. rail and plane are the net v12 railId/planeId of the ports the entry selects
 * (empty or absent: unknown, -1). As NCCL, a port takes the rail and plane of the FIRST entry that
 * matches it, and an exclude list gives no rail or plane.
 *
 * Stricter than NCCL, which silently drops what it cannot use: an empty entry (`a,,b`, `a,`,
 * `:1`), a port that is not a decimal 1..255, a rail that is not 0..32767, a plane that is not
 * 0..16383 (bit 14 marks NCCL's merged planes), more than RAIL_HCA_PLANES_MAX distinct planes,
 * a fifth field, more than RAIL_HCA_FILTER_MAX entries, a name of RAIL_HCA_NAME_MAX or more
 * characters, white space, control characters or a misplaced `^`/`=` in a name are all -EINVAL
 * with the reason, so a typo does not silently select no HCA. */
#ifndef NCCL_RAIL_HCA_FILTER_H
#define NCCL_RAIL_HCA_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#define RAIL_HCA_FILTER_MAX 32 /* NCCL's MAX_IB_DEVS */
#define RAIL_HCA_NAME_MAX   64 /* bytes including the NUL, as IBV_SYSFS_NAME_MAX */
#define RAIL_HCA_PORT_ANY   (-1)
#define RAIL_HCA_ID_UNDEF   (-1) /* NCCL_NET_ID_UNDEF */
#define RAIL_HCA_RAIL_MAX   32767
#define RAIL_HCA_PLANE_MAX  16383     /* bit 14 is NCCL_IB_PLANE_VIRT_BIT */
#define RAIL_HCA_PLANE_VIRT (1 << 14) /* a merged device's planeId: this bit | member bits */
#define RAIL_HCA_PLANES_MAX 12        /* distinct planes NCCL accepts (index 0 = unknown) */

struct rail_hca_filter_entry {
    char name[RAIL_HCA_NAME_MAX];
    int port;  /* 1..255, or RAIL_HCA_PORT_ANY */
    int rail;  /* 0..RAIL_HCA_RAIL_MAX, or RAIL_HCA_ID_UNDEF */
    int plane; /* 0..RAIL_HCA_PLANE_MAX, or RAIL_HCA_ID_UNDEF */
};

struct rail_hca_filter {
    bool exclude; /* leading '^' */
    bool exact;   /* '=' : whole-name match instead of prefix */
    int n;        /* 0 = no filter: everything matches */
    struct rail_hca_filter_entry e[RAIL_HCA_FILTER_MAX];
};

/* Parse spec into *f. NULL or "" gives the match-all filter. Returns 0, or -EINVAL with the reason
 * (quoting the offending entry) in err; *f is then the match-all filter. err may be NULL. */
int rail_hca_filter_parse(const char *spec, struct rail_hca_filter *f, char *err, size_t errlen);

/* Whether device dev, port port (RAIL_HCA_PORT_ANY = "some port of dev") passes the filter.
 * An entry without a port matches every port; a port query of RAIL_HCA_PORT_ANY matches every
 * entry's port. The result is inverted for an exclude list. NULL f matches everything, NULL dev
 * nothing. */
bool rail_hca_filter_match(const struct rail_hca_filter *f, const char *dev, int port);

/* rail_hca_filter_match, and the rail and plane the port gets: those of the first entry that
 * matches it in a select list, RAIL_HCA_ID_UNDEF otherwise (no filter, an exclude list, or the
 * entry gives none). rail/plane may be NULL. */
bool rail_hca_filter_lookup(const struct rail_hca_filter *f, const char *dev, int port, int *rail,
                            int *plane);

/* railId/planeId of a device made of n ports, as NCCL 2.30+ reports its fused virtual NICs.
 * all_planes[0..nall) are the planes of every port the plugin uses, in device order: they number
 * the planes (index 0 for an unknown plane, then each distinct plane in order of appearance).
 * One port: its own rail and plane. Several: the rail they all share (RAIL_HCA_ID_UNDEF when any
 * differs or is unknown); plane = RAIL_HCA_PLANE_VIRT | the bit (1 << index) of each member's
 * plane. Returns 0, or -EINVAL (NULL arrays, n < 1, a member plane not in all_planes, or more
 * than RAIL_HCA_PLANES_MAX distinct planes). */
int rail_hca_merge_ids(const int *all_planes, int nall, const int *rails, const int *planes, int n,
                       int *rail, int *plane);

/* Write f back in NCCL_IB_HCA syntax ("" for match-all; empty fields where a later one is set),
 * for logs. rail_hca_filter_parse() of the
 * result gives f back. Returns 0, or -ENOSPC when buf is too small (buf then holds a truncated,
 * NUL-terminated prefix), -EINVAL for NULL arguments. */
int rail_hca_filter_format(const struct rail_hca_filter *f, char *buf, size_t len);

#endif
