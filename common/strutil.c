/* SPDX-License-Identifier: Apache-2.0 */
/* Error-buffer writers, printable quoting, strict number parsing (see strutil.h). */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void set_err_v(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen) {
        vsnprintf(err, errlen, fmt, ap);
        rail_text_sanitize(err);
    }
}

void rail_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_err_v(err, errlen, fmt, ap);
    va_end(ap);
}

int rail_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_err_v(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

void rail_clear_err(char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
}

void rail_quote(char *out, size_t outlen, const char *s, size_t n)
{
    if (!out || !outlen)
        return;
    if (outlen < 4 || !s) {
        out[0] = '\0';
        return;
    }
    size_t max = outlen - 4, o = 0;
    for (size_t i = 0; i < n && o < max; i++)
        out[o++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (n > max)
        out[o++] = '.', out[o++] = '.', out[o++] = '.';
    out[o] = '\0';
}

int rail_parse_digits(const char *s, size_t n, size_t max_digits, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || n == 0 || n > max_digits)
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || d > max || v > (max - d) / 10)
            return -EINVAL;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int rail_parse_long(const char *s, int base, long lo, long hi, long *out)
{
    char *end;
    long v;
    int saved_errno = errno, rc = -EINVAL;
    if (!s)
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, base);
    if (!errno && end != s && *end == '\0' && v >= lo && v <= hi) {
        *out = v;
        rc = 0;
    }
    errno = saved_errno;
    return rc;
}

/* Length of the well-formed UTF-8 character at s (2..4), 0 when it is not one. */
static size_t utf8_char(const unsigned char *s)
{
    unsigned c = s[0], cp;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
        return 0; /* overlong, out of range, a surrogate, or a C1 control */
    return n;
}

size_t rail_text_sanitize(char *s)
{
    size_t replaced = 0;
    unsigned char *p = (unsigned char *)s;
    while (p && *p) {
        size_t n;
        if (*p >= 0x20 && *p < 0x7f) {
            p++;
            continue;
        }
        n = *p >= 0x80 ? utf8_char(p) : 0;
        if (n) {
            p += n;
            continue;
        }
        *p++ = '?';
        replaced++;
    }
    return replaced;
}

int rail_parse_decimal(const char *s, double lo, double hi, double *out)
{
    const char *p = s;
    char *end;
    size_t digits = 0;
    double v;
    int saved_errno = errno;

    if (!s)
        return -EINVAL;
    for (; isdigit((unsigned char)*p); p++)
        digits++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            digits++;
    if (!digits)
        return -EINVAL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p)
        return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    errno = saved_errno;
    if (end != p)
        return -EINVAL;
    if (!isfinite(v) || v < lo || v > hi)
        return -ERANGE;
    *out = v;
    return 0;
}

void rail_text_printf(struct rail_text_buf *o, const char *fmt, ...)
{
    va_list ap;
    size_t room = o->pos < o->len ? o->len - o->pos : 0;
    va_start(ap, fmt);
    int n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->pos += (size_t)n;
}

size_t rail_text_finish(struct rail_text_buf *o)
{
    if (o->len)
        o->buf[o->pos < o->len ? o->pos : o->len - 1] = '\0';
    return o->pos;
}
