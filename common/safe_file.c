/* SPDX-License-Identifier: Apache-2.0 */
/* Non-blocking, regular-file-only, bounded reads (see safe_file.h). */
#include "safe_file.h"

#include "root_path.h"
#include "strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *mode_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    return "not a plain file";
}

const char *rail_file_kind(const char *path, int flags)
{
    struct stat st;
    if (!path || ((flags & RAIL_FILE_NOFOLLOW) ? lstat(path, &st) : stat(path, &st)) != 0)
        return NULL;
    if (S_ISLNK(st.st_mode))
        return "a symbolic link";
    return S_ISREG(st.st_mode) ? NULL : mode_kind(st.st_mode);
}

int rail_file_open_in(const char *root, const char *path, int flags, const char **kind)
{
    struct stat st;
    int fd, oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (kind)
        *kind = NULL;
    if (!path || !*path)
        return -ENOENT;
    if (rail_root_is_live(root))
        fd = open(path, oflags | (flags & RAIL_FILE_NOFOLLOW ? O_NOFOLLOW : 0));
    else /* beneath the root, one component at a time (root_path.h) */
        fd = rail_root_open(root, path, oflags, flags & RAIL_FILE_NOFOLLOW ? RAIL_ROOT_NOFOLLOW : 0,
                            NULL, 0);
    if (fd < 0) {
        int rc = rail_root_is_live(root) ? -errno : fd;
        if (rc == -ELOOP && kind)
            *kind = "a symbolic link";
        return rc;
    }
    if (fstat(fd, &st) != 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        if (kind)
            *kind = mode_kind(st.st_mode);
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
    }
    return fd;
}

int rail_file_open(const char *path, int flags, const char **kind)
{
    return rail_file_open_in(NULL, path, flags, kind);
}

/* read() until len bytes or end of file. */
static ssize_t read_full(int fd, char *buf, size_t len)
{
    size_t total = 0;
    while (total < len) {
        ssize_t got = read(fd, buf + total, len - total);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno == EAGAIN ? -EINVAL : -errno;
        if (got == 0)
            break;
        total += (size_t)got;
    }
    return (ssize_t)total;
}

/* One more byte after the bound means the file is larger than it. */
static int more_data(int fd)
{
    char extra;
    ssize_t got;
    do
        got = read(fd, &extra, 1);
    while (got < 0 && errno == EINTR);
    return got > 0;
}

ssize_t rail_file_read_fixed(const char *path, void *buf, size_t len, int flags)
{
    return rail_file_read_fixed_in(NULL, path, buf, len, flags);
}

ssize_t rail_file_read_fixed_in(const char *root, const char *path, void *buf, size_t len,
                                int flags)
{
    ssize_t got;
    int fd = rail_file_open_in(root, path, flags, NULL);
    if (fd < 0)
        return fd;
    got = read_full(fd, buf, len);
    if (got >= 0 && (size_t)got == len && !(flags & RAIL_FILE_PARTIAL) && more_data(fd))
        got = -EFBIG;
    close(fd);
    return got;
}

int rail_file_read_all(const char *path, size_t max_bytes, int flags, char **out, size_t *len,
                       char *err, size_t errlen)
{
    return rail_file_read_all_in(NULL, path, max_bytes, flags, out, len, err, errlen);
}

int rail_file_read_all_in(const char *root, const char *path, size_t max_bytes, int flags,
                          char **out, size_t *len, char *err, size_t errlen)
{
    const char *kind = NULL;
    int fd, rc;

    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!out || !len || max_bytes >= SIZE_MAX / 2)
        return rail_fail(err, errlen, "%s: bad arguments", path ? path : "(null)");
    fd = rail_file_open_in(root, path, flags, &kind);
    if (fd < 0) {
        if (kind)
            rail_set_err(err, errlen, "%s: not a regular file (%s)", path, kind);
        else
            rail_set_err(err, errlen, "%s: %s", path ? path : "(null)", rail_root_strerror(fd));
        return fd;
    }
    rc = rail_file_read_all_fd(fd, path, max_bytes, out, len, err, errlen);
    close(fd);
    return rc;
}

