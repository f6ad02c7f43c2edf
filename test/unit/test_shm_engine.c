/* SPDX-License-Identifier: Apache-2.0 */
/* The shm verbs provider's acknowledgement rule (transport/shm_engine.c), on two cabled ports of a
 * private fabric in this one process (shm0 -> shm1):
 *   - a plain RDMA WRITE into a ready responder completes at once, the bytes there;
 *   - a WRITE WITH IMM completes only once the responder took it into a posted receive: a
 *     responder that goes to the error state first takes what already arrived (a successful
 *     receive completion with the immediate, then the requester's success);
 *   - one the responder never took (no receive posted when it went to ERR) never completes with
 *     success: the requester gets an error (retries run out), not a delivered immediate that the
 *     responder flushed. Before this rule the requester saw success while the responder flushed
 *     the receive, and the net plugin lost a completion record on a rail failover (vf2_cts). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "check.h"
#include "verbs_open.h"
#include "transport/net_verbs.h"
#include "transport/shm_fabric.h"
#include "transport/shm_verbs.h"

struct end {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint16_t lid;
    uint8_t buf[4096];
};

static void end_open(struct end *e, const char *name)
{
    memset(e, 0, sizeof(*e));
    e->ctx = test_open_dev(name);
    CHECK(e->ctx != NULL);
    e->pd = rail_ibv->alloc_pd(e->ctx);
    e->cq = rail_ibv->create_cq(e->ctx, 64, NULL, NULL, 0);
    e->mr =
        rail_ibv->reg_mr(e->pd, e->buf, sizeof(e->buf),
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    struct ibv_port_attr pa;
    CHECK_EQ_INT(rail_ibv->query_port(e->ctx, 1, &pa), 0);
    e->lid = pa.lid;
    CHECK(e->pd && e->cq && e->mr);
}

static void end_close(struct end *e)
{
    if (e->qp)
        rail_ibv->destroy_qp(e->qp);
    rail_ibv->dereg_mr(e->mr);
    rail_ibv->destroy_cq(e->cq);
    rail_ibv->dealloc_pd(e->pd);
    rail_ibv->close_device(e->ctx);
}

static struct ibv_qp *make_qp(struct end *e)
{
    struct ibv_qp_init_attr ia;
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = ia.recv_cq = e->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
    struct ibv_qp *qp = rail_ibv->create_qp(e->pd, &ia);
    CHECK(qp != NULL);
    return qp;
}

/* Connects a's and b's new QPs (RTS both; `timeout` as ibv's: 4.096 us << timeout per try). */
static void connect_pair(struct end *a, struct end *b, int timeout)
{
    struct end *ends[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (ends[i]->qp)
            rail_ibv->destroy_qp(ends[i]->qp);
        ends[i]->qp = make_qp(ends[i]);
    }
    for (int i = 0; i < 2; i++) {
        struct end *me = ends[i], *peer = ends[1 - i];
        struct ibv_qp_attr at;
        memset(&at, 0, sizeof(at));
        at.qp_state = IBV_QPS_INIT;
        at.port_num = 1;
        CHECK_EQ_INT(rail_ibv->modify_qp(me->qp, &at, IBV_QP_STATE | IBV_QP_PORT), 0);
        memset(&at, 0, sizeof(at));
        at.qp_state = IBV_QPS_RTR;
        at.dest_qp_num = peer->qp->qp_num;
        at.ah_attr.dlid = peer->lid;
        CHECK_EQ_INT(rail_ibv->modify_qp(me->qp, &at, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_AV),
                     0);
        memset(&at, 0, sizeof(at));
        at.qp_state = IBV_QPS_RTS;
        at.timeout = (uint8_t)timeout;
        at.retry_cnt = 1;
        CHECK_EQ_INT(
            rail_ibv->modify_qp(me->qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT), 0);
    }
}

static void post_write(struct end *a, struct end *b, bool imm, uint64_t id, uint8_t fill)
{
    memset(a->buf, fill, 256);
    struct ibv_sge sge = {(uintptr_t)a->buf, 256, a->mr->lkey};
    struct ibv_send_wr wr;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.imm_data = htonl(0xC0FFEE);
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
    wr.wr.rdma.rkey = b->mr->rkey;
    CHECK_EQ_INT(rail_verbs_post_send(a->qp, &wr), 0);
}

