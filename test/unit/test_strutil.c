/* strutil: error-buffer writers and the printable copy used in messages. */
#include "check.h"
#include "strutil.h"

#include <errno.h>

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

int main(void)
{
    test_set_err();
    test_quote();
    return check_report("test_strutil");
}
