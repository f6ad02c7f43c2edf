/* SPDX-License-Identifier: Apache-2.0 */
#include "calib_apply.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void rail_calib_apply_init(struct rail_calib_apply *a)
{
    for (int coll = 0; coll < RAIL_NUM_COLLS; coll++)
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++)
            rail_calib_resolve(a->cal, coll, c / NCCL_NUM_PROTOCOLS, c % NCCL_NUM_PROTOCOLS, a->rpn,
                               a->nnodes, &a->series[coll][c]);
}

int rail_calib_apply_times(const void *ctx, int coll, size_t nbytes, int num_pipe_ops,
                           float out[RAIL_DT_CANDIDATES])
{
    const struct rail_calib_apply *a = ctx;
    double ct[RAIL_DT_CANDIDATES], logsum = 0.0;
    int ncal = 0, nscale = 0;

    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        int algo = c / NCCL_NUM_PROTOCOLS, proto = c % NCCL_NUM_PROTOCOLS;
        enum rail_calib_how how;
        out[c] = rail_model_time(a->model, coll, algo, proto, nbytes, num_pipe_ops);
        ct[c] = rail_calib_series_time(&a->series[coll][c], nbytes, &how);
        if (ct[c] <= 0.0)
            continue;
        ncal++;
        if (num_pipe_ops > 1 && out[c] > 0.0f) {
            float single = rail_model_time(a->model, coll, algo, proto, nbytes, 1);
            if (single > 0.0f)
                ct[c] *= (double)out[c] / (double)single;
        }
        if (out[c] > 0.0f) {
            logsum += log(ct[c] / (double)out[c]);
            nscale++;
        }
    }
    if (ncal == 0)
        return 0;
    for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
        if (ct[c] > 0.0)
            out[c] = (float)ct[c];
        else if (out[c] >= 0.0f && nscale)
            out[c] = (float)((double)out[c] * exp(logsum / nscale));
    }
    return 1;
}

int rail_calib_apply_summary(const struct rail_calib_apply *a, char *buf, size_t len)
{
    static const char *const how_name[] = {"", "measured", "measured", "interpolated",
                                           "extrapolated"};
    struct rail_calib_cover cv;
    size_t k;
    int applied = 0;

    rail_calib_cover(a->cal, &cv);
    k = (size_t)snprintf(buf, len,
                         "covers %d point(s): %d shape(s), %d pair(s), %d-%d node(s), %d-%d "
                         "rank(s)/node, %llu-%llu bytes; applied to %d node(s) x %d rank(s)/node:",
                         cv.rows, cv.shapes, cv.pairs, cv.nnodes_min, cv.nnodes_max, cv.rpn_min,
                         cv.rpn_max, (unsigned long long)cv.bytes_min,
                         (unsigned long long)cv.bytes_max, a->nnodes, a->rpn);
    for (int coll = 0; coll < RAIL_NUM_COLLS && a->rpn > 0; coll++)
        for (int c = 0; c < RAIL_DT_CANDIDATES; c++) {
            int algo = c / NCCL_NUM_PROTOCOLS, proto = c % NCCL_NUM_PROTOCOLS;
            enum rail_calib_how how;
            /* The node-count step does not depend on the size: probe one. */
            if (rail_calib_series_time(&a->series[coll][c], 1 << 20, &how) <= 0)
                continue;
            applied++;
            if (k < len)
                k += (size_t)snprintf(buf + k, len - k, " %s %s/%s %s;", rail_coll_name(coll),
                                      rail_algo_name(algo), rail_proto_name(proto), how_name[how]);
        }
    if (!applied && k < len)
        snprintf(buf + k, len - k, " nothing for this shape (default model)");
    else if (k < len && k > 0)
        buf[k - 1] = '\0';
    return applied;
}
