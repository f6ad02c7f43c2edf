/* SPDX-License-Identifier: Apache-2.0 */
#include "transport/net_ifname.h"

#include <string.h>

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
