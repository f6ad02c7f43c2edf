/* SPDX-License-Identifier: Apache-2.0 */
/* Logging through NCCL's logger with a fixed "rail" prefix.
 * Inside NCCL every message goes to the ncclDebugLogger_t that init received; outside (CLI, tests)
 * WARN goes to stderr and INFO only when NCCL_RAIL_LOG_STDERR=1 (or rail_log_set_stderr_level). */
#ifndef NCCL_RAIL_LOG_H
#define NCCL_RAIL_LOG_H

#include "nccl/nccl_common.h"

#define RAIL_LOG_PREFIX "RAIL "

/* Install NCCL's logger (any thread, any time; the last one wins). NULL restores stderr output. */
void rail_log_set_logger(ncclDebugLogger_t logger);
/* Highest level printed on stderr when no NCCL logger is installed (default WARN). */
void rail_log_set_stderr_level(ncclDebugLogLevel level);

void rail_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define RAIL_WARN(flags, ...)  rail_log(NCCL_LOG_WARN, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define RAIL_INFO(flags, ...)  rail_log(NCCL_LOG_INFO, (flags), __FILE__, __LINE__, __VA_ARGS__)
#define RAIL_TRACE(flags, ...) rail_log(NCCL_LOG_TRACE, (flags), __FILE__, __LINE__, __VA_ARGS__)

#endif
