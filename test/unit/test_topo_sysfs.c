/* SPDX-License-Identifier: Apache-2.0 */
/* Root-prefixed sysfs reader on the synthetic XE8640-like tree (IB port rate/link layer/state,
 * PCIe max link, peermem), small hand-made trees for the edge cases, and hwloc reading the same
 * tree through HWLOC_FSROOT. */
#include "check.h"
#include "topo.h"
#include "tmpfiles.h"
#include "topo_sysfs.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT RAIL_FIXTURES "/sysfs/synthetic-xe8640-like"

static char g_tmp[] = "/tmp/rail_topo_sysfs_XXXXXX";

static void put(const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s%s", g_tmp, rel);
    tmp_put(path, content);
}

static void test_file_access(void)
{
    char buf[256], small[8], names[8][RAIL_SYSFS_NAME_LEN];
    CHECK_EQ_INT(
        rail_sysfs_read(ROOT, "/sys/class/infiniband/mlx5_2/ports/1/rate", buf, sizeof(buf)),
        (int)strlen("400 Gb/sec (4X NDR)"));
    CHECK_EQ_STR(buf, "400 Gb/sec (4X NDR)"); /* trailing newline removed */
    CHECK_EQ_INT(
        rail_sysfs_read(ROOT, "/sys/class/infiniband/mlx5_9/ports/1/rate", buf, sizeof(buf)),
        -ENOENT);
    CHECK_EQ_INT(
        rail_sysfs_read(ROOT, "/sys/class/infiniband/mlx5_2/ports/1/rate", small, sizeof(small)),
        -EFBIG);
    CHECK_EQ_INT(rail_sysfs_read(ROOT, "relative/path", buf, sizeof(buf)), -EINVAL);
    CHECK(rail_sysfs_exists(ROOT, "/sys/module/nvidia_peermem/version"));
    CHECK(!rail_sysfs_exists(ROOT, "/sys/module/nvidia_peermem/nothing"));
    /* root given with a trailing slash works the same */
    CHECK(rail_sysfs_exists(ROOT "/", "/proc/driver/nvidia/version"));

    CHECK_EQ_INT(rail_sysfs_realpath(ROOT, "/sys/class/infiniband/mlx5_0/device", buf, sizeof(buf)),
                 0);
    CHECK_EQ_STR(buf, "/sys/devices/pci0000:48/0000:48:01.0/0000:49:00.0/0000:4a:02.0/"
                      "0000:4d:00.0");
    CHECK_EQ_INT(rail_sysfs_realpath(ROOT, "/sys/bus/pci/devices/0000:5f:00.0", buf, sizeof(buf)),
                 0);
    CHECK_EQ_STR(buf, "/sys/devices/pci0000:59/0000:59:01.0/0000:5a:00.0/0000:5b:03.0/"
                      "0000:5f:00.0");
    CHECK_EQ_INT(rail_sysfs_realpath(ROOT, "/sys/bus/pci/devices/0000:00:00.0", buf, sizeof(buf)),
                 -ENOENT);

    CHECK_EQ_INT(rail_sysfs_list(ROOT, "/sys/class/infiniband", names, 8), 3);
    CHECK_EQ_STR(names[0], "mlx5_0");
    CHECK_EQ_STR(names[1], "mlx5_1");
    CHECK_EQ_STR(names[2], "mlx5_2");
    CHECK_EQ_INT(rail_sysfs_list(ROOT, "/sys/class/infiniband", names, 2), 2);
    CHECK_EQ_INT(rail_sysfs_list(ROOT, "/sys/class/nothing", names, 8), -ENOENT);

    /* Names pasted into paths: one plain component, shorter than the limit. */
    CHECK(rail_sysfs_name_ok("mlx5_0", 7));
    CHECK(rail_sysfs_name_ok("...", 8)); /* only "." and ".." are special */
    CHECK(!rail_sysfs_name_ok("mlx5_0", 6));
    CHECK(!rail_sysfs_name_ok("../mlx5_0", 64));
    CHECK(!rail_sysfs_name_ok("mlx5/0", 64));
    CHECK(!rail_sysfs_name_ok(".", 64));
    CHECK(!rail_sysfs_name_ok("..", 64));
    CHECK(!rail_sysfs_name_ok("", 64));
    CHECK(!rail_sysfs_name_ok(NULL, 64));
}

