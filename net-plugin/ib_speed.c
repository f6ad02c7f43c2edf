/* InfiniBand speed encodings -> Mb/s (see ib_speed.h). */
#include "ib_speed.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>

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

int rail_ib_rate_parse(const char *s)
{
    if (!s)
        return -EINVAL;
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!isdigit((unsigned char)*p))
        return -EINVAL;
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
    if (*p != ' ')
        return -EINVAL;
    while (*p == ' ')
        p++;
    static const char unit[] = "Gb/sec";
    for (const char *u = unit; *u; u++, p++)
        if (*p != *u)
            return -EINVAL;
    /* Optional "(...)", e.g. "(4X NDR)"; then only white space. */
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '(') {
        p++;
        while (*p && *p != ')' && *p != '(' && isprint((unsigned char)*p))
            p++;
        if (*p != ')')
            return -EINVAL;
        p++;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p)
        return -EINVAL;
    /* whole < 1e6, so whole * 1000 + 1000 fits an int. */
    return (int)(whole * 1000 + (frac + 5) / 10);
}
