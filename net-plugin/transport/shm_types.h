/* SPDX-License-Identifier: Apache-2.0 */
/* Types of the shm verbs provider (NCCL_RAIL_VERBS_PROVIDER=shm; no functions here): its device
 * contexts, protection domains, memory regions, completion queues and RC queue pairs, each
 * starting with the libibverbs structure the plugin sees, and what a context publishes in its
 * own memory for peer processes to read with process_vm_readv (the directory of QPs and memory
 * regions, one receive ring per QP).
 *
 * Naming: a QP number is (generation << 12 | slot), an lkey/rkey (generation << 13 | slot); a
 * context's LID is its entry in the fabric's registry (shm_fabric.h), which names the process and
 * the address of its directory. A peer that knows (LID, QPN) or (LID, rkey) thus finds the
 * published record and checks that it still carries that number. */
#ifndef NCCL_RAIL_SHM_TYPES_H
#define NCCL_RAIL_SHM_TYPES_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/shm_fabric.h"

/* A benchmark build may raise the two limits (bench/README.md "Scale": -DSHM_QP_BITS=16
 * -DSHM_MR_BITS=16 in CMAKE_C_FLAGS for 4,096 connections); the tests run with these. */
#ifndef SHM_QP_BITS
#define SHM_QP_BITS 12
#endif
#define SHM_MAX_QP (1 << SHM_QP_BITS) /* per context */
#ifndef SHM_MR_BITS
#define SHM_MR_BITS 13
#endif
#define SHM_MAX_MR       (1 << SHM_MR_BITS) /* per context */
#define SHM_RING         512                /* incoming writes with immediate per QP */
#define SHM_MAX_WR       4096
#define SHM_MAX_SGE      4
#define SHM_MAX_INLINE   1024
#define SHM_MAX_CQE      (1 << 20)
#define SHM_CHUNK        (256u << 10) /* bytes moved per step of a work request */
#define SHM_POLL_BUDGET  (1u << 20)   /* bytes moved per poll of a CQ (over its QPs) */
#define SHM_WINDOW       64           /* work requests out (landed, not completed) per QP */
#define SHM_WINDOW_BYTES (512u << 10) /* unacknowledged bytes per QP (128 packets of 4 KiB) */
#define SHM_DIR_MAGIC    0x5348444952303031ull

/* ---- published in the owner's memory, read (and the ring written) by peers ---- */

/* Published while a QP on its way to the error state takes what already arrived (after it, ERR):
 * a requester waits for the outcome instead of guessing. */
#define SHM_QPS_DRAINING 0x40u

struct shm_qp_pub {
    _Atomic uint32_t qpn;   /* 0: free slot */
    _Atomic uint32_t state; /* enum ibv_qp_state, or SHM_QPS_DRAINING */
    uint64_t ring;          /* address of the QP's struct shm_ring */
};

struct shm_mr_pub {
    _Atomic uint32_t rkey; /* 0: free slot */
    uint32_t access;       /* IBV_ACCESS_* */
    uint64_t addr, len;
    uint64_t pad;
};

struct shm_dir {
    uint64_t magic;
    uint32_t lid, dev;
    struct shm_qp_pub qp[SHM_MAX_QP];
    struct shm_mr_pub mr[SHM_MAX_MR];
};

/* One incoming RDMA WRITE WITH IMM. The producer (the peer QP's process) writes the entry's
 * fields first and its seq last; the consumer takes entry k once seq == k + 1 and dst_qpn is its
 * own QP number. */
struct shm_rent {
    uint32_t imm; /* network order, as posted */
    uint32_t len;
    uint32_t src_qpn, dst_qpn;
    uint64_t seq;
};

struct shm_ring {
    _Atomic uint64_t tail;  /* entries consumed (written by the owner, read by the producer) */
    _Atomic uint32_t fatal; /* set by the producer: a request of this connection broke the
                             * responder's rules (remote access error): the QP goes to ERR */
    uint32_t pad[13];
    struct shm_rent ent[SHM_RING];
};

