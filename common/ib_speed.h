/* SPDX-License-Identifier: Apache-2.0 */
/* InfiniBand port speed arithmetic, I/O-free (net plugin and topology discovery).
 * ibv_query_port reports a per-lane signalling rate (active_speed, or active_speed_ex for XDR and
 * newer) and a lane count (active_width), both as one-bit-per-value encodings. NCCL multiplies the
 * two into Mb/s; sysfs `ports/<p>/rate` carries the same number as text ("400 Gb/sec (4X NDR)"),
 * which is the fallback when libibverbs is too old to report active_speed_ex. */
#ifndef NCCL_RAIL_IB_SPEED_H
#define NCCL_RAIL_IB_SPEED_H

/* Per-lane rate in Mb/s of an active_speed / active_speed_ex value: SDR 2500, DDR 5000, QDR 10000,
 * FDR10 10000, FDR 14000, EDR 25000, HDR 50000, NDR 100000, XDR 200000. A non-zero active_speed_ex
 * replaces active_speed. Several bits set: the lowest known one counts (as in NCCL). No known bit:
 * 0 (NCCL would fall back to XDR; an unknown encoding is better reported than guessed). */
int rail_ib_lane_mbps(unsigned active_speed, unsigned active_speed_ex);

/* Lanes of an active_width value: bit 1 -> 1x, 2 -> 4x, 4 -> 8x, 8 -> 12x, 16 -> 2x; lowest known
 * bit wins; 0 when no known bit is set. */
int rail_ib_width_lanes(unsigned active_width);

/* Port speed in Mb/s = lane rate x lanes, e.g. NDR 4x = 400000. 0 when either part is unknown. */
int rail_ib_speed_mbps(unsigned active_speed, unsigned active_speed_ex, unsigned active_width);

/* "SDR" ... "XDR" for the rate rail_ib_lane_mbps() would use, "unknown" otherwise (never NULL). */
const char *rail_ib_speed_name(unsigned active_speed, unsigned active_speed_ex);

/* Parse the sysfs `rate` text: "<number> Gb/sec" optionally followed by "(<anything>)" and
 * trailing white space, e.g. "400 Gb/sec (4X NDR)" -> 400000, "2.5 Gb/sec (1X SDR)" -> 2500.
 * The number may have up to 4 decimals and must be below 10^6 Gb/s. Without a number ("? Gb/sec
 * (2X XDR)" or "(4X NDR)" alone) the parenthesis must read "<lanes>X <speed name>" (lanes 1..32,
 * names as rail_ib_speed_name) and gives lanes x lane rate: 400000 for both examples.
 * Returns Mb/s (rounded to the nearest) or -EINVAL for anything else (NULL, empty, garbage,
 * missing unit, junk after it, an unknown speed name where the number is missing). */
int rail_ib_rate_parse(const char *sysfs_rate);

#endif
