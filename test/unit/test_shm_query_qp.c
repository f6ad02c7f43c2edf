/* SPDX-License-Identifier: Apache-2.0 */
/* ibv_query_qp through the verbs seam (transport/net_verbs.h query_qp) on the shm provider, and
 * the plugin's read-back check (rail_verbs_qp_readback) on two cabled ports of a private fabric:
 *   - a QP brought to RTS by rail_verbs_qp_connect reads back the pkey index it was given
 *     (NCCL_IB_PKEY / NCCL_IB_PKEY_VALUE's index), its state (RTS), timeout and retry count;
 *   - an address vector with a GRH reads back the traffic class it carried (NCCL_IB_TC /
 *     NCCL_IB_FIFO_TC): the check passes for the asked value and reports a different one;
 *   - a pkey index outside the port's table (one entry, 0xffff) is refused at INIT, as devices
 *     refuse it, with the call named in the error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "verbs_end.h"
#include "transport/net_verbs.h"
#include "transport/shm_fabric.h"
#include "transport/shm_verbs.h"

int main(void)
{
    char fabric[64], note[128], why[256], err[256], got[160];
    snprintf(fabric, sizeof(fabric), "unit-queryqp-%d", (int)getpid());
    if (rail_shm_verbs_install(fabric, note, sizeof(note), why, sizeof(why)) != 0) {
        printf("SKIP: the shm provider cannot run here: %s\n", why);
        return 0;
    }
    CHECK(rail_ibv->query_qp != NULL);
    struct end a, b;
    end_open(&a, "shm0");
    end_open(&b, "shm1");

    /* The plugin's own transitions: what they set reads back. */
    struct rail_qp_path path = {.port = 1,
                                .gid_index = 0,
                                .sl = 0,
                                .tc = 0,
                                .pkey_index = 0,
                                .timeout = 18,
                                .retry_cnt = 5};
    struct rail_qp_remote remote = {.qpn = b.qp->qp_num,
                                    .link_layer = IBV_LINK_LAYER_INFINIBAND,
                                    .lid = b.lid,
                                    .mtu = IBV_MTU_4096};
    CHECK_EQ_INT(rail_verbs_qp_connect(a.qp, &path, &remote, "shm0", err, sizeof(err)), 0);
    struct ibv_qp_attr at;
    struct ibv_qp_init_attr init;
    memset(&at, 0xab, sizeof(at));
    CHECK_EQ_INT(rail_ibv->query_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_AV, &init),
                 0);
    CHECK_EQ_INT(at.qp_state, IBV_QPS_RTS);
    CHECK_EQ_INT(at.pkey_index, 0);
    CHECK_EQ_INT(at.port_num, 1);
    CHECK_EQ_INT(at.ah_attr.dlid, b.lid);
    CHECK_EQ_INT(at.dest_qp_num, b.qp->qp_num);
    CHECK_EQ_INT(at.path_mtu, IBV_MTU_4096);
    CHECK_EQ_INT(at.timeout, 18);
    CHECK_EQ_INT(at.retry_cnt, 5);
    CHECK(init.send_cq == a.cq && init.qp_type == IBV_QPT_RC);
    /* InfiniBand: the check covers the pkey index only. */
    CHECK_EQ_INT(rail_verbs_qp_readback(a.qp, &path, false, got, sizeof(got)), 0);
    CHECK_MSG(strstr(got, "pkey index 0") && strstr(got, "no traffic class"), "got '%s'", got);

    /* A GRH (as RoCE sets it): its traffic class reads back. */
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.pkey_index = 0;
    CHECK_EQ_INT(rail_ibv->modify_qp(b.qp, &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX), 0);
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_RTR;
    at.dest_qp_num = a.qp->qp_num;
    at.ah_attr.dlid = a.lid;
    at.ah_attr.port_num = 1;
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.traffic_class = 96;
    at.ah_attr.grh.hop_limit = 255;
    CHECK_EQ_INT(rail_ibv->modify_qp(b.qp, &at, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_AV), 0);
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_RTS;
    CHECK_EQ_INT(rail_ibv->modify_qp(b.qp, &at, IBV_QP_STATE), 0);
    memset(&at, 0, sizeof(at));
    CHECK_EQ_INT(rail_ibv->query_qp(b.qp, &at, IBV_QP_AV, NULL), 0);
    CHECK_EQ_INT(at.ah_attr.is_global, 1);
    CHECK_EQ_INT(at.ah_attr.grh.traffic_class, 96);
    path.tc = 96;
    CHECK_EQ_INT(rail_verbs_qp_readback(b.qp, &path, true, got, sizeof(got)), 0);
    CHECK_MSG(strstr(got, "pkey index 0, traffic class 96") != NULL, "got '%s'", got);
    /* Asked for another class than the QP holds: reported, and the line says so. */
    path.tc = 40;
    CHECK_EQ_INT(rail_verbs_qp_readback(b.qp, &path, true, got, sizeof(got)), 1);
    CHECK_MSG(strstr(got, "traffic class 96 (asked for another)") != NULL, "got '%s'", got);
    path.tc = 96;
    path.pkey_index = 3;
    CHECK_EQ_INT(rail_verbs_qp_readback(b.qp, &path, true, got, sizeof(got)), 1);
    CHECK_MSG(strstr(got, "pkey index 0 (asked for another)") != NULL, "got '%s'", got);

    /* A pkey index beyond the port's one-entry table is refused at INIT, naming the call. */
    struct ibv_qp *qp3 = NULL;
    CHECK_EQ_INT(
        rail_verbs_create_qp(a.pd, a.cq, 8, 8, 1, NULL, NULL, &qp3, "shm0", err, sizeof(err)), 0);
    path.pkey_index = 1;
    CHECK_EQ_INT(rail_verbs_qp_connect(qp3, &path, &remote, "shm0", err, sizeof(err)), -EINVAL);
    CHECK_MSG(strstr(err, "ibv_modify_qp(INIT)") != NULL, "err '%s'", err);
    rail_verbs_destroy_qp(qp3);

    end_close(&a);
    end_close(&b);
    rail_shm_fabric_unlink(fabric);
    return check_report("test_shm_query_qp");
}