static void post_recv(struct end *b, uint64_t id)
{
    struct ibv_recv_wr wr;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = id;
    CHECK_EQ_INT(rail_verbs_post_recv(b->qp, &wr), 0);
}

/* One completion of e's CQ, or 0 after `tries` polls. */
static int poll_one(struct end *e, struct ibv_wc *wc, int tries)
{
    for (int i = 0; i < tries; i++) {
        int n = rail_verbs_poll_cq(e->cq, 1, wc);
        CHECK(n >= 0);
        if (n == 1)
            return 1;
        if (tries > 1)
            usleep(100);
    }
    return 0;
}

static void to_error(struct end *e)
{
    struct ibv_qp_attr at;
    memset(&at, 0, sizeof(at));
    at.qp_state = IBV_QPS_ERR;
    CHECK_EQ_INT(rail_ibv->modify_qp(e->qp, &at, IBV_QP_STATE), 0);
}

int main(void)
{
    char fabric[64], note[128], why[256];
    snprintf(fabric, sizeof(fabric), "unit-engine-%d", (int)getpid());
    if (rail_shm_verbs_install(fabric, note, sizeof(note), why, sizeof(why)) != 0) {
        printf("SKIP: the shm provider cannot run here: %s\n", why);
        return 0;
    }
    struct end a, b;
    struct ibv_wc wc;
    end_open(&a, "shm0");
    end_open(&b, "shm1");

    /* A plain write completes at once; its bytes are there. */
    connect_pair(&a, &b, 14);
    post_write(&a, &b, false, 1, 0x11);
    CHECK_EQ_INT(poll_one(&a, &wc, 10), 1);
    CHECK_EQ_INT(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ_INT((int)wc.wr_id, 1);
    CHECK_EQ_INT(b.buf[255], 0x11);

    /* A write with immediate waits for the responder to take it ... */
    post_recv(&b, 7);
    post_write(&a, &b, true, 2, 0x22);
    CHECK_EQ_INT(poll_one(&a, &wc, 5), 0);
    CHECK_EQ_INT(b.buf[0], 0x22); /* its data landed */
    /* ... and a responder going to ERR takes what arrived before flushing: success both ends. */
    to_error(&b);
    CHECK_EQ_INT(poll_one(&b, &wc, 1), 1);
    CHECK_EQ_INT(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ_INT((int)wc.wr_id, 7);
    CHECK_EQ_INT(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    CHECK_EQ_INT(ntohl(wc.imm_data), 0xC0FFEE);
    CHECK_EQ_INT(poll_one(&a, &wc, 10), 1);
    CHECK_EQ_INT(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ_INT((int)wc.wr_id, 2);

    /* In the usual order (the responder polls), it completes once taken. */
    connect_pair(&a, &b, 14);
    post_recv(&b, 8);
    post_write(&a, &b, true, 3, 0x33);
    CHECK_EQ_INT(poll_one(&b, &wc, 10), 1);
    CHECK_EQ_INT(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ_INT(poll_one(&a, &wc, 10), 1);
    CHECK_EQ_INT(wc.status, IBV_WC_SUCCESS);
    CHECK_EQ_INT((int)wc.wr_id, 3);

    /* Never taken (no receive posted when the responder went to ERR): never a success; the
     * requester's retries run out (timeout 1: 8 us per try, 2 tries). */
    connect_pair(&a, &b, 1);
    post_write(&a, &b, true, 4, 0x44);
    CHECK_EQ_INT(poll_one(&a, &wc, 5), 0); /* receiver not ready: waited for, no error */
    to_error(&b);
    CHECK_EQ_INT(poll_one(&b, &wc, 1), 0); /* nothing taken, nothing to flush */
    CHECK_EQ_INT(poll_one(&a, &wc, 2000), 1);
    CHECK_EQ_INT((int)wc.wr_id, 4);
    CHECK(wc.status != IBV_WC_SUCCESS);
    CHECK_EQ_INT(wc.status, IBV_WC_RETRY_EXC_ERR);

    end_close(&a);
    end_close(&b);
    rail_shm_fabric_unlink(fabric);
    return check_report("test_shm_engine");
}
