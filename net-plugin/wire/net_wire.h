/* SPDX-License-Identifier: Apache-2.0 */
/* Wire formats of the net plugin, as pure functions (no I/O, no verbs): the listen handle NCCL
 * carries between ranks, the TCP frames of the connection handshake, the memory layouts both
 * ends address with RDMA (clear-to-send FIFO, size records, eager bounce slots) and the 32-bit
 * immediate values. Every decoder validates each field it returns: data from the peer is never
 * trusted for a size, a count or an index. */
#ifndef NCCL_RAIL_NET_WIRE_H
#define NCCL_RAIL_NET_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAIL_WIRE_MAGIC 0x4c494152u /* "RAIL" little-endian */
/* 2: direct rendezvous writes (RAIL_IMM_DIRECT); 3: queries; 4: flagged eager images
 * (wire/eager_image.h). The handle, READY and control frames stay at 4. */
#define RAIL_WIRE_VERSION 4
/* 5: metadata frames (META_S, META_R) that carry each rail's ECE after the version 4 body. A
 * listener announces in its handle that it takes them (rail_handle.meta_version); a connector
 * sends version 5 only to such a listener, and the listener answers in the version it was
 * sent, so a plugin of either version connects to the other (without ECE). */
#define RAIL_WIRE_VERSION_ECE 5
/* 6: the sender's clear-to-send FIFO may have compact entries (RAIL_CTS_COMPACT_BYTES, half the
 * memory): its META_S says which (cts_bytes, after the ECE block) and META_R echoes it; META_S
 * also says how many work requests each of its QPs keeps in flight (send_depth), which sizes the
 * receiver's receive queues. Offered
 * the same way (the handle's meta_version): a connector sends version 6 only to a listener that
 * announces it and uses compact entries only then; a version 5 listener (which reads any newer
 * handle as 5) gets version 5 frames and the 128-byte entries. */
#define RAIL_WIRE_VERSION_FIFO 6
#define RAIL_WIRE_VERSION_MAX  RAIL_WIRE_VERSION_FIFO

/* Limits shared by both ends of a connection (a peer announcing more is rejected). */
#define RAIL_MAX_RAILS         8   /* rails (physical ports) one connection may stripe over */
#define RAIL_MAX_QPS           128 /* NCCL_IB_QPS_PER_CONNECTION upper bound, per rail */
#define RAIL_MAX_RECVS         8   /* largest n of a grouped irecv (props.maxRecvs) */
#define RAIL_FIFO_SLOTS        64  /* clear-to-send slots; > receive requests in flight (32) */
#define RAIL_CTS_BYTES         128 /* one clear-to-send entry (wire versions 4 and 5) */
#define RAIL_CTS_COMPACT_BYTES 64  /* one compact entry (version 6, wire/cts_layout.h) */
#define RAIL_RECORD_BYTES      16  /* one size record */
#define RAIL_EAGER_HDR         64  /* header in front of each eager bounce slot */
#define RAIL_EAGER_SLOTS       16  /* eager bounce slots per receive comm */
#define RAIL_EAGER_MAX_CAP     65536

/* ---- listen handle (fits NCCL_NET_HANDLE_MAXSIZE = 128) ---- */

#define RAIL_HANDLE_BYTES     128
#define RAIL_HANDLE_WIRE      44 /* bytes covered by the checksum */
#define RAIL_HANDLE_STAGE_OFF 64 /* local connect-progress cookie, never read from the peer */

struct rail_handle {
    int family;       /* AF_INET or AF_INET6 */
    uint16_t port;    /* host order */
    uint8_t addr[16]; /* IPv4 in the first 4 bytes, or IPv6 */
    uint64_t nonce;   /* identifies the listener */
    /* Highest metadata frame version the listener takes: RAIL_WIRE_VERSION for a listener
     * older than ECE (its handle has zeros there), RAIL_WIRE_VERSION_ECE, or
     * RAIL_WIRE_VERSION_FIFO (a newer listener reads as the newest this plugin speaks). */
    int meta_version;
};

