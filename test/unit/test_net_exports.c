/* SPDX-License-Identifier: Apache-2.0 */
/* libnccl-net-rail.so loaded the way NCCL loads it (dlopen + dlsym of the versioned tables):
 * every table is complete, the entry points survive NULL and bogus arguments with an error (and
 * always write *request), and without RDMA hardware the plugin declines cleanly at init. The
 * data path itself needs verbs and is covered by test/integration in the fabric VM. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "nccl/nccl_net.h"

static int g_warns, g_infos;
static char g_last_info[1024], g_last_warn[1024];

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    (void)flags;
    (void)file;
    (void)line;
    if (level == NCCL_LOG_WARN) {
        va_list ap;
        g_warns++;
        va_start(ap, fmt);
        vsnprintf(g_last_warn, sizeof(g_last_warn), fmt, ap);
        va_end(ap);
    }
    if (level == NCCL_LOG_INFO) {
        va_list ap;
        g_infos++;
        va_start(ap, fmt);
        vsnprintf(g_last_info, sizeof(g_last_info), fmt, ap);
        va_end(ap);
    }
}

#define CHECK_FN(t, f) CHECK_MSG((t)->f != NULL, "%s missing", #f)

static void check_tables(void *dl)
{
    const ncclNet_v6_t *v6 = dlsym(dl, "ncclNetPlugin_v6");
    const ncclNet_v7_t *v7 = dlsym(dl, "ncclNetPlugin_v7");
    const ncclNet_v8_t *v8 = dlsym(dl, "ncclNetPlugin_v8");
    const ncclNet_v9_t *v9 = dlsym(dl, "ncclNetPlugin_v9");
    const ncclNet_v10_t *v10 = dlsym(dl, "ncclNetPlugin_v10");
    const ncclNet_v11_t *v11 = dlsym(dl, "ncclNetPlugin_v11");
    const ncclNet_v12_t *v12 = dlsym(dl, "ncclNetPlugin_v12");

    CHECK(v6 && v7 && v8 && v9 && v10 && v11 && v12);
    if (!(v6 && v7 && v8 && v9 && v10 && v11 && v12))
        return;
#define CHECK_CORE(t)                                                                              \
    do {                                                                                           \
        CHECK(t->name &&strcmp(t->name, v11->name) == 0);                                          \
        CHECK_FN(t, init);                                                                         \
        CHECK_FN(t, devices);                                                                      \
        CHECK_FN(t, getProperties);                                                                \
        CHECK_FN(t, listen);                                                                       \
        CHECK_FN(t, connect);                                                                      \
        CHECK_FN(t, accept);                                                                       \
        CHECK_FN(t, regMr);                                                                        \
        CHECK_FN(t, regMrDmaBuf);                                                                  \
        CHECK_FN(t, deregMr);                                                                      \
        CHECK_FN(t, isend);                                                                        \
        CHECK_FN(t, irecv);                                                                        \
        CHECK_FN(t, iflush);                                                                       \
        CHECK_FN(t, test);                                                                         \
        CHECK_FN(t, closeSend);                                                                    \
        CHECK_FN(t, closeRecv);                                                                    \
        CHECK_FN(t, closeListen);                                                                  \
    } while (0)
    CHECK_CORE(v6);
    CHECK_CORE(v7);
    CHECK_CORE(v8);
    CHECK_CORE(v9);
    CHECK_CORE(v10);
    CHECK_CORE(v11);
    CHECK_CORE(v12);
    CHECK_FN(v11, finalize);
    CHECK_FN(v12, finalize);
    CHECK(v11->name[0] != '\0');
    /* The tuner tables travel in the same library (NCCL falls back to it for the tuner). */
    CHECK(dlsym(dl, "ncclTunerPlugin_v5") != NULL);
    /* Internal symbols stay hidden. */
    CHECK(dlsym(dl, "rail_net_isend") == NULL);
    CHECK(dlsym(dl, "rail_result") == NULL);
}

