/* SPDX-License-Identifier: Apache-2.0 */
/* The one way the project reads a file (topology XML, hwloc XML, rules, sysfs/proc values,
 * telemetry snapshots): open without blocking (O_NONBLOCK, so a FIFO never hangs the caller),
 * accept regular files only (fstat on the open descriptor, so nothing can swap the file between
 * the check and the read), and read at most a given number of bytes into memory. Parsers then
 * work on the buffer. docs/configuration.md "Input limits" lists the bounds.
 *
 * Errors are negative errno values: -EISDIR for a directory, -EINVAL for any other file that is
 * not regular (FIFO, socket, character or block device), -EFBIG when the file holds more than
 * the bound, -ELOOP for a symbolic link under RAIL_FILE_NOFOLLOW, or the open/read errno. */
#ifndef NCCL_RAIL_SAFE_FILE_H
#define NCCL_RAIL_SAFE_FILE_H

#include <stddef.h>
#include <sys/types.h>

enum {
    RAIL_FILE_NOFOLLOW = 1 << 0, /* refuse a symbolic link as the last path component */
    RAIL_FILE_PARTIAL = 1 << 1,  /* rail_file_read_fixed: a longer file is not an error */
};

/* Open path read-only, non-blocking, close-on-exec; a regular file only. Returns the descriptor,
 * or -errno as above. When kind is not NULL it names what the path is on failure ("a FIFO"). */
int rail_file_open(const char *path, int flags, const char **kind);

/* Read the start of a file into buf (binary; no terminator added). Returns the number of bytes
 * read, -EFBIG when the file holds more than len bytes (unless RAIL_FILE_PARTIAL), or -errno. */
ssize_t rail_file_read_fixed(const char *path, void *buf, size_t len, int flags);

/* Read a whole file of at most max_bytes into a new NUL-terminated buffer (*out, freed by the
 * caller; *len without the terminator). On failure *out is NULL and err holds one line naming
 * the path and the reason ("x.xml: not a regular file (a FIFO)"). */
int rail_file_read_all(const char *path, size_t max_bytes, int flags, char **out, size_t *len,
                       char *err, size_t errlen);

/* What path is when it is not a regular file ("a FIFO", "a character device"; lstat when
 * RAIL_FILE_NOFOLLOW), or NULL for a regular file or one that cannot be examined. */
const char *rail_file_kind(const char *path, int flags);

/* Compressed data (gzip, xz, lzma, zstd, bzip2) by its magic bytes: the format's name, or NULL.
 * Parsers of plain-text formats refuse these rather than inflating them without a bound. */
const char *rail_file_compression(const void *data, size_t len);

#endif
