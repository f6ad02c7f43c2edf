/* SPDX-License-Identifier: Apache-2.0 */
/* Cost model: NCCL 2.28.9's formulas on known inputs (values computed by hand from
 * src/graph/tuning.cc), the emulated search on known systems, and the published cases the
 * project's refinements must respect (docs/cost-model.md). */
#include "check.h"
#include "test_cost_model_topos.h"

#define AR ncclFuncAllReduce
#define AG ncclFuncAllGather
#define RS ncclFuncReduceScatter
#define BC ncclFuncBroadcast

static void build(void (*make)(struct rail_topo *), int nnodes, struct rail_model *m)
{
    static struct rail_topo t;
    make(&t);
    struct rail_comm_shape s = shape_of(nnodes, t.n_gpus);
    CHECK_EQ_INT(rail_model_build(m, &t, &s, NULL), 0);
    CHECK_MSG(m->confident, "%s: %s", t.origin, m->why);
}

static void expect_pick(const struct rail_model *m, int coll, size_t n, int algo, int proto)
{
    int a, p;
    rail_model_pick(m, coll, n, 1, &a, &p);
    CHECK_MSG(a == algo && p == proto, "%d ranks %s %zu B: got %s/%s, want %s/%s", m->shape.nranks,
              rail_coll_name(coll), n, rail_algo_name(a), rail_proto_name(p), rail_algo_name(algo),
              rail_proto_name(proto));
}

/* 8xH100 single node: the emulated search and NCCL's formulas, by hand. */
static void test_h100_single_node_nccl(void)
{
    static struct rail_model m;
    build(topo_h100, 1, &m);
    /* Ring: 6 channels x 60 GB/s fit in 18 x 20.6 = 370.8 GB/s, duplicated to 12 x 30. */
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_RING].nchannels, 12);
    CHECK_NEAR(m.graphs[NCCL_ALGO_RING].bw_intra, 30.0, 1e-4);
    CHECK_EQ_INT(m.comm_nchannels, 24);
    /* NVLS: 8 heads; a head carries 2x, so 9 x 40 <= 370.8; bwInter raised to 60. */
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_NVLS].nchannels, 8);
    CHECK_NEAR(m.graphs[NCCL_ALGO_NVLS].bw_intra, 40.0, 1e-4);
    CHECK_NEAR(m.graphs[NCCL_ALGO_NVLS].bw_inter, 60.0, 1e-4);
    CHECK_NEAR(m.bw_intra, 370.8, 1e-3);

    /* Bandwidths (GB/s, algorithm): Ring Simple 360 x 8/14; LL min(141, 180); LL128 0.92. */
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 360.0 * 8 / 14, 1e-3);
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 141.0 * 8 / 14, 1e-3);
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_LL128], 360.0 * 0.92 * 8 / 14, 1e-3);
    /* Tree: min(0.92 x 360, 12 x 38.7) x 0.5; LL /3.8; LL128 x 7/9. */
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 331.2 * 0.5, 1e-3);
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL], 331.2 / 3.8 * 0.5, 1e-3);
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL128], 331.2 * 7 / 9 * 0.5, 1e-3);
    /* NVLS AR: min(40 x 0.85 x 7/8 x 2, 60) x 8 channels x 8/14. */
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 59.5 * 8 * 8 / 14, 1e-2);
    /* NVLS AG: x (ppn-1)/ppn instead of x2 and no bus->alg conversion. */
    CHECK_NEAR(m.nccl_bw[AG][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 40 * 0.85 * 7 / 8 * 7 / 8 * 8,
               1e-2);
    /* AG Ring: x nRanks/(nRanks-1). */
    CHECK_NEAR(m.nccl_bw[AG][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 360.0 * 8 / 7, 1e-3);
    /* Broadcast: x nRanks/nRanks. */
    CHECK_NEAR(m.nccl_bw[BC][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 360.0, 1e-3);

    /* Latencies (µs): base + nsteps x hw (NVLink). */
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 6.6 + 14 * 0.6, 1e-4);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_LL128], 14.0 + 14 * 1.9, 1e-4);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 8.4 + 14 * 3.4, 1e-4);
    CHECK_NEAR(m.nccl_lat[AG][NCCL_ALGO_RING][NCCL_PROTO_LL], 6.6 + 7 * 0.6, 1e-4);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 8.4 + 2 * 7 * 4.0, 1e-4);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 25.0, 1e-4);
    CHECK_NEAR(m.nccl_lat[BC][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 8.4 + 3.4, 1e-4);

    /* time = lat + nBytes / (1000 bw); Tree AR bw x treeCorrectionFactor. */
    float bw = m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, MiB, 1),
               56.0 + (double)MiB / (1000.0 * bw), 1e-2);
    bw = m.nccl_bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE];
    /* 1 MiB: log2(2^20 >> 6) = 14 -> Simple factor 0.5. */
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, MiB, 1),
               64.4 + (double)MiB / (1000.0 * bw * 0.5), 1e-2);
    /* Below 64 B and at 512 MiB+ no factor applies. */
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 32, 1),
               64.4 + 32 / (1000.0 * bw), 1e-3);
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, GiB, 1),
               64.4 + (double)GiB / (1000.0 * bw), 1.0);
    /* NCCL's own pick for this node: LL small, NVLS large. */
    int a, p;
    rail_model_nccl_pick(&m, AR, 8, 1, &a, &p);
    CHECK(a == NCCL_ALGO_RING && p == NCCL_PROTO_LL);
    rail_model_nccl_pick(&m, AR, GiB, 1, &a, &p);
    CHECK(a == NCCL_ALGO_NVLS && p == NCCL_PROTO_SIMPLE);
}