/* Bogus arguments: an error, never a crash, and *request always written. */
static void check_bad_args(const ncclNet_v11_t *n)
{
    void *req = (void *)0x1, *comm = (void *)0x1;
    int done = 7, bogus[64] = {0};
    size_t size = 8;
    int tag = 0;
    void *data = bogus, *mh = NULL;
    char handle[NCCL_NET_HANDLE_MAXSIZE];

    CHECK(n->irecv(NULL, 1, &data, &size, &tag, &mh, NULL, &req) != ncclSuccess);
    CHECK(req == NULL);
    req = (void *)0x1;
    CHECK(n->irecv(bogus, 1, &data, &size, &tag, &mh, NULL, &req) != ncclSuccess);
    CHECK(req == NULL);
    req = (void *)0x1;
    CHECK(n->isend(bogus, data, size, tag, mh, NULL, &req) != ncclSuccess);
    CHECK(req == NULL);
    req = (void *)0x1;
    CHECK(n->iflush(bogus, 1, &data, bogus, &mh, &req) != ncclSuccess);
    CHECK(req == NULL);
    CHECK(n->test(NULL, &done, NULL) != ncclSuccess);
    CHECK_EQ_INT(done, 0);
    CHECK(n->test(bogus, &done, NULL) != ncclSuccess);
    CHECK(n->closeSend(NULL) == ncclSuccess);
    CHECK(n->closeRecv(NULL) == ncclSuccess);
    CHECK(n->closeListen(NULL) == ncclSuccess);
    CHECK(n->closeSend(bogus) != ncclSuccess);
    CHECK(n->deregMr(NULL, NULL) == ncclSuccess);
    CHECK(n->deregMr(NULL, bogus) != ncclSuccess);
    CHECK(n->regMr(bogus, bogus, 64, NCCL_PTR_HOST, &mh) != ncclSuccess);
    CHECK(mh == NULL);
    comm = (void *)0x1;
    CHECK(n->accept(bogus, &comm, NULL) != ncclSuccess);
    CHECK(comm == NULL);
    memset(handle, 0, sizeof(handle));
    comm = (void *)0x1;
    CHECK(n->connect(NULL, 12345, handle, &comm, NULL) != ncclSuccess);
    CHECK(comm == NULL);
    CHECK(n->listen(NULL, 12345, handle, &comm) != ncclSuccess);
    ncclNetProperties_v11_t props;
    CHECK(n->getProperties(-1, &props) != ncclSuccess);
    CHECK(n->finalize(NULL) == ncclSuccess);
}

/* A malformed NCCL_IB_HCA is the user's mistake: init declines with a WARN naming the variable
 * and the value (not the INFO of "no RDMA here"). In a child: discovery runs once per process. */
static void test_bad_ib_hca(const char *path)
{
    pid_t pid = fork();
    int status = 0;
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("NCCL_IB_HCA", "mlx5_0,,mlx5_1", 1);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const ncclNet_v11_t *n = dl ? dlsym(dl, "ncclNetPlugin_v11") : NULL;
        ncclNetCommConfig_v11_t cfg = {-1};
        void *ctx = NULL;
        if (!n)
            _exit(2);
        g_warns = g_infos = 0;
        if (n->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess)
            _exit(3);
        if (g_warns != 1 || !strstr(g_last_warn, "NCCL_IB_HCA='mlx5_0,,mlx5_1' is invalid")) {
            fprintf(stderr, "warns %d, last '%s'\n", g_warns, g_last_warn);
            _exit(4);
        }
        _exit(0);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* NCCL's IB variables set but not honoured, and a misspelt one: exactly one WARN each at init,
 * naming the variable (and the closest known name), even when init runs more than once; a value
 * the plugin behaves as is one INFO, NCCL's own variables nothing. In a child: once per process. */
static int count_in(char lines[][512], int n, const char *needle)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += strstr(lines[i], needle) != NULL;
    return c;
}

static char g_warn_lines[32][512];
static int g_nwarn_lines;

static void warn_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                        const char *fmt, ...)
{
    (void)flags, (void)file, (void)line;
    if (level == NCCL_LOG_WARN && g_nwarn_lines < 32) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_warn_lines[g_nwarn_lines++], 512, fmt, ap);
        va_end(ap);
    }
}