static void test_ib_ports(void)
{
    struct rail_sysfs_ib_port p;
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_0", 1, &p), 0);
    CHECK_EQ_INT(p.speed_mbps, 200000);
    CHECK_EQ_INT(p.link_layer, RAIL_LINK_IB);
    CHECK_EQ_INT(p.state, 4);
    CHECK(p.active);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_1", 1, &p), 0);
    CHECK_EQ_INT(p.speed_mbps, 100000);
    CHECK_EQ_INT(p.link_layer, RAIL_LINK_ETH); /* RoCE */
    CHECK(p.active);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_2", 1, &p), 0);
    CHECK_EQ_INT(p.speed_mbps, 400000);
    CHECK_EQ_INT(p.link_layer, RAIL_LINK_IB);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_2", 2, &p), -ENOENT);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "../../etc", 1, &p), -EINVAL);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "a/b", 1, &p), -EINVAL);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_0", 0, &p), -EINVAL);
    CHECK_EQ_INT(rail_sysfs_ib_port(ROOT, "mlx5_0", 1, NULL), -EINVAL);
}

static void test_pcie_and_gdr(void)
{
    int gen, width;
    /* CX-6: device max Gen4 x16 under a Gen5 downstream port -> Gen4 x16 */
    CHECK_EQ_INT(rail_sysfs_pcie_link(ROOT, "0000:4d:00.0", &gen, &width), 0);
    CHECK_EQ_INT(gen, 4);
    CHECK_EQ_INT(width, 16);
    /* H100 downtrained to Gen1 at idle: the max link counts */
    CHECK_EQ_INT(rail_sysfs_pcie_link(ROOT, "0000:5f:00.0", &gen, &width), 0);
    CHECK_EQ_INT(gen, 5);
    CHECK_EQ_INT(width, 16);
    CHECK_EQ_INT(rail_sysfs_pcie_link(ROOT, "0000:5e:00.0", &gen, &width), 0);
    CHECK_EQ_INT(gen, 5);
    CHECK_EQ_INT(rail_sysfs_pcie_link(ROOT, "0000:99:00.0", &gen, &width), -ENOENT);
    CHECK_EQ_INT(rail_sysfs_pcie_link(ROOT, "../../x", &gen, &width), -EINVAL);
    CHECK_EQ_INT(rail_sysfs_pci_numa(ROOT, "0000:4e:00.0"), 0);
    CHECK_EQ_INT(rail_sysfs_pci_numa(ROOT, "0000:5f:00.0"), 1);
    CHECK_EQ_INT(rail_sysfs_pci_numa(ROOT, "0000:99:00.0"), -1);
    CHECK(rail_sysfs_peermem(ROOT));
}

/* Hand-made trees: old speed strings, unknown values, a soft-RoCE port without rate, a port that
 * is down, and a symlink that leaves the root. */
