/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model's types: the communicator shape, the emulated search graphs and the model of one
 * communicator (cost_model.h builds and reads it). Below every cost_model*.c, which all share
 * them; declares no function. */
#ifndef NCCL_RAIL_COST_MODEL_TYPES_H
#define NCCL_RAIL_COST_MODEL_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "nccl/nccl_tuner.h"

#define RAIL_NUM_COLLS                                                                             \
    NCCL_NUM_FUNCTIONS /* Broadcast, Reduce, AllGather, ReduceScatter, AllReduce */

/* The communicator as NCCL describes it to the tuner. */
struct rail_comm_shape {
    int nranks;
    int nnodes;
    int min_rpn; /* ranks per node (nvlDomainInfo in v5; nranks/nnodes otherwise) */
    int max_rpn;
    bool collnet; /* CollNet (SHARP) usable; the tuner cannot know it, so normally false */
};

/* One emulated result of NCCL's topology search for an algorithm (NCCL's ncclTopoGraph). */
struct rail_model_graph {
    int nchannels;
    float bw_intra;  /* GB/s per channel */
    float bw_inter;  /* GB/s per channel */
    int type_intra;  /* enum rail_path */
    int type_inter;  /* enum rail_path */
    float lat_inter; /* µs, the net device latency NCCL adds (props.latency) */
};

/* Refinements the project applied on top of NCCL's model (bits of rail_model.refinements). */
enum rail_refinement {
    RAIL_REFINE_NVLS_AR_BW = 1u << 0,   /* single-node NVLS AllReduce bandwidth from NVLink */
    RAIL_REFINE_NVLS_AGRS_BW = 1u << 1, /* single-node NVLS AllGather/ReduceScatter bandwidth */
    RAIL_REFINE_TREE_TRAFFIC = 1u << 3, /* Tree/NVLSTree AllReduce network traffic across nodes */
    RAIL_REFINE_TREE_CAP = 1u << 4,     /* Tree channel cap (Blackwell > 2 nodes, Ampere 2 nodes) */
};

/* What the measurements taught lives in a table (model_table.h): the step model's coefficients
 * per network family and GPU generation, the covered shapes and the residuals. NULL wherever a
 * table is asked for means the one embedded in the build. */
struct rail_model_table;

/* The measured residual of one (collective, algorithm, protocol) for this communicator: up to two
 * node counts of the table (the bracketing pair, or the nearest one), weighted. */
struct rail_resid_series {
    const struct rail_table_resid *a, *b; /* rows of each node count, by bytes */
    int na, nb;
    float wa, wb;
};

struct rail_model {
    struct rail_comm_shape shape;
    int sm;          /* min GPU compute capability of the topology */
    int sm_max;      /* max GPU compute capability */
    int compcap_idx; /* NCCL_*_COMPCAP_IDX */
    bool confident;  /* false: topology too unknown, the tuner must not act */
    /* Per (coll, algo, proto): latency in µs and algorithm bandwidth in GB/s; bw 0 = unsupported
     * by the model (NCCL may still offer it: the tuner then falls back to its next choice). */
    float lat[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float bw[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    /* NCCL 2.28.9's own prediction from the same inputs (for explain and tests). */
    float nccl_lat[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float nccl_bw[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    /* Channel suggestion per algo/proto (0 = keep NCCL's). */
    int nchannels[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    /* Inputs kept for explain/logging. */
    float bw_intra;     /* GB/s per GPU inside the node (NVLink or PCIe) */
    float bw_inter;     /* GB/s per GPU to the network (nearest NICs, rails × speed, penalised) */
    float lat_inter_us; /* extra network latency from NIC type */
    struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS]; /* emulated search, per algorithm */
    int comm_nchannels;   /* NCCL's comm->nChannels (ring plateau test) */
    int cpu_vendor;       /* enum rail_cpu_vendor */
    bool nvlink;          /* GPUs talk over NVLink (typeIntra NVL) */
    bool nvls_fabric;     /* NVSwitch present (NCCL's nvsCount > 0) */
    bool nvls;            /* NVLS usable: NVSwitch, sm >= 90, >= 2 GPUs */
    bool pat;             /* PAT enabled (NCCL_PAT_ENABLE=2 auto: 1 GPU per node) */
    unsigned refinements; /* enum rail_refinement bits applied to lat/bw */
    int family;           /* enum rail_family: node (one node), efa, ib */
    bool trained;         /* lat/bw come from the trained step model (cost_model_steps.c) */
    /* The physical prior: NCCL's model with the constants as the tuner leaves them, the network
     * latency by NIC type and the refinements of docs/cost-model.md §5. lat/bw equal it unless
     * the step model is trained for this family and generation. */
    float prior_lat[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float prior_bw[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    const struct rail_model_table *table; /* what the model was built with (never NULL) */
    struct rail_resid_series resid[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS * NCCL_NUM_PROTOCOLS];
    char why[160]; /* one line: why not confident, or a summary of the inputs */
};

#endif
