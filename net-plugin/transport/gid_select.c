/* SPDX-License-Identifier: Apache-2.0 */
/* RoCE GID selection, sysfs GID table reader and NCCL_RAIL_GID_INDEX parser (see gid_select.h). */
#include "transport/gid_select.h"
#include "root_path.h"
#include "strutil.h"
#include "topo_sysfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const uint8_t zero_gid[16];

static bool all_zero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return false;
    return true;
}

/* ---- GID properties ---- */

bool rail_gid_is_ipv4_mapped(const uint8_t gid[16])
{
    return gid && all_zero(gid, 10) && gid[10] == 0xff && gid[11] == 0xff;
}

static bool is_ipv4_mapped_multicast(const uint8_t gid[16])
{
    return gid[0] == 0xff && gid[1] == 0x0e && all_zero(gid + 2, 8) && gid[10] == 0xff &&
           gid[11] == 0xff;
}

int rail_gid_family(const uint8_t gid[16])
{
    if (gid && (rail_gid_is_ipv4_mapped(gid) || is_ipv4_mapped_multicast(gid)))
        return AF_INET;
    return AF_INET6;
}

static bool is_fe80_64(const uint8_t gid[16])
{
    return gid[0] == 0xfe && gid[1] == 0x80 && all_zero(gid + 2, 6);
}

bool rail_gid_is_valid(const uint8_t gid[16])
{
    /* NCCL: "configured" (not ::, not fe80::) and not link-local (fe80:0:0:0::/64); the second
     * test covers the first's fe80:: case. */
    return gid && !all_zero(gid, 16) && !is_fe80_64(gid);
}

int rail_gid_format(const uint8_t gid[16], char *buf, size_t len)
{
    if (!gid || !buf || !len)
        return -EINVAL;
    char tmp[INET6_ADDRSTRLEN];
    const char *s = rail_gid_is_ipv4_mapped(gid) ? inet_ntop(AF_INET, gid + 12, tmp, sizeof(tmp))
                                                 : inet_ntop(AF_INET6, gid, tmp, sizeof(tmp));
    if (!s) {
        buf[0] = '\0';
        return -EINVAL;
    }
    size_t n = strlen(tmp);
    if (n >= len) {
        memcpy(buf, tmp, len - 1);
        buf[len - 1] = '\0';
        return -ENOSPC;
    }
    memcpy(buf, tmp, n + 1);
    return 0;
}

/* ---- Address range ---- */

int rail_gid_range_parse(const char *cidr, int af, struct rail_gid_range *r, char *err,
                         size_t errlen)
{
    rail_clear_err(err, errlen);
    if (!r || !cidr || (af != AF_INET && af != AF_INET6))
        return rail_fail(err, errlen, "address range: bad arguments");
    memset(r, 0, sizeof(*r));
    char q[48];
    size_t len = strlen(cidr);
    rail_quote(q, sizeof(q), cidr, len);
    const char *fam = af == AF_INET ? "AF_INET" : "AF_INET6";
    char addr[INET6_ADDRSTRLEN + 8];
    const char *slash = strchr(cidr, '/');
    if (!slash)
        return rail_fail(err, errlen, "address range '%s': expected <address>/<prefix length>", q);
    size_t alen = (size_t)(slash - cidr);
    if (alen == 0 || alen >= sizeof(addr))
        return rail_fail(err, errlen, "address range '%s': bad address", q);
    memcpy(addr, cidr, alen);
    addr[alen] = '\0';
    uint8_t bin[16] = {0};
    if (inet_pton(af, addr, bin) != 1)
        return rail_fail(err, errlen, "address range '%s': '%s' is not an %s address", q, addr,
                         fam);
    int max = af == AF_INET ? 32 : 128;
    uint64_t plen;
    if (rail_parse_digits(slash + 1, strlen(slash + 1), 4, (uint64_t)max, &plen) != 0)
        return rail_fail(err, errlen, "address range '%s': prefix length must be a number 0..%d", q,
                         max);
    r->af = af;
    r->prefixlen = (int)plen;
    memcpy(r->addr, bin, af == AF_INET ? 4 : 16);
    return 0;
}

bool rail_gid_in_range(const struct rail_gid_range *r, const uint8_t gid[16])
{
    if (!r || r->prefixlen <= 0)
        return true;
    if (!gid)
        return false;
    const uint8_t *a = r->af == AF_INET ? gid + 12 : gid;
    int bits =
        r->prefixlen > (r->af == AF_INET ? 32 : 128) ? (r->af == AF_INET ? 32 : 128) : r->prefixlen;
    int full = bits / 8, rest = bits % 8;
    if (memcmp(a, r->addr, (size_t)full) != 0)
        return false;
    if (rest) {
        uint8_t mask = (uint8_t)(0xff << (8 - rest));
        if ((a[full] & mask) != (r->addr[full] & mask))
            return false;
    }
    return true;
}

/* ---- Selection ---- */

