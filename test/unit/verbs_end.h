/* SPDX-License-Identifier: Apache-2.0 */
/* Tests on the verbs seam: one end of a connection (device, PD, CQ of 16, RC QP of 8 + 8 work
 * requests, the port's LID) opened by device name through rail_ibv, and closed again. Include
 * after check.h. */
#ifndef NCCL_RAIL_TEST_VERBS_END_H
#define NCCL_RAIL_TEST_VERBS_END_H

#include <string.h>

#include "transport/net_verbs.h"
#include "verbs_open.h"

struct end {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    uint16_t lid;
};

static void end_open(struct end *e, const char *name)
{
    char err[256];
    memset(e, 0, sizeof(*e));
    e->ctx = test_open_dev(name);
    CHECK(e->ctx != NULL);
    e->pd = rail_ibv->alloc_pd(e->ctx);
    CHECK(e->pd != NULL);
    CHECK_EQ_INT(rail_verbs_create_cq(e->ctx, 16, NULL, &e->cq, name, err, sizeof(err)), 0);
    CHECK_EQ_INT(
        rail_verbs_create_qp(e->pd, e->cq, 8, 8, 1, NULL, NULL, &e->qp, name, err, sizeof(err)), 0);
    struct ibv_port_attr pa;
    CHECK_EQ_INT(rail_ibv->query_port(e->ctx, 1, &pa), 0);
    e->lid = pa.lid;
}

static void end_close(struct end *e)
{
    rail_verbs_destroy_qp(e->qp);
    rail_verbs_destroy_cq(e->cq);
    rail_ibv->dealloc_pd(e->pd);
    rail_ibv->close_device(e->ctx);
}

#endif
