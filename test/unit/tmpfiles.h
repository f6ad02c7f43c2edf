/* SPDX-License-Identifier: Apache-2.0 */
/* Scratch trees for tests (under a mkdtemp directory): mkdir -p, write a file with its parent
 * directories, remove a tree. A failure is a CHECK failure naming the path. */
#ifndef NCCL_RAIL_TEST_TMPFILES_H
#define NCCL_RAIL_TEST_TMPFILES_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"

/* mkdir -p path. */
static inline void tmp_mkdirs(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *s = tmp + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(tmp, 0755);
            *s = '/';
        }
    }
    CHECK_MSG(mkdir(tmp, 0755) == 0 || errno == EEXIST, "mkdir %s", tmp);
}

/* Write text to path, creating the missing parent directories first. */
static inline void tmp_put(const char *path, const char *text)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        tmp_mkdirs(dir);
    }
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot create %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* rm -rf dir. */
static inline void tmp_remove_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK_MSG(system(cmd) == 0, "could not remove %s", dir);
}

#endif
