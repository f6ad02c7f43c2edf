/* SPDX-License-Identifier: Apache-2.0 */
/* A tuner plugin that is active and never changes NCCL's cost table (ABI v3): peer_tuner's test
 * peer, whose regret must be NCCL's default's at every point (ctest peer_tuner_null_peer). */
#include "nccl/nccl_tuner.h"

static int g_ctx;

static ncclResult_t init(size_t nranks, size_t nnodes, ncclDebugLogger_t log, void **ctx)
{
    (void)nranks;
    (void)nnodes;
    (void)log;
    *ctx = &g_ctx;
    return ncclSuccess;
}

static ncclResult_t get_coll_info(void *ctx, ncclFunc_t coll, size_t nbytes, int num_pipe_ops,
                                  float **table, int num_algo, int num_proto, int *nchannels)
{
    (void)ctx;
    (void)coll;
    (void)nbytes;
    (void)num_pipe_ops;
    (void)table;
    (void)num_algo;
    (void)num_proto;
    (void)nchannels;
    return ncclSuccess;
}

static ncclResult_t destroy(void *ctx)
{
    (void)ctx;
    return ncclSuccess;
}

__attribute__((visibility("default"))) const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = "peer-null", .init = init, .getCollInfo = get_coll_info, .destroy = destroy};
