/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_HCA parsing and matching (see hca_filter.h). */
#include "transport/hca_filter.h"
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool name_char_ok(char c)
{
    return isgraph((unsigned char)c) && c != '^' && c != '=';
}

/* Parse one entry s[0..n) (no comma inside) into *e. */
static int parse_entry(const char *s, size_t n, int idx, struct rail_hca_filter_entry *e, char *err,
                       size_t errlen)
{
    char q[48];
    rail_quote(q, sizeof(q), s, n);
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    if (name_len == 0)
        return rail_fail(err, errlen, "entry %d ('%s'): empty HCA name", idx + 1, q);
    if (name_len >= RAIL_HCA_NAME_MAX)
        return rail_fail(err, errlen, "entry %d ('%s'): HCA name longer than %d characters",
                         idx + 1, q, RAIL_HCA_NAME_MAX - 1);
    for (size_t i = 0; i < name_len; i++) {
        if (!name_char_ok(s[i])) {
            const char *what = (s[i] == '^' || s[i] == '=')
                                   ? "'^' and '=' are only allowed at the start of the list"
                                   : "white space or control character in HCA name";
            return rail_fail(err, errlen, "entry %d ('%s'): %s", idx + 1, q, what);
        }
    }
    memcpy(e->name, s, name_len);
    e->name[name_len] = '\0';
    e->port = RAIL_HCA_PORT_ANY;
    e->rail = e->plane = RAIL_HCA_ID_UNDEF;
    if (!colon)
        return 0;
    /* port:rail:plane, each may be empty (= unset). */
    static const struct {
        const char *what;
        size_t digits;
        uint64_t lo, hi;
    } field[3] = {{"port must be a number 1..255", 3, 1, 255},
                  {"rail must be a number 0..32767", 5, 0, RAIL_HCA_RAIL_MAX},
                  {"plane must be a number 0..16383", 5, 0, RAIL_HCA_PLANE_MAX}};
    int *out[3] = {&e->port, &e->rail, &e->plane};
    const char *fp = colon + 1, *end = s + n;
    for (int k = 0;; k++) {
        const char *fe = memchr(fp, ':', (size_t)(end - fp));
        if (!fe)
            fe = end;
        if (k == 3)
            return rail_fail(err, errlen, "entry %d ('%s'): more than name:port:rail:plane",
                             idx + 1, q);
        uint64_t v;
        if (fe > fp) {
            if (rail_parse_digits(fp, (size_t)(fe - fp), field[k].digits, field[k].hi, &v) != 0 ||
                v < field[k].lo)
                return rail_fail(err, errlen, "entry %d ('%s'): %s", idx + 1, q, field[k].what);
            *out[k] = (int)v;
        }
        if (fe == end)
            return 0;
        fp = fe + 1;
    }
}

/* Distinct planes of the entries (beside "unknown") that NCCL can number. */
static int count_planes(const struct rail_hca_filter *f)
{
    int n = 0;
    for (int i = 0; i < f->n; i++) {
        bool dup = f->e[i].plane == RAIL_HCA_ID_UNDEF;
        for (int k = 0; k < i && !dup; k++)
            dup = f->e[k].plane == f->e[i].plane;
        n += !dup;
    }
    return n;
}

int rail_hca_filter_parse(const char *spec, struct rail_hca_filter *f, char *err, size_t errlen)
{
    rail_clear_err(err, errlen);
    if (!f)
        return rail_fail(err, errlen, "no filter to fill");
    memset(f, 0, sizeof(*f));
    if (!spec || !*spec)
        return 0;
    struct rail_hca_filter tmp;
    memset(&tmp, 0, sizeof(tmp));
    const char *p = spec;
    if (*p == '^')
        tmp.exclude = true, p++;
    if (*p == '=')
        tmp.exact = true, p++;
    if (!*p)
        return rail_fail(err, errlen, "'%s' lists no HCA", spec);
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (tmp.n == RAIL_HCA_FILTER_MAX)
            return rail_fail(err, errlen, "more than %d HCA entries", RAIL_HCA_FILTER_MAX);
        int rc = parse_entry(p, n, tmp.n, &tmp.e[tmp.n], err, errlen);
        if (rc)
            return rc;
        tmp.n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (count_planes(&tmp) > RAIL_HCA_PLANES_MAX)
        return rail_fail(err, errlen, "more than %d distinct planes", RAIL_HCA_PLANES_MAX);
    *f = tmp;
    return 0;
}

static bool name_matches(const char *dev, const char *name, bool exact)
{
    return exact ? strcmp(dev, name) == 0 : strncmp(dev, name, strlen(name)) == 0;
}

