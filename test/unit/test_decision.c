/* SPDX-License-Identifier: Apache-2.0 */
/* The decision table's size buckets (quarter octaves): every size maps to the bucket whose range
 * holds it, every non-empty range maps back to its bucket, and buckets grow monotonically. */
#include <stdint.h>

#include "check.h"
#include "decide/decision.h"

static void check_size(size_t x)
{
    size_t lo, hi;
    int b = rail_dt_bucket(x);
    CHECK_MSG(b >= 0 && b < RAIL_DT_BUCKETS, "size %zu: bucket %d", x, b);
    rail_dt_bucket_range(b, &lo, &hi);
    CHECK_MSG(lo <= x && x <= hi, "size %zu in bucket %d [%zu, %zu]", x, b, lo, hi);
}

int main(void)
{
    int prev = -1;
    for (size_t x = 0; x < 100000; x++) {
        int b = rail_dt_bucket(x);
        if (b < prev)
            CHECK_MSG(0, "bucket of %zu (%d) below that of %zu (%d)", x, b, x - 1, prev);
        prev = b;
        check_size(x);
    }
    for (int s = 17; s < 64; s++) {
        size_t p = (size_t)1 << s;
        check_size(p - 1);
        check_size(p);
        check_size(p + p / 4);
        check_size(p + p / 2 + 1);
    }
    check_size(SIZE_MAX);
    for (int b = 0; b < RAIL_DT_BUCKETS; b++) {
        size_t lo, hi;
        rail_dt_bucket_range(b, &lo, &hi);
        if (lo > hi)
            continue; /* empty: no size maps here */
        CHECK_MSG(rail_dt_bucket(lo) == b, "bucket %d lo %zu", b, lo);
        CHECK_MSG(rail_dt_bucket(hi) == b, "bucket %d hi %zu", b, hi);
    }
    /* Quarter octaves: 1 GiB and 1.25 GiB are decided apart, as are 3 and 4 bytes. */
    CHECK(rail_dt_bucket((size_t)1 << 30) != rail_dt_bucket(((size_t)1 << 30) * 5 / 4));
    CHECK(rail_dt_bucket(3) != rail_dt_bucket(4));
    return check_report("test_decision");
}
