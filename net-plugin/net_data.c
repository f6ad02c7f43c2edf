/* Data-path entry points shared by both directions: completion polling, test() (iflush:
 * net_flush.c). */
#include "net_data.h"

#include <errno.h>

#include "log.h"
#include "net_comm.h"
#include "net_verbs.h"

int rail_comm_progress(struct rail_comm *c)
{
    struct ibv_wc wc[RAIL_POLL_BATCH];

    for (int r = 0; r < c->nrails; r++) {
        struct rail_link *l = &c->link[r];
        for (;;) {
            int n = rail_verbs_poll_cq(l->cq, RAIL_POLL_BATCH, wc);
            if (n < 0) {
                rail_comm_fail(c, -EIO, "%s: ibv_poll_cq failed", l->dev->name);
                break;
            }
            for (int i = 0; i < n; i++) {
                int q = rail_wrid_qp(wc[i].wr_id);
                if (q >= c->nqps || (int)(wc[i].wr_id >> 48 & 0xFF) != r) {
                    rail_comm_fail(c, -EIO, "completion with a foreign work request id %#llx",
                                   (unsigned long long)wc[i].wr_id);
                    continue;
                }
                if (c->magic == RAIL_SEND_MAGIC)
                    rail_send_on_wc((struct rail_send_comm *)c, r, &wc[i]);
                else
                    rail_recv_on_wc((struct rail_recv_comm *)c, r, &wc[i]);
            }
            if (n < RAIL_POLL_BATCH)
                break;
        }
    }
    return atomic_load(&c->error);
}

int rail_net_test(void *request, int *done, int *sizes)
{
    struct rail_req_head *h = request;

    if (done)
        *done = 0;
    if (!h || !done) {
        RAIL_WARN(NCCL_NET, "test: NULL %s", h ? "done pointer" : "request");
        return -EINVAL;
    }
    if (h->magic == RAIL_SREQ_MAGIC)
        return rail_send_test((struct rail_send_req *)h, done, sizes);
    if (h->magic == RAIL_RREQ_MAGIC)
        return rail_recv_test((struct rail_recv_req *)h, done, sizes);
    RAIL_WARN(NCCL_NET, "test: %p is not a request in flight (completed or never issued)", request);
    return -EINVAL;
}
