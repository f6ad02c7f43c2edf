/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_HCA: parse, match, and format back to a spec that parses to the same filter. */
#include "fuzz_util.h"
#include "transport/hca_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct rail_hca_filter f, g;
    char err[256], back[4096];
    char *s;
    if (size > 2048)
        return 0;
    fuzz_quiet();
    s = fuzz_cstr(data, size);
    if (rail_hca_filter_parse(s, &f, err, sizeof(err)) == 0) {
        (void)rail_hca_filter_match(&f, "mlx5_0", 1);
        (void)rail_hca_filter_match(&f, "mlx5_10", 2);
        if (rail_hca_filter_format(&f, back, sizeof(back)) < (int)sizeof(back)) {
            if (rail_hca_filter_parse(back, &g, err, sizeof(err)) != 0)
                fuzz_fail("'%s' formats to '%s', which does not parse: %s", s, back, err);
            for (int port = 0; port < 4; port++)
                if (rail_hca_filter_match(&f, "mlx5_0", port) !=
                        rail_hca_filter_match(&g, "mlx5_0", port) ||
                    rail_hca_filter_match(&f, "rxe1", port) !=
                        rail_hca_filter_match(&g, "rxe1", port))
                    fuzz_fail("'%s' and its formatted '%s' match differently", s, back);
        }
    }
    free(s);
    return 0;
}
