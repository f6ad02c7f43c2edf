/* SPDX-License-Identifier: Apache-2.0 */
/* Pure topology helpers: path names, NCCL bandwidth units, PCI-id table, parsers, the path
 * classifier and the per-GPU network summary. */
#include "check.h"
#include "topo.h"
#include "topo_internal.h"

#include <errno.h>

static void test_path_names(void)
{
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_LOC), "LOC");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_PIX), "PIX");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_PXB), "PXB");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_P2C), "P2C");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_PHB), "PHB");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_SYS), "SYS");
    CHECK_EQ_STR(rail_path_name(RAIL_PATH_DIS), "DIS");
    CHECK_EQ_STR(rail_path_name((enum rail_path)12), "?");
    CHECK_EQ_STR(rail_path_name((enum rail_path) - 1), "?");
    for (int p = RAIL_PATH_LOC; p <= RAIL_PATH_DIS; p++)
        CHECK_EQ_INT(rail_path_parse(rail_path_name((enum rail_path)p)), p);
    CHECK_EQ_INT(rail_path_parse("pxb"), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_path_parse("Sys"), RAIL_PATH_SYS);
    /* NCCL's legacy integers */
    CHECK_EQ_INT(rail_path_parse("0"), RAIL_PATH_LOC);
    CHECK_EQ_INT(rail_path_parse("1"), RAIL_PATH_PIX);
    CHECK_EQ_INT(rail_path_parse("2"), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_path_parse("3"), RAIL_PATH_PHB);
    CHECK_EQ_INT(rail_path_parse("4"), RAIL_PATH_SYS);
    CHECK_EQ_INT(rail_path_parse("5"), -1);
    CHECK_EQ_INT(rail_path_parse("-1"), -1);
    CHECK_EQ_INT(rail_path_parse("NODE"), -1);
    CHECK_EQ_INT(rail_path_parse("PIXX"), -1);
    CHECK_EQ_INT(rail_path_parse(""), -1);
    CHECK_EQ_INT(rail_path_parse(NULL), -1);
}

static void test_units(void)
{
    CHECK_NEAR(rail_pcie_gbps(3, 16), 12.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(4, 16), 24.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(5, 16), 48.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(6, 16), 96.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(1, 16), 3.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(4, 8), 12.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(0, 16), 0.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(7, 16), 0.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(4, 0), 0.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps(4, 64), 0.0, 1e-6);

    CHECK_NEAR(rail_nvlink_bw_per_link(60), 18.0, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(70), 20.0, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(80), 20.0, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(86), 12.0, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(89), 20.0, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(90), 20.6, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(100), 40.1, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(103), 40.1, 1e-5);
    CHECK_NEAR(rail_nvlink_bw_per_link(0), 20.0, 1e-5); /* NCCL's fallback */
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(60), 1);
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(70), 2);
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(86), 3);
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(90), 4);
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(100), 5);
    CHECK_EQ_INT(rail_nvlink_gen_from_sm(0), 0);

    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, 6, 0x4F), 6.0, 1e-6);  /* Broadwell */
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, 6, 85), 10.0, 1e-6);   /* Skylake */
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, 6, 106), 10.0, 1e-6);  /* Ice Lake */
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, 6, 143), 22.0, 1e-6);  /* Sapphire Rapids */
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, 6, 0xCF), 40.0, 1e-6); /* Emerald Rapids */
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_INTEL, -1, -1), 6.0, 1e-6);
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_AMD, 23, 49), 16.0, 1e-6);
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_POWER, -1, -1), 32.0, 1e-6);
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_ARM, -1, -1), 6.0, 1e-6);
    CHECK_NEAR(rail_inter_cpu_bw(RAIL_CPU_UNKNOWN, 6, 143), 0.0, 1e-6);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings("x86_64", "GenuineIntel"), RAIL_CPU_INTEL);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings("x86_64", "AuthenticAMD"), RAIL_CPU_AMD);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings(NULL, "AuthenticAMD"), RAIL_CPU_AMD);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings("ppc64le", NULL), RAIL_CPU_POWER);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings("aarch64", NULL), RAIL_CPU_ARM);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings("arm64", "GenuineIntel"), RAIL_CPU_ARM);
    CHECK_EQ_INT(rail_cpu_vendor_from_strings(NULL, NULL), RAIL_CPU_UNKNOWN);
}

