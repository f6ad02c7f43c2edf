/* SPDX-License-Identifier: Apache-2.0 */
/* The one seam between the plugin and libibverbs: every verbs call the plugin makes goes through
 * these wrappers, which return 0 or a negative errno and put a readable reason (naming the
 * device and the call) into err. Data-path posting stays a thin inline call. */
#ifndef NCCL_RAIL_NET_VERBS_H
#define NCCL_RAIL_NET_VERBS_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Connection parameters of one QP's remote end. */
struct rail_qp_remote {
    uint32_t qpn;
    int link_layer; /* IBV_LINK_LAYER_* of both ends (they must agree) */
    uint16_t lid;
    union ibv_gid gid;
    enum ibv_mtu mtu; /* already the minimum of both ends */
};

/* Local path attributes used for RTR/RTS. */
struct rail_qp_path {
    int port;
    int gid_index; /* source GID index (RoCE) */
    int sl, tc;
    int pkey_index;
    int timeout, retry_cnt;
};

int rail_verbs_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_cq **cq,
                         const char *dev, char *err, size_t errlen);
/* RC QP with send and receive on cq, in RESET state. max_inline (NULL: none) asks for that many
 * bytes of inline send data and gets what the QP has: a device that refuses the size gets a QP
 * without inline data (*max_inline = 0) rather than no QP. */
int rail_verbs_create_qp(struct ibv_pd *pd, struct ibv_cq *cq, int send_wr, int recv_wr,
                         int send_sge, int *max_inline, void *qp_context, struct ibv_qp **qp,
                         const char *dev, char *err, size_t errlen);
/* RESET -> INIT -> RTR -> RTS. Each transition is retried as NCCL retries ibv_modify_qp
 * (NCCL_IB_MQP_RETRY_CNT times, only on ETIMEDOUT unless NCCL_IB_MQP_RETRY_ALL=1, sleeping k *
 * NCCL_IB_MQP_RETRY_SLEEP_MSEC ms before retry k), one INFO line per retry. */
int rail_verbs_qp_connect(struct ibv_qp *qp, const struct rail_qp_path *path,
                          const struct rail_qp_remote *remote, const char *dev, char *err,
                          size_t errlen);
/* Reads back (ibv_query_qp) what rail_verbs_qp_connect set that the fabric acts on: the
 * partition key index and, on RoCE (a GRH), the traffic class. Writes one readable line into
 * got ("pkey index 0, traffic class 96"). 0 when both are as path asked, 1 when one differs
 * (got says which), or -errno when the query failed (got says why). */
int rail_verbs_qp_readback(struct ibv_qp *qp, const struct rail_qp_path *path, bool roce, char *got,
                           size_t gotlen);
int rail_verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access, struct ibv_mr **mr,
                      const char *dev, char *err, size_t errlen);
/* Enhanced Connection Establishment of a QP (ibv_query_ece / ibv_set_ece, before RTR): 0, or
 * -EOPNOTSUPP when the provider has no ECE (ENOTSUP and a table without the op read the same),
 * or another -errno (the call failed). */
int rail_verbs_query_ece(struct ibv_qp *qp, struct ibv_ece *ece);
int rail_verbs_set_ece(struct ibv_qp *qp, const struct ibv_ece *ece);
/* NCCL's modify-QP retry rule: whether a call that failed with err (a positive or negative errno)
 * after `retries` retries is tried again. */
bool rail_mqp_retryable(int err, int retries, int max_retries, bool all);
/* Moves a QP to the error state: every WR in flight completes with a flush error. */
int rail_verbs_qp_to_error(struct ibv_qp *qp);
/* 1 when the port is ACTIVE (queried now), else 0. */
int rail_verbs_port_active(struct ibv_context *ctx, int port);
void rail_verbs_destroy_qp(struct ibv_qp *qp);
void rail_verbs_destroy_cq(struct ibv_cq *cq);
void rail_verbs_dereg_mr(struct ibv_mr *mr);

/* Live verbs objects of this process, counted at the seam (the wrappers above; user memory
 * registrations by net_reg.c as RAIL_VERBS_USER_*): bench/scale.c reads them per connection. */
