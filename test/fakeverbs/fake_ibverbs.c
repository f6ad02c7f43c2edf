/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in for libibverbs.so.1 for test_verbs_lib (NCCL_IBVERBS_LIB): every function the net
 * plugin resolves at load, exported under rdma-core's symbol version IBVERBS_1.1 (fake_ibverbs.map)
 * and doing nothing (no device: the list is empty). Built twice: "complete" has every required
 * function but none of the later, optional ones (an rdma-core older than 1.8); without
 * FAKE_COMPLETE it also lacks ibv_create_qp, which the plugin cannot do without. */
#include <stddef.h>

#define STUB(name)                                                                                 \
    void *name(void);                                                                              \
    void *name(void)                                                                               \
    {                                                                                              \
        return NULL;                                                                               \
    }

STUB(ibv_get_device_list)
STUB(ibv_free_device_list)
STUB(ibv_get_device_name)
STUB(ibv_open_device)
STUB(ibv_close_device)
STUB(ibv_query_device)
STUB(ibv_query_port)
STUB(ibv_query_gid)
STUB(ibv_query_pkey)
STUB(ibv_alloc_pd)
STUB(ibv_dealloc_pd)
STUB(ibv_create_cq)
STUB(ibv_destroy_cq)
#ifdef FAKE_COMPLETE
STUB(ibv_create_qp)
#endif
STUB(ibv_modify_qp)
STUB(ibv_query_qp)
STUB(ibv_destroy_qp)
STUB(ibv_reg_mr)
STUB(ibv_dereg_mr)
STUB(ibv_get_async_event)
STUB(ibv_ack_async_event)
STUB(ibv_wc_status_str)
STUB(ibv_event_type_str)