static void test_edge_trees(void)
{
    struct rail_sysfs_ib_port p;
    char buf[256];
    int gen, width;
    CHECK(!rail_sysfs_peermem(g_tmp));
    put("/sys/module/nvidia_peermem/version", "1.0\n");
    CHECK(rail_sysfs_peermem(g_tmp));
    put("/sys/kernel/mm/memory_peers/nv_mem_nc/version", "1.0\n");
    CHECK(rail_sysfs_peermem(g_tmp));

    put("/sys/devices/pci0000:00/0000:00:01.0/max_link_speed", "8 GT/s\n");
    put("/sys/devices/pci0000:00/0000:00:01.0/max_link_width", "8\n");
    put("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/max_link_speed", "16.0 GT/s PCIe\n");
    put("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/max_link_width", "16\n");
    put("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/numa_node", "-1\n");
    put("/sys/devices/pci0000:00/0000:00:02.0/max_link_speed", "Unknown\n");
    put("/sys/devices/pci0000:00/0000:00:02.0/max_link_width", "255\n");
    put("/sys/bus/pci/devices/.keep", ""); /* creates the directories */
    if (symlink("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                strcat(strcpy(buf, g_tmp), "/sys/bus/pci/devices/0000:01:00.0")) != 0 ||
        symlink("../../../devices/pci0000:00/0000:00:02.0",
                strcat(strcpy(buf, g_tmp), "/sys/bus/pci/devices/0000:00:02.0")) != 0 ||
        symlink("/", strcat(strcpy(buf, g_tmp), "/sys/escape")) != 0)
        CHECK(!"symlink");
    /* device Gen4 x16 behind an old-format Gen3 x8 root port -> Gen3 x8 */
    CHECK_EQ_INT(rail_sysfs_pcie_link(g_tmp, "0000:01:00.0", &gen, &width), 0);
    CHECK_EQ_INT(gen, 3);
    CHECK_EQ_INT(width, 8);
    CHECK_EQ_INT(rail_sysfs_pcie_link(g_tmp, "0000:00:02.0", &gen, &width), -ENOENT);
    CHECK_EQ_INT(rail_sysfs_pci_numa(g_tmp, "0000:01:00.0"), -1);
    CHECK_EQ_INT(rail_sysfs_realpath(g_tmp, "/sys/escape/etc", buf, sizeof(buf)), -EXDEV);

    put("/sys/class/infiniband/rxe0/ports/1/state", "4: ACTIVE\n");
    CHECK_EQ_INT(rail_sysfs_ib_port(g_tmp, "rxe0", 1, &p), 0);
    CHECK_EQ_INT(p.speed_mbps, 0);
    CHECK_EQ_INT(p.link_layer, RAIL_LINK_UNKNOWN);
    CHECK(p.active);
    put("/sys/class/infiniband/mlx5_9/ports/1/state", "1: DOWN\n");
    put("/sys/class/infiniband/mlx5_9/ports/1/rate", "10 Gb/sec (4X QDR)\n");
    put("/sys/class/infiniband/mlx5_9/ports/1/link_layer", "Omni-Path\n");
    CHECK_EQ_INT(rail_sysfs_ib_port(g_tmp, "mlx5_9", 1, &p), 0);
    CHECK_EQ_INT(p.state, 1);
    CHECK(!p.active);
    CHECK_EQ_INT(p.speed_mbps, 10000);
    CHECK_EQ_INT(p.link_layer, RAIL_LINK_UNKNOWN);
    put("/sys/class/infiniband/mlx5_8/ports/1/rate", "garbage\n");
    CHECK_EQ_INT(rail_sysfs_ib_port(g_tmp, "mlx5_8", 1, &p), 0);
    CHECK_EQ_INT(p.speed_mbps, 0);
    CHECK(p.active); /* state unknown counts as active */
}

/* hwloc reading the same tree as the live system (HWLOC_FSROOT), sysfs facts from the root. */
static void test_hwloc_fsroot(void)
{
    static struct rail_topo t;
    char err[256];
    int n0 = -1, n1 = -1, n2 = -1;
    setenv("HWLOC_FSROOT", ROOT, 1);
    setenv("HWLOC_COMPONENTS", "linux,stop", 1);
    CHECK_MSG(rail_topo_load_hwloc(NULL, ROOT, &t, err, sizeof(err)) == 0, "%s", err);
    unsetenv("HWLOC_FSROOT");
    unsetenv("HWLOC_COMPONENTS");
    CHECK_EQ_INT(t.source, RAIL_TOPO_SRC_HWLOC);
    CHECK(strstr(t.origin, "HWLOC_FSROOT=") != NULL);
    CHECK_EQ_INT(t.n_gpus, 2);
    CHECK_EQ_INT(t.n_nics, 3);
    CHECK_EQ_STR(t.gpus[0].busid, "0000:4e:00.0");
    CHECK_EQ_STR(t.gpus[1].busid, "0000:5f:00.0");
    for (int n = 0; n < t.n_nics; n++) {
        if (strcmp(t.nics[n].name, "mlx5_0") == 0)
            n0 = n;
        if (strcmp(t.nics[n].name, "mlx5_1") == 0)
            n1 = n;
        if (strcmp(t.nics[n].name, "mlx5_2") == 0)
            n2 = n;
    }
    if (n0 < 0 || n1 < 0 || n2 < 0) {
        CHECK(!"mlx5_0..2 found");
        return;
    }
    /* verified classification (topology.md 2.3) */
    CHECK_EQ_INT(t.path[0][n0], RAIL_PATH_PIX);
    CHECK_EQ_INT(t.path[0][n1], RAIL_PATH_PIX);
    CHECK_EQ_INT(t.path[0][n2], RAIL_PATH_SYS);
    CHECK_EQ_INT(t.path[1][n2], RAIL_PATH_PIX);
    CHECK_EQ_INT(t.path[1][n0], RAIL_PATH_SYS);
    CHECK_EQ_INT(t.gpus[0].sm, 90);
    CHECK_EQ_INT(t.gpus[0].numa, 0);
    CHECK_EQ_INT(t.gpus[1].numa, 1);
    CHECK_EQ_INT(t.gpus[1].pcie_gen, 5); /* max link, not the idle Gen1 */
    CHECK_NEAR(t.gpus[1].pcie_gbps, 48.0, 1e-4);
    CHECK_EQ_INT(t.nics[n0].speed_mbps, 200000);
    CHECK_EQ_INT(t.nics[n0].link_layer, RAIL_LINK_IB);
    CHECK_EQ_INT(t.nics[n0].pcie_gen, 4);
    CHECK_EQ_INT(t.nics[n1].speed_mbps, 100000);
    CHECK_EQ_INT(t.nics[n1].link_layer, RAIL_LINK_ETH);
    CHECK_EQ_STR(t.nics[n1].busid, "0000:4d:00.1");
    CHECK_EQ_INT(t.nics[n2].speed_mbps, 400000);
    CHECK(t.nics[n2].gdr); /* peermem files present */
    CHECK(t.gdr);
    CHECK_EQ_INT(t.n_numa, 2);
}

int main(void)
{
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_file_access();
    test_ib_ports();
    test_pcie_and_gdr();
    test_edge_trees();
    test_hwloc_fsroot();
    tmp_remove_tree(g_tmp);
    return check_report("test_topo_sysfs");
}
