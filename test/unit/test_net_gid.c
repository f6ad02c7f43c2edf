/* SPDX-License-Identifier: Apache-2.0 */
/* gid_select: NCCL's RoCE GID auto-selection on the fixture's mlx5_1 (index 3) and on synthetic
 * tables (v1 only, link-local only, empty slots, IPv6, ADDR_RANGE, multicast-mapped), the sysfs
 * reader on the fixture and on temporary trees, formatting, the NCCL_RAIL_GID_INDEX parser, and
 * random tables checked against the rule's net effect. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fuzz.h"
#include "transport/gid_select.h"
#include "tmpfiles.h"

#define FIXTURE_ROOT RAIL_FIXTURES "/sysfs/synthetic-xe8640-like"

/* Slot from text: "" = absent; otherwise an IPv6 or IPv4 (mapped) address and a version. */
static struct rail_gid_entry slot(const char *addr, int ver)
{
    struct rail_gid_entry e;
    memset(&e, 0, sizeof(e));
    if (!addr || !*addr)
        return e;
    if (strchr(addr, ':')) {
        CHECK_MSG(inet_pton(AF_INET6, addr, e.gid) == 1, "bad test address %s", addr);
    } else {
        e.gid[10] = e.gid[11] = 0xff;
        CHECK_MSG(inet_pton(AF_INET, addr, e.gid + 12) == 1, "bad test address %s", addr);
    }
    e.roce_version = ver;
    e.present = true;
    return e;
}

#define LL     "fe80::63f:72ff:feae:a283"
#define V4     "10.0.1.2"
#define V4B    "192.168.5.7"
#define V6     "2001:db8::1"
#define N(tbl) ((int)(sizeof(tbl) / sizeof(tbl[0])))

static int sel(const struct rail_gid_entry *t, int n, int af, const char *range, char *why,
               size_t whylen)
{
    return rail_gid_select(t, n, af, 2, range, why, whylen);
}

/* NCCL_IB_PKEY_VALUE lookup: low 15 bits compared (the top bit is membership), first index. */
static void test_pkey_find(void)
{
    const uint16_t tbl[] = {0xffff, 0x8001, 0x0002, 0x8002};
    CHECK_EQ_INT(rail_pkey_find(tbl, 4, 0xffff), 0);
    CHECK_EQ_INT(rail_pkey_find(tbl, 4, 0x7fff), 0);
    CHECK_EQ_INT(rail_pkey_find(tbl, 4, 0x0001), 1);
    CHECK_EQ_INT(rail_pkey_find(tbl, 4, 0x8002), 2); /* limited member found first */
    CHECK_EQ_INT(rail_pkey_find(tbl, 4, 0x1234), -ENOENT);
    CHECK_EQ_INT(rail_pkey_find(tbl, 0, 0xffff), -ENOENT);
    CHECK_EQ_INT(rail_pkey_find(NULL, 4, 0xffff), -ENOENT);
}