void rail_handle_encode(const struct rail_handle *h, void *buf);
/* 0, or -EINVAL/-EPROTO with the reason in err (bad magic, version, checksum, family, port). */
int rail_handle_decode(const void *buf, struct rail_handle *h, char *err, size_t errlen);
uint64_t rail_handle_stage_get(const void *buf);
void rail_handle_stage_set(void *buf, uint64_t cookie);

/* ---- handshake frames ---- */

#define RAIL_FRAME_HDR 16
enum rail_frame_type {
    RAIL_FRAME_META_S = 1,
    RAIL_FRAME_META_R = 2,
    RAIL_FRAME_READY = 3,
    RAIL_FRAME_CTL = 4, /* after the handshake: rail down / rejoin (one rail's metadata) */
};
/* Kinds of control frames, in the metadata's nonce: kind << 32 | rail. */
enum rail_ctl_kind {
    RAIL_CTL_DOWN = 1,        /* the sender of the frame saw the rail fail */
    RAIL_CTL_REJOIN_REQ = 2,  /* send side: new QPs of the rail, please connect */
    RAIL_CTL_REJOIN_ACK = 3,  /* receive side: connected, here are mine */
    RAIL_CTL_REJOIN_NAK = 4,  /* receive side: not now (port down, WRs still draining) */
    RAIL_CTL_REJOIN_DONE = 5, /* send side: connected too, the rail carries traffic again */
};

/* Link layers on the wire (independent of the verbs enum values). */
enum rail_wire_ll { RAIL_LL_IB = 1, RAIL_LL_ETH = 2 };

/* Enhanced Connection Establishment of one rail's QPs (ibv_ece): META_S offers what the
 * sender's QPs queried, META_R returns what the receiver's QPs accepted (ibv_set_ece of the
 * offer, then ibv_query_ece). qp_bits: bit q set = QP q has it; none set = no ECE on the rail
 * (provider without ECE, NCCL_IB_ECE_ENABLE=0, or the set failed), and the values are 0. */
#define RAIL_ECE_BYTES 32 /* per rail on the wire */
struct rail_wire_ece {
    uint32_t vendor_id, options, comp_mask;
    uint8_t qp_bits[RAIL_MAX_QPS / 8];
};

struct rail_meta_rail {
    int link_layer; /* enum rail_wire_ll */
    int mtu;        /* IBV_MTU_256 (1) .. IBV_MTU_4096 (5) */
    int port;       /* 1..255 */
    int gid_index;  /* 0..255 */
    int lid;        /* IB: 1..0xBFFF; RoCE: ignored */
    uint32_t rkey1; /* S: FIFO/credit region; R: size records */
    uint32_t rkey2; /* R: eager bounce region (0 when no eager) */
    uint8_t gid[16];
    uint32_t qpn[RAIL_MAX_QPS];
    struct rail_wire_ece ece; /* version RAIL_WIRE_VERSION_ECE frames and newer only */
};