/* 2 x 8xH100 with 8x400G IB: the emulated search and the multi-node formulas. */
static void test_h100_two_nodes_nccl(void)
{
    static struct rail_model m;
    build(topo_h100, 2, &m);
    /* 8 x 48 exceeds NVLink (384 > 370.8): 8 channels x 45, one per 50 GB/s NIC. */
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_RING].nchannels, 8);
    CHECK_NEAR(m.graphs[NCCL_ALGO_RING].bw_inter, 45.0, 1e-4);
    CHECK_NEAR(m.bw_inter, 50.0, 1e-4);
    CHECK_NEAR(m.lat_inter_us, 0.0, 1e-6);
    CHECK_EQ_INT(m.comm_nchannels, 16);
    /* Ring AR latency: 28 intra steps at max(3.4, 3 x 1.0) + 2 net steps at 14. */
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 8.4 + 28 * 3.4 + 2 * 14.0, 1e-3);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 6.6 + 28 * 1.0 + 2 * 2.7, 1e-3);
    /* Tree AR: 2 x (7 x intra + log2(2) x net). */
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL], 6.8 + 2 * (7 * 0.6 + 5.0), 1e-3);
    /* NVLSTree: NVLink + 2 x net. */
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_NVLS_TREE][NCCL_PROTO_SIMPLE], 25 + 2 * 20.9, 1e-3);
    /* LL across nodes: llMaxBws row 0 (Intel CPU), 2-node column. */
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 39.0 * 16 / 30, 1e-3);
    /* Ring plateau: x1.4 on Simple AR once nBytes / (16 channels x 16 ranks) >= 64. */
    float lat = m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    float bw = m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 16383, 1),
               lat + 16383 / (1000.0 * bw), 1e-3);
    CHECK_NEAR(rail_model_nccl_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 16384, 1),
               1.4 * lat + 16384 / (1000.0 * bw), 1e-3);

    /* AMD CPUs: 2 µs net overhead and llMaxBws row 1. */
    static struct rail_topo t;
    topo_h100(&t);
    t.cpu_vendor = RAIL_CPU_AMD;
    struct rail_comm_shape s = shape_of(2, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 8.4 + 28 * 6.0 + 2 * 14.0, 1e-3);
    CHECK_NEAR(m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_LL], 22.5 * 16 / 30, 1e-3);
    /* POWER: Tree Simple uses the Ring Simple PCI latency (single-node PCIe here). */
    topo_a10g(&t);
    t.cpu_vendor = RAIL_CPU_POWER;
    s = shape_of(1, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.nccl_lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE], 8.4 + 2 * 7 * 5.7, 1e-3);
}

