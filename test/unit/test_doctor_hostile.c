/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-rail doctor on hostile snapshots (issue 22): what a snapshot's files say reaches the table
 * and the JSON as valid UTF-8 without control characters. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "doctor.h"
#include "doctor_deploy.h"
#include "tmpfiles.h"

#define SYSFS RAIL_FIXTURES "/sysfs/"

static char g_tmp[256];
static char *g_no_env[] = {NULL};

/* A copy of a fixture tree under g_tmp/name; returns its path. */
static const char *copy_fixture(const char *fixture, const char *name)
{
    static char dst[512];
    char cmd[1200];
    snprintf(dst, sizeof(dst), "%s/%s", g_tmp, name);
    snprintf(cmd, sizeof(cmd), "cp -a '%s%s' '%s'", SYSFS, fixture, dst);
    CHECK_MSG(system(cmd) == 0, "%s", cmd);
    return dst;
}

static void put_at(const char *root, const char *rel, const char *text)
{
    char p[500]; /* tmp_put takes paths up to 511 bytes */
    snprintf(p, sizeof(p), "%.300s%.190s", root, rel);
    unlink(p);
    tmp_put(p, text);
}

/* Valid UTF-8 with no control character but '\n' (the JSON's own line breaks). */
static bool clean_text(const char *s, const char **bad)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int n = *p < 0x80                  ? 0
                : *p >= 0xc2 && *p <= 0xdf ? 1
                : *p >= 0xe0 && *p <= 0xef ? 2
                : *p >= 0xf0 && *p <= 0xf4 ? 3
                                           : -1;
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || n < 0 || (*p == 0xc2 && p[1] < 0xa0)) {
            *bad = (const char *)p;
            return false;
        }
        for (int i = 1; i <= n; i++)
            if ((p[i] & 0xc0) != 0x80) {
                *bad = (const char *)p;
                return false;
            }
        p += n;
    }
    return true;
}

/* Terminal escapes (ESC, the 8-bit CSI as C1 U+009B) and bytes that are not UTF-8 in sysfs
 * values and in a configuration file: the findings, the table and the JSON quote them as '?'. */
static void test_output_is_clean_text(void)
{
    const char *root = copy_fixture("doctor-roce", "escapes");
    struct doctor_ctx c = {.root = root, .env = {.vars = g_no_env}, .home = "/home/u"};
    struct doctor_report r;
    const char *bad = NULL;
    char *json, *table = NULL;
    size_t tlen = 0;
    FILE *f;

    put_at(root, "/sys/class/infiniband/mlx5_0/ports/1/rate",
           "100 Gb/sec (4X EDR)\x1b]0;owned\x07\x1b[2J\xc2\x9b"
           "31m\xff\xfe\n");
    put_at(root, "/etc/nccl.conf", "NCCL_ALGO=Ring\x1b[31m\xc3\x28\nNCCL_RAIL_\x1b[2Jx=1\n");
    doctor_report_init(&r);
    doctor_run(&c, &r);
    const struct doctor_finding *x = doctor_find(&r, "rdma.port", "mlx5_0:1");
    CHECK_MSG(x && strstr(x->message, "(4X EDR)?]0;owned??[2J??31m??") != NULL, "%s",
              x ? x->message : "none");
    for (int i = 0; i < r.n; i++) {
        CHECK_MSG(clean_text(r.f[i].message, &bad), "%s: byte 0x%02x in '%s'", r.f[i].id,
                  (unsigned char)*bad, r.f[i].message);
        CHECK_MSG(clean_text(r.f[i].subject, &bad), "%s: subject", r.f[i].id);
        CHECK_MSG(clean_text(r.f[i].fix, &bad), "%s: fix", r.f[i].id);
    }
    json = doctor_json(&c, &r);
    CHECK(json && clean_text(json, &bad));
    CHECK(json && strstr(json, "\\u001b") == NULL);
    f = open_memstream(&table, &tlen);
    CHECK(f != NULL);
    if (f) {
        doctor_print_table(f, &c, &r);
        fclose(f);
        CHECK_MSG(clean_text(table, &bad), "table byte 0x%02x", (unsigned char)*bad);
    }
    free(table);
    free(json);
    doctor_report_free(&r);
    doctor_ctx_release(&c);
}

/* NCCL's configuration merged in linear time: a 1 MiB file of distinct names (and the same
 * names again) costs a few name comparisons per line. The old merge scanned the whole list for
 * every line: n^2/2 comparisons, 49 s for 1 MiB. */
