/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_defs.h"
#include "strutil.h"

static _Atomic(ncclDebugLogger_t) g_logger;
static atomic_int g_stderr_level = -1; /* -1: not decided yet */

void rail_log_set_logger(ncclDebugLogger_t logger)
{
    atomic_store(&g_logger, logger);
}

void rail_log_set_stderr_level(ncclDebugLogLevel level)
{
    atomic_store(&g_stderr_level, (int)level);
}

/* NCCL_RAIL_LOG_STDERR through the knob table's parser, like every knob: an invalid value is one
 * WARN naming it (the parameter layer's text). The level is WARN while the knob is read, so that
 * WARN prints (and does not come back here). */
static int stderr_level(void)
{
    const struct rail_param_def *def = rail_param_def(RAIL_PARAM_LOG_STDERR);
    int lvl = atomic_load(&g_stderr_level), undecided = -1;
    const char *env;
    long long on;
    char why[128], text[900];

    if (lvl >= 0)
        return lvl;
    if (!atomic_compare_exchange_strong(&g_stderr_level, &undecided, NCCL_LOG_WARN))
        return atomic_load(&g_stderr_level);
    on = strtoll(def->def, NULL, 0);
    env = getenv(def->name);
    if (env && *env && rail_param_parse_int(def, env, &on, why, sizeof(why)) != 0) {
        on = strtoll(def->def, NULL, 0);
        rail_param_invalid_text(def, env, why, text, sizeof(text));
        rail_log(NCCL_LOG_WARN, NCCL_ENV, __FILE__, __LINE__, "%s", text);
    }
    lvl = on ? NCCL_LOG_INFO : NCCL_LOG_WARN;
    undecided = NCCL_LOG_WARN; /* rail_log_set_stderr_level meanwhile wins */
    atomic_compare_exchange_strong(&g_stderr_level, &undecided, lvl);
    return atomic_load(&g_stderr_level);
}

void rail_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
              const char *fmt, ...)
{
    ncclDebugLogger_t logger = atomic_load(&g_logger);
    char msg[1024];
    va_list ap;

    if (!logger && (int)level > stderr_level())
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rail_text_sanitize(msg); /* messages quote input: no escape sequences, valid UTF-8 */
    if (logger) {
        /* The message is already formatted: hand it over as a plain "%s" argument so that
         * nothing in it is ever interpreted as a format again. */
        logger(level, flags, file, line, "%s%s", RAIL_LOG_PREFIX, msg);
        return;
    }
    fprintf(stderr, "%s%s%s\n", level == NCCL_LOG_WARN ? "WARN " : "INFO ", RAIL_LOG_PREFIX, msg);
}
