/* SPDX-License-Identifier: Apache-2.0 */
/* Non-blocking, regular-file-only, bounded reads (see safe_file.h). */
#include "safe_file.h"

#include "strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

int rail_file_open(const char *path, int flags, const char **kind)
{
    struct stat st;
    int fd, oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (kind)
        *kind = NULL;
    if (!path || !*path)
        return -ENOENT;
    if (flags & RAIL_FILE_NOFOLLOW)
        oflags |= O_NOFOLLOW;
    fd = open(path, oflags);
    if (fd < 0) {
        int rc = -errno;
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
    ssize_t got;
    int fd = rail_file_open(path, flags, NULL);
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
    const char *kind = NULL;
    struct stat st;
    size_t cap, total = 0;
    char *buf = NULL;
    int fd, rc = 0;

    if (out)
        *out = NULL;
    if (len)
        *len = 0;
    if (!out || !len || max_bytes >= SIZE_MAX / 2)
        return rail_fail(err, errlen, "%s: bad arguments", path ? path : "(null)");
    fd = rail_file_open(path, flags, &kind);
    if (fd < 0) {
        if (kind)
            rail_set_err(err, errlen, "%s: not a regular file (%s)", path, kind);
        else
            rail_set_err(err, errlen, "%s: %s", path ? path : "(null)", strerror(-fd));
        return fd;
    }
    /* A file that says it is larger than the bound (and than any sysfs/proc pseudo file, which
     * report 0 or a page and are bounded while reading) is refused before anything is read. */
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > max_bytes && st.st_size > 65536) {
        close(fd);
        rail_set_err(err, errlen, "%s: %lld bytes, larger than the %zu bytes accepted", path,
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
            rail_set_err(err, errlen, "%s: out of memory", path);
            break;
        }
        buf = q;
        got = read_full(fd, buf + total, cap - total);
        if (got < 0) {
            rc = (int)got;
            rail_set_err(err, errlen, "%s: %s", path, strerror(-rc));
            break;
        }
        total += (size_t)got;
        if (total > max_bytes) {
            rc = -EFBIG;
            rail_set_err(err, errlen, "%s: larger than the %zu bytes accepted", path, max_bytes);
            break;
        }
        if (total < cap)
            break; /* end of file */
        cap = cap > max_bytes / 2 ? max_bytes + 1 : cap * 2;
    }
    close(fd);
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