bool rail_hca_filter_lookup(const struct rail_hca_filter *f, const char *dev, int port, int *rail,
                            int *plane)
{
    int r = RAIL_HCA_ID_UNDEF, pl = RAIL_HCA_ID_UNDEF;
    bool result;
    if (!dev) {
        result = false;
    } else if (!f || f->n <= 0) {
        result = true;
    } else {
        int n = f->n < RAIL_HCA_FILTER_MAX ? f->n : RAIL_HCA_FILTER_MAX;
        const struct rail_hca_filter_entry *hit = NULL;
        for (int i = 0; i < n && !hit; i++) {
            const struct rail_hca_filter_entry *e = &f->e[i];
            bool port_ok =
                e->port == RAIL_HCA_PORT_ANY || port == RAIL_HCA_PORT_ANY || e->port == port;
            if (port_ok && name_matches(dev, e->name, f->exact))
                hit = e;
        }
        result = (hit != NULL) != f->exclude;
        if (hit && !f->exclude)
            r = hit->rail, pl = hit->plane;
    }
    if (rail)
        *rail = r;
    if (plane)
        *plane = pl;
    return result;
}

bool rail_hca_filter_match(const struct rail_hca_filter *f, const char *dev, int port)
{
    return rail_hca_filter_lookup(f, dev, port, NULL, NULL);
}

/* Index of plane among the distinct planes of all[] (0 = unknown), or -1. */
static int plane_index(const int *all, int nall, int plane, int *count)
{
    int uniq[RAIL_HCA_PLANES_MAX + 1] = {RAIL_HCA_ID_UNDEF}, nu = 1, found = -1;
    for (int i = 0; i < nall; i++) {
        int k = 0;
        while (k < nu && uniq[k] != all[i])
            k++;
        if (k == nu) {
            if (nu == RAIL_HCA_PLANES_MAX + 1)
                return -1;
            uniq[nu++] = all[i];
        }
    }
    for (int k = 0; k < nu && found < 0; k++)
        if (uniq[k] == plane)
            found = k;
    *count = nu;
    return found;
}

int rail_hca_merge_ids(const int *all_planes, int nall, const int *rails, const int *planes, int n,
                       int *rail, int *plane)
{
    if (!all_planes || !rails || !planes || !rail || !plane || n < 1 || nall < 0)
        return -EINVAL;
    if (n == 1) {
        *rail = rails[0];
        *plane = planes[0];
        return 0;
    }
    int r = rails[0], pl = RAIL_HCA_PLANE_VIRT;
    for (int i = 0; i < n; i++) {
        int count = 0, idx = plane_index(all_planes, nall, planes[i], &count);
        if (idx < 0)
            return -EINVAL;
        if (rails[i] == RAIL_HCA_ID_UNDEF || rails[i] != r)
            r = RAIL_HCA_ID_UNDEF;
        pl |= 1 << idx;
    }
    *rail = r;
    *plane = pl;
    return 0;
}

int rail_hca_filter_format(const struct rail_hca_filter *f, char *buf, size_t len)
{
    if (!f || !buf || !len)
        return -EINVAL;
    buf[0] = '\0';
    if (f->n <= 0)
        return 0;
    size_t o = 0;
    int w = snprintf(buf, len, "%s%s", f->exclude ? "^" : "", f->exact ? "=" : "");
    int n = f->n < RAIL_HCA_FILTER_MAX ? f->n : RAIL_HCA_FILTER_MAX;
    for (int i = 0; i < n && w >= 0 && (size_t)w < len - o; i++) {
        o += (size_t)w;
        const struct rail_hca_filter_entry *e = &f->e[i];
        char tail[40] = "", fld[3][12] = {"", "", ""};
        int last = e->plane != RAIL_HCA_ID_UNDEF  ? 3
                   : e->rail != RAIL_HCA_ID_UNDEF ? 2
                   : e->port != RAIL_HCA_PORT_ANY ? 1
                                                  : 0;
        const int val[3] = {e->port, e->rail, e->plane};
        for (int k = 0; k < 3; k++)
            if (val[k] >= 0)
                snprintf(fld[k], sizeof(fld[k]), "%d", val[k]);
        if (last)
            snprintf(tail, sizeof(tail), ":%s%s%s%s%s", fld[0], last > 1 ? ":" : "",
                     last > 1 ? fld[1] : "", last > 2 ? ":" : "", last > 2 ? fld[2] : "");
        w = snprintf(buf + o, len - o, "%s%.*s%s", i ? "," : "", RAIL_HCA_NAME_MAX - 1, e->name,
                     tail);
    }
    return (w < 0 || (size_t)w >= len - o) ? -ENOSPC : 0;
}
