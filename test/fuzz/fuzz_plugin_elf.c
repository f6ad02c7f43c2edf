/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin library and the loader cache as nccl-rail doctor reads them, as data (never loaded):
 * doctor_elf_tables and doctor_ldcache_lookup never read outside the input, and what they return
 * is bounded text. The first byte picks the parser. */
#include "doctor_deploy.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct doctor_lib_probe p;
    char why[256], path[512];
    if (size < 1)
        return 0;
    fuzz_quiet();
    /* Copies of exactly the input's size: ASan sees any read past its end. */
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    memcpy(copy, data + 1, size - 1);
    if (data[0] & 1) {
        if (doctor_ldcache_lookup(copy, size - 1, "libnccl-net.so", path, sizeof(path)) == 0 &&
            (path[0] != '/' || strlen(path) >= sizeof(path)))
            fuzz_fail("cache path '%s'", path);
    } else {
        memset(&p, 0, sizeof(p));
        if (doctor_elf_tables(copy, size - 1, &p, why, sizeof(why)) == 0 &&
            (p.net_abi < 0 || p.net_abi > 11 || p.tuner_abi < 0 || p.tuner_abi > 5 ||
             strlen(p.net_name) >= sizeof(p.net_name)))
            fuzz_fail("net v%d tuner v%d", p.net_abi, p.tuner_abi);
    }
    free(copy);
    return 0;
}
