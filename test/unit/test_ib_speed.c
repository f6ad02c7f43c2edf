/* SPDX-License-Identifier: Apache-2.0 */
/* ib_speed: NCCL's speed x width tables, names, and the sysfs `rate` parser (incl. the forms
 * without a number, the fixture's three ports and random garbage). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include "check.h"
#include "fuzz.h"
#include "ib_speed.h"

static void test_tables(void)
{
    /* One lane of each active_speed bit. */
    const unsigned bits[] = {1, 2, 4, 8, 16, 32, 64, 128};
    const int mbps[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000};
    const char *names[] = {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"};
    for (int i = 0; i < 8; i++) {
        CHECK_EQ_INT(rail_ib_lane_mbps(bits[i], 0), mbps[i]);
        CHECK_EQ_INT(rail_ib_speed_mbps(bits[i], 0, 1), mbps[i]);
        CHECK_EQ_STR(rail_ib_speed_name(bits[i], 0), names[i]);
    }
    /* XDR only exists in active_speed_ex; a non-zero active_speed_ex wins. */
    CHECK_EQ_INT(rail_ib_lane_mbps(0, 256), 200000);
    CHECK_EQ_INT(rail_ib_lane_mbps(128, 256), 200000);
    CHECK_EQ_INT(rail_ib_lane_mbps(1, 64), 50000); /* ex = HDR overrides active_speed = SDR */
    CHECK_EQ_STR(rail_ib_speed_name(64, 256), "XDR");
    CHECK_EQ_INT(rail_ib_speed_mbps(0, 256, 2), 800000); /* XDR 4x */
    /* Widths. */
    CHECK_EQ_INT(rail_ib_width_lanes(1), 1);
    CHECK_EQ_INT(rail_ib_width_lanes(2), 4);
    CHECK_EQ_INT(rail_ib_width_lanes(4), 8);
    CHECK_EQ_INT(rail_ib_width_lanes(8), 12);
    CHECK_EQ_INT(rail_ib_width_lanes(16), 2);
    CHECK_EQ_INT(rail_ib_width_lanes(6), 4); /* lowest known bit wins */
    /* The usual products. */
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 0, 2), 400000);   /* NDR 4x */
    CHECK_EQ_INT(rail_ib_speed_mbps(64, 0, 2), 200000);    /* HDR 4x */
    CHECK_EQ_INT(rail_ib_speed_mbps(32, 0, 2), 100000);    /* EDR 4x */
    CHECK_EQ_INT(rail_ib_speed_mbps(16, 0, 2), 56000);     /* FDR 4x */
    CHECK_EQ_INT(rail_ib_speed_mbps(64, 0, 16), 100000);   /* HDR 2x (HDR100) */
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 0, 8), 1200000);  /* NDR 12x */
    CHECK_EQ_INT(rail_ib_speed_mbps(1, 0, 1), 2500);       /* SDR 1x */
    CHECK_EQ_INT(rail_ib_speed_mbps(0, 256, 8), 2400000);  /* largest: XDR 12x fits an int */
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 0, 16), 200000);  /* NDR 2x */
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 256, 2), 800000); /* XDR (ex) wins over NDR */
    /* Several speed bits: the lowest counts. */
    CHECK_EQ_INT(rail_ib_lane_mbps(32 | 64, 0), 25000);
    /* Unknown encodings give 0, never a guess. */
    CHECK_EQ_INT(rail_ib_lane_mbps(0, 0), 0);
    CHECK_EQ_INT(rail_ib_lane_mbps(512, 0), 0);
    CHECK_EQ_INT(rail_ib_lane_mbps(0, 512), 0);
    CHECK_EQ_INT(rail_ib_lane_mbps(64, 1024), 0); /* unknown ex still replaces active_speed */
    CHECK_EQ_INT(rail_ib_lane_mbps(0x80000000u, 0), 0);
    CHECK_EQ_INT(rail_ib_width_lanes(0), 0);
    CHECK_EQ_INT(rail_ib_width_lanes(32), 0);
    CHECK_EQ_INT(rail_ib_width_lanes(UINT_MAX & ~31u), 0);
    CHECK_EQ_INT(rail_ib_speed_mbps(64, 0, 0), 0);
    CHECK_EQ_INT(rail_ib_speed_mbps(0, 0, 2), 0);
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 0, 0), 0);
    CHECK_EQ_INT(rail_ib_speed_mbps(1024, 0, 2), 0);
    CHECK_EQ_STR(rail_ib_speed_name(0, 0), "unknown");
    CHECK_EQ_STR(rail_ib_speed_name(0, 4096), "unknown");
}

