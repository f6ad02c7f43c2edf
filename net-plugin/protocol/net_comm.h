/* SPDX-License-Identifier: Apache-2.0 */
/* Internal state of the net plugin (protocol layer): connections (send and receive comms with
 * per-rail state arrays), requests and memory handles, and inline helpers on them. No function of
 * another file is declared here: each module x.c declares its own in x.h, so that every call
 * between modules is an include test/check_layers.py sees. Everything returns 0 or a negative
 * errno; net_exports.c maps that to ncclResult_t. */
#ifndef NCCL_RAIL_NET_COMM_H
#define NCCL_RAIL_NET_COMM_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/cts_fifo.h"
#include "protocol/eager_ring.h"
#include "protocol/net_qsize.h"
#include "protocol/rejoin.h"
#include "protocol/twophase.h"
#include "wire/net_tagmap.h"
#include "rails/stripe.h"
#include "transport/net_devices.h"
#include "wire/eager_image.h"
#include "wire/net_wire.h"

#define RAIL_SEND_REQS  256 /* NCCL_NET_MAX_REQUESTS x maxRecvs isends per send comm */
#define RAIL_RECV_REQS  32  /* NCCL_NET_MAX_REQUESTS irecvs per receive comm */
#define RAIL_RECV_SQ    63  /* send WRs per QP on the receiving side (CTS + credit + answers) */
#define RAIL_POLL_BATCH 16
/* RAIL_RECV_SQ: a clear-to-send write per receive request in flight (at most RAIL_RECV_REQS), one
 * credit write, the rest for answers to queries; a write that finds no room waits for a
 * completion, as it always did. 63, not 64: providers that round entries + 1 up to a power of two
 * (rdma_rxe) keep 64 slots. */
/* RAIL_RECV_RQ, RAIL_REPOST_BATCH: protocol/net_qsize.h. */

/* ---- connections ---- */

struct rail_flush;
struct rail_stats_conn;

#define RAIL_LSTN_MAGIC 0x524c5354u /* live listen comm */
#define RAIL_SEND_MAGIC 0x52534e44u /* live send comm */
#define RAIL_RECV_MAGIC 0x52524356u /* live receive comm */
#define RAIL_MR_MAGIC   0x524d5248u
#define RAIL_DEAD_MAGIC 0xdeadbeefu

struct rail_qp {
    struct ibv_qp *qp;
    int sq_out;      /* signalled send WRs not yet completed */
    int sq_max;      /* send WRs it holds */
    int rq_max;      /* receive WRs it holds: a receive comm posts that many at connect */
    int inline_want; /* inline bytes asked for it (0: it carries no eager writes) */
    int rq_posted;   /* receive WRs posted and not yet completed */
    int rq_owed;     /* receive WRs consumed and not yet posted again (net_recv.c) */
};

/* One rail (physical port) of a connection. */
struct rail_link {
    struct rail_dev *dev;
    struct ibv_cq *cq;
    struct rail_qp *qps;  /* nqps */
    struct ibv_mr *mr[3]; /* this end's registered control regions (see the comm types) */
    uint32_t peer_rkey1, peer_rkey2;
    int rq_depth;          /* receive WRs of each data QP (the control QP's: its rq_max) */
    int max_inline;        /* what every QP of this rail that carries eager writes got */
    struct rail_rejoin rj; /* up / ready / rejoin stage (rejoin.c, driven by net_health.c) */
    unsigned rr;           /* rotation over this rail's QPs */
    int sl, tc;
    /* Completions the rail's CQ may hold; 0: none, net_data.c leaves the CQ unpolled. A send
     * comm counts its WRs out (sq_out summed over the QPs: net_send_wr.c, net_send_post.c);
     * a receive comm keeps 1 (the peer's writes with immediate come at any time). */
    int cq_work;
};

struct rail_comm;
struct rail_req_head;

/* What differs between the two connection kinds, fixed when a comm is built (its kind's
 * constructor): the shared code (polling, failover, rejoin, teardown) dispatches through it,
 * never on a tag. Send: net_send.c; receive: net_recv.c. */
