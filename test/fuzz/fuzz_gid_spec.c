/* SPDX-License-Identifier: Apache-2.0 */
/* GID knobs: NCCL_RAIL_GID_INDEX overrides (per device) and NCCL_IB_ADDR_RANGE (both families). */
#include "fuzz_util.h"
#include "transport/gid_select.h"

#include <sys/socket.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rail_gid_overrides o;
    struct rail_gid_range r;
    static const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    static const uint8_t v6[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    char err[256];
    char *s;
    if (size > 2048)
        return 0;
    fuzz_quiet();
    s = fuzz_cstr(data, size);
    if (rail_gid_overrides_parse(s, &o, err, sizeof(err)) == 0) {
        int a = rail_gid_override_for(&o, "mlx5_0"), b = rail_gid_override_for(&o, "rxe0");
        if (a < -1 || a > RAIL_GID_INDEX_MAX || b < -1 || b > RAIL_GID_INDEX_MAX)
            fuzz_fail("override index %d / %d", a, b);
    }
    if (rail_gid_range_parse(s, AF_INET, &r, err, sizeof(err)) == 0)
        (void)rail_gid_in_range(&r, v4);
    if (rail_gid_range_parse(s, AF_INET6, &r, err, sizeof(err)) == 0)
        (void)rail_gid_in_range(&r, v6);
    free(s);
    return 0;
}
