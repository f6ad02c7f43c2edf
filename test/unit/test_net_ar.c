/* SPDX-License-Identifier: Apache-2.0 */
/* Pure QP policies (net_pieces.c): NCCL_IB_ADAPTIVE_ROUTING's auto mode follows the link layer
 * as NCCL's does, above NCCL_IB_AR_THRESHOLD no data rides in a write with immediate, and
 * NCCL_IB_FIFO_TC applies where NCCL applies it. */
#include "check.h"
#include "protocol/net_pieces.h"

int main(void)
{
    /* -2 (auto, NCCL's default): InfiniBand on, RoCE off. */
    CHECK(rail_ar_enabled(-2, true));
    CHECK(!rail_ar_enabled(-2, false));
    /* Forced either way, whatever the link layer. */
    CHECK(!rail_ar_enabled(0, true));
    CHECK(!rail_ar_enabled(0, false));
    CHECK(rail_ar_enabled(1, false));
    CHECK(rail_ar_enabled(1, true));
    /* Threshold: at most the threshold may be an immediate-with-data write; off: any size. */
    CHECK(rail_ar_imm_data_ok(true, 8192, 8192));
    CHECK(!rail_ar_imm_data_ok(true, 8192, 8193));
    CHECK(!rail_ar_imm_data_ok(true, 0, 1));
    CHECK(rail_ar_imm_data_ok(true, 0, 0));
    CHECK(rail_ar_imm_data_ok(false, 0, 1u << 20));
    /* NCCL_IB_FIFO_TC: only a RoCE receiver's QPs (the clear-to-send writes), only when set. */
    CHECK_EQ_INT(rail_qp_tc(true, true, 106, 3), 106);
    CHECK_EQ_INT(rail_qp_tc(true, true, -1, 3), 3);
    CHECK_EQ_INT(rail_qp_tc(false, true, 106, 3), 3);
    CHECK_EQ_INT(rail_qp_tc(true, false, 106, 3), 3);
    CHECK_EQ_INT(rail_qp_tc(true, true, 0, 3), 0);
    return check_report("test_net_ar");
}
