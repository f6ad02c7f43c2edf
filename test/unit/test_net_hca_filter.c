/* SPDX-License-Identifier: Apache-2.0 */
/* hca_filter: NCCL_IB_HCA syntax (include/exclude, exact/prefix, ports, 2.30's rail and plane),
 * the railId/planeId each port gets and a merged device reports (NCCL 2.31's rules), every
 * malformed case, format/parse round trips and random strings. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "fuzz.h"
#include "transport/hca_filter.h"

static struct rail_hca_filter parse_ok(const char *spec)
{
    struct rail_hca_filter f;
    char err[256] = "untouched";
    int rc = rail_hca_filter_parse(spec, &f, err, sizeof(err));
    CHECK_MSG(rc == 0, "'%s' rejected: %s", spec ? spec : "(null)", err);
    CHECK_EQ_STR(err, "");
    return f;
}

/* Parse must fail with -EINVAL, leave the match-all filter, and the reason must mention want. */
static void parse_bad(const char *spec, const char *want)
{
    struct rail_hca_filter f;
    f.n = 7;
    char err[256] = "";
    int rc = rail_hca_filter_parse(spec, &f, err, sizeof(err));
    CHECK_MSG(rc == -EINVAL, "'%s' accepted (rc %d)", spec, rc);
    CHECK_EQ_INT(f.n, 0);
    CHECK_MSG(strstr(err, want) != NULL, "'%s': reason '%s' lacks '%s'", spec, err, want);
}

static void test_match_all(void)
{
    struct rail_hca_filter f = parse_ok(NULL);
    CHECK_EQ_INT(f.n, 0);
    CHECK(rail_hca_filter_match(&f, "mlx5_0", 1));
    CHECK(rail_hca_filter_match(&f, "anything", RAIL_HCA_PORT_ANY));
    f = parse_ok("");
    CHECK(rail_hca_filter_match(&f, "mlx5_3", 2));
    CHECK(rail_hca_filter_match(NULL, "mlx5_3", 2));
    CHECK(!rail_hca_filter_match(&f, NULL, 1));
}