/* META_S goes from the connecting (sending) side, META_R is the accepting side's answer. */
struct rail_meta {
    int version;          /* frame version: RAIL_WIRE_VERSION, or _ECE (0 reads as the first) */
    uint64_t nonce;       /* the listener's nonce from the handle */
    int nrails;           /* 1..RAIL_MAX_RAILS */
    int nqps;             /* per rail, 1..RAIL_MAX_QPS */
    int sl, tc;           /* S: chosen service level / traffic class; R: echoed */
    int eager_slots;      /* R: bounce slots (0..RAIL_EAGER_SLOTS); S: 0 */
    uint32_t eager_bytes; /* R: payload bytes per slot; S: the largest message it sends eagerly
                           * (its NCCL_RAIL_EAGER_MAX); both 0..RAIL_EAGER_MAX_CAP */
    uint64_t addr1;       /* S: FIFO+credit region; R: size-record region */
    uint64_t addr2;       /* R: bounce region (0 when no eager); S: 0 */
    /* Bytes of one entry of the sender's clear-to-send FIFO: RAIL_CTS_BYTES or
     * RAIL_CTS_COMPACT_BYTES. Version 6 frames carry it (S: its FIFO's, R: echoed); older ones
     * decode as RAIL_CTS_BYTES and encode nothing. */
    unsigned cts_bytes;
    /* S, version 6: work requests one send QP keeps in flight at most (its send queue depth,
     * 1..65535), so at most as many writes with immediate can arrive at a time on one of the
     * receiver's QPs while it keeps polling; R: 0. Older frames: 0 (not known). */
    int send_depth;
    /* S, version 6: send WRs of the sender's control QP, the last of each rail's nqps QPs, which
     * carries size records, queries and eager writes and keeps fewer WRs in flight than a data
     * QP (0..65535; 0: no control QP, every QP is a data QP); R: 0. Older frames: 0. */
    int ctl_depth;
    struct rail_meta_rail rails[RAIL_MAX_RAILS];
};

/* Body bytes of a version RAIL_WIRE_VERSION frame; version _ECE adds RAIL_ECE_BYTES a rail, and
 * version _FIFO RAIL_META_FIFO_BYTES more (u16 cts_bytes, u16 send_depth, u16 ctl_depth, 2 zero
 * bytes). */
size_t rail_meta_body_len(int nrails, int nqps);
#define RAIL_META_FIFO_BYTES 8
#define RAIL_META_MAX_BODY                                                                         \
    (40 + RAIL_MAX_RAILS * (32 + 4 * RAIL_MAX_QPS) + RAIL_MAX_RAILS * RAIL_ECE_BYTES +             \
     RAIL_META_FIFO_BYTES)
/* Whether QP q of a rail has ECE (bit q of qp_bits), and setting it. */
static inline int rail_ece_has(const struct rail_wire_ece *e, int q)
{
    return (e->qp_bits[q / 8] >> (q % 8)) & 1;
}
static inline void rail_ece_mark(struct rail_wire_ece *e, int q)
{
    e->qp_bits[q / 8] |= (uint8_t)(1u << (q % 8));
}
/* Frame = header + body; returns bytes written, or -E2BIG when cap is too small. */
int rail_meta_encode(int type, const struct rail_meta *m, void *buf, size_t cap);
int rail_ready_encode(void *buf, size_t cap);
/* Header check: the expected type, body_len <= max_body, the version (RAIL_WIRE_VERSION; a
 * metadata frame also RAIL_WIRE_VERSION_ECE and _FIFO), returned in *version when not NULL. */
int rail_frame_header_decode(const void *hdr, int want_type, uint32_t max_body, uint32_t *body_len,
                             uint32_t *checksum, int *version, char *err, size_t errlen);
/* Validates the checksum and every field (counts, MTU, link layer, QPNs, GID index, LID, sizes
 * and the exact body length) of a version RAIL_WIRE_VERSION frame (m->version set to it). */
int rail_meta_decode(int type, const void *body, size_t len, uint32_t checksum, struct rail_meta *m,
                     char *err, size_t errlen);
/* The same for a frame of `version` (its header's): RAIL_WIRE_VERSION_ECE adds the ECE block
 * (flags and reserved bytes zero, QP bits only below nqps, no values without a QP);
 * RAIL_WIRE_VERSION_FIFO adds cts_bytes (RAIL_CTS_BYTES or RAIL_CTS_COMPACT_BYTES) and
 * send_depth (META_S: 1..65535, META_R: 0), the rest of its 8 bytes zero. */
int rail_meta_decode_version(int type, int version, const void *body, size_t len, uint32_t checksum,
                             struct rail_meta *m, char *err, size_t errlen);
uint32_t rail_wire_checksum(const void *buf, size_t len);

