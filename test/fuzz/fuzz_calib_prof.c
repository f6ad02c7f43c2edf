/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: the rail profiler's file as `nccl-rail calibrate` reads it
 * (tuner-plugin/measure/calib_prof.c, the pure parser), then the job merge over what it read. Must
 * return 0 or a negative errno with a "name:line: reason" message, never crash or read outside
 * the buffer; every record it keeps is within the calibration's bounds. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_job.h"
#include "measure/calib_prof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_job_set s = {0};
    struct rail_calib_row *rows = NULL;
    struct rail_job_summary js;
    char err[512];
    int n = 0;

    (void)rail_calib_prof_detect((const char *)data, size);
    int rc = rail_calib_prof_parse((const char *)data, size, "fuzz.prof", &s, err, sizeof(err));
    if (rc != 0 && rc != -EINVAL && rc != -ENOMEM && rc != -E2BIG)
        abort();
    if (rc != 0 && strncmp(err, "fuzz.prof", 9) != 0)
        abort();
    for (size_t i = 0; i < s.n; i++)
        if (s.recs[i].bytes < 1 || s.recs[i].bytes > RAIL_CALIB_MAX_BYTES ||
            !(s.recs[i].time_us > 0.0f) || s.recs[i].run >= (uint32_t)s.nruns)
            abort();
    if (rc == 0 && rail_job_merge(&s, &rows, &n, &js) == 0)
        for (int i = 0; i < n; i++)
            if (rows[i].nranks % rows[i].nnodes != 0 || rows[i].origin != RAIL_CALIB_ORIGIN_JOB)
                abort();
    free(rows);
    rail_job_free(&s);
    return 0;
}
