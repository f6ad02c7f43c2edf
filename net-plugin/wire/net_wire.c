/* SPDX-License-Identifier: Apache-2.0 */
#include "wire/net_wire.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static_assert(sizeof(struct rail_cts) == RAIL_CTS_BYTES, "CTS entry layout");
static_assert(offsetof(struct rail_cts, seq) == RAIL_CTS_BYTES - 8, "CTS seq is the last word");
static_assert(sizeof(struct rail_record) == RAIL_RECORD_BYTES, "size record layout");
static_assert(sizeof(struct rail_eager_hdr) == RAIL_EAGER_HDR, "eager header layout");
static_assert(RAIL_FIFO_SLOTS <= 64 && RAIL_MAX_RECVS <= 8, "immediate field widths");
static_assert(RAIL_HANDLE_STAGE_OFF >= RAIL_HANDLE_WIRE &&
                  RAIL_HANDLE_STAGE_OFF + 8 <= RAIL_HANDLE_BYTES,
              "handle layout");

#define META_FIXED 40
#define META_RAIL  32
/* The handle's extension (after the checked part, before the stage cookie), which a plugin
 * older than ECE neither writes (zeros) nor reads: u16 metadata frame version, two zero bytes,
 * u32 checksum of bytes 0..47. */
#define HANDLE_EXT     RAIL_HANDLE_WIRE
#define HANDLE_EXT_SUM (HANDLE_EXT + 4)
static_assert(HANDLE_EXT_SUM + 4 <= RAIL_HANDLE_STAGE_OFF, "handle extension layout");
static_assert(RAIL_META_MAX_BODY == META_FIXED + RAIL_MAX_RAILS * (META_RAIL + 4 * RAIL_MAX_QPS) +
                                        RAIL_MAX_RAILS * RAIL_ECE_BYTES + RAIL_META_FIFO_BYTES,
              "largest metadata body");

/* ---- little-endian byte helpers ---- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint32_t rail_wire_checksum(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

/* ---- handle ---- */

void rail_handle_encode(const struct rail_handle *h, void *buf)
{
    uint8_t *p = buf;
    memset(p, 0, RAIL_HANDLE_BYTES);
    put32(p, RAIL_WIRE_MAGIC);
    put16(p + 4, RAIL_WIRE_VERSION);
    p[6] = h->family == AF_INET6 ? 6 : 4;
    put16(p + 8, h->port);
    memcpy(p + 12, h->addr, 16);
    put64(p + 32, h->nonce);
    put32(p + 40, rail_wire_checksum(p, 40));
    put16(p + HANDLE_EXT, RAIL_WIRE_VERSION_MAX);
    put32(p + HANDLE_EXT_SUM, rail_wire_checksum(p, HANDLE_EXT_SUM));
}

/* The extension: the listener's metadata version (RAIL_WIRE_VERSION when it has none). */
static int handle_ext_decode(const uint8_t *p, int *meta_version, char *err, size_t errlen)
{
    unsigned v = get16(p + HANDLE_EXT);
    if (v == 0 && get16(p + HANDLE_EXT + 2) == 0 && get32(p + HANDLE_EXT_SUM) == 0) {
        *meta_version = RAIL_WIRE_VERSION; /* a listener older than ECE */
        return 0;
    }
    if (get32(p + HANDLE_EXT_SUM) != rail_wire_checksum(p, HANDLE_EXT_SUM)) {
        snprintf(err, errlen, "handle extension checksum mismatch (corrupted handle)");
        return -EINVAL;
    }
    if (v < RAIL_WIRE_VERSION_ECE || get16(p + HANDLE_EXT + 2) != 0) {
        snprintf(err, errlen,
                 "handle announces metadata version %u (this plugin speaks %d..%d) or non-zero "
                 "reserved bytes",
                 v, RAIL_WIRE_VERSION, RAIL_WIRE_VERSION_MAX);
        return -EINVAL;
    }
    /* A newer listener takes this plugin's newest version too (as version 5 plugins read a
     * version 6 handle). */
    *meta_version = v < RAIL_WIRE_VERSION_MAX ? (int)v : RAIL_WIRE_VERSION_MAX;
    return 0;
}