/* The published cases (docs/cost-model.md "Where we differ from NCCL and why"). */
static void test_published_cases(void)
{
    static struct rail_model m;

    /* Hopper single node: LL tiny and in the mid range (NCCL's own latencies: the unvalidated
     * LL128 latency estimate R3 was dropped), NVLS for large AR; Ring for large AG/RS, where
     * NVLS is measured slower (nccl#1047, #1083, #1506). */
    build(topo_h100, 1, &m);
    expect_pick(&m, AR, 8, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, 64 * KiB, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, MiB, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, 64 * MiB, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE);
    expect_pick(&m, AR, GiB, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE);
    expect_pick(&m, AG, 256 * KiB, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AG, GiB, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
    expect_pick(&m, RS, GiB, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
    /* NVLS AR: 370.8 x 0.85 x 8/9 algorithm bandwidth, busbw ~490 (measured ~480, nccl#1455). */
    double busbw = m.bw[AR][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] * 14.0 / 8.0;
    CHECK_NEAR(busbw, 370.8 * 0.85 * 8 / 9 * 14 / 8, 1e-2);
    CHECK_MSG(busbw >= 450.0 && busbw <= 500.0, "NVLS busbw %g", busbw);
    /* NVLS AG/RS: the whole buffer at the ring's per-link rate (12 x 30). */
    CHECK_NEAR(m.bw[AG][NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE], 360.0, 1e-3);
    /* Ring Simple AR busbw ~360. */
    CHECK_NEAR(m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] * 14.0 / 8.0, 360.0, 1e-3);
    CHECK(m.refinements & RAIL_REFINE_NVLS_AGRS_BW);

    /* Ampere NVLink single node: LL to the mid range, LL128 beyond, as NCCL. */
    build(topo_p4d, 1, &m);
    expect_pick(&m, AR, 8, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, 256 * KiB, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, 4 * MiB, NCCL_ALGO_RING, NCCL_PROTO_LL128);
    expect_pick(&m, AR, GiB, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);

    /* 2-node Hopper: NVLSTree beats Ring for large AllReduce. */
    build(topo_h100, 2, &m);
    expect_pick(&m, AR, 8, NCCL_ALGO_TREE, NCCL_PROTO_LL);
    expect_pick(&m, AR, 64 * MiB, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE);
    expect_pick(&m, AR, GiB, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE);
    float tr = rail_model_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, GiB, 1);
    float tn = rail_model_time(&m, AR, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, GiB, 1);
    CHECK_MSG(tr > 1.2f * tn, "ring %g nvlstree %g", (double)tr, (double)tn);

    /* Blackwell, 3 nodes: the trees move 1.5 S per node (a ring ~2 S) and run at the search's
     * channel speed (GB200, nccl#1801): Tree for large AllReduce where NCCL's table says Ring.
     * From 4 nodes a tree moves 2 S per node too: Ring again (nccl#1368). */
    build(topo_b200, 3, &m);
    CHECK(m.refinements & RAIL_REFINE_TREE_TRAFFIC);
    CHECK(m.refinements & RAIL_REFINE_TREE_CAP);
    expect_pick(&m, AR, 16 * GiB, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE);
    CHECK(rail_model_time(&m, AR, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 16 * GiB, 1) <
          rail_model_time(&m, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 16 * GiB, 1));
    CHECK(m.nccl_bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] <
          m.nccl_bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE]);
    build(topo_b200, 4, &m);
    CHECK(!(m.refinements & RAIL_REFINE_TREE_TRAFFIC) ||
          m.bw[AR][NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] <
              m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE]);
    int a, p;
    rail_model_pick(&m, AR, 8 * GiB, 1, &a, &p);
    CHECK_MSG(a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE, "B200 4 nodes 8 GiB: %s/%s",
              rail_algo_name(a), rail_proto_name(p));
    rail_model_nccl_pick(&m, AR, GiB, 1, &a, &p);
    CHECK(a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE);
    /* Blackwell single node: NVLS AR from NVLink5. */
    build(topo_b200, 1, &m);
    CHECK(m.refinements & RAIL_REFINE_NVLS_AR_BW);
    expect_pick(&m, AR, GiB, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE);

    /* p5: 32x100G EFA, four rails per GPU, shown to NCCL as one 400G device per GPU by
     * aws-ofi-nccl: like 8x400G for the search, with EFA's 75 µs latency. */
    build(topo_p5, 2, &m);
    CHECK_NEAR(m.bw_inter, 50.0, 1e-4);
    CHECK_NEAR(m.lat_inter_us, 75.0, 1e-4);
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_RING].nchannels, 8);
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_NVLS_TREE].nchannels, 8);
    CHECK_NEAR(m.graphs[NCCL_ALGO_NVLS_TREE].bw_inter, 48.0, 1e-4);
    expect_pick(&m, AR, GiB, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE);

    /* PCIe-only: Ring/Tree with LL and Simple. */
    build(topo_a10g, 1, &m);
    expect_pick(&m, AR, 8, NCCL_ALGO_RING, NCCL_PROTO_LL);
    expect_pick(&m, AR, GiB, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
    /* Two nodes on one slow NIC: a tree crosses the network with half the bytes of a ring, so
     * NCCL's search lets the tree's bwIntra reach twice its bwInter, and Tree wins. */
    build(topo_t4, 2, &m);
    expect_pick(&m, AR, 8, NCCL_ALGO_TREE, NCCL_PROTO_LL);
    expect_pick(&m, AR, GiB, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
    CHECK_NEAR(m.graphs[NCCL_ALGO_TREE].bw_intra, 2 * m.graphs[NCCL_ALGO_TREE].bw_inter, 1e-4);
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int a2 = 0; a2 < NCCL_NUM_ALGORITHMS; a2++)
            CHECK(m.bw[c][a2][NCCL_PROTO_LL128] == 0.0f);

    /* p4d: 4x100G EFA for 8 GPUs, two GPUs per NIC: 6.25 GB/s per GPU; inter-node bound. */
    build(topo_p4d, 4, &m);
    CHECK_NEAR(m.bw_inter, 6.25, 1e-3);
    CHECK_NEAR(m.lat_inter_us, 75.0, 1e-3); /* aws-ofi-nccl's p4d latency */
    CHECK_NEAR(m.graphs[NCCL_ALGO_RING].lat_inter, 75.0, 1e-3);
    double ring_bus = m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] * 2 * 31 / 32.0;
    CHECK_MSG(ring_bus <= 4 * 12.5 + 1e-3, "ring busbw %g above the NICs", ring_bus);
    CHECK_MSG(ring_bus >= 40.0, "ring busbw %g", ring_bus);
    static struct rail_model one;
    build(topo_p4d, 1, &one);
    CHECK(one.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] >
          4 * m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE]);
}

