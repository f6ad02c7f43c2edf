/* SPDX-License-Identifier: Apache-2.0 */
/* Small string helpers shared by the parsers: error-buffer writers, a printable copy of input for
 * messages, and strict number parsing. I/O-free; nothing here allocates. */
#ifndef NCCL_RAIL_STRUTIL_H
#define NCCL_RAIL_STRUTIL_H

#include <stddef.h>
#include <stdint.h>

/* printf into err[0..errlen) (truncated, always NUL-terminated); nothing when err is NULL or
 * errlen is 0. The result is safe text (rail_text_sanitize): messages quote input. */
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

/* In place: every byte that is not printable ASCII or part of a well-formed UTF-8 character
 * becomes '?', and so does every control character (C0, DEL, and the C1 range U+0080..U+009F,
 * which terminals read as escape sequences). Text from input files then reaches a terminal, a
 * log line or a JSON document as valid UTF-8 without escape sequences. Returns the number of
 * bytes replaced. NULL: 0. */
size_t rail_text_sanitize(char *s);

/* s[0..n) as a plain decimal number: 1..max_digits digits and nothing else (no sign, no blanks),
 * value at most max (no overflow whatever max is). 0 with *out set, or -EINVAL (*out untouched). */
int rail_parse_digits(const char *s, size_t n, size_t max_digits, uint64_t max, uint64_t *out);

/* The whole string s as strtol(s, base) reads it (leading white space and a sign allowed, nothing
 * after the number), in [lo, hi]. 0 with *out set, or -EINVAL (*out untouched) for NULL, empty,
 * trailing characters, overflow or out of range. */
int rail_parse_long(const char *s, int base, long lo, long hi, long *out);

/* The whole string s as a plain decimal number: digits with at most one '.', then optionally
 * an exponent (e/E, a sign, digits); no sign in front, no blanks, no hex floats, no "inf" or
 * "nan". The value must be finite and in [lo, hi]. 0 with *out set, or -EINVAL (-ERANGE when
 * the syntax is fine but the value is outside [lo, hi]); *out is untouched on failure. */
int rail_parse_decimal(const char *s, double lo, double hi, double *out);

/* A bounded text builder: appends formatted text while room lasts and counts every byte asked
 * for (snprintf's rule), so a caller learns the size it needs. */
struct rail_text_buf {
    char *buf;
    size_t len, pos;
};
void rail_text_printf(struct rail_text_buf *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* NUL-terminates what fit (when len > 0); returns the bytes written or needed. */
size_t rail_text_finish(struct rail_text_buf *o);

#endif
