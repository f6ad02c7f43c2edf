/* SPDX-License-Identifier: Apache-2.0 */
/* rail_topo_discover: NCCL_RAIL_TOPO_PROFILE > NCCL_TOPO_FILE > hwloc, fallbacks, and the log
 * lines that say which source was used and why the others were skipped. */
#include "check.h"
#include "log.h"
#include "topo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#define NCCL_DIR  RAIL_FIXTURES "/nccl-topo/"
#define HWLOC_DIR RAIL_FIXTURES "/hwloc-xml/"
#define SYNTH     RAIL_FIXTURES "/sysfs/synthetic-xe8640-like"

static char g_log[16384];
static struct rail_topo g_t;
static char g_err[512];

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    size_t l = strlen(g_log);
    va_list ap;
    (void)level;
    (void)flags;
    (void)file;
    (void)line;
    va_start(ap, fmt);
    vsnprintf(g_log + l, sizeof(g_log) - l, fmt, ap);
    va_end(ap);
    l = strlen(g_log);
    if (l + 1 < sizeof(g_log)) {
        g_log[l] = '\n';
        g_log[l + 1] = '\0';
    }
}

static void env(const char *profile, const char *topo_file, const char *hwloc_xml,
                const char *sysfs_root)
{
    static const char *names[] = {"NCCL_RAIL_TOPO_PROFILE", "NCCL_TOPO_FILE", "HWLOC_XMLFILE",
                                  "NCCL_RAIL_SYSFS_ROOT"};
    const char *values[] = {profile, topo_file, hwloc_xml, sysfs_root};
    for (int i = 0; i < 4; i++) {
        if (values[i])
            setenv(names[i], values[i], 1);
        else
            unsetenv(names[i]);
    }
    g_log[0] = '\0';
    g_err[0] = '\0';
}

static bool logged(const char *s)
{
    return strstr(g_log, s) != NULL;
}

static const char *or_unset(const char *s)
{
    return s ? s : "(unset)";
}

/* With these variables set (NULL = unset), discovery succeeds and uses source want. */
static void discover_from(int want, const char *profile, const char *topo_file,
                          const char *hwloc_xml, const char *sysfs_root)
{
    env(profile, topo_file, hwloc_xml, sysfs_root);
    int rc = rail_topo_discover(&g_t, g_err, sizeof(g_err));
    CHECK_MSG(rc == 0, "profile %s, topo file %s, hwloc %s: rc %d (%s)", or_unset(profile),
              or_unset(topo_file), or_unset(hwloc_xml), rc, g_err);
    CHECK_MSG(g_t.source == want, "profile %s, topo file %s, hwloc %s: source %d, expected %d",
              or_unset(profile), or_unset(topo_file), or_unset(hwloc_xml), g_t.source, want);
}

