/* SPDX-License-Identifier: Apache-2.0 */
/* Cost model: NCCL 2.28.9's default constants, the model honouring passed constants, and the v5
 * constant refinements (which entries, how many, only the node's compute capability). */
#include "check.h"
#include "test_cost_model_topos.h"

#define T  NCCL_ALGO_TREE
#define R  NCCL_ALGO_RING
#define CD NCCL_ALGO_COLLNET_DIRECT
#define CC NCCL_ALGO_COLLNET_CHAIN
#define NV NCCL_ALGO_NVLS
#define NT NCCL_ALGO_NVLS_TREE
#define PA NCCL_ALGO_PAT
#define LL NCCL_PROTO_LL
#define L8 NCCL_PROTO_LL128
#define SI NCCL_PROTO_SIMPLE

static void test_defaults(void)
{
    ncclTunerConstants_v5_t c;
    memset(&c, 0xff, sizeof(c));
    rail_model_default_constants(&c);
    rail_model_default_constants(NULL); /* harmless */
    /* baseLatencies */
    CHECK(c.baseLatencies[T][LL] == 6.8 && c.baseLatencies[T][L8] == 14.0);
    CHECK(c.baseLatencies[T][SI] == 8.4);
    CHECK(c.baseLatencies[R][LL] == 6.6 && c.baseLatencies[R][L8] == 14.0);
    CHECK(c.baseLatencies[R][SI] == 8.4);
    for (int a = CD; a <= NT; a++)
        for (int p = 0; p < 3; p++)
            CHECK(c.baseLatencies[a][p] == 0.0);
    CHECK(c.baseLatencies[PA][LL] == 8.0 && c.baseLatencies[PA][SI] == 8.0);
    /* hwLatencies NVLINK */
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][T][LL] == 0.6);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][T][L8] == 1.25);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][T][SI] == 4.0);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][R][LL] == 0.6);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][R][L8] == 1.9);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][R][SI] == 3.4);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][CD][SI] == 3.7);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][CC][SI] == 2.8);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][NV][SI] == 25);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][NT][SI] == 25);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][PA][SI] == 4.0);
    CHECK(c.hwLatencies[NCCL_HW_NVLINK][NV][LL] == 0.0);
    /* PCI */
    CHECK(c.hwLatencies[NCCL_HW_PCI][T][LL] == 1.0);
    CHECK(c.hwLatencies[NCCL_HW_PCI][T][L8] == 1.9);
    CHECK(c.hwLatencies[NCCL_HW_PCI][T][SI] == 4.0);
    CHECK(c.hwLatencies[NCCL_HW_PCI][R][L8] == 2.5);
    CHECK(c.hwLatencies[NCCL_HW_PCI][R][SI] == 5.7);
    CHECK(c.hwLatencies[NCCL_HW_PCI][CD][SI] == 3.7);
    CHECK(c.hwLatencies[NCCL_HW_PCI][NV][SI] == 0.0);
    CHECK(c.hwLatencies[NCCL_HW_PCI][NT][SI] == 0.0);
    CHECK(c.hwLatencies[NCCL_HW_PCI][PA][SI] == 4.0);
    /* NET */
    CHECK(c.hwLatencies[NCCL_HW_NET][T][LL] == 5.0);
    CHECK(c.hwLatencies[NCCL_HW_NET][T][L8] == 8.5);
    CHECK(c.hwLatencies[NCCL_HW_NET][T][SI] == 14);
    CHECK(c.hwLatencies[NCCL_HW_NET][R][LL] == 2.7);
    CHECK(c.hwLatencies[NCCL_HW_NET][R][L8] == 4.0);
    CHECK(c.hwLatencies[NCCL_HW_NET][R][SI] == 14.0);
    CHECK(c.hwLatencies[NCCL_HW_NET][CD][SI] == 31);
    CHECK(c.hwLatencies[NCCL_HW_NET][CC][SI] == 30);
    CHECK(c.hwLatencies[NCCL_HW_NET][NV][SI] == 18);
    CHECK(c.hwLatencies[NCCL_HW_NET][NT][SI] == 20.9);
    CHECK(c.hwLatencies[NCCL_HW_NET][PA][SI] == 14);
    /* Per-architecture caps [Volta, Ampere, Hopper, Blackwell][N1, N2, N4] */
    CHECK(c.llMaxBws[0][0] == 39.0 && c.llMaxBws[0][1] == 39.0 && c.llMaxBws[0][2] == 20.4);
    CHECK(c.llMaxBws[1][0] == 87.7 && c.llMaxBws[1][1] == 22.5 && c.llMaxBws[1][2] == 19.0);
    CHECK(c.llMaxBws[2][0] == 141.0 && c.llMaxBws[2][1] == 45.0 && c.llMaxBws[2][2] == 35.0);
    CHECK(c.llMaxBws[3][0] == 282.0 && c.llMaxBws[3][1] == 90.0 && c.llMaxBws[3][2] == 70.0);
    CHECK(c.perChMaxRingLL128Bws[0][0] == 20.0 && c.perChMaxRingLL128Bws[1][2] == 20.0);
    CHECK(c.perChMaxRingLL128Bws[2][0] == 36.7 && c.perChMaxRingLL128Bws[2][2] == 36.7);
    CHECK(c.perChMaxRingLL128Bws[3][0] == 73.4 && c.perChMaxRingLL128Bws[3][1] == 34.6);
    CHECK(c.perChMaxRingLL128Bws[3][2] == 73.4);
    CHECK(c.perChMaxTreeLL128Bws[2][1] == 36.7 && c.perChMaxTreeLL128Bws[2][2] == 29.0);
    CHECK(c.perChMaxTreeLL128Bws[3][0] == 55.6 && c.perChMaxTreeLL128Bws[3][1] == 31.67);
    CHECK(c.perChMaxTreeLL128Bws[3][2] == 20.0);
    CHECK(c.perChMaxTreeBws[0][0] == 26.5 && c.perChMaxTreeBws[0][1] == 18.5);
    CHECK(c.perChMaxTreeBws[0][2] == 10.0);
    CHECK(c.perChMaxTreeBws[1][0] == 24.0 && c.perChMaxTreeBws[1][1] == 23.6);
    CHECK(c.perChMaxTreeBws[1][2] == 17.8);
    CHECK(c.perChMaxTreeBws[2][0] == 38.7 && c.perChMaxTreeBws[2][1] == 41.4);
    CHECK(c.perChMaxTreeBws[2][2] == 36.0);
    CHECK(c.perChMaxTreeBws[3][0] == 70.0 && c.perChMaxTreeBws[3][1] == 42.8);
    CHECK(c.perChMaxTreeBws[3][2] == 24.0);
    CHECK(c.perChMaxNVLSTreeBws[0][0] == 26.5 && c.perChMaxNVLSTreeBws[1][2] == 17.8);
    CHECK(c.perChMaxNVLSTreeBws[2][0] == 0.0 && c.perChMaxNVLSTreeBws[2][1] == 57.7);
    CHECK(c.perChMaxNVLSTreeBws[2][2] == 45.5);
    CHECK(c.perChMaxNVLSTreeBws[3][0] == 0.0 && c.perChMaxNVLSTreeBws[3][1] == 96.0);
    CHECK(c.perChMaxNVLSTreeBws[3][2] == 43.8);
}

