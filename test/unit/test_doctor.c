/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor on the fixture trees: the findings (id + severity) each failure mode must give,
 * and a healthy node that gives no warning or error. */
#include <string.h>

#include "check.h"
#include "doctor.h"

#define SYSFS RAIL_FIXTURES "/sysfs/"

static char *g_no_env[] = {NULL};

struct run {
    struct doctor_ctx c;
    struct doctor_report r;
    int rc;
};

static void run(struct run *x, const char *root, const char *xml, char **env)
{
    memset(x, 0, sizeof(*x));
    x->c.root = root;
    x->c.hwloc_xml = xml;
    x->c.env.vars = env ? env : g_no_env;
    doctor_report_init(&x->r);
    x->rc = doctor_run(&x->c, &x->r);
}

static void done(struct run *x)
{
    doctor_report_free(&x->r);
    doctor_ctx_release(&x->c);
}

/* The finding exists and its message (or fix) contains needle. */
static bool has(const struct run *x, const char *id, const char *subject, bool fix,
                const char *needle)
{
    const struct doctor_finding *f = doctor_find(&x->r, id, subject);
    return f && strstr(fix ? f->fix : f->message, needle) != NULL;
}

/* The finding (id, subject) exists with this severity. */
#define EXPECT(x, id_, subj_, want_)                                                               \
    do {                                                                                           \
        const char *s_ = (subj_);                                                                  \
        const struct doctor_finding *f_ = doctor_find(&(x)->r, id_, s_);                           \
        CHECK_MSG(f_ != NULL, "no finding %s/%s", id_, s_ ? s_ : "*");                             \
        if (f_)                                                                                    \
            CHECK_MSG(f_->sev == (want_), "%s/%s is %s: %s", id_, f_->subject,                     \
                      doctor_sev_name(f_->sev), f_->message);                                      \
    } while (0)

static void test_healthy(void)
{
    struct run x;
    run(&x, SYSFS "synthetic-xe8640-like", NULL, NULL);
    CHECK_EQ_INT(x.rc, 0);
    CHECK_EQ_INT(doctor_count(&x.r, DOCTOR_ERROR), 0);
    CHECK_EQ_INT(doctor_count(&x.r, DOCTOR_WARN), 0);
    CHECK(x.c.topo != NULL);
    if (x.c.topo) { /* the sysfs walk classifies as the hwloc loader does (test_topo_sysfs) */
        CHECK_EQ_INT(x.c.topo->n_gpus, 2);
        CHECK_EQ_INT(x.c.topo->n_nics, 3);
        CHECK_EQ_INT(x.c.topo->path[0][0], RAIL_PATH_PIX);
        CHECK_EQ_INT(x.c.topo->path[0][2], RAIL_PATH_SYS);
        CHECK_EQ_INT(x.c.topo->path[1][2], RAIL_PATH_PIX);
        CHECK_EQ_INT(x.c.topo->gpus[1].numa, 1);
    }
    EXPECT(&x, "rdma.devices", NULL, DOCTOR_OK);
    EXPECT(&x, "rdma.port", "mlx5_0:1", DOCTOR_OK);
    EXPECT(&x, "rdma.port", "mlx5_1:1", DOCTOR_OK);
    EXPECT(&x, "roce.gid", "mlx5_1:1", DOCTOR_OK);
    CHECK(has(&x, "roce.gid", "mlx5_1:1", false, "GID index 3"));
    EXPECT(&x, "topo.gpu_nic", "GPU0 0000:4e:00.0", DOCTOR_OK);
    EXPECT(&x, "topo.gpu_nic", "GPU1 0000:5f:00.0", DOCTOR_OK);
    EXPECT(&x, "pcie.link", "GPU1 0000:5f:00.0", DOCTOR_INFO); /* idle Gen1 */
    EXPECT(&x, "pcie.link", "mlx5_2 0000:5e:00.0", DOCTOR_OK);
    EXPECT(&x, "pcie.acs", "bridges", DOCTOR_INFO); /* 64-byte config: unreadable */
    EXPECT(&x, "gpu.bar1", "GPU0 0000:4e:00.0", DOCTOR_OK);
    EXPECT(&x, "gdr.peermem", NULL, DOCTOR_OK);
    EXPECT(&x, "gdr.dmabuf", NULL, DOCTOR_INFO);
    CHECK(has(&x, "gdr.dmabuf", NULL, false, "unknown without the CUDA driver"));
    EXPECT(&x, "sys.memlock", NULL, DOCTOR_INFO);        /* no proc/self in the tree */
    EXPECT(&x, "sys.dev_infiniband", NULL, DOCTOR_INFO); /* no dev/ in the tree */
    EXPECT(&x, "recommend.debug", NULL, DOCTOR_INFO);
    done(&x);
}

