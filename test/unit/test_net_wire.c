/* SPDX-License-Identifier: Apache-2.0 */
/* Net plugin wire formats: listen handle, handshake frames, immediates, CTS entries and eager
 * headers; every decoder must reject corrupt or hostile input with an error, never crash. Also
 * the per-tag counters and the NCCL_SOCKET_IFNAME matcher. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "fuzz.h"
#include "transport/net_ifname.h"
#include "wire/net_tagmap.h"
#include "wire/net_wire.h"

static char g_err[256];

/* ---- handle ---- */

static void sample_handle(struct rail_handle *h)
{
    memset(h, 0, sizeof(*h));
    h->family = AF_INET;
    h->port = 41234;
    h->addr[0] = 10, h->addr[1] = 0, h->addr[2] = 1, h->addr[3] = 2;
    h->nonce = 0x1122334455667788ull;
}

static void test_handle(void)
{
    struct rail_handle h, d;
    uint8_t buf[RAIL_HANDLE_BYTES];

    sample_handle(&h);
    rail_handle_encode(&h, buf);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(d.family, AF_INET);
    CHECK_EQ_INT(d.port, 41234);
    CHECK(memcmp(d.addr, h.addr, 16) == 0);
    CHECK(d.nonce == h.nonce);
    /* The stage cookie is local: it round-trips and does not disturb decoding. */
    CHECK(rail_handle_stage_get(buf) == 0);
    rail_handle_stage_set(buf, 0xdeadbeefcafef00dull);
    CHECK(rail_handle_stage_get(buf) == 0xdeadbeefcafef00dull);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);

    h.family = AF_INET6;
    rail_handle_encode(&h, buf);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(d.family, AF_INET6);

    /* Any flipped bit of the checked part is detected. */
    int undetected = 0;
    for (int i = 0; i < RAIL_HANDLE_WIRE; i++) {
        for (int bit = 0; bit < 8; bit++) {
            rail_handle_encode(&h, buf);
            buf[i] ^= (uint8_t)(1u << bit);
            if (rail_handle_decode(buf, &d, g_err, sizeof(g_err)) == 0)
                undetected++;
        }
    }
    CHECK_EQ_INT(undetected, 0);

    /* Wrong magic names the problem; wrong version is a protocol error. */
    rail_handle_encode(&h, buf);
    buf[0] ^= 0xff;
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "magic") != NULL);
    rail_handle_encode(&h, buf);
    buf[4] = 9;
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), -EPROTO);
    CHECK(strstr(g_err, "version") != NULL);

    /* Port 0 with a valid checksum is still refused. */
    h.port = 0;
    rail_handle_encode(&h, buf);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), -EINVAL);
    CHECK(strstr(g_err, "port") != NULL);

    /* Random garbage never decodes. */
    srand(7);
    int accepted = 0;
    for (int it = 0; it < 20000; it++) {
        for (int i = 0; i < RAIL_HANDLE_BYTES; i++)
            buf[i] = (uint8_t)rand();
        if (it & 1) /* also with the right magic and version */
            memcpy(buf, "RAIL\x01\x00", 6);
        if (rail_handle_decode(buf, &d, g_err, sizeof(g_err)) == 0)
            accepted++;
    }
    CHECK_EQ_INT(accepted, 0);
}

/* ---- metadata frames ---- */

static void sample_meta(struct rail_meta *m, int type, int nrails, int nqps)
{
    memset(m, 0, sizeof(*m));
    m->nonce = 42;
    m->nrails = nrails;
    m->nqps = nqps;
    m->sl = 3;
    m->tc = 106;
    m->addr1 = 0x7f0000001000ull;
    if (type == RAIL_FRAME_META_R) {
        m->eager_slots = RAIL_EAGER_SLOTS;
        m->eager_bytes = 8192;
        m->addr2 = 0x7f0000100000ull;
    }
    for (int r = 0; r < nrails; r++) {
        struct rail_meta_rail *mr = &m->rails[r];
        mr->link_layer = r ? RAIL_LL_IB : RAIL_LL_ETH;
        mr->mtu = 3;
        mr->port = 1;
        mr->gid_index = r ? 0 : 1;
        mr->lid = r ? 7 : 0;
        mr->rkey1 = 0x1000 + (uint32_t)r;
        mr->rkey2 = type == RAIL_FRAME_META_R ? 0x2000 + (uint32_t)r : 0;
        mr->gid[10] = 0xff, mr->gid[11] = 0xff, mr->gid[12] = 10, mr->gid[15] = (uint8_t)r;
        for (int q = 0; q < nqps; q++)
            mr->qpn[q] = 0x11 + (uint32_t)(r * 1000 + q);
    }
}