int rail_handle_decode(const void *buf, struct rail_handle *h, char *err, size_t errlen)
{
    const uint8_t *p = buf;
    uint32_t magic = get32(p);
    unsigned version = get16(p + 4);

    if (magic != RAIL_WIRE_MAGIC) {
        snprintf(err, errlen, "not a rail handle (magic 0x%08x, want 0x%08x)", magic,
                 RAIL_WIRE_MAGIC);
        return -EINVAL;
    }
    if (version != RAIL_WIRE_VERSION) {
        snprintf(err, errlen, "handle protocol version %u, this plugin speaks %u", version,
                 RAIL_WIRE_VERSION);
        return -EPROTO;
    }
    if (get32(p + 40) != rail_wire_checksum(p, 40)) {
        snprintf(err, errlen, "handle checksum mismatch (corrupted handle)");
        return -EINVAL;
    }
    if ((p[6] != 4 && p[6] != 6) || p[7] != 0 || get16(p + 10) != 0 || get32(p + 28) != 0) {
        snprintf(err, errlen, "handle has an unknown address family %u or non-zero reserved bytes",
                 p[6]);
        return -EINVAL;
    }
    h->family = p[6] == 6 ? AF_INET6 : AF_INET;
    h->port = get16(p + 8);
    if (h->port == 0) {
        snprintf(err, errlen, "handle has TCP port 0");
        return -EINVAL;
    }
    memcpy(h->addr, p + 12, 16);
    h->nonce = get64(p + 32);
    return handle_ext_decode(p, &h->meta_version, err, errlen);
}

uint64_t rail_handle_stage_get(const void *buf)
{
    return get64((const uint8_t *)buf + RAIL_HANDLE_STAGE_OFF);
}

void rail_handle_stage_set(void *buf, uint64_t cookie)
{
    put64((uint8_t *)buf + RAIL_HANDLE_STAGE_OFF, cookie);
}

/* ---- frames ---- */

static void frame_header(uint8_t *p, int type, int version, uint32_t body_len, uint32_t checksum)
{
    put32(p, RAIL_WIRE_MAGIC);
    put16(p + 4, (uint16_t)version);
    put16(p + 6, (uint16_t)type);
    put32(p + 8, body_len);
    put32(p + 12, checksum);
}

size_t rail_meta_body_len(int nrails, int nqps)
{
    return META_FIXED + (size_t)nrails * (META_RAIL + 4 * (size_t)nqps);
}

/* What a version adds after the version 4 body: the ECE blocks (5 and 6), cts_bytes (6). */
static size_t ece_len(int version, int nrails)
{
    return version >= RAIL_WIRE_VERSION_ECE ? (size_t)nrails * RAIL_ECE_BYTES : 0;
}

static size_t ext_len(int version, int nrails)
{
    return ece_len(version, nrails) +
           (version >= RAIL_WIRE_VERSION_FIFO ? RAIL_META_FIFO_BYTES : 0);
}

static bool meta_version_ok(int version)
{
    return version == RAIL_WIRE_VERSION || version == RAIL_WIRE_VERSION_ECE ||
           version == RAIL_WIRE_VERSION_FIFO;
}

static void ece_encode(uint8_t *q, const struct rail_wire_ece *e)
{
    /* q[0..3]: reserved flags, zero */
    put32(q + 4, e->vendor_id);
    put32(q + 8, e->options);
    put32(q + 12, e->comp_mask);
    memcpy(q + 16, e->qp_bits, sizeof(e->qp_bits));
}