/* NIC path class and GDR penalties, and latency by NIC type. */
static void test_network_inputs(void)
{
    static struct rail_model m;
    static struct rail_topo t;
    struct rail_comm_shape s = shape_of(2, 8);
    topo_h100(&t);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.bw_inter, 50.0, 1e-4);
    float pix_ring = m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE];
    /* Rails x speed: two 400G NICs per GPU double it. */
    topo_h100(&t);
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof(name), "mlx5_%d", 8 + i);
        topo_add_nic(&t, name, 400000, RAIL_LINK_IB, true, false);
    }
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 16; n++)
            t.path[g][n] = (n % 8) == g ? RAIL_PATH_PIX : RAIL_PATH_SYS;
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.bw_inter, 100.0, 1e-4);
    /* No GDR: x0.8. */
    topo_h100(&t);
    t.gdr = false;
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.bw_inter, 40.0, 1e-4);
    /* Every NIC across the CPU (PHB): no GDR either, x0.8; SYS: x0.4. */
    topo_h100(&t);
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++)
            t.path[g][n] = RAIL_PATH_PHB;
    rail_model_build(&m, &t, &s, NULL);
    /* Each GPU now reaches all 8 NICs at PHB: 8 x 50 x 0.8 / 8 GPUs. */
    CHECK_NEAR(m.bw_inter, 40.0, 1e-4);
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++)
            t.path[g][n] = RAIL_PATH_SYS;
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.bw_inter, 20.0, 1e-4);
    CHECK(m.bw[AR][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] < 0.6f * pix_ring);
    /* Down NICs do not count. */
    topo_h100(&t);
    for (int n = 4; n < 8; n++)
        t.nics[n].active = false;
    rail_model_build(&m, &t, &s, NULL);
    CHECK(m.confident);
    CHECK(m.bw_inter < 50.0f);

    /* Latency by NIC type: IB 0, RoCE 0 (its extra lives in the tuned NET constants), EFA by
     * generation, unknown type like aws-ofi-nccl's fall-through default. */
    topo_h100_roce(&t);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.lat_inter_us, 0.0, 1e-6);
    topo_h100(&t);
    for (int n = 0; n < 8; n++) {
        snprintf(t.nics[n].name, sizeof(t.nics[n].name), "rdmap%ds0", n);
        t.nics[n].link_layer = RAIL_LINK_UNKNOWN;
    }
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.lat_inter_us, 35.0, 1e-6); /* 400G EFA (p5en/p6 class) */
    for (int n = 0; n < 8; n++)
        t.nics[n].speed_mbps = 100000;
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.lat_inter_us, 75.0, 1e-6);
    CHECK_NEAR(m.graphs[NCCL_ALGO_RING].lat_inter, 75.0, 1e-6);
    for (int n = 0; n < 8; n++)
        snprintf(t.nics[n].name, sizeof(t.nics[n].name), "vendor%d", n);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.lat_inter_us, 75.0, 1e-6);
    CHECK_NEAR(m.graphs[NCCL_ALGO_RING].lat_inter, 0.0, 1e-6);
    CHECK(m.lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL] > m.nccl_lat[AR][NCCL_ALGO_TREE][NCCL_PROTO_LL]);
    /* Soft-RoCE. */
    topo_h100_roce(&t);
    for (int n = 0; n < 8; n++)
        t.nics[n].virtual_nic = true;
    rail_model_build(&m, &t, &s, NULL);
    CHECK_NEAR(m.lat_inter_us, 20.0, 1e-6);
}

/* A communicator using 4 of the 8 GPUs of the node. */
static void test_partial_node(void)
{
    static struct rail_model m;
    static struct rail_topo t;
    topo_h100(&t);
    struct rail_comm_shape s = shape_of(2, 4);
    rail_model_build(&m, &t, &s, NULL);
    CHECK(m.confident);
    CHECK_EQ_INT(m.graphs[NCCL_ALGO_NVLS].nchannels, 4);
    CHECK_NEAR(m.bw_inter, 50.0, 1e-4);
    expect_pick(&m, AR, 8, NCCL_ALGO_TREE, NCCL_PROTO_LL);
    CHECK(rail_model_pick(&m, AR, GiB, 1, NULL, NULL) > 0);
    CHECK_EQ_INT(m.nchannels[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 0); /* keep NCCL's */
}

int main(void)
{
    test_h100_single_node_nccl();
    test_h100_two_nodes_nccl();
    test_published_cases();
    test_network_inputs();
    test_partial_node();
    return check_report("test_cost_model_cases");
}
