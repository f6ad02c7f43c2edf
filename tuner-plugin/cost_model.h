/* The cost model: predicted time of every (collective, algorithm, protocol) for a communicator on
 * a topology. Pure C, no I/O, deterministic (no timing, no randomness), so every rank agrees.
 * Every constant and its source is documented in docs/cost-model.md. */
#ifndef NCCL_RAIL_COST_MODEL_H
#define NCCL_RAIL_COST_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "nccl/nccl_tuner.h"
#include "topo.h"

#define RAIL_NUM_COLLS                                                                             \
    NCCL_NUM_FUNCTIONS /* Broadcast, Reduce, AllGather, ReduceScatter, AllReduce */

/* The communicator as NCCL describes it to the tuner. */
struct rail_comm_shape {
    int nranks;
    int nnodes;
    int min_rpn; /* ranks per node (nvlDomainInfo in v5; nranks/nnodes otherwise) */
    int max_rpn;
};

struct rail_model {
    struct rail_comm_shape shape;
    int sm;          /* min GPU compute capability of the topology */
    int compcap_idx; /* NCCL_*_COMPCAP_IDX */
    bool confident;  /* false: topology too unknown, the tuner must not act */
    /* Per (coll, algo, proto): latency in µs and algorithm bandwidth in GB/s; bw 0 = unsupported
     * by the model (NCCL may still offer it: the tuner then falls back to its next choice). */
    float lat[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float bw[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    /* Channel suggestion per algo/proto (0 = keep NCCL's). */
    int nchannels[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    /* Inputs kept for explain/logging. */
    float bw_intra;     /* GB/s per GPU inside the node (NVLink or PCIe) */
    float bw_inter;     /* GB/s per GPU to the network (nearest NICs, rails × speed) */
    float lat_inter_us; /* extra network latency from NIC type */
    char why[160];      /* one line: why not confident, or a summary of the inputs */
};

/* Build the model. constants may be NULL (NCCL's 2.28.9 defaults are used). Returns 0. */
int rail_model_build(struct rail_model *m, const struct rail_topo *t,
                     const struct rail_comm_shape *shape, const ncclTunerConstants_v5_t *constants);

/* Predicted time in µs, or -1 when the model considers the combination impossible. */
float rail_model_time(const struct rail_model *m, int coll, int algo, int proto, size_t nbytes,
                      int num_pipe_ops);

/* NCCL 2.28.9's default tuning constants (what v5 init receives). */
void rail_model_default_constants(ncclTunerConstants_v5_t *c);

/* v5 init: refine NCCL's own constants where the topology says more and doing so is safe
 * (documented in docs/cost-model.md). Returns the number of entries changed. */
int rail_model_tune_constants(const struct rail_model *m, const struct rail_topo *t,
                              ncclTunerConstants_v5_t *c);

/* Names as NCCL prints them. */
const char *rail_coll_name(int coll);   /* "AllReduce" */
const char *rail_algo_name(int algo);   /* "Ring", "NVLSTree", ... */
const char *rail_proto_name(int proto); /* "LL", "LL128", "Simple" */

#endif
