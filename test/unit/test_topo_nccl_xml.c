/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL topology XML loader: the 9 public files (counts, sm, NVSwitch, NIC speeds, path classes)
 * and malformed or hostile inputs (clean -EINVAL with a reason, never a crash or overflow). */
#include "check.h"
#include "model/cost_model.h"
#include "tmpfiles.h"
#include "topo.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#define DIR RAIL_FIXTURES "/nccl-topo/"

static struct rail_topo g_t;
static char g_err[512];
static char g_tmpdir[] = "/tmp/rail_topo_xml_XXXXXX";

static int load(const char *path)
{
    g_err[0] = '\0';
    return rail_topo_load_nccl_xml(path, &g_t, g_err, sizeof(g_err));
}

static const char *write_tmp(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *write_tmp(const char *name, const char *fmt, ...)
{
    static char path[256];
    va_list ap;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", g_tmpdir, name);
    f = fopen(path, "w");
    if (!f)
        return "/nonexistent";
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
    return path;
}

static int nic_index(const char *name)
{
    for (int n = 0; n < g_t.n_nics; n++)
        if (strcmp(g_t.nics[n].name, name) == 0)
            return n;
    return -1;
}

static int gpu_index(const char *busid)
{
    for (int g = 0; g < g_t.n_gpus; g++)
        if (strcmp(g_t.gpus[g].busid, busid) == 0)
            return g;
    return -1;
}

static void test_counts(void)
{
    static const struct {
        const char *file;
        int gpus, nics, sm, nvswitch, nic_speed, n_numa, cpu;
    } cases[] = {
        {"aws_g5.48xlarge_8xA10G_EFA.xml", 0, 0, 0, 0, 0, 2, RAIL_CPU_UNKNOWN},
        {"aws_p4d.24xlarge_8xA100_4xEFA.xml", 8, 4, 80, 1, 100000, 2,
         RAIL_CPU_INTEL}, /* completed */
        {"aws_p4de.24xlarge_8xA100_4xEFA.xml", 8, 4, 80, 1, 100000, 2, RAIL_CPU_INTEL},
        {"aws_p5.48xlarge_8xH100_32xEFA.xml", 0, 0, 0, 0, 0, 2, RAIL_CPU_AMD},
        {"azure_ndv2-topo.xml", 8, 1, 0, 0, 0, 2, RAIL_CPU_INTEL},
        {"azure_ndv4-topo.xml", 8, 8, 0, 0, 0, 4, RAIL_CPU_AMD},
        {"azure_ndv5-topo.xml", 8, 8, 0, 0, 0, 2, RAIL_CPU_INTEL},
        {"azure_ncv4-topo.xml", 4, 1, 80, 0, 100000, 4, RAIL_CPU_AMD},
        {"simai_hgx-a100-8gpu_4xcx6dx-roce-bond.xml", 8, 5, 80, 1, 200000, 2, RAIL_CPU_INTEL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), DIR "%s", cases[i].file);
        CHECK_MSG(load(path) == 0, "%s: %s", cases[i].file, g_err);
        CHECK_EQ_INT(g_t.source, RAIL_TOPO_SRC_NCCL_XML);
        CHECK_EQ_STR(g_t.origin, path);
        CHECK_MSG(g_t.n_gpus == cases[i].gpus, "%s: %d GPUs", cases[i].file, g_t.n_gpus);
        CHECK_MSG(g_t.n_nics == cases[i].nics, "%s: %d NICs", cases[i].file, g_t.n_nics);
        CHECK_MSG(g_t.nvswitch == (cases[i].nvswitch != 0), "%s: nvswitch", cases[i].file);
        CHECK_MSG(g_t.n_numa == cases[i].n_numa, "%s: %d NUMA", cases[i].file, g_t.n_numa);
        CHECK_MSG(g_t.cpu_vendor == cases[i].cpu, "%s: cpu %d", cases[i].file, g_t.cpu_vendor);
        for (int g = 0; g < g_t.n_gpus; g++)
            CHECK_MSG(g_t.gpus[g].sm == cases[i].sm, "%s GPU %d sm%d", cases[i].file, g,
                      g_t.gpus[g].sm);
        for (int n = 0; n < g_t.n_nics; n++)
            CHECK_MSG(g_t.nics[n].speed_mbps == cases[i].nic_speed, "%s NIC %d %d Mb/s",
                      cases[i].file, n, g_t.nics[n].speed_mbps);
        /* every GPU/NIC pair got a real class */
        for (int g = 0; g < g_t.n_gpus; g++)
            for (int n = 0; n < g_t.n_nics; n++)
                CHECK(g_t.path[g][n] >= RAIL_PATH_PIX && g_t.path[g][n] <= RAIL_PATH_SYS);
    }
}

