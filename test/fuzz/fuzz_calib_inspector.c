/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: NCCL Inspector's JSON output as `nccl-rail calibrate` reads it
 * (tuner-plugin/measure/calib_inspector.c over json-c), with and without --algo/--proto (the first
 * byte picks), then the job merge. Must return 0 or a negative errno with a "name:line: reason"
 * message, never crash, leak or read outside the buffer, and the heap may grow during the parse
 * by at most twice the input plus 4 MiB (json-c's tree of one bounded object; issue 29 item 4:
 * millions of tiny values under the read cap used to cost gigabytes). scripts/fuzz.sh runs this
 * target with inputs up to 1 MiB and seeds of those shapes. */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_inspector.h"
#include "measure/calib_job.h"

#if defined(__has_include)
#if __has_include(<sanitizer/allocator_interface.h>)
#include <sanitizer/allocator_interface.h>
#define HEAP_HOOKS 1
#endif
#endif

#ifdef HEAP_HOOKS
static size_t g_heap, g_peak; /* bytes allocated now, the most since the last reset */

static void on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    g_heap += n;
    if (g_heap > g_peak)
        g_peak = g_heap;
}

static void on_free(const volatile void *p)
{
    if (p)
        g_heap -= __sanitizer_get_allocated_size((const void *)p);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_job_set s = {0};
    struct rail_calib_hint hint = {-1, -1, -1};
    struct rail_calib_row *rows = NULL;
    struct rail_job_summary js;
    char err[512];
    int n = 0;

#ifdef HEAP_HOOKS
    static int hooked;
    if (!hooked)
        hooked = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    size_t heap0 = g_heap;
    g_peak = g_heap;
#endif
    if (size > 0 && (data[0] & 1)) {
        hint.algo = (data[0] >> 1) % 7;
        hint.proto = (data[0] >> 4) % 3;
    }
    (void)rail_calib_inspector_detect((const char *)data, size);
    int rc = rail_calib_inspector_parse((const char *)data, size, "fuzz.log", &hint, &s, err,
                                        sizeof(err));
    if (rc != 0 && rc != -EINVAL && rc != -ENOMEM && rc != -E2BIG)
        abort();
    if (rc != 0 && strncmp(err, "fuzz.log", 8) != 0)
        abort();
    if (rc == 0 && s.n > 0 && hint.algo < 0)
        abort(); /* no pair without --algo/--proto */
#ifdef HEAP_HOOKS
    if (hooked && g_peak - heap0 > 2 * size + (4u << 20)) {
        fprintf(stderr, "fuzz property violated: heap grew %zu bytes parsing %zu bytes\n",
                g_peak - heap0, size);
        abort();
    }
#endif
    if (rc == 0 && rail_job_merge(&s, &rows, &n, &js) == 0)
        for (int i = 0; i < n; i++)
            if (rows[i].nranks % rows[i].nnodes != 0)
                abort();
    free(rows);
    rail_job_free(&s);
    return 0;
}
