/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_RAILS against a fixed node (4 IB ports on two dual-port HCAs, 2 RoCE ports): every
 * accepted spec yields groups that name valid ports, each port at most once. */
#include "fuzz_util.h"
#include "rails/rail_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct rail_group_port ports[] = {
        {"mlx5_0:1", "mlx5_0", 1, RAIL_LINK_IB, 400000, "0000:1a:00.0", 0},
        {"mlx5_0:2", "mlx5_0", 2, RAIL_LINK_IB, 400000, "0000:1a:00.0", 0},
        {"mlx5_1:1", "mlx5_1", 1, RAIL_LINK_IB, 400000, "0000:3c:00.0", 0},
        {"mlx5_1:2", "mlx5_1", 2, RAIL_LINK_IB, 200000, "0000:3c:00.0", 1},
        {"rxe0", "rxe0", 1, RAIL_LINK_ETH, 10000, NULL, -1},
        {"rxe1", "rxe1", 1, RAIL_LINK_ETH, 10000, NULL, -1},
    };
    enum { NPORTS = sizeof(ports) / sizeof(ports[0]) };
    static struct rail_groups g;
    char err[256], line[512], *s;
    if (size > 4096)
        return 0;
    s = fuzz_cstr(data, size);
    if (rail_group_build(ports, NPORTS, NULL, s, &g, err, sizeof(err)) == 0) {
        int seen[NPORTS] = {0};
        for (int i = 0; i < g.n; i++) {
            if (g.g[i].nrails < 1 || g.g[i].nrails > RAIL_MAX_RAILS)
                fuzz_fail("group %d has %d rails", i, g.g[i].nrails);
            for (int r = 0; r < g.g[i].nrails; r++) {
                int p = g.g[i].port[r];
                if (p < 0 || p >= NPORTS || seen[p]++)
                    fuzz_fail("group %d rail %d: port %d", i, r, p);
            }
            (void)rail_group_describe(&g.g[i], i, line, sizeof(line));
        }
    } else if (g.n != 0) {
        fuzz_fail("failed build left %d groups", g.n);
    }
    free(s);
    return 0;
}