static void test_prefix_and_exact(void)
{
    struct rail_hca_filter f = parse_ok("mlx5_1");
    CHECK_EQ_INT(f.n, 1);
    CHECK(!f.exclude && !f.exact);
    CHECK_EQ_STR(f.e[0].name, "mlx5_1");
    CHECK_EQ_INT(f.e[0].port, RAIL_HCA_PORT_ANY);
    CHECK(rail_hca_filter_match(&f, "mlx5_1", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_10", 1)); /* prefix match, as NCCL */
    CHECK(rail_hca_filter_match(&f, "mlx5_1", 2));
    CHECK(!rail_hca_filter_match(&f, "mlx5_0", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_", 1)); /* shorter than the prefix */

    f = parse_ok("=mlx5_1");
    CHECK(f.exact && !f.exclude);
    CHECK(rail_hca_filter_match(&f, "mlx5_1", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_10", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_", 1));

    f = parse_ok("mlx5");
    CHECK(rail_hca_filter_match(&f, "mlx5_bond_0", 1));
    CHECK(!rail_hca_filter_match(&f, "rxe0", 1));

    f = parse_ok("mlx5_0,rxe");
    CHECK_EQ_INT(f.n, 2);
    CHECK(rail_hca_filter_match(&f, "rxe0", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_0", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_1", 1));
}

static void test_exclude(void)
{
    struct rail_hca_filter f = parse_ok("^mlx5_1");
    CHECK(f.exclude && !f.exact);
    CHECK(!rail_hca_filter_match(&f, "mlx5_1", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_10", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_0", 1));

    f = parse_ok("^=mlx5_1");
    CHECK(f.exclude && f.exact);
    CHECK(!rail_hca_filter_match(&f, "mlx5_1", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_10", 1));

    /* "=^x" is not the exclude form: '^' after '=' is a misplaced character. */
    parse_bad("=^mlx5_1", "only allowed at the start");

    /* Exclude with a port: only that port is excluded. */
    f = parse_ok("^mlx5_0:1");
    CHECK(!rail_hca_filter_match(&f, "mlx5_0", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_0", 2));
    CHECK(!rail_hca_filter_match(&f, "mlx5_0", RAIL_HCA_PORT_ANY));
}

static void test_ports(void)
{
    struct rail_hca_filter f = parse_ok("mlx5_0:1,mlx5_1:2");
    CHECK_EQ_INT(f.e[0].port, 1);
    CHECK_EQ_INT(f.e[1].port, 2);
    CHECK(rail_hca_filter_match(&f, "mlx5_0", 1));
    CHECK(!rail_hca_filter_match(&f, "mlx5_0", 2));
    CHECK(rail_hca_filter_match(&f, "mlx5_1", 2));
    CHECK(!rail_hca_filter_match(&f, "mlx5_1", 1));
    CHECK(rail_hca_filter_match(&f, "mlx5_1", RAIL_HCA_PORT_ANY)); /* device-level question */
    CHECK(rail_hca_filter_match(&f, "mlx5_10", 2));                /* prefix of mlx5_1, port 2 */
    CHECK(!rail_hca_filter_match(&f, "mlx5_10", 1));

    f = parse_ok("mlx5_0:255");
    CHECK_EQ_INT(f.e[0].port, 255);
    f = parse_ok("mlx5_0:007");
    CHECK_EQ_INT(f.e[0].port, 7);

    /* NCCL 2.30's name:port:rail:plane. */
    f = parse_ok("mlx5_0:1:0:1,mlx5_1:1:1");
    CHECK_EQ_INT(f.n, 2);
    CHECK_EQ_STR(f.e[0].name, "mlx5_0");
    CHECK_EQ_INT(f.e[0].port, 1);
    CHECK_EQ_INT(f.e[0].rail, 0);
    CHECK_EQ_INT(f.e[0].plane, 1);
    CHECK_EQ_STR(f.e[1].name, "mlx5_1");
    CHECK_EQ_INT(f.e[1].port, 1);
    CHECK_EQ_INT(f.e[1].rail, 1);
    CHECK_EQ_INT(f.e[1].plane, RAIL_HCA_ID_UNDEF);
    CHECK(!rail_hca_filter_match(&f, "mlx5_0", 2));
    /* Empty fields are unset, as NCCL reads them: any port, unknown rail. */
    f = parse_ok("mlx5_0::3:2,mlx5_1:,mlx5_2:1::4");
    CHECK_EQ_INT(f.e[0].port, RAIL_HCA_PORT_ANY);
    CHECK_EQ_INT(f.e[0].rail, 3);
    CHECK_EQ_INT(f.e[0].plane, 2);
    CHECK_EQ_INT(f.e[1].port, RAIL_HCA_PORT_ANY);
    CHECK_EQ_INT(f.e[1].rail, RAIL_HCA_ID_UNDEF);
    CHECK_EQ_INT(f.e[2].port, 1);
    CHECK_EQ_INT(f.e[2].rail, RAIL_HCA_ID_UNDEF);
    CHECK_EQ_INT(f.e[2].plane, 4);
    f = parse_ok("x:1:32767:16383");
    CHECK_EQ_INT(f.e[0].rail, 32767);
    CHECK_EQ_INT(f.e[0].plane, 16383);
}

static void lookup(const struct rail_hca_filter *f, const char *dev, int port, bool want,
                   int want_rail, int want_plane)
{
    int rail = 99, plane = 99;
    bool hit = rail_hca_filter_lookup(f, dev, port, &rail, &plane);
    CHECK_MSG(hit == want, "%s:%d matched %d", dev, port, hit);
    CHECK_MSG(rail == want_rail && plane == want_plane, "%s:%d rail %d plane %d, want %d %d", dev,
              port, rail, plane, want_rail, want_plane);
}

/* Which rail/plane a port gets: NCCL's first matching entry (init.cc, matchIfList's ifId). */
static void test_rail_plane(void)
{
    struct rail_hca_filter f = parse_ok("rxe0:1:0:0,rxe2:1:1:0");
    lookup(&f, "rxe0", 1, true, 0, 0);
    lookup(&f, "rxe2", 1, true, 1, 0);
    lookup(&f, "rxe1", 1, false, -1, -1);
    lookup(&f, "rxe0", 2, false, -1, -1);
    /* Prefix match: mlx5_1 catches mlx5_10 and gives it the entry's rail. */
    f = parse_ok("mlx5_1:1:5:2,mlx5_10:1:6:3");
    lookup(&f, "mlx5_10", 1, true, 5, 2); /* the first matching entry wins */
    f = parse_ok("=mlx5_1:1:5:2,mlx5_10:1:6:3");
    lookup(&f, "mlx5_10", 1, true, 6, 3); /* exact: only the second entry matches */
    lookup(&f, "mlx5_1", 1, true, 5, 2);
    /* A port-less entry before a port entry takes every port of the device. */
    f = parse_ok("shm0::3:1,shm0:1:7:7");
    lookup(&f, "shm0", 1, true, 3, 1);
    f = parse_ok("shm0:1:3:1");
    lookup(&f, "shm0", 1, true, 3, 1);
    lookup(&f, "shm2", 1, false, -1, -1);
    /* Exclude: the ports left get no rail or plane. */
    f = parse_ok("^rxe0:1:0:0");
    lookup(&f, "rxe0", 1, false, -1, -1);
    lookup(&f, "rxe2", 1, true, -1, -1);
    /* No filter: everything, nothing known. */
    f = parse_ok(NULL);
    lookup(&f, "rxe2", 1, true, -1, -1);
    lookup(NULL, "rxe2", 1, true, -1, -1);
    lookup(&f, NULL, 1, false, -1, -1);
    CHECK(rail_hca_filter_lookup(&f, "a", 1, NULL, NULL));
}

/* A merged device's ids: NCCL's vNIC rule (net_ib/init.cc ncclIbMakeVDeviceInternal). */
static void test_merge_ids(void)
{
    int rail, plane;
    const int all[] = {0, 0, 1, -1};
    /* One member: its own ids, unchanged. */
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){3}, (int[]){1}, 1, &rail, &plane), 0);
    CHECK(rail == 3 && plane == 1);
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){-1}, (int[]){-1}, 1, &rail, &plane), 0);
    CHECK(rail == -1 && plane == -1);
    /* Same rail, two planes: the rail; the virtual bit and the planes' index bits. Planes are
     * numbered over all ports: unknown 0, plane 0 -> 1, plane 1 -> 2. */
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){4, 4}, (int[]){0, 1}, 2, &rail, &plane), 0);
    CHECK_EQ_INT(rail, 4);
    CHECK_EQ_INT(plane, RAIL_HCA_PLANE_VIRT | (1 << 1) | (1 << 2));
    /* Different rails: unknown; same plane twice: one bit. */
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){0, 1}, (int[]){0, 0}, 2, &rail, &plane), 0);
    CHECK_EQ_INT(rail, -1);
    CHECK_EQ_INT(plane, RAIL_HCA_PLANE_VIRT | (1 << 1));
    /* An unknown rail or plane in the group. */
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){-1, -1}, (int[]){-1, 1}, 2, &rail, &plane), 0);
    CHECK_EQ_INT(rail, -1);
    CHECK_EQ_INT(plane, RAIL_HCA_PLANE_VIRT | 1 | (1 << 2));
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){2, -1}, (int[]){0, 0}, 2, &rail, &plane), 0);
    CHECK_EQ_INT(rail, -1);
    /* A plane no port has, no members, NULL: refused. */
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){0, 0}, (int[]){0, 9}, 2, &rail, &plane),
                 -EINVAL);
    CHECK_EQ_INT(rail_hca_merge_ids(all, 4, (int[]){0}, (int[]){0}, 0, &rail, &plane), -EINVAL);
    CHECK_EQ_INT(rail_hca_merge_ids(NULL, 0, (int[]){0}, (int[]){0}, 1, &rail, &plane), -EINVAL);
    /* 12 distinct planes fit the bitmask (bits 0..12), a 13th does not. */
    int many[13];
    for (int i = 0; i < 13; i++)
        many[i] = i;
    CHECK_EQ_INT(rail_hca_merge_ids(many, 12, (int[]){0, 0}, (int[]){0, 11}, 2, &rail, &plane), 0);
    CHECK_EQ_INT(plane, RAIL_HCA_PLANE_VIRT | (1 << 1) | (1 << 12));
    CHECK_EQ_INT(rail_hca_merge_ids(many, 13, (int[]){0, 0}, (int[]){0, 1}, 2, &rail, &plane),
                 -EINVAL);
}

