/* SPDX-License-Identifier: Apache-2.0 */
/* netbench's pure helpers (byte patterns, message stamps) and its plugin loader's refusals. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "netbench_util.h"

static void test_patterns(void)
{
    static const size_t sizes[] = {0, 1, 3, 8, 1001, 4096};
    uint8_t *b = malloc(4096), *c = malloc(4096);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        nb_fill(b, n, 7);
        CHECK_EQ_INT(nb_compare(b, 0, n, 7), -1);
        if (n) {
            b[n / 2] ^= 0x10;
            CHECK_EQ_INT(nb_compare(b, 0, n, 7), (long)(n / 2));
            b[n / 2] ^= 0x10;
        }
    }
    /* Different seeds differ early; a range check ignores bytes outside it. */
    nb_fill(b, 4096, 1);
    nb_fill(c, 4096, 2);
    CHECK(memcmp(b, c, 64) != 0);
    CHECK(nb_compare(b, 0, 4096, 2) >= 0 && nb_compare(b, 0, 4096, 2) < 16);
    b[0] ^= 1;
    b[4095] ^= 1;
    CHECK_EQ_INT(nb_compare(b, 1, 4095, 1), -1);
    CHECK_EQ_INT(nb_compare(b, 1, 4096, 1), 4095);
    free(b);
    free(c);
}

static void test_stamps(void)
{
    const size_t n = 1 << 16;
    uint8_t *b = malloc(n);
    nb_fill(b, n, 3); /* buffer 3 */
    nb_stamp(b, n, 42);
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 42, 1), -1);
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 42, 0), -1);
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 41, 0), 0); /* a stale message */
    CHECK_EQ_INT(nb_check_msg(b, n, 4, 42, 1), 8); /* the wrong buffer's pattern */
    b[n / 3] ^= 0x80;
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 42, 0), -1); /* stamps only: not looked at */
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 42, 1), (long)(n / 3));
    b[n / 3] ^= 0x80;
    b[n - 1] ^= 1; /* half-written message: the end stamp is wrong */
    CHECK_EQ_INT(nb_check_msg(b, n, 3, 42, 0), (long)n - 8);
    /* Messages under 16 bytes carry a pattern of their number throughout. */
    nb_stamp(b, 8, 5);
    CHECK_EQ_INT(nb_check_msg(b, 8, 0, 5, 0), -1);
    CHECK(nb_check_msg(b, 8, 0, 6, 0) >= 0);
    free(b);
}

static void test_loader(void)
{
    struct nb_net n;
    char err[300];
    CHECK_EQ_INT(nb_net_load(&n, "/nonexistent/libnccl-net-x.so", 0, 0, err, sizeof(err)), -1);
    CHECK(strstr(err, "dlopen") != NULL);
    CHECK_EQ_INT(nb_net_load(&n, "libm.so.6", 0, 0, err, sizeof(err)), -1);
    CHECK(strstr(err, "no ncclNetPlugin_v6 .. v12") != NULL);
    const char *so = RAIL_BINARY_DIR "/libnccl-net-rail.so";
    CHECK_EQ_INT(nb_net_load(&n, so, 5, 0, err, sizeof(err)), -1);
    CHECK(strstr(err, "no ncclNetPlugin_v5") != NULL);
    /* Whether init succeeds depends on this machine's RDMA devices; the table choice does not. */
    int rc = nb_net_load(&n, so, 0, 0, err, sizeof(err));
    CHECK_EQ_INT(n.version, 11);
    CHECK(strcmp(n.name, "RAIL") == 0);
    if (rc == 0)
        nb_net_finalize(&n);
    rc = nb_net_load(&n, so, 8, 0, err, sizeof(err));
    CHECK_EQ_INT(n.version, 8);
    if (rc == 0)
        nb_net_finalize(&n);
}

int main(void)
{
    test_patterns();
    test_stamps();
    test_loader();
    return check_report("test_netbench");
}
