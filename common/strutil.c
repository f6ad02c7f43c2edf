/* Error-buffer writers and printable quoting (see strutil.h). */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static void set_err_v(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
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
