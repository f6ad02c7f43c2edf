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
    if (!colon)
        return 0;
    /* Port: up to the next ':' (2.30's ":rail:plane" follow and are ignored). */
    const char *pp = colon + 1, *end = s + n;
    const char *pe = memchr(pp, ':', (size_t)(end - pp));
    if (!pe)
        pe = end;
    uint64_t port;
    if (rail_parse_digits(pp, (size_t)(pe - pp), 3, 255, &port) != 0 || port < 1)
        return rail_fail(err, errlen, "entry %d ('%s'): port must be a number 1..255", idx + 1, q);
    e->port = (int)port;
    return 0;
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
    *f = tmp;
    return 0;
}

static bool name_matches(const char *dev, const char *name, bool exact)
{
    return exact ? strcmp(dev, name) == 0 : strncmp(dev, name, strlen(name)) == 0;
}

bool rail_hca_filter_match(const struct rail_hca_filter *f, const char *dev, int port)
{
    if (!dev)
        return false;
    if (!f || f->n <= 0)
        return true;
    int n = f->n < RAIL_HCA_FILTER_MAX ? f->n : RAIL_HCA_FILTER_MAX;
    bool hit = false;
    for (int i = 0; i < n && !hit; i++) {
        const struct rail_hca_filter_entry *e = &f->e[i];
        bool port_ok = e->port == RAIL_HCA_PORT_ANY || port == RAIL_HCA_PORT_ANY || e->port == port;
        hit = port_ok && name_matches(dev, e->name, f->exact);
    }
    return hit != f->exclude;
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
        if (e->port == RAIL_HCA_PORT_ANY)
            w = snprintf(buf + o, len - o, "%s%.*s", i ? "," : "", RAIL_HCA_NAME_MAX - 1, e->name);
        else
            w = snprintf(buf + o, len - o, "%s%.*s:%d", i ? "," : "", RAIL_HCA_NAME_MAX - 1,
                         e->name, e->port);
    }
    return (w < 0 || (size_t)w >= len - o) ? -ENOSPC : 0;
}