static void test_errors(void)
{
    parse_bad("^", "lists no HCA");
    parse_bad("=", "lists no HCA");
    parse_bad("^=", "lists no HCA");
    parse_bad("mlx5_0,,mlx5_1", "entry 2");
    parse_bad("mlx5_0,,mlx5_1", "empty HCA name");
    parse_bad("mlx5_0,", "empty HCA name");
    parse_bad(",mlx5_0", "entry 1");
    parse_bad(":1", "empty HCA name");
    parse_bad("^:1", "empty HCA name");
    parse_bad("mlx5_0:0", "port");
    parse_bad("mlx5_0:256", "port");
    parse_bad("mlx5_0:1000", "port");
    parse_bad("mlx5_0:x", "port");
    parse_bad("mlx5_0:-1", "port");
    parse_bad("mlx5_0:+1", "port");
    parse_bad("mlx5_0:1a", "port");
    parse_bad("mlx5_0: 1", "port");
    parse_bad("mlx5_0:1:-1", "rail");
    parse_bad("mlx5_0:1:32768", "rail");
    parse_bad("mlx5_0:1:x:0", "rail");
    parse_bad("mlx5_0:1:0:16384", "plane"); /* bit 14 is the merged-plane bit */
    parse_bad("mlx5_0:1:0:-1", "plane");
    parse_bad("mlx5_0:1:0:0:0", "more than name:port:rail:plane");
    parse_bad("mlx5_0:1:0:0:", "more than name:port:rail:plane");
    {
        char planes[512] = "";
        for (int i = 0; i < 13; i++) {
            char one[32];
            snprintf(one, sizeof(one), "%smlx5_%d:1:0:%d", i ? "," : "", i, i);
            strcat(planes, one);
            if (i == 11)
                (void)parse_ok(planes);
        }
        parse_bad(planes, "more than 12 distinct planes");
    }
    parse_bad("mlx5_0, mlx5_1", "white space");
    parse_bad(" mlx5_0", "white space");
    parse_bad("mlx5_0 ", "white space");
    parse_bad("mlx5_0\n", "white space");
    parse_bad("mlx\x01", "control");
    parse_bad("mlx5_0,=mlx5_1", "only allowed at the start");
    parse_bad("mlx5_0,^mlx5_1", "only allowed at the start");
    parse_bad("^^mlx5_0", "only allowed at the start");
    parse_bad("==mlx5_0", "only allowed at the start");

    /* Name length: 63 characters fit, 64 do not. */
    char name[80];
    memset(name, 'a', 63);
    name[63] = '\0';
    struct rail_hca_filter f = parse_ok(name);
    CHECK_EQ_INT((int)strlen(f.e[0].name), 63);
    name[63] = 'a';
    name[64] = '\0';
    parse_bad(name, "longer than 63");

    /* 32 entries fit, 33 do not. */
    char list[512] = "";
    for (int i = 0; i < 33; i++) {
        char one[16];
        snprintf(one, sizeof(one), "%smlx5_%d", i ? "," : "", i);
        strcat(list, one);
        if (i == 31) {
            f = parse_ok(list);
            CHECK_EQ_INT(f.n, 32);
            CHECK(rail_hca_filter_match(&f, "mlx5_31", 1));
        }
    }
    parse_bad(list, "more than 32");

    /* NULL output and NULL/short error buffers are safe. */
    CHECK_EQ_INT(rail_hca_filter_parse("mlx5_0", NULL, NULL, 0), -EINVAL);
    CHECK_EQ_INT(rail_hca_filter_parse(",", &f, NULL, 0), -EINVAL);
    char tiny[4];
    CHECK_EQ_INT(rail_hca_filter_parse(",", &f, tiny, sizeof(tiny)), -EINVAL);
    CHECK_EQ_INT((int)strlen(tiny), 3);
}

