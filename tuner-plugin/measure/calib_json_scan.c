/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/calib_json_scan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

#define STACK_MAX 64

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The end of a scalar (number, literal) starting at i: the offset of its last byte. */
static size_t scalar_end(const char *buf, size_t i, size_t lim)
{
    while (i + 1 < lim && !blank(buf[i + 1]) && !strchr(",:]}[{\"", buf[i + 1]))
        i++;
    return i;
}

/* The offset of the closing quote of the string opening at i, or lim when there is none. */
static size_t string_end(const char *buf, size_t i, size_t lim)
{
    for (i++; i < lim; i++) {
        if (buf[i] == '\\')
            i++;
        else if (buf[i] == '"')
            return i;
    }
    return lim;
}

/* One walk over the object: calls key(arg, owner, off, len) for every key when key is set (the
 * owner is the ordinal of the object the key is in). 0, or -EINVAL with the reason. */
static int walk(const char *buf, size_t len, size_t start, const struct rail_json_bounds *b,
                struct rail_json_shape *out, size_t *at, char *why, size_t whylen,
                int (*key)(void *arg, int owner, size_t off, size_t n), void *arg)
{
    char stack[STACK_MAX];
    int owner[STACK_MAX];
    int depth = 0, objects = 0, max_depth = b->max_depth < STACK_MAX ? b->max_depth : STACK_MAX;
    size_t lim = len - start > b->max_bytes ? start + b->max_bytes : len;
    bool expect_key = false;

    memset(out, 0, sizeof(*out));
    for (size_t i = start; i < lim; i++) {
        char c = buf[i];
        if (blank(c))
            continue;
        *at = i;
        if (c == '"') {
            size_t e = string_end(buf, i, lim);
            if (e == lim)
                break;
            if (depth > 0 && stack[depth - 1] == 'o' && expect_key) {
                out->members++;
                expect_key = false;
                if (key && key(arg, owner[depth - 1], i, e + 1 - i))
                    return -EEXIST;
            } else {
                out->values++;
            }
            i = e;
        } else if (c == '{' || c == '[') {
            out->values++;
            if (depth == max_depth)
                return rail_fail(why, whylen, "JSON nested deeper than %d levels", max_depth);
            stack[depth] = c == '{' ? 'o' : 'a';
            owner[depth++] = objects++;
            expect_key = c == '{';
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                out->end = i + 1;
                return 0;
            }
            expect_key = false;
        } else if (c == ',') {
            expect_key = depth > 0 && stack[depth - 1] == 'o';
        } else if (c == ':') {
            expect_key = false;
        } else {
            out->values++;
            i = scalar_end(buf, i, lim);
        }
        if (out->values > b->max_values)
            return rail_fail(why, whylen,
                             "more than %d JSON values in one object (an NCCL Inspector record "
                             "holds a few dozen)",
                             b->max_values);
    }
    if (lim < len) {
        *at = lim;
        return rail_fail(why, whylen,
                         "one JSON object longer than %zu bytes (an NCCL Inspector record is "
                         "about 1 KB)",
                         b->max_bytes);
    }
    *at = len;
    return rail_fail(why, whylen, "JSON: truncated object");
}

int rail_json_scan(const char *buf, size_t len, size_t start, const struct rail_json_bounds *b,
                   struct rail_json_shape *out, size_t *at, char *why, size_t whylen)
{
    *at = start;
    if (!buf || start >= len || buf[start] != '{')
        return rail_fail(why, whylen, "not a JSON object");
    return walk(buf, len, start, b, out, at, why, whylen, NULL, NULL);
}

struct keys {
    const char *buf;
    size_t *off, *len;
    int *owner, n, cap;
    size_t dup, dup_len;
};

static int on_key(void *arg, int owner, size_t off, size_t n)
{
    struct keys *k = arg;
    for (int i = 0; i < k->n; i++)
        if (k->owner[i] == owner && k->len[i] == n &&
            memcmp(k->buf + k->off[i], k->buf + off, n) == 0) {
            k->dup = off;
            k->dup_len = n;
            return 1;
        }
    if (k->n < k->cap) {
        k->off[k->n] = off;
        k->len[k->n] = n;
        k->owner[k->n++] = owner;
    }
    return 0;
}

int rail_json_dup_key(const char *buf, size_t start, size_t end, size_t *at, char *key,
                      size_t keylen)
{
    struct rail_json_bounds b = {end - start, INT32_MAX, STACK_MAX};
    struct rail_json_shape sh;
    struct keys k = {.buf = buf, .cap = 4096};
    char why[8];
    int found = 0;

    k.off = malloc((size_t)k.cap * sizeof(*k.off));
    k.len = malloc((size_t)k.cap * sizeof(*k.len));
    k.owner = malloc((size_t)k.cap * sizeof(*k.owner));
    if (k.off && k.len && k.owner &&
        walk(buf, end, start, &b, &sh, at, why, sizeof(why), on_key, &k) == -EEXIST) {
        *at = k.dup;
        rail_quote(key, keylen, buf + k.dup + 1, k.dup_len - 2); /* without the quotes */
        found = 1;
    }
    free(k.off);
    free(k.len);
    free(k.owner);
    return found;
}
