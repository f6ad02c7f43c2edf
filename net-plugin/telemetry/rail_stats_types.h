/* SPDX-License-Identifier: Apache-2.0 */
/* The sizes and the direction enum that the telemetry (rail_stats.h) and its snapshots and
 * formatters (rail_stats_format.h) share; both include this header, neither includes the other's
 * header through it. */
#ifndef NCCL_RAIL_RAIL_STATS_TYPES_H
#define NCCL_RAIL_RAIL_STATS_TYPES_H

#include "rails/stripe.h"

#define RAIL_STATS_MAX_RAILS RAIL_STRIPE_MAX_RAILS
#define RAIL_STATS_NAME_LEN  80 /* device names, incl. the NUL */
#define RAIL_STATS_PEER_LEN  64 /* peer strings, incl. the NUL */

enum rail_stats_dir { RAIL_STATS_SEND = 0, RAIL_STATS_RECV = 1 };

#endif
