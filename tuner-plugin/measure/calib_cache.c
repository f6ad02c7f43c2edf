/* SPDX-License-Identifier: Apache-2.0 */
/* One parsed copy of each calibration file per process (calib_cache.h). */
#include "measure/calib_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_file.h"
#include "strutil.h"

struct calib_entry {
    struct rail_calibration cal; /* first: rail_calib_cache_put finds the entry from it */
    struct calib_entry *next;
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    int refs;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct calib_entry *g_entries;

static bool same_file(const struct calib_entry *e, const char *path, const struct stat *st)
{
    return strcmp(e->path, path) == 0 && e->dev == st->st_dev && e->ino == st->st_ino &&
           e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
           e->mtime.tv_nsec == st->st_mtim.tv_nsec && e->ctime.tv_sec == st->st_ctim.tv_sec &&
           e->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* Parse the open file into a new entry (the caller holds the lock). */
static int load(int fd, const char *path, const struct stat *st, struct calib_entry **out,
                char *err, size_t errlen)
{
    struct calib_entry *e = calloc(1, sizeof(*e));
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if (!e || !(e->path = strdup(path))) {
        free(e);
        rail_set_err(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    rc = rail_file_read_all_fd(fd, path, RAIL_CALIB_MAX_FILE, &buf, &len, err, errlen);
    if (rc == 0)
        rc = rail_calib_parse(buf, len, path, &e->cal, err, errlen);
    free(buf);
    if (rc < 0) {
        free(e->path);
        free(e);
        return rc;
    }
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->size = st->st_size;
    e->mtime = st->st_mtim;
    e->ctime = st->st_ctim;
    *out = e;
    return 0;
}

int rail_calib_cache_get(const char *path, const struct rail_calibration **out, char *err,
                         size_t errlen)
{
    const char *kind = NULL;
    struct calib_entry *e;
    struct stat st;
    int fd, rc = 0;

    *out = NULL;
    rail_clear_err(err, errlen);
    /* Identity and contents from one descriptor: nothing can swap the file in between. */
    fd = rail_file_open(path, 0, &kind);
    if (fd < 0) {
        if (kind)
            rail_set_err(err, errlen, "%s: not a regular file (%s)", path, kind);
        else
            rail_set_err(err, errlen, "%s: %s", path ? path : "(null)", strerror(-fd));
        return fd;
    }
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        rail_set_err(err, errlen, "%s: %s", path, strerror(-rc));
        close(fd);
        return rc;
    }
    pthread_mutex_lock(&g_lock);
    for (e = g_entries; e && !same_file(e, path, &st); e = e->next)
        ;
    if (!e && (rc = load(fd, path, &st, &e, err, errlen)) == 0) {
        e->next = g_entries;
        g_entries = e;
    }
    if (rc == 0) {
        e->refs++;
        *out = &e->cal;
    }
    pthread_mutex_unlock(&g_lock);
    close(fd);
    return rc;
}

void rail_calib_cache_put(const struct rail_calibration *cal)
{
    struct calib_entry **pp;
    if (!cal)
        return;
    pthread_mutex_lock(&g_lock);
    for (pp = &g_entries; *pp && &(*pp)->cal != cal; pp = &(*pp)->next)
        ;
    struct calib_entry *e = *pp;
    if (e && --e->refs == 0)
        *pp = e->next;
    else
        e = NULL;
    pthread_mutex_unlock(&g_lock);
    if (e) {
        rail_calib_free(&e->cal);
        free(e->path);
        free(e);
    }
}

int rail_calib_cache_entries(void)
{
    int n = 0;
    pthread_mutex_lock(&g_lock);
    for (const struct calib_entry *e = g_entries; e; e = e->next)
        n++;
    pthread_mutex_unlock(&g_lock);
    return n;
}
