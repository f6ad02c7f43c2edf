/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/net_ifname.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */

static bool entry_match(const char *entry, size_t len, const char *ifname, bool exact)
{
    if (len == 0)
        return false;
    if (exact)
        return strlen(ifname) == len && strncmp(entry, ifname, len) == 0;
    return strncmp(entry, ifname, len) == 0;
}

bool rail_ifname_match(const char *spec, const char *ifname)
{
    bool exclude = false, exact = false, hit = false;

    if (!spec || !*spec)
        return true;
    if (!ifname)
        return false;
    if (*spec == '^') {
        exclude = true;
        spec++;
    }
    if (*spec == '=') {
        exact = true;
        spec++;
    }
    while (*spec && !hit) {
        const char *end = strchr(spec, ',');
        size_t len = end ? (size_t)(end - spec) : strlen(spec);
        hit = entry_match(spec, len, ifname, exact);
        spec += len;
        if (*spec == ',')
            spec++;
    }
    return exclude ? !hit : hit;
}

int rail_ifname_default_rank(const char *ifname)
{
    if (!ifname)
        return -1;
    if (strncmp(ifname, "ib", 2) == 0)
        return 0;
    if (strncmp(ifname, "virbr", 5) == 0)
        return -1;
    if (strncmp(ifname, "docker", 6) == 0)
        return 2;
    if (strncmp(ifname, "lo", 2) == 0)
        return 3;
    return 1;
}

int rail_ifname_spec_check(const char *spec, char *err, size_t errlen)
{
    const char *p = spec;
    int n = 1;
    if (!spec)
        return 0;
    if (*p == '^')
        p++;
    if (*p == '=')
        p++;
    if (!*p) {
        snprintf(err, errlen, "no interface name after the prefix");
        return -EINVAL;
    }
    for (;; n++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(err, errlen, "entry %d is empty", n);
            return -EINVAL;
        }
        if (len > IFNAME_MAX) {
            snprintf(err, errlen, "entry %d is longer than %d characters", n, IFNAME_MAX);
            return -EINVAL;
        }
        for (size_t i = 0; i < len; i++) {
            unsigned char ch = (unsigned char)p[i];
            if (ch == '^' || ch == '=' || ch == '/' || !isgraph(ch)) {
                if (isgraph(ch))
                    snprintf(err, errlen, "entry %d: '%c' cannot be part of an interface name", n,
                             ch);
                else
                    snprintf(err, errlen,
                             "entry %d: byte 0x%02x cannot be part of an interface name", n, ch);
                return -EINVAL;
            }
        }
        p += len;
        if (!*p)
            return 0;
        p++;
    }
}