struct rail_comm_ops {
    const char *kind;   /* "send" / "recv", for log lines */
    int stats_dir;      /* enum rail_stats_dir of the telemetry */
    bool drives_rejoin; /* this end proposes rejoins (the sender); the other end answers */
    /* The comm's stripe scheduler; NULL when this kind does not stripe (receive). */
    struct rail_stripe *(*sched)(struct rail_comm *c);
    /* After the QPs are connected: the kind's own rail setup (NULL: none). */
    int (*setup_rails)(struct rail_comm *c, char *err, size_t errlen);
    /* Before the completions are polled: what arrives without one (NULL: nothing; receive: the
     * flagged eager images). */
    void (*poll)(struct rail_comm *c);
    void (*on_wc)(struct rail_comm *c, int rail, const struct ibv_wc *wc);
    /* After each poll: work that a failed rail lost goes again. */
    void (*retry)(struct rail_comm *c);
    /* Teardown: first out of every other comm's progress (NULL: nothing to do), then, once the
     * links are gone, the kind's own regions. */
    void (*quiesce)(struct rail_comm *c);
    void (*release)(struct rail_comm *c);
};

/* A request kind (send, receive, GPUDirect flush): test() reaches it through this table. */
struct rail_req_ops {
    int (*test)(struct rail_req_head *h, int *done, int *sizes);
    /* While a request of this kind is in flight, test() ticks its comm's health check
     * (net_data.c); a GPUDirect flush (a local read) does not. */
    bool ticks_health;
};

struct rail_comm {
    const struct rail_comm_ops *ops; /* the comm's kind; NULL once closed */
    uint32_t magic;                  /* RAIL_SEND_MAGIC / RAIL_RECV_MAGIC while live */
    int nrails, nqps;
    struct rail_link link[RAIL_MAX_RAILS];
    int fd;            /* out-of-band TCP connection, kept open to notice a dead peer */
    atomic_int error;  /* first fatal error (-errno), sticky; async events may set it */
    bool error_warned; /* the error was already reported to NCCL once */
    uint64_t next_check_ns;
    uint64_t coarse_ns;    /* the coarse clock as the last health tick read it */
    unsigned health_calls; /* health ticks since the clock was last read */
    uint64_t peer_gone_ns; /* when the peer's socket was first seen closed (0: open) */
    unsigned rr;           /* rotation counter over QPs */
    int nup;               /* rails up */
    bool failover;         /* NCCL_RAIL_FAILOVER and more than one rail */
    int rejoin_hold;       /* > 0: no rejoin now (send side: a lost completion is being asked) */
    struct rail_netdev *group;
    struct rail_ctl *ctl; /* out-of-band control frames (net_ctl.c) */
    struct rail_stats_conn *stats;
    uint64_t peer_addr1; /* S: peer's size records; R: peer's FIFO */
    uint64_t peer_addr2; /* S: peer's eager bounce slots */
    char peer[64];       /* peer's out-of-band address, for messages */
    /* Rails whose QP got a fatal async event (failover only; set from any comm's thread). */
    atomic_uint qp_fatal_rails;
    /* The memory handle that last passed rail_mr_check on this comm, and its registration
     * generation (net_reg.h): the same handle again skips the per-rail device checks. */
    const struct rail_mr *mr_ok;
    uint64_t mr_ok_gen;
};

/* Request header shared by every kind: test() dispatches through ops. */
struct rail_req_head {
    const struct rail_req_ops *ops; /* NULL: not in flight (free, or completed) */
    struct rail_comm *comm;
};

#define RAIL_CHUNK_REC 0xFF /* work request id "chunk" of a record or eager write */
#define RAIL_CHUNK_ASK 0xFE /* work request id "chunk" of a query (RAIL_IMM_QUERY) */
enum { RAIL_SREQ_PIPE = 1, RAIL_SREQ_2PH, RAIL_SREQ_EAGER };
/* A PIPE message whose rail failed before its last WR completed here: did the receiver get it?
 * WAIT: its WRs are still coming back; ASKING: the query's WR is out; ASKED: it completed, the
 * answer is awaited. */
enum { RAIL_UNSURE_WAIT = 1, RAIL_UNSURE_ASKING, RAIL_UNSURE_ASKED };

struct rail_send_chunk {
    uint64_t off, len;
    uint64_t post_ns;
    uint8_t rail, qp;
};

struct rail_send_req_block;

