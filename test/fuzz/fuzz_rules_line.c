/* SPDX-License-Identifier: Apache-2.0 */
/* One rules-file line: rail_rules_parse_line never crashes, and an accepted rule formats back to
 * a line that parses to the same rule. */
#include "fuzz_util.h"
#include "decide/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_rule a, b;
    char err[256], line[512];
    char *s;
    if (size > 4096)
        return 0;
    fuzz_quiet();
    s = fuzz_cstr(data, size);
    if (rail_rules_parse_line(s, &a, err, sizeof(err)) == 1) {
        if (rail_rule_format(&a, line, sizeof(line)) >= (int)sizeof(line))
            fuzz_fail("formatted rule longer than %zu", sizeof(line));
        if (rail_rules_parse_line(line, &b, err, sizeof(err)) != 1)
            fuzz_fail("'%s' does not parse back: %s", line, err);
        if (memcmp(&a, &b, sizeof(a)) != 0)
            fuzz_fail("'%s' parses back to another rule", line);
    }
    free(s);
    return 0;
}
