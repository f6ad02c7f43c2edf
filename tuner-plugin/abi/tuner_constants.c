/* SPDX-License-Identifier: Apache-2.0 */
#include "abi/tuner_constants.h"

#include <string.h>

/* The per-compcap tables, named once for both directions. */
#define RAIL_PER_COMPCAP_TABLES(X)                                                                 \
    X(llMaxBws)                                                                                    \
    X(perChMaxRingLL128Bws) X(perChMaxTreeLL128Bws) X(perChMaxTreeBws) X(perChMaxNVLSTreeBws)

void rail_constants_from_v7(ncclTunerConstants_v5_t *dst, const ncclTunerConstants_v7_t *src)
{
    memcpy(dst->baseLatencies, src->baseLatencies, sizeof(dst->baseLatencies));
    memcpy(dst->hwLatencies, src->hwLatencies, sizeof(dst->hwLatencies));
    for (int cc = 0; cc < NCCL_NUM_COMPCAPS_V5; cc++)
        for (int s = 0; s < NCCL_NUM_TUNING_SCALES; s++) {
#define FROM_V7(table) dst->table[cc][s] = src->table[cc][s];
            RAIL_PER_COMPCAP_TABLES(FROM_V7)
#undef FROM_V7
        }
}

static int put(double *dst, double v)
{
    /* Compared bit for bit: a NaN NCCL put there and left alone is not a change. */
    if (memcmp(dst, &v, sizeof(v)) == 0)
        return 0;
    *dst = v;
    return 1;
}

int rail_constants_to_v7(ncclTunerConstants_v7_t *dst, const ncclTunerConstants_v5_t *src)
{
    int changed = 0;
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            changed += put(&dst->baseLatencies[a][p], src->baseLatencies[a][p]);
            for (int hw = 0; hw < NCCL_NUM_HW_LINKS; hw++)
                changed += put(&dst->hwLatencies[hw][a][p], src->hwLatencies[hw][a][p]);
        }
    for (int cc = 0; cc < NCCL_NUM_COMPCAPS_V5; cc++)
        for (int s = 0; s < NCCL_NUM_TUNING_SCALES; s++) {
#define TO_V7(table) changed += put(&dst->table[cc][s], src->table[cc][s]);
            RAIL_PER_COMPCAP_TABLES(TO_V7)
#undef TO_V7
        }
    return changed;
}
