/* SPDX-License-Identifier: Apache-2.0 */
/* The calibration files of the process, each parsed once and shared read-only by every tuner
 * context that uses it (issue 22: at the documented maximum a file is ~20 MB parsed, and every
 * communicator used to keep its own copy).
 *
 * An entry is keyed by the path and by the identity of the file it was read from (device,
 * inode, size, modification and change times, to the nanosecond): a file that was replaced or
 * rewritten is read again, while contexts holding the old contents keep them. Entries are
 * reference-counted, immutable once loaded, and freed when their last context releases them.
 * Thread-safe (one mutex; a file is parsed under it, so two communicators created at once parse
 * it once). */
#ifndef NCCL_RAIL_CALIB_CACHE_H
#define NCCL_RAIL_CALIB_CACHE_H

#include <stddef.h>

#include "measure/calibration.h"

/* The parsed file at path, shared: 0 and *out (release it with rail_calib_cache_put), or a
 * negative errno with "path: reason" / "path:line: reason" in err (as rail_calib_load). The file
 * is read as every file is (safe_file.h: non-blocking, regular files only, bounded). */
int rail_calib_cache_get(const char *path, const struct rail_calibration **out, char *err,
                         size_t errlen);
/* Drop one reference; the last one frees the parsed rows. NULL: nothing. */
void rail_calib_cache_put(const struct rail_calibration *cal);
/* Files held in the cache now (tests). */
int rail_calib_cache_entries(void);

#endif
