/* SPDX-License-Identifier: Apache-2.0 */
/* The output-file rule (common/safe_file.h rail_file_out_*), the parts about other users and
 * limits (issue 29):
 *   - a replacement is a new file of the writer: never setuid/setgid, never more permissive than
 *     a new file, whoever planted the file it replaces (root test: a file of uid 65534, 06777);
 *   - RLIMIT_FSIZE below the content: a failed write naming the limit, the process lives (no
 *     SIGXFSZ), no temporary left; the telemetry writer and the profiler plugin WARN and their
 *     process exits normally;
 *   - temporaries of earlier writers killed before their rename are removed at open; a symbolic
 *     link, another user's file, a fresh one or another target's are not. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "warn_capture.h"
#include "log.h"
#include "prof_plugin.h"
#include "telemetry/rail_stats.h"
#include "safe_file.h"
#include "tmpfiles.h"

static char g_dir[256];
static char g_err[8192];

static const char *at(const char *name)
{
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof(buf[i]), "%s/%s", g_dir, name);
    return buf[i];
}

/* Files in g_dir whose name starts with "." and ends with ".tmp". */
static int temporaries(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' && len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static int replace(const char *path, const char *text)
{
    struct rail_file_out o;
    int rc = rail_file_out_open(&o, path, g_err, sizeof(g_err));
    if (rc == 0) {
        fputs(text, o.f);
        rc = rail_file_out_commit(&o, g_err, sizeof(g_err));
    }
    return rc;
}

static void test_planted_mode(void)
{
    struct stat st;
    umask(022);
    /* The writer's own file: setuid/setgid/world-writable never pass on; a narrower mode stays. */
    tmp_put(at("own.txt"), "old\n");
    CHECK(chmod(at("own.txt"), 06777) == 0);
    CHECK_EQ_INT(replace(at("own.txt"), "new\n"), 0);
    CHECK(stat(at("own.txt"), &st) == 0);
    CHECK_MSG((st.st_mode & 07777) == 0644, "own 06777 replaced: %o", st.st_mode & 07777);
    tmp_put(at("private.txt"), "old\n");
    CHECK(chmod(at("private.txt"), 0600) == 0);
    CHECK_EQ_INT(replace(at("private.txt"), "new\n"), 0);
    CHECK(stat(at("private.txt"), &st) == 0 && (st.st_mode & 07777) == 0600);

    if (geteuid() != 0) {
        printf("test_file_out: not root: the planted-by-another-user case is skipped\n");
        return;
    }
    /* Another user's file, setuid, setgid, world-writable: the replacement is root's, 0644. */
    tmp_put(at("planted.txt"), "planted\n");
    CHECK(chown(at("planted.txt"), 65534, 65534) == 0);
    CHECK(chmod(at("planted.txt"), 06777) == 0);
    CHECK_EQ_INT(replace(at("planted.txt"), "root's\n"), 0);
    CHECK(stat(at("planted.txt"), &st) == 0);
    CHECK_MSG((st.st_mode & 07777) == 0644 && st.st_uid == 0 && st.st_gid == getegid(),
              "planted 06777 of 65534 replaced: mode %o uid %d gid %d", st.st_mode & 07777,
              (int)st.st_uid, (int)st.st_gid);
    /* Its narrow mode lends nothing either: a new file's mode. */
    tmp_put(at("planted0.txt"), "planted\n");
    CHECK(chown(at("planted0.txt"), 65534, 65534) == 0 && chmod(at("planted0.txt"), 0) == 0);
    CHECK_EQ_INT(replace(at("planted0.txt"), "root's\n"), 0);
    CHECK(stat(at("planted0.txt"), &st) == 0 && (st.st_mode & 07777) == 0644 && st.st_uid == 0);
}

/* In a child with RLIMIT_FSIZE = limit bytes: 0 when it behaved, else the number of the failed
 * expectation; a death by signal is reported by the parent. */
static int fsize_child(int which, rlim_t limit)
{
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 90;
    if (which == 0) {
        /* The common writer: 64 KiB past a 4 KiB limit. */
        struct rail_file_out o;
        static char big[65536];
        memset(big, 'x', sizeof(big));
        if (rail_file_out_open(&o, at("big.txt"), g_err, sizeof(g_err)) != 0)
            return 1;
        fwrite(big, 1, sizeof(big), o.f);
        if (rail_file_out_commit(&o, g_err, sizeof(g_err)) != -EFBIG)
            return 2;
        if (!strstr(g_err, "big.txt: File too large") || !strstr(g_err, "RLIMIT_FSIZE") ||
            !strstr(g_err, " 4096 bytes"))
            return 3;
        return access(at("big.txt"), F_OK) == 0 ? 4 : 0;
    }
    if (which == 2) {
        /* The profiler plugin at finalize (NCCL_RAIL_PROFILE_DIR): its file is over 16 bytes. */
        void *ctx = NULL;
        int mask = 0;
        setenv("NCCL_RAIL_PROFILE_DIR", g_dir, 1);
        if (rail_prof_plugin_init(5, &ctx, 0x29, &mask, "x", 1, 8, 3, capture) != ncclSuccess ||
            !ctx)
            return 8;
        if (rail_prof_plugin_finalize(ctx) != ncclSuccess)
            return 9;
        return g_warns == 1 && strstr(g_warn, "File too large") && strstr(g_warn, "RLIMIT_FSIZE")
                   ? 0
                   : 10;
    }
    /* The telemetry writer (NCCL_RAIL_STATS_FILE): its snapshot is larger than 16 bytes. */
    struct rail_stats_writer_config cfg = {.path = at("stats.json"), .interval_ms = 10000};
    rail_log_set_logger(capture);
    if (rail_stats_writer_start(&cfg, g_err, sizeof(g_err)) != 0)
        return 5;
    rail_stats_finalize();
    if (g_warns != 1 || !strstr(g_warn, "stats.json: File too large") ||
        !strstr(g_warn, "RLIMIT_FSIZE"))
        return 6;
    return access(at("stats.json"), F_OK) == 0 ? 7 : 0;
}

static void test_fsize_limit(void)
{
    const rlim_t limits[] = {4096, 16, 16};
    for (int which = 0; which < 3; which++) {
        fflush(NULL);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            int rc = fsize_child(which, limits[which]);
            if (rc)
                fprintf(stderr, "child %d: expectation %d failed: %s | %s\n", which, rc, g_err,
                        g_warn);
            _exit(rc);
        }
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "writer %d under RLIMIT_FSIZE: %s %d", which,
                  WIFSIGNALED(status) ? "killed by signal" : "exit status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        CHECK_MSG(temporaries() == 0, "writer %d left %d temporary file(s)", which, temporaries());
    }
}