static void test_no_rdma(void)
{
    struct run x;
    run(&x, SYSFS "doctor-no-rdma", NULL, NULL);
    CHECK_EQ_INT(x.rc, 1);
    EXPECT(&x, "rdma.devices", NULL, DOCTOR_ERROR);
    EXPECT(&x, "sys.dev_infiniband", NULL, DOCTOR_INFO);
    EXPECT(&x, "sys.memlock", NULL, DOCTOR_OK);
    CHECK(doctor_find(&x.r, "rdma.port", NULL) == NULL);
    CHECK(doctor_find(&x.r, "roce.gid", NULL) == NULL);
    done(&x);
}

static void test_port_down(void)
{
    struct run x;
    run(&x, SYSFS "doctor-port-down", NULL, NULL);
    CHECK_EQ_INT(x.rc, 1);
    EXPECT(&x, "rdma.port", "mlx5_0:1", DOCTOR_WARN);
    EXPECT(&x, "rdma.port", "mlx5_1:1", DOCTOR_WARN);
    CHECK(has(&x, "rdma.port", "mlx5_1:1", true, "subnet manager"));
    EXPECT(&x, "rdma.devices", NULL, DOCTOR_ERROR);
    CHECK(doctor_find(&x.r, "topo.gpu_nic", NULL) == NULL); /* no active NIC to place */
    done(&x);
}

static void test_container(void)
{
    struct run x;
    run(&x, SYSFS "doctor-container", NULL, NULL);
    CHECK_EQ_INT(x.rc, 1);
    EXPECT(&x, "rdma.devices", NULL, DOCTOR_OK);
    EXPECT(&x, "sys.dev_infiniband", NULL, DOCTOR_ERROR);
    EXPECT(&x, "sys.memlock", NULL, DOCTOR_ERROR);
    EXPECT(&x, "recommend.memlock", NULL, DOCTOR_INFO);
    done(&x);
    /* The plugin's threshold: 0 turns its check off, so only a warning remains. */
    char *env[] = {"NCCL_RAIL_MEMLOCK_MIN_MB=0", NULL};
    run(&x, SYSFS "doctor-container", NULL, env);
    EXPECT(&x, "sys.memlock", NULL, DOCTOR_WARN);
    done(&x);
}

static void test_degraded(void)
{
    struct run x;
    run(&x, SYSFS "doctor-degraded", NULL, NULL);
    CHECK_EQ_INT(x.rc, 0);
    EXPECT(&x, "rdma.speed", "mlx5_0:1", DOCTOR_WARN);
    EXPECT(&x, "pcie.link", "mlx5_0 0000:1c:00.0", DOCTOR_WARN);
    EXPECT(&x, "pcie.link", "GPU0 0000:1b:00.0", DOCTOR_WARN);
    CHECK(has(&x, "pcie.link", "mlx5_0 0000:1c:00.0", false, "Gen3 x8, capable of Gen5 x16"));
    EXPECT(&x, "rdma.port", "mlx5_0:1", DOCTOR_OK);
    done(&x);
}

static void test_far_gpu(void)
{
    struct run x;
    run(&x, SYSFS "doctor-far-gpu", NULL, NULL);
    CHECK_EQ_INT(x.rc, 0);
    EXPECT(&x, "topo.gpu_nic", "GPU0 0000:1b:00.0", DOCTOR_OK);
    EXPECT(&x, "topo.gpu_nic", "GPU1 0000:98:00.0", DOCTOR_WARN);
    CHECK(has(&x, "topo.gpu_nic", "GPU1 0000:98:00.0", false, "cross-NUMA"));
    EXPECT(&x, "gpu.bar1", "GPU1 0000:98:00.0", DOCTOR_WARN);
    EXPECT(&x, "gpu.bar1", "GPU0 0000:1b:00.0", DOCTOR_OK);
    EXPECT(&x, "gdr.peermem", NULL, DOCTOR_WARN);
    done(&x);
}

