/* SPDX-License-Identifier: Apache-2.0 */
/* Tests: a logger for rail_log_set_logger that keeps WARN lines only: how many, and the last. */
#ifndef NCCL_RAIL_TEST_WARN_CAPTURE_H
#define NCCL_RAIL_TEST_WARN_CAPTURE_H

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static int g_warns;
static char g_warn[8192];

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    va_list ap;
    (void)flags;
    (void)file;
    (void)line;
    if (level != NCCL_LOG_WARN)
        return;
    va_start(ap, fmt);
    g_warns++;
    vsnprintf(g_warn, sizeof(g_warn), fmt, ap);
    va_end(ap);
}

#endif
