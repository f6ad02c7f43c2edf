/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the libFuzzer targets: a NUL-terminated copy of the input, the input as a
 * file (one scratch file per process, rewritten each run), and a silent logger so that the
 * parsers' WARNs do not slow the fuzzer down. A property violation calls fuzz_fail (abort). */
#ifndef NCCL_RAIL_FUZZ_UTIL_H
#define NCCL_RAIL_FUZZ_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static inline void fuzz_quiet_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                     int line, const char *fmt, ...)
{
    (void)level;
    (void)flags;
    (void)file;
    (void)line;
    (void)fmt;
}

static inline void fuzz_quiet(void)
{
    rail_log_set_logger(fuzz_quiet_logger);
}

/* malloc'd copy of data with a terminating NUL (the caller frees it). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The input written to this process's scratch file; returns its path. */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    static char path[128];
    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/rail-fuzz-%ld%s", (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    return path;
}

#define fuzz_fail(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fuzz property violated: " __VA_ARGS__);                                   \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#endif