static void test_acs(void)
{
    struct run x;
    run(&x, SYSFS "doctor-acs", NULL, NULL);
    EXPECT(&x, "pcie.acs", "0000:1a:01.0", DOCTOR_WARN);
    EXPECT(&x, "pcie.acs", "0000:1a:02.0", DOCTOR_WARN);
    CHECK(doctor_find(&x.r, "pcie.acs", "bridges") == NULL);
    CHECK(has(&x, "pcie.acs", "0000:1a:01.0", true, "setpci -s 0000:1a:01.0"));
    done(&x);
}

static void test_roce(void)
{
    struct run x;
    run(&x, SYSFS "doctor-roce", NULL, NULL);
    CHECK_EQ_INT(x.rc, 1);
    EXPECT(&x, "roce.gid", "mlx5_0:1", DOCTOR_ERROR);
    EXPECT(&x, "roce.gid", "mlx5_1:1", DOCTOR_WARN);
    EXPECT(&x, "roce.gid", "mlx5_2:1", DOCTOR_OK);
    CHECK(has(&x, "roce.gid", "mlx5_2:1", false, "GID index 3"));
    CHECK(has(&x, "roce.gid", "mlx5_1:1", false, "GID index 2"));
    done(&x);
    /* Knobs change the pick exactly as the plugin's precedence says. */
    char *env[] = {"NCCL_IB_GID_INDEX=1", "NCCL_RAIL_GID_INDEX=mlx5_2:2", NULL};
    run(&x, SYSFS "doctor-roce", NULL, env);
    EXPECT(&x, "roce.gid", "mlx5_0:1", DOCTOR_WARN); /* index 1: link-local, used as told */
    EXPECT(&x, "roce.gid", "mlx5_2:1", DOCTOR_WARN); /* index 2: RoCE v1 IPv4 */
    CHECK(has(&x, "roce.gid", "mlx5_2:1", false, "NCCL_RAIL_GID_INDEX"));
    CHECK(has(&x, "roce.gid", "mlx5_2:1", true, "mlx5_2:3"));
    done(&x);
    char *env2[] = {"NCCL_IB_GID_INDEX=7", NULL};
    run(&x, SYSFS "doctor-roce", NULL, env2);
    EXPECT(&x, "roce.gid", "mlx5_2:1", DOCTOR_ERROR); /* outside the 4-entry table */
    done(&x);
    char *env3[] = {"NCCL_IB_ADDR_RANGE=10.0.0.0/8", NULL};
    run(&x, SYSFS "doctor-roce", NULL, env3);
    EXPECT(&x, "roce.gid", "mlx5_2:1", DOCTOR_ERROR); /* 192.168.10.2 outside the range */
    done(&x);
}

/* hwloc XML of another machine with a fixture root: topology from the XML, sysfs from the root. */
static void test_hwloc_xml(void)
{
    struct run x;
    run(&x, SYSFS "doctor-no-rdma",
        RAIL_FIXTURES "/hwloc-xml/mpibind_ibm-ac922-lassen_4xV100_4xmlx5.xml", NULL);
    CHECK(x.c.topo != NULL);
    if (x.c.topo)
        CHECK_EQ_INT(x.c.topo->n_gpus, 4);
    EXPECT(&x, "topo.source", NULL, DOCTOR_INFO);
    done(&x);
    run(&x, SYSFS "doctor-no-rdma", RAIL_FIXTURES "/does-not-exist.xml", NULL);
    CHECK(x.c.topo == NULL);
    EXPECT(&x, "topo.source", NULL, DOCTOR_WARN);
    done(&x);
}

static int probe_supported(void *ctx, bool peermem, struct doctor_gdr_state *out)
{
    (void)peermem;
    ++*(int *)ctx;
    out->dmabuf = DOCTOR_DMABUF_SUPPORTED;
    snprintf(out->plugin_mode, sizeof(out->plugin_mode), "dma-buf");
    return 0;
}

/* The GDR seam: a wired probe replaces "unknown". */
static void test_gdr_seam(void)
{
    struct run x;
    int calls = 0;
    memset(&x, 0, sizeof(x));
    x.c.root = SYSFS "doctor-far-gpu";
    x.c.env.vars = g_no_env;
    x.c.gdr_probe = probe_supported;
    x.c.gdr_probe_ctx = &calls;
    doctor_report_init(&x.r);
    doctor_run(&x.c, &x.r);
    CHECK_EQ_INT(calls, 1);
    EXPECT(&x, "gdr.dmabuf", NULL, DOCTOR_OK);
    CHECK(has(&x, "gdr.plugin", NULL, false, "dma-buf"));
    done(&x);
}

