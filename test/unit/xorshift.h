/* SPDX-License-Identifier: Apache-2.0 */
/* The random states of the fast-path comparison tests (test_send_on_wc, test_send_direct): a
 * 64-bit xorshift seeded per test (define XORSHIFT_SEED before including), and a logger that
 * drops what the general paths log about the random states. */
#ifndef NCCL_RAIL_TEST_XORSHIFT_H
#define NCCL_RAIL_TEST_XORSHIFT_H

#include <stdint.h>

#include "log.h"

static uint64_t g_rng = XORSHIFT_SEED;

/* 0 .. n - 1 */
static inline unsigned rnd(unsigned n)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (unsigned)(g_rng % n);
}

static inline void quiet(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                         const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

#endif
