/* SPDX-License-Identifier: Apache-2.0 */
/* strutil: error-buffer writers, the printable copy used in messages, strict number parsing. */
#include "check.h"
#include "strutil.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>

static void test_set_err(void)
{
    char err[16];
    rail_set_err(err, sizeof(err), "entry %d: %s", 3, "bad");
    CHECK_EQ_STR(err, "entry 3: bad");
    rail_set_err(err, sizeof(err), "%s", "a message longer than the buffer");
    CHECK_EQ_STR(err, "a message longe"); /* truncated, NUL-terminated */
    rail_set_err(err, 1, "%s", "x");
    CHECK_EQ_STR(err, "");
    err[0] = 'k';
    rail_set_err(err, 0, "%s", "x"); /* errlen 0: untouched */
    CHECK(err[0] == 'k');
    rail_set_err(NULL, 16, "%s", "x"); /* no buffer: no crash */

    CHECK_EQ_INT(rail_fail(err, sizeof(err), "port %d", 7), -EINVAL);
    CHECK_EQ_STR(err, "port 7");
    CHECK_EQ_INT(rail_fail(NULL, 0, "port %d", 7), -EINVAL);

    rail_clear_err(err, sizeof(err));
    CHECK_EQ_STR(err, "");
    err[0] = 'k';
    rail_clear_err(err, 0);
    CHECK(err[0] == 'k');
    rail_clear_err(NULL, 16);
}

static void test_quote(void)
{
    char q[12], tiny[4];
    rail_quote(q, sizeof(q), "mlx5_0", 6);
    CHECK_EQ_STR(q, "mlx5_0");
    rail_quote(q, sizeof(q), "a\tb\nc\x01\xff", 7);
    CHECK_EQ_STR(q, "a?b?c??");
    rail_quote(q, sizeof(q), "a\0b", 3); /* n counts, NULs included */
    CHECK_EQ_STR(q, "a?b");
    rail_quote(q, sizeof(q), "abcdefgh", 8); /* exactly outlen - 4 characters: kept whole */
    CHECK_EQ_STR(q, "abcdefgh");
    rail_quote(q, sizeof(q), "abcdefghi", 9); /* one more: cut and marked */
    CHECK_EQ_STR(q, "abcdefgh...");
    rail_quote(q, sizeof(q), "abc", 0);
    CHECK_EQ_STR(q, "");
    rail_quote(q, sizeof(q), NULL, 5);
    CHECK_EQ_STR(q, "");
    rail_quote(tiny, sizeof(tiny), "abc", 3);
    CHECK_EQ_STR(tiny, "...");
    rail_quote(tiny, 3, "abc", 3);
    CHECK_EQ_STR(tiny, "");
    tiny[0] = 'k';
    rail_quote(tiny, 0, "abc", 3);
    CHECK(tiny[0] == 'k');
    rail_quote(NULL, 8, "abc", 3);
}