enum rail_verbs_counter {
    RAIL_VERBS_QPS,
    RAIL_VERBS_CQS,
    RAIL_VERBS_CQES,     /* entries of those CQs */
    RAIL_VERBS_MRS,      /* the plugin's own regions (control, FIFO, bounce slots) */
    RAIL_VERBS_MR_BYTES, /* their bytes */
    RAIL_VERBS_USER_MRS, /* regMr/regMrDmaBuf of NCCL's buffers (through the cache) */
    RAIL_VERBS_USER_MR_BYTES,
    RAIL_VERBS_SHM_RINGS, /* bytes of receive rings the shm provider keeps per QP slot ever used */
    RAIL_VERBS_NCOUNTS
};
void rail_verbs_count(enum rail_verbs_counter which, long delta);
void rail_verbs_counts(long out[RAIL_VERBS_NCOUNTS]);

/* Posting: 0 or -errno (ibv_post_* return a positive errno). */
/* Every libibverbs call of the plugin goes through this table (model: NCCL's ibvwrap, rdma-core's
 * verbs_context_ops), so that a layer can sit between the plugin and the driver: the default
 * table calls the libibverbs loaded at run time (verbs_lib.h); rail_verbs_set_ops() puts another in
 * front (a fault-injecting table in tests), before any device is opened. */
struct rail_verbs_ops {
    const char *provider;  /* "libibverbs", "shm" (the first INFO lines name it) */
    bool kernel_devices;   /* devices are /dev/infiniband nodes (libibverbs) */
    bool host_memory_only; /* registers host memory only: no GPUDirect (NCCL stages GPU data) */
    struct ibv_device **(*get_device_list)(int *n);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
    /* PKey table entry `index` (network byte order, as ibv_query_pkey). */
    int (*query_pkey)(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    /* ibv_query_qp: the QP's attributes as the device holds them (0 or a positive errno). */
    int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                    struct ibv_qp_init_attr *init);
    /* ibv_query_ece / ibv_set_ece (0 or an errno, EOPNOTSUPP where the provider has no ECE). */
    int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
    int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
    int (*destroy_qp)(struct ibv_qp *qp);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    /* ibv_reg_dmabuf_mr (rdma-core 34+: looked up at run time; NULL with errno ENOSYS where the
     * library has none). */
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
                                    int fd, int access);
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
    int (*get_async_event)(struct ibv_context *ctx, struct ibv_async_event *ev);
    void (*ack_async_event)(struct ibv_async_event *ev);
    /* Names of a completion status and an asynchronous event (for the logs). */
    const char *(*wc_status_str)(enum ibv_wc_status status);
    const char *(*event_type_str)(enum ibv_event_type type);
};

/* A completion status in words: the provider's (libibverbs: its ibv_wc_status_str). */
const char *rail_verbs_wc_status_str(enum ibv_wc_status status);

/* The table in use (never NULL). */
extern const struct rail_verbs_ops *rail_ibv;
/* The libibverbs table (transport/verbs_lib.c): libibverbs is loaded at run time
 * (rail_verbs_load, verbs_lib.h); until then its entries fail with ENOSYS. */
extern const struct rail_verbs_ops rail_verbs_default_ops;
/* Puts `ops` in use (NULL: the default) and returns the previous table. Not thread-safe: call it
 * before the plugin opens a device. */
const struct rail_verbs_ops *rail_verbs_set_ops(const struct rail_verbs_ops *ops);

/* A signalled RDMA write of one sge, field by field: every field a write reads and the XRC
 * target, not the unions of other opcodes (memory-window binds, TSO) that a write never reads
 * (a memset of the whole 128-byte request cost 36 instructions per WR). */
static inline __attribute__((always_inline)) void
rail_verbs_fill_write(struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t wrid, uint64_t raddr,
                      uint32_t rkey)
{
    wr->wr_id = wrid;
    wr->next = NULL;
    wr->sg_list = sge;
    wr->num_sge = 1;
    wr->opcode = IBV_WR_RDMA_WRITE;
    wr->send_flags = IBV_SEND_SIGNALED;
    wr->imm_data = 0;
    wr->wr.rdma.remote_addr = raddr;
    wr->wr.rdma.rkey = rkey;
    wr->qp_type.xrc.remote_srqn = 0;
}

static inline int rail_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
    struct ibv_send_wr *bad = NULL;
    int rc = rail_ibv->post_send(qp, wr, &bad);
    return rc > 0 ? -rc : rc;
}
static inline int rail_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr)
{
    struct ibv_recv_wr *bad = NULL;
    int rc = rail_ibv->post_recv(qp, wr, &bad);
    return rc > 0 ? -rc : rc;
}
static inline int rail_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int rc = rail_ibv->poll_cq(cq, n, wc);
    return rc < 0 ? -5 /* EIO */ : rc;
}

const char *rail_verbs_mtu_str(enum ibv_mtu mtu);
const char *rail_verbs_event_str(enum ibv_event_type type);

#endif
