/* SPDX-License-Identifier: Apache-2.0 */
/* ibv_query_ece / ibv_set_ece through the verbs seam (rail_verbs_query_ece / _set_ece) on the shm
 * provider's emulated ECE (transport/shm_ece.h), what protocol/net_ece.c negotiates with:
 *   - a QP reports its device's options (vendor 0x5348); set before RTR keeps the intersection
 *     with what is given, which query then reports (what a responder accepted);
 *   - set after RTR, another vendor or a comp_mask is refused (EINVAL), the QP unchanged;
 *   - a device without ECE (options 0, as rdma_rxe) answers -EOPNOTSUPP to both calls, and so
 *     does a verbs table without the ops (a provider library older than ECE). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "transport/net_verbs.h"
#include "transport/shm_ece.h"
#include "transport/shm_fabric.h"
#include "transport/shm_verbs.h"
#include "verbs_end.h"

int main(void)
{
    char fabric[64], note[128], why[256], err[256];
    snprintf(fabric, sizeof(fabric), "unit-ece-%d", (int)getpid());
    if (rail_shm_verbs_install(fabric, note, sizeof(note), why, sizeof(why)) != 0) {
        printf("SKIP: the shm provider cannot run here: %s\n", why);
        return 0;
    }
    rail_shm_ece_options(0, 0x7);
    rail_shm_ece_options(1, 0xd);
    struct end a, b;
    end_open(&a, "shm0");
    end_open(&b, "shm1");

    /* The offer: the device's options. */
    struct ibv_ece ea, eb;
    CHECK_EQ_INT(rail_verbs_query_ece(a.qp, &ea), 0);
    CHECK_EQ_INT((int)ea.vendor_id, SHM_ECE_VENDOR);
    CHECK_EQ_INT((int)ea.options, 0x7);
    CHECK_EQ_INT((int)ea.comp_mask, 0);
    /* The responder sets it before RTR and reads back the intersection. */
    CHECK_EQ_INT(rail_verbs_set_ece(b.qp, &ea), 0);
    CHECK_EQ_INT(rail_verbs_query_ece(b.qp, &eb), 0);
    CHECK_EQ_INT((int)eb.options, 0x5);
    /* The requester sets what was accepted. */
    CHECK_EQ_INT(rail_verbs_set_ece(a.qp, &eb), 0);
    CHECK_EQ_INT(rail_verbs_query_ece(a.qp, &ea), 0);
    CHECK_EQ_INT((int)ea.options, 0x5);

    /* Refused: another vendor, a comp_mask; the QP keeps what it had. */
    struct ibv_ece bad = {.vendor_id = 0x15b3, .options = 0x1};
    CHECK_EQ_INT(rail_verbs_set_ece(a.qp, &bad), -EINVAL);
    bad.vendor_id = SHM_ECE_VENDOR;
    bad.comp_mask = 1;
    CHECK_EQ_INT(rail_verbs_set_ece(a.qp, &bad), -EINVAL);
    CHECK_EQ_INT(rail_verbs_query_ece(a.qp, &ea), 0);
    CHECK_EQ_INT((int)ea.options, 0x5);

    /* After RTR it is too late, as on devices. */
    struct rail_qp_path path = {.port = 1, .timeout = 14, .retry_cnt = 7};
    struct ibv_port_attr pa;
    CHECK_EQ_INT(rail_ibv->query_port(b.ctx, 1, &pa), 0);
    struct rail_qp_remote remote = {.qpn = b.qp->qp_num,
                                    .link_layer = IBV_LINK_LAYER_INFINIBAND,
                                    .lid = pa.lid,
                                    .mtu = IBV_MTU_4096};
    CHECK_EQ_INT(rail_verbs_qp_connect(a.qp, &path, &remote, "shm0", err, sizeof(err)), 0);
    struct ibv_ece late = {.vendor_id = SHM_ECE_VENDOR, .options = 0x1};
    CHECK_EQ_INT(rail_verbs_set_ece(a.qp, &late), -EINVAL);

    /* A device without ECE: EOPNOTSUPP both ways. */
    rail_shm_ece_options(1, 0);
    CHECK_EQ_INT(rail_verbs_query_ece(b.qp, &eb), -EOPNOTSUPP);
    CHECK_EQ_INT(rail_verbs_set_ece(b.qp, &late), -EOPNOTSUPP);
    CHECK_EQ_INT((int)eb.options, 0); /* zeroed, never stale */

    /* A table without the ops (a libibverbs older than ECE): the same answer. */
    struct rail_verbs_ops bare = rail_shm_verbs_ops;
    bare.query_ece = NULL;
    bare.set_ece = NULL;
    const struct rail_verbs_ops *prev = rail_verbs_set_ops(&bare);
    CHECK_EQ_INT(rail_verbs_query_ece(a.qp, &ea), -EOPNOTSUPP);
    CHECK_EQ_INT(rail_verbs_set_ece(a.qp, &late), -EOPNOTSUPP);
    rail_verbs_set_ops(prev);

    end_close(&a);
    end_close(&b);
    rail_shm_fabric_unlink(fabric);
    return check_report("test_shm_ece");
}
