/* SPDX-License-Identifier: Apache-2.0 */
/* Built-in topology profiles: the documented facts of each machine, and that the names match the
 * NCCL_RAIL_TOPO_PROFILE choices in the parameter table. */
#include "check.h"
#include "params.h"
#include "topo.h"

#include <errno.h>

static struct rail_topo g_t;

static void test_names(void)
{
    const char *const *names = rail_topo_profile_names();
    const char *choices = rail_param_def(RAIL_PARAM_TOPO_PROFILE)->choices;
    char joined[256] = "";
    int n = 0;
    for (; names[n]; n++) {
        size_t l = strlen(joined);
        snprintf(joined + l, sizeof(joined) - l, "%s%s", n ? "|" : "", names[n]);
    }
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_STR(joined, choices);
}

static void test_profile(const char *name, int sm, int nvlinks, float nvlink_bw, int nvlink_gen,
                         int n_nics, int nic_mbps, int link_layer, int local_path, int n_nearest,
                         float nearest_gbps, int cpu, int n_numa, float inter_cpu_bw)
{
    char err[256];
    struct rail_gpu_net gn;
    CHECK_MSG(rail_topo_load_profile(name, &g_t, err, sizeof(err)) == 0, "%s: %s", name, err);
    CHECK_EQ_INT(g_t.source, RAIL_TOPO_SRC_PROFILE);
    CHECK_EQ_STR(g_t.origin, name);
    CHECK_EQ_INT(g_t.n_gpus, 8);
    CHECK(g_t.nvswitch);
    CHECK_EQ_INT(g_t.nvlink_gen, nvlink_gen);
    CHECK_NEAR(g_t.nvlink_bw, nvlink_bw, 1e-3);
    CHECK_EQ_INT(g_t.n_nics, n_nics);
    CHECK_EQ_INT(g_t.cpu_vendor, cpu);
    CHECK_EQ_INT(g_t.n_numa, n_numa);
    CHECK_NEAR(g_t.inter_cpu_bw, inter_cpu_bw, 1e-4);
    CHECK(g_t.gdr);
    for (int g = 0; g < 8; g++) {
        CHECK_EQ_INT(g_t.gpus[g].sm, sm);
        CHECK_EQ_INT(g_t.gpus[g].nvlinks, nvlinks);
        CHECK(g_t.gpus[g].pcie_gbps > 0);
        CHECK_EQ_INT(rail_topo_gpu_net(&g_t, g, &gn), 0);
        CHECK_MSG(gn.best_path == local_path, "%s GPU%d best %s", name, g,
                  rail_path_name((enum rail_path)gn.best_path));
        CHECK_MSG(gn.n_nearest == n_nearest, "%s GPU%d nearest %d", name, g, gn.n_nearest);
        CHECK_NEAR(gn.nearest_gbps, nearest_gbps, 1e-3);
        for (int h = 0; h < g; h++)
            CHECK(strcmp(g_t.gpus[h].busid, g_t.gpus[g].busid) != 0);
    }
    for (int n = 0; n < n_nics; n++) {
        CHECK_EQ_INT(g_t.nics[n].speed_mbps, nic_mbps);
        CHECK_EQ_INT(g_t.nics[n].link_layer, link_layer);
        CHECK(g_t.nics[n].active && g_t.nics[n].gdr && !g_t.nics[n].virtual_nic);
        CHECK(g_t.nics[n].name[0] != '\0');
    }
    /* Outside its own group a GPU sees PHB on its NUMA node and SYS elsewhere. */
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < n_nics; n++)
            if (g_t.path[g][n] != local_path)
                CHECK_EQ_INT(g_t.path[g][n],
                             g_t.gpus[g].numa == g_t.nics[n].numa ? RAIL_PATH_PHB : RAIL_PATH_SYS);
}

static void test_profiles(void)
{
    /* name sm links nvbw gen nics Mb/s layer local nearest GB/s cpu numa qpi */
    test_profile("dgx-a100", 80, 12, 240.0f, 3, 8, 200000, RAIL_LINK_IB, RAIL_PATH_PXB, 2, 25.0f,
                 RAIL_CPU_AMD, 8, 16.0f);
    test_profile("dgx-h100", 90, 18, 370.8f, 4, 8, 400000, RAIL_LINK_IB, RAIL_PATH_PIX, 1, 50.0f,
                 RAIL_CPU_INTEL, 2, 22.0f);
    test_profile("hgx-b200", 100, 18, 721.8f, 5, 8, 400000, RAIL_LINK_IB, RAIL_PATH_PIX, 1, 50.0f,
                 RAIL_CPU_INTEL, 2, 40.0f);
    test_profile("aws-p5", 90, 18, 370.8f, 4, 32, 100000, RAIL_LINK_UNKNOWN, RAIL_PATH_PIX, 4,
                 50.0f, RAIL_CPU_AMD, 2, 16.0f);
    test_profile("azure-ndv5", 90, 18, 370.8f, 4, 8, 400000, RAIL_LINK_IB, RAIL_PATH_PIX, 1, 50.0f,
                 RAIL_CPU_INTEL, 2, 22.0f);

    /* DGX A100: the pair's two HCAs are PXB, every other HCA is on another NPS4 NUMA node. */
    CHECK(rail_topo_load_profile("dgx-a100", &g_t, NULL, 0) == 0);
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[1][1], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[0][2], RAIL_PATH_SYS);
    CHECK_EQ_INT(g_t.gpus[0].numa, 3);
    CHECK_EQ_INT(g_t.gpus[0].pcie_gen, 4);
    /* DGX H100: GPU0..3 share NUMA 0: PHB to each other's NIC. */
    CHECK(rail_topo_load_profile("DGX-H100", &g_t, NULL, 0) == 0); /* case-insensitive */
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PIX);
    CHECK_EQ_INT(g_t.path[0][3], RAIL_PATH_PHB);
    CHECK_EQ_INT(g_t.path[0][4], RAIL_PATH_SYS);
    CHECK_NEAR(g_t.nics[0].pcie_gbps, 48.0, 1e-4);
    /* AWS p5: EFA names follow rdmap<bus>s0, 4 per GPU. */
    CHECK(rail_topo_load_profile("aws-p5", &g_t, NULL, 0) == 0);
    CHECK(strncmp(g_t.nics[0].name, "rdmap", 5) == 0);
    for (int n = 0; n < 32; n++)
        CHECK_EQ_INT(g_t.path[n / 4][n], RAIL_PATH_PIX);
}

static void test_unknown(void)
{
    char err[256];
    CHECK_EQ_INT(rail_topo_load_profile("dgx-z9000", &g_t, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "dgx-z9000") != NULL);
    CHECK(strstr(err, "dgx-a100, dgx-h100, hgx-b200, aws-p5, azure-ndv5") != NULL);
    CHECK_EQ_INT(rail_topo_load_profile(NULL, &g_t, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(rail_topo_load_profile("dgx-h100", NULL, err, sizeof(err)), -EINVAL);
}

int main(void)
{
    test_names();
    test_profiles();
    test_unknown();
    return check_report("test_topo_profiles");
}
