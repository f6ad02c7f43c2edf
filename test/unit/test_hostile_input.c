/* SPDX-License-Identifier: Apache-2.0 */
/* Hostile files: every file the project reads goes through safe_file.h (non-blocking, regular
 * files only, bounded). FIFOs, devices, directories, symlinks (sysfs), compressed and oversized
 * files, malformed hwloc XML, OS-device names that would climb out of the sysfs root, and the
 * WARNs for implausible NCCL topology XML. Each case here was a hang, a blow-up or a silent
 * acceptance before. alarm() turns a regression that blocks into a failure instead of a hang. */
#include "check.h"
#include "log.h"
#include "root_path.h"
#include "safe_file.h"
#include "tmpfiles.h"
#include "topo.h"
#include "topo_sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[] = "/tmp/rail_hostile_XXXXXX";
static char g_err[512];
static struct rail_topo g_t;
static int g_warns;
static char g_warn_text[4096];

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    va_list ap;
    size_t o = strlen(g_warn_text);
    (void)flags;
    (void)file;
    (void)line;
    if (level != NCCL_LOG_WARN)
        return;
    g_warns++;
    va_start(ap, fmt);
    if (o + 2 < sizeof(g_warn_text)) {
        vsnprintf(g_warn_text + o, sizeof(g_warn_text) - o - 1, fmt, ap);
        strcat(g_warn_text, "\n");
    }
    va_end(ap);
}

static void warns_reset(void)
{
    g_warns = 0;
    g_warn_text[0] = '\0';
}

static const char *at(const char *name)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof(path[k]), "%s/%s", g_dir, name);
    return path[k];
}

static const char *put_bytes(const char *name, const void *data, size_t len)
{
    const char *p = at(name);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(data, 1, len, f) == len);
        fclose(f);
    }
    return p;
}

static const char *fifo(const char *name)
{
    const char *p = at(name);
    unlink(p);
    CHECK(mkfifo(p, 0600) == 0);
    return p;
}