static void test_fixture(void)
{
    struct rail_gid_entry t[16];
    int n = rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, t, 16);
    CHECK_EQ_INT(n, 6);
    if (n != 6)
        return;
    const int ver[] = {1, 2, 1, 2};
    for (int i = 0; i < 4; i++) {
        CHECK(t[i].present);
        CHECK_EQ_INT(t[i].roce_version, ver[i]);
    }
    CHECK(!t[4].present && !t[5].present); /* zero GIDs without a types file */
    char s[64];
    CHECK_EQ_INT(rail_gid_format(t[0].gid, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, LL);
    CHECK_EQ_INT(rail_gid_format(t[3].gid, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, V4);
    CHECK(rail_gid_is_ipv4_mapped(t[2].gid) && !rail_gid_is_ipv4_mapped(t[1].gid));

    char why[256];
    CHECK_EQ_INT(sel(t, n, AF_INET, NULL, why, sizeof(why)), 3);
    CHECK_EQ_STR(why, "index 3: RoCE v2 10.0.1.2");
    CHECK_EQ_INT(rail_gid_select_nccl(t, n, AF_INET, 2, NULL), 3);
    CHECK_EQ_INT(sel(t, n, AF_INET, "10.0.0.0/8", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(t, n, AF_INET, "10.0.1.2/32", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(t, n, AF_INET, "192.168.0.0/16", why, sizeof(why)), -ENOENT);
    CHECK_MSG(strstr(why, "in 192.168.0.0/16") && strstr(why, "index 0"), "why: %s", why);
    CHECK_EQ_INT(rail_gid_select(t, n, AF_INET, 1, NULL, why, sizeof(why)), 2);
    /* No global IPv6 address on this port: NCCL would use index 0 (link-local). */
    CHECK_EQ_INT(sel(t, n, AF_INET6, NULL, why, sizeof(why)), -ENOENT);
    CHECK_MSG(strstr(why, "AF_INET6") && strstr(why, "index 0") && strstr(why, "link-local"),
              "why: %s", why);
    CHECK_EQ_INT(rail_gid_select_nccl(t, n, AF_INET6, 2, NULL), 0);

    /* The IB ports: 2-slot tables, index 1 zero. */
    n = rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_2", 1, t, 16);
    CHECK_EQ_INT(n, 2);
    CHECK(t[0].present && t[0].roce_version == 1 && !t[1].present);
    /* Truncation to max, errors. */
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, t, 3), 3);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, t, 0), 0);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, NULL, 0), 0);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_9", 1, t, 16), -ENOENT);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 2, t, 16), -ENOENT);
    CHECK_EQ_INT(rail_gid_read_sysfs("/nonexistent-root", "mlx5_1", 1, t, 16), -ENOENT);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "../mlx5_1", 1, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "..", 1, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "", 1, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, NULL, 1, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 0, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 256, t, 16), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, t, -1), -EINVAL);
    CHECK_EQ_INT(rail_gid_read_sysfs(FIXTURE_ROOT, "mlx5_1", 1, NULL, 4), -EINVAL);
}

