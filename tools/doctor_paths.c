/* SPDX-License-Identifier: Apache-2.0 */
/* env.knob for the knobs that name files (NCCL_TOPO_FILE, HWLOC_XMLFILE, NCCL_RAIL_SYSFS_ROOT,
 * NCCL_RAIL_STATS_FILE, NCCL_TUNER_CONFIG_FILE). A path that a snapshot's configuration file
 * sets names a file of the snapshot's machine: it is resolved beneath the root (root_path.h), so
 * nothing outside the snapshot is opened, whatever the path or its links say. A path from the
 * environment doctor runs in is the caller's own (doctor_env_root). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor_checks.h"
#include "telemetry/rail_stats_format.h"
#include "root_path.h"
#include "decide/rules.h"
#include "safe_file.h"

bool doctor_path_file_ok(const char *root, const char *v, char *why, size_t len)
{
    const char *kind = NULL;
    int fd = rail_file_open_in(root, v, 0, &kind);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    if (kind)
        snprintf(why, len, "not a regular file (%s)", kind);
    else
        snprintf(why, len, "cannot read the file: %s", rail_root_strerror(fd));
    return false;
}

/* What path is beneath the root: 0 with *st, or -errno. */
static int stat_in(const char *root, const char *path, struct stat *st)
{
    int fd = rail_root_open(root, path, O_PATH, 0, NULL, 0), rc = 0;
    if (fd < 0)
        return fd;
    if (fstat(fd, st) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

bool doctor_path_dir_ok(const char *root, const char *v, char *why, size_t len)
{
    struct stat st;
    int rc = stat_in(root, v, &st);
    if (rc == 0 && S_ISDIR(st.st_mode))
        return true;
    snprintf(why, len, "%s",
             rc == -ENOENT ? "no such directory"
             : rc == 0     ? "not a directory"
                           : rail_root_strerror(rc));
    return false;
}

/* The plugin's %p expansion, then a directory it can create files in (the writer replaces the
 * file by rename) and no directory at the path itself. In a snapshot the directory must exist;
 * whether this machine's user may write there says nothing of the snapshot's. */
bool doctor_path_stats_ok(const char *root, const char *v, char *why, size_t len)
{
    char path[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    if (rail_stats_expand_path(v, (long)getpid(), path, sizeof(path) - 8) != 0) {
        snprintf(why, len, "empty or too long");
        return false;
    }
    if (stat_in(root, path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(why, len, "a directory");
        return false;
    }
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (!rail_root_is_live(root))
        return doctor_path_dir_ok(root, dir, why, len);
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, len, "directory %.200s is not writable: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

/* A snapshot's rules file: read beneath the root, each line through the tuner's own line
 * parser (rail_rules_parse_line), strict unless lenient. */
static int rules_in_root(const char *root, const char *v, bool lenient, char *why, size_t len)
{
    char *text = NULL, err[256];
    size_t n = 0, rules = 0;
    int rc = rail_file_read_all_in(root, v, RAIL_RULES_MAX_FILE, 0, &text, &n, why, len);
    if (rc < 0)
        return lenient ? 0 : rc;
    int lineno = 0;
    for (char *line = text; rc == 0 && line < text + n; lineno++) {
        struct rail_rule r;
        char *nl = memchr(line, '\n', (size_t)(text + n - line));
        size_t l = nl ? (size_t)(nl - line) : (size_t)(text + n - line);
        line[l] = '\0';
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        if (l > RAIL_RULES_MAX_LINE) {
            snprintf(err, sizeof(err), "line longer than %d characters", RAIL_RULES_MAX_LINE);
            rc = -EINVAL;
        } else if ((rc = rail_rules_parse_line(line, &r, err, sizeof(err))) > 0) {
            rc = ++rules > RAIL_RULES_MAX_RULES ? -E2BIG : 0;
            snprintf(err, sizeof(err), "more than %d rules", RAIL_RULES_MAX_RULES);
        }
        if (rc < 0 && !lenient)
            snprintf(why, len, "%s:%d: %s", v, lineno + 1, err);
        else
            rc = 0;
        line = nl ? nl + 1 : text + n;
    }
    free(text);
    return rc;
}

int doctor_rules_check(const char *root, const char *v, bool lenient, char *why, size_t len)
{
    struct rail_rules rules = {0};
    int rc;
    if (!rail_root_is_live(root))
        return rules_in_root(root, v, lenient, why, len);
    rc = rail_rules_load(v, lenient, &rules, why, len);
    rail_rules_free(&rules);
    return rc;
}