/* AWS p4d: 2 GPUs + 1 EFA per switch, 2 switches per CPU. */
static void test_p4d(void)
{
    static const uint8_t want[8][4] = {
        {RAIL_PATH_PIX, RAIL_PATH_PHB, RAIL_PATH_SYS, RAIL_PATH_SYS},
        {RAIL_PATH_PIX, RAIL_PATH_PHB, RAIL_PATH_SYS, RAIL_PATH_SYS},
        {RAIL_PATH_PHB, RAIL_PATH_PIX, RAIL_PATH_SYS, RAIL_PATH_SYS},
        {RAIL_PATH_PHB, RAIL_PATH_PIX, RAIL_PATH_SYS, RAIL_PATH_SYS},
        {RAIL_PATH_SYS, RAIL_PATH_SYS, RAIL_PATH_PIX, RAIL_PATH_PHB},
        {RAIL_PATH_SYS, RAIL_PATH_SYS, RAIL_PATH_PIX, RAIL_PATH_PHB},
        {RAIL_PATH_SYS, RAIL_PATH_SYS, RAIL_PATH_PHB, RAIL_PATH_PIX},
        {RAIL_PATH_SYS, RAIL_PATH_SYS, RAIL_PATH_PHB, RAIL_PATH_PIX},
    };
    struct rail_gpu_net gn;
    CHECK(load(DIR "aws_p4d.24xlarge_8xA100_4xEFA.xml") == 0);
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 4; n++)
            CHECK_MSG(g_t.path[g][n] == want[g][n], "p4d GPU%d NIC%d: %s", g, n,
                      rail_path_name((enum rail_path)g_t.path[g][n]));
    CHECK_EQ_STR(g_t.gpus[0].busid, "0000:10:1c.0");
    CHECK_EQ_STR(g_t.nics[0].busid, "0000:10:1b.0");
    CHECK_EQ_INT(g_t.nics[0].link_layer, RAIL_LINK_UNKNOWN); /* EFA (1d0f) */
    CHECK(!g_t.nics[0].virtual_nic);
    CHECK_EQ_INT(g_t.gpus[0].pcie_gen, 3);
    CHECK_EQ_INT(g_t.gpus[0].pcie_width, 16);
    CHECK_NEAR(g_t.gpus[0].pcie_gbps, 12.0, 1e-4);
    CHECK_NEAR(g_t.inter_cpu_bw, 10.0, 1e-4); /* Skylake (model 85) */
    CHECK(!g_t.gdr);                          /* the file says nothing about GDR */
    CHECK_EQ_INT(rail_topo_gpu_net(&g_t, 0, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PIX);
    CHECK_EQ_INT(gn.n_nearest, 1);
}

/* Azure NDv4: 2 GPUs + 2 IB NICs per switch, one switch per NUMA node. */
static void test_ndv4(void)
{
    int g0 = -1, pix = 0;
    CHECK(load(DIR "azure_ndv4-topo.xml") == 0);
    g0 = gpu_index("0001:00:00.0");
    CHECK(g0 == 0); /* GPUs are sorted by bus id */
    for (int n = 0; n < g_t.n_nics; n++) {
        bool same_switch = strcmp(g_t.nics[n].busid, "0101:00:00.0") == 0 ||
                           strcmp(g_t.nics[n].busid, "0102:00:00.0") == 0;
        CHECK_EQ_INT(g_t.path[g0][n], same_switch ? RAIL_PATH_PIX : RAIL_PATH_SYS);
        CHECK_EQ_INT(g_t.nics[n].link_layer, RAIL_LINK_IB); /* class 0x0207 */
    }
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++)
            pix += g_t.path[g][n] == RAIL_PATH_PIX;
    CHECK_EQ_INT(pix, 16);
}