static void test_conf_merge_linear(void)
{
    char root[400], path[500], *text = malloc(DOCTOR_CONF_MAX_BYTES + 1);
    size_t len = 0, lines = 0;
    struct doctor_report r;
    char *env[] = {"N000007=env", NULL};
    snprintf(root, sizeof(root), "%.300s/bigconf", g_tmp);
    CHECK(text != NULL);
    if (!text)
        return;
    for (int i = 0; len + 16 < DOCTOR_CONF_MAX_BYTES; i++, lines++)
        len += (size_t)snprintf(text + len, 32, "N%06d=%d\n", i % 60000, i);
    snprintf(path, sizeof(path), "%s/etc/nccl.conf", root);
    tmp_put(path, text);
    free(text);

    struct doctor_ctx c = {.root = root, .env = {.vars = env}, .home = "/home/u"};
    doctor_report_init(&r);
    doctor_read_conf(&c, &r);
    const struct doctor_finding *x = doctor_find(&r, "conf.file", "/etc/nccl.conf");
    char want[96];
    snprintf(want, sizeof(want), "%zu variables, 59999 in effect", lines);
    CHECK_MSG(x && strstr(x->message, want), "%s", x ? x->message : "no conf.file");
    CHECK_EQ_STR(doctor_env_get(&c.env, "N000007"), "env");   /* the environment wins */
    CHECK_EQ_STR(doctor_env_get(&c.env, "N059999"), "59999"); /* the first line wins */
    CHECK_MSG(c.conf_compares < 4 * lines, "%zu name comparisons for %zu lines", c.conf_compares,
              lines);
    doctor_conf_release(&c);
    doctor_report_free(&r);
}

/* inotify on every directory under dir: an open or a read of anything there is an event. */
static void watch_tree(int ifd, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    CHECK(inotify_add_watch(ifd, dir, IN_OPEN | IN_ACCESS) >= 0);
    while (d && (e = readdir(d)) != NULL) {
        char sub[1024];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            watch_tree(ifd, sub);
    }
    if (d)
        closedir(d);
}

static void link_at(const char *target, const char *root, const char *rel)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s%s", root, rel);
    if (unlink(p) != 0 && errno == EISDIR) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
        CHECK(system(cmd) == 0);
    }
    CHECK_MSG(symlink(target, p) == 0, "symlink %s", p);
}

/* Issue 22: --root is a boundary. Links of every kind that lead out of the snapshot (relative
 * with "..", absolute, directory links in the middle of a path, as the last component) and
 * paths in its configuration that climb out: nothing outside the root is opened or read. An
 * inotify watch on the outside tree sees every open. */
static void test_root_is_never_left(void)
{
    char base[512], out[600], abs_ib[700], abs_home[700];
    snprintf(base, sizeof(base), "%s/boundary", g_tmp);
    tmp_mkdirs(base);
    const char *root = copy_fixture("doctor-roce", "boundary/snap");
    snprintf(out, sizeof(out), "%s/outside", base);
    /* The outside world: files that would change the report if they were read. */
    static const char *const files[] = {"/ib/evil/ports/1/state",
                                        "/ib/evil/ports/1/rate",
                                        "/ib/evil/ports/1/link_layer",
                                        "/etc/nccl.conf",
                                        "/home/u/.nccl.conf",
                                        "/proc/self/limits",
                                        "/proc/self/status",
                                        "/topo.xml",
                                        "/rules.conf",
                                        "/pci/0000:99:00.0/class",
                                        "/pci/0000:99:00.0/vendor",
                                        "/pci/0000:99:00.0/config",
                                        "/sys/class/infiniband/x/ports/1/state",
                                        "/libnccl-net-x.so"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char f[500];
        snprintf(f, sizeof(f), "%.300s%.190s", out, files[i]);
        tmp_put(f, "NCCL_ALGO=Bogus\n4: ACTIVE\n");
    }
    snprintf(abs_ib, sizeof(abs_ib), "%s/ib/evil", out);
    snprintf(abs_home, sizeof(abs_home), "%s/home", out);
    link_at("../../../../outside/ib/evil", root, "/sys/class/infiniband/evil");
    link_at(abs_ib, root, "/sys/class/infiniband/evil2");
    link_at("../outside/etc", root, "/etc");
    link_at(abs_home, root, "/home");
    link_at("../../outside/proc/self", root, "/proc/self");
    link_at("../../../../../outside/pci/0000:99:00.0", root, "/sys/bus/pci/devices/0000:99:00.0");
    link_at("../outside/topo.xml", root, "/topo.xml");
    put_at(root, "/conf/job.conf",
           "NCCL_TOPO_FILE=/topo.xml\nHWLOC_XMLFILE=/../outside/topo.xml\n"
           "NCCL_TUNER_CONFIG_FILE=/../../outside/rules.conf\nNCCL_RAIL_SYSFS_ROOT=/..\n"
           "NCCL_RAIL_STATS_FILE=/../outside/stats.json\n"
           "NCCL_NET_PLUGIN=/../outside/libnccl-net-x.so,/optlink/libnccl-net-x.so,x\n"
           "LD_LIBRARY_PATH=/optlink:/../outside\n");
    link_at("../outside", root, "/optlink");

    int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(ifd >= 0);
    watch_tree(ifd, out);
    char ev[8192] __attribute__((aligned(8)));
    while (read(ifd, ev, sizeof(ev)) > 0) /* the walk of watch_tree itself */
        ;
    char *env[] = {"NCCL_CONF_FILE=/conf/job.conf", NULL};
    struct doctor_ctx c = {.root = root, .env = {.vars = env}};
    struct doctor_report r;
    doctor_report_init(&r);
    doctor_run(&c, &r);
    char *json = doctor_json(&c, &r);
    free(json);

    ssize_t n = read(ifd, ev, sizeof(ev));
    int events = 0;
    for (ssize_t o = 0; n > 0 && o < n;) {
        const struct inotify_event *e = (const void *)(ev + o);
        events++;
        fprintf(stderr, "outside the root: %s %s\n", e->mask & IN_OPEN ? "open" : "read",
                e->len ? e->name : "(a watched directory)");
        o += (ssize_t)sizeof(*e) + e->len;
    }
    CHECK_EQ_INT(events, 0);
    close(ifd);
    /* What the report says about them: the links are not followed, the paths not read. */
    const struct doctor_finding *x = doctor_find(&r, "conf.file", "NCCL_CONF_FILE=/conf/job.conf");
    CHECK(x && x->sev == DOCTOR_INFO);
    CHECK(doctor_find(&r, "env.algo", NULL) == NULL); /* NCCL_ALGO=Bogus never read */
    x = doctor_find(&r, "env.knob", "NCCL_TUNER_CONFIG_FILE");
    CHECK_MSG(x && strstr(x->message, "leaves the root"), "%s", x ? x->message : "none");
    x = doctor_find(&r, "env.knob", "NCCL_TOPO_FILE");
    CHECK_MSG(x && strstr(x->message, "leaves the root"), "%s", x ? x->message : "none");
    doctor_report_free(&r);
    doctor_ctx_release(&c);
}