int rail_file_read_all_fd(int fd, const char *name, size_t max_bytes, char **out, size_t *len,
                          char *err, size_t errlen)
{
    struct stat st;
    size_t cap, total = 0;
    char *buf = NULL;
    int rc = 0;

    *out = NULL;
    *len = 0;
    name = name ? name : "(file)";
    if (max_bytes >= SIZE_MAX / 2)
        return rail_fail(err, errlen, "%s: bad arguments", name);
    /* A file that says it is larger than the bound (and than any sysfs/proc pseudo file, which
     * report 0 or a page and are bounded while reading) is refused before anything is read. */
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > max_bytes && st.st_size > 65536) {
        rail_set_err(err, errlen, "%s: %lld bytes, larger than the %zu bytes accepted", name,
                     (long long)st.st_size, max_bytes);
        return -EFBIG;
    }
    /* Start from the size fstat reports (0 for /proc files), never beyond the bound. */
    cap = fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < max_bytes
              ? (size_t)st.st_size + 1
              : 4096;
    if (cap > max_bytes + 1)
        cap = max_bytes + 1;
    for (;;) {
        char *q = realloc(buf, cap + 1);
        ssize_t got;
        if (!q) {
            rc = -ENOMEM;
            rail_set_err(err, errlen, "%s: out of memory", name);
            break;
        }
        buf = q;
        got = read_full(fd, buf + total, cap - total);
        if (got < 0) {
            rc = (int)got;
            rail_set_err(err, errlen, "%s: %s", name, strerror(-rc));
            break;
        }
        total += (size_t)got;
        if (total > max_bytes) {
            rc = -EFBIG;
            rail_set_err(err, errlen, "%s: larger than the %zu bytes accepted", name, max_bytes);
            break;
        }
        if (total < cap)
            break; /* end of file */
        cap = cap > max_bytes / 2 ? max_bytes + 1 : cap * 2;
    }
    if (rc) {
        free(buf);
        return rc;
    }
    buf[total] = '\0';
    *out = buf;
    *len = total;
    return 0;
}

const char *rail_file_compression(const void *data, size_t len)
{
    static const struct {
        const char *name;
        const char *magic;
        size_t n;
    } fmts[] = {
        {"gzip", "\x1f\x8b", 2},
        {"xz",
         "\xfd"
         "7zXZ\x00",
         6},
        {"zstd", "\x28\xb5\x2f\xfd", 4},
        {"bzip2", "BZh", 3},
        {"lzma", "\x5d\x00\x00", 3},
        {"zlib", "\x78\x9c", 2},
    };
    for (size_t i = 0; data && i < sizeof(fmts) / sizeof(fmts[0]); i++)
        if (len >= fmts[i].n && memcmp(data, fmts[i].magic, fmts[i].n) == 0)
            return fmts[i].name;
    return NULL;
}

/* ---- writing ---- */

/* What path is: 0 absent, 1 a regular file (*st set), or -EINVAL with its kind. */
static int out_target(const char *path, struct stat *st, const char **kind)
{
    if (lstat(path, st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISLNK(st->st_mode)) {
        *kind = "a symbolic link";
        return -EINVAL;
    }
    if (!S_ISREG(st->st_mode)) {
        *kind = mode_kind(st->st_mode);
        return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
    }
    return 1;
}

static int out_fail(const char *path, const char *kind, int rc, char *err, size_t errlen)
{
    if (kind)
        rail_set_err(err, errlen, "%s: not a regular file (%s); refused, left unchanged", path,
                     kind);
    else
        rail_set_err(err, errlen, "%s: %s", path, strerror(-rc));
    return rc;
}

/* stdio on the descriptor, keeping the errno of the first failed write. */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    struct rail_file_out *o = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(o->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!o->err)
                o->err = k < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
    }
    return (ssize_t)n;
}