static uint8_t g_frame[RAIL_FRAME_HDR + RAIL_META_MAX_BODY + 64];

/* Decode g_frame's body after patching one byte (checksum recomputed, so only field validation
 * can reject it). */
static int decode_patched(int type, size_t len, size_t off, uint8_t val, struct rail_meta *out)
{
    uint8_t *body = g_frame + RAIL_FRAME_HDR;
    uint8_t old = body[off];
    int rc;
    body[off] = val;
    rc =
        rail_meta_decode(type, body, len, rail_wire_checksum(body, len), out, g_err, sizeof(g_err));
    body[off] = old;
    return rc;
}

static void test_meta_roundtrip(int type, int nrails, int nqps)
{
    static struct rail_meta m, d;
    uint32_t body_len, csum;
    int n;

    sample_meta(&m, type, nrails, nqps);
    n = rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(n, RAIL_FRAME_HDR + (int)rail_meta_body_len(nrails, nqps));
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, 1 << 16, &body_len, &csum, NULL, g_err,
                                          sizeof(g_err)),
                 0);
    CHECK_EQ_INT(body_len, n - RAIL_FRAME_HDR);
    CHECK_EQ_INT(
        rail_meta_decode(type, g_frame + RAIL_FRAME_HDR, body_len, csum, &d, g_err, sizeof(g_err)),
        0);
    CHECK(d.nonce == m.nonce);
    CHECK_EQ_INT(d.nrails, nrails);
    CHECK_EQ_INT(d.nqps, nqps);
    CHECK_EQ_INT(d.sl, 3);
    CHECK_EQ_INT(d.tc, 106);
    CHECK(d.addr1 == m.addr1 && d.addr2 == m.addr2);
    CHECK_EQ_INT(d.eager_slots, m.eager_slots);
    CHECK_EQ_INT(d.eager_bytes, m.eager_bytes);
    for (int r = 0; r < nrails; r++) {
        CHECK_EQ_INT(d.rails[r].link_layer, m.rails[r].link_layer);
        CHECK_EQ_INT(d.rails[r].lid, m.rails[r].lid);
        CHECK_EQ_INT(d.rails[r].gid_index, m.rails[r].gid_index);
        CHECK_EQ_INT(d.rails[r].rkey1, m.rails[r].rkey1);
        CHECK_EQ_INT(d.rails[r].rkey2, m.rails[r].rkey2);
        CHECK(memcmp(d.rails[r].gid, m.rails[r].gid, 16) == 0);
        CHECK(memcmp(d.rails[r].qpn, m.rails[r].qpn, 4 * (size_t)nqps) == 0);
    }
}

