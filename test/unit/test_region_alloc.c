/* SPDX-License-Identifier: Apache-2.0 */
/* Issue 27 (connect time): rail_region_alloc hands out page-aligned, zeroed regions whether the
 * memory is fresh or was used and freed before (it zeroes with madvise(MADV_DONTNEED) now, not
 * memset): regions of several sizes are written all over, freed, and allocated again many
 * times; every byte of every new region must read 0, and the memory around a region (malloc's
 * neighbours) must keep what was written there. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "protocol/net_link.h"

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

int main(void)
{
    static const size_t sizes[] = {100, 4096, 4160, 8192, 69696, 300000};
    uint8_t *keep[64];
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 64; i++) {
            size_t n = sizes[(i + round) % 6];
            uint8_t *neighbour = malloc(64); /* a heap neighbour that must survive */
            CHECK(neighbour != NULL);
            memset(neighbour, 0xa5, 64);
            CHECK_EQ_INT(rail_region_alloc(n, &keep[i]), 0);
            CHECK(((uintptr_t)keep[i] & 4095) == 0);
            CHECK(all_zero(keep[i], n));
            memset(keep[i], 0xff, n); /* dirty, to be freed and handed out again */
            uint8_t want[64];
            memset(want, 0xa5, 64);
            CHECK(memcmp(neighbour, want, 64) == 0);
            free(neighbour);
        }
        for (int i = 0; i < 64; i += 2) /* half freed: the next round reuses their memory */
            free(keep[i]);
        for (int i = 1; i < 64; i += 2)
            free(keep[i]);
    }
    return check_report("test_region_alloc");
}
