/* SPDX-License-Identifier: Apache-2.0 */
#include "bounded_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"

static int fail(int rc, char *err, size_t errlen, const char *path, const char *why)
{
    rail_set_err(err, errlen, "%s: %s", path, why);
    return rc;
}

int rail_read_file_bounded(const char *path, size_t max, char **out, size_t *len, char *err,
                           size_t errlen)
{
    struct stat st;
    char *buf;
    size_t n = 0;
    int fd;

    *out = NULL;
    *len = 0;
    if (!path || !*path)
        return fail(-EINVAL, err, errlen, "(empty)", "empty path");
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        return fail(-e, err, errlen, path, strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(-e, err, errlen, path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return fail(-EISDIR, err, errlen, path, "is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(-EINVAL, err, errlen, path, "not a regular file (FIFO, device or socket)");
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        rail_set_err(err, errlen, "%s: %lld bytes, larger than the %zu accepted", path,
                     (long long)st.st_size, max);
        return -EFBIG;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return fail(-ENOMEM, err, errlen, path, "out of memory");
    }
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(-e, err, errlen, path, strerror(e));
        }
        if (r == 0)
            break; /* shrank while reading: take what is there */
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