static void test_meta_rejects(void)
{
    static struct rail_meta m, d;
    const int type = RAIL_FRAME_META_R;
    size_t len = rail_meta_body_len(2, 3);
    uint8_t *body = g_frame + RAIL_FRAME_HDR;
    uint32_t body_len, csum;

    sample_meta(&m, type, 2, 3);
    CHECK(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)) > 0);
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, 20), -E2BIG);

    /* Header: magic, version, type, size limit. */
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, RAIL_FRAME_META_S, 1 << 16, &body_len, &csum,
                                          NULL, g_err, sizeof(g_err)),
                 -EPROTO);
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, (uint32_t)len - 1, &body_len, &csum, NULL,
                                          g_err, sizeof(g_err)),
                 -EPROTO);
    g_frame[0] ^= 1;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, 1 << 16, &body_len, &csum, NULL, g_err,
                                          sizeof(g_err)),
                 -EPROTO);
    g_frame[0] ^= 1;
    g_frame[4] = RAIL_WIRE_VERSION_MAX + 1;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, 1 << 16, &body_len, &csum, NULL, g_err,
                                          sizeof(g_err)),
                 -EPROTO);
    CHECK(strstr(g_err, "version") != NULL);
    g_frame[4] = RAIL_WIRE_VERSION;

    /* Every truncation and an extension are refused; so is a bad checksum. */
    int accepted = 0;
    for (size_t l = 0; l < len; l++)
        if (rail_meta_decode(type, body, l, rail_wire_checksum(body, l), &d, g_err,
                             sizeof(g_err)) == 0)
            accepted++;
    CHECK_EQ_INT(accepted, 0);
    CHECK_EQ_INT(rail_meta_decode(type, body, len + 4, rail_wire_checksum(body, len + 4), &d, g_err,
                                  sizeof(g_err)),
                 -EPROTO);
    CHECK_EQ_INT(rail_meta_decode(type, body, len, rail_wire_checksum(body, len) ^ 1, &d, g_err,
                                  sizeof(g_err)),
                 -EPROTO);
    CHECK(strstr(g_err, "checksum") != NULL);

    /* Field checks (offsets of the body layout). */
    const size_t rail0 = 40, rail1 = 40 + 32 + 12;
    CHECK_EQ_INT(decode_patched(type, len, 8, 0, &d), -EPROTO);  /* nrails 0 */
    CHECK_EQ_INT(decode_patched(type, len, 8, 9, &d), -EPROTO);  /* nrails 9 */
    CHECK_EQ_INT(decode_patched(type, len, 10, 0, &d), -EPROTO); /* nqps 0 */
    CHECK_EQ_INT(decode_patched(type, len, 10, 129, &d), -EPROTO);
    CHECK_EQ_INT(decode_patched(type, len, 12, 16, &d), -EPROTO); /* sl 16 */
    CHECK_EQ_INT(decode_patched(type, len, 14, RAIL_EAGER_SLOTS + 1, &d), -EPROTO);
    CHECK_EQ_INT(decode_patched(type, len, 18, 2, &d), -EPROTO);        /* eager bytes 128 KiB+ */
    CHECK_EQ_INT(decode_patched(type, len, 20, 1, &d), -EPROTO);        /* reserved */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 0, 3, &d), -EPROTO); /* link layer */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 1, 0, &d), -EPROTO); /* mtu */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 1, 6, &d), -EPROTO);
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 2, 0, &d), -EPROTO); /* port */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 5, 1, &d), -EPROTO); /* gid index 257 */
    CHECK(strstr(g_err, "GID index") != NULL);
    CHECK_EQ_INT(decode_patched(type, len, rail1 + 6, 0, &d), -EPROTO); /* IB lid 0 */
    CHECK(strstr(g_err, "LID") != NULL);
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 32, 1, &d), -EPROTO);    /* qpn 1 */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 35, 1, &d), -EPROTO);    /* qpn > 24 bits */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 36, 0x11, &d), -EPROTO); /* duplicate qpn */
    CHECK(strstr(g_err, "twice") != NULL);
    /* RoCE rail: the LID is ignored. */
    CHECK_EQ_INT(decode_patched(type, len, rail0 + 6, 0, &d), 0);

    /* Inconsistent eager fields, and eager fields in a sender frame. */
    m.addr2 = 0;
    rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(
        rail_meta_decode(type, body, len, rail_wire_checksum(body, len), &d, g_err, sizeof(g_err)),
        -EPROTO);
    m.eager_slots = 0;
    m.eager_bytes = 0;
    rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(
        rail_meta_decode(type, body, len, rail_wire_checksum(body, len), &d, g_err, sizeof(g_err)),
        0);
    sample_meta(&m, RAIL_FRAME_META_R, 2, 3);
    rail_meta_encode(RAIL_FRAME_META_S, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(rail_meta_decode(RAIL_FRAME_META_S, body, len, rail_wire_checksum(body, len), &d,
                                  g_err, sizeof(g_err)),
                 -EPROTO);
    /* A sender announces only its eager limit, at most RAIL_EAGER_MAX_CAP. */
    sample_meta(&m, RAIL_FRAME_META_S, 2, 3);
    m.eager_bytes = RAIL_EAGER_MAX_CAP;
    rail_meta_encode(RAIL_FRAME_META_S, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(rail_meta_decode(RAIL_FRAME_META_S, body, len, rail_wire_checksum(body, len), &d,
                                  g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT((int)d.eager_bytes, RAIL_EAGER_MAX_CAP);
    m.eager_bytes = RAIL_EAGER_MAX_CAP + 1;
    rail_meta_encode(RAIL_FRAME_META_S, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(rail_meta_decode(RAIL_FRAME_META_S, body, len, rail_wire_checksum(body, len), &d,
                                  g_err, sizeof(g_err)),
                 -EPROTO);
    CHECK(strstr(g_err, "eager limit") != NULL);
    sample_meta(&m, RAIL_FRAME_META_S, 2, 3);
    m.addr1 = 0;
    rail_meta_encode(RAIL_FRAME_META_S, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(rail_meta_decode(RAIL_FRAME_META_S, body, len, rail_wire_checksum(body, len), &d,
                                  g_err, sizeof(g_err)),
                 -EPROTO);

    /* Encoder refuses counts it cannot describe. */
    m.nrails = 0;
    CHECK_EQ_INT(rail_meta_encode(RAIL_FRAME_META_S, &m, g_frame, sizeof(g_frame)), -EINVAL);
}

/* Random mutations: decoding never crashes, and whatever it accepts is within the limits. */
static void test_meta_fuzz(void)
{
    static struct rail_meta m, d;
    uint8_t *body = g_frame + RAIL_FRAME_HDR;
    int bad = 0;

    srand(11);
    for (int it = 0; it < 20000; it++) {
        int type = it & 1 ? RAIL_FRAME_META_R : RAIL_FRAME_META_S;
        int nrails = 1 + rand() % 3, nqps = 1 + rand() % 5;
        size_t len = rail_meta_body_len(nrails, nqps);
        sample_meta(&m, type, nrails, nqps);
        rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
        for (int k = 1 + rand() % 3; k > 0; k--)
            body[(size_t)rand() % len] = (uint8_t)rand();
        size_t l = (rand() % 8) ? len : (size_t)rand() % (len + 16);
        if (rail_meta_decode(type, body, l, rail_wire_checksum(body, l), &d, g_err,
                             sizeof(g_err)) == 0) {
            if (d.nrails < 1 || d.nrails > RAIL_MAX_RAILS || d.nqps < 1 || d.nqps > RAIL_MAX_QPS ||
                d.eager_slots > RAIL_EAGER_SLOTS || d.eager_bytes > RAIL_EAGER_MAX_CAP ||
                l != rail_meta_body_len(d.nrails, d.nqps))
                bad++;
            for (int r = 0; r < d.nrails; r++)
                for (int q = 0; q < d.nqps; q++)
                    if (d.rails[r].qpn[q] < 2 || d.rails[r].qpn[q] > 0xFFFFFF ||
                        d.rails[r].mtu < 1 || d.rails[r].mtu > 5 || d.rails[r].gid_index > 255)
                        bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_ready(void)
{
    uint8_t buf[64];
    uint32_t body_len, csum;
    int n = rail_ready_encode(buf, sizeof(buf));
    CHECK_EQ_INT(n, RAIL_FRAME_HDR + 8);
    CHECK_EQ_INT(rail_frame_header_decode(buf, RAIL_FRAME_READY, 8, &body_len, &csum, NULL, g_err,
                                          sizeof(g_err)),
                 0);
    CHECK_EQ_INT(body_len, 8);
    CHECK(rail_wire_checksum(buf + RAIL_FRAME_HDR, 8) == csum);
    CHECK_EQ_INT(rail_ready_encode(buf, 10), -E2BIG);
}

/* ---- immediates, CTS entries, eager headers ---- */

static void test_imm(void)
{
    static const uint32_t sizes[] = {1, 8, 4096, 65536, RAIL_IMM_DIRECT_MAX};
    struct rail_imm m;
    int wrong = 0;

    for (unsigned s = 0; s < RAIL_FIFO_SLOTS; s++) {
        for (unsigned e = 0; e < RAIL_MAX_RECVS; e++) {
            if (rail_imm_decode(rail_imm_rdv(s, e), &m) != 0 || m.kind != RAIL_IMM_RECORD ||
                m.slot != s || m.entry != e)
                wrong++;
            for (unsigned r = 0; r < RAIL_MAX_RAILS; r++)
                if (rail_imm_decode(rail_imm_query(s, e, r), &m) != 0 || m.kind != RAIL_IMM_ASK ||
                    m.slot != s || m.entry != e || m.rail != r)
                    wrong++;
            for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
                if (rail_imm_decode(rail_imm_direct(s, e, sizes[z]), &m) != 0 ||
                    m.kind != RAIL_IMM_DATA || m.slot != s || m.entry != e || m.size != sizes[z])
                    wrong++;
        }
    }
    for (unsigned b = 0; b < RAIL_EAGER_SLOTS; b++)
        if (rail_imm_decode(rail_imm_eager(b), &m) != 0 || m.kind != RAIL_IMM_BOUNCE ||
            m.bounce != b)
            wrong++;
    CHECK_EQ_INT(wrong, 0);
    /* Values no sender produces. */
    CHECK_EQ_INT(rail_imm_decode(RAIL_FIFO_SLOTS << 3, &m), -EPROTO);     /* record, size bits */
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_EAGER | 0x10000, &m), -EPROTO); /* eager, high bits */
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_EAGER | RAIL_IMM_DIRECT, &m), -EPROTO);
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_DIRECT, &m), -EPROTO); /* direct, 0 bytes */
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_DIRECT | (5u << 3), &m), -EPROTO);
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_QUERY | 1u << 12, &m), -EPROTO); /* query, high bits */
    CHECK_EQ_INT(rail_imm_decode(RAIL_IMM_QUERY | 1u << 28, &m), -EPROTO);
    /* Answers: the record's seq and the verdict; an unwritten word answers nothing. */
    CHECK(RAIL_ANSWER_IS(RAIL_ANSWER(7u, 1), 7u) && RAIL_ANSWER_LANDED(RAIL_ANSWER(7u, 1)));
    CHECK(RAIL_ANSWER_IS(RAIL_ANSWER(7u, 0), 7u) && !RAIL_ANSWER_LANDED(RAIL_ANSWER(7u, 0)));
    CHECK(!RAIL_ANSWER_IS(RAIL_ANSWER(7u, 1), 8u));
    CHECK(!RAIL_ANSWER_IS((uint64_t)0, 0u));
    CHECK_EQ_INT(rail_imm_decode(rail_imm_direct(3, 2, 100), &m), 0);
    CHECK_EQ_INT(m.kind, RAIL_IMM_DATA);
    CHECK_EQ_INT((int)m.size, 100);
    CHECK_EQ_INT((int)m.slot, 3);
    CHECK_EQ_INT((int)m.entry, 2);
    /* The inline decode of a direct write against rail_imm_decode: every combination of the
     * three kind bits with sizes 0, 1, the largest and random ones, every slot and entry, then
     * 2,000,000 seeded random immediates. Fails when the inline form drops the eager bit's test
     * or the size's. */
    int claimed = 0, mismatch = 0;
    uint32_t seed = 2727;
    for (uint32_t k = 0; k < 2000000 + 8 * 4 * 512; k++) {
        uint32_t imm;
        if (k < 8 * 4 * 512) {
            static const uint32_t sz[] = {0, 1, RAIL_IMM_DIRECT_MAX, 12345};
            imm = (k >> 11 & 7u) << 29 | sz[k >> 9 & 3] << 9 | (k & 511u);
        } else {
            imm = fuzz_step(&seed) ^ (fuzz_step(&seed) >> 16);
        }
        unsigned s_, e_;
        uint32_t z_;
        bool fast = rail_imm_direct_inl(imm, &s_, &e_, &z_);
        bool data = rail_imm_decode(imm, &m) == 0 && m.kind == RAIL_IMM_DATA;
        claimed += fast;
        if (fast != data || (fast && (s_ != m.slot || e_ != m.entry || z_ != m.size)))
            mismatch++;
    }
    CHECK_EQ_INT(mismatch, 0);
    CHECK(claimed > 500000);
}