static void make_old(const char *path)
{
    struct timespec t[2] = {{.tv_sec = time(NULL) - RAIL_FILE_OUT_STALE_S - 60},
                            {.tv_sec = time(NULL) - RAIL_FILE_OUT_STALE_S - 60}};
    CHECK(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) == 0);
}

static void test_stale_temporaries(void)
{
    const char *stale = ".calib.txt.0123456789abcdef.tmp";
    const char *fresh = ".calib.txt.00000000000000ff.tmp";
    const char *link = ".calib.txt.aaaaaaaaaaaaaaaa.tmp";
    const char *theirs = ".calib.txt.bbbbbbbbbbbbbbbb.tmp";
    const char *other = ".other.txt.cccccccccccccccc.tmp";
    const char *upper = ".calib.txt.DDDDDDDDDDDDDDDD.tmp";
    const char *dir = ".calib.txt.eeeeeeeeeeeeeeee.tmp";
    tmp_put(at(stale), "killed before rename\n");
    make_old(at(stale));
    tmp_put(at(fresh), "a writer at work\n");
    tmp_put(at("victim"), "not ours to remove\n");
    CHECK(symlink(at("victim"), at(link)) == 0);
    make_old(at(link));
    tmp_put(at(other), "x\n");
    make_old(at(other));
    tmp_put(at(upper), "x\n");
    make_old(at(upper));
    tmp_mkdirs(at(dir));
    make_old(at(dir));
    if (geteuid() == 0) {
        tmp_put(at(theirs), "x\n");
        CHECK(chown(at(theirs), 65534, 65534) == 0);
        make_old(at(theirs));
    }
    CHECK_EQ_INT(replace(at("calib.txt"), "new\n"), 0);
    CHECK_MSG(access(at(stale), F_OK) != 0, "a stale temporary stays");
    CHECK(access(at(fresh), F_OK) == 0);
    struct stat st;
    CHECK(lstat(at(link), &st) == 0 && S_ISLNK(st.st_mode) && access(at("victim"), F_OK) == 0);
    CHECK(access(at(other), F_OK) == 0 && access(at(upper), F_OK) == 0);
    CHECK(lstat(at(dir), &st) == 0 && S_ISDIR(st.st_mode));
    if (geteuid() == 0)
        CHECK(access(at(theirs), F_OK) == 0);
}

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/rail_file_out_XXXXXX");
    CHECK(mkdtemp(g_dir) != NULL);
    CHECK(chmod(g_dir, 0755) == 0);
    test_planted_mode();
    test_fsize_limit();
    test_stale_temporaries();
    tmp_remove_tree(g_dir);
    return check_report("test_file_out");
}