static void test_format(void)
{
    const char *specs[] = {"mlx5_0", "^=mlx5_1:2,mlx5_3", "=a,b:1,c:255", "^x"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        struct rail_hca_filter f = parse_ok(specs[i]);
        char buf[256];
        CHECK_EQ_INT(rail_hca_filter_format(&f, buf, sizeof(buf)), 0);
        CHECK_EQ_STR(buf, specs[i]);
    }
    const char *ids[] = {"mlx5_0:1:0:1", "mlx5_0::3", "a::0:0,b:2::5,c", "=rxe0:1:0:0,rxe2:1:1:0"};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        struct rail_hca_filter f = parse_ok(ids[i]);
        char buf[64];
        CHECK_EQ_INT(rail_hca_filter_format(&f, buf, sizeof(buf)), 0);
        CHECK_EQ_STR(buf, ids[i]);
    }
    struct rail_hca_filter f = parse_ok("mlx5_0:1::");
    char buf[16];
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, sizeof(buf)), 0);
    CHECK_EQ_STR(buf, "mlx5_0:1"); /* empty trailing fields are dropped */
    f = parse_ok(NULL);
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, sizeof(buf)), 0);
    CHECK_EQ_STR(buf, "");
    f = parse_ok("^=mlx5_0,mlx5_1");
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, 8), -ENOSPC);
    CHECK_EQ_STR(buf, "^=mlx5_");
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, 2), -ENOSPC);
    CHECK_EQ_STR(buf, "^");
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, 15), -ENOSPC);
    CHECK_EQ_INT(rail_hca_filter_format(&f, buf, 16), 0);
    CHECK_EQ_STR(buf, "^=mlx5_0,mlx5_1");
    CHECK_EQ_INT(rail_hca_filter_format(NULL, buf, sizeof(buf)), -EINVAL);
    CHECK_EQ_INT(rail_hca_filter_format(&f, NULL, 4), -EINVAL);
}

