/* SPDX-License-Identifier: Apache-2.0 */
#include "calib_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib_inspector.h"
#include "calib_prof.h"
#include "calib_prom.h"
#include "safe_file.h"
#include "strutil.h"

void rail_calib_logs_free(struct rail_calib_logs *l)
{
    free(l->runs);
    rail_job_free(&l->jobs);
    memset(l, 0, sizeof(*l));
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
                    char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rc;

    if (l->files >= RAIL_CALIB_MAX_FILES) {
        rail_set_err(err, errlen, "%s: more than %d log files", path, RAIL_CALIB_MAX_FILES);
        return -E2BIG;
    }
    l->files++;
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
    if (!add_job_file(l, buf, len, path, hint, err, errlen, &rc)) {
        rc = rail_calib_log_parse(buf, len, path, hint, &l->runs[l->nruns], err, errlen);
        if (rc == 0)
            l->nruns++;
    }
    free(buf);
    return rc;
}

static int has_log_suffix(const char *name)
{
    static const char *const sfx[] = {".log", ".txt", ".out", ".prof", ".prom", ".json"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
        size_t k = strlen(sfx[i]);
        if (n > k && strcmp(name + n - k, sfx[i]) == 0)
            return 1;
    }
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
    if (!S_ISDIR(st.st_mode)) {
        if (depth > 0 && (!S_ISREG(st.st_mode) || !has_log_suffix(path))) {
            l->skipped++;
            return 0;
        }
        return add_file(l, path, hint, err, errlen); /* named on the command line: must parse */
    }
    if (depth >= RAIL_CALIB_MAX_DEPTH) {
        l->skipped++;
        return 0;
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
