/* SPDX-License-Identifier: Apache-2.0 */
/* A whole rules file through rail_rules_load (the safe read, BOM, CRLF, long lines, NUL bytes,
 * line limits), strict and lenient; every loaded rule is matchable. */
#include "fuzz_util.h"
#include "decide/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_rules r;
    char err[512];
    const char *path;
    if (size > (1 << 20))
        return 0;
    fuzz_quiet();
    path = fuzz_file(data, size, ".conf");
    for (int lenient = 0; lenient < 2; lenient++) {
        int rc = rail_rules_load(path, lenient, &r, err, sizeof(err));
        if (rc == 0)
            for (int i = 0; i < r.n; i++)
                if (!rail_rules_match(&r, r.rules[i].coll, (size_t)r.rules[i].min_bytes,
                                      r.rules[i].nnodes < 0 ? 1 : r.rules[i].nnodes,
                                      r.rules[i].nranks < 0 ? 1 : r.rules[i].nranks,
                                      r.rules[i].pipe_ops < 0 ? 1 : r.rules[i].pipe_ops,
                                      r.rules[i].reg_buff < 0 ? 0 : r.rules[i].reg_buff))
                    fuzz_fail("rule %d of a loaded file matches nothing", i);
        if (rc != 0 && r.n != 0)
            fuzz_fail("failed load left %d rules", r.n);
        rail_rules_free(&r);
    }
    return 0;
}