int main(void)
{
    char empty_root[] = "/tmp/rail_topo_disc_XXXXXX";
    if (!mkdtemp(empty_root))
        return 1;
    unsetenv("HWLOC_FSROOT");
    rail_log_set_logger(capture);

    /* The profile wins over NCCL_TOPO_FILE; both skips are logged. */
    discover_from(RAIL_TOPO_SRC_PROFILE, "dgx-h100",
                  NCCL_DIR "simai_hgx-a100-8gpu_4xcx6dx-roce-bond.xml", NULL, NULL);
    CHECK_EQ_STR(g_t.origin, "dgx-h100");
    CHECK(logged("NCCL_RAIL_TOPO_PROFILE=dgx-h100 overrides it"));
    CHECK(logged("hwloc discovery skipped"));
    CHECK(logged("topology from built-in profile 'dgx-h100': 8 GPUs (sm90), 8 NICs"));

    /* NCCL_TOPO_FILE over hwloc. */
    discover_from(RAIL_TOPO_SRC_NCCL_XML, NULL,
                  NCCL_DIR "simai_hgx-a100-8gpu_4xcx6dx-roce-bond.xml",
                  HWLOC_DIR "mpibind_cts1-pascal_2xP100_mlx5-same-switch.xml", empty_root);
    CHECK_EQ_INT(g_t.n_gpus, 8);
    CHECK(logged("hwloc discovery skipped: NCCL_TOPO_FILE="));
    CHECK(logged("GPU0 nearest NIC PXB"));

    /* An unknown profile is reported and ignored. */
    discover_from(RAIL_TOPO_SRC_NCCL_XML, "dgx-z9000", NCCL_DIR "azure_ndv5-topo.xml", NULL,
                  empty_root);
    CHECK(logged("dgx-z9000"));
    /* ... and NICs the file leaves without gdr attribute follow this node's peermem files:
     * none under an empty root, */
    CHECK(!g_t.nics[0].gdr);
    CHECK(!g_t.gdr);
    /* present in the synthetic tree. */
    discover_from(RAIL_TOPO_SRC_NCCL_XML, NULL, NCCL_DIR "azure_ndv5-topo.xml", NULL, SYNTH);
    CHECK(g_t.nics[0].gdr);
    CHECK(g_t.gdr);

    /* A broken NCCL_TOPO_FILE falls back to hwloc (HWLOC_XMLFILE), with a warning. */
    discover_from(RAIL_TOPO_SRC_HWLOC, NULL, NCCL_DIR "no-such-file.xml",
                  HWLOC_DIR "mpibind_cts1-pascal_2xP100_mlx5-same-switch.xml", NULL);
    CHECK(strstr(g_t.origin, "cts1-pascal") != NULL);
    CHECK_EQ_INT(g_t.path[0][0], RAIL_PATH_PIX);
    CHECK(logged("NCCL_TOPO_FILE not used"));
    CHECK(logged("no-such-file.xml"));

    /* A partial file without GPUs (AWS p5) defers to hwloc when hwloc finds GPUs, */
    discover_from(RAIL_TOPO_SRC_HWLOC, NULL, NCCL_DIR "aws_p5.48xlarge_8xH100_32xEFA.xml",
                  HWLOC_DIR "mpibind_aws-g4dn-metal_8xT4_efa.xml", NULL);
    CHECK_EQ_INT(g_t.n_gpus, 8);
    CHECK(logged("lists no GPU"));
    /* and is kept when hwloc finds none either. */
    discover_from(RAIL_TOPO_SRC_NCCL_XML, NULL, NCCL_DIR "aws_p5.48xlarge_8xH100_32xEFA.xml",
                  HWLOC_DIR "mpibind_epyc-corona-p2_8xMI50_mlx5.xml", NULL);
    CHECK(logged("keeping the partial NCCL_TOPO_FILE"));
    CHECK(!logged("HWLOC_XMLFILE not used"));
    /* An HWLOC_XMLFILE the user named that does not load is said so (a WARN), not skipped. */
    discover_from(RAIL_TOPO_SRC_NCCL_XML, NULL, NCCL_DIR "aws_p5.48xlarge_8xH100_32xEFA.xml",
                  NCCL_DIR "aws_p5.48xlarge_8xH100_32xEFA.xml", NULL);
    CHECK(logged("HWLOC_XMLFILE not used: hwloc XML "));
    CHECK(logged("expected <topology>; keeping the partial NCCL_TOPO_FILE"));

    /* Nothing set but HWLOC_XMLFILE: hwloc, and the log says why. */
    discover_from(RAIL_TOPO_SRC_HWLOC, NULL, NULL,
                  HWLOC_DIR "mpibind_ibm-ac922-lassen_4xV100_4xmlx5.xml", NULL);
    CHECK_EQ_INT(g_t.n_nics, 4);
    CHECK(logged("NCCL_RAIL_TOPO_PROFILE and NCCL_TOPO_FILE unset: using hwloc"));

    /* Every source failing is an error with the reason. */
    env(NULL, NULL, HWLOC_DIR "no-such.xml", NULL);
    CHECK_EQ_INT(rail_topo_discover(&g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "no-such.xml") != NULL);
    CHECK_EQ_INT(rail_topo_discover(NULL, g_err, sizeof(g_err)), -EINVAL);

    env(NULL, NULL, NULL, NULL);
    rail_log_set_logger(NULL);
    rmdir(empty_root);
    return check_report("test_topo_discover");
}