/* The model reads the constants it is given (v5 passes NCCL's, possibly edited by others). */
static void test_uses_passed_constants(void)
{
    static struct rail_model a, b;
    struct rail_topo t;
    topo_h100(&t);
    struct rail_comm_shape s = shape_of(1, 8);
    ncclTunerConstants_v5_t c;
    rail_model_default_constants(&c);
    rail_model_build(&a, &t, &s, NULL);
    rail_model_build(&b, &t, &s, &c);
    CHECK(memcmp(&a, &b, sizeof(a)) == 0);
    c.baseLatencies[R][LL] += 10.0;
    c.llMaxBws[NCCL_HOPPER_COMPCAP_IDX][0] = 50.0;
    rail_model_build(&b, &t, &s, &c);
    const int AR = ncclFuncAllReduce;
    CHECK_NEAR(b.nccl_lat[AR][R][LL] - a.nccl_lat[AR][R][LL], 10.0, 1e-4);
    CHECK_NEAR(b.lat[AR][R][LL] - a.lat[AR][R][LL], 10.0, 1e-4);
    CHECK_NEAR(b.nccl_bw[AR][R][LL], 50.0 * 8 / 14, 1e-3);
    CHECK_NEAR(b.bw[AR][R][LL], 50.0 * 8 / 14, 1e-3);
}

