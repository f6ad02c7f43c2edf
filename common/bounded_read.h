/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a whole small file under the project's rules: non-blocking open (a FIFO or a device
 * cannot block the caller), regular files only, at most max bytes (checked from fstat before
 * anything is read, and again while reading in case the file grows). */
#ifndef NCCL_RAIL_BOUNDED_READ_H
#define NCCL_RAIL_BOUNDED_READ_H

#include <stddef.h>

/* 0 with *out (malloc'ed, NUL-terminated, free() it) and *len; or a negative errno with
 * "path: reason" in err: -ENOENT/-EACCES (open), -EISDIR, -EINVAL (not a regular file),
 * -EFBIG (larger than max), -ENOMEM, -EIO. */
int rail_read_file_bounded(const char *path, size_t max, char **out, size_t *len, char *err,
                           size_t errlen);

#endif