struct rail_send_req {
    struct rail_req_head h;
    uint16_t idx;                          /* index in the comm (work request ids) */
    uint8_t *src;                          /* RAIL_LOCAL_STRIDE bytes of its block's region:
                                            * size record at 0, eager header at 64 */
    const struct rail_send_req_block *blk; /* its block: the region's lkey per rail */
    int wrs_left; /* signalled WRs of this message not yet completed (PIPE) */
    size_t size;
    int error;
    uint8_t kind; /* RAIL_SREQ_* */
    struct rail_twophase
        tp;           /* pieces (2PH: their states), the record or eager write (twophase.c) */
    uint8_t rec_rail; /* 2PH: the size record's rail; EAGER: the eager write's */
    bool striped;     /* more than one rail carried data */
    bool host;        /* the source buffer is host memory: an eager write may go inline */
    bool polled;      /* EAGER: written as a flagged image (wire/eager_image.h) */
    bool too_big;
    bool held;                   /* 2PH: reported done to NCCL with its size record still out:
                                  * the plugin keeps it (record source, FIFO slot, two-phase
                                  * state) until the record's completion, then frees it */
    uint8_t unsure, unsure_rail; /* PIPE: RAIL_UNSURE_*, the rail that failed under it */
    uintptr_t data;
    uint32_t lkey[RAIL_MAX_RAILS];
    uint64_t raddr; /* receive buffer */
    uint32_t rkey[RAIL_MAX_RAILS];
    uint64_t seq; /* FIFO slot sequence (rendezvous) or eager message number */
    unsigned entry, bounce;
    struct rail_send_chunk ch[RAIL_REQ_CHUNKS];
};

/* Send requests come in blocks, allocated when the requests in flight first need one (block 0
 * with the comm): a comm that never has more than 8 messages in flight (NCCL's NCCL_STEPS per
 * connection) never holds the 256 NCCL may ask for. Each block has its own registered region for
 * its requests' record and eager header sources. */
#define RAIL_SEND_REQ_BLOCK  8
#define RAIL_SEND_REQ_BLOCKS (RAIL_SEND_REQS / RAIL_SEND_REQ_BLOCK)
struct rail_send_req_block {
    struct rail_send_req req[RAIL_SEND_REQ_BLOCK];
    uint8_t *src; /* RAIL_SEND_REQ_BLOCK * RAIL_LOCAL_STRIDE bytes, registered on every rail */
    struct ibv_mr *mr[RAIL_MAX_RAILS];
};

struct rail_send_comm {
    struct rail_comm base;
    uint8_t *fifo;            /* mr[0]: FIFO + credit word, written by the receiver */
    uint8_t *local;           /* mr[1]: the flagged image of each bounce slot, eager_slots of them
                               * (NULL: no images; the per-request record and header sources
                               * are in the request blocks) */
    struct rail_cts_fifo cts; /* what was absorbed of the FIFO (cts_fifo.c) */
    struct rail_tagmap sent;  /* messages sent per tag */
    uint64_t eager_posted;
    int eager_slots;
    uint32_t eager_bytes; /* receiver's bounce payload size */
    uint32_t eager_limit; /* min(bounce size, NCCL_RAIL_EAGER_MAX) */
    uint32_t poll_max;    /* eager messages up to this size from host memory go as flagged
                           * images: min(eager_limit, NCCL_RAIL_EAGER_POLL_MAX) */
    int nfree;
    uint16_t free_list[RAIL_SEND_REQS];
    struct rail_stripe sched;
    uint64_t max_chunk; /* smallest max_msg over the rails */
    /* Largest rendezvous message sent by the one-rail direct path (net_send.c send_direct: one
     * rail, no QP split, one WRITE WITH IMM carrying the data), 0: never. Decided once, with the
     * rails (send_setup_rails). */
    uint64_t direct_max;
    /* Largest rendezvous message the dual-rail lean path (net_send.c send_striped) may split over
     * both rails (two rails, no QP split: min(max_chunk, RAIL_STRIPE_MAX_SIZE)), 0: never. Decided
     * with the rails, as direct_max. */
    uint64_t striped_max;
    bool split_qps;        /* NCCL_IB_SPLIT_DATA_ON_QPS */
    bool ar;               /* adaptive routing (NCCL_IB_ADAPTIVE_ROUTING) on this comm's device */
    uint64_t ar_threshold; /* NCCL_IB_AR_THRESHOLD: larger messages carry no data in an imm */
    int ndata;             /* data QPs per rail: QPs 0..ndata-1 */
    /* Index of each rail's control QP (two-phase size records, queries, eager writes: never
     * queued behind bulk data), or -1: none (they rotate over the data QPs). */
    int ctl_qp;
    int npending;     /* requests with chunks waiting to be (re)posted */
    int n2ph;         /* two-phase or unsure requests not yet done */
    int nunsure;      /* PIPE requests asking the receiver (unsure) */
    int nheld;        /* 2PH requests reported done whose record is still out (held) */
    atomic_int busy;  /* a thread is inside this comm (net_data.c) */
    bool helped;      /* two-phase work in flight: other comms' progress polls it (net_data.c) */
    bool help_listed; /* in the help list (from a two-phase message until closed or dropped) */
    unsigned owner_calls; /* the owner's enters (net_data.c: a helper skips an active owner) */
    unsigned help_seen;   /* owner_calls at the last help pass that looked at it */
    uint16_t slot_busy[RAIL_FIFO_SLOTS];    /* WRs of a message of that FIFO slot in flight */
    uint16_t bounce_busy[RAIL_EAGER_SLOTS]; /* WRs of an eager message in that slot in flight */
    struct rail_send_req_block *blk[RAIL_SEND_REQ_BLOCKS]; /* NULL: not allocated yet */
    bool blk_warned; /* a block could not be allocated (INFO line once) */
};

