/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_HCA: which IB devices and ports the plugin may use. I/O-free.
 *
 * Syntax, as NCCL: a comma list of `name[:port]`. The first character may be `^` (exclude the
 * listed HCAs instead of selecting them), the next one `=` (exact names; otherwise each name is a
 * prefix, so `mlx5_1` also matches `mlx5_10`), in that order (`^=mlx5_1`). A port restricts the
 * entry to that port, no port means every port. Fields after the port (NCCL 2.30's `:rail:plane`)
 * are accepted and ignored.
 *
 * Stricter than NCCL, which silently drops what it cannot use: an empty entry (`a,,b`, `a,`,
 * `:1`), a port that is not a decimal 1..255, more than RAIL_HCA_FILTER_MAX entries, a name of
 * RAIL_HCA_NAME_MAX or more characters, white space, control characters or a misplaced `^`/`=`
 * in a name are all -EINVAL with the reason, so a typo does not silently select no HCA. */
#ifndef NCCL_RAIL_HCA_FILTER_H
#define NCCL_RAIL_HCA_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#define RAIL_HCA_FILTER_MAX 32 /* NCCL's MAX_IB_DEVS */
#define RAIL_HCA_NAME_MAX   64 /* bytes including the NUL, as IBV_SYSFS_NAME_MAX */
#define RAIL_HCA_PORT_ANY   (-1)

struct rail_hca_filter_entry {
    char name[RAIL_HCA_NAME_MAX];
    int port; /* 1..255, or RAIL_HCA_PORT_ANY */
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

/* Write f back in NCCL_IB_HCA syntax ("" for match-all), for logs. rail_hca_filter_parse() of the
 * result gives f back. Returns 0, or -ENOSPC when buf is too small (buf then holds a truncated,
 * NUL-terminated prefix), -EINVAL for NULL arguments. */
int rail_hca_filter_format(const struct rail_hca_filter *f, char *buf, size_t len);

#endif
