/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the cost_model*.c files only. */
#ifndef NCCL_RAIL_COST_MODEL_INTERNAL_H
#define NCCL_RAIL_COST_MODEL_INTERNAL_H

#include "cost_model.h"
#include "model_table.h"

/* NCCL 2.28.9 facts (src/include/device.h, src/graph/topo.h, src/transport/nvls.cc). */
#define CM_MAXCHANNELS           64
#define CM_MAX_NVLS_ARITY        32
#define CM_MAX_DIRECT_ARITY      7
#define CM_MAX_DEV_WORK_BATCH    10 /* NCCL_MAX_DEV_WORK_BATCH_COLLS = 1024 / 96 */
#define CM_PCI_BW                12.0f
#define CM_NET_BW                12.0f /* NCCL's NET_BW: 100 Gb/s when a speed is unknown */
#define CM_TREE_CORRECTION_SIZES 23

/* Inputs derived from the topology for one node (the GPUs the communicator uses). */
struct cm_nic_eff {
    float gbps;    /* effective GB/s after path/GDR penalties */
    int best_path; /* best path class from a used GPU */
};

struct cm_inputs {
    int ngpus; /* GPUs of the node the communicator uses (ranks per node) */
    int sm_min, sm_max;
    bool nvlink; /* intra-node GPU traffic over NVLink */
    bool nvswitch;
    float bw_intra;  /* per GPU, NCCL units */
    float total_bw;  /* NCCL's system->totalBw */
    int type_intra;  /* enum rail_path */
    int type_inter;  /* best NIC path class over the used GPUs */
    float bw_inter;  /* per GPU, penalised share of the nearest NICs */
    float lat_inter; /* µs, the project's estimate by NIC type */
    float props_lat; /* µs, what NCCL adds itself (the net plugin's props.latency) */
    int n_nics;      /* NICs used (nearest to a used GPU; EFA rails of the same GPUs fused) */
    struct cm_nic_eff nics[RAIL_TOPO_MAX_NICS];
    int cpu_vendor;
    bool efa; /* the nearest NICs are AWS EFA devices */
};

/* cost_model_constants.c */
extern const float cm_nvls_efficiency[NCCL_NUM_COMPCAPS];
extern const float cm_tree_correction[NCCL_NUM_PROTOCOLS][CM_TREE_CORRECTION_SIZES];
int cm_compcap_index(int sm);
/* Speed ladders of NCCL's search (src/graph/search.cc). */
const float *cm_speed_ladder(int sm, bool inter, int *n);

/* cost_model_inputs.c: fills in and the model's inputs; returns false with a reason when the
 * topology is too unknown for the model to be trusted. */
bool cm_derive_inputs(const struct rail_topo *t, const struct rail_comm_shape *shape,
                      struct cm_inputs *in, char *why, size_t whylen);
/* cost_model_search.c: emulation of NCCL's search for ring/tree and NVLS graphs. */
void cm_emulate_graphs(const struct cm_inputs *in, const struct rail_comm_shape *shape,
                       struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], int *comm_nchannels);

typedef float cm_table[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];

/* cost_model_nccl.c: NCCL 2.28.9's ncclTopoTuneModel on graphs (latency µs, algorithm GB/s; bw 0
 * where NCCL would not offer the combination). Reads m's shape, sm, compcap, flags. */
void cm_tables(const struct rail_model *m, const ncclTunerConstants_v5_t *c,
               const struct rail_model_graph graphs[NCCL_NUM_ALGORITHMS], cm_table lat,
               cm_table bw);

/* cost_model_refine.c: the project's refinements on top of the NCCL tables (c: the constants the
 * project table was computed with). */
void cm_refine(struct rail_model *m, const struct cm_inputs *in, const ncclTunerConstants_v5_t *c);

/* cost_model_steps.c: the trained step model (docs/cost-model.md §12) replaces the project
 * table's Ring, Tree, NVLSTree and PAT entries of a communicator that spans nodes, where NCCL
 * offers them. */
void cm_step_tables(struct rail_model *m, const struct cm_inputs *in,
                    const struct rail_step_coef *k);

/* cost_model_measured.c: the measured residuals of the table resolved for this communicator. */
void cm_resolve_residuals(struct rail_model *m);

/* Ring/tree algorithm-bandwidth conversion helpers shared by nccl and refine. */
int cm_nsteps(int coll, int nranks);

#endif