/* Issue 22: a plugin library that a snapshot's nccl.conf names is read, never loaded. The
 * library's constructor leaves a mark when it runs; the report still gives its tables. */
static void test_plugin_never_loaded(void)
{
    char lib[600], dst[800], mark[600], cmd[2000];
    const char *root = copy_fixture("doctor-roce", "plugins");
    snprintf(lib, sizeof(lib), "%s/test/fakeplugin/libnccl-net-ctor.so", RAIL_BINARY_DIR);
    snprintf(dst, sizeof(dst), "%s/usr/lib/x86_64-linux-gnu", root);
    tmp_mkdirs(dst);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s/'", lib, dst);
    CHECK(system(cmd) == 0);
    snprintf(mark, sizeof(mark), "%s/constructor-ran", g_tmp);
    setenv("RAIL_CTOR_MARK", mark, 1);
    /* By name (found in the snapshot's library directory), and by this machine's path to the
     * copy (what a loader on this machine would open: beneath the root it names nothing). */
    snprintf(cmd, sizeof(cmd),
             "NCCL_NET_PLUGIN=ctor,%s/libnccl-net-ctor.so\nNCCL_TUNER_PLUGIN=ctor\n", dst);
    put_at(root, "/etc/nccl.conf", cmd);

    struct doctor_ctx c = {.root = root, .env = {.vars = g_no_env}, .home = "/home/u"};
    struct doctor_report r;
    doctor_report_init(&r);
    doctor_run(&c, &r);
    CHECK_MSG(access(mark, F_OK) != 0, "the doctor ran the constructor of a snapshot's library");
    const struct doctor_finding *x = doctor_find(&r, "plugin.net", "libnccl-net-ctor.so");
#if defined(__x86_64__)
    CHECK_MSG(x && strstr(x->message, "NCCL loads /usr/lib/x86_64-linux-gnu/libnccl-net-ctor.so "
                                      "(in the --root snapshot): net plugin \"CTOR\", ABI v11"),
              "%s", x ? x->message : "no plugin.net finding");
    x = doctor_find(&r, "plugin.tuner", "libnccl-net-ctor.so");
    CHECK_MSG(x && strstr(x->message, "\"ctor\", ABI v5"), "%s", x ? x->message : "no tuner");
#endif
    doctor_report_free(&r);
    doctor_ctx_release(&c);

    /* The library does leave its mark when it is loaded: the check above can fail. */
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL && access(mark, F_OK) == 0);
    if (h)
        dlclose(h);
    unsetenv("RAIL_CTOR_MARK");
}

int main(void)
{
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/rail-doctor-hostile-XXXXXX");
    CHECK(mkdtemp(g_tmp) != NULL);
    test_output_is_clean_text();
    test_conf_merge_linear();
    test_root_is_never_left();
    test_plugin_never_loaded();
    tmp_remove_tree(g_tmp);
    return check_report("test_doctor_hostile");
}
