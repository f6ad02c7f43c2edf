/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_RAIL_EXPLORE's table (explore.h). */
#include "decide/explore.h"

#include <math.h>
#include <string.h>

void rail_explore_build(struct rail_explore *e, const struct rail_decision_table *dt,
                        rail_dt_times_fn times, const void *ctx, double share, double max_slowdown)
{
    memset(e, 0, sizeof(*e));
    memset(e->alt, RAIL_EXPLORE_NONE, sizeof(e->alt));
    if (!(share > 0.0))
        return;
    double t = share >= 1.0 ? 4294967295.0 : share * 4294967296.0;
    e->threshold = (uint32_t)t;
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int pipe = 0; pipe < RAIL_DT_PIPES; pipe++)
            for (int b = 1; b < RAIL_DT_BUCKETS; b++) {
                const struct rail_dt_cell *cell = &dt->cell[coll][pipe][b];
                size_t lo, hi;
                if (cell->n == 0)
                    continue; /* NCCL's own choice stands there: nothing to compare with */
                rail_dt_bucket_range(b, &lo, &hi);
                if (lo == 0 || lo > hi)
                    continue;
                size_t mid = (size_t)sqrt((double)lo * (double)hi);
                float out[RAIL_DT_CANDIDATES], dist;
                (void)times(ctx, coll, mid < lo ? lo : mid, rail_dt_pipe_value(pipe), out, &dist);
                int choice = cell->cand[0], best = -1;
                if (!(out[choice] > 0.0f))
                    continue;
                for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
                    if (c != choice && out[c] > 0.0f && (best < 0 || out[c] < out[best]))
                        best = c;
                if (best < 0 || out[best] > out[choice] * (float)(1.0 + max_slowdown))
                    continue;
                e->alt[coll][pipe][b] = (uint8_t)best;
                e->ncells++;
            }
}