/* ---- process-local objects ---- */

struct shm_qp;

struct shm_ctx {
    struct ibv_context ibv; /* first: what the plugin sees */
    int dev;                /* 0..3: shm0..shm3 */
    int lid;
    struct rail_shm_fabric *fab;
    struct shm_dir *dir;
    pthread_mutex_t lock; /* every QP, CQ and MR of the context */
    struct shm_qp *qps[SHM_MAX_QP];
    struct shm_ring *rings[SHM_MAX_QP]; /* kept for the slot once made: a late write of a peer
                                         * lands in a ring, never in freed memory */
    uint16_t qp_gen[SHM_MAX_QP];
    struct shm_mr *mrs[SHM_MAX_MR];
    uint32_t mr_gen[SHM_MAX_MR];
    int port_seen; /* the port state the last async event reported (1 ACTIVE) */
    int evfd;      /* async_fd (an eventfd): the plugin sets it non-blocking */
};

struct shm_pd {
    struct ibv_pd ibv;
};

struct shm_mr {
    struct ibv_mr ibv;
    int slot;
    int access;
};

struct shm_cq {
    struct ibv_cq ibv;
    struct shm_ctx *ctx;
    struct ibv_wc *wc; /* completion ring */
    int cap, head, count;
    struct shm_qp **qps; /* QPs completing here */
    int nqps, qps_cap;
    unsigned rr;
};

enum shm_wr_state {
    SHM_WR_QUEUED = 0,
    SHM_WR_MOVING, /* part of the data moved */
    SHM_WR_RING,   /* data moved, the immediate not yet in the peer's ring (ring full: RNR) */
    SHM_WR_LANDED, /* at the responder; its acknowledgement not yet seen */
    SHM_WR_DONE,   /* acknowledged: completes successfully */
    SHM_WR_FAILED, /* completes with status */
};

struct shm_swr {
    uint64_t wr_id;
    uint8_t opcode; /* IBV_WR_RDMA_WRITE, _WITH_IMM, IBV_WR_RDMA_READ */
    uint8_t signaled, nsge, state;
    uint32_t imm;
    uint64_t raddr;
    uint32_t rkey;
    uint32_t len;
    uint64_t off;      /* bytes moved */
    uint64_t deadline; /* ns: retries run out (0: none running) */
    uint64_t ring_idx; /* WRITE_WITH_IMM: its entry in the peer QP's ring, once pushed */
    int status;        /* enum ibv_wc_status once FAILED */
    bool inl;          /* the data is the QP's inline copy of this entry */
    struct ibv_sge sge[SHM_MAX_SGE];
};

struct shm_qp {
    struct ibv_qp ibv;
    struct shm_ctx *ctx;
    int slot;
    int sq_cap, rq_cap, max_inline;
    struct shm_swr *sq;  /* ring: [head, head + count); next = first not yet landed */
    uint8_t *inline_buf; /* sq_cap * max_inline */
    uint32_t sq_head, sq_count, sq_next;
    uint64_t *rq; /* receive wr_ids */
    uint32_t rq_head, rq_count;
    bool flush; /* in ERR: work requests still to be flushed */
    int timeout, retry_cnt;
    /* What modify_qp was given (pkey index, port, address vector, MTU...): what query_qp
     * returns, as a device holds the attributes it accepted. */
    struct ibv_qp_attr given;
    uint32_t ece_options; /* ECE accepted by set_ece (shm_ece.c) */
    bool ece_set;
    /* the connected peer QP (RTR) */
    int remote_lid, remote_dev;
    uint32_t remote_qpn;
    pid_t remote_pid;
    uint64_t remote_dir;
    uint64_t prod, cached_tail; /* entries written into the peer's ring, its tail as last read */
    uint64_t remote_ring_addr;  /* the peer QP's ring, as its directory record last said */
    struct shm_ring *ring;      /* this QP's incoming ring */
    uint64_t cons;
};

#endif
