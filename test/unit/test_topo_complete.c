/* SPDX-License-Identifier: Apache-2.0 */
/* Completing sparse topologies from PCI ids: cloud NCCL files and hwloc exports without NVML. */
#include <string.h>

#include "check.h"
#include "topo.h"

static void test_p4d_file(void)
{
    static struct rail_topo t;
    char err[256];
    CHECK_EQ_INT(rail_topo_load_nccl_xml(RAIL_FIXTURES
                                         "/nccl-topo/aws_p4d.24xlarge_8xA100_4xEFA.xml",
                                         &t, err, sizeof(err)),
                 0);
    CHECK_EQ_INT(t.n_gpus, 8);
    CHECK(t.nvswitch);
    CHECK_EQ_INT(t.gpus[3].nvlinks, 12);
    CHECK_EQ_INT(t.nvlink_gen, 3);
    CHECK(t.nvlink_bw > 200.0f); /* 12 links of NVLink3 */
    CHECK_EQ_INT(t.n_nics, 4);
    CHECK_EQ_INT(t.nics[0].speed_mbps, 100000); /* EFA gen 1 */
    CHECK_EQ_INT(t.inferred, RAIL_TOPO_INFERRED_NVLINK | RAIL_TOPO_INFERRED_NIC_SPEED);
}

static void test_complete_file_untouched(void)
{
    static struct rail_topo t;
    char err[256];
    CHECK_EQ_INT(rail_topo_load_nccl_xml(RAIL_FIXTURES
                                         "/nccl-topo/simai_hgx-a100-8gpu_4xcx6dx-roce-bond.xml",
                                         &t, err, sizeof(err)),
                 0);
    CHECK_EQ_INT(t.inferred, 0u); /* a real NCCL dump says everything itself */
    CHECK_EQ_INT(t.gpus[0].nvlinks, 12);
    CHECK_EQ_INT(t.nics[0].speed_mbps, 200000);
}

static void make_gpus(struct rail_topo *t, int n, uint16_t device)
{
    memset(t, 0, sizeof(*t));
    t->n_gpus = n;
    for (int g = 0; g < n; g++) {
        t->gpus[g].pci_vendor = 0x10de;
        t->gpus[g].pci_device = device;
        t->gpus[g].sm = 90;
    }
}

static void test_boards(void)
{
    static struct rail_topo t;
    make_gpus(&t, 4, 0x2330); /* HGX H100 4-GPU: direct links, no NVSwitch */
    CHECK_EQ_INT(rail_topo_complete(&t), RAIL_TOPO_INFERRED_NVLINK);
    CHECK(!t.nvswitch);
    CHECK_EQ_INT(t.gpus[0].nvlinks, 18);

    make_gpus(&t, 8, 0x2324); /* H800: 8 links through NVSwitch */
    CHECK_EQ_INT(rail_topo_complete(&t), RAIL_TOPO_INFERRED_NVLINK);
    CHECK(t.nvswitch);
    CHECK_EQ_INT(t.gpus[7].nvlinks, 8);

    make_gpus(&t, 8, 0x1db1); /* V100 SXM2 (DGX-1): mesh, never NVSwitch */
    CHECK_EQ_INT(rail_topo_complete(&t), RAIL_TOPO_INFERRED_NVLINK);
    CHECK(!t.nvswitch);
    CHECK_EQ_INT(t.gpus[0].nvlinks, 6);

    make_gpus(&t, 6, 0x2330); /* no SXM board has 6 GPUs: unknown, left alone */
    CHECK_EQ_INT(rail_topo_complete(&t), 0u);
    CHECK_EQ_INT(t.gpus[0].nvlinks, 0);

    make_gpus(&t, 8, 0x2331); /* H100 PCIe: no baseboard facts */
    CHECK_EQ_INT(rail_topo_complete(&t), 0u);

    make_gpus(&t, 8, 0x2330); /* mixed parts: nothing inferred */
    t.gpus[5].pci_device = 0x2335;
    CHECK_EQ_INT(rail_topo_complete(&t), 0u);

    make_gpus(&t, 8, 0x2330); /* the source gave NVLinks for one GPU: trust the source */
    t.gpus[2].nvlinks = 4;
    CHECK_EQ_INT(rail_topo_complete(&t), 0u);
    CHECK_EQ_INT(t.gpus[0].nvlinks, 0);
}

static void test_nics(void)
{
    static struct rail_topo t;
    memset(&t, 0, sizeof(t));
    t.n_nics = 3;
    t.nics[0].pci_vendor = 0x15b3;
    t.nics[0].pci_device = 0x1021; /* ConnectX-7 */
    t.nics[1].pci_vendor = 0x15b3;
    t.nics[1].pci_device = 0x1021;
    t.nics[1].speed_mbps = 200000; /* given by the source: kept */
    t.nics[2].pci_vendor = 0x8086;
    t.nics[2].pci_device = 0x1234; /* unknown part: stays unknown */
    CHECK_EQ_INT(rail_topo_complete(&t), RAIL_TOPO_INFERRED_NIC_SPEED);
    CHECK_EQ_INT(t.nics[0].speed_mbps, 400000);
    CHECK_EQ_INT(t.nics[1].speed_mbps, 200000);
    CHECK_EQ_INT(t.nics[2].speed_mbps, 0);
    CHECK_EQ_INT(rail_topo_complete(NULL), 0u);
}

int main(void)
{
    test_p4d_file();
    test_complete_file_untouched();
    test_boards();
    test_nics();
    return check_report("test_topo_complete");
}