int rail_file_out_open(struct rail_file_out *o, const char *path, char *err, size_t errlen)
{
    static const cookie_io_functions_t io = {.write = out_write};
    const char *kind = NULL, *slash;
    struct stat old, made;
    int rc;

    memset(o, 0, sizeof(*o));
    o->fd = -1;
    if (!path || !*path)
        return out_fail("(no path)", NULL, -ENOENT, err, errlen);
    if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path))
        return out_fail(path, NULL, -ENAMETOOLONG, err, errlen);
    rc = out_target(path, &old, &kind);
    if (rc < 0)
        return out_fail(path, kind, rc, err, errlen);
    o->existed = rc == 1;
    slash = strrchr(path, '/');
    for (int tries = 0; o->fd < 0 && tries < 16; tries++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            r ^= (uint64_t)getpid() << 20 ^ (uint64_t)(uintptr_t)o ^ (uint64_t)tries;
        if (snprintf(o->tmp, sizeof(o->tmp), "%.*s.%s.%016llx.tmp",
                     slash ? (int)(slash - path + 1) : 0, path, slash ? slash + 1 : path,
                     (unsigned long long)r) >= (int)sizeof(o->tmp))
            return out_fail(path, NULL, -ENAMETOOLONG, err, errlen);
        o->fd =
            open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
        if (o->fd < 0 && errno != EEXIST)
            return out_fail(path, NULL, -errno, err, errlen);
    }
    if (o->fd < 0)
        return out_fail(path, NULL, -EEXIST, err, errlen);
    /* The new file is this writer's (a new inode) with a new file's mode (0666 & ~umask, read
     * back rather than taken from umask(2), which no thread can read safely). A file of this
     * user that it replaces may narrow that mode, never widen it, and setuid, setgid and sticky
     * never pass on; another user's planted file lends it nothing. */
    rc = 0;
    if (o->existed && old.st_uid == geteuid() && fstat(o->fd, &made) == 0 &&
        (made.st_mode & 0777 & old.st_mode) != (made.st_mode & 07777))
        rc = fchmod(o->fd, made.st_mode & 0777 & old.st_mode) == 0 ? 0 : -errno;
    if (rc == 0 && !(o->f = fopencookie(o, "w", io)))
        rc = -errno;
    if (rc != 0) {
        rail_file_out_abort(o);
        return out_fail(path, NULL, rc, err, errlen);
    }
    return 0;
}

void rail_file_out_abort(struct rail_file_out *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->fd >= 0) {
        close(o->fd);
        unlink(o->tmp);
    }
    o->fd = -1;
}

int rail_file_out_commit(struct rail_file_out *o, char *err, size_t errlen)
{
    const char *kind = NULL;
    struct stat st;
    int rc = 0;

    if (!o->f || o->fd < 0)
        return out_fail(o->path, NULL, -EBADF, err, errlen);
    if (fflush(o->f) != 0 || ferror(o->f))
        rc = -(o->err ? o->err : EIO);
    if (rc == 0 && fsync(o->fd) != 0 && errno != EINVAL)
        rc = -errno;
    fclose(o->f);
    o->f = NULL;
    if (rc == 0 && close(o->fd) != 0)
        rc = -errno;
    else if (rc != 0)
        close(o->fd);
    o->fd = -1;
    /* The target again: something else may have been put there meanwhile. */
    if (rc == 0) {
        int now = out_target(o->path, &st, &kind);
        if (now < 0) {
            rc = now;
        } else if (now == 1 || renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE)) {
            /* EEXIST: a file appeared there meanwhile; EINVAL/ENOSYS: no RENAME_NOREPLACE */
            if (now == 0 && errno != EINVAL && errno != ENOSYS)
                rc = -errno;
            else if (rename(o->tmp, o->path) != 0)
                rc = -errno;
        }
    }
    if (rc != 0) {
        unlink(o->tmp);
        return out_fail(o->path, kind, rc, err, errlen);
    }
    return 0;
}