int rail_meta_encode(int type, const struct rail_meta *m, void *buf, size_t cap)
{
    int version = m->version ? m->version : RAIL_WIRE_VERSION;
    if (!meta_version_ok(version))
        return -EINVAL;
    if (version >= RAIL_WIRE_VERSION_FIFO &&
        ((m->cts_bytes != RAIL_CTS_BYTES && m->cts_bytes != RAIL_CTS_COMPACT_BYTES) ||
         (type == RAIL_FRAME_META_S
              ? m->send_depth < 1 || m->send_depth > 65535 || m->ctl_depth < 0 ||
                    m->ctl_depth > 65535 || (m->ctl_depth > 0 && m->nqps < 2)
              : m->send_depth != 0 || m->ctl_depth != 0)))
        return -EINVAL;
    if (m->nrails < 1 || m->nrails > RAIL_MAX_RAILS || m->nqps < 1 || m->nqps > RAIL_MAX_QPS)
        return -EINVAL;
    size_t base = rail_meta_body_len(m->nrails, m->nqps);
    size_t len = base + ext_len(version, m->nrails);
    uint8_t *p = buf, *b = p + RAIL_FRAME_HDR;

    if (cap < RAIL_FRAME_HDR + len)
        return -E2BIG;
    memset(b, 0, len);
    put64(b, m->nonce);
    b[8] = (uint8_t)m->nrails;
    put16(b + 10, (uint16_t)m->nqps);
    b[12] = (uint8_t)m->sl;
    b[13] = (uint8_t)m->tc;
    put16(b + 14, (uint16_t)m->eager_slots);
    put32(b + 16, m->eager_bytes);
    put64(b + 24, m->addr1);
    put64(b + 32, m->addr2);
    for (int r = 0; r < m->nrails; r++) {
        const struct rail_meta_rail *mr = &m->rails[r];
        uint8_t *q = b + META_FIXED + (size_t)r * (META_RAIL + 4 * (size_t)m->nqps);
        q[0] = (uint8_t)mr->link_layer;
        q[1] = (uint8_t)mr->mtu;
        q[2] = (uint8_t)mr->port;
        put16(q + 4, (uint16_t)mr->gid_index);
        put16(q + 6, (uint16_t)mr->lid);
        put32(q + 8, mr->rkey1);
        put32(q + 12, mr->rkey2);
        memcpy(q + 16, mr->gid, 16);
        for (int i = 0; i < m->nqps; i++)
            put32(q + META_RAIL + 4 * (size_t)i, mr->qpn[i]);
        if (version >= RAIL_WIRE_VERSION_ECE)
            ece_encode(b + base + (size_t)r * RAIL_ECE_BYTES, &mr->ece);
    }
    if (version >= RAIL_WIRE_VERSION_FIFO) {
        put16(b + base + ece_len(version, m->nrails), (uint16_t)m->cts_bytes);
        put16(b + base + ece_len(version, m->nrails) + 2, (uint16_t)m->send_depth);
        put16(b + base + ece_len(version, m->nrails) + 4, (uint16_t)m->ctl_depth);
    }
    frame_header(p, type, version, (uint32_t)len, rail_wire_checksum(b, len));
    return (int)(RAIL_FRAME_HDR + len);
}

int rail_ready_encode(void *buf, size_t cap)
{
    uint8_t *p = buf;
    if (cap < RAIL_FRAME_HDR + 8)
        return -E2BIG;
    put64(p + RAIL_FRAME_HDR, RAIL_WIRE_MAGIC);
    frame_header(p, RAIL_FRAME_READY, RAIL_WIRE_VERSION, 8,
                 rail_wire_checksum(p + RAIL_FRAME_HDR, 8));
    return RAIL_FRAME_HDR + 8;
}

static const char *frame_name(int type)
{
    switch (type) {
    case RAIL_FRAME_META_S:
        return "sender metadata";
    case RAIL_FRAME_META_R:
        return "receiver metadata";
    case RAIL_FRAME_READY:
        return "ready";
    case RAIL_FRAME_CTL:
        return "control";
    }
    return "unknown";
}

int rail_frame_header_decode(const void *hdr, int want_type, uint32_t max_body, uint32_t *body_len,
                             uint32_t *checksum, int *version_out, char *err, size_t errlen)
{
    const uint8_t *p = hdr;
    uint32_t magic = get32(p);
    unsigned version = get16(p + 4), type = get16(p + 6);

    if (magic != RAIL_WIRE_MAGIC) {
        snprintf(err, errlen, "peer sent a frame with bad magic 0x%08x (not a rail plugin?)",
                 magic);
        return -EPROTO;
    }
    bool meta = want_type == RAIL_FRAME_META_S || want_type == RAIL_FRAME_META_R;
    if (version != RAIL_WIRE_VERSION && !(meta && meta_version_ok((int)version))) {
        if (meta)
            snprintf(err, errlen,
                     "peer sends %s frames of protocol version %u, this plugin speaks %u..%u",
                     frame_name(want_type), version, RAIL_WIRE_VERSION, RAIL_WIRE_VERSION_MAX);
        else
            snprintf(err, errlen, "peer speaks protocol version %u, this plugin speaks %u", version,
                     RAIL_WIRE_VERSION);
        return -EPROTO;
    }
    if ((int)type != want_type) {
        snprintf(err, errlen, "peer sent frame type %u, expected %s", type, frame_name(want_type));
        return -EPROTO;
    }
    *body_len = get32(p + 8);
    *checksum = get32(p + 12);
    if (*body_len > max_body) {
        snprintf(err, errlen, "peer's %s frame is %u bytes, at most %u allowed",
                 frame_name(want_type), *body_len, max_body);
        return -EPROTO;
    }
    if (version_out)
        *version_out = (int)version;
    return 0;
}