struct rail_recv_entry {
    uint8_t *data;
    uint64_t cap;
    uint64_t size;
    int32_t tag;
    uint32_t tag_index;
    bool done;
    uint32_t rkey[RAIL_MAX_RAILS]; /* a held-back receive's keys, staged with its CTS */
};

struct rail_recv_req_block;

struct rail_recv_req {
    struct rail_req_head h;
    uint8_t idx;                           /* index in the comm (work request ids) */
    uint8_t *stage;                        /* its CTS entries, RAIL_RECV_STAGE(cts_bytes) of its
                                            * block's region */
    const struct rail_recv_req_block *blk; /* its block: the region's lkey per rail */
    int n, left;                           /* entries, entries whose data has not arrived */
    bool cts_pending;                      /* the CTS write has not completed locally yet */
    bool cts_retry;    /* the CTS write failed with its rail: re-post it on another rail */
    bool has_slot;     /* a CTS was written: slot_seq is valid */
    bool staged;       /* its CTS entries are in stage (a held-back receive's: once written) */
    uint64_t defer_ns; /* deferred CTS: when the receive was posted (coarse clock) */
    uint64_t slot_seq;
    int error;
    struct rail_recv_entry e[RAIL_MAX_RECVS];
};

/* Receive requests come in blocks like the send side's: NCCL keeps NCCL_STEPS = 8 receives in
 * flight per connection, so a comm usually holds block 0 only (allocated with the comm), not the
 * 32 NCCL may ask for. Each block has its own registered region for its requests' CTS entries. */
#define RAIL_RECV_REQ_BLOCK  8
#define RAIL_RECV_REQ_BLOCKS (RAIL_RECV_REQS / RAIL_RECV_REQ_BLOCK)
#define RAIL_RECV_STAGE(b)   ((size_t)RAIL_MAX_RECVS * (b)) /* per request, entries of b bytes */
struct rail_recv_req_block {
    struct rail_recv_req req[RAIL_RECV_REQ_BLOCK];
    uint8_t *stage; /* RAIL_RECV_REQ_BLOCK * RAIL_RECV_STAGE bytes, registered on every rail */
    struct ibv_mr *mr[RAIL_MAX_RAILS];
};

struct rail_recv_comm {
    struct rail_comm base;
    uint8_t *records; /* mr[0]: size records written by the sender */
    uint8_t *bounce;  /* mr[1]: eager bounce slots written by the sender (NULL: no eager),
                       * then as many image slots (rail_image_region_off) */
    uint8_t *images;  /* the image slots, polled (NULL: no eager) */
    bool polled[RAIL_EAGER_SLOTS]; /* the message in bounce slot b came as an image */
    /* Size of the message in bounce slot b as checked when it arrived (the peer could rewrite
     * the slot since: never read again from there). */
    uint32_t msg_size[RAIL_EAGER_SLOTS];
    bool repoll; /* a message came by completion: images behind it may be found now */
    /* Bytes of the largest image seen in image slot b: zeroed at each delivery from b. */
    uint16_t image_hw[RAIL_EAGER_SLOTS];
    uint8_t *staging; /* mr[2]: the credit word, then the query answers (sources) */
    unsigned
        cts_bytes; /* the sender's FIFO entries (wire/cts_layout.h), settled in the handshake */
    struct rail_cts_tail fifo;   /* FIFO slots taken, and by which receive (cts_fifo.c) */
    struct rail_tagmap posted;   /* receive entries posted per tag */
    struct rail_eager_ring ring; /* bounce slot states, credit (eager_ring.c) */
    uint32_t eager_bytes;
    size_t slot_stride;        /* RAIL_EAGER_HDR + eager_bytes */
    uint32_t peer_eager_limit; /* the sender sends messages up to this size eagerly */
    int ndeferred;             /* receives whose CTS is held back (they may come eagerly) */
    bool owes;                 /* some QP has receive WRs to post again (rq_owed) */
    int owes_at; /* with owes: the one QP that owes (rail * RAIL_MAX_QPS + qp), -1 several */
    uint8_t deferred[RAIL_RECV_REQS];
    int nretry; /* receives whose clear-to-send must be written again (rail failure) */
    int nquery; /* queries of the sender not yet answered */
    int sq_wrs; /* send WRs (CTS, credit, answers) not completed yet: every rail's sq_out summed */
    struct {
        uint32_t seq; /* the queried record's seq field */
        uint8_t rail; /* the rail that carried the message: failed and drained before answering */
        bool asked;
    } __attribute__((packed)) query[RAIL_FIFO_SLOTS * RAIL_MAX_RECVS]; /* 6 bytes, not 8, each */
    int nfree;
    uint8_t free_list[RAIL_RECV_REQS];
    struct rail_recv_req_block *blk[RAIL_RECV_REQ_BLOCKS]; /* NULL: not allocated yet */
    bool blk_warned; /* a block could not be allocated (INFO line once) */
    /* GPUDirect flush (net_flush.c): loopback QPs per rail, NULL when no rail needs a flush. */
    struct rail_flush *flush;
};