/* What NCCL sees for a slot: absent slots read as the zero GID with an unknown version. */
static const uint8_t *slot_gid(const struct rail_gid_entry *e)
{
    return e->present ? e->gid : zero_gid;
}

static int slot_version(const struct rail_gid_entry *e)
{
    return e->present ? e->roce_version : 0;
}

int rail_gid_select_nccl(const struct rail_gid_entry *tbl, int n, int af, int roce_version,
                         const struct rail_gid_range *range)
{
    if (n < 0 || (n > 0 && !tbl))
        return -EINVAL;
    if (n == 0)
        return -ENOENT;
    int cur = 0;
    for (int cand = 1; cand < n; cand++) {
        const uint8_t *g = slot_gid(&tbl[cur]), *c = slot_gid(&tbl[cand]);
        int cfam = rail_gid_family(c);
        bool in_range = rail_gid_in_range(range, c);
        if (cfam != rail_gid_family(g) && cfam == af && in_range) {
            cur = cand;
            continue;
        }
        if (cfam != af || !rail_gid_is_valid(c) || !in_range)
            continue;
        int cv = slot_version(&tbl[cand]);
        if ((slot_version(&tbl[cur]) != cv || !rail_gid_is_valid(g)) && cv == roce_version)
            cur = cand;
    }
    return cur;
}

static void describe_slot(const struct rail_gid_entry *e, char *buf, size_t len)
{
    if (!e->present) {
        snprintf(buf, len, "empty slot");
        return;
    }
    char txt[INET6_ADDRSTRLEN];
    if (rail_gid_format(e->gid, txt, sizeof(txt)) != 0)
        snprintf(txt, sizeof(txt), "?");
    const char *kind =
        !rail_gid_is_valid(e->gid) ? (all_zero(e->gid, 16) ? " (zero)" : " (link-local)") : "";
    if (e->roce_version == 1 || e->roce_version == 2)
        snprintf(buf, len, "RoCE v%d %s%s", e->roce_version, txt, kind);
    else
        snprintf(buf, len, "RoCE v? %s%s", txt, kind);
}

int rail_gid_select(const struct rail_gid_entry *tbl, int n, int af, int roce_version,
                    const char *addr_range, char *why, size_t whylen)
{
    rail_clear_err(why, whylen);
    if (af != AF_INET && af != AF_INET6)
        return rail_fail(why, whylen, "address family %d is neither AF_INET nor AF_INET6", af);
    if (roce_version != 1 && roce_version != 2)
        return rail_fail(why, whylen, "RoCE version %d is neither 1 nor 2", roce_version);
    if (n < 0 || (n > 0 && !tbl))
        return rail_fail(why, whylen, "bad GID table (n=%d)", n);
    struct rail_gid_range range, *rp = NULL;
    if (addr_range && *addr_range) {
        int rc = rail_gid_range_parse(addr_range, af, &range, why, whylen);
        if (rc)
            return rc;
        rp = &range;
    }
    if (n == 0) {
        rail_set_err(why, whylen, "empty GID table");
        return -ENOENT;
    }
    int idx = rail_gid_select_nccl(tbl, n, af, roce_version, rp);
    if (idx < 0) {
        rail_set_err(why, whylen, "GID selection failed");
        return idx;
    }
    const struct rail_gid_entry *e = &tbl[idx];
    char desc[96];
    describe_slot(e, desc, sizeof(desc));
    const char *fam = af == AF_INET ? "AF_INET" : "AF_INET6";
    bool usable = e->present && rail_gid_is_valid(e->gid) && rail_gid_family(e->gid) == af &&
                  rail_gid_in_range(rp, e->gid);
    if (!usable) {
        rail_set_err(why, whylen,
                     "no valid %s GID%s%s among %d entries (NCCL would use index %d: %s)", fam,
                     rp ? " in " : "", rp ? addr_range : "", n, idx, desc);
        return -ENOENT;
    }
    if (e->roce_version == roce_version)
        rail_set_err(why, whylen, "index %d: %s", idx, desc);
    else
        rail_set_err(why, whylen, "index %d: %s (no valid RoCE v%d %s GID%s%s)", idx, desc,
                     roce_version, fam, rp ? " in " : "", rp ? addr_range : "");
    return idx;
}

/* ---- sysfs ---- */

static int parse_type(const char *s)
{
    if (strcmp(s, "RoCE v2") == 0)
        return 2;
    if (strcmp(s, "IB/RoCE v1") == 0 || strcmp(s, "RoCE v1") == 0)
        return 1;
    return 0;
}

/* Decimal slot name ("0".."999999"), or -1. */
static int slot_number(const char *name)
{
    uint64_t v;
    return rail_parse_digits(name, strlen(name), 6, UINT64_MAX, &v) == 0 ? (int)v : -1;
}