static void test_cts(void)
{
    struct rail_cts c;
    memset(&c, 0, sizeof(c));
    c.addr = 0x1000;
    c.size = 4096;
    c.nreqs = 2;
    c.entry = 1;
    c.seq = 5;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(rail_cts_check(&c, 6, 1, 1, g_err, sizeof(g_err)), -EPROTO);
    CHECK_EQ_INT(rail_cts_check(&c, 5, 0, 1, g_err, sizeof(g_err)), -EPROTO);
    c.nreqs = 9;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), -EPROTO);
    c.nreqs = 1;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), -EPROTO);
    c.nreqs = 2;
    c.addr = UINT64_MAX - 10;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), -EPROTO);
    c.addr = 0;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), -EPROTO);
    c.size = 0;
    CHECK_EQ_INT(rail_cts_check(&c, 5, 1, 1, g_err, sizeof(g_err)), 0);

    /* The inline predicate agrees with the checking function on every field at and around its
     * boundaries (it fails if one of its conditions is dropped or bent). */
    const uint64_t addrs[] = {0, 1, 0x1000, UINT64_MAX - 4096, UINT64_MAX - 4095, UINT64_MAX};
    const uint64_t sizes[] = {0, 1, 4096, UINT64_MAX};
    int agree = 0, total = 0, ok = 0;
    for (int a = 0; a < 6; a++)
        for (int z = 0; z < 4; z++)
            for (unsigned nreqs = 0; nreqs <= RAIL_MAX_RECVS + 1; nreqs++)
                for (unsigned ent = 0; ent <= RAIL_MAX_RECVS + 1; ent++)
                    for (unsigned want = 0; want < 3; want++)
                        for (unsigned seq = 4; seq < 7; seq += 2) {
                            c.addr = addrs[a];
                            c.size = sizes[z];
                            c.nreqs = (uint16_t)nreqs;
                            c.entry = (uint16_t)(ent ^ (want == 2)); /* claims another index */
                            c.seq = seq;
                            bool fast = rail_cts_ok(&c, 4, ent);
                            bool full = rail_cts_check(&c, 4, ent, 1, g_err, sizeof(g_err)) == 0;
                            agree += fast == full;
                            ok += full;
                            total++;
                        }
    CHECK_EQ_INT(agree, total);
    CHECK(ok > 0 && ok < total);

    struct rail_eager_hdr h;
    memset(&h, 0, sizeof(h));
    h.size = 8192;
    CHECK_EQ_INT(rail_eager_hdr_check(&h, 8192, g_err, sizeof(g_err)), 0);
    h.size = 8193;
    CHECK_EQ_INT(rail_eager_hdr_check(&h, 8192, g_err, sizeof(g_err)), -EPROTO);
    h.size = UINT64_MAX;
    CHECK_EQ_INT(rail_eager_hdr_check(&h, 8192, g_err, sizeof(g_err)), -EPROTO);
}