#define RAIL_STAGING_CREDIT_OFF 0
#define RAIL_STAGING_ANSWER_OFF (RAIL_STAGING_CREDIT_OFF + 64) /* query answers (sources) */
#define RAIL_STAGING_SIZE       (RAIL_STAGING_ANSWER_OFF + RAIL_ANSWER_BYTES)
#define RAIL_LOCAL_STRIDE       128 /* per send request: record at 0, eager header at 64 */

/* Receive request i, NULL when its block was never allocated. */
static inline struct rail_recv_req *rail_recv_req_at(struct rail_recv_comm *r, int i)
{
    struct rail_recv_req_block *k = r->blk[i / RAIL_RECV_REQ_BLOCK];
    return k ? &k->req[i % RAIL_RECV_REQ_BLOCK] : NULL;
}

/* Memory handle returned by regMr. */
struct rail_mr {
    uint32_t magic;
    int nrails;
    uint64_t gen; /* unique per registration (never 0): a handle freed and made again at the
                   * same address is another generation (rail_mr_check's per-comm cache) */
    int type;
    struct rail_dev *dev[RAIL_MAX_RAILS];
    struct rail_reg_entry *ent[RAIL_MAX_RAILS];
    uint32_t lkey[RAIL_MAX_RAILS], rkey[RAIL_MAX_RAILS];
    uintptr_t start;
    size_t len;
};

/* ---- work request ids ---- */

enum rail_wr_kind {
    RAIL_WR_DATA = 1,
    RAIL_WR_LAST,
    RAIL_WR_CTS,
    RAIL_WR_CREDIT,
    RAIL_WR_RECV,
    RAIL_WR_ANSWER
};

static inline uint64_t rail_wrid(int kind, int rail, int qp, int idx)
{
    return (uint64_t)kind << 56 | (uint64_t)rail << 48 | (uint64_t)qp << 32 | (uint32_t)idx;
}
static inline int rail_wrid_kind(uint64_t id)
{
    return (int)(id >> 56);
}
static inline int rail_wrid_qp(uint64_t id)
{
    return (int)((id >> 32) & 0xFFFF);
}
static inline int rail_wrid_idx(uint64_t id)
{
    return (int)(id & 0xFFFFu);
}
static inline int rail_wrid_chunk(uint64_t id)
{
    return (int)((id >> 16) & 0xFFu);
}
static inline int rail_wrid_rail(uint64_t id)
{
    return (int)((id >> 48) & 0xFFu);
}

/* ---- inline helpers ---- */

/* Send request i of s, NULL when its block is not allocated. */
static inline struct rail_send_req *rail_send_req_at(struct rail_send_comm *s, int i)
{
    struct rail_send_req_block *b = s->blk[i / RAIL_SEND_REQ_BLOCK];
    return b ? &b->req[i % RAIL_SEND_REQ_BLOCK] : NULL;
}
/* The lkey of q's record and header sources on rail. */
static inline uint32_t rail_send_src_lkey(const struct rail_send_req *q, int rail)
{
    return q->blk->mr[rail]->lkey;
}

static inline const char *rail_comm_kind(const struct rail_comm *c) /* "send", "recv" */
{
    return c->ops ? c->ops->kind : "?";
}
/* A live send (receive) comm of this plugin: a pointer NCCL handed back. */
static inline bool rail_comm_is_send(const struct rail_comm *c)
{
    return c && c->magic == RAIL_SEND_MAGIC;
}
static inline bool rail_comm_is_recv(const struct rail_comm *c)
{
    return c && c->magic == RAIL_RECV_MAGIC;
}
static inline bool rail_comm_live(const struct rail_comm *c)
{
    return rail_comm_is_send(c) || rail_comm_is_recv(c);
}

#endif
