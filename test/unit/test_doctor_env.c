/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor: environment findings through the injectable environment, and the pure
 * helpers (ACS capability walk, BAR1 size, IB rate lanes, NCCL_ALGO/NCCL_PROTO syntax). */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "doctor.h"

#define HEALTHY RAIL_FIXTURES "/sysfs/synthetic-xe8640-like"

/* Findings of the env checks only (topology loaded first, as doctor_run does). */
static void env_run(struct doctor_report *r, struct doctor_ctx *c, const char *root, char **env)
{
    memset(c, 0, sizeof(*c));
    c->root = root;
    c->env.vars = env;
    doctor_report_init(r);
    doctor_load_topo(c, r);
    doctor_check_env(c, r);
}

static int sev_of(char **env, const char *id, const char *subject)
{
    struct doctor_report r;
    struct doctor_ctx c;
    const struct doctor_finding *f;
    int sev;
    env_run(&r, &c, HEALTHY, env);
    f = doctor_find(&r, id, subject);
    sev = f ? (int)f->sev : -1;
    doctor_report_free(&r);
    doctor_ctx_release(&c);
    return sev;
}

static void test_env_get(void)
{
    char *vars[] = {"NCCL_ALGOX=1", "NCCL_ALGO=Ring", "EMPTY=", NULL};
    struct doctor_env e = {vars};
    CHECK_EQ_STR(doctor_env_get(&e, "NCCL_ALGO"), "Ring");
    CHECK(doctor_env_get(&e, "NCCL_ALG") == NULL);
    CHECK(doctor_env_get(&e, "EMPTY") == NULL);
    CHECK(doctor_env_get(&e, "MISSING") == NULL);
    bool bad;
    char *v2[] = {"NCCL_IB_TIMEOUT=99", "NCCL_RAIL_EAGER_MAX=4096", NULL};
    struct doctor_env e2 = {v2};
    CHECK_EQ_INT(doctor_env_int(&e2, RAIL_PARAM_IB_TIMEOUT, &bad), 20); /* default */
    CHECK(bad);
    CHECK_EQ_INT(doctor_env_int(&e2, RAIL_PARAM_EAGER_MAX, &bad), 4096);
    CHECK(!bad);
}