static void test_parse_digits(void)
{
    uint64_t v = 77;
    CHECK_EQ_INT(rail_parse_digits("255", 3, 3, 255, &v), 0);
    CHECK_EQ_INT(v, 255);
    CHECK_EQ_INT(rail_parse_digits("0", 1, 3, 255, &v), 0);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(rail_parse_digits("12:3", 2, 3, 255, &v), 0); /* only s[0..n) counts */
    CHECK_EQ_INT(v, 12);
    CHECK_EQ_INT(rail_parse_digits("007", 3, 3, 255, &v), 0);
    CHECK_EQ_INT(v, 7);
    v = 77;
    CHECK_EQ_INT(rail_parse_digits("256", 3, 3, 255, &v), -EINVAL);  /* above max */
    CHECK_EQ_INT(rail_parse_digits("0007", 4, 3, 255, &v), -EINVAL); /* too many digits */
    CHECK_EQ_INT(rail_parse_digits("", 0, 3, 255, &v), -EINVAL);     /* no digit */
    CHECK_EQ_INT(rail_parse_digits("1a", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("+1", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("-1", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits(" 1", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("1 ", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("1\0", 2, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits(NULL, 1, 3, 255, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("5", 1, 3, 4, &v), -EINVAL); /* a single digit above max */
    CHECK_EQ_INT(v, 77);                                        /* untouched by every failure */
    /* The whole uint64_t range, and overflow by one. */
    CHECK_EQ_INT(rail_parse_digits("18446744073709551615", 20, SIZE_MAX, UINT64_MAX, &v), 0);
    CHECK(v == UINT64_MAX);
    CHECK_EQ_INT(rail_parse_digits("18446744073709551616", 20, SIZE_MAX, UINT64_MAX, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_digits("99999999999999999999999", 23, SIZE_MAX, UINT64_MAX, &v),
                 -EINVAL);
    CHECK(v == UINT64_MAX);
}

static void test_parse_long(void)
{
    long v = 77;
    CHECK_EQ_INT(rail_parse_long("16", 10, 1, 32, &v), 0);
    CHECK_EQ_INT(v, 16);
    CHECK_EQ_INT(rail_parse_long(" +8", 10, 1, 32, &v), 0); /* as strtol: blanks, sign */
    CHECK_EQ_INT(v, 8);
    CHECK_EQ_INT(rail_parse_long("0x10de", 0, 0, 0xffff, &v), 0);
    CHECK_EQ_INT(v, 0x10de);
    CHECK_EQ_INT(rail_parse_long("-1", 0, -1, 1, &v), 0);
    CHECK_EQ_INT(v, -1);
    v = 77;
    CHECK_EQ_INT(rail_parse_long("33", 10, 1, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("0", 10, 1, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("", 10, 0, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("  ", 10, 0, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("16 ", 10, 1, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("16x", 10, 1, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("0x10", 10, 0, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long(NULL, 10, 0, 32, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("99999999999999999999", 10, LONG_MIN, LONG_MAX, &v), -EINVAL);
    CHECK_EQ_INT(rail_parse_long("-99999999999999999999", 10, LONG_MIN, LONG_MAX, &v), -EINVAL);
    CHECK_EQ_INT(v, 77);
    /* errno is left as the caller had it. */
    errno = EAGAIN;
    CHECK_EQ_INT(rail_parse_long("99999999999999999999", 10, 0, 1, &v), -EINVAL);
    CHECK_EQ_INT(errno, EAGAIN);
    CHECK_EQ_INT(rail_parse_long("1", 10, 0, 1, &v), 0);
    CHECK_EQ_INT(errno, EAGAIN);
}

/* Issue 22: text from input reaches terminals and JSON without escape sequences and as valid
 * UTF-8; rail_set_err (every parser's message) applies it. */
static void test_sanitize(void)
{
    static const struct {
        const char *in, *out;
        size_t replaced;
    } cases[] = {
        {"plain text 123", "plain text 123", 0},
        {"\x1b[31mred\x1b[0m", "?[31mred?[0m", 2},
        {"\x1b]0;title\x07", "?]0;title?", 2},
        {"a\tb\nc\rd\x7f", "a?b?c?d?", 4},
        {"\xc2\x9b"
         "31m",
         "??31m", 2}, /* C1 CSI, UTF-8 encoded */
        {"\x9b"
         "31m",
         "?31m", 1}, /* C1 CSI, 8-bit */
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         0},
        {"\xff\xfe", "??", 2},
        {"\xc0\xaf", "??", 2},               /* overlong '/' */
        {"\xed\xa0\x80", "???", 3},          /* a surrogate */
        {"\xf4\x90\x80\x80", "????", 4},     /* above U+10FFFF */
        {"ab\xe2\x82", "ab??", 2},           /* cut short at the end */
        {"\xc2\xa0nbsp", "\xc2\xa0nbsp", 0}, /* U+00A0: printable */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", cases[i].in);
        size_t n = rail_text_sanitize(buf);
        CHECK_MSG(strcmp(buf, cases[i].out) == 0 && n == cases[i].replaced, "case %zu: '%s' %zu", i,
                  buf, n);
    }
    CHECK_EQ_INT(rail_text_sanitize(NULL), 0);
    char err[64];
    rail_set_err(err, sizeof(err), "bad '%s'", "\x1b[2J\xff");
    CHECK_EQ_STR(err, "bad '?[2J?'");
}

int main(void)
{
    test_set_err();
    test_sanitize();
    test_quote();
    test_parse_digits();
    test_parse_long();
    return check_report("test_strutil");
}
