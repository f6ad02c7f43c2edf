/* SPDX-License-Identifier: Apache-2.0 */
/* rail_verbs_create_qp's inline-data request (transport/net_verbs.c) against a fake verbs table:
 * a device that grants the size reports what it granted; one that refuses it (providers refuse
 * an inline size above their limit) still gives a QP, without inline data; no request asks for
 * none; a device that refuses every QP is an error naming the call. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "transport/net_verbs.h"

static struct ibv_qp g_qp;
static int g_limit;  /* largest inline size the fake device accepts */
static int g_bonus;  /* it grants this much more than asked (providers round up) */
static int g_refuse; /* it refuses every QP */
static int g_calls;
static uint32_t g_asked[4];

static struct ibv_qp *fake_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    (void)pd;
    if (g_calls < 4)
        g_asked[g_calls] = attr->cap.max_inline_data;
    g_calls++;
    if (g_refuse || (int)attr->cap.max_inline_data > g_limit) {
        errno = EINVAL;
        return NULL;
    }
    if (attr->cap.max_inline_data)
        attr->cap.max_inline_data += (uint32_t)g_bonus;
    return &g_qp;
}

static int create(int *max_inline, char *err, size_t errlen)
{
    struct ibv_qp *qp = NULL;
    g_calls = 0;
    memset(g_asked, 0xff, sizeof(g_asked));
    int rc = rail_verbs_create_qp(NULL, NULL, 8, 8, 2, max_inline, NULL, &qp, "fake0", err, errlen);
    CHECK(rc == 0 ? qp == &g_qp : qp == NULL);
    return rc;
}

int main(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.create_qp = fake_create_qp;
    rail_verbs_set_ops(&ops);
    char err[200];

    /* Granted as asked, and rounded up: the caller learns what the QP has. */
    g_limit = 512, g_bonus = 0, g_refuse = 0;
    int n = 256;
    CHECK_EQ_INT(create(&n, err, sizeof(err)), 0);
    CHECK_EQ_INT(n, 256);
    CHECK_EQ_INT(g_calls, 1);
    CHECK_EQ_INT(g_asked[0], 256);
    g_bonus = 16;
    n = 256;
    CHECK_EQ_INT(create(&n, err, sizeof(err)), 0);
    CHECK_EQ_INT(n, 272);

    /* Refused: a second QP without inline data, never no QP. */
    g_limit = 128, g_bonus = 0;
    n = 256;
    CHECK_EQ_INT(create(&n, err, sizeof(err)), 0);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(g_calls, 2);
    CHECK_EQ_INT(g_asked[0], 256);
    CHECK_EQ_INT(g_asked[1], 0);

    /* Nothing asked (0 or NULL): one call without inline data. */
    n = 0;
    CHECK_EQ_INT(create(&n, err, sizeof(err)), 0);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(g_calls, 1);
    CHECK_EQ_INT(g_asked[0], 0);
    CHECK_EQ_INT(create(NULL, err, sizeof(err)), 0);
    CHECK_EQ_INT(g_calls, 1);
    CHECK_EQ_INT(g_asked[0], 0);

    /* No QP at all: an error naming the call and the device; no inline data reported. */
    g_refuse = 1;
    n = 256;
    err[0] = '\0';
    CHECK(create(&n, err, sizeof(err)) < 0);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(g_calls, 2);
    CHECK_MSG(strstr(err, "fake0") && strstr(err, "ibv_create_qp"), "err: %s", err);

    rail_verbs_set_ops(NULL);
    return check_report("test_net_verbs_qp");
}
