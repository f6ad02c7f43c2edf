/* SPDX-License-Identifier: Apache-2.0 */
/* The protocol's clocks (net_clock.c): monotonic nanoseconds, precise or coarse. */
#ifndef NCCL_RAIL_NET_CLOCK_H
#define NCCL_RAIL_NET_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rail_now_ns(void);
/* Clock-tick resolution, but never a clocksource read: cheap enough for every data-path call
 * even where the clocksource is slow (HPET under emulation costs microseconds per read). */
uint64_t rail_coarse_ns(void);

#endif