static int check_rail(int type, const uint8_t *q, int nqps, struct rail_meta_rail *mr, int r,
                      char *err, size_t errlen)
{
    mr->link_layer = q[0];
    mr->mtu = q[1];
    mr->port = q[2];
    mr->gid_index = get16(q + 4);
    mr->lid = get16(q + 6);
    mr->rkey1 = get32(q + 8);
    mr->rkey2 = get32(q + 12);
    memcpy(mr->gid, q + 16, 16);
    if (mr->link_layer != RAIL_LL_IB && mr->link_layer != RAIL_LL_ETH) {
        snprintf(err, errlen, "rail %d: unknown link layer %d", r, mr->link_layer);
        return -EPROTO;
    }
    if (mr->mtu < 1 || mr->mtu > 5) {
        snprintf(err, errlen, "rail %d: MTU code %d outside 1..5 (256..4096 bytes)", r, mr->mtu);
        return -EPROTO;
    }
    if (mr->port < 1 || q[3] != 0) {
        snprintf(err, errlen, "rail %d: port %d invalid or reserved byte set", r, mr->port);
        return -EPROTO;
    }
    if (mr->gid_index > 255) {
        snprintf(err, errlen, "rail %d: GID index %d outside 0..255", r, mr->gid_index);
        return -EPROTO;
    }
    if (mr->link_layer == RAIL_LL_IB && (mr->lid < 1 || mr->lid > 0xBFFF)) {
        snprintf(err, errlen, "rail %d: InfiniBand LID 0x%x is not a unicast LID", r, mr->lid);
        return -EPROTO;
    }
    if (type == RAIL_FRAME_META_S && mr->rkey2 != 0) {
        snprintf(err, errlen, "rail %d: sender metadata carries a bounce key", r);
        return -EPROTO;
    }
    for (int i = 0; i < nqps; i++) {
        uint32_t qpn = get32(q + META_RAIL + 4 * (size_t)i);
        if (qpn < 2 || qpn > 0xFFFFFF) {
            snprintf(err, errlen, "rail %d: QP number %u of QP %d outside 2..0xffffff", r, qpn, i);
            return -EPROTO;
        }
        for (int j = 0; j < i; j++) {
            if (mr->qpn[j] == qpn) {
                snprintf(err, errlen, "rail %d: QP number %u appears twice", r, qpn);
                return -EPROTO;
            }
        }
        mr->qpn[i] = qpn;
    }
    return 0;
}

/* One rail's ECE block of a version RAIL_WIRE_VERSION_ECE frame. */
static int check_ece(const uint8_t *q, int nqps, struct rail_wire_ece *e, int r, char *err,
                     size_t errlen)
{
    e->vendor_id = get32(q + 4);
    e->options = get32(q + 8);
    e->comp_mask = get32(q + 12);
    memcpy(e->qp_bits, q + 16, sizeof(e->qp_bits));
    if (get32(q) != 0) {
        snprintf(err, errlen, "rail %d: ECE block has reserved bytes set", r);
        return -EPROTO;
    }
    bool any = false;
    for (int i = 0; i < RAIL_MAX_QPS; i++) {
        if (!rail_ece_has(e, i))
            continue;
        if (i >= nqps) {
            snprintf(err, errlen, "rail %d: ECE claimed for QP %d of %d", r, i, nqps);
            return -EPROTO;
        }
        any = true;
    }
    if (!any && (e->vendor_id || e->options || e->comp_mask)) {
        snprintf(err, errlen, "rail %d: ECE values without a QP that has ECE", r);
        return -EPROTO;
    }
    return 0;
}

int rail_meta_decode(int type, const void *body, size_t len, uint32_t checksum, struct rail_meta *m,
                     char *err, size_t errlen)
{
    return rail_meta_decode_version(type, RAIL_WIRE_VERSION, body, len, checksum, m, err, errlen);
}

int rail_meta_decode_version(int type, int version, const void *body, size_t len, uint32_t checksum,
                             struct rail_meta *m, char *err, size_t errlen)
{
    const uint8_t *b = body;

