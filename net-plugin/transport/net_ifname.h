/* SPDX-License-Identifier: Apache-2.0 */
/* Out-of-band interface choice, NCCL's rules (pure). NCCL_SOCKET_IFNAME is a comma list of
 * interface-name prefixes; a leading '^' turns it into an exclude list and a following '=' makes
 * the names exact ("^=docker0"). Without it NCCL prefers "ib*" interfaces, then anything but
 * docker*, lo* and virbr*, then docker*, then lo*. */
#ifndef NCCL_RAIL_NET_IFNAME_H
#define NCCL_RAIL_NET_IFNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Whether ifname is selected by spec (NULL or "" selects everything). */
bool rail_ifname_match(const char *spec, const char *ifname);
/* Whether spec is a well-formed NCCL_SOCKET_IFNAME: an optional '^' then an optional '=', then a
 * comma list of non-empty names of at most 15 bytes (IFNAMSIZ - 1) without '^', '=', '/' or
 * blanks ("^^^", "eth0,,eth1" and "=" are not). 0, or -EINVAL with the reason in err. */
int rail_ifname_spec_check(const char *spec, char *err, size_t errlen);
/* Preference class without NCCL_SOCKET_IFNAME: 0 best .. 3, or -1 never (virbr*). */
int rail_ifname_default_rank(const char *ifname);

#endif
