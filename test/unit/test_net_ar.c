/* SPDX-License-Identifier: Apache-2.0 */
/* Adaptive routing decisions (net_send_wr.c): NCCL_IB_ADAPTIVE_ROUTING's auto mode follows the
 * link layer as NCCL's does, and above NCCL_IB_AR_THRESHOLD no data rides in a write with
 * immediate. */
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
    return check_report("test_net_ar");
}
