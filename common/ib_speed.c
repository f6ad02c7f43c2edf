/* SPDX-License-Identifier: Apache-2.0 */
/* InfiniBand speed encodings -> Mb/s (see ib_speed.h). */
#include "ib_speed.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Index i is the value with only bit i set. */
static const struct {
    int mbps;
    const char *name;
} lane_rates[] = {
    {2500, "SDR"},  {5000, "DDR"},  {10000, "QDR"},  {10000, "FDR10"}, {14000, "FDR"},
    {25000, "EDR"}, {50000, "HDR"}, {100000, "NDR"}, {200000, "XDR"},
};
#define N_LANE_RATES ((int)(sizeof(lane_rates) / sizeof(lane_rates[0])))

static const int width_lanes[] = {1, 4, 8, 12, 2};
#define N_WIDTHS ((int)(sizeof(width_lanes) / sizeof(width_lanes[0])))

/* Index of the lowest set bit of v below limit, or -1. */
static int lowest_bit(unsigned v, int limit)
{
    for (int i = 0; i < limit; i++)
        if (v & (1u << i))
            return i;
    return -1;
}

static int lane_index(unsigned active_speed, unsigned active_speed_ex)
{
    return lowest_bit(active_speed_ex ? active_speed_ex : active_speed, N_LANE_RATES);
}

int rail_ib_lane_mbps(unsigned active_speed, unsigned active_speed_ex)
{
    int i = lane_index(active_speed, active_speed_ex);
    return i < 0 ? 0 : lane_rates[i].mbps;
}

int rail_ib_width_lanes(unsigned active_width)
{
    int i = lowest_bit(active_width, N_WIDTHS);
    return i < 0 ? 0 : width_lanes[i];
}

int rail_ib_speed_mbps(unsigned active_speed, unsigned active_speed_ex, unsigned active_width)
{
    return rail_ib_lane_mbps(active_speed, active_speed_ex) * rail_ib_width_lanes(active_width);
}

const char *rail_ib_speed_name(unsigned active_speed, unsigned active_speed_ex)
{
    int i = lane_index(active_speed, active_speed_ex);
    return i < 0 ? "unknown" : lane_rates[i].name;
}

#define RATE_MAX_GBPS     1000000L /* exclusive */
#define RATE_MAX_DECIMALS 4
#define RATE_MAX_LANES    32

static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* "<number> Gb/sec" at p: the rate in Mb/s (rounded to the nearest), -EINVAL when malformed. */
static int parse_number_gbps(const char **pp)
{
    const char *p = *pp;
    long whole = 0;
    while (isdigit((unsigned char)*p)) {
        whole = whole * 10 + (*p++ - '0');
        if (whole >= RATE_MAX_GBPS)
            return -EINVAL;
    }
    /* Fraction in units of 1e-4 Gb/s = 0.1 Mb/s. */
    long frac = 0;
    int decimals = 0;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        while (isdigit((unsigned char)*p)) {
            if (++decimals > RATE_MAX_DECIMALS)
                return -EINVAL;
            frac = frac * 10 + (*p++ - '0');
        }
    }
    for (int d = decimals; d < RATE_MAX_DECIMALS; d++)
        frac *= 10;
    *pp = p;
    /* whole < 1e6, so whole * 1000 + 1000 fits an int. */
    return (int)(whole * 1000 + (frac + 5) / 10);
}

/* " Gb/sec" (one or more spaces first) at *pp; false when absent. */
static bool skip_unit(const char **pp)
{
    static const char unit[] = "Gb/sec";
    const char *p = *pp;
    if (*p != ' ')
        return false;
    while (*p == ' ')
        p++;
    for (const char *u = unit; *u; u++, p++)
        if (*p != *u)
            return false;
    *pp = p;
    return true;
}

/* The text between the parentheses, "<lanes>X <speed name>" (x also accepted), in Mb/s;
 * -EINVAL for anything else. */
static int parse_lanes_name(const char *s, size_t n)
{
    size_t i = 0;
    int lanes = 0;
    while (i < n && isdigit((unsigned char)s[i]) && lanes <= RATE_MAX_LANES)
        lanes = lanes * 10 + (s[i++] - '0');
    if (i == 0 || lanes < 1 || lanes > RATE_MAX_LANES || i + 2 > n ||
        (s[i] != 'X' && s[i] != 'x') || s[i + 1] != ' ')
        return -EINVAL;
    const char *name = s + i + 2;
    size_t name_len = n - i - 2;
    for (int k = 0; k < N_LANE_RATES; k++)
        if (strlen(lane_rates[k].name) == name_len &&
            memcmp(name, lane_rates[k].name, name_len) == 0)
            return lanes * lane_rates[k].mbps;
    return -EINVAL;
}

int rail_ib_rate_parse(const char *s)
{
    if (!s)
        return -EINVAL;
    const char *p = skip_blanks(s);
    int number = -EINVAL; /* from "<number> Gb/sec"; "? Gb/sec" or nothing leaves it unknown */
    if (isdigit((unsigned char)*p)) {
        number = parse_number_gbps(&p);
        if (number < 0 || !skip_unit(&p))
            return -EINVAL;
    } else if (*p == '?') {
        p++;
        if (!skip_unit(&p))
            return -EINVAL;
    }
    /* Optional "(...)", e.g. "(4X NDR)"; then only white space. */
    int from_lanes = -EINVAL;
    p = skip_blanks(p);
    if (*p == '(') {
        const char *open = ++p;
        while (*p && *p != ')' && *p != '(' && isprint((unsigned char)*p))
            p++;
        if (*p != ')')
            return -EINVAL;
        if (number < 0)
            from_lanes = parse_lanes_name(open, (size_t)(p - open));
        p++;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p)
        return -EINVAL;
    return number >= 0 ? number : from_lanes;
}
