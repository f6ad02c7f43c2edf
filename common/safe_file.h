/* SPDX-License-Identifier: Apache-2.0 */
/* The one way the project reads a file (topology XML, hwloc XML, rules, sysfs/proc values,
 * telemetry snapshots): open without blocking (O_NONBLOCK, so a FIFO never hangs the caller),
 * accept regular files only (fstat on the open descriptor, so nothing can swap the file between
 * the check and the read), and read at most a given number of bytes into memory. Parsers then
 * work on the buffer. docs/configuration.md "Input limits" lists the bounds.
 *
 * Writers of user-named output files use rail_file_out_* (below): same rules, for writing.
 *
 * Errors are negative errno values: -EISDIR for a directory, -EINVAL for any other file that is
 * not regular (FIFO, socket, character or block device), -EFBIG when the file holds more than
 * the bound, -ELOOP for a symbolic link under RAIL_FILE_NOFOLLOW, or the open/read errno. */
#ifndef NCCL_RAIL_SAFE_FILE_H
#define NCCL_RAIL_SAFE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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

/* The same, for a path as seen under root (a snapshot: doctor --root, NCCL_RAIL_SYSFS_ROOT):
 * resolved beneath it component by component (root_path.h: a relative link that stays inside is
 * followed; an absolute link or ".." above the root is -EXDEV). Root "/" or NULL: the path as
 * is. Messages name path as given. */
int rail_file_open_in(const char *root, const char *path, int flags, const char **kind);
ssize_t rail_file_read_fixed_in(const char *root, const char *path, void *buf, size_t len,
                                int flags);
int rail_file_read_all_in(const char *root, const char *path, size_t max_bytes, int flags,
                          char **out, size_t *len, char *err, size_t errlen);

/* rail_file_read_all on a descriptor from rail_file_open (the caller keeps and closes it, so it
 * can fstat the very file it reads); name is used in messages. */
int rail_file_read_all_fd(int fd, const char *name, size_t max_bytes, char **out, size_t *len,
                          char *err, size_t errlen);

/* Compressed data (gzip, xz, lzma, zstd, bzip2) by its magic bytes: the format's name, or NULL.
 * Parsers of plain-text formats refuse these rather than inflating them without a bound. */
const char *rail_file_compression(const void *data, size_t len);

/* ---- writing a file the user names (calibrate -o, explain --svg, NCCL_RAIL_STATS_FILE, the
 * profiler's files) ----
 * The target is never opened: it must be a regular file or absent, anything else (a FIFO, a
 * device, a socket, a directory, a symbolic link) is refused and left unchanged. The data goes to
 * a new file created with O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK under a random name in the
 * target's directory (".NAME.<16 hex>.tmp"), is flushed and fsync'd, and is renamed over the
 * target only if that is still a regular file or absent (then with RENAME_NOREPLACE where the
 * file system has it). A reader sees the old file or the whole new one, and a write error keeps
 * its errno (ENOSPC, EDQUOT, EFBIG: never a generic EIO).
 * The replacement is a new inode: owned by the writer, with a new file's mode (0666 & ~umask),
 * narrowed (never widened) by the mode of a replaced file of the same user; setuid, setgid and
 * sticky bits never pass on, and another user's planted file lends it nothing.
 * RLIMIT_FSIZE: content that would go past the limit is refused before it is written (EFBIG,
 * the message names the limit), so the process never dies of SIGXFSZ; SIGXFSZ is also blocked in
 * the writing thread around each write(2) (a limit lowered meanwhile), and the one signal such a
 * write raises is taken back. The host's disposition of SIGXFSZ is never changed.
 * Temporaries of this target left by a writer killed before its rename (same pattern, regular
 * file, this user, one link, older than RAIL_FILE_OUT_STALE_S) are removed at open, once per
 * target and process; symbolic links and other users' files are never touched. */
#define RAIL_FILE_OUT_STALE_S 600
struct rail_file_out {
    FILE *f; /* write the content here */
    int fd, err;
    bool existed;
    unsigned long long written, fsize_limit; /* bytes written; the limit that refused a write */
    char path[4096], tmp[4096];
};
/* 0, or -errno with "PATH: reason" in err (-EINVAL with "not a regular file (a FIFO)" for a
 * target that is not a regular file). On success write to o->f, then commit or abort. */
int rail_file_out_open(struct rail_file_out *o, const char *path, char *err, size_t errlen);
/* Flush, sync, close and rename over the target: 0, or -errno with "PATH: reason" in err (the
 * temporary file is removed, the target unchanged). */
int rail_file_out_commit(struct rail_file_out *o, char *err, size_t errlen);
/* Close and remove the temporary file; the target is unchanged. */
void rail_file_out_abort(struct rail_file_out *o);
/* After a failed write to o->f: abort, and -errno of the first failed write (EIO when none)
 * with "PATH: reason" in err (the file-size limit named with its value). */
int rail_file_out_fail(struct rail_file_out *o, char *err, size_t errlen);

#endif
