/* SPDX-License-Identifier: Apache-2.0 */
/* Component-by-component resolution beneath a root (see root_path.h). */
#include "root_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool rail_root_is_live(const char *root)
{
    return !root || !*root || strcmp(root, "/") == 0;
}

/* The directories walked so far: a descriptor each (O_PATH), and the path they make. */
struct walk {
    int fd[RAIL_ROOT_MAX_DEPTH + 1];
    size_t mark[RAIL_ROOT_MAX_DEPTH + 1]; /* canon length at each depth */
    int depth;
    char canon[PATH_MAX];
    size_t clen;
};

static void walk_close(struct walk *w)
{
    for (int i = 0; i <= w->depth; i++)
        if (w->fd[i] >= 0)
            close(w->fd[i]);
}

static int walk_push(struct walk *w, int fd, const char *name)
{
    size_t n = strlen(name);
    if (w->depth == RAIL_ROOT_MAX_DEPTH || w->clen + n + 2 > sizeof(w->canon)) {
        close(fd);
        return -ENAMETOOLONG;
    }
    w->fd[++w->depth] = fd;
    w->mark[w->depth] = w->clen;
    w->canon[w->clen++] = '/';
    memcpy(w->canon + w->clen, name, n + 1);
    w->clen += n;
    return 0;
}

static void walk_pop(struct walk *w)
{
    close(w->fd[w->depth]);
    w->clen = w->mark[w->depth--];
    w->canon[w->clen] = '\0';
}

/* rem := target + "/" + rest (rest may point into rem). */
static int splice_link(char *rem, size_t remlen, const char *target, const char *rest)
{
    char tmp[2 * PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target, rest) >= sizeof(tmp) ||
        strlen(tmp) >= remlen)
        return -ENAMETOOLONG;
    memcpy(rem, tmp, strlen(tmp) + 1);
    return 0;
}

static int copy_canon(const char *canon, char *out, size_t len)
{
    if (!out)
        return 0;
    if ((size_t)snprintf(out, len, "%s", *canon ? canon : "/") >= len)
        return -ENAMETOOLONG;
    return 0;
}

static int open_live(const char *path, int oflags, int rflags, char *canon, size_t canonlen)
{
    char real[PATH_MAX];
    int fd = open(path, oflags | O_CLOEXEC | (rflags & RAIL_ROOT_NOFOLLOW ? O_NOFOLLOW : 0));
    if (fd < 0)
        return -errno;
    if (canon) {
        int rc = realpath(path, real) ? copy_canon(real, canon, canonlen) : -errno;
        if (rc < 0) {
            close(fd);
            return rc;
        }
    }
    return fd;
}

/* One step of the walk for the component name (not "." or ".."): 1 when it was a link, whose
 * target is now spliced into rem; 0 when a directory was entered, or the last component opened
 * (into *final); or -errno. */
static int step(struct walk *w, const char *name, bool last, int oflags, int rflags, char *rem,
                size_t remlen, const char *rest, int *links, int *final)
{
    struct stat st;
    int cur = w->fd[w->depth], fd;
    if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return -errno;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n;
        if (last && (rflags & RAIL_ROOT_NOFOLLOW))
            return -ELOOP;
        if (++*links > RAIL_ROOT_MAX_LINKS)
            return -ELOOP;
        n = readlinkat(cur, name, target, sizeof(target));
        if (n < 0)
            return -errno;
        if ((size_t)n >= sizeof(target))
            return -ENAMETOOLONG;
        target[n] = '\0';
        if (target[0] == '/')
            return -EXDEV; /* absolute: a file of another machine, or of this one */
        int rc = splice_link(rem, remlen, target, rest);
        return rc < 0 ? rc : 1;
    }
    if (!last) {
        if (!S_ISDIR(st.st_mode))
            return -ENOTDIR;
        fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        return walk_push(w, fd, name);
    }
    fd = openat(cur, name, oflags | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = walk_push(w, fd, name); /* for the canonical path; the descriptor is the result */
    if (rc < 0)
        return rc;
    w->fd[w->depth] = -1;
    *final = fd;
    return 0;
}

int rail_root_open(const char *root, const char *path, int oflags, int rflags, char *canon,
                   size_t canonlen)
{
    struct walk w = {.depth = 0};
    char rem[2 * PATH_MAX], name[NAME_MAX + 1];
    const char *pos = rem;
    int links = 0, final = -1, rc = 0;

    if (!path)
        return -EINVAL;
    if (rail_root_is_live(root))
        return open_live(path, oflags, rflags, canon, canonlen);
    if ((size_t)snprintf(rem, sizeof(rem), "%s", path) >= sizeof(rem))
        return -ENAMETOOLONG;
    w.fd[0] = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (w.fd[0] < 0)
        return -errno;
    while (final < 0 && rc >= 0) {
        size_t n;
        while (*pos == '/')
            pos++;
        if (!*pos) { /* the path names a directory already entered (or the root) */
            final = openat(w.fd[w.depth], ".", oflags | O_CLOEXEC);
            rc = final < 0 ? -errno : 0;
            break;
        }
        n = strcspn(pos, "/");
        if (n > NAME_MAX) {
            rc = -ENAMETOOLONG;
            break;
        }
        memcpy(name, pos, n);
        name[n] = '\0';
        pos += n;
        while (*pos == '/')
            pos++;
        if (strcmp(name, ".") == 0)
            continue;
        if (strcmp(name, "..") == 0) {
            if (w.depth == 0)
                rc = -EXDEV; /* above the root */
            else
                walk_pop(&w);
            continue;
        }
        rc = step(&w, name, *pos == '\0', oflags, rflags, rem, sizeof(rem), pos, &links, &final);
        if (rc == 1) { /* a link: go on with its target, from the same directory */
            pos = rem;
            rc = 0;
        }
    }
    if (rc >= 0 && final >= 0)
        rc = copy_canon(w.canon, canon, canonlen);
    walk_close(&w);
    if (rc < 0) {
        if (final >= 0)
            close(final);
        return rc;
    }
    return final;
}

int rail_root_resolve(const char *root, const char *path, char *out, size_t len)
{
    int fd = rail_root_open(root, path, O_PATH, 0, out, len);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

const char *rail_root_strerror(int rc)
{
    if (rc == -EXDEV)
        return "leaves the root (an absolute symbolic link, or '..' above it)";
    return strerror(rc < 0 ? -rc : rc);
}
