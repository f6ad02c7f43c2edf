/* SPDX-License-Identifier: Apache-2.0 */
/* The output-file rule (common/safe_file.h rail_file_out_*), the parts about other users and
 * limits (issue 29):
 *   - a replacement is a new file of the writer: never setuid/setgid, never more permissive than
 *     a new file, whoever planted the file it replaces (root test: a file of uid 65534, 06777). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
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

int main(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/rail_file_out_XXXXXX");
    CHECK(mkdtemp(g_dir) != NULL);
    CHECK(chmod(g_dir, 0755) == 0);
    test_planted_mode();
    tmp_remove_tree(g_dir);
    return check_report("test_file_out");
}