/* ---- RDMA-visible layouts ---- */

/* Clear-to-send entry the receiver writes into the sender's FIFO (RAIL_CTS_BYTES each,
 * RAIL_MAX_RECVS per slot). seq is written last and read first and last by the sender. The
 * compact layout of version 6 (RAIL_CTS_COMPACT_BYTES) is in wire/cts_layout.h; both decode to
 * this struct. */
struct rail_cts {
    uint64_t addr;      /* receive buffer */
    uint64_t size;      /* its capacity */
    int32_t tag;        /* the irecv tag */
    uint32_t tag_index; /* how many entries with this tag the receiver posted before */
    uint16_t nreqs;     /* entries in this slot (1..RAIL_MAX_RECVS) */
    uint16_t entry;     /* index of this entry in the slot */
    uint32_t reserved;
    uint32_t rkey[RAIL_MAX_RAILS];
    uint8_t pad[RAIL_CTS_BYTES - 72];
    uint64_t seq; /* slot sequence + 1; 0 = never written */
};

/* The sender's control region for entries of b bytes (RAIL_CTS_BYTES or _COMPACT_BYTES): the
 * FIFO, the credit word, the answers. The unsuffixed names are the 128-byte layout's. */
#define RAIL_FIFO_BYTES_OF(b) ((size_t)RAIL_FIFO_SLOTS * RAIL_MAX_RECVS * (b))
#define RAIL_CREDIT_OFF_OF(b) RAIL_FIFO_BYTES_OF(b) /* u64: eager slots freed by the receiver */
/* Answers to queries (RAIL_IMM_QUERY), one u64 per FIFO slot and entry, written by the
 * receiver: RAIL_ANSWER(seq, landed), seq = the record's seq field. */
#define RAIL_ANSWER_OFF_OF(b)    (RAIL_FIFO_BYTES_OF(b) + 64)
#define RAIL_ANSWER_BYTES        ((size_t)RAIL_FIFO_SLOTS * RAIL_MAX_RECVS * 8)
#define RAIL_SEND_REGION_OF(b)   (RAIL_ANSWER_OFF_OF(b) + RAIL_ANSWER_BYTES)
#define RAIL_FIFO_BYTES          RAIL_FIFO_BYTES_OF(RAIL_CTS_BYTES)
#define RAIL_CREDIT_OFF          RAIL_CREDIT_OFF_OF(RAIL_CTS_BYTES)
#define RAIL_ANSWER_OFF          RAIL_ANSWER_OFF_OF(RAIL_CTS_BYTES)
#define RAIL_SEND_REGION         RAIL_SEND_REGION_OF(RAIL_CTS_BYTES)
#define RAIL_ANSWER(seq, landed) ((uint64_t)(seq) << 32 | ((landed) ? 2u : 1u))
#define RAIL_ANSWER_IS(ans, seq) ((uint32_t)((ans) >> 32) == (seq) && ((ans)&3u) != 0)
#define RAIL_ANSWER_LANDED(ans)  (((ans)&3u) == 2u)
#define RAIL_RECORDS_SIZE        ((size_t)RAIL_FIFO_SLOTS * RAIL_MAX_RECVS * RAIL_RECORD_BYTES)

/* Size record written (by the sender) after the data of a rendezvous message. */
struct rail_record {
    uint64_t size; /* bytes sent, or RAIL_RECORD_TOO_BIG */
    uint32_t seq;  /* low 32 bits of the slot sequence + 1 */
    uint32_t entry;
};
#define RAIL_RECORD_TOO_BIG UINT64_MAX /* the send was larger than the receive buffer */

/* Header at the front of an eager bounce slot. */
struct rail_eager_hdr {
    int32_t tag;
    uint32_t tag_index;
    uint64_t size;
    uint64_t seq; /* eager message number, counted by the sender from 0 */
    uint8_t pad[RAIL_EAGER_HDR - 24];
};