/* Count the entries that differ, and those that differ outside the node's compcap rows. */
static void diff_constants(const ncclTunerConstants_v5_t *x, const ncclTunerConstants_v5_t *y,
                           int cc, int *total, int *foreign_rows, int *hw_net, int *hw_other)
{
    const double(*px[5])[3] = {x->llMaxBws, x->perChMaxRingLL128Bws, x->perChMaxTreeLL128Bws,
                               x->perChMaxTreeBws, x->perChMaxNVLSTreeBws};
    const double(*py[5])[3] = {y->llMaxBws, y->perChMaxRingLL128Bws, y->perChMaxTreeLL128Bws,
                               y->perChMaxTreeBws, y->perChMaxNVLSTreeBws};
    *total = *foreign_rows = *hw_net = *hw_other = 0;
    for (int k = 0; k < 5; k++)
        for (int r = 0; r < NCCL_NUM_COMPCAPS; r++)
            for (int s = 0; s < NCCL_NUM_TUNING_SCALES; s++)
                if (px[k][r][s] != py[k][r][s]) {
                    (*total)++;
                    *foreign_rows += r != cc;
                }
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
            if (x->baseLatencies[a][p] != y->baseLatencies[a][p]) {
                (*total)++;
                (*hw_other)++;
            }
            for (int h = 0; h < NCCL_NUM_HW_LINKS; h++)
                if (x->hwLatencies[h][a][p] != y->hwLatencies[h][a][p]) {
                    (*total)++;
                    if (h == NCCL_HW_NET)
                        (*hw_net)++;
                    else
                        (*hw_other)++;
                }
        }
}

static int tune(void (*make)(struct rail_topo *), int nnodes, ncclTunerConstants_v5_t *c,
                struct rail_model *m, struct rail_topo *t)
{
    make(t);
    struct rail_comm_shape s = shape_of(nnodes, t->n_gpus);
    rail_model_build(m, t, &s, c);
    return rail_model_tune_constants(m, t, c);
}