/* Azure NDv5: 1 GPU + 1 NIC per switch; PHB within the socket, SYS across. */
static void test_ndv5(void)
{
    CHECK(load(DIR "azure_ndv5-topo.xml") == 0);
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++) {
            int want = g == n ? RAIL_PATH_PIX : (g / 4 == n / 4) ? RAIL_PATH_PHB : RAIL_PATH_SYS;
            CHECK_MSG(g_t.path[g][n] == want, "ndv5 GPU%d NIC%d: %s", g, n,
                      rail_path_name((enum rail_path)g_t.path[g][n]));
        }
    CHECK_EQ_INT(g_t.gpus[7].pcie_gen, 5);
    CHECK_NEAR(g_t.nics[0].pcie_gbps, 48.0, 1e-4);
    CHECK_NEAR(g_t.inter_cpu_bw, 22.0, 1e-4); /* Sapphire Rapids (model 143) */
    CHECK_EQ_INT(g_t.nvlink_gen, 0);          /* GPUs listed without NVLink facts */
}

/* SimAI HGX A100: 3-level PEX88096 tree, GPU-NIC PXB, NVLink to 6 NVSwitches x 2. */
static void test_simai(void)
{
    struct rail_gpu_net gn;
    int b0, b1, b2, b3, b4;
    CHECK(load(DIR "simai_hgx-a100-8gpu_4xcx6dx-roce-bond.xml") == 0);
    b0 = nic_index("mlx5_bond_0");
    b1 = nic_index("mlx5_bond_1");
    b2 = nic_index("mlx5_bond_2");
    b3 = nic_index("mlx5_bond_3");
    b4 = nic_index("mlx5_bond_4");
    CHECK(b0 == 0 && b1 == 1 && b2 == 2 && b3 == 3 && b4 == 4);
    CHECK_EQ_INT(g_t.path[0][b1], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[1][b1], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[0][b0], RAIL_PATH_PHB); /* bond_0 hangs off the CPU */
    CHECK_EQ_INT(g_t.path[0][b2], RAIL_PATH_PHB);
    CHECK_EQ_INT(g_t.path[0][b3], RAIL_PATH_SYS);
    CHECK_EQ_INT(g_t.path[2][b2], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[6][b4], RAIL_PATH_PXB);
    CHECK_EQ_INT(g_t.path[7][b3], RAIL_PATH_PHB);
    for (int g = 0; g < 8; g++) {
        CHECK_EQ_INT(g_t.gpus[g].nvlinks, 12);
        CHECK(g_t.gpus[g].gdr);
    }
    CHECK_EQ_INT(g_t.nvlink_gen, 3);
    CHECK_NEAR(g_t.nvlink_bw, 240.0, 1e-3);
    CHECK_EQ_INT(g_t.nics[b1].link_layer, RAIL_LINK_ETH); /* RoCE bond */
    CHECK_EQ_INT(g_t.nics[b1].port, 1);
    CHECK(g_t.nics[b1].gdr);
    CHECK(g_t.gdr);
    CHECK_EQ_INT(rail_topo_gpu_net(&g_t, 0, &gn), 0);
    CHECK_EQ_INT(gn.best_path, RAIL_PATH_PXB);
    CHECK_EQ_INT(gn.n_nearest, 1);
    CHECK_NEAR(gn.nearest_gbps, 12.5, 1e-4); /* 200 Gb/s shared by GPU0 and GPU1 */
}

static void test_ndv2_ncv4(void)
{
    CHECK(load(DIR "azure_ndv2-topo.xml") == 0);
    for (int g = 0; g < 8; g++)
        CHECK_EQ_INT(g_t.path[g][0], g < 4 ? RAIL_PATH_PHB : RAIL_PATH_SYS);
    CHECK(load(DIR "azure_ncv4-topo.xml") == 0);
    CHECK_EQ_STR(g_t.nics[0].name, "eth0");
    CHECK(g_t.nics[0].virtual_nic);
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PHB);
    CHECK_EQ_INT(g_t.path[3][0], RAIL_PATH_SYS);
    for (int g = 0; g < 4; g++)
        CHECK_EQ_INT(g_t.gpus[g].nvlinks, 0); /* a GPU listed as its own NVLink peer */
    CHECK(!g_t.nvswitch);
}

/* Broadcom flattening: a Gen5 PEX89xxx parent (subsystem 1000:0xxx) with child levels
 * (1000:1xxx) is one switch for NCCL; an OEM subsystem id is not flattened. */
