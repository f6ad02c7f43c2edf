/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "measure/calib_inspector.h"
#include "measure/calib_prof.h"
#include "measure/calib_prom.h"
#include "safe_file.h"
#include "strutil.h"

void rail_calib_logs_free(struct rail_calib_logs *l)
{
    free(l->runs);
    free(l->dirs);
    rail_job_free(&l->jobs);
    memset(l, 0, sizeof(*l));
}

int rail_calib_logs_set_output(struct rail_calib_logs *l, const char *path)
{
    struct stat st;
    l->out_known = 0;
    if (stat(path, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
    l->out_known = 1;
    l->out_dev = st.st_dev;
    l->out_ino = st.st_ino;
    return 0;
}

static void note(struct rail_calib_logs *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct rail_calib_logs *l, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (!l->note)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    l->note(l->note_arg, line);
}

static int has_suffix(const char *name, const char *sfx)
{
    size_t n = strlen(name), k = strlen(sfx);
    return n > k && strcmp(name + n - k, sfx) == 0;
}

/* A job-measurement file by its content: 1 and parsed (rc), or 0 when it is not one. */
static int add_job_file(struct rail_calib_logs *l, const char *buf, size_t len, const char *path,
                        const struct rail_calib_hint *hint, char *err, size_t errlen, int *rc)
{
    if (rail_calib_prof_detect(buf, len)) {
        l->files_prof++;
        *rc = rail_calib_prof_parse(buf, len, path, &l->jobs, err, errlen);
    } else if (rail_calib_prom_detect(buf, len)) {
        l->files_prom++;
        *rc = rail_calib_prom_parse(buf, len, path, &l->jobs, err, errlen);
    } else if (rail_calib_inspector_detect(buf, len)) {
        l->files_json++;
        *rc = rail_calib_inspector_parse(buf, len, path, hint, &l->jobs, err, errlen);
    } else {
        return 0;
    }
    return 1;
}

static int add_file(struct rail_calib_logs *l, const char *path, const struct rail_calib_hint *hint,
                    int depth, char *err, size_t errlen)
{
    char *buf;
    const char *text;
    size_t len;
    struct stat st;
    int rc;

    if (l->out_known && stat(path, &st) == 0 && st.st_dev == l->out_dev &&
        st.st_ino == l->out_ino) {
        rail_set_err(err, errlen,
                     "%s: is the output file (-o): an input is never overwritten; write the "
                     "calibration to another file",
                     path);
        return -EINVAL;
    }
    if (l->files >= RAIL_CALIB_MAX_FILES) {
        rail_set_err(err, errlen, "%s: more than %d log files", path, RAIL_CALIB_MAX_FILES);
        return -E2BIG;
    }
    if (l->nruns == l->cap) {
        int cap = l->cap ? l->cap * 2 : 32;
        struct rail_calib_run *r = realloc(l->runs, (size_t)cap * sizeof(*r));
        if (!r) {
            rail_set_err(err, errlen, "%s: out of memory", path);
            return -ENOMEM;
        }
        l->runs = r;
        l->cap = cap;
    }
    rc = rail_file_read_all(path, RAIL_CALIB_MAX_LOG_BYTES, 0, &buf, &len, err, errlen);
    if (rc < 0)
        return rc;
    text = buf;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte order mark */
        text += 3;
        len -= 3;
    }
    if (depth > 0 && has_suffix(path, ".json") && !rail_calib_prof_detect(text, len) &&
        !rail_calib_prom_detect(text, len) && !rail_calib_inspector_is_record(text, len)) {
        note(l, "%s: not an NCCL Inspector record: skipped (name the file to read it anyway)",
             path);
        l->skipped++;
        free(buf);
        return 0;
    }
    l->files++;
    if (!add_job_file(l, text, len, path, hint, err, errlen, &rc)) {
        rc = rail_calib_log_parse(text, len, path, hint, &l->runs[l->nruns], err, errlen);
        if (rc == 0)
            l->nruns++;
    }
    free(buf);
    return rc;
}

static int has_log_suffix(const char *name)
{
    static const char *const sfx[] = {".log", ".txt", ".out", ".prof", ".prom", ".json"};
    for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
        if (has_suffix(name, sfx[i]))
            return 1;
    return 0;
}

/* Remember a directory: 1 when it was read before (a link loop, a second path), 0, or -E2BIG /
 * -ENOMEM. */
static int dir_seen(struct rail_calib_logs *l, const struct stat *st)
{
    for (int i = 0; i < l->ndirs; i++)
        if (l->dirs[i].dev == st->st_dev && l->dirs[i].ino == st->st_ino)
            return 1;
    if (l->ndirs >= RAIL_CALIB_MAX_FILES)
        return -E2BIG;
    if (l->ndirs == l->dirs_cap) {
        int cap = l->dirs_cap ? l->dirs_cap * 2 : 16;
        struct rail_calib_dirid *d = realloc(l->dirs, (size_t)cap * sizeof(*d));
        if (!d)
            return -ENOMEM;
        l->dirs = d;
        l->dirs_cap = cap;
    }
    l->dirs[l->ndirs++] = (struct rail_calib_dirid){st->st_dev, st->st_ino};
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(struct rail_calib_logs *l, const char *path, const struct rail_calib_hint *hint,
                    int depth, char *err, size_t errlen)
{
    struct stat st;
    char **names = NULL;
    int n = 0, cap = 0, rc = 0;
    DIR *d;
    struct dirent *e;

    if (lstat(path, &st) != 0) {
        rc = -errno;
        rail_set_err(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    if (S_ISLNK(st.st_mode)) { /* a link to a directory is followed; to a file, only if named */
        struct stat t;
        if (stat(path, &t) == 0 && S_ISDIR(t.st_mode)) {
            st = t;
        } else if (depth > 0) {
            l->skipped++;
            return 0;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        if (depth > 0 && (!S_ISREG(st.st_mode) || !has_log_suffix(path))) {
            l->skipped++;
            return 0;
        }
        return add_file(l, path, hint, depth, err, errlen); /* named: must parse */
    }
    if (depth >= RAIL_CALIB_MAX_DEPTH) {
        l->skipped_deep++;
        note(l, "%s: deeper than %d directory levels below the path named: not read", path,
             RAIL_CALIB_MAX_DEPTH);
        return 0;
    }
    if ((rc = dir_seen(l, &st)) != 0) {
        if (rc == 1) {
            note(l, "%s: a directory already read (a link loop or a second path to it): skipped",
                 path);
            return 0;
        }
        if (rc == -E2BIG)
            rail_set_err(err, errlen, "%s: more than %d directories", path, RAIL_CALIB_MAX_FILES);
        else
            rail_set_err(err, errlen, "%s: out of memory", path);
        return rc;
    }
    if (!(d = opendir(path))) {
        rc = -errno;
        rail_set_err(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    while ((e = readdir(d)) != NULL) {
        char *full;
        if (e->d_name[0] == '.')
            continue;
        if (n >= RAIL_CALIB_MAX_FILES) {
            rail_set_err(err, errlen, "%s: more than %d entries", path, RAIL_CALIB_MAX_FILES);
            rc = -E2BIG;
            break;
        }
        if (n == cap) {
            int ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, (size_t)ncap * sizeof(*nn));
            if (!nn) {
                rc = -ENOMEM;
                break;
            }
            names = nn;
            cap = ncap;
        }
        if (asprintf(&full, "%s/%s", path, e->d_name) < 0) {
            rc = -ENOMEM;
            break;
        }
        names[n++] = full;
    }
    closedir(d);
    if (rc == -ENOMEM)
        rail_set_err(err, errlen, "%s: out of memory", path);
    if (rc == 0)
        qsort(names, (size_t)n, sizeof(*names), cmp_str);
    for (int i = 0; i < n && rc == 0; i++)
        rc = add_path(l, names[i], hint, depth + 1, err, errlen);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int rail_calib_logs_add(struct rail_calib_logs *l, const char *path,
                        const struct rail_calib_hint *hint, char *err, size_t errlen)
{
    rail_clear_err(err, errlen);
    return add_path(l, path, hint, 0, err, errlen);
}
