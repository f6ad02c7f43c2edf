/* Small string helpers shared by the parsers: error-buffer writers and a printable copy of input
 * for messages. I/O-free; nothing here allocates. */
#ifndef NCCL_RAIL_STRUTIL_H
#define NCCL_RAIL_STRUTIL_H

#include <stddef.h>

/* printf into err[0..errlen) (truncated, always NUL-terminated); nothing when err is NULL or
 * errlen is 0. */
void rail_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rail_set_err, then return -EINVAL: `return rail_fail(err, errlen, "bad %s", what);`. */
int rail_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* err = "" (when err && errlen): the state a parser's caller sees on success. */
void rail_clear_err(char *err, size_t errlen);

/* Printable copy of s[0..n) for messages, NUL-terminated in out[0..outlen): at most outlen - 4
 * characters, each one isprint() rejects shown as '?', then "..." when s was longer. s may hold
 * NULs (n counts). NULL s or outlen < 4 give "" (nothing is written for outlen 0). */
void rail_quote(char *out, size_t outlen, const char *s, size_t n);

#endif
