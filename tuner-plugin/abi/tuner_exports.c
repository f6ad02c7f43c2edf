/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL tuner ABI shims, v2..v7: the only file that knows the versioned signatures.
 * Every table is complete at load time (NCCL reads the function pointers before any init).
 * Each version's constants are handled through that version's own layout only: v5/v6 in place,
 * v7 through a v5-shaped working copy (tuner_constants.h) so the Rubin row stays as NCCL set it. */
#include "abi/tuner_exports.h"

#include <errno.h>

#include "log.h"
#include "result.h"
#include "abi/tuner_constants.h"
#include "abi/tuner_core.h"
#include "version.h"

#define PLUGIN_NAME "rail"

static ncclResult_t init_common(int abi, void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                                ncclDebugLogger_t logger, ncclNvlDomainInfo_v5_t *nvl,
                                ncclTunerConstants_v5_t *constants)
{
    struct rail_tuner_opts opts = {
        .topo = NULL, .rules_path = NULL, .lenient = -1, .constants = constants};
    struct rail_tuner *t = NULL;
    int rc;

    rail_tuner_banner(logger, abi); /* the first INFO line */
    if (!ctx)
        return ncclInvalidArgument;
    *ctx = NULL;
    rc = rail_tuner_create(&t, comm_id, nranks, nnodes, nvl, &opts);
    if (rc < 0)
        return rail_result(rc);
    *ctx = t;
    return ncclSuccess;
}

static ncclResult_t get_coll_info(void *ctx, ncclFunc_t coll, size_t nbytes, int num_pipe_ops,
                                  float **cost_table, int num_algo, int num_proto, int reg_buff,
                                  int *nchannels)
{
    /* A table of another shape is not one this build understands: leave it alone. */
    if (!ctx || !cost_table || num_algo != NCCL_NUM_ALGORITHMS || num_proto != NCCL_NUM_PROTOCOLS)
        return ncclSuccess;
    rail_tuner_apply(ctx, (int)coll, nbytes, num_pipe_ops, reg_buff, nccl_cost_table(cost_table),
                     nchannels);
    return ncclSuccess;
}

static ncclResult_t finalize(void *ctx)
{
    rail_tuner_destroy(ctx);
    return ncclSuccess;
}

/* v6 (NCCL 2.30, 2.31) and v7 (NCCL 2.32): NCCL's chunk size stands unless the rules file names
 * one for this call; a named one is clamped to what NCCL's buffers hold (chunk_bounds.h). */
static ncclResult_t get_chunk_size(void *ctx, ncclFunc_t coll, size_t nbytes, int algo, int proto,
                                   int nchannels, size_t *chunk_size)
{
    (void)nchannels;
    rail_tuner_chunk_size(ctx, (int)coll, nbytes, algo, proto, chunk_size);
    return ncclSuccess;
}

/* ---- v7 / v6 / v5 ---- */
static ncclResult_t init_v7(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t logger, ncclNvlDomainInfo_v7_t *nvl,
                            ncclTunerConstants_v7_t *constants)
{
    ncclTunerConstants_v5_t work;
    ncclResult_t rc;

    if (!constants)
        return init_common(7, ctx, comm_id, nranks, nnodes, logger, nvl, NULL);
    rail_constants_from_v7(&work, constants);
    rc = init_common(7, ctx, comm_id, nranks, nnodes, logger, nvl, &work);
    if (rc == ncclSuccess)
        rail_constants_to_v7(constants, &work);
    return rc;
}

static ncclResult_t init_v6(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t logger, ncclNvlDomainInfo_v5_t *nvl,
                            ncclTunerConstants_v5_t *constants)
{
    return init_common(6, ctx, comm_id, nranks, nnodes, logger, nvl, constants);
}

static ncclResult_t init_v5(void **ctx, uint64_t comm_id, size_t nranks, size_t nnodes,
                            ncclDebugLogger_t logger, ncclNvlDomainInfo_v5_t *nvl,
                            ncclTunerConstants_v5_t *constants)
{
    return init_common(5, ctx, comm_id, nranks, nnodes, logger, nvl, constants);
}

const ncclTuner_v7_t ncclTunerPlugin_v7 = {
    .name = PLUGIN_NAME,
    .init = init_v7,
    .getCollInfo = get_coll_info,
    .finalize = finalize,
    .getChunkSize = get_chunk_size,
};

const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = PLUGIN_NAME,
    .init = init_v6,
    .getCollInfo = get_coll_info,
    .finalize = finalize,
    .getChunkSize = get_chunk_size,
};

const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = PLUGIN_NAME,
    .init = init_v5,
    .getCollInfo = get_coll_info,
    .finalize = finalize,
};

/* ---- v4 / v3 / v2: init(nRanks, nNodes, logger, ctx) without constants or comm id ---- */
#define INIT_OLD(v)                                                                                \
    static ncclResult_t init_v##v(size_t nranks, size_t nnodes, ncclDebugLogger_t logger,          \
                                  void **ctx)                                                      \
    {                                                                                              \
        return init_common(v, ctx, 0, nranks, nnodes, logger, NULL, NULL);                         \
    }
INIT_OLD(4)
INIT_OLD(3)
INIT_OLD(2)

const ncclTuner_v4_t ncclTunerPlugin_v4 = {
    .name = PLUGIN_NAME,
    .init = init_v4,
    .getCollInfo = get_coll_info,
    .destroy = finalize,
};

static ncclResult_t get_coll_info_v3(void *ctx, ncclFunc_t coll, size_t nbytes, int num_pipe_ops,
                                     float **cost_table, int num_algo, int num_proto,
                                     int *nchannels)
{
    return get_coll_info(ctx, coll, nbytes, num_pipe_ops, cost_table, num_algo, num_proto, -1,
                         nchannels);
}

const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = PLUGIN_NAME,
    .init = init_v3,
    .getCollInfo = get_coll_info_v3,
    .destroy = finalize,
};

static ncclResult_t get_coll_info_v2(void *ctx, ncclFunc_t coll, size_t nbytes, int collnet_support,
                                     int nvls_support, int num_pipe_ops, int *algo, int *proto,
                                     int *nchannels)
{
    if (!ctx || !algo || !proto)
        return ncclSuccess;
    rail_tuner_choose_v2(ctx, (int)coll, nbytes, collnet_support, nvls_support, num_pipe_ops, algo,
                         proto, nchannels);
    return ncclSuccess;
}

const ncclTuner_v2_t ncclTunerPlugin_v2 = {
    .name = PLUGIN_NAME,
    .init = init_v2,
    .getCollInfo = get_coll_info_v2,
    .destroy = finalize,
};