static void test_bcm_flattening(void)
{
    const char *fmt_sw = "<pci busid=\"0000:%02x:00.0\" class=\"0x060400\" vendor=\"0x1000\" "
                         "device=\"0xc030\" subsystem_vendor=\"%s\" subsystem_device=\"%s\">";
    char a[256], b[256], c[256];
    const char *path;
    for (int oem = 0; oem < 2; oem++) {
        snprintf(a, sizeof(a), fmt_sw, 0x10, oem ? "0x1028" : "0x1000", oem ? "0x236b" : "0x000b");
        snprintf(b, sizeof(b), fmt_sw, 0x11, oem ? "0x1028" : "0x1000", oem ? "0x236b" : "0x100b");
        snprintf(c, sizeof(c), fmt_sw, 0x12, oem ? "0x1028" : "0x1000", oem ? "0x236b" : "0x100b");
        path = write_tmp(
            "bcm.xml",
            "<system version=\"1\"><cpu numaid=\"0\">%s%s"
            "<pci busid=\"0000:13:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\">"
            "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/></pci></pci>%s"
            "<pci busid=\"0000:14:00.0\" class=\"0x020700\"><nic><net name=\"mlx5_0\" "
            "speed=\"400000\" port=\"1\" gdr=\"1\"/></nic></pci></pci></pci></cpu></system>",
            a, b, c);
        CHECK_MSG(load(path) == 0, "%s", g_err);
        CHECK_EQ_INT(g_t.n_gpus, 1);
        CHECK_EQ_INT(g_t.n_nics, 1);
        CHECK_EQ_INT(g_t.path[0][0], oem ? RAIL_PATH_PXB : RAIL_PATH_PIX);
        CHECK(g_t.gdr); /* PXB is still within NCCL's default GDR level */
    }
}

static void expect_einval(const char *what, const char *path, const char *needle)
{
    int rc = load(path);
    CHECK_MSG(rc == -EINVAL, "%s: rc %d", what, rc);
    CHECK_MSG(strstr(g_err, needle) != NULL, "%s: reason '%s' lacks '%s'", what, g_err, needle);
}