static void test_algo_proto(void)
{
    char *nvlink[] = {"NCCL_ALGO=NVLink", NULL};
    char *ok[] = {"NCCL_ALGO=^Tree,ring", NULL};
    char *percoll[] = {"NCCL_ALGO=AllReduce:NVLS,Ring;Broadcast:Ring", NULL};
    char *badcoll[] = {"NCCL_ALGO=AllToAll:Ring", NULL};
    char *proto_bad[] = {"NCCL_PROTO=LL256", NULL};
    char *proto_ok[] = {"NCCL_PROTO=^LL128", NULL};
    CHECK_EQ_INT(sev_of(nvlink, "env.algo", "NCCL_ALGO"), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(ok, "env.algo", "NCCL_ALGO"), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(percoll, "env.algo", "NCCL_ALGO"), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(badcoll, "env.algo", "NCCL_ALGO"), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(proto_bad, "env.proto", "NCCL_PROTO"), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(proto_ok, "env.proto", "NCCL_PROTO"), DOCTOR_INFO);

    char err[128];
    CHECK_EQ_INT(doctor_check_algo_list("Tree,Ring", false, err, sizeof(err)), 0);
    CHECK_EQ_INT(doctor_check_algo_list("nvlstree", false, err, sizeof(err)), 0);
    CHECK_EQ_INT(doctor_check_algo_list("NVLink", false, err, sizeof(err)), -EINVAL);
    CHECK(strstr(err, "NVLink") != NULL);
    CHECK_EQ_INT(doctor_check_algo_list("Ring;Tree", false, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(doctor_check_algo_list("Simple", false, err, sizeof(err)), -EINVAL);
    CHECK_EQ_INT(doctor_check_algo_list("Simple,LL", true, err, sizeof(err)), 0);
    CHECK_EQ_INT(doctor_check_algo_list("Ring", true, err, sizeof(err)), -EINVAL);
}

static void test_transport(void)
{
    char *ib[] = {"NCCL_IB_DISABLE=1", NULL};
    char *ib0[] = {"NCCL_IB_DISABLE=0", NULL};
    char *p2p[] = {"NCCL_P2P_DISABLE=1", NULL};
    char *sock[] = {"NCCL_NET=Socket", NULL};
    char *rail[] = {"NCCL_NET=rail", NULL};
    CHECK_EQ_INT(sev_of(ib, "env.ib_disable", NULL), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(ib0, "env.ib_disable", NULL), -1);
    CHECK_EQ_INT(sev_of(p2p, "env.p2p_disable", NULL), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(sock, "env.net", NULL), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(rail, "env.net", NULL), DOCTOR_OK);
}

static void test_gdr_level(void)
{
    char *loc[] = {"NCCL_NET_GDR_LEVEL=LOC", NULL};
    char *pix[] = {"NCCL_NET_GDR_LEVEL=PIX", NULL};
    char *sys[] = {"NCCL_NET_GDR_LEVEL=SYS", NULL};
    char *bad[] = {"NCCL_NET_GDR_LEVEL=FAST", NULL};
    CHECK_EQ_INT(sev_of(loc, "env.gdr_level", NULL), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(pix, "env.gdr_level", NULL), -1); /* both GPUs have a PIX NIC */
    CHECK_EQ_INT(sev_of(sys, "env.gdr_level", NULL), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(bad, "env.gdr_level", NULL), DOCTOR_WARN);
}

static void test_ib_hca(void)
{
    char *none[] = {"NCCL_IB_HCA=mlx4", NULL};
    char *bad[] = {"NCCL_IB_HCA=mlx5_0,,mlx5_1", NULL};
    char *one[] = {"NCCL_IB_HCA==mlx5_2:1", NULL};
    char *excl_all[] = {"NCCL_IB_HCA=^mlx5", NULL};
    CHECK_EQ_INT(sev_of(none, "env.ib_hca", NULL), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(bad, "env.ib_hca", NULL), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(one, "env.ib_hca", NULL), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(excl_all, "env.ib_hca", NULL), DOCTOR_ERROR);
}

static void test_knobs(void)
{
    char *bad_int[] = {"NCCL_RAIL_EAGER_MAX=lots", NULL};
    char *bad_enum[] = {"NCCL_RAIL_STRIPE_POLICY=random", NULL};
    char *bad_gid[] = {"NCCL_RAIL_GID_INDEX=mlx5_0", NULL};
    char *bad_range[] = {"NCCL_IB_ADDR_RANGE=10.0.0.0/99", NULL};
    char *typo[] = {"NCCL_RAIL_EAGR_MAX=1", NULL};
    char *good[] = {"NCCL_RAIL_EAGER_MAX=0", "NCCL_IB_TIMEOUT=22", NULL};
    char *rules_bad[] = {"NCCL_TUNER_CONFIG_FILE=" RAIL_FIXTURES "/rules/bad_unknown_algo.conf",
                         NULL};
    char *rules_ok[] = {"NCCL_TUNER_CONFIG_FILE=" RAIL_FIXTURES "/rules/good_all_forms.conf", NULL};
    char *topo_missing[] = {"NCCL_TOPO_FILE=/nonexistent/topo.xml", NULL};
    CHECK_EQ_INT(sev_of(bad_int, "env.knob", "NCCL_RAIL_EAGER_MAX"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(bad_enum, "env.knob", "NCCL_RAIL_STRIPE_POLICY"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(bad_gid, "env.knob", "NCCL_RAIL_GID_INDEX"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(bad_range, "env.knob", "NCCL_IB_ADDR_RANGE"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(typo, "env.unknown", "NCCL_RAIL_EAGR_MAX"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(good, "env.knob", "knobs"), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(rules_bad, "env.knob", "NCCL_TUNER_CONFIG_FILE"), DOCTOR_ERROR);
    CHECK_EQ_INT(sev_of(rules_ok, "env.knob", "knobs"), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(topo_missing, "env.knob", "NCCL_TOPO_FILE"), DOCTOR_WARN);
    /* Values the plugins would reject or fall back from, parsed with the plugins' own parsers. */
    char *rails_bad[] = {"NCCL_RAIL_RAILS=+++", NULL};
    char *rails_ok[] = {"NCCL_RAIL_RAILS=mlx5_0,mlx5_1", NULL};
    char *ifname_bad[] = {"NCCL_SOCKET_IFNAME=^^^", NULL};
    char *ifname_ok[] = {"NCCL_SOCKET_IFNAME=^=docker0,lo", NULL};
    char *stats_bad[] = {"NCCL_RAIL_STATS_FILE=/nonexistent-dir/stats.%p.json", NULL};
    char *stats_dir[] = {"NCCL_RAIL_STATS_FILE=/tmp", NULL};
    char *stats_ok[] = {"NCCL_RAIL_STATS_FILE=/tmp/rail-stats.%p.json", NULL};
    char *root_bad[] = {"NCCL_RAIL_SYSFS_ROOT=/nonexistent/snapshot", NULL};
    char *topo_fifo[] = {"NCCL_TOPO_FILE=/dev/null", NULL};
    CHECK_EQ_INT(sev_of(rails_bad, "env.knob", "NCCL_RAIL_RAILS"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(rails_ok, "env.knob", "knobs"), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(ifname_bad, "env.knob", "NCCL_SOCKET_IFNAME"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(ifname_ok, "env.knob", "knobs"), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(stats_bad, "env.knob", "NCCL_RAIL_STATS_FILE"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(stats_dir, "env.knob", "NCCL_RAIL_STATS_FILE"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(stats_ok, "env.knob", "knobs"), DOCTOR_OK);
    CHECK_EQ_INT(sev_of(root_bad, "env.knob", "NCCL_RAIL_SYSFS_ROOT"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(topo_fifo, "env.knob", "NCCL_TOPO_FILE"), DOCTOR_WARN);
    char *nothing[] = {"PATH=/usr/bin", NULL};
    CHECK_EQ_INT(sev_of(nothing, "env.knob", NULL), -1);
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, unsigned v)
{
    put16(p, v & 0xffff);
    put16(p + 2, v >> 16);
}

static void test_acs_parse(void)
{
    static unsigned char cfg[4096];
    memset(cfg, 0, sizeof(cfg));
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, 64), -ENODATA);
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, sizeof(cfg)), -ENOENT); /* empty list */
    put32(cfg + 0x100, 0x0001u | 1u << 16 | 0x180u << 20);    /* AER -> 0x180 */
    put32(cfg + 0x180, 0x000du | 1u << 16);                   /* ACS, last */
    put16(cfg + 0x186, 0x001d);
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, sizeof(cfg)), 0x001d);
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, 0x184), -EINVAL);    /* truncated mid-capability */
    put32(cfg + 0x180, 0x0002u | 1u << 16 | 0x100u << 20); /* loop back */
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, sizeof(cfg)), -EINVAL);
    put32(cfg + 0x180, 0x0002u | 1u << 16); /* no ACS */
    CHECK_EQ_INT(doctor_acs_ctrl(cfg, sizeof(cfg)), -ENOENT);
    CHECK_EQ_INT(doctor_acs_ctrl(NULL, 0), -ENODATA);
}

static void test_bar1_and_lanes(void)
{
    CHECK_EQ_INT(doctor_bar1_bytes("0x00000000a4000000 0x00000000a4ffffff 0x0000000000040200\n"
                                   "0x0000038000000000 0x0000039fffffffff 0x000000000014220c\n"),
                 128LL << 30);
    CHECK_EQ_INT(doctor_bar1_bytes("0x1 0x2 0x0\n0x0000000000000000 0x0000000000000000 0x0\n"), 0);
    CHECK_EQ_INT(doctor_bar1_bytes("0x1 0x2 0x0\nnot hex at all\n"), -EINVAL);
    CHECK_EQ_INT(doctor_bar1_bytes("0x1 0x2 0x0\n0x10 0x0f 0x0\n"), -EINVAL); /* end < start */
    CHECK_EQ_INT(doctor_bar1_bytes(""), -EINVAL);
    CHECK_EQ_INT(doctor_rate_lanes("200 Gb/sec (4X HDR)"), 4);
    CHECK_EQ_INT(doctor_rate_lanes("100 Gb/sec (1X NDR)"), 1);
    CHECK_EQ_INT(doctor_rate_lanes("25 Gb/sec"), 0);
    CHECK_EQ_INT(doctor_rate_lanes("(X HDR)"), 0);
    CHECK_EQ_INT(doctor_rate_lanes(NULL), 0);
}

/* doctor_add never overflows its fields and counts every severity. */
static void test_report(void)
{
    struct doctor_report r;
    char big[2000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    doctor_report_init(&r);
    for (int i = 0; i < 100; i++)
        doctor_add(&r, "a.b", (enum doctor_sev)(i % 4), big, big, "%s", big);
    CHECK_EQ_INT(r.n, 100);
    CHECK_EQ_INT(doctor_count(&r, DOCTOR_WARN), 25);
    CHECK_EQ_INT((int)strlen(r.f[0].message), DOCTOR_TEXT_LEN - 1);
    CHECK_EQ_INT(doctor_worst(&r, "a.b"), DOCTOR_ERROR);
    CHECK_EQ_INT(doctor_worst(&r, "none"), -1);
    doctor_report_free(&r);
}

/* NCCL's IB/NET variables: honoured ones INFO, set-but-not-honoured and misspelt ones WARN (the
 * same lines the net plugin logs at init). */
static void test_nccl_compat(void)
{
    char *honoured[] = {"NCCL_IB_ADAPTIVE_ROUTING=1", NULL};
    char *ignored[] = {"NCCL_IB_OOO_RQ=1", NULL};
    char *as_if[] = {"NCCL_IB_OOO_RQ=0", NULL};
    char *typo[] = {"NCCL_IB_GID_INDX=3", NULL};
    char *nccl[] = {"NCCL_NET_SHARED_BUFFERS=0", NULL};
    CHECK_EQ_INT(sev_of(honoured, "env.nccl_compat", "NCCL_IB_ADAPTIVE_ROUTING"), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(ignored, "env.nccl_compat", "NCCL_IB_OOO_RQ"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(as_if, "env.nccl_compat", "NCCL_IB_OOO_RQ"), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(typo, "env.nccl_compat", "NCCL_IB_GID_INDX"), DOCTOR_WARN);
    CHECK_EQ_INT(sev_of(nccl, "env.nccl_compat", "NCCL_NET_SHARED_BUFFERS"), DOCTOR_INFO);
    CHECK_EQ_INT(sev_of(honoured, "env.nccl_compat", "NCCL_IB_OOO_RQ"), -1);
}

int main(void)
{
    test_nccl_compat();
    test_env_get();
    test_algo_proto();
    test_transport();
    test_gdr_level();
    test_ib_hca();
    test_knobs();
    test_acs_parse();
    test_bar1_and_lanes();
    test_report();
    return check_report("test_doctor_env");
}