/* Immediate data of WRITE_WITH_IMM. Bit 31 set = eager (bits 0..15 bounce slot). Bit 31 clear:
 * a rendezvous completion for FIFO slot bits 3..8, entry bits 0..2, either
 *   - bit 30 clear: a size record was written (all other bits zero), or
 *   - bit 30 set ("direct"): the data itself was this write, its size (1 .. RAIL_IMM_DIRECT_MAX)
 *     in bits 9..29, and no record follows;
 *   - bit 30 clear, bit 29 set ("query"): the sender lost the completion of a one-piece message
 *     with rail bits 9..11; the write repeats its size record (same bytes) and asks whether the
 *     receiver completed it (answer: RAIL_ANSWER_OFF). */
#define RAIL_IMM_EAGER      0x80000000u
#define RAIL_IMM_DIRECT     0x40000000u
#define RAIL_IMM_QUERY      0x20000000u
#define RAIL_IMM_DIRECT_MAX ((1u << 21) - 1)
uint32_t rail_imm_rdv(unsigned slot, unsigned entry);
/* rail must be < RAIL_MAX_RAILS. */
uint32_t rail_imm_query(unsigned slot, unsigned entry, unsigned rail);
/* size must be 1 .. RAIL_IMM_DIRECT_MAX. */
uint32_t rail_imm_direct(unsigned slot, unsigned entry, uint32_t size);
uint32_t rail_imm_eager(unsigned bounce);

enum rail_imm_kind { RAIL_IMM_RECORD = 1, RAIL_IMM_DATA, RAIL_IMM_BOUNCE, RAIL_IMM_ASK };
struct rail_imm {
    enum rail_imm_kind kind;
    unsigned slot, entry; /* RECORD, DATA, ASK */
    unsigned rail;        /* ASK: the rail that carried the message */
    uint32_t size;        /* DATA */
    unsigned bounce;      /* BOUNCE */
};
/* 0 with *out filled, or -EPROTO for a value no sender produces. */
int rail_imm_decode(uint32_t imm, struct rail_imm *out);
/* The usual immediate of a rendezvous message decoded inline, without the call: true for exactly
 * the immediates that rail_imm_decode decodes as RAIL_IMM_DATA (a direct write of 1 ..
 * RAIL_IMM_DIRECT_MAX bytes into a valid slot), with the same slot, entry and size; false for
 * every other immediate (left to rail_imm_decode). test_net_wire compares the two. */
static inline bool rail_imm_direct_inl(uint32_t imm, unsigned *slot, unsigned *entry,
                                       uint32_t *size)
{
    if ((imm & (RAIL_IMM_EAGER | RAIL_IMM_DIRECT)) != RAIL_IMM_DIRECT)
        return false;
    *slot = (imm >> 3) & 0x3Fu;
    *entry = imm & 7u;
    *size = (imm >> 9) & RAIL_IMM_DIRECT_MAX;
    return *slot < RAIL_FIFO_SLOTS && *size != 0;
}

/* The checks of rail_cts_check, inline and without its message: true when the entry is well
 * formed (the data path tests this first and calls rail_cts_check only to say why not;
 * test_net_wire compares the two). */
static inline bool rail_cts_ok(const struct rail_cts *c, uint64_t want_seq, unsigned entry)
{
    return c->seq == want_seq && c->nreqs >= 1 && c->nreqs <= RAIL_MAX_RECVS && c->entry == entry &&
           entry < c->nreqs && (c->addr != 0 || c->size == 0) && c->addr + c->size >= c->addr;
}
/* Validates a CTS entry copied out of the FIFO against the slot it sits in. */
int rail_cts_check(const struct rail_cts *c, uint64_t want_seq, unsigned entry, int nrails,
                   char *err, size_t errlen);
/* Validates an eager header for slot capacity `cap`. */
int rail_eager_hdr_check(const struct rail_eager_hdr *h, uint32_t cap, char *err, size_t errlen);

#endif
