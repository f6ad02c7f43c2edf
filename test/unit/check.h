/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal assertion helpers for the unit tests: every CHECK counts, and the test prints the
 * closing line "N passed, M failed" and exits non-zero when anything failed. */
#ifndef NCCL_RAIL_TEST_CHECK_H
#define NCCL_RAIL_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_checks_passed, g_checks_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            g_checks_passed++;                                                                     \
        } else {                                                                                   \
            g_checks_failed++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (cond) {                                                                                \
            g_checks_passed++;                                                                     \
        } else {                                                                                   \
            g_checks_failed++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        CHECK_MSG(va_ == vb_, "%s = %lld, expected %lld", #a, va_, vb_);                           \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        CHECK_MSG(sa_ &&sb_ &&strcmp(sa_, sb_) == 0, "%s = '%s', expected '%s'", #a,               \
                  sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                                     \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double da_ = (double)(a), db_ = (double)(b);                                               \
        CHECK_MSG(fabs(da_ - db_) <= (tol), "%s = %g, expected %g", #a, da_, db_);                 \
    } while (0)

static inline int check_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, g_checks_passed, g_checks_failed);
    return g_checks_failed ? 1 : 0;
}

#endif
