/* SPDX-License-Identifier: Apache-2.0 */
/* GPU compute capabilities a topology file leaves out are filled from the CUDA driver (as NCCL
 * fills them from the live GPUs): the pure matcher, then the driver path against the fake libcuda
 * (test/fakecuda: devices at 0000:10:00.0, 0000:11:00.0, ..., capability RAIL_FAKE_CUDA_CC). */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "tmpfiles.h"
#include "topo.h"
#include "topo_internal.h"

#define FAKE RAIL_BINARY_DIR "/test/fakecuda/libcuda.so.1"

static char g_dir[] = "/tmp/rail_topo_cuda_XXXXXX";

static void test_pure_fill(void)
{
    static struct rail_topo t;
    const char busid[3][16] = {"0000:1B:00.0", "0000:43:00.0", "0000:99:00.0"};
    const int sm[3] = {90, 100, 80};
    memset(&t, 0, sizeof(t));
    t.n_gpus = 3;
    snprintf(t.gpus[0].busid, 16, "0000:1b:00.0");
    snprintf(t.gpus[1].busid, 16, "0000:43:00.0");
    snprintf(t.gpus[2].busid, 16, "0000:52:00.0");
    t.gpus[1].sm = 80; /* known: kept */
    CHECK_EQ_INT(rail_topo_fill_sm(&t, busid, sm, 3), 1);
    CHECK_EQ_INT(t.gpus[0].sm, 90); /* matched case-blind */
    CHECK_EQ_INT(t.gpus[1].sm, 80);
    CHECK_EQ_INT(t.gpus[2].sm, 0); /* no such device: stays unknown */
    CHECK_EQ_INT(rail_topo_fill_sm(NULL, busid, sm, 3), 0);
}

static void test_from_driver(void)
{
    static struct rail_topo t;
    char path[256], err[256];
    snprintf(path, sizeof(path), "%s/nosm.xml", g_dir);
    /* Two GPUs without sm and with a device id the project does not know. */
    tmp_put(path,
            "<system version=\"1\"><cpu numaid=\"0\">"
            "<pci busid=\"0000:10:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x9999\">"
            "<gpu dev=\"0\" rank=\"0\"><nvlink target=\"fffffff:ffff:ff\" count=\"18\" "
            "tclass=\"0x068000\"/></gpu></pci>"
            "<pci busid=\"0000:11:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x9999\">"
            "<gpu dev=\"1\" rank=\"1\"/></pci></cpu></system>");
    CHECK_MSG(rail_topo_load_nccl_xml(path, &t, err, sizeof(err)) == 0, "%s", err);
    CHECK_EQ_INT(t.gpus[0].sm, 0);
    CHECK_EQ_INT(rail_topo_fill_sm_from_cuda(&t), 2);
    CHECK_EQ_INT(t.gpus[0].sm, 100);
    CHECK_EQ_INT(t.gpus[1].sm, 100);
    CHECK_EQ_INT(rail_topo_fill_sm_from_cuda(&t), 0); /* nothing left to fill */
}

int main(void)
{
    setenv("NCCL_RAIL_CUDA_LIBRARY", FAKE, 1);
    setenv("RAIL_FAKE_CUDA_NDEV", "2", 1);
    setenv("RAIL_FAKE_CUDA_CC", "10.0", 1);
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_pure_fill();
    test_from_driver();
    tmp_remove_tree(g_dir);
    return check_report("test_topo_cuda");
}