static void test_safe_file(void)
{
    char buf[16], *text;
    size_t len;
    const char *kind = NULL;
    const char *p = put_bytes("ten", "0123456789", 10);

    CHECK_EQ_INT(rail_file_read_fixed(p, buf, 10, 0), 10);
    CHECK_EQ_INT(rail_file_read_fixed(p, buf, 9, 0), -EFBIG);
    CHECK_EQ_INT(rail_file_read_fixed(p, buf, 9, RAIL_FILE_PARTIAL), 9);
    CHECK_EQ_INT(rail_file_read_all(p, 10, 0, &text, &len, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(len, 10);
    CHECK(text && text[10] == '\0' && memcmp(text, "0123456789", 10) == 0);
    free(text);
    CHECK_EQ_INT(rail_file_read_all(p, 9, 0, &text, &len, g_err, sizeof(g_err)), -EFBIG);
    CHECK(text == NULL);
    CHECK(strstr(g_err, "larger than the 9 bytes accepted") != NULL);
    /* /proc files report size 0 but have content. */
    CHECK_EQ_INT(
        rail_file_read_all("/proc/self/status", 1 << 20, 0, &text, &len, g_err, sizeof(g_err)), 0);
    CHECK(text && strstr(text, "Name:") != NULL);
    free(text);

    alarm(20);
    p = fifo("fifo");
    CHECK_EQ_INT(rail_file_open(p, 0, &kind), -EINVAL);
    CHECK_EQ_STR(kind, "a FIFO");
    CHECK_EQ_INT(rail_file_read_all(p, 100, 0, &text, &len, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file (a FIFO)") != NULL);
    CHECK_EQ_STR(rail_file_kind(p, 0), "a FIFO");
    alarm(0);
    CHECK_EQ_INT(rail_file_open("/dev/zero", 0, &kind), -EINVAL);
    CHECK_EQ_STR(kind, "a character device");
    CHECK_EQ_INT(rail_file_open(g_dir, 0, &kind), -EISDIR);
    CHECK_EQ_STR(kind, "a directory");
    CHECK_EQ_INT(rail_file_open(at("missing"), 0, &kind), -ENOENT);
    CHECK(symlink(at("ten"), at("link")) == 0);
    CHECK_EQ_INT(rail_file_read_fixed(at("link"), buf, sizeof(buf), 0), 10);
    CHECK_EQ_INT(rail_file_read_fixed(at("link"), buf, sizeof(buf), RAIL_FILE_NOFOLLOW), -ELOOP);
    CHECK_EQ_STR(rail_file_kind(at("link"), RAIL_FILE_NOFOLLOW), "a symbolic link");
    CHECK(rail_file_kind(at("ten"), 0) == NULL);

    CHECK_EQ_STR(rail_file_compression("\x1f\x8b\x08\x00", 4), "gzip");
    CHECK_EQ_STR(rail_file_compression("\xfd"
                                       "7zXZ\x00\x00",
                                       7),
                 "xz");
    CHECK_EQ_STR(rail_file_compression("\x28\xb5\x2f\xfd", 4), "zstd");
    CHECK(rail_file_compression("<?xml", 5) == NULL);
    CHECK(rail_file_compression("\x1f", 1) == NULL);
}

static void test_sysfs_root(void)
{
    char buf[64];
    tmp_put(at("sys/class/infiniband/mlx5_0/ports/1/rate"), "100 Gb/sec (4X EDR)\n");
    CHECK_EQ_INT(
        rail_sysfs_read(g_dir, "/sys/class/infiniband/mlx5_0/ports/1/rate", buf, sizeof(buf)), 19);
    CHECK_EQ_STR(buf, "100 Gb/sec (4X EDR)");
    alarm(20);
    unlink(at("sys/class/infiniband/mlx5_0/ports/1/state"));
    CHECK(mkfifo(at("sys/class/infiniband/mlx5_0/ports/1/state"), 0600) == 0);
    CHECK_EQ_INT(
        rail_sysfs_read(g_dir, "/sys/class/infiniband/mlx5_0/ports/1/state", buf, sizeof(buf)),
        -EINVAL);
    struct rail_sysfs_ib_port sp;
    CHECK_EQ_INT(rail_sysfs_ib_port(g_dir, "mlx5_0", 1, &sp), 0); /* the FIFO is skipped */
    CHECK_EQ_INT(sp.speed_mbps, 100000);
    CHECK_EQ_INT(sp.state, -1);
    alarm(0);
    /* An absolute symlink in a snapshot would read the host's file. */
    CHECK(symlink("/etc/hostname", at("sys/class/infiniband/mlx5_0/ports/1/link_layer")) == 0);
    CHECK_EQ_INT(
        rail_sysfs_read(g_dir, "/sys/class/infiniband/mlx5_0/ports/1/link_layer", buf, sizeof(buf)),
        -ELOOP);
    /* Too long for the caller's buffer. */
    CHECK_EQ_INT(rail_sysfs_read(g_dir, "/sys/class/infiniband/mlx5_0/ports/1/rate", buf, 8),
                 -EFBIG);
}

static void test_nccl_xml_files(void)
{
    static const char xml[] = "<system version=\"1\"><cpu numaid=\"0\"/></system>";
    const char *p;

    alarm(20);
    CHECK_EQ_INT(rail_topo_load_nccl_xml(fifo("topo.fifo"), &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file (a FIFO)") != NULL);
    alarm(0);
    CHECK_EQ_INT(rail_topo_load_nccl_xml("/dev/zero", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file (a character device)") != NULL);
    /* A gzip file used to be inflated by libxml2 without a bound (1 MB -> 23 GB). */
    p = put_bytes("topo.xml.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
    CHECK_EQ_INT(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK_MSG(strstr(g_err, "gzip-compressed; NCCL reads plain XML only") != NULL, "%s", g_err);
    p = put_bytes("topo.xml.xz",
                  "\xfd"
                  "7zXZ\x00\x00\x04",
                  7);
    CHECK_EQ_INT(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "xz-compressed") != NULL);
    /* Over 8 MiB: refused by the bounded read (a sparse file costs no disk). */
    p = at("huge.xml");
    {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0 && ftruncate(fd, (9 << 20)) == 0);
        if (fd >= 0)
            close(fd);
    }
    CHECK_EQ_INT(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "larger than the 8388608 bytes accepted") != NULL);
    p = put_bytes("ok.xml", xml, strlen(xml));
    CHECK_MSG(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)) == 0, "%s", g_err);
}

static void test_nccl_xml_warns(void)
{
    static const char gpu_fmt[] = "<pci busid=\"%s\" class=\"0x030200\" vendor=\"0x10de\" "
                                  "device=\"0x2330\" link_speed=\"32.0 GT/s PCIe\" "
                                  "link_width=\"16\"><gpu dev=\"%d\" sm=\"90\" rank=\"%d\" "
                                  "gdr=\"1\">%s</gpu></pci>";
    char doc[2048], g0[512], g1[512];
    const char *p;

    rail_log_set_logger(capture);
    warns_reset();
    p = put_bytes("empty.xml", "<system version=\"1\"/>", 21);
    rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err));
    CHECK_EQ_INT(g_warns, 1);
    CHECK_MSG(strstr(g_warn_text, "empty.xml:1: empty <system>") != NULL, "%s", g_warn_text);

    /* Two GPUs with one bus id, the second NVLinked to itself: loaded (NCCL loads it), with a
     * WARN for each finding. */
    snprintf(g0, sizeof(g0), gpu_fmt, "0000:1b:00.0", 0, 0, "");
    snprintf(g1, sizeof(g1), gpu_fmt, "0000:1B:00.0", 1, 1,
             "<nvlink target=\"0000:1b:00.0\" count=\"2\" tclass=\"0x030200\"/>");
    snprintf(doc, sizeof(doc),
             "<system version=\"1\">\n<cpu numaid=\"0\">\n%s\n%s\n</cpu></system>", g0, g1);
    warns_reset();
    p = put_bytes("dup.xml", doc, strlen(doc));
    CHECK_MSG(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)) == 0, "%s", g_err);
    CHECK_EQ_INT(g_warns, 2);
    CHECK_MSG(strstr(g_warn_text, "dup.xml:4: GPU 0000:1b:00.0 has an NVLink to itself") != NULL,
              "%s", g_warn_text);
    CHECK_MSG(strstr(g_warn_text, "dup.xml:4: bus id 0000:1b:00.0 is also given at line 3") != NULL,
              "%s", g_warn_text);

    /* A plausible file: no WARN. */
    snprintf(g1, sizeof(g1), gpu_fmt, "0000:1c:00.0", 1, 1,
             "<nvlink target=\"0000:1b:00.0\" count=\"2\" tclass=\"0x030200\"/>");
    snprintf(doc, sizeof(doc), "<system version=\"1\"><cpu numaid=\"0\">%s%s</cpu></system>", g0,
             g1);
    warns_reset();
    p = put_bytes("fine.xml", doc, strlen(doc));
    CHECK_MSG(rail_topo_load_nccl_xml(p, &g_t, g_err, sizeof(g_err)) == 0, "%s", g_err);
    CHECK_MSG(g_warns == 0, "%s", g_warn_text);
    rail_log_set_logger(NULL);
}

/* The fixture with its OpenFabrics device renamed. */
static const char *hwloc_renamed(const char *name)
{
    FILE *f = fopen(RAIL_FIXTURES "/hwloc-xml/hwloc_hp-sl390s_3xM2070_mlx4-ib.xml", "r");
    static char text[1 << 20];
    char *out = malloc(sizeof(text) + 256), *hit;
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    const char *p = NULL;
    if (f)
        fclose(f);
    text[len] = '\0';
    hit = strstr(text, "name=\"mlx4_0\"");
    CHECK(hit != NULL && out != NULL);
    if (hit && out) {
        size_t head = (size_t)(hit - text);
        int n = snprintf(out, sizeof(text) + 256, "%.*sname=\"%s\"%s", (int)head, text, name,
                         hit + strlen("name=\"mlx4_0\""));
        p = put_bytes("renamed.xml", out, (size_t)n);
    }
    free(out);
    return p;
}

static void test_hwloc_files(void)
{
    const char *p;
    alarm(20);
    CHECK_EQ_INT(rail_topo_load_hwloc(fifo("hw.fifo"), "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file (a FIFO)") != NULL);
    /* HWLOC_XMLFILE without an explicit file: read the safe way too, not by hwloc itself. */
    setenv("HWLOC_XMLFILE", at("hw.fifo"), 1);
    CHECK_EQ_INT(rail_topo_load_hwloc(NULL, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "not a regular file (a FIFO)") != NULL);
    unsetenv("HWLOC_XMLFILE");
    alarm(0);
    p = put_bytes("hw.xml.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
    CHECK_EQ_INT(rail_topo_load_hwloc(p, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "gzip-compressed") != NULL);
    /* Malformed XML: line and reason instead of hwloc's "Invalid argument". */
    p = put_bytes("bad.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object>\n", 57);
    CHECK_EQ_INT(rail_topo_load_hwloc(p, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK_MSG(strstr(g_err, "bad.xml:4: not well-formed XML") != NULL, "%s", g_err);
    CHECK(strstr(g_err, "Invalid argument") == NULL);

    /* Shapes that crash hwloc 2.9's own import (found by test/fuzz/fuzz_hwloc_xml) are refused
     * before hwloc sees them; a regression is a SEGV of this test. */
    static const struct {
        const char *file, *why;
    } k_crashers[] = {
        {"pu-without-complete-cpuset-hwloc-segv.xml",
         ":6: <object> has cpuset without complete_cpuset"},
        {"allowed-cpuset-disjoint-hwloc-segv.xml",
         ":3: the Machine's allowed_cpuset shares no processor"},
        {"restricted-to-nothing-hwloc-segv.xml",
         ":3: <object> cpuset is not within its complete_cpuset"},
        {"malformed-allowed-cpuset-hwloc-segv.xml", ":3: <object> allowed_cpuset is not a bitmap"},
    };
    for (size_t i = 0; i < sizeof(k_crashers) / sizeof(k_crashers[0]); i++) {
        char f[512];
        snprintf(f, sizeof(f), "%s/test/fuzz/regressions/fuzz_hwloc_xml/%s", RAIL_SOURCE_DIR,
                 k_crashers[i].file);
        CHECK_EQ_INT(rail_topo_load_hwloc(f, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
        CHECK_MSG(strstr(g_err, k_crashers[i].why) != NULL, "%s: %s", k_crashers[i].file, g_err);
    }
    p = put_bytes("bridge.xml",
                  "<topology version=\"2.0\"><object type=\"Bridge\" bridge_type=\"1-1\" "
                  "depth=\"0\" bridge_pci=\"0000:[01-01]\"/></topology>",
                  112);
    CHECK_EQ_INT(rail_topo_load_hwloc(p, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK_MSG(strstr(g_err, "top-level <object> is not of type Machine") != NULL, "%s", g_err);
    p = put_bytes("doctype.xml",
                  "<!DOCTYPE topology><topology version=\"2.0\"><object type=\"Machine\"/>"
                  "</topology>",
                  78);
    CHECK_EQ_INT(rail_topo_load_hwloc(p, "/", &g_t, g_err, sizeof(g_err)), -EINVAL);
    CHECK_MSG(strstr(g_err, "<!DOCTYPE> without a system id") != NULL, "%s", g_err);

    /* Loads from the buffer as it did from the file. */
    p = hwloc_renamed("mlx4_0");
    CHECK_MSG(rail_topo_load_hwloc(p, "/", &g_t, g_err, sizeof(g_err)) == 0, "%s", g_err);
    CHECK_EQ_INT(g_t.n_nics, 1);
    CHECK_EQ_STR(g_t.nics[0].name, "mlx4_0");

    /* An OS-device name from the file is a sysfs path component: "../../../../etc" is refused
     * (device skipped, WARN) instead of being joined into /sys/class/infiniband/<name>/ports. */
    tmp_mkdirs(at("etc/ports/1"));
    rail_log_set_logger(capture);
    warns_reset();
    p = hwloc_renamed("../../../../etc");
    CHECK_MSG(rail_topo_load_hwloc(p, g_dir, &g_t, g_err, sizeof(g_err)) == 0, "%s", g_err);
    CHECK_EQ_INT(g_t.n_nics, 0);
    CHECK_MSG(strstr(g_warn_text, "\"../../../../etc\" is not a plain device name") != NULL, "%s",
              g_warn_text);
    rail_log_set_logger(NULL);
}

/* An explicit NCCL_RAIL_SYSFS_ROOT that does not exist: one WARN naming it, then used as given. */
static void test_sysfs_root_param(void)
{
    rail_log_set_logger(capture);
    warns_reset();
    setenv("NCCL_RAIL_SYSFS_ROOT", "/nonexistent/snapshot", 1);
    CHECK_EQ_STR(rail_sysfs_root_param(), "/nonexistent/snapshot");
    CHECK_EQ_STR(rail_sysfs_root_param(), "/nonexistent/snapshot");
    CHECK_EQ_INT(g_warns, 1);
    CHECK(strstr(g_warn_text, "NCCL_RAIL_SYSFS_ROOT='/nonexistent/snapshot' is not an existing "
                              "directory") != NULL);
    unsetenv("NCCL_RAIL_SYSFS_ROOT");
    CHECK_EQ_STR(rail_sysfs_root_param(), "/");
    rail_log_set_logger(NULL);
}

/* Issue 22: a WARN that quotes input (a topology name, an invalid value) reaches NCCL's log
 * without terminal escapes and as valid UTF-8. */
static void test_log_lines_are_clean(void)
{
    rail_log_set_logger(capture);
    warns_reset();
    RAIL_WARN(NCCL_INIT, "device '%s'", "mlx5_0\x1b]0;owned\x07\xff");
    CHECK_MSG(strstr(g_warn_text, "device 'mlx5_0?]0;owned?"
                                  "?'") != NULL,
              "%s", g_warn_text);
    rail_log_set_logger(NULL);
}

/* The output-file rule (safe_file.h): the target is never opened; only a regular file or nothing
 * is replaced; the temporary file is exclusive, random and gone after commit or abort. */
static void test_output_rule(void)
{
    struct rail_file_out a, b;
    struct stat st;
    char buf[64], p[512], f[512], l[512];
    snprintf(p, sizeof(p), "%s", at("out.txt"));
    snprintf(f, sizeof(f), "%s", fifo("out.fifo"));
    snprintf(l, sizeof(l), "%s", at("out.link"));

    alarm(20);
    CHECK_EQ_INT(rail_file_out_open(&a, p, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rail_file_out_open(&b, p, g_err, sizeof(g_err)), 0);
    CHECK(strcmp(a.tmp, b.tmp) != 0 && strncmp(a.tmp, g_dir, strlen(g_dir)) == 0);
    rail_file_out_abort(&b);
    CHECK(access(b.tmp, F_OK) != 0);
    fputs("new\n", a.f);
    CHECK_EQ_INT(rail_file_out_commit(&a, g_err, sizeof(g_err)), 0);
    CHECK(access(a.tmp, F_OK) != 0);
    CHECK_EQ_INT(rail_file_read_fixed(p, buf, sizeof(buf), RAIL_FILE_PARTIAL), 4);
    /* A FIFO put at the target after open: commit refuses, the FIFO stays. */
    CHECK_EQ_INT(rail_file_out_open(&a, at("late"), g_err, sizeof(g_err)), 0);
    fifo("late");
    CHECK_EQ_INT(rail_file_out_commit(&a, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "late: not a regular file (a FIFO)") != NULL);
    CHECK(lstat(at("late"), &st) == 0 && S_ISFIFO(st.st_mode) && access(a.tmp, F_OK) != 0);
    /* Refused at open: a FIFO, a symbolic link (even to a regular file), a directory. */
    CHECK(symlink(p, l) == 0);
    CHECK_EQ_INT(rail_file_out_open(&a, f, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "out.fifo: not a regular file (a FIFO); refused") != NULL);
    CHECK_EQ_INT(rail_file_out_open(&a, l, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "out.link: not a regular file (a symbolic link)") != NULL);
    CHECK_EQ_INT(rail_file_out_open(&a, g_dir, g_err, sizeof(g_err)), -EISDIR);
    CHECK_EQ_INT(rail_file_out_open(&a, at("no/such/dir"), g_err, sizeof(g_err)), -ENOENT);
    CHECK(strstr(g_err, "no/such/dir: No such file or directory") != NULL);
    alarm(0);
}

/* root_path.h: a path under a root is resolved beneath it, one component at a time. */
static void test_root_beneath(void)
{
    char root[600], canon[256], outside[600];
    int fd;
    snprintf(root, sizeof(root), "%s/rb", g_dir);
    snprintf(outside, sizeof(outside), "%s/rb-outside/secret", g_dir);
    tmp_put(outside, "secret\n");
    tmp_put(at("rb/sys/devices/pci0/dev0/value"), "42\n");
    tmp_mkdirs(at("rb/sys/class/net"));
    CHECK(symlink("../../devices/pci0/dev0", at("rb/sys/class/net/eth0")) == 0);
    CHECK(symlink("../../../../rb-outside", at("rb/sys/class/net/up")) == 0);
    CHECK(symlink(outside, at("rb/sys/class/net/abs")) == 0);
    CHECK(symlink("value", at("rb/sys/devices/pci0/dev0/alias")) == 0);
    CHECK(symlink("loop", at("rb/sys/class/net/loop")) == 0);

    /* A relative link that stays inside is followed; the canonical path is the root's view. */
    fd = rail_root_open(root, "/sys/class/net/eth0/value", O_RDONLY, 0, canon, sizeof(canon));
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK_EQ_STR(canon, "/sys/devices/pci0/dev0/value");
    CHECK_EQ_INT(rail_root_resolve(root, "/sys/class/net/eth0/./..", canon, sizeof(canon)), 0);
    CHECK_EQ_STR(canon, "/sys/devices/pci0"); /* ".." of the link's target, as the kernel does */
    CHECK_EQ_INT(rail_root_resolve(root, "/", canon, sizeof(canon)), 0);
    CHECK_EQ_STR(canon, "/");
    /* Out: a relative link that climbs, an absolute link, ".." above the root. */
    CHECK_EQ_INT(rail_root_open(root, "/sys/class/net/up/secret", O_RDONLY, 0, NULL, 0), -EXDEV);
    CHECK_EQ_INT(rail_root_open(root, "/sys/class/net/abs", O_RDONLY, 0, NULL, 0), -EXDEV);
    CHECK_EQ_INT(rail_root_open(root, "/../rb-outside/secret", O_RDONLY, 0, NULL, 0), -EXDEV);
    CHECK_EQ_INT(rail_root_open(root, "../rb-outside/secret", O_RDONLY, 0, NULL, 0), -EXDEV);
    /* A loop, a last component that is a link under NOFOLLOW, a file in the middle. */
    CHECK_EQ_INT(rail_root_open(root, "/sys/class/net/loop", O_RDONLY, 0, NULL, 0), -ELOOP);
    CHECK_EQ_INT(
        rail_root_open(root, "/sys/class/net/eth0/alias", O_RDONLY, RAIL_ROOT_NOFOLLOW, NULL, 0),
        -ELOOP);
    CHECK_EQ_INT(rail_root_open(root, "/sys/devices/pci0/dev0/value/x", O_RDONLY, 0, NULL, 0),
                 -ENOTDIR);
    /* The readers on top: a directory link in the middle of a path no longer leads out. */
    char buf[32];
    CHECK_EQ_INT(rail_sysfs_read(root, "/sys/class/net/up/secret", buf, sizeof(buf)), -EXDEV);
    CHECK_EQ_INT(rail_sysfs_read(root, "/sys/class/net/eth0/value", buf, sizeof(buf)), 2);
    CHECK(!rail_sysfs_exists(root, "/sys/class/net/up/secret"));
    CHECK_EQ_INT(rail_sysfs_realpath(root, "/sys/class/net/up", canon, sizeof(canon)), -EXDEV);
    static char names[4][RAIL_SYSFS_NAME_LEN];
    CHECK_EQ_INT(rail_sysfs_list(root, "/sys/class/net/up", names, 4), -EXDEV);
}

int main(void)
{
    CHECK(mkdtemp(g_dir) != NULL);
    test_root_beneath();
    test_output_rule();
    test_log_lines_are_clean();
    test_safe_file();
    test_sysfs_root();
    test_nccl_xml_files();
    test_nccl_xml_warns();
    test_hwloc_files();
    test_sysfs_root_param();
    tmp_remove_tree(g_dir);
    return check_report("test_hostile_input");
}