/* Random strings over the syntax's alphabet: never crash; on success the filter round-trips
 * through format and its entries are well formed; on failure there is a reason. */
static void test_fuzz(void)
{
    uint32_t seed = 4242;
    const char alphabet[] = "mlx5_01:,^= \t9x";
    char spec[48];
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        fuzz_string(&seed, alphabet, spec, sizeof(spec));
        struct rail_hca_filter f;
        char err[128] = "";
        int rc = rail_hca_filter_parse(spec, &f, err, sizeof(err));
        if (rc != 0) {
            CHECK_MSG(rc == -EINVAL && err[0], "'%s': rc %d, err '%s'", spec, rc, err);
            continue;
        }
        ok++;
        CHECK(f.n >= 0 && f.n <= RAIL_HCA_FILTER_MAX);
        for (int i = 0; i < f.n; i++)
            CHECK(f.e[i].name[0] &&
                  (f.e[i].port == -1 || (f.e[i].port >= 1 && f.e[i].port <= 255)));
        char buf[128];
        struct rail_hca_filter g;
        CHECK_EQ_INT(rail_hca_filter_format(&f, buf, sizeof(buf)), 0);
        CHECK_EQ_INT(rail_hca_filter_parse(buf, &g, NULL, 0), 0);
        CHECK(g.n == f.n && g.exclude == f.exclude && g.exact == f.exact);
        for (int i = 0; i < f.n && i < g.n; i++)
            CHECK(strcmp(f.e[i].name, g.e[i].name) == 0 && f.e[i].port == g.e[i].port &&
                  f.e[i].rail == g.e[i].rail && f.e[i].plane == g.e[i].plane);
        (void)rail_hca_filter_match(&f, "mlx5_0", 1);
    }
    CHECK_MSG(ok > 100, "only %d random specs parsed; the fuzz does not reach the success path",
              ok);
}

int main(void)
{
    test_match_all();
    test_prefix_and_exact();
    test_exclude();
    test_ports();
    test_rail_plane();
    test_merge_ids();
    test_errors();
    test_format();
    test_fuzz();
    return check_report("test_net_hca_filter");
}
