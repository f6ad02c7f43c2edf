/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: NCCL Inspector's JSON output as `nccl-rail calibrate` reads it
 * (tuner-plugin/calib_inspector.c over json-c), with and without --algo/--proto (the first byte
 * picks), then the job merge. Must return 0 or a negative errno with a "name:line: reason"
 * message, never crash, leak or read outside the buffer. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib_inspector.h"
#include "calib_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_job_set s = {0};
    struct rail_calib_hint hint = {-1, -1, -1};
    struct rail_calib_row *rows = NULL;
    struct rail_job_summary js;
    char err[512];
    int n = 0;

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
    if (rc == 0 && rail_job_merge(&s, &rows, &n, &js) == 0)
        for (int i = 0; i < n; i++)
            if (rows[i].nranks % rows[i].nnodes != 0)
                abort();
    free(rows);
    rail_job_free(&s);
    return 0;
}
