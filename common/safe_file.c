/* SPDX-License-Identifier: Apache-2.0 */
/* Non-blocking, regular-file-only, bounded reads (see safe_file.h). */
#include "safe_file.h"

#include "root_path.h"
#include "strutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
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

/* A write error of o: the file-size limit named with its value, anything else by its errno. */
static int out_fail_write(const struct rail_file_out *o, int rc, char *err, size_t errlen)
{
    if (rc == -EFBIG && o->fsize_limit)
        rail_set_err(err, errlen,
                     "%s: %s: the content reaches this process's file-size limit (RLIMIT_FSIZE, "
                     "ulimit -f) of %llu bytes; not written, left unchanged",
                     o->path, strerror(EFBIG), (unsigned long long)o->fsize_limit);
    else
        out_fail(o->path, NULL, rc, err, errlen);
    return rc;
}

/* The file-size limit, or 0 for none. */
static unsigned long long fsize_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    return rl.rlim_cur ? (unsigned long long)rl.rlim_cur : 1; /* a limit of 0: nothing fits */
}

/* One write(2) that cannot raise SIGXFSZ: the caller checked the limit, and SIGXFSZ is blocked
 * in this thread around the call in case the limit was lowered meanwhile; the signal that a
 * refused write queued then is taken back, unless one was pending before (the host's own). The
 * host's disposition and other threads are untouched. */
static ssize_t write_no_sigxfsz(int fd, const void *buf, size_t n)
{
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    bool before = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    ssize_t k = write(fd, buf, n);
    int e = errno;
    if (k < 0 && e == EFBIG && !before && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGXFSZ)) {
        const struct timespec now = {0, 0};
        sigtimedwait(&xfsz, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return k;
}

/* stdio on the descriptor, keeping the errno of the first failed write. Content that would go
 * past RLIMIT_FSIZE is refused before writing (EFBIG), so the process never gets SIGXFSZ. */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
    struct rail_file_out *o = cookie;
    unsigned long long limit = fsize_limit();
    size_t done = 0;
    if (limit && o->written + n > limit) {
        if (!o->err) {
            o->err = EFBIG;
            o->fsize_limit = limit;
        }
        return -1;
    }
    while (done < n) {
        ssize_t k = write_no_sigxfsz(o->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!o->err) {
                o->err = k < 0 ? errno : EIO;
                if (o->err == EFBIG)
                    o->fsize_limit = fsize_limit();
            }
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
        o->written += (unsigned long long)k;
    }
    return (ssize_t)n;
}

/* Leftovers of writers killed between creating their temporary and renaming it (SIGKILL, a
 * power loss): in the target's directory only, names of exactly this writer's pattern for this
 * target (".NAME.<16 hex>.tmp"), regular files (never followed: lstat-like fstatat), of this
 * user, one link, untouched for RAIL_FILE_OUT_STALE_S. Once per target and process (the profiler
 * and the telemetry writer rewrite theirs every interval), at most 64 targets. */
static void out_sweep(const char *path)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t seen[64];
    static int nseen;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    char dir[4096];
    uint64_t h = 1469598103934665603ull;
    bool go = true;

    for (const char *c = path; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nseen && go; i++)
        go = seen[i] != h;
    if (go && nseen < (int)(sizeof(seen) / sizeof(seen[0])))
        seen[nseen++] = h;
    else
        go = false;
    pthread_mutex_unlock(&lock);
    if (!go || blen == 0)
        return;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        bool hex = len == blen + 22 && n[0] == '.' && memcmp(n + 1, base, blen) == 0 &&
                   n[blen + 1] == '.' && strcmp(n + blen + 18, ".tmp") == 0;
        for (size_t i = blen + 2; hex && i < blen + 18; i++)
            hex = (n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f');
        struct stat st;
        if (!hex || fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
            st.st_mtime + RAIL_FILE_OUT_STALE_S < now)
            unlinkat(dfd, n, 0); /* a name swapped for a link meanwhile: the link goes, never its
                                  * target */
    }
    closedir(d);
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
    out_sweep(path);
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
    setvbuf(o->f, NULL, _IOFBF, 1 << 16);
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

int rail_file_out_fail(struct rail_file_out *o, char *err, size_t errlen)
{
    int rc = -(o->err ? o->err : EIO);
    rail_file_out_abort(o);
    return out_fail_write(o, rc, err, errlen);
}

int rail_file_out_commit(struct rail_file_out *o, char *err, size_t errlen)
{
    const char *kind = NULL;
    struct stat st;
    int rc = 0;

    if (!o->f || o->fd < 0)
        return out_fail(o->path, NULL, -EBADF, err, errlen);
    if (fflush(o->f) != 0 || ferror(o->f) || o->err)
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
    if (rc != 0) {
        unlink(o->tmp);
        return out_fail_write(o, rc, err, errlen);
    }
    /* The target again: something else may have been put there meanwhile. */
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
    if (rc != 0) {
        unlink(o->tmp);
        return out_fail(o->path, kind, rc, err, errlen);
    }
    return 0;
}
