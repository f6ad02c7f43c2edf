/* SPDX-License-Identifier: Apache-2.0 */
/* hwloc loader on the recorded hwloc XML exports: device counts, sm from PCI ids, NVLink from
 * the NVLinkBandwidth matrix, NCCL path classes (CTS-1 PIX, Lassen PHB/SYS), bad files. */
#include "check.h"
#include "tmpfiles.h"
#include "topo.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define DIR RAIL_FIXTURES "/hwloc-xml/"

static struct rail_topo g_t;
static char g_err[512];

static int load(const char *file)
{
    char path[512];
    snprintf(path, sizeof(path), DIR "%s", file);
    g_err[0] = '\0';
    /* sysfs root "/" with an XML of another machine: no sysfs facts are mixed in. */
    return rail_topo_load_hwloc(path, "/", &g_t, g_err, sizeof(g_err));
}

static void test_all_fixtures(void)
{
    static const struct {
        const char *file;
        int gpus, nics, sm, nvlinks, nvswitch, cpu, n_numa;
    } cases[] = {
        {"hwloc_hp-sl390s_3xM2070_mlx4-ib.xml", 3, 1, 20, 0, 0, RAIL_CPU_UNKNOWN, 2},
        {"hwloc_ibm-s822lc_power8_4xP100_nvlink.xml", 4, 0, 60, 2, 0, RAIL_CPU_POWER, 2},
        {"hwloc_nvidia-dgx2h_16xV100_nvswitch.xml", 16, 0, 70, 6, 1, RAIL_CPU_INTEL, 2},
        {"hwloc_supermicro-x9drg_3xM2075_cx4-ib_wholeio.xml", 3, 1, 20, 0, 0, RAIL_CPU_UNKNOWN, 2},
        {"mpibind_aws-g4dn-metal_8xT4_efa.xml", 8, 1, 75, 0, 0, RAIL_CPU_INTEL, 2},
        {"mpibind_cts1-pascal_2xP100_mlx5-same-switch.xml", 2, 1, 60, 0, 0, RAIL_CPU_INTEL, 2},
        {"mpibind_epyc-corona-p2_8xMI50_mlx5.xml", 0, 1, 0, 0, 0, RAIL_CPU_AMD, 2},
        {"mpibind_ibm-ac922-lassen_4xV100_4xmlx5.xml", 4, 4, 70, 0, 0, RAIL_CPU_POWER, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *f = cases[i].file;
        CHECK_MSG(load(f) == 0, "%s: %s", f, g_err);
        CHECK_EQ_INT(g_t.source, RAIL_TOPO_SRC_HWLOC);
        CHECK(strstr(g_t.origin, f) != NULL);
        CHECK_MSG(g_t.n_gpus == cases[i].gpus, "%s: %d GPUs", f, g_t.n_gpus);
        CHECK_MSG(g_t.n_nics == cases[i].nics, "%s: %d NICs", f, g_t.n_nics);
        CHECK_MSG(g_t.nvswitch == (cases[i].nvswitch != 0), "%s: nvswitch", f);
        CHECK_MSG(g_t.cpu_vendor == cases[i].cpu, "%s: cpu %d", f, g_t.cpu_vendor);
        CHECK_MSG(g_t.n_numa == cases[i].n_numa, "%s: %d NUMA", f, g_t.n_numa);
        for (int g = 0; g < g_t.n_gpus; g++) {
            CHECK_MSG(g_t.gpus[g].sm == cases[i].sm, "%s GPU%d sm%d", f, g, g_t.gpus[g].sm);
            CHECK_MSG(g_t.gpus[g].nvlinks == cases[i].nvlinks, "%s GPU%d %d links", f, g,
                      g_t.gpus[g].nvlinks);
            CHECK(g_t.gpus[g].gdr);
            if (g > 0)
                CHECK(strcmp(g_t.gpus[g - 1].busid, g_t.gpus[g].busid) < 0);
        }
        for (int n = 0; n < g_t.n_nics; n++) {
            /* Not in hwloc XML: unknown, unless the adapter's PCI id names its speed. */
            CHECK(g_t.nics[n].speed_mbps == 0 || (g_t.inferred & RAIL_TOPO_INFERRED_NIC_SPEED));
            CHECK(!g_t.nics[n].gdr);
            CHECK(g_t.nics[n].active);
            CHECK_EQ_INT(g_t.nics[n].port, 1);
        }
        CHECK(!g_t.gdr);
    }
}

static void test_cts1(void)
{
    struct rail_gpu_net gn;
    CHECK(load("mpibind_cts1-pascal_2xP100_mlx5-same-switch.xml") == 0);
    CHECK_EQ_STR(g_t.nics[0].name, "mlx5_0");
    CHECK_EQ_STR(g_t.nics[0].busid, "0000:08:00.0");
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PIX);
    CHECK_EQ_INT(g_t.path[1][0], RAIL_PATH_PIX);
    CHECK_NEAR(g_t.gpus[0].pcie_gbps, 12.0, 1e-3); /* hwloc 15.75 GB/s = Gen3 x16 */
    CHECK_EQ_INT(g_t.gpus[0].pcie_gen, 0);         /* hwloc cannot tell gen from width */
    CHECK_EQ_INT(g_t.gpus[0].numa, 0);
    CHECK_NEAR(g_t.inter_cpu_bw, 6.0, 1e-4); /* Broadwell (model 79) */
    CHECK_EQ_INT(rail_topo_gpu_net(&g_t, 1, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PIX);
    CHECK_EQ_INT(gn.n_nearest, 1);
}

/* POWER9 AC922: GPUs and NICs on separate host bridges; NODE (same socket) folds into PHB.
 * This export crashes hwloc_get_common_ancestor_obj() on I/O objects: it must just work here. */
static void test_lassen(void)
{
    CHECK(load("mpibind_ibm-ac922-lassen_4xV100_4xmlx5.xml") == 0);
    for (int g = 0; g < 4; g++)
        for (int n = 0; n < 4; n++)
            CHECK_MSG(g_t.path[g][n] == ((g < 2) == (n < 2) ? RAIL_PATH_PHB : RAIL_PATH_SYS),
                      "GPU%d %s: %s", g, g_t.nics[n].name,
                      rail_path_name((enum rail_path)g_t.path[g][n]));
    CHECK_EQ_STR(g_t.nics[0].name, "mlx5_0");
    CHECK_EQ_STR(g_t.nics[3].name, "mlx5_3");
    CHECK_EQ_STR(g_t.nics[1].busid, "0003:01:00.1");
    CHECK_NEAR(g_t.inter_cpu_bw, 32.0, 1e-4);
}

static void test_nvlink(void)
{
    CHECK(load("hwloc_nvidia-dgx2h_16xV100_nvswitch.xml") == 0);
    CHECK_EQ_INT(g_t.nvlink_gen, 2);
    CHECK_NEAR(g_t.nvlink_bw, 6 * 20.0, 1e-3);
    CHECK(load("hwloc_ibm-s822lc_power8_4xP100_nvlink.xml") == 0);
    CHECK_EQ_INT(g_t.nvlink_gen, 1);
    CHECK_NEAR(g_t.nvlink_bw, 2 * 18.0, 1e-3); /* GPU-CPU links are not counted */
}

static void test_g4dn(void)
{
    CHECK(load("mpibind_aws-g4dn-metal_8xT4_efa.xml") == 0);
    CHECK_EQ_STR(g_t.nics[0].name, "rdmap197s0");
    CHECK(!g_t.nics[0].virtual_nic);
    for (int g = 0; g < 8; g++)
        CHECK_EQ_INT(g_t.path[g][0], g < 4 ? RAIL_PATH_SYS : RAIL_PATH_PHB);
}

static void test_bad_files(void)
{
    char tmp[] = "/tmp/rail_topo_hwloc_XXXXXX";
    char path[300];
    CHECK_EQ_INT(load("no-such-file.xml"), -EINVAL);
    CHECK(strstr(g_err, "No such file") != NULL);
    CHECK_EQ_INT(rail_topo_load_hwloc(RAIL_FIXTURES "/nccl-topo/azure_ndv5-topo.xml", "/", &g_t,
                                      g_err, sizeof(g_err)),
                 -EINVAL);
    CHECK(strstr(g_err, "root element is <system>, expected <topology>") != NULL);
    CHECK(mkdtemp(tmp) != NULL);
    CHECK_EQ_INT(rail_topo_load_hwloc(tmp, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file") != NULL);
    snprintf(path, sizeof(path), "%s/trunc.xml", tmp);
    tmp_put(path, "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n <object type=\"Machine\"");
    CHECK_EQ_INT(rail_topo_load_hwloc(path, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    remove(path);
    rmdir(tmp);
    CHECK_EQ_INT(rail_topo_load_hwloc(NULL, "/", NULL, g_err, sizeof(g_err)), -EINVAL);
}

int main(void)
{
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_FSROOT");
    test_all_fixtures();
    test_cts1();
    test_lassen();
    test_nvlink();
    test_g4dn();
    test_bad_files();
    return check_report("test_topo_hwloc");
}