static void test_sm_table(void)
{
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x15f8), 60);  /* P100 PCIe */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x15f9), 60);  /* P100 SXM2 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x1db1), 70);  /* V100 SXM2 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x1db8), 70);  /* V100 SXM3 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x1eb8), 75);  /* T4 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x20b0), 80);  /* A100 SXM4 40GB */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x20b2), 80);  /* A100 SXM4 80GB */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x20b7), 80);  /* A30 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2235), 86);  /* A40 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2236), 86);  /* A10 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2237), 86);  /* A10G */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2330), 90);  /* H100 SXM5 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2335), 90);  /* H200 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2329), 90);  /* H20 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2901), 100); /* B200 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0x2941), 100); /* GB200 */
    CHECK_EQ_INT(rail_sm_from_pci_device(0x10de, 0xffff), 0);
    CHECK_EQ_INT(rail_sm_from_pci_device(0x1002, 0x2330), 0); /* not NVIDIA */
}

static void test_parsers(void)
{
    char b[16];
    CHECK_EQ_INT(rail_pcie_gen_from_text("2.5 GT/s"), 1);
    CHECK_EQ_INT(rail_pcie_gen_from_text("5 GT/s"), 2);
    CHECK_EQ_INT(rail_pcie_gen_from_text("5.0 GT/s PCIe"), 2);
    CHECK_EQ_INT(rail_pcie_gen_from_text("8 GT/s"), 3);
    CHECK_EQ_INT(rail_pcie_gen_from_text("16.0 GT/s PCIe"), 4);
    CHECK_EQ_INT(rail_pcie_gen_from_text("32 GT/s PCIe/s"), 5); /* AWS p5 file */
    CHECK_EQ_INT(rail_pcie_gen_from_text("64.0 GT/s PCIe"), 6);
    CHECK_EQ_INT(rail_pcie_gen_from_text("Unknown"), 0);
    CHECK_EQ_INT(rail_pcie_gen_from_text("16"), 0);
    CHECK_EQ_INT(rail_pcie_gen_from_text("12 GT/s"), 0);
    CHECK_EQ_INT(rail_pcie_gen_from_text(""), 0);
    CHECK_EQ_INT(rail_pcie_gen_from_text(NULL), 0);

    CHECK_NEAR(rail_pcie_gbps_from_hwloc(15.753846f), 12.0, 1e-4); /* Gen3 x16 */
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(31.507692f), 24.0, 1e-4); /* Gen4 x16 */
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(63.015385f), 48.0, 1e-4); /* Gen5 x16 */
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(4.0f), 3.0, 1e-4);        /* Gen1 x16 */
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(2.0f), 1.5, 1e-4);        /* Gen1 x8 */
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(0.0f), 0.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(-3.0f), 0.0, 1e-6);
    CHECK_NEAR(rail_pcie_gbps_from_hwloc(1.3f), 1.3 * 0.7617, 0.01); /* not a standard link */

    CHECK_EQ_INT(rail_busid_normalize("0000:4E:00.0", b), 0);
    CHECK_EQ_STR(b, "0000:4e:00.0");
    CHECK_EQ_INT(rail_busid_normalize("ffff:ff:01.0", b), 0);
    CHECK_EQ_INT(rail_busid_normalize("4e:00.0", b), -EINVAL);
    CHECK_EQ_INT(rail_busid_normalize("0000:4e:00:0", b), -EINVAL);
    CHECK_EQ_INT(rail_busid_normalize("0000:4g:00.0", b), -EINVAL);
    CHECK_EQ_INT(rail_busid_normalize("0000:4e:00.00", b), -EINVAL);
    CHECK_EQ_INT(rail_busid_normalize(NULL, b), -EINVAL);
}

static void test_classify(void)
{
    struct rail_pci_chain gpu = {2, {11, 10}, 0}, nic_same = {1, {11}, 0};
    struct rail_pci_chain nic_up = {1, {10}, 0}, nic_cpu = {0, {0}, 0};
    struct rail_pci_chain nic_other = {1, {20}, 0}, nic_far = {1, {30}, 1};
    CHECK_EQ_INT(rail_path_classify(&gpu, &nic_same), RAIL_PATH_PIX);
    CHECK_EQ_INT(rail_path_classify(&gpu, &nic_up), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_path_classify(&nic_up, &gpu), RAIL_PATH_PXB);
    CHECK_EQ_INT(rail_path_classify(&gpu, &nic_cpu), RAIL_PATH_PHB);
    CHECK_EQ_INT(rail_path_classify(&gpu, &nic_other), RAIL_PATH_PHB);
    CHECK_EQ_INT(rail_path_classify(&gpu, &nic_far), RAIL_PATH_SYS);

    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0101000a096ULL, 0), 4); /* PEX88096 */
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0101000a096ULL, 1), 4);
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c01010de13b8ULL, 1), 0); /* NVIDIA subsystem */
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0301000000bULL, 0), 5); /* PEX89xxx parent */
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0301000000bULL, 1), 0);
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0301000100bULL, 1), 5); /* child */
    CHECK_EQ_INT(rail_bcm_switch_gen(0x1000c0301028236bULL, 0), 0); /* Dell OEM: kept */
}

