/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: the pure nccl-tests log parser (tuner-plugin/measure/calib_log.h) and the pure
 * calibration-file parser (tuner-plugin/measure/calibration.h) on arbitrary bytes. Both must return
 * 0 or a negative errno with a message, never crash, never read outside the buffer. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/calib_log.h"
#include "measure/calibration.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rail_calib_run run;
    struct rail_calib_hint hint = {-1, -1, -1};
    struct rail_calibration cal;
    char err[512];
    int rc;

    /* The first byte picks the command-line hint, so both header and --algo paths are fuzzed. */
    if (size > 0 && (data[0] & 1)) {
        hint.coll = data[0] % 5;
        hint.algo = (data[0] >> 1) % 7;
        hint.proto = (data[0] >> 4) % 3;
    }
    rc = rail_calib_log_parse((const char *)data, size, "fuzz/all_reduce.log", &hint, &run, err,
                              sizeof(err));
    if (rc != 0 && (rc != -EINVAL && rc != -ENOMEM))
        abort();
    if (rc == 0 && (run.npoints < 1 || run.nranks < 1 || run.nnodes < 1))
        abort();
    rc = rail_calib_parse((const char *)data, size, "fuzz.cal", &cal, err, sizeof(err));
    if (rc == 0) {
        struct rail_calib_cover cv;
        rail_calib_cover(&cal, &cv);
        if (cv.rows != cal.n)
            abort();
    }
    rail_calib_free(&cal);
    return 0;
}