static void test_tune_constants(void)
{
    static struct rail_model m;
    static struct rail_topo t;
    ncclTunerConstants_v5_t def, c;
    rail_model_default_constants(&def);
    int total, foreign, net, other;

    /* InfiniBand Hopper: NCCL's constants were calibrated on such systems, nothing to change. */
    int setups_nodes[] = {1, 2, 8};
    for (int i = 0; i < 3; i++) {
        c = def;
        CHECK_EQ_INT(tune(topo_h100, setups_nodes[i], &c, &m, &t), 0);
        CHECK(memcmp(&c, &def, sizeof(c)) == 0);
        c = def;
        CHECK_EQ_INT(tune(topo_p4d, setups_nodes[i], &c, &m, &t), 0);
        c = def;
        CHECK_EQ_INT(tune(topo_a10g, setups_nodes[i], &c, &m, &t), 0);
    }

    /* Blackwell: NCCL 2.29/2.30's Blackwell calibrations, Blackwell rows only. */
    for (int i = 0; i < 3; i++) {
        c = def;
        int n = tune(topo_b200, setups_nodes[i], &c, &m, &t);
        diff_constants(&def, &c, NCCL_BLACKWELL_COMPCAP_IDX, &total, &foreign, &net, &other);
        CHECK_EQ_INT(n, 4);
        CHECK_EQ_INT(total, n);
        CHECK_EQ_INT(foreign, 0);
        CHECK_EQ_INT(net + other, 0);
        CHECK(c.perChMaxRingLL128Bws[3][0] == 40.0 && c.perChMaxRingLL128Bws[3][1] == 40.0);
        CHECK(c.perChMaxRingLL128Bws[3][2] == 40.0);
        CHECK(c.perChMaxNVLSTreeBws[3][2] == 80.0);
        CHECK(c.perChMaxNVLSTreeBws[3][1] == 96.0);
        /* Idempotent. */
        CHECK_EQ_INT(rail_model_tune_constants(&m, &t, &c), 0);
    }

    /* Hardware RoCE, multi-node: +1 µs on the non-zero NET latencies (not CollNet), nothing
     * per compcap. */
    c = def;
    int n = tune(topo_h100_roce, 2, &c, &m, &t);
    diff_constants(&def, &c, NCCL_HOPPER_COMPCAP_IDX, &total, &foreign, &net, &other);
    CHECK_EQ_INT(n, 9);
    CHECK_EQ_INT(net, 9);
    CHECK_EQ_INT(total, 9);
    CHECK_EQ_INT(foreign + other, 0);
    CHECK_NEAR(c.hwLatencies[NCCL_HW_NET][R][SI], 15.0, 1e-9);
    CHECK_NEAR(c.hwLatencies[NCCL_HW_NET][T][LL], 6.0, 1e-9);
    CHECK_NEAR(c.hwLatencies[NCCL_HW_NET][NT][SI], 21.9, 1e-9);
    CHECK(c.hwLatencies[NCCL_HW_NET][CD][SI] == 31);
    CHECK(c.hwLatencies[NCCL_HW_NET][NV][LL] == 0);
    CHECK_EQ_INT(rail_model_tune_constants(&m, &t, &c), 0);
    /* Single-node RoCE: the network is not used, nothing changes. */
    c = def;
    CHECK_EQ_INT(tune(topo_h100_roce, 1, &c, &m, &t), 0);
    /* Soft-RoCE (rxe) is not hardware RoCE: left alone. */
    c = def;
    topo_h100_roce(&t);
    for (int i = 0; i < t.n_nics; i++)
        t.nics[i].virtual_nic = true;
    struct rail_comm_shape s = shape_of(2, 8);
    rail_model_build(&m, &t, &s, &c);
    CHECK_EQ_INT(rail_model_tune_constants(&m, &t, &c), 0);

    /* An entry someone else already changed is left alone. */
    c = def;
    c.perChMaxRingLL128Bws[3][0] = 50.0;
    c.hwLatencies[NCCL_HW_NET][R][SI] = 9.0;
    tune(topo_b200, 1, &c, &m, &t);
    CHECK(c.perChMaxRingLL128Bws[3][0] == 50.0);
    c = def;
    c.hwLatencies[NCCL_HW_NET][R][SI] = 9.0;
    CHECK_EQ_INT(tune(topo_h100_roce, 2, &c, &m, &t), 8);
    CHECK(c.hwLatencies[NCCL_HW_NET][R][SI] == 9.0);

    /* Bad arguments. */
    c = def;
    CHECK_EQ_INT(rail_model_tune_constants(NULL, &t, &c), 0);
    CHECK_EQ_INT(rail_model_tune_constants(&m, NULL, &c), 0);
    CHECK_EQ_INT(rail_model_tune_constants(&m, &t, NULL), 0);
    CHECK(memcmp(&c, &def, sizeof(c)) == 0);
}

/* The project's table is built with the constants as the tuner leaves them: on RoCE, every
 * inter-node latency is at least 1 µs above NCCL's view. */
static void test_model_sees_tuned_constants(void)
{
    static struct rail_model m;
    struct rail_topo t;
    topo_h100_roce(&t);
    struct rail_comm_shape s = shape_of(2, 8);
    rail_model_build(&m, &t, &s, NULL);
    const int AR = ncclFuncAllReduce;
    CHECK(m.lat[AR][R][SI] >= m.nccl_lat[AR][R][SI] + 1.0f);
    CHECK(m.lat[AR][T][LL] >= m.nccl_lat[AR][T][LL] + 1.0f);
    CHECK(m.lat[AR][NT][SI] >= m.nccl_lat[AR][NT][SI] + 1.0f);
}

int main(void)
{
    test_defaults();
    test_uses_passed_constants();
    test_tune_constants();
    test_model_sees_tuned_constants();
    return check_report("test_cost_model_constants");
}