/* ---- tag counters ---- */

static void test_tagmap(void)
{
    struct rail_tagmap m;
    uint32_t idx = 99;
    int wrong = 0;

    rail_tagmap_init(&m);
    CHECK_EQ_INT(rail_tagmap_get(&m, 5), 0);
    CHECK_EQ_INT(rail_tagmap_next(&m, 5, &idx), 0);
    CHECK_EQ_INT(idx, 0);
    CHECK_EQ_INT(rail_tagmap_next(&m, 5, &idx), 0);
    CHECK_EQ_INT(idx, 1);
    CHECK_EQ_INT(rail_tagmap_get(&m, 5), 2);
    CHECK_EQ_INT(rail_tagmap_next(&m, INT_MIN, &idx), 0);
    CHECK_EQ_INT(idx, 0);
    CHECK_EQ_INT(rail_tagmap_next(&m, INT_MAX, &idx), 0);
    CHECK_EQ_INT(idx, 0);
    CHECK_EQ_INT(rail_tagmap_next(&m, -1, &idx), 0);
    /* Many tags, with growth in between: every counter stays its own. */
    for (int round = 0; round < 3; round++)
        for (int t = 0; t < 2000; t += 3)
            if (rail_tagmap_next(&m, t * 7919, &idx) != 0 || idx != (uint32_t)round)
                wrong++;
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(rail_tagmap_get(&m, 5), 2);
    CHECK_EQ_INT(rail_tagmap_get(&m, INT_MIN), 1);
    CHECK_EQ_INT(rail_tagmap_get(&m, 3 * 7919), 3);
    CHECK_EQ_INT(rail_tagmap_get(&m, 1), 0);
    /* The last tag counted is looked up first: still right after the table grew under it. */
    CHECK_EQ_INT(rail_tagmap_next(&m, 5, &idx), 0);
    CHECK_EQ_INT(idx, 2);
    for (int t = 1; t <= 4000; t++)
        (void)rail_tagmap_next(&m, -t, &idx);
    CHECK_EQ_INT(rail_tagmap_get(&m, 5), 3);
    CHECK_EQ_INT(rail_tagmap_next(&m, 5, &idx), 0);
    CHECK_EQ_INT(idx, 3);
    CHECK_EQ_INT(rail_tagmap_get(&m, -4000), 1);
    rail_tagmap_free(&m);
    CHECK_EQ_INT(rail_tagmap_get(&m, 5), 0);

    /* The inline forms (the last tag's slot without a call) against the calls on a second map:
     * the same tag again and again (the inline case), another tag (the call), a new tag when the
     * table grows (the last slot then pointed into the old table). */
    struct rail_tagmap a, b;
    uint32_t ia = 0, ib = 0, seed = 12345;
    rail_tagmap_init(&a);
    rail_tagmap_init(&b);
    wrong = 0;
    for (int k = 0; k < 20000; k++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t x = seed >> 16;
        int32_t tag = x % 4 ? (int32_t)(x % 3) : (int32_t)(x % 3000); /* mostly 0..2 */
        if (x & 1) {
            wrong += rail_tagmap_get_inl(&a, tag) != rail_tagmap_get(&b, tag);
        } else {
            int ra = rail_tagmap_next_inl(&a, tag, &ia), rb = rail_tagmap_next(&b, tag, &ib);
            wrong += ra != rb || ia != ib;
        }
    }
    for (int32_t t = 0; t < 3000; t++)
        wrong += rail_tagmap_get(&a, t) != rail_tagmap_get(&b, t);
    CHECK_EQ_INT(wrong, 0);
    rail_tagmap_free(&a);
    rail_tagmap_free(&b);
}