static void test_malformed(void)
{
    char buf[4096];
    FILE *f = fopen(DIR "aws_p4d.24xlarge_8xA100_4xEFA.xml", "r");
    size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len / 2] = '\0';
    expect_einval("truncated", write_tmp("trunc.xml", "%s", buf), "not well-formed");
    expect_einval("wrong root", write_tmp("root.xml", "<topology version=\"2.0\"/>"),
                  "expected <system>");
    expect_einval("hwloc file",
                  RAIL_FIXTURES "/hwloc-xml/mpibind_cts1-pascal_2xP100_mlx5-same-"
                                "switch.xml",
                  "expected <system>");
    expect_einval("empty", write_tmp("empty.xml", "%s", ""), "empty");
    expect_einval("binary", write_tmp("bin.xml", "\x01\x02\x7f<<\xff\xfe"), "not well-formed");
    expect_einval("missing", DIR "no-such-file.xml", "No such file");
    expect_einval("directory", g_tmpdir, "not a regular file");
    CHECK_EQ_INT(rail_topo_load_nccl_xml(NULL, &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK_EQ_INT(rail_topo_load_nccl_xml("", &g_t, NULL, 0), -EINVAL); /* no err buffer */
    expect_einval("no numaid", write_tmp("nonuma.xml", "<system><cpu/></system>"),
                  "without numaid");
    expect_einval("bad numaid", write_tmp("badnuma.xml", "<system><cpu numaid=\"x1\"/></system>"),
                  "numaid");
    expect_einval("no busid",
                  write_tmp("nobusid.xml",
                            "<system><cpu numaid=\"0\"><pci class=\"0x030200\"/></cpu></system>"),
                  "without busid");
    expect_einval("too many nvlinks",
                  write_tmp("nvl2.xml",
                            "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
                            "class=\"0x030200\"><gpu sm=\"90\"><nvlink target=\"0000:02:00.0\" "
                            "count=\"40\" tclass=\"0x068000\"/><nvlink target=\"0000:03:00.0\" "
                            "count=\"40\" tclass=\"0x068000\"/></gpu></pci></cpu></system>"),
                  "more than 64 NVLinks");
    /* 40 nested switches */
    {
        char *deep = malloc(1 << 16);
        size_t off = 0;
        off += (size_t)snprintf(deep + off, 1 << 16, "<system><cpu numaid=\"0\">");
        for (int i = 0; i < 40; i++)
            off += (size_t)snprintf(deep + off, (1 << 16) - off,
                                    "<pci busid=\"0000:%02x:00.0\" class=\"0x060400\">", i + 1);
        for (int i = 0; i < 40; i++)
            off += (size_t)snprintf(deep + off, (1 << 16) - off, "</pci>");
        snprintf(deep + off, (1 << 16) - off, "</cpu></system>");
        expect_einval("deep nesting", write_tmp("deep.xml", "%s", deep), "deeper than");
        free(deep);
    }
}

/* Values NCCL 2.28 reads with strtol/busIdToInt64 never reject its file: they are ignored here
 * (the model then treats them as unknown) and the file loads. */
static void test_nccl_accepts_values(void)
{
    CHECK_MSG(load(write_tmp("busid.xml", "<system><cpu numaid=\"0\"><pci busid=\"zz:00.0\" "
                                          "class=\"0x030200\"/></cpu></system>")) == 0,
              "%s", g_err);
    CHECK_EQ_INT(g_t.n_gpus, 1);
    CHECK_EQ_STR(g_t.gpus[0].busid, "0000:00:00.0"); /* NCCL reads "zz..." as 0 */
    CHECK(load(write_tmp("nvl.xml",
                         "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
                         "class=\"0x030200\"><gpu sm=\"90\"><nvlink target=\"0000:02:00.0\" "
                         "count=\"1000000\" tclass=\"0x068000\"/></gpu></pci></cpu></system>")) ==
          0);
    CHECK_EQ_INT(g_t.gpus[0].nvlinks, 0);
    CHECK(load(write_tmp("speed.xml", "<system><cpu numaid=\"0\"><nic><net name=\"x\" "
                                      "speed=\"99999999999\"/></nic></cpu></system>")) == 0);
    CHECK_EQ_INT(g_t.n_nics, 1);
    CHECK_EQ_INT(g_t.nics[0].speed_mbps, 0);
    CHECK(load(write_tmp("width.xml", "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
                                      "class=\"0x030200\" link_width=\"100000\"/></cpu>"
                                      "</system>")) == 0);
    CHECK_EQ_INT(g_t.gpus[0].pcie_width, 0);
    CHECK(load(write_tmp("sm.xml", "<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" "
                                   "class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\">"
                                   "<gpu sm=\"-5\"/></pci></cpu></system>")) == 0);
    CHECK_EQ_INT(g_t.gpus[0].sm, 90); /* from the PCI device id, as without the attribute */
}

/* What NCCL writes or accepts in topology files that the model must still read (issue: the
 * tuner refused the NVSwitch placeholder of VM dumps and went hands-off). */
static void test_nccl_accepts_shapes(void)
{
    static const char *const gpu_fmt =
        "<pci busid=\"0000:%02x:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2330\" "
        "link_speed=\"32.0 GT/s PCIe\" link_width=\"16\" extra=\"ignored\">"
        "<gpu dev=\"%d\" rank=\"%d\" gdr=\"1\" future_attr=\"x\">%s</gpu></pci>";
    char body[8192], g[1024];
    size_t off = 0;
    /* GPU 0: placeholder target, no tclass; GPU 1: NVLink to the CPU and to itself plus C2C;
     * GPU 2: 18 links to a target that is no GPU in the file and no tclass (NVSwitch). */
    const char *links[3] = {
        "<nvlink target=\"fffffff:ffff:ff\" count=\"18\"/>",
        "<nvlink target=\"0000:00:00.0\" count=\"4\" tclass=\"0x068001\"/>"
        "<nvlink target=\"0000:11:00.0\" count=\"2\" tclass=\"0x030200\"/>"
        "<c2c count=\"10\" bw=\"45000\"/>",
        "<nvlink target=\"ffff:ff:ff.f\" count=\"18\" tclass=\"0x068000\"/>",
    };
    off += (size_t)snprintf(body + off, sizeof(body) - off,
                            "<system version=\"1\" unknown=\"1\"><cpu numaid=\"0\" "
                            "arch=\"x86_64\" vendor=\"GenuineIntel\" host_hash=\"0x1\">");
    for (int i = 0; i < 3; i++) {
        snprintf(g, sizeof(g), gpu_fmt, 0x10 + i, i, i, links[i]);
        off += (size_t)snprintf(body + off, sizeof(body) - off, "%s", g);
    }
    snprintf(body + off, sizeof(body) - off,
             "<pci busid=\"0000:20:00.0\" class=\"0x020700\" vendor=\"0x15b3\">"
             "<nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" gdr=\"1\"/>"
             "<net name=\"mlx5_1\" dev=\"1\" speed=\"400000\" port=\"2\" gdr=\"1\" "
             "coll=\"1\"/></nic></pci></cpu><unknown_element/></system>");
    CHECK_MSG(load(write_tmp("shapes.xml", "%s", body)) == 0, "%s", g_err);
    CHECK_EQ_INT(g_t.n_gpus, 3);
    CHECK_EQ_INT(g_t.n_nics, 2); /* both <net> of one <nic> */
    CHECK(g_t.nvswitch);
    CHECK_EQ_INT(g_t.gpus[0].nvlinks, 18);
    CHECK_EQ_INT(g_t.gpus[1].nvlinks, 0); /* CPU link and self link are no GPU fabric */
    CHECK_EQ_INT(g_t.gpus[2].nvlinks, 18);
    CHECK_EQ_INT(g_t.gpus[0].sm, 90); /* no sm attribute: from the device id */
}

/* Newer dump forms: the "fffffff:ff:ff.0" NVSwitch placeholder, two MLOPart GPUs under one PCI
 * device with C2C links and a x2 link width, and a socket NIC listed under both CPUs (original
 * data in the form NCCL 2.27-2.30 writes on Grace/Vera trays). */
static void test_nccl_accepts_newer_dumps(void)
{
    const char *gpu = "<gpu dev=\"0\" sm=\"103\" mlopart=\"%d\" rank=\"%d\" gdr=\"1\">"
                      "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>"
                      "<c2c bw=\"44712\" count=\"5\"/></gpu>";
    char g0[512], g1[512];
    snprintf(g0, sizeof(g0), gpu, 0, 0);
    snprintf(g1, sizeof(g1), gpu, 1, 1);
    CHECK_MSG(load(write_tmp("gb.xml",
                             "<system version=\"1\"><cpu host_hash=\"0x2\" numaid=\"0\" "
                             "arch=\"arm64\" vendor=\"\"><pci busid=\"0009:06:00.0\" "
                             "class=\"0x030200\" vendor=\"0x10de\" device=\"0x31c2\" "
                             "link_speed=\"64.0 GT/s PCIe\" link_width=\"2\">%s%s</pci>"
                             "<nic><net name=\"eth0\" dev=\"0\" speed=\"10000\" port=\"0\" "
                             "latency=\"0.000000\" guid=\"0x0\" maxconn=\"65536\" gdr=\"0\"/>"
                             "</nic></cpu><cpu numaid=\"1\" arch=\"arm64\"><nic><net "
                             "name=\"eth0\" dev=\"0\" speed=\"10000\" gdr=\"0\"/></nic></cpu>"
                             "</system>",
                             g0, g1)) == 0,
              "%s", g_err);
    CHECK_EQ_INT(g_t.n_gpus, 2);
    CHECK(g_t.nvswitch);
    CHECK_EQ_INT(g_t.gpus[0].nvlinks, 18);
    CHECK_EQ_INT(g_t.gpus[1].sm, 103);
    CHECK_EQ_INT(g_t.gpus[0].pcie_width, 2);
    CHECK_EQ_INT(g_t.n_nics, 2);
}

/* The training systems' topology files (NCCL's VM form): every one loads with its GPUs behind
 * NVSwitch, and the tuner's model is confident for its communicator shape. */
static void test_tuner_data_topologies(void)
{
    static const struct {
        const char *name;
        int gpus, sm;
    } sys[] = {{"b200_16x8_ib", 8, 100},
               {"p4d_2x8_efa", 8, 80},
               {"p5_2x8_efa", 8, 90},
               {"p5_2x1_efa", 1, 90},
               {"p5_512x1_efa", 1, 90}};
    for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
        char path[512];
        struct rail_model m;
        struct rail_comm_shape shape = {.nranks = 4 * sys[i].gpus, .nnodes = 4};
        snprintf(path, sizeof(path), RAIL_FIXTURES "/tuner-data/topo/%s.xml", sys[i].name);
        CHECK_MSG(load(path) == 0, "%s: %s", sys[i].name, g_err);
        CHECK_EQ_INT(g_t.n_gpus, sys[i].gpus);
        CHECK(g_t.nvswitch);
        CHECK_EQ_INT(g_t.gpus[0].sm, sys[i].sm);
        shape.min_rpn = shape.max_rpn = sys[i].gpus;
        CHECK(rail_model_build(&m, &g_t, &shape, NULL) == 0);
        CHECK_MSG(m.confident, "%s: %s", sys[i].name, m.why);
    }
}