    memset(m, 0, sizeof(*m));
    if (version != RAIL_WIRE_VERSION && !(meta_version_ok(version) && type != RAIL_FRAME_CTL)) {
        snprintf(err, errlen, "%s of protocol version %d is not decoded by this plugin",
                 frame_name(type), version);
        return -EPROTO;
    }
    m->version = version;
    m->cts_bytes = RAIL_CTS_BYTES;
    if (len < META_FIXED) {
        snprintf(err, errlen, "%s is %zu bytes, shorter than its %d-byte fixed part",
                 frame_name(type), len, META_FIXED);
        return -EPROTO;
    }
    if (rail_wire_checksum(b, len) != checksum) {
        snprintf(err, errlen, "%s checksum mismatch (corrupted in transit)", frame_name(type));
        return -EPROTO;
    }
    m->nonce = get64(b);
    m->nrails = b[8];
    m->nqps = get16(b + 10);
    m->sl = b[12];
    m->tc = b[13];
    m->eager_slots = get16(b + 14);
    m->eager_bytes = get32(b + 16);
    m->addr1 = get64(b + 24);
    m->addr2 = get64(b + 32);
    if (m->nrails < 1 || m->nrails > RAIL_MAX_RAILS) {
        snprintf(err, errlen, "peer announces %d rails, 1..%d allowed", m->nrails, RAIL_MAX_RAILS);
        return -EPROTO;
    }
    if (m->nqps < 1 || m->nqps > RAIL_MAX_QPS) {
        snprintf(err, errlen, "peer announces %d QPs per rail, 1..%d allowed", m->nqps,
                 RAIL_MAX_QPS);
        return -EPROTO;
    }
    size_t base = rail_meta_body_len(m->nrails, m->nqps);
    if (len != base + ext_len(version, m->nrails)) {
        snprintf(err, errlen, "%s (version %d) is %zu bytes, %zu expected for %d rails x %d QPs",
                 frame_name(type), version, len, base + ext_len(version, m->nrails), m->nrails,
                 m->nqps);
        return -EPROTO;
    }
    if (version >= RAIL_WIRE_VERSION_FIFO) {
        const uint8_t *x = b + base + ece_len(version, m->nrails);
        m->cts_bytes = get16(x);
        m->send_depth = get16(x + 2);
        m->ctl_depth = get16(x + 4);
        if ((m->cts_bytes != RAIL_CTS_BYTES && m->cts_bytes != RAIL_CTS_COMPACT_BYTES) ||
            get16(x + 6) != 0) {
            snprintf(err, errlen,
                     "%s announces %u-byte clear-to-send entries (%d or %d) or sets reserved "
                     "bytes",
                     frame_name(type), m->cts_bytes, RAIL_CTS_COMPACT_BYTES, RAIL_CTS_BYTES);
            return -EPROTO;
        }
        if (type == RAIL_FRAME_META_S ? m->send_depth == 0 : m->send_depth != 0) {
            snprintf(err, errlen, "%s announces a send queue depth of %d (%s)", frame_name(type),
                     m->send_depth,
                     type == RAIL_FRAME_META_S ? "1..65535" : "only the sender announces one");
            return -EPROTO;
        }
        if (m->ctl_depth != 0 && (type != RAIL_FRAME_META_S || m->nqps < 2)) {
            snprintf(err, errlen, "%s announces a control QP of depth %d (%s)", frame_name(type),
                     m->ctl_depth,
                     type == RAIL_FRAME_META_S ? "a control QP needs a data QP beside it"
                                               : "only the sender announces one");
            return -EPROTO;
        }
    }
    if (b[9] != 0 || get32(b + 20) != 0 || m->sl > 15) {
        snprintf(err, errlen, "reserved bytes set or service level %d > 15", m->sl);
        return -EPROTO;
    }
    if (m->addr1 == 0) {
        snprintf(err, errlen, "peer announces a NULL %s region",
                 type == RAIL_FRAME_META_S ? "FIFO" : "size-record");
        return -EPROTO;
    }
    if (type == RAIL_FRAME_META_S) {
        if (m->eager_slots || m->addr2) {
            snprintf(err, errlen, "sender metadata carries eager-buffer fields");
            return -EPROTO;
        }
        if (m->eager_bytes > RAIL_EAGER_MAX_CAP) {
            snprintf(err, errlen, "peer announces an eager limit of %u bytes (max %d)",
                     m->eager_bytes, RAIL_EAGER_MAX_CAP);
            return -EPROTO;
        }
    } else {
        if (m->eager_slots > RAIL_EAGER_SLOTS || m->eager_bytes > RAIL_EAGER_MAX_CAP) {
            snprintf(err, errlen, "peer announces %d eager slots of %u bytes (max %d of %d)",
                     m->eager_slots, m->eager_bytes, RAIL_EAGER_SLOTS, RAIL_EAGER_MAX_CAP);
            return -EPROTO;
        }
        if ((m->eager_slots == 0) != (m->addr2 == 0) ||
            (m->eager_slots == 0 && m->eager_bytes != 0)) {
            snprintf(err, errlen, "inconsistent eager fields (%d slots, %u bytes, region %s)",
                     m->eager_slots, m->eager_bytes, m->addr2 ? "set" : "NULL");
            return -EPROTO;
        }
    }
    for (int r = 0; r < m->nrails; r++) {
        const uint8_t *q = b + META_FIXED + (size_t)r * (META_RAIL + 4 * (size_t)m->nqps);
        int rc = check_rail(type, q, m->nqps, &m->rails[r], r, err, errlen);
        if (rc == 0 && version >= RAIL_WIRE_VERSION_ECE)
            rc = check_ece(b + base + (size_t)r * RAIL_ECE_BYTES, m->nqps, &m->rails[r].ece, r, err,
                           errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- immediates, CTS entries, eager headers ---- */

uint32_t rail_imm_rdv(unsigned slot, unsigned entry)
{
    return ((slot % RAIL_FIFO_SLOTS) << 3) | (entry & 7u);
}

uint32_t rail_imm_direct(unsigned slot, unsigned entry, uint32_t size)
{
    return RAIL_IMM_DIRECT | (size & RAIL_IMM_DIRECT_MAX) << 9 | rail_imm_rdv(slot, entry);
}

uint32_t rail_imm_query(unsigned slot, unsigned entry, unsigned rail)
{
    return RAIL_IMM_QUERY | (rail % RAIL_MAX_RAILS) << 9 | rail_imm_rdv(slot, entry);
}

uint32_t rail_imm_eager(unsigned bounce)
{
    return RAIL_IMM_EAGER | (bounce & 0xFFFFu);
}

int rail_imm_decode(uint32_t imm, struct rail_imm *out)
{
    memset(out, 0, sizeof(*out));
    if (imm & RAIL_IMM_EAGER) {
        if (imm & 0x7FFF0000u)
            return -EPROTO;
        out->kind = RAIL_IMM_BOUNCE;
        out->bounce = imm & 0xFFFFu;
        return 0;
    }
    out->slot = (imm >> 3) & 0x3Fu;
    out->entry = imm & 7u;
    if (out->slot >= RAIL_FIFO_SLOTS)
        return -EPROTO;
    if (imm & RAIL_IMM_DIRECT) {
        out->kind = RAIL_IMM_DATA;
        out->size = (imm >> 9) & RAIL_IMM_DIRECT_MAX;
        return out->size ? 0 : -EPROTO;
    }
    if (imm & RAIL_IMM_QUERY) {
        out->kind = RAIL_IMM_ASK;
        out->rail = (imm >> 9) & 7u;
        return (imm & ~(RAIL_IMM_QUERY | 0xFFFu)) || out->rail >= RAIL_MAX_RAILS ? -EPROTO : 0;
    }
    out->kind = RAIL_IMM_RECORD;
    return imm >> 9 ? -EPROTO : 0;
}

int rail_cts_check(const struct rail_cts *c, uint64_t want_seq, unsigned entry, int nrails,
                   char *err, size_t errlen)
{
    if (c->seq != want_seq) {
        snprintf(err, errlen, "clear-to-send entry has sequence %llu, expected %llu",
                 (unsigned long long)c->seq, (unsigned long long)want_seq);
        return -EPROTO;
    }
    if (c->nreqs < 1 || c->nreqs > RAIL_MAX_RECVS || c->entry != entry || entry >= c->nreqs) {
        snprintf(err, errlen, "clear-to-send entry %u claims index %u of %u", entry, c->entry,
                 c->nreqs);
        return -EPROTO;
    }
    if (c->addr == 0 && c->size != 0) {
        snprintf(err, errlen, "clear-to-send entry %u has a NULL buffer of %llu bytes", entry,
                 (unsigned long long)c->size);
        return -EPROTO;
    }
    if (c->addr + c->size < c->addr) {
        snprintf(err, errlen, "clear-to-send entry %u buffer wraps the address space", entry);
        return -EPROTO;
    }
    (void)nrails;
    return 0;
}

int rail_eager_hdr_check(const struct rail_eager_hdr *h, uint32_t cap, char *err, size_t errlen)
{
    if (h->size > cap) {
        snprintf(err, errlen, "eager message of %llu bytes exceeds the %u-byte bounce slot",
                 (unsigned long long)h->size, cap);
        return -EPROTO;
    }
    return 0;
}
