/* SPDX-License-Identifier: Apache-2.0 */
/* Types and NCCL facts shared between the cost_model*.c files only; declares no function (each
 * file's own header does: cost_model_inputs.h, cost_model_search.h, ...). */
#ifndef NCCL_RAIL_COST_MODEL_INTERNAL_H
#define NCCL_RAIL_COST_MODEL_INTERNAL_H

#include <stdbool.h>

#include "model/cost_model_types.h"
#include "nccl/nccl_tuner.h"
#include "topo.h"

/* NCCL 2.28.9 facts (src/include/device.h, src/graph/topo.h, src/transport/nvls.cc). */
#define CM_MAXCHANNELS        64
#define CM_MAX_NVLS_ARITY     32
#define CM_MAX_DIRECT_ARITY   7
#define CM_MAX_DEV_WORK_BATCH 10 /* NCCL_MAX_DEV_WORK_BATCH_COLLS = 1024 / 96 */
#define CM_PCI_BW             12.0f
#define CM_NET_BW             12.0f /* NCCL's NET_BW: 100 Gb/s when a speed is unknown */

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

typedef float cm_table[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];

#endif