static void test_limits_and_hostile(void)
{
    char *big = malloc(1 << 17);
    size_t off = 0;
    const char *path;
    /* 70 GPUs and 70 NICs: the first 64 of each are kept (with a warning), nothing overflows. */
    off += (size_t)snprintf(big + off, 1 << 17, "<system><cpu numaid=\"0\">");
    for (int i = 0; i < 70; i++)
        off += (size_t)snprintf(big + off, (1 << 17) - off,
                                "<pci busid=\"0000:%02x:00.0\" class=\"0x030200\"/>"
                                "<pci busid=\"0001:%02x:00.0\" class=\"0x020700\"/>",
                                i, i);
    snprintf(big + off, (1 << 17) - off, "</cpu></system>");
    path = write_tmp("many.xml", "%s", big);
    CHECK_MSG(load(path) == 0, "%s", g_err);
    CHECK_EQ_INT(g_t.n_gpus, RAIL_TOPO_MAX_GPUS);
    CHECK_EQ_INT(g_t.n_nics, RAIL_TOPO_MAX_NICS);
    CHECK_EQ_INT(g_t.path[63][63], RAIL_PATH_PHB);
    free(big);

    /* An external entity is neither fetched nor expanded. */
    path = write_tmp("xxe.xml", "<?xml version=\"1.0\"?><!DOCTYPE system [<!ENTITY x SYSTEM "
                                "\"file:///etc/hostname\">]><system><cpu numaid=\"0\" "
                                "vendor=\"&x;\"/></system>");
    if (load(path) == 0)
        CHECK_EQ_INT(g_t.cpu_vendor, RAIL_CPU_UNKNOWN);
    else
        CHECK(g_err[0] != '\0');

    /* Unknown elements, a BMC VGA, a leaf without class, multi-port NIC, CPU NVLink. */
    path = write_tmp(
        "mixed.xml",
        "<system version=\"1\"><foo/><cpu numaid=\"1\" arch=\"ppc64\"><bar/>"
        "<pci busid=\"0000:03:00.0\" class=\"0x030000\" vendor=\"0x1a03\" device=\"0x2000\"/>"
        "<pci busid=\"0000:04:00.0\"/>"
        "<pci busid=\"0004:04:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x1db1\">"
        "<gpu dev=\"0\" gdr=\"0\"><nvlink target=\"0004:05:00.0\" count=\"3\" tclass=\"0x030200\"/>"
        "<nvlink target=\"ffff:ff:ff.0\" count=\"3\" tclass=\"0x068001\"/></gpu></pci>"
        "<pci busid=\"0003:01:00.0\" class=\"0x020700\"><nic>"
        "<net name=\"mlx5_0\" port=\"1\" speed=\"100000\"/><net name=\"mlx5_0\" port=\"2\" "
        "speed=\"100000\"/></nic></pci></cpu></system>");
    CHECK_MSG(load(path) == 0, "%s", g_err);
    CHECK_EQ_INT(g_t.n_gpus, 1);
    CHECK_EQ_INT(g_t.gpus[0].sm, 70); /* from the PCI id */
    CHECK_EQ_INT(g_t.gpus[0].nvlinks, 3);
    CHECK(!g_t.gpus[0].gdr);
    CHECK_EQ_INT(g_t.gpus[0].numa, 1);
    CHECK_EQ_INT(g_t.n_nics, 2);
    CHECK_EQ_INT(g_t.nics[1].port, 2);
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PHB);
    CHECK_EQ_INT(g_t.cpu_vendor, RAIL_CPU_POWER);
    CHECK_EQ_INT(g_t.n_numa, 1);
    CHECK_NEAR(g_t.inter_cpu_bw, 0.0, 1e-6); /* one CPU: no inter-CPU link */
}

int main(void)
{
    if (!mkdtemp(g_tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_counts();
    test_p4d();
    test_ndv4();
    test_ndv5();
    test_simai();
    test_ndv2_ncv4();
    test_bcm_flattening();
    test_malformed();
    test_nccl_accepts_values();
    test_nccl_accepts_shapes();
    test_nccl_accepts_newer_dumps();
    test_tuner_data_topologies();
    test_limits_and_hostile();
    tmp_remove_tree(g_tmpdir);
    return check_report("test_topo_nccl_xml");
}