/* ---- NCCL_SOCKET_IFNAME ---- */

static void test_ifname(void)
{
    char why[96];
    CHECK_EQ_INT(rail_ifname_spec_check("^^^", why, sizeof(why)), -EINVAL);
    CHECK_EQ_STR(why, "entry 1: '^' cannot be part of an interface name");
    CHECK_EQ_INT(rail_ifname_spec_check("eth0,,eth1", why, sizeof(why)), -EINVAL);
    CHECK_EQ_STR(why, "entry 2 is empty");
    CHECK_EQ_INT(rail_ifname_spec_check("=", why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(rail_ifname_spec_check("a234567890123456", why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(rail_ifname_spec_check("eth 0", why, sizeof(why)), -EINVAL);
    CHECK_EQ_INT(rail_ifname_spec_check("^=docker0,lo", why, sizeof(why)), 0);
    CHECK_EQ_INT(rail_ifname_spec_check("ib,eth0:1", why, sizeof(why)), 0);
    CHECK_EQ_INT(rail_ifname_spec_check(NULL, why, sizeof(why)), 0);
    CHECK(rail_ifname_match(NULL, "eth0"));
    CHECK(rail_ifname_match("", "eth0"));
    CHECK(rail_ifname_match("eth", "eth0"));
    CHECK(rail_ifname_match("ib,eth", "eth1"));
    CHECK(!rail_ifname_match("ib,eth", "veth0"));
    CHECK(!rail_ifname_match("=eth", "eth0"));
    CHECK(rail_ifname_match("=eth0", "eth0"));
    CHECK(!rail_ifname_match("=eth0", "eth01"));
    CHECK(!rail_ifname_match("^docker,lo", "docker0"));
    CHECK(rail_ifname_match("^docker,lo", "veth0"));
    CHECK(rail_ifname_match("^=eth0", "eth01"));
    CHECK(!rail_ifname_match("^=eth0", "eth0"));
    CHECK(!rail_ifname_match(",", "eth0"));
    CHECK_EQ_INT(rail_ifname_default_rank("ib0"), 0);
    CHECK_EQ_INT(rail_ifname_default_rank("eth0"), 1);
    CHECK_EQ_INT(rail_ifname_default_rank("veth1"), 1);
    CHECK_EQ_INT(rail_ifname_default_rank("docker0"), 2);
    CHECK_EQ_INT(rail_ifname_default_rank("lo"), 3);
    CHECK_EQ_INT(rail_ifname_default_rank("virbr0"), -1);
}

int main(void)
{
    test_handle();
    test_meta_roundtrip(RAIL_FRAME_META_S, 1, 1);
    test_meta_roundtrip(RAIL_FRAME_META_R, 2, 3);
    test_meta_roundtrip(RAIL_FRAME_META_S, RAIL_MAX_RAILS, RAIL_MAX_QPS);
    test_meta_rejects();
    test_meta_fuzz();
    test_ready();
    test_imm();
    test_cts();
    test_tagmap();
    test_ifname();
    return check_report("test_net_wire");
}