/* The libibverbs seam stands in for the dlopen of NCCL_IBVERBS_LIB: it records the value asked
 * and answers as *ctx says (rc 0: loaded; otherwise the plugin's refusal). */
struct verbs_lib_stub {
    int rc;
    const char *missing;
    char asked[128];
    int calls;
};

static void verbs_lib_stub(void *ctx, const char *value, struct doctor_verbs_lib *out)
{
    struct verbs_lib_stub *st = ctx;
    st->calls++;
    snprintf(st->asked, sizeof(st->asked), "%s", value ? value : "(unset)");
    out->rc = st->rc;
    snprintf(out->path, sizeof(out->path), "%s", value ? value : "/lib/libibverbs.so.1");
    snprintf(out->missing, sizeof(out->missing), "%s", st->missing ? st->missing : "");
    if (st->rc < 0)
        snprintf(out->why, sizeof(out->why), "NCCL_IBVERBS_LIB=%s: cannot load: no such file",
                 value ? value : "");
}

static void run_verbs_lib(struct run *x, const char *root, char **env, struct verbs_lib_stub *st)
{
    memset(x, 0, sizeof(*x));
    x->c.root = root;
    x->c.env.vars = env;
    x->c.verbs_lib = verbs_lib_stub;
    x->c.verbs_lib_ctx = st;
    doctor_report_init(&x->r);
    x->rc = doctor_run(&x->c, &x->r);
}

/* sys.libibverbs: the library the net plugin would load and NCCL_IBVERBS_LIB's value; an error
 * when it cannot be loaded where the plugin is meant to run; not probed on a snapshot. */
static void test_verbs_lib(void)
{
    struct run x;
    run(&x, SYSFS "doctor-no-rdma", NULL, NULL); /* no seam: a snapshot */
    EXPECT(&x, "sys.libibverbs", "libibverbs", DOCTOR_INFO);
    CHECK(has(&x, "sys.libibverbs", NULL, false, "not probed"));
    done(&x);

    struct verbs_lib_stub ok = {0}, old = {.missing = "ibv_reg_dmabuf_mr (IBVERBS_1.12)"};
    run_verbs_lib(&x, SYSFS "doctor-container", g_no_env, &ok);
    CHECK_EQ_INT(ok.calls, 1);
    CHECK(strcmp(ok.asked, "(unset)") == 0);
    EXPECT(&x, "sys.libibverbs", NULL, DOCTOR_OK);
    CHECK(has(&x, "sys.libibverbs", NULL, false, "/lib/libibverbs.so.1"));
    CHECK(has(&x, "sys.libibverbs", NULL, false, "NCCL_IBVERBS_LIB unset"));
    done(&x);
    char *env[] = {"NCCL_IBVERBS_LIB=/opt/rdma/lib/libibverbs.so.1", NULL};
    run_verbs_lib(&x, SYSFS "doctor-container", env, &old);
    CHECK(strcmp(old.asked, "/opt/rdma/lib/libibverbs.so.1") == 0);
    EXPECT(&x, "sys.libibverbs", NULL, DOCTOR_INFO);
    CHECK(has(&x, "sys.libibverbs", NULL, false, "NCCL_IBVERBS_LIB=/opt/rdma/lib/libibverbs.so.1"));
    CHECK(has(&x, "sys.libibverbs", NULL, false, "lacks ibv_reg_dmabuf_mr"));
    done(&x);

    /* Cannot be loaded: an error on a node with RDMA devices, information without any. */
    struct verbs_lib_stub bad = {.rc = -2};
    run_verbs_lib(&x, SYSFS "doctor-container", env, &bad);
    EXPECT(&x, "sys.libibverbs", NULL, DOCTOR_ERROR);
    CHECK(has(&x, "sys.libibverbs", NULL, false, "cannot load"));
    CHECK(has(&x, "sys.libibverbs", NULL, true, "NCCL_IBVERBS_LIB"));
    done(&x);
    run_verbs_lib(&x, SYSFS "doctor-no-rdma", g_no_env, &bad);
    EXPECT(&x, "sys.libibverbs", NULL, DOCTOR_INFO);
    done(&x);
}

int main(void)
{
    test_healthy();
    test_no_rdma();
    test_port_down();
    test_container();
    test_degraded();
    test_far_gpu();
    test_acs();
    test_roce();
    test_hwloc_xml();
    test_gdr_seam();
    test_verbs_lib();
    return check_report("test_doctor");
}