static void test_rate_parse(void)
{
    CHECK_EQ_INT(rail_ib_rate_parse("400 Gb/sec (4X NDR)"), 400000);
    CHECK_EQ_INT(rail_ib_rate_parse("400 Gb/sec (4X NDR)\n"), 400000);
    CHECK_EQ_INT(rail_ib_rate_parse("100 Gb/sec (4X EDR)"), 100000);
    CHECK_EQ_INT(rail_ib_rate_parse("200 Gb/sec (4X HDR)\n"), 200000);
    CHECK_EQ_INT(rail_ib_rate_parse("200 Gb/sec (4X HDR)"), 200000);
    CHECK_EQ_INT(rail_ib_rate_parse("40 Gb/sec (4X QDR)"), 40000);
    CHECK_EQ_INT(rail_ib_rate_parse("2.5 Gb/sec (1X SDR)"), 2500);
    CHECK_EQ_INT(rail_ib_rate_parse("56 Gb/sec (4X FDR)"), 56000);
    CHECK_EQ_INT(rail_ib_rate_parse("10 Gb/sec (4X SDR)"), 10000);
    CHECK_EQ_INT(rail_ib_rate_parse("800 Gb/sec (4X XDR)"), 800000);
    CHECK_EQ_INT(rail_ib_rate_parse("14.0625 Gb/sec (1X FDR)"), 14063); /* rounded */
    CHECK_EQ_INT(rail_ib_rate_parse("25 Gb/sec"), 25000);               /* no "(...)" */
    CHECK_EQ_INT(rail_ib_rate_parse("  40 Gb/sec (4X QDR)  \n"), 40000);
    CHECK_EQ_INT(rail_ib_rate_parse("0 Gb/sec (1X SDR)"), 0);
    CHECK_EQ_INT(rail_ib_rate_parse("999999.9999 Gb/sec"), 1000000000); /* rounds up */
    /* Garbage. */
    const char *bad[] = {
        NULL,
        "",
        "\n",
        "Gb/sec",
        "400",
        "400 ",
        "400 Mb/sec",
        "400Gb/sec",
        "400 gb/sec",
        "400 Gb/s",
        "400 Gb/sec (4X NDR",
        "400 Gb/sec 4X NDR)",
        "400 Gb/sec (4X (NDR))",
        "400 Gb/sec (4X NDR) trailing",
        "400 Gb/sec (4X NDR)(x)",
        "-400 Gb/sec",
        "+400 Gb/sec",
        "4e2 Gb/sec",
        "0x190 Gb/sec",
        "400. Gb/sec",
        ".5 Gb/sec",
        "2.55555 Gb/sec",
        "1000000 Gb/sec",
        "99999999999999999999999 Gb/sec",
        "400 Gb/sec\x01",
        "400 Gb/sec (4X\tNDR)",
        "four hundred Gb/sec",
        "fast",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(rail_ib_rate_parse(bad[i]) == -EINVAL, "bad[%zu] = '%s' accepted", i,
                  bad[i] ? bad[i] : "(null)");
}

/* Without a number the parenthesis counts: lanes x the named per-lane rate. A number, when
 * present, is what counts (even when the parenthesis says otherwise). */
static void test_rate_without_number(void)
{
    CHECK_EQ_INT(rail_ib_rate_parse("(4X NDR)"), 400000);
    CHECK_EQ_INT(rail_ib_rate_parse("? Gb/sec (2X XDR)"), 400000);
    CHECK_EQ_INT(rail_ib_rate_parse("? Gb/sec (2X XDR)\n"), 400000);
    CHECK_EQ_INT(rail_ib_rate_parse("  (2X HDR)\n"), 100000);
    CHECK_EQ_INT(rail_ib_rate_parse("(1x SDR)"), 2500);
    CHECK_EQ_INT(rail_ib_rate_parse("(12X FDR10)"), 120000);
    CHECK_EQ_INT(rail_ib_rate_parse("(4X FDR)"), 56000);
    CHECK_EQ_INT(rail_ib_rate_parse("(32X XDR)"), 6400000);
    CHECK_EQ_INT(rail_ib_rate_parse("100 Gb/sec (4X NDR)"), 100000);
    CHECK_EQ_INT(rail_ib_rate_parse("0 Gb/sec (4X NDR)"), 0);
    const char *bad[] = {
        "(4X ZDR)",
        "(4X ndr)",
        "(4X FDR1)",
        "(4X NDRX)",
        "(0X NDR)",
        "(33X NDR)",
        "(X NDR)",
        "(4XNDR)",
        "(4X  NDR)",
        "(4 NDR)",
        "(4X NDR",
        "(4X NDR) x",
        "()",
        "?",
        "? Gb/sec",
        "?Gb/sec",
        "?? Gb/sec (4X NDR)",
        "? Gb/s (4X NDR)",
        "Gb/sec (4X NDR)",
        "(999999999999X NDR)",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(rail_ib_rate_parse(bad[i]) == -EINVAL, "bad[%zu] = '%s' accepted", i, bad[i]);
}

/* The fixture's ports: mlx5_0 IB HDR, mlx5_1 RoCE 100G (shown as 4X EDR), mlx5_2 IB NDR. */
static void test_fixture_rates(void)
{
    const char *dev[] = {"mlx5_0", "mlx5_1", "mlx5_2"};
    const int want[] = {200000, 100000, 400000};
    for (int i = 0; i < 3; i++) {
        char path[512], buf[128] = {0};
        snprintf(path, sizeof(path),
                 "%s/sysfs/synthetic-xe8640-like/sys/class/infiniband/%s/ports/1/rate",
                 RAIL_FIXTURES, dev[i]);
        FILE *f = fopen(path, "r");
        CHECK_MSG(f != NULL, "cannot open %s", path);
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        CHECK_EQ_INT(rail_ib_rate_parse(buf), want[i]);
    }
    /* And they agree with the verbs encoding of the same ports. */
    CHECK_EQ_INT(rail_ib_speed_mbps(64, 0, 2), want[0]);
    CHECK_EQ_INT(rail_ib_speed_mbps(32, 0, 2), want[1]);
    CHECK_EQ_INT(rail_ib_speed_mbps(128, 0, 2), want[2]);
}

/* Random strings: never crash, result is -EINVAL or a plausible value. Also every value
 * printed the way the kernel prints it parses back. */
static void test_fuzz(void)
{
    uint32_t seed = 12345;
    const char alphabet[] = "0123456789. Gb/sec()XNDRHE\n\t-+x";
    char buf[40];
    for (int iter = 0; iter < 20000; iter++) {
        fuzz_string(&seed, alphabet, buf, sizeof(buf));
        int r = rail_ib_rate_parse(buf);
        CHECK_MSG(r == -EINVAL || (r >= 0 && r <= 1000000000), "'%s' -> %d", buf, r);
    }
    for (int width = 1; width <= 16; width <<= 1)
        for (unsigned sp = 1; sp <= 128; sp <<= 1) {
            int mbps = rail_ib_speed_mbps(sp, 0, (unsigned)width);
            char s[64];
            snprintf(s, sizeof(s), "%d%s Gb/sec (%dX %s)\n", mbps / 1000, mbps % 1000 ? ".5" : "",
                     rail_ib_width_lanes((unsigned)width), rail_ib_speed_name(sp, 0));
            CHECK_MSG(rail_ib_rate_parse(s) == mbps, "'%s' != %d", s, mbps);
        }
}

int main(void)
{
    test_tables();
    test_rate_parse();
    test_rate_without_number();
    test_fixture_rates();
    test_fuzz();
    return check_report("test_ib_speed");
}