static void test_env_warnings(const char *path)
{
    pid_t pid = fork();
    int status = 0;
    CHECK(pid >= 0);
    if (pid == 0) {
        setenv("NCCL_IB_SUBNET_AWARE_ROUTING", "1", 1);
        setenv("NCCL_IB_ADAPTIVE_ROUTING", "1", 1); /* honoured: no WARN */
        setenv("NCCL_IB_GID_INDX", "3", 1);
        setenv("NCCL_IB_OOO_RQ", "1", 1);
        setenv("NCCL_NET_MERGE_LEVEL", "LOC", 1);
        setenv("NCCL_IB_ECE_ENABLE", "0", 1);      /* honoured: no WARN */
        setenv("NCCL_NET_SHARED_BUFFERS", "0", 1); /* NCCL's own: no WARN */
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const ncclNet_v11_t *n = dl ? dlsym(dl, "ncclNetPlugin_v11") : NULL;
        ncclNetCommConfig_v11_t cfg = {-1};
        void *ctx = NULL;
        if (!n)
            _exit(2);
        (void)n->init(&ctx, 1, &cfg, warn_logger, NULL);
        (void)n->init(&ctx, 2, &cfg, warn_logger, NULL);
        const char *once[] = {"NCCL_IB_SUBNET_AWARE_ROUTING=1 is set but not honoured",
                              "NCCL_IB_GID_INDX is not a variable",
                              "did you mean NCCL_IB_GID_INDEX?",
                              "NCCL_IB_OOO_RQ=1 is set but not honoured",
                              "NCCL_NET_MERGE_LEVEL=LOC is set but not honoured"};
        int bad = 0;
        for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
            if (count_in(g_warn_lines, g_nwarn_lines, once[i]) != 1) {
                fprintf(stderr, "'%s': %d WARN lines\n", once[i],
                        count_in(g_warn_lines, g_nwarn_lines, once[i]));
                bad = 1;
            }
        if (count_in(g_warn_lines, g_nwarn_lines, "NCCL_IB_ECE_ENABLE") != 0 ||
            count_in(g_warn_lines, g_nwarn_lines, "NCCL_IB_ADAPTIVE_ROUTING") != 0 ||
            count_in(g_warn_lines, g_nwarn_lines, "NCCL_NET_SHARED_BUFFERS") != 0)
            bad = 1;
        if (bad)
            for (int i = 0; i < g_nwarn_lines; i++)
                fprintf(stderr, "WARN: %s\n", g_warn_lines[i]);
        _exit(bad ? 4 : 0);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* net v12 railId/planeId through the ABI on the shm verbs provider (no RDMA needed): NCCL_IB_HCA's
 * name:port:rail:plane reaches getProperties, and a multi-rail device (NCCL_RAIL_RAILS) reports
 * them as NCCL reports a fused vNIC. In a child per case: discovery runs once per process. */
static void check_ids(const char *path, const char *hca, const char *rails, int ndev_want,
                      const int *rail_want, const int *plane_want)
{
    pid_t pid = fork();
    int status = 0;
    CHECK(pid >= 0);
    if (pid == 0) {
        char fabric[64];
        snprintf(fabric, sizeof(fabric), "ids-%d", (int)getpid());
        setenv("NCCL_RAIL_VERBS_PROVIDER", "shm", 1);
        setenv("NCCL_RAIL_SHM_FABRIC", fabric, 1);
        setenv("NCCL_IB_HCA", hca, 1);
        if (rails)
            setenv("NCCL_RAIL_RAILS", rails, 1);
        else
            unsetenv("NCCL_RAIL_RAILS");
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const ncclNet_v12_t *n = dl ? dlsym(dl, "ncclNetPlugin_v12") : NULL;
        ncclNetCommConfig_v12_t cfg = {-1};
        void *ctx = NULL;
        int ndev = -1, rc = 0;
        if (!n || n->init(&ctx, 1, &cfg, logger, NULL) != ncclSuccess ||
            n->devices(&ndev) != ncclSuccess)
            rc = 2;
        if (rc == 0 && ndev != ndev_want) {
            fprintf(stderr, "%s: %d devices, want %d\n", hca, ndev, ndev_want);
            rc = 3;
        }
        for (int d = 0; rc == 0 && d < ndev; d++) {
            ncclNetProperties_v12_t p;
            if (n->getProperties(d, &p) != ncclSuccess || p.railId != rail_want[d] ||
                p.planeId != plane_want[d]) {
                fprintf(stderr, "%s: device %d (%s) railId %d planeId %d, want %d %d\n", hca, d,
                        p.name, p.railId, p.planeId, rail_want[d], plane_want[d]);
                rc = 4;
            }
        }
        char shm[128];
        snprintf(shm, sizeof(shm), "/dev/shm/nccl-rail-shm-%u-%s", (unsigned)getuid(), fabric);
        unlink(shm);
        _exit(rc);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "NCCL_IB_HCA=%s: child status %d", hca,
              status);
}

/* NCCL_IB_PKEY_VALUE on the shm provider (one PKey, 0xffff): found -> the port is used; not in
 * the table -> no port, init declines. */
static void check_pkey(const char *path, const char *value, int want_ok)
{
    pid_t pid = fork();
    int status = 0;
    CHECK(pid >= 0);
    if (pid == 0) {
        char fabric[64];
        snprintf(fabric, sizeof(fabric), "pkey-%d", (int)getpid());
        setenv("NCCL_RAIL_VERBS_PROVIDER", "shm", 1);
        setenv("NCCL_RAIL_SHM_FABRIC", fabric, 1);
        setenv("NCCL_IB_HCA", "shm0", 1);
        setenv("NCCL_IB_PKEY_VALUE", value, 1);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const ncclNet_v12_t *n = dl ? dlsym(dl, "ncclNetPlugin_v12") : NULL;
        ncclNetCommConfig_v12_t cfg = {-1};
        void *ctx = NULL;
        g_infos = 0;
        int ok = n && n->init(&ctx, 1, &cfg, logger, NULL) == ncclSuccess;
        int rc = ok == want_ok ? 0 : 3;
        if (!ok && !strstr(g_last_info, "NCCL_IB_PKEY_VALUE"))
            rc = 4;
        if (rc)
            fprintf(stderr, "NCCL_IB_PKEY_VALUE=%s: init %d, last INFO '%s'\n", value, ok,
                    g_last_info);
        char shm[128];
        snprintf(shm, sizeof(shm), "/dev/shm/nccl-rail-shm-%u-%s", (unsigned)getuid(), fabric);
        unlink(shm);
        _exit(rc);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "NCCL_IB_PKEY_VALUE=%s: status %d",
              value, status);
}

static void test_rail_plane_ids(const char *path)
{
    check_pkey(path, "0xffff", 1);
    check_pkey(path, "32767", 1); /* 0x7fff: the membership bit is ignored */
    check_pkey(path, "0x1234", 0);
    check_ids(path, "shm0:1:3:1", NULL, 1, (int[]){3}, (int[]){1});
    /* One device per port; an unnamed rail/plane stays -1; exclude gives none. */
    check_ids(path, "shm0:1:0:0,shm2:1:1:0", "shm0,shm2", 2, (int[]){0, 1}, (int[]){0, 0});
    check_ids(path, "shm0:1:0:0,shm2", "shm0,shm2", 2, (int[]){0, -1}, (int[]){0, -1});
    check_ids(path, "^shm1,shm3", "shm0,shm2", 2, (int[]){-1, -1}, (int[]){-1, -1});
    /* Prefix match: shm catches every port; the first entry gives the ids. */
    check_ids(path, "shm:1:5:2,shm2:1:6:3", "shm0,shm2", 2, (int[]){5, 5}, (int[]){2, 2});
    check_ids(path, "=shm:1:5:2,shm2:1:6:3", NULL, 1, (int[]){6}, (int[]){3});
    /* Two rails in one device: the shared rail, else unknown; the virtual-plane bit (1 << 14)
     * and one bit per member plane (unknown = bit 0, then the planes in port order). */
    check_ids(path, "shm0:1:2:0,shm2:1:2:1", "shm0+shm2", 1, (int[]){2}, (int[]){16384 | 2 | 4});
    check_ids(path, "shm0:1:0:0,shm2:1:1:0", "shm0+shm2", 1, (int[]){-1}, (int[]){16384 | 2});
}

int main(void)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/libnccl-net-rail.so", RAIL_BINARY_DIR);
    test_bad_ib_hca(path);
    test_env_warnings(path);
    test_rail_plane_ids(path);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(dl != NULL, "dlopen %s: %s", path, dlerror());
    if (!dl)
        return check_report("test_net_exports");
    check_tables(dl);
    const ncclNet_v11_t *n = dlsym(dl, "ncclNetPlugin_v11");
    if (n) {
        check_bad_args(n);
        if (access("/dev/infiniband", F_OK) != 0) {
            /* No RDMA here: init declines (NCCL moves on to the next plugin) with one INFO
             * line saying why and how to fix it, and finalize copes with the failed init. */
            ncclNetCommConfig_v11_t cfg = {-1};
            void *ctx = (void *)0x1;
            int ndev = -1;
            g_infos = g_warns = 0;
            CHECK(n->init(&ctx, 1, &cfg, logger, NULL) != ncclSuccess);
            CHECK(ctx == NULL);
            CHECK(n->finalize(ctx) == ncclSuccess);
            CHECK_EQ_INT(g_infos, 2); /* the version banner (test_version_banner), the verdict */
            CHECK_EQ_INT(g_warns, 0);
            CHECK(strstr(g_last_info, "/dev/infiniband") != NULL);
            CHECK(strstr(g_last_info, "fix") != NULL);
            /* Later calls repeat the verdict without logging it again. */
            CHECK(n->init(&ctx, 2, &cfg, logger, NULL) != ncclSuccess);
            CHECK(n->devices(&ndev) != ncclSuccess);
            CHECK_EQ_INT(ndev, 0);
            CHECK_EQ_INT(g_infos, 3); /* the banner again, not the verdict */
            const ncclNet_v8_t *v8 = dlsym(dl, "ncclNetPlugin_v8");
            CHECK(v8 && v8->init(logger) != ncclSuccess);
        } else {
            printf("test_net_exports: /dev/infiniband present, decline checks skipped\n");
        }
    }
    return check_report("test_net_exports");
}