static void test_gpu_net(void)
{
    static struct rail_topo t;
    struct rail_gpu_net gn;
    rail_topo_reset(&t, RAIL_TOPO_SRC_PROFILE, "hand-made");
    /* 4 GPUs; NIC0 PIX to GPU0+GPU1, NIC1 PIX to GPU2 only, NIC2 PIX to GPU3 but inactive. */
    t.n_gpus = 4;
    t.n_nics = 3;
    for (int n = 0; n < 3; n++) {
        t.nics[n].speed_mbps = 200000;
        t.nics[n].active = n != 2;
    }
    const uint8_t paths[4][3] = {{RAIL_PATH_PIX, RAIL_PATH_PHB, RAIL_PATH_SYS},
                                 {RAIL_PATH_PIX, RAIL_PATH_PHB, RAIL_PATH_SYS},
                                 {RAIL_PATH_PHB, RAIL_PATH_PIX, RAIL_PATH_SYS},
                                 {RAIL_PATH_SYS, RAIL_PATH_SYS, RAIL_PATH_PIX}};
    for (int g = 0; g < 4; g++)
        for (int n = 0; n < 3; n++)
            t.path[g][n] = paths[g][n];
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 2, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PIX);
    CHECK_EQ_INT(gn.n_nearest, 1);
    CHECK_NEAR(gn.nearest_gbps, 12.5, 1e-4); /* NIC1 is also GPU3's nearest (below) */
    /* GPU3's only PIX NIC is down: its nearest active NICs are the two SYS ones; NIC0 is also
     * the nearest of GPU0 and GPU1 (3 sharers), NIC1 of GPU2 (2 sharers). */
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 3, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_SYS);
    CHECK_EQ_INT(gn.n_nearest, 2);
    CHECK_NEAR(gn.nearest_gbps, 25.0 / 3 + 25.0 / 2, 1e-4);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 0, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PIX);
    CHECK_EQ_INT(gn.n_nearest, 1);
    CHECK_NEAR(gn.nearest_gbps, 25.0 / 3, 1e-4); /* NIC0: GPU0, GPU1 and GPU3 */
    /* With NIC2 up, every GPU has a PIX NIC: NIC0 is shared by 2, NIC1 and NIC2 by none. */
    t.nics[2].active = true;
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 0, &gn), 0);
    CHECK_NEAR(gn.nearest_gbps, 12.5, 1e-4);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 2, &gn), 0);
    CHECK_NEAR(gn.nearest_gbps, 25.0, 1e-4);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 3, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PIX);
    CHECK_NEAR(gn.nearest_gbps, 25.0, 1e-4);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 4, &gn), -EINVAL);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, -1, &gn), -EINVAL);
    CHECK_EQ_INT(rail_topo_gpu_net(NULL, 0, &gn), -EINVAL);
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 0, NULL), -EINVAL);
    t.n_nics = 0;
    CHECK_EQ_INT(rail_topo_gpu_net(&t, 0, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_DIS);
    CHECK_EQ_INT(gn.n_nearest, 0);
    CHECK_NEAR(gn.nearest_gbps, 0.0, 1e-6);
}

static void test_finalize(void)
{
    static struct rail_topo t;
    rail_topo_reset(&t, RAIL_TOPO_SRC_PROFILE, "x");
    t.n_gpus = 2;
    t.n_nics = 1;
    t.gpus[0] = (struct rail_gpu){.sm = 90, .nvlinks = 18, .gdr = true};
    t.gpus[1] = (struct rail_gpu){.sm = 90, .nvlinks = 18, .gdr = false};
    t.nics[0].gdr = true;
    t.path[0][0] = RAIL_PATH_PHB;
    t.path[1][0] = RAIL_PATH_PIX;
    rail_topo_finalize(&t);
    CHECK_EQ_INT(t.nvlink_gen, 4);
    CHECK_NEAR(t.nvlink_bw, 18 * 20.6, 1e-3);
    CHECK(!t.gdr); /* GPU0 too far, GPU1 without GDR */
    t.path[0][0] = RAIL_PATH_PXB;
    t.gpus[1].nvlinks = 0;
    rail_topo_finalize(&t);
    CHECK(t.gdr);
    CHECK_EQ_INT(t.nvlink_gen, 0); /* a GPU without NVLink: no NVLink fabric */
    CHECK_NEAR(t.nvlink_bw, 0.0, 1e-6);
}

int main(void)
{
    test_path_names();
    test_units();
    test_sm_table();
    test_parsers();
    test_classify();
    test_gpu_net();
    test_finalize();
    return check_report("test_topo_helpers");
}
