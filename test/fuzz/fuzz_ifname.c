/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_SOCKET_IFNAME: the syntax check and the matcher; a well-formed include list of plain
 * names matches each of its names. */
#include "fuzz_util.h"
#include "transport/net_ifname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[128], *s;
    if (size > 1024)
        return 0;
    s = fuzz_cstr(data, size);
    int ok = rail_ifname_spec_check(s, err, sizeof(err)) == 0;
    (void)rail_ifname_match(s, "eth0");
    (void)rail_ifname_match(s, "");
    if (ok && s[0] && s[0] != '^') {
        const char *names = s[0] == '=' ? s + 1 : s;
        char one[32];
        size_t len = strcspn(names, ",");
        if (len < sizeof(one)) {
            memcpy(one, names, len);
            one[len] = '\0';
            if (!rail_ifname_match(s, one))
                fuzz_fail("'%s' does not match its own entry '%s'", s, one);
        }
    }
    free(s);
    return 0;
}
