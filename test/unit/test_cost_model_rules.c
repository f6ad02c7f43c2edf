/* SPDX-License-Identifier: Apache-2.0 */
/* Cost model: which (collective, algorithm, protocol) combinations exist, as NCCL 2.28.9 allows
 * them, in both the NCCL table and the project's table. */
#include "check.h"
#include "test_cost_model_topos.h"

static bool has(const float bw[RAIL_NUM_COLLS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int c,
                int a, int p)
{
    return bw[c][a][p] > 0.0f;
}

/* The rules every table must obey, whatever the topology. */
static void check_rules(const char *name, const struct rail_model *m, const struct rail_topo *t)
{
    const float(*tables[2])[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {m->bw, m->nccl_bw};
    int nnodes = m->shape.nnodes, nranks = m->shape.nranks;
    for (int k = 0; k < 2; k++) {
        int bad = 0;
        for (int c = 0; c < RAIL_NUM_COLLS; c++)
            for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
                for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                    if (!has(tables[k], c, a, p))
                        continue;
                    bool nvls = a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE;
                    bool collnet = a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN;
                    bool agrs = c == ncclFuncAllGather || c == ncclFuncReduceScatter;
                    const char *why = NULL;
                    if (nvls && p != NCCL_PROTO_SIMPLE)
                        why = "NVLS with a non-Simple protocol";
                    else if (nvls && (!t->nvswitch || m->sm < 90))
                        why = "NVLS without NVSwitch or below sm90";
                    else if (a == NCCL_ALGO_NVLS_TREE && (nnodes == 1 || c != ncclFuncAllReduce))
                        why = "NVLSTree on one node or not AllReduce";
                    else if (a == NCCL_ALGO_PAT && (!agrs || nnodes != nranks))
                        why = "PAT outside AG/RS or with >1 GPU per node";
                    else if (a == NCCL_ALGO_PAT && p != NCCL_PROTO_SIMPLE)
                        why = "PAT with a non-Simple protocol";
                    else if ((c == ncclFuncBroadcast || c == ncclFuncReduce) && a != NCCL_ALGO_RING)
                        why = "Broadcast/Reduce other than Ring";
                    else if (agrs && a != NCCL_ALGO_RING && a != NCCL_ALGO_PAT &&
                             a != NCCL_ALGO_NVLS && a != NCCL_ALGO_COLLNET_DIRECT)
                        why = "AG/RS algorithm not allowed";
                    else if (collnet && (p != NCCL_PROTO_SIMPLE || !m->shape.collnet))
                        why = "CollNet non-Simple or without CollNet";
                    else if (p == NCCL_PROTO_LL128 && !m->nvlink && m->shape.max_rpn > 1)
                        why = "LL128 without NVLink";
                    else if (a == NCCL_ALGO_NVLS && nnodes > 1 && !m->shape.collnet)
                        why = "multi-node NVLS without CollNet";
                    if (why) {
                        bad++;
                        fprintf(stderr, "%s %s: %s %s/%s: %s\n", name, k ? "nccl" : "rail",
                                rail_coll_name(c), rail_algo_name(a), rail_proto_name(p), why);
                    }
                }
        CHECK_MSG(bad == 0, "%s: %d rule violations", name, bad);
    }
    /* Refinements never revive a combination NCCL does not offer, nor drop one. */
    int differ = 0;
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
                differ += has(m->bw, c, a, p) != has(m->nccl_bw, c, a, p);
    CHECK_MSG(differ == 0, "%s: project and NCCL support sets differ in %d entries", name, differ);
    /* Ring Simple always exists (NCCL's fallback). */
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        CHECK(has(m->bw, c, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
}

static void run(const char *name, void (*make)(struct rail_topo *), int nnodes, int rpn,
                bool collnet, struct rail_model *m)
{
    static struct rail_topo t;
    make(&t);
    struct rail_comm_shape s = shape_of(nnodes, rpn);
    s.collnet = collnet;
    CHECK_EQ_INT(rail_model_build(m, &t, &s, NULL), 0);
    check_rules(name, m, &t);
}

static void no_nvswitch(struct rail_topo *t)
{
    topo_h100(t);
    t->nvswitch = false;
}

static void test_all_rules(void)
{
    static struct rail_model m;
    void (*makers[])(struct rail_topo *) = {topo_h100, topo_h100_roce, topo_b200, topo_p4d,
                                            topo_p5,   topo_a10g,      topo_t4,   no_nvswitch};
    const char *names[] = {"h100", "roce", "b200", "p4d", "p5", "a10g", "t4", "h100-no-nvswitch"};
    int nodes[] = {1, 2, 3, 4, 16};
    for (int i = 0; i < (int)(sizeof(makers) / sizeof(makers[0])); i++)
        for (int n = 0; n < 5; n++)
            for (int cn = 0; cn < 2; cn++) {
                char name[64];
                snprintf(name, sizeof(name), "%s x%d%s", names[i], nodes[n], cn ? " collnet" : "");
                run(name, makers[i], nodes[n], makers[i] == topo_t4 ? 4 : 8, cn, &m);
            }
    for (int n = 2; n <= 16; n *= 2)
        run("1gpu", topo_one_gpu, n, 1, false, &m);
}

static void test_specific(void)
{
    static struct rail_model m;
    const int AR = ncclFuncAllReduce, AG = ncclFuncAllGather, RS = ncclFuncReduceScatter;

    /* NVLS on a Hopper NVSwitch node, single node: AR, AG, RS, Simple only. */
    run("h100", topo_h100, 1, 8, false, &m);
    CHECK(m.nvls);
    CHECK(has(m.bw, AR, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, AG, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, RS, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AR, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, AR, NCCL_ALGO_RING, NCCL_PROTO_LL128)); /* NVLink: LL128 on */
    CHECK(!has(m.bw, AG, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE));
    /* Multi-node: NVLSTree for AR; plain NVLS needs CollNet. */
    run("h100x2", topo_h100, 2, 8, false, &m);
    CHECK(has(m.bw, AR, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AR, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AG, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AR, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE));
    run("h100x2 collnet", topo_h100, 2, 8, true, &m);
    CHECK(has(m.bw, AR, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, AR, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, AR, NCCL_ALGO_COLLNET_CHAIN, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AR, NCCL_ALGO_COLLNET_CHAIN, NCCL_PROTO_LL));
    CHECK(!has(m.bw, AR, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_LL128));
    /* CollNetDirect needs an NVSwitch. */
    run("h100 no nvswitch collnet", no_nvswitch, 2, 8, true, &m);
    CHECK(!m.nvls);
    CHECK(!has(m.bw, AR, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, AR, NCCL_ALGO_COLLNET_CHAIN, NCCL_PROTO_SIMPLE));

    /* Ampere NVSwitch: no NVLS. */
    run("p4d", topo_p4d, 1, 8, false, &m);
    CHECK(!m.nvls);
    CHECK(has(m.bw, AR, NCCL_ALGO_RING, NCCL_PROTO_LL128));

    /* PCIe-only systems: no LL128 (it needs NVLink inside the node), Tree/Ring LL/Simple. */
    run("a10g", topo_a10g, 1, 8, false, &m);
    CHECK(!m.nvlink);
    for (int c = 0; c < RAIL_NUM_COLLS; c++)
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            CHECK(!has(m.bw, c, a, NCCL_PROTO_LL128));
    CHECK(has(m.bw, AR, NCCL_ALGO_TREE, NCCL_PROTO_LL));
    CHECK(has(m.bw, AR, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
    run("t4x2", topo_t4, 2, 4, false, &m);
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        CHECK(!has(m.bw, AR, a, NCCL_PROTO_LL128));

    /* PAT: 1 GPU per node, AG/RS only. */
    run("1gpu x4", topo_one_gpu, 4, 1, false, &m);
    CHECK(m.pat);
    CHECK(has(m.bw, AG, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE));
    CHECK(has(m.bw, RS, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AR, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE));
    CHECK(!has(m.bw, AG, NCCL_ALGO_PAT, NCCL_PROTO_LL));
    run("h100x4", topo_h100, 4, 8, false, &m);
    CHECK(!m.pat);

    /* Mixed GPU generations: LL128 off (minCompCap != maxCompCap). */
    static struct rail_topo t;
    topo_h100(&t);
    t.gpus[7].sm = 100;
    struct rail_comm_shape s = shape_of(1, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK_EQ_INT(m.sm, 90);
    CHECK_EQ_INT(m.sm_max, 100);
    CHECK(!has(m.bw, AR, NCCL_ALGO_RING, NCCL_PROTO_LL128));
    check_rules("mixed", &m, &t);

    /* NICs behind the CPU (SYS) on multi-node Ampere: LL128 needs the NIC within PXB. */
    topo_p4d(&t);
    for (int g = 0; g < t.n_gpus; g++)
        for (int n = 0; n < t.n_nics; n++)
            t.path[g][n] = RAIL_PATH_SYS;
    s = shape_of(2, 8);
    rail_model_build(&m, &t, &s, NULL);
    CHECK(!has(m.bw, AR, NCCL_ALGO_RING, NCCL_PROTO_LL128));
}

int main(void)
{
    test_all_rules();
    test_specific();
    return check_report("test_cost_model_rules");
}