int rail_gid_read_sysfs(const char *root, const char *dev, int port, struct rail_gid_entry *tbl,
                        int max)
{
    if (!rail_sysfs_name_ok(dev, RAIL_GID_DEV_NAME_MAX) || port < 1 || port > 255 || max < 0 ||
        (max > 0 && !tbl))
        return -EINVAL;
    if (!root)
        root = "";
    /* Paths as seen on the node, resolved beneath root (root_path.h). */
    char port_dir[RAIL_GID_DEV_NAME_MAX + 64], gids[sizeof(port_dir) + 8],
        path[sizeof(port_dir) + 32];
    snprintf(port_dir, sizeof(port_dir), "/sys/class/infiniband/%s/ports/%d", dev, port);
    snprintf(gids, sizeof(gids), "%s/gids", port_dir);
    int fd = rail_root_open(root, gids, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0, NULL, 0);
    if (fd < 0)
        return fd;
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int i = slot_number(de->d_name);
        if (i >= 0 && i + 1 > n)
            n = i + 1;
    }
    closedir(d);
    if (n > max)
        n = max;
    for (int i = 0; i < n; i++) {
        struct rail_gid_entry *e = &tbl[i];
        memset(e, 0, sizeof(*e));
        char buf[128];
        snprintf(path, sizeof(path), "%s/gids/%d", port_dir, i);
        if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0 ||
            inet_pton(AF_INET6, buf, e->gid) != 1) {
            memset(e->gid, 0, sizeof(e->gid));
            continue;
        }
        snprintf(path, sizeof(path), "%s/gid_attrs/types/%d", port_dir, i);
        if (rail_sysfs_read(root, path, buf, sizeof(buf)) <= 0) {
            memset(e->gid, 0, sizeof(e->gid));
            continue;
        }
        e->roce_version = parse_type(buf);
        e->present = true;
    }
    return n;
}

/* ---- NCCL_RAIL_GID_INDEX ---- */

static int parse_override(const char *s, size_t n, int idx, struct rail_gid_override *o, char *err,
                          size_t errlen)
{
    char q[48];
    rail_quote(q, sizeof(q), s, n);
    const char *colon = memchr(s, ':', n);
    if (n == 0)
        return rail_fail(err, errlen, "entry %d is empty", idx + 1);
    if (!colon)
        return rail_fail(err, errlen, "entry %d ('%s'): expected <device>:<gid index>", idx + 1, q);
    size_t name_len = (size_t)(colon - s);
    if (name_len == 0)
        return rail_fail(err, errlen, "entry %d ('%s'): empty device name", idx + 1, q);
    if (name_len >= RAIL_GID_DEV_NAME_MAX)
        return rail_fail(err, errlen, "entry %d ('%s'): device name longer than %d characters",
                         idx + 1, q, RAIL_GID_DEV_NAME_MAX - 1);
    for (size_t i = 0; i < name_len; i++) {
        if (!isgraph((unsigned char)s[i]))
            return rail_fail(err, errlen,
                             "entry %d ('%s'): white space or control character in name", idx + 1,
                             q);
    }
    uint64_t v;
    if (rail_parse_digits(colon + 1, n - name_len - 1, 6, RAIL_GID_INDEX_MAX, &v) != 0)
        return rail_fail(err, errlen, "entry %d ('%s'): GID index must be a number 0..%d", idx + 1,
                         q, RAIL_GID_INDEX_MAX);
    memcpy(o->dev, s, name_len);
    o->dev[name_len] = '\0';
    o->index = (int)v;
    return 0;
}

int rail_gid_overrides_parse(const char *spec, struct rail_gid_overrides *o, char *err,
                             size_t errlen)
{
    rail_clear_err(err, errlen);
    if (!o)
        return rail_fail(err, errlen, "no override list to fill");
    o->n = 0;
    if (!spec || !*spec)
        return 0;
    struct rail_gid_overrides tmp;
    memset(&tmp, 0, sizeof(tmp));
    const char *p = spec;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (tmp.n == RAIL_GID_OVERRIDES_MAX)
            return rail_fail(err, errlen, "more than %d GID index overrides",
                             RAIL_GID_OVERRIDES_MAX);
        int rc = parse_override(p, n, tmp.n, &tmp.o[tmp.n], err, errlen);
        if (rc)
            return rc;
        for (int i = 0; i < tmp.n; i++) {
            if (strcmp(tmp.o[i].dev, tmp.o[tmp.n].dev) == 0)
                return rail_fail(err, errlen, "device '%s' is listed twice", tmp.o[i].dev);
        }
        tmp.n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    *o = tmp;
    return 0;
}

int rail_gid_override_for(const struct rail_gid_overrides *o, const char *dev)
{
    if (!o || !dev)
        return -1;
    int n = o->n < RAIL_GID_OVERRIDES_MAX ? o->n : RAIL_GID_OVERRIDES_MAX;
    for (int i = 0; i < n; i++)
        if (strcmp(o->o[i].dev, dev) == 0)
            return o->o[i].index;
    return -1;
}

int rail_pkey_find(const uint16_t *tbl, int n, long value)
{
    for (int i = 0; tbl && i < n; i++)
        if ((tbl[i] & 0x7fff) == (value & 0x7fff))
            return i;
    return -ENOENT;
}
