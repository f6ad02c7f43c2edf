/* SPDX-License-Identifier: Apache-2.0 */
/* RoCE GID tables: NCCL's automatic GID index selection, the sysfs GID table reader (root-prefix
 * I/O only), GID text formatting, and the NCCL_RAIL_GID_INDEX per-HCA override list.
 *
 * NCCL's rule (net_ib, NCCL_IB_GID_INDEX=-1 on a RoCE port): start at index 0, then for each
 * candidate 1..n-1 in order
 *   - take it if its address family differs from the current index's, equals the wanted family
 *     (NCCL_IB_ADDR_FAMILY, AF_INET by default) and it lies in NCCL_IB_ADDR_RANGE;
 *   - otherwise, if it is in the wanted family, valid (not all-zero, not fe80:0:0:0::/64) and in
 *     range, take it when its RoCE version equals the wanted one (NCCL_IB_ROCE_VERSION_NUM, 2) and
 *     differs from the current index's version, or the current GID is invalid.
 * A GID is AF_INET when IPv4-mapped (::ffff:a.b.c.d) or IPv4-mapped multicast
 * (ff0e::ffff:a.b.c.d), AF_INET6 otherwise. An absent slot reads as the zero GID with an unknown
 * version, as the kernel reports empty slots. The net effect is the first valid RoCE v2
 * IPv4-mapped GID. */
#ifndef NCCL_RAIL_GID_SELECT_H
#define NCCL_RAIL_GID_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rail_gid_entry {
    uint8_t gid[16];  /* network byte order, as union ibv_gid.raw */
    int roce_version; /* 1, 2, 0 unknown */
    bool present;     /* false: empty/hidden slot (gid is then ignored) */
};

/* ---- GID properties ---- */

/* ::ffff:a.b.c.d (only; the multicast form is not "mapped" here but still counts as AF_INET). */
bool rail_gid_is_ipv4_mapped(const uint8_t gid[16]);
/* AF_INET for IPv4-mapped and IPv4-mapped multicast GIDs, AF_INET6 for everything else. */
int rail_gid_family(const uint8_t gid[16]);
/* Not all-zero, and not in fe80:0000:0000:0000::/64 (NCCL's configured && !link-local). */
bool rail_gid_is_valid(const uint8_t gid[16]);
/* Text form: dotted IPv4 for IPv4-mapped GIDs ("10.0.1.2"), IPv6 text otherwise
 * ("fe80::63f:72ff:feae:a283"). Returns 0, -ENOSPC when buf is too small (64 bytes always fit),
 * -EINVAL for NULL arguments. */
int rail_gid_format(const uint8_t gid[16], char *buf, size_t len);

/* ---- Address range (NCCL_IB_ADDR_RANGE) ---- */

struct rail_gid_range {
    int af;           /* AF_INET or AF_INET6 */
    int prefixlen;    /* 0..32 or 0..128; 0 matches everything */
    uint8_t addr[16]; /* AF_INET: addr[0..3] */
};

/* Parse "a.b.c.d/len" (af AF_INET) or "x:y::z/len" (AF_INET6). The address must be of family af.
 * Returns 0 or -EINVAL with the reason in err. (NCCL ignores a malformed range; callers that
 * want that should WARN and carry on without a range.) */
int rail_gid_range_parse(const char *cidr, int af, struct rail_gid_range *r, char *err,
                         size_t errlen);
/* Whether the GID's address lies in r: for AF_INET the GID's last 4 bytes are compared, for
 * AF_INET6 all 16. NULL r matches everything. */
bool rail_gid_in_range(const struct rail_gid_range *r, const uint8_t gid[16]);

/* ---- Selection ---- */

/* Exactly the index NCCL would pick (see the rule above): 0..n-1, never a failure for n >= 1
 * (the pick may be an unusable GID, e.g. index 0 link-local, when nothing better exists).
 * -ENOENT for n == 0, -EINVAL for bad arguments. range may be NULL. */
int rail_gid_select_nccl(const struct rail_gid_entry *tbl, int n, int af, int roce_version,
                         const struct rail_gid_range *range);

/* NCCL's pick, checked: returns it when that slot is present, valid, of family af and in range
 * (its RoCE version may still differ from roce_version when the table has no such GID, as NCCL
 * would then use it too); -ENOENT otherwise (empty table, or no usable GID: NCCL would use the
 * unusable index named in why). -EINVAL for bad arguments: af not AF_INET/AF_INET6, roce_version
 * not 1 or 2, n < 0, NULL tbl with n > 0, malformed addr_range (NULL or "" = no range).
 * why (may be NULL) explains the result, e.g. "index 3: RoCE v2 10.0.1.2". */
int rail_gid_select(const struct rail_gid_entry *tbl, int n, int af, int roce_version,
                    const char *addr_range, char *why, size_t whylen);

/* ---- sysfs ---- */

/* Read <root>/sys/class/infiniband/<dev>/ports/<port>/gids/<i> and gid_attrs/types/<i> for
 * i = 0 .. (highest numeric name in gids/) into tbl[0..max). types: "RoCE v2" -> 2, "IB/RoCE v1"
 * or "RoCE v1" -> 1, any other non-empty text -> 0 (unknown). A slot whose gid or type file is
 * missing, empty, unreadable (the kernel answers EINVAL for empty slots) or malformed is not
 * present. root NULL or "" = the real root.
 * Returns the number of slots filled (the table length, at most max), -ENOENT (or another
 * -errno) when the gids directory cannot be opened, -EINVAL for bad arguments (dev empty, with
 * '/' or a dot name; port outside 1..255; max < 0; NULL tbl with max > 0), -ENAMETOOLONG. */
int rail_gid_read_sysfs(const char *root, const char *dev, int port, struct rail_gid_entry *tbl,
                        int max);

/* ---- NCCL_RAIL_GID_INDEX=mlx5_0:3,mlx5_1:5 ---- */

#define RAIL_GID_OVERRIDES_MAX 32
#define RAIL_GID_DEV_NAME_MAX  64 /* bytes including the NUL */
#define RAIL_GID_INDEX_MAX     65535

struct rail_gid_override {
    char dev[RAIL_GID_DEV_NAME_MAX];
    int index;
};

struct rail_gid_overrides {
    int n;
    struct rail_gid_override o[RAIL_GID_OVERRIDES_MAX];
};

/* Comma list of <device>:<index>, exact device names, index decimal 0..RAIL_GID_INDEX_MAX.
 * NULL or "" = no overrides. -EINVAL with the reason for: an empty entry or name, a missing ':',
 * a bad index, a device listed twice, a name of RAIL_GID_DEV_NAME_MAX or more characters,
 * white space or control characters, more than RAIL_GID_OVERRIDES_MAX entries; *o is then empty. */
int rail_gid_overrides_parse(const char *spec, struct rail_gid_overrides *o, char *err,
                             size_t errlen);
/* The override for dev (exact name), or -1 when none (also for NULL o or dev). */
int rail_gid_override_for(const struct rail_gid_overrides *o, const char *dev);

/* Index of the PKey `value` (low 15 bits compared: the top bit is the membership bit) among
 * tbl[0..n) (host byte order), or -ENOENT. Pure. */
int rail_pkey_find(const uint16_t *tbl, int n, long value);

#endif
