/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL_IB_MQP_RETRY_ALL / _CNT / _SLEEP_MSEC (transport/net_verbs.c): a QP transition that fails
 * is retried as NCCL retries ibv_modify_qp.
 *   - the rule itself (rail_mqp_retryable): ETIMEDOUT only, any error with RETRY_ALL, never past
 *     RETRY_CNT retries, never a success;
 *   - rail_verbs_qp_connect in front of a fake table whose modify_qp fails N times: with
 *     ETIMEDOUT it connects after N retries; with fewer retries allowed it fails naming the
 *     transition; EINVAL is not retried unless RETRY_ALL=1; the sleeps grow k * SLEEP_MSEC;
 *   - in a fault-injection build, on the shm provider under NCCL_RAIL_FAULT=modify_qp:count=N
 *     (the fault layer): the same, through the real ops stack. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "transport/net_verbs.h"
#include "transport/shm_fabric.h"
#include "transport/shm_verbs.h"
#ifdef RAIL_FAULT_INJECTION
#include "transport/verbs_fault_ops.h"
#endif

static struct ibv_qp g_qp;
static int g_fail;  /* modify_qp calls still to fail */
static int g_err;   /* with this errno (positive, as libibverbs) */
static int g_calls; /* modify_qp calls made */

static int fake_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    (void)qp, (void)attr, (void)mask;
    g_calls++;
    if (g_fail > 0) {
        g_fail--;
        return g_err;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const struct rail_qp_path k_path = {.port = 1, .timeout = 14, .retry_cnt = 7};
static const struct rail_qp_remote k_remote = {
    .qpn = 2, .link_layer = IBV_LINK_LAYER_INFINIBAND, .lid = 1, .mtu = IBV_MTU_1024};

static int connect_fake(int fail, int err, char *msg, size_t msglen)
{
    g_fail = fail, g_err = err, g_calls = 0;
    msg[0] = '\0';
    return rail_verbs_qp_connect(&g_qp, &k_path, &k_remote, "fake0", msg, msglen);
}

static void rule(void)
{
    CHECK(rail_mqp_retryable(ETIMEDOUT, 0, 34, false));
    CHECK(rail_mqp_retryable(-ETIMEDOUT, 33, 34, false)); /* either sign, as NCCL */
    CHECK(!rail_mqp_retryable(ETIMEDOUT, 34, 34, false)); /* 34 retries = 35 calls */
    CHECK(!rail_mqp_retryable(ETIMEDOUT, 0, 0, true));
    CHECK(!rail_mqp_retryable(EINVAL, 0, 34, false));
    CHECK(rail_mqp_retryable(EINVAL, 0, 34, true));
    CHECK(!rail_mqp_retryable(0, 0, 34, true));
}

static void fake_table(void)
{
    static struct rail_verbs_ops ops;
    ops = rail_verbs_default_ops;
    ops.modify_qp = fake_modify_qp;
    const struct rail_verbs_ops *prev = rail_verbs_set_ops(&ops);
    char msg[256];

    /* NCCL's defaults (34 retries), no sleep: three timeouts, then INIT, RTR and RTS pass. */
    setenv("NCCL_IB_MQP_RETRY_SLEEP_MSEC", "0", 1);
    CHECK_EQ_INT(connect_fake(3, ETIMEDOUT, msg, sizeof(msg)), 0);
    CHECK_EQ_INT(g_calls, 6);
    /* Fewer retries allowed than failures: the transition fails, named. */
    setenv("NCCL_IB_MQP_RETRY_CNT", "2", 1);
    CHECK_EQ_INT(connect_fake(3, ETIMEDOUT, msg, sizeof(msg)), -ETIMEDOUT);
    CHECK_EQ_INT(g_calls, 3);
    CHECK_MSG(strstr(msg, "ibv_modify_qp(INIT)") != NULL, "msg '%s'", msg);
    setenv("NCCL_IB_MQP_RETRY_CNT", "0", 1);
    CHECK_EQ_INT(connect_fake(1, ETIMEDOUT, msg, sizeof(msg)), -ETIMEDOUT);
    CHECK_EQ_INT(g_calls, 1);
    unsetenv("NCCL_IB_MQP_RETRY_CNT");
    /* Another error: not retried, unless NCCL_IB_MQP_RETRY_ALL=1. */
    CHECK_EQ_INT(connect_fake(1, EINVAL, msg, sizeof(msg)), -EINVAL);
    CHECK_EQ_INT(g_calls, 1);
    setenv("NCCL_IB_MQP_RETRY_ALL", "1", 1);
    CHECK_EQ_INT(connect_fake(2, EINVAL, msg, sizeof(msg)), 0);
    CHECK_EQ_INT(g_calls, 5);
    unsetenv("NCCL_IB_MQP_RETRY_ALL");
    /* Linear backoff: retries 1 and 2 sleep 1 and 2 times SLEEP_MSEC (a lower bound only). */
    setenv("NCCL_IB_MQP_RETRY_SLEEP_MSEC", "20", 1);
    double t0 = now_s();
    CHECK_EQ_INT(connect_fake(2, ETIMEDOUT, msg, sizeof(msg)), 0);
    double slept = now_s() - t0;
    CHECK_MSG(slept >= 0.059, "two retries slept %.3f s, at least 0.060 s expected", slept);
    unsetenv("NCCL_IB_MQP_RETRY_SLEEP_MSEC");
    (void)rail_verbs_set_ops(prev);
}

#ifdef RAIL_FAULT_INJECTION
/* The fault layer over the shm provider: modify_qp fails N times with ETIMEDOUT. */
static void fault_layer(void)
{
    char fabric[64], note[128], why[256], msg[256];
    snprintf(fabric, sizeof(fabric), "unit-mqp-%d", (int)getpid());
    if (rail_shm_verbs_install(fabric, note, sizeof(note), why, sizeof(why)) != 0) {
        printf("SKIP (fault layer): the shm provider cannot run here: %s\n", why);
        return;
    }
    int nrules = 0;
    CHECK_EQ_INT(rail_fault_install("modify_qp:dev=shm0,count=4", &nrules, why, sizeof(why)), 0);
    CHECK_EQ_INT(nrules, 1);
    int n = 0;
    struct ibv_device **list = rail_ibv->get_device_list(&n);
    struct ibv_context *ctx[2] = {NULL, NULL};
    for (int i = 0; list && i < n; i++) {
        const char *name = rail_ibv->get_device_name(list[i]);
        if (!strcmp(name, "shm0"))
            ctx[0] = rail_ibv->open_device(list[i]);
        if (!strcmp(name, "shm1"))
            ctx[1] = rail_ibv->open_device(list[i]);
    }
    rail_ibv->free_device_list(list);
    CHECK(ctx[0] && ctx[1]);
    struct ibv_pd *pd[2];
    struct ibv_cq *cq[2];
    struct ibv_qp *qp[2];
    uint16_t lid[2];
    for (int i = 0; i < 2; i++) {
        pd[i] = rail_ibv->alloc_pd(ctx[i]);
        CHECK_EQ_INT(rail_verbs_create_cq(ctx[i], 16, NULL, &cq[i], "shm", msg, sizeof(msg)), 0);
        CHECK_EQ_INT(rail_verbs_create_qp(pd[i], cq[i], 8, 8, 1, NULL, NULL, &qp[i], "shm", msg,
                                          sizeof(msg)),
                     0);
        struct ibv_port_attr pa;
        CHECK_EQ_INT(rail_ibv->query_port(ctx[i], 1, &pa), 0);
        lid[i] = pa.lid;
    }
    struct rail_qp_remote remote = k_remote;
    setenv("NCCL_IB_MQP_RETRY_SLEEP_MSEC", "1", 1);
    /* Two retries allowed, four faults on shm0: INIT fails after 3 calls, QP left in RESET. */
    setenv("NCCL_IB_MQP_RETRY_CNT", "2", 1);
    remote.qpn = qp[1]->qp_num, remote.lid = lid[1];
    CHECK_EQ_INT(rail_verbs_qp_connect(qp[0], &k_path, &remote, "shm0", msg, sizeof(msg)),
                 -ETIMEDOUT);
    CHECK_MSG(strstr(msg, "ibv_modify_qp(INIT)") != NULL, "msg '%s'", msg);
    /* NCCL's 34: the one fault left is retried, and the QP reaches RTS. */
    unsetenv("NCCL_IB_MQP_RETRY_CNT");
    CHECK_EQ_INT(rail_verbs_qp_connect(qp[0], &k_path, &remote, "shm0", msg, sizeof(msg)), 0);
    remote.qpn = qp[0]->qp_num, remote.lid = lid[0];
    CHECK_EQ_INT(rail_verbs_qp_connect(qp[1], &k_path, &remote, "shm1", msg, sizeof(msg)), 0);
    struct ibv_qp_attr at;
    struct ibv_qp_init_attr init;
    CHECK_EQ_INT(rail_ibv->query_qp(qp[0], &at, IBV_QP_STATE, &init), 0);
    CHECK_EQ_INT(at.qp_state, IBV_QPS_RTS);
    unsetenv("NCCL_IB_MQP_RETRY_SLEEP_MSEC");
    for (int i = 0; i < 2; i++) {
        rail_verbs_destroy_qp(qp[i]);
        rail_verbs_destroy_cq(cq[i]);
        rail_ibv->dealloc_pd(pd[i]);
        rail_ibv->close_device(ctx[i]);
    }
    rail_shm_fabric_unlink(fabric);
}
#endif

int main(void)
{
    rule();
    fake_table();
#ifdef RAIL_FAULT_INJECTION
    fault_layer();
#else
    printf("note: not a fault-injection build: the NCCL_RAIL_FAULT=modify_qp part is skipped\n");
#endif
    return check_report("test_net_mqp_retry");
}