static void test_tables(void)
{
    char why[256];
    /* Only RoCE v1: NCCL still takes the IPv4 GID (family switch), the reason says so. */
    struct rail_gid_entry v1[] = {slot(LL, 1), slot(V4, 1)};
    CHECK_EQ_INT(sel(v1, N(v1), AF_INET, NULL, why, sizeof(why)), 1);
    CHECK_MSG(strstr(why, "RoCE v1 10.0.1.2") && strstr(why, "no valid RoCE v2"), "why: %s", why);

    /* Only link-local. */
    struct rail_gid_entry ll[] = {slot(LL, 1), slot(LL, 2)};
    CHECK_EQ_INT(sel(ll, N(ll), AF_INET, NULL, why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(sel(ll, N(ll), AF_INET6, NULL, why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(rail_gid_select_nccl(ll, N(ll), AF_INET6, 2, NULL), 0);
    /* fe80::/64 only: fe80:0:0:1::/64 is not link-local for NCCL and is valid. */
    struct rail_gid_entry ll2[] = {slot(LL, 1), slot("fe80:0:0:1::5", 2)};
    CHECK_EQ_INT(sel(ll2, N(ll2), AF_INET6, NULL, why, sizeof(why)), 1);

    /* Empty slots before the IPv4 ones; all empty. */
    struct rail_gid_entry holes[] = {slot(LL, 1), slot("", 0), slot("", 0), slot(V4, 1),
                                     slot("", 0), slot(V4, 2), slot("", 0)};
    CHECK_EQ_INT(sel(holes, N(holes), AF_INET, NULL, why, sizeof(why)), 5);
    struct rail_gid_entry empty[] = {slot("", 0), slot("", 0), slot("", 0)};
    CHECK_EQ_INT(sel(empty, N(empty), AF_INET, NULL, why, sizeof(why)), -ENOENT);
    CHECK_MSG(strstr(why, "empty slot"), "why: %s", why);
    /* An absent slot is the zero GID even if its gid bytes say otherwise. */
    struct rail_gid_entry ghost[] = {slot(LL, 1), slot(V4, 2)};
    ghost[1].present = false;
    CHECK_EQ_INT(sel(ghost, N(ghost), AF_INET, NULL, why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(rail_gid_select_nccl(ghost, N(ghost), AF_INET, 2, NULL), 0);
    /* Present but all-zero GIDs are invalid; ::ffff:0.0.0.0 is not all-zero (NCCL: valid). */
    struct rail_gid_entry zero[] = {slot(LL, 1), slot("::", 2), slot("0.0.0.0", 2)};
    CHECK(!rail_gid_is_valid(zero[1].gid) && rail_gid_is_valid(zero[2].gid));
    CHECK_EQ_INT(sel(zero, N(zero), AF_INET, NULL, why, sizeof(why)), 2);
    CHECK_EQ_INT(sel(zero, 2, AF_INET6, NULL, why, sizeof(why)), -ENOENT);

    /* IPv6 only. */
    struct rail_gid_entry v6[] = {slot(LL, 1), slot(LL, 2), slot(V6, 1), slot(V6, 2)};
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, NULL, why, sizeof(why)), 3);
    CHECK_EQ_STR(why, "index 3: RoCE v2 2001:db8::1");
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET, NULL, why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, "2001:db8::/32", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, "2001:db9::/32", why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, "2001:db8::1/128", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, "2001:db8::/33", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(v6, N(v6), AF_INET6, "2001:db8:8000::/33", why, sizeof(why)), -ENOENT);

    /* A same-version candidate replaces an invalid current GID (index 0 is link-local v2). */
    struct rail_gid_entry llv2[] = {slot(LL, 2), slot(V6, 2)};
    CHECK_EQ_INT(sel(llv2, N(llv2), AF_INET6, NULL, why, sizeof(why)), 1);
    struct rail_gid_entry emptyv6[] = {slot("", 0), slot(V6, 1), slot(V6, 2)};
    CHECK_EQ_INT(rail_gid_select(emptyv6, N(emptyv6), AF_INET6, 1, NULL, why, sizeof(why)), 1);
    CHECK_EQ_INT(sel(emptyv6, N(emptyv6), AF_INET6, NULL, why, sizeof(why)), 2);

    /* Mixed families: AF_INET6 skips the IPv4 GIDs. */
    struct rail_gid_entry mix[] = {slot(LL, 1), slot(LL, 2), slot(V4, 1),
                                   slot(V4, 2), slot(V6, 1), slot(V6, 2)};
    CHECK_EQ_INT(sel(mix, N(mix), AF_INET6, NULL, why, sizeof(why)), 5);
    CHECK_EQ_INT(sel(mix, N(mix), AF_INET, NULL, why, sizeof(why)), 3);

    /* ADDR_RANGE picks the second subnet. */
    struct rail_gid_entry two[] = {slot(LL, 1), slot(LL, 2),  slot(V4, 1),
                                   slot(V4, 2), slot(V4B, 1), slot(V4B, 2)};
    CHECK_EQ_INT(sel(two, N(two), AF_INET, NULL, why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "10.0.0.0/8", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "192.168.0.0/16", why, sizeof(why)), 5);
    CHECK_EQ_STR(why, "index 5: RoCE v2 192.168.5.7");
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "192.168.5.6/31", why, sizeof(why)), 5);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "192.168.5.4/31", why, sizeof(why)), -ENOENT);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "0.0.0.0/0", why, sizeof(why)), 3);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "128.0.0.0/1", why, sizeof(why)), 5);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "", why, sizeof(why)), 3); /* "" = no range */

    /* Version preference: a later v2 replaces a v1, a later v1 does not replace a v2. */
    struct rail_gid_entry order[] = {slot(LL, 1), slot(V4, 2), slot(V4B, 1)};
    CHECK_EQ_INT(sel(order, N(order), AF_INET, NULL, why, sizeof(why)), 1);
    CHECK_EQ_INT(rail_gid_select(order, N(order), AF_INET, 1, NULL, why, sizeof(why)), 2);
    /* Unknown version: taken by the family switch, replaced by a later v2. */
    struct rail_gid_entry unk[] = {slot(LL, 1), slot(V4, 0)};
    CHECK_EQ_INT(sel(unk, N(unk), AF_INET, NULL, why, sizeof(why)), 1);
    CHECK_MSG(strstr(why, "RoCE v? 10.0.1.2"), "why: %s", why);
    struct rail_gid_entry unk2[] = {slot(LL, 1), slot(V4, 0), slot(V4B, 2)};
    CHECK_EQ_INT(sel(unk2, N(unk2), AF_INET, NULL, why, sizeof(why)), 2);

    /* IPv4-mapped multicast counts as AF_INET. */
    struct rail_gid_entry mc[] = {slot(LL, 1), slot("ff0e::ffff:239.1.1.1", 2)};
    CHECK_EQ_INT(rail_gid_family(mc[1].gid), AF_INET);
    CHECK(!rail_gid_is_ipv4_mapped(mc[1].gid));
    CHECK_EQ_INT(sel(mc, N(mc), AF_INET, NULL, why, sizeof(why)), 1);
    CHECK_EQ_INT(sel(mc, N(mc), AF_INET, "239.0.0.0/8", why, sizeof(why)), 1);
    struct rail_gid_entry mc2[] = {slot(LL, 1), slot("ff0e::1:ffff:239.1.1.1", 2)};
    CHECK_EQ_INT(rail_gid_family(mc2[1].gid), AF_INET6);

    /* Index 0 itself is a candidate from the start. */
    struct rail_gid_entry first[] = {slot(V4, 2), slot(V4B, 2)};
    CHECK_EQ_INT(sel(first, N(first), AF_INET, NULL, why, sizeof(why)), 0);
    struct rail_gid_entry one[] = {slot(V4, 2)};
    CHECK_EQ_INT(sel(one, 1, AF_INET, NULL, why, sizeof(why)), 0);
    /* NCCL quirk, kept: index 0 is never range-checked, and a same-family same-version candidate
     * does not replace a valid current GID, so an out-of-range v2 IPv4 at index 0 wins over an
     * in-range one; the checked selection reports it unusable. */
    CHECK_EQ_INT(rail_gid_select_nccl(first, N(first), AF_INET, 2, NULL), 0);
    struct rail_gid_range r;
    CHECK_EQ_INT(rail_gid_range_parse("192.168.0.0/16", AF_INET, &r, NULL, 0), 0);
    CHECK_EQ_INT(rail_gid_select_nccl(first, N(first), AF_INET, 2, &r), 0);
    CHECK_EQ_INT(sel(first, N(first), AF_INET, "192.168.0.0/16", why, sizeof(why)), -ENOENT);

    /* Arguments. */
    CHECK_EQ_INT(sel(two, 0, AF_INET, NULL, why, sizeof(why)), -ENOENT);
    CHECK_EQ_STR(why, "empty GID table");
    CHECK_EQ_INT(rail_gid_select_nccl(two, 0, AF_INET, 2, NULL), -ENOENT);
    CHECK_EQ_INT(rail_gid_select_nccl(NULL, 3, AF_INET, 2, NULL), -EINVAL);
    CHECK_EQ_INT(sel(two, -1, AF_INET, NULL, why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(sel(NULL, 2, AF_INET, NULL, why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(sel(two, N(two), AF_UNIX, NULL, why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(rail_gid_select(two, N(two), AF_INET, 3, NULL, why, sizeof(why)), -EINVAL);
    CHECK_MSG(strstr(why, "RoCE version 3"), "why: %s", why);
    CHECK_EQ_INT(rail_gid_select(two, N(two), AF_INET, 0, NULL, NULL, 0), -EINVAL);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "10.0.0.0", why, sizeof(why)), -EINVAL);
    CHECK_MSG(strstr(why, "10.0.0.0"), "why: %s", why);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, "fd00::/8", why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(sel(two, N(two), AF_INET, NULL, NULL, 0), 3);
    char tiny[8];
    CHECK_EQ_INT(sel(two, N(two), AF_INET, NULL, tiny, sizeof(tiny)), 3);
    CHECK_EQ_STR(tiny, "index 3");
}

static void test_range_parse(void)
{
    struct rail_gid_range r;
    char err[256];
    CHECK_EQ_INT(rail_gid_range_parse("10.1.0.0/16", AF_INET, &r, err, sizeof(err)), 0);
    CHECK(r.af == AF_INET && r.prefixlen == 16 && r.addr[0] == 10 && r.addr[1] == 1);
    CHECK_EQ_INT(rail_gid_range_parse("0.0.0.0/0", AF_INET, &r, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_range_parse("10.0.0.1/32", AF_INET, &r, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_range_parse("fd00::/8", AF_INET6, &r, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_range_parse("::ffff:10.0.0.0/104", AF_INET6, &r, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_range_parse("::/128", AF_INET6, &r, err, sizeof(err)), 0);
    /* ::ffff:10.0.0.0/104 as an AF_INET6 range matches the mapped GID of 10.0.1.2. */
    CHECK_EQ_INT(rail_gid_range_parse("::ffff:10.0.0.0/104", AF_INET6, &r, NULL, 0), 0);
    struct rail_gid_entry e = slot(V4, 2);
    CHECK(rail_gid_in_range(&r, e.gid));
    CHECK(rail_gid_in_range(NULL, e.gid));

    const struct {
        const char *s;
        int af;
        const char *why;
    } bad[] = {
        {"10.0.0.0", AF_INET, "expected <address>/<prefix length>"},
        {"10.0.0.0/", AF_INET, "prefix length"},
        {"10.0.0.0/33", AF_INET, "0..32"},
        {"10.0.0.0/8x", AF_INET, "prefix length"},
        {"10.0.0.0/-1", AF_INET, "prefix length"},
        {"10.0.0.0/ 8", AF_INET, "prefix length"},
        {"10.0.0.0/08888", AF_INET, "prefix length"},
        {"/8", AF_INET, "bad address"},
        {"10.0.0/8", AF_INET, "not an AF_INET address"},
        {"10.0.0.256/8", AF_INET, "not an AF_INET address"},
        {" 10.0.0.0/8", AF_INET, "not an AF_INET address"},
        {"fd00::/8", AF_INET, "not an AF_INET address"},
        {"10.0.0.0/8", AF_INET6, "not an AF_INET6 address"},
        {"fd00::/129", AF_INET6, "0..128"},
        {"fd00:::/8", AF_INET6, "not an AF_INET6 address"},
        {"aaaa:bbbb:cccc:dddd:eeee:ffff:1111:2222:3333:4444:5555/8", AF_INET6, "bad address"},
        {"10.0.0.0/8/8", AF_INET, "prefix length"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        r.prefixlen = 99;
        int rc = rail_gid_range_parse(bad[i].s, bad[i].af, &r, err, sizeof(err));
        CHECK_MSG(rc == -EINVAL, "'%s' accepted", bad[i].s);
        CHECK_MSG(strstr(err, bad[i].why) != NULL, "'%s': '%s' lacks '%s'", bad[i].s, err,
                  bad[i].why);
    }
    CHECK_EQ_INT(rail_gid_range_parse(NULL, AF_INET, &r, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_gid_range_parse("10.0.0.0/8", AF_UNIX, &r, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_gid_range_parse("10.0.0.0/8", AF_INET, NULL, err, sizeof(err)), -EINVAL);
}

static void test_format(void)
{
    char s[64];
    struct rail_gid_entry e = slot(V4, 2);
    CHECK_EQ_INT(rail_gid_format(e.gid, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, "10.0.1.2");
    CHECK_EQ_INT(rail_gid_format(e.gid, s, 9), 0); /* exactly fits */
    CHECK_EQ_INT(rail_gid_format(e.gid, s, 8), -ENOSPC);
    CHECK_EQ_STR(s, "10.0.1.");
    uint8_t zero[16] = {0};
    CHECK_EQ_INT(rail_gid_format(zero, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, "::");
    e = slot(V6, 2);
    CHECK_EQ_INT(rail_gid_format(e.gid, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, V6);
    uint8_t full[16];
    memset(full, 0xab, sizeof(full));
    CHECK_EQ_INT(rail_gid_format(full, s, sizeof(s)), 0);
    CHECK_EQ_STR(s, "abab:abab:abab:abab:abab:abab:abab:abab");
    CHECK_EQ_INT(rail_gid_format(NULL, s, sizeof(s)), -EINVAL);
    CHECK_EQ_INT(rail_gid_format(full, NULL, 4), -EINVAL);
    CHECK_EQ_INT(rail_gid_format(full, s, 0), -EINVAL);
    CHECK(!rail_gid_is_ipv4_mapped(NULL));
    CHECK(!rail_gid_is_valid(NULL));
}

/* ---- temporary sysfs trees ---- */

static void test_sysfs_variants(void)
{
    char root[] = "/tmp/rail-gid-XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char base[256], p[512];
    snprintf(base, sizeof(base), "%s/sys/class/infiniband/rxe0/ports/1", root);
    snprintf(p, sizeof(p), "%s/gids", base);
    tmp_mkdirs(p);
    snprintf(p, sizeof(p), "%s/gid_attrs/types", base);
    tmp_mkdirs(p);
    const struct {
        int i;
        const char *gid, *type; /* NULL = no file */
    } files[] = {
        {0, "fe80:0000:0000:0000:0000:00ff:fe00:0001\n", "IB/RoCE v1\n"},
        {1, "0000:0000:0000:0000:0000:ffff:0a00:0102\n", "RoCE v2\n"}, /* ok */
        {2, "0000:0000:0000:0000:0000:ffff:0a00:0103\n", ""},          /* empty type */
        {3, "garbage\n", "RoCE v2\n"},                                 /* bad gid */
        {4, "0000:0000:0000:0000:0000:ffff:0a00:0105", "Future v9"},   /* unknown type */
        {5, "0000:0000:0000:0000:0000:ffff:0a00:0106\n", NULL},        /* no type file */
        {6, NULL, "RoCE v2\n"},                                        /* no gid file */
        {8, "", "RoCE v2\n"},                                          /* empty gid */
        {9, "::ffff:10.0.1.10", "RoCE v1"},                            /* compressed */
    };
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        if (files[k].gid) {
            snprintf(p, sizeof(p), "%s/gids/%d", base, files[k].i);
            tmp_put(p, files[k].gid);
        }
        if (files[k].type) {
            snprintf(p, sizeof(p), "%s/gid_attrs/types/%d", base, files[k].i);
            tmp_put(p, files[k].type);
        }
    }
    /* Slot 7: a directory where the file should be (unreadable); and a stray non-numeric name. */
    snprintf(p, sizeof(p), "%s/gids/7", base);
    CHECK_EQ_INT(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/gids/README", base);
    tmp_put(p, "not a slot");

    struct rail_gid_entry t[16];
    int n = rail_gid_read_sysfs(root, "rxe0", 1, t, 16);
    CHECK_EQ_INT(n, 10);
    const bool present[] = {true, true, false, false, true, false, false, false, false, true};
    const int ver[] = {1, 2, 0, 0, 0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 10 && i < n; i++) {
        CHECK_MSG(t[i].present == present[i], "slot %d present %d", i, t[i].present);
        CHECK_MSG(t[i].roce_version == ver[i], "slot %d version %d", i, t[i].roce_version);
        if (!t[i].present) {
            uint8_t z[16] = {0};
            CHECK_MSG(memcmp(t[i].gid, z, 16) == 0, "absent slot %d has a GID", i);
        }
    }
    char why[256];
    CHECK_EQ_INT(rail_gid_select(t, n, AF_INET, 2, NULL, why, sizeof(why)), 1);
    CHECK_EQ_INT(rail_gid_select(t, n, AF_INET, 1, NULL, why, sizeof(why)), 9);

    /* Root with a trailing slash and the empty-table case. */
    char root2[64];
    snprintf(root2, sizeof(root2), "%s/", root);
    CHECK_EQ_INT(rail_gid_read_sysfs(root2, "rxe0", 1, t, 16), 10);
    snprintf(p, sizeof(p), "%s/sys/class/infiniband/rxe1/ports/1/gids", root);
    tmp_mkdirs(p);
    CHECK_EQ_INT(rail_gid_read_sysfs(root, "rxe1", 1, t, 16), 0);

    tmp_remove_tree(root);
}

/* ---- NCCL_RAIL_GID_INDEX ---- */

static void bad_override(const char *spec, const char *want)
{
    struct rail_gid_overrides o;
    o.n = 5;
    char err[256] = "";
    int rc = rail_gid_overrides_parse(spec, &o, err, sizeof(err));
    CHECK_MSG(rc == -EINVAL, "'%s' accepted", spec);
    CHECK_EQ_INT(o.n, 0);
    CHECK_MSG(strstr(err, want) != NULL, "'%s': '%s' lacks '%s'", spec, err, want);
}

static void test_overrides(void)
{
    struct rail_gid_overrides o;
    char err[256] = "x";
    CHECK_EQ_INT(rail_gid_overrides_parse("mlx5_0:3,mlx5_1:5", &o, err, sizeof(err)), 0);
    CHECK_EQ_STR(err, "");
    CHECK_EQ_INT(o.n, 2);
    CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_0"), 3);
    CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_1"), 5);
    CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_10"), -1); /* exact names */
    CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_"), -1);
    CHECK_EQ_INT(rail_gid_override_for(&o, NULL), -1);
    CHECK_EQ_INT(rail_gid_override_for(NULL, "mlx5_0"), -1);
    CHECK_EQ_INT(rail_gid_overrides_parse("rxe0:0", &o, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_override_for(&o, "rxe0"), 0);
    CHECK_EQ_INT(rail_gid_overrides_parse("a:65535", &o, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_override_for(&o, "a"), 65535);
    CHECK_EQ_INT(rail_gid_overrides_parse(NULL, &o, err, sizeof(err)), 0);
    CHECK_EQ_INT(o.n, 0);
    CHECK_EQ_INT(rail_gid_overrides_parse("", &o, err, sizeof(err)), 0);
    CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_0"), -1);

    bad_override("mlx5_0", "expected <device>:<gid index>");
    bad_override("3", "expected <device>:<gid index>");
    bad_override("mlx5_0:", "GID index must be a number");
    bad_override(":3", "empty device name");
    bad_override("mlx5_0:3,", "entry 2 is empty");
    bad_override(",mlx5_0:3", "entry 1 is empty");
    bad_override(",", "entry 1 is empty");
    bad_override("mlx5_0:-1", "GID index");
    bad_override("mlx5_0:65536", "0..65535");
    bad_override("mlx5_0:9999999", "GID index");
    bad_override("mlx5_0:3x", "GID index");
    bad_override("mlx5_0:3:1", "GID index");
    bad_override("mlx5_0: 3", "GID index");
    bad_override("mlx5_0:3,mlx5_0:4", "listed twice");
    bad_override(" mlx5_0:3", "white space");
    bad_override("mlx5\t0:3", "white space");
    char name[80];
    memset(name, 'a', 64);
    strcpy(name + 64, ":1");
    bad_override(name, "longer than 63");
    char list[600] = "";
    for (int i = 0; i < 33; i++) {
        char one[24];
        snprintf(one, sizeof(one), "%smlx5_%d:%d", i ? "," : "", i, i);
        strcat(list, one);
        if (i == 31) {
            CHECK_EQ_INT(rail_gid_overrides_parse(list, &o, NULL, 0), 0);
            CHECK_EQ_INT(rail_gid_override_for(&o, "mlx5_31"), 31);
        }
    }
    bad_override(list, "more than 32");
    CHECK_EQ_INT(rail_gid_overrides_parse("a:1", NULL, err, sizeof(err)), -EINVAL);

    /* Random strings: never crash; failures carry a reason; successes have sane entries. */
    uint32_t seed = 99;
    const char alphabet[] = "mlx5_0:1,9 -";
    char spec[40];
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        fuzz_string(&seed, alphabet, spec, sizeof(spec));
        err[0] = '\0';
        int rc = rail_gid_overrides_parse(spec, &o, err, sizeof(err));
        if (rc) {
            CHECK_MSG(rc == -EINVAL && err[0] && o.n == 0, "'%s' rc %d", spec, rc);
            continue;
        }
        ok++;
        for (int i = 0; i < o.n; i++)
            CHECK(o.o[i].dev[0] && o.o[i].index >= 0 && o.o[i].index <= RAIL_GID_INDEX_MAX &&
                  rail_gid_override_for(&o, o.o[i].dev) == o.o[i].index);
    }
    CHECK_MSG(ok > 50, "only %d random override lists parsed", ok);
}

/* Random tables: the pick is always in [0, n); the checked selection returns a usable slot or
 * -ENOENT; and for AF_INET the result is the rule's net effect: the first in-range RoCE v2
 * IPv4-family GID, unless index 0 is itself a v2 IPv4-family GID. */
static void test_fuzz(void)
{
    uint32_t seed = 7;
#define RND() ((fuzz_step(&seed) >> 16) & 0x7fff)
    const char *addrs[] = {LL,        V4, V4B, V6, "::", "fe80:0:0:1::9", "ff0e::ffff:239.0.0.1",
                           "0.0.0.0", ""};
    const char *ranges[] = {NULL, "10.0.0.0/8", "192.168.0.0/16", "0.0.0.0/0", "239.0.0.0/8"};
    for (int iter = 0; iter < 20000; iter++) {
        struct rail_gid_entry t[8];
        int n = 1 + (int)(RND() % 8);
        for (int i = 0; i < n; i++)
            t[i] = slot(addrs[RND() % (sizeof(addrs) / sizeof(addrs[0]))], (int)(RND() % 3));
        const char *range = ranges[RND() % (sizeof(ranges) / sizeof(ranges[0]))];
        int af = RND() % 4 ? AF_INET : AF_INET6, ver = 1 + (int)(RND() % 2);
        struct rail_gid_range r, *rp = NULL;
        if (range && af == AF_INET) {
            CHECK_EQ_INT(rail_gid_range_parse(range, af, &r, NULL, 0), 0);
            rp = &r;
        }
        int raw = rail_gid_select_nccl(t, n, af, ver, rp);
        CHECK(raw >= 0 && raw < n);
        char why[256];
        int got = rail_gid_select(t, n, af, ver, rp ? range : NULL, why, sizeof(why));
        CHECK_MSG(got == raw || got == -ENOENT, "got %d raw %d", got, raw);
        if (got >= 0)
            CHECK(t[got].present && rail_gid_is_valid(t[got].gid) &&
                  rail_gid_family(t[got].gid) == af && rail_gid_in_range(rp, t[got].gid));
        if (af != AF_INET)
            continue;
        bool zero_is_it =
            t[0].present && t[0].roce_version == ver && rail_gid_family(t[0].gid) == AF_INET;
        int first = -1;
        for (int i = 0; i < n && first < 0; i++)
            if (t[i].present && t[i].roce_version == ver && rail_gid_family(t[i].gid) == AF_INET &&
                rail_gid_in_range(rp, t[i].gid))
                first = i;
        if (!zero_is_it && first >= 0)
            CHECK_MSG(got == first, "iter %d: got %d, first v%d IPv4 GID is %d", iter, got, ver,
                      first);
        if (first < 0 && got >= 0)
            CHECK(t[got].roce_version != ver);
    }
#undef RND
}

int main(void)
{
    test_pkey_find();
    test_fixture();
    test_tables();
    test_range_parse();
    test_format();
    test_sysfs_variants();
    test_overrides();
    test_fuzz();
    return check_report("test_net_gid");
}
