/* SPDX-License-Identifier: Apache-2.0 */
/* Wire version 6 (wire/net_wire.h): metadata frames carry the clear-to-send entry size of the
 * sender's FIFO (rail_meta.cts_bytes) after the ECE blocks, so that a sender whose listener takes
 * version 6 keeps a FIFO of compact 64-byte entries (wire/cts_layout.h) and an older pair keeps
 * the 128-byte layout, and the sender's send queue depth (rail_meta.send_depth), which sizes the
 * receiver's receive queues (an older sender's, 0, keeps the full size), and the depth of its
 * control QP (rail_meta.ctl_depth, the last QP of each rail: 0 none), which sizes the receiver's
 * QP facing it:
 *   - a handle announces version 6; version 5 and 6 frames are told apart by their length;
 *   - version 6 frames round-trip cts_bytes (64 and 128) and every ECE field, up to 8 rails x
 *     128 QPs within RAIL_META_MAX_BODY; version 4 and 5 frames decode as 128-byte entries;
 *   - an entry size other than 64 or 128, or a reserved byte of the block set, is refused with
 *     the size named; the encoder refuses them too;
 *   - a version 5 plugin (which refuses version 6 headers) is never sent one: it is only sent to
 *     a listener whose handle announces 6 (net_conn.c; interop: test/interop). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "wire/net_wire.h"

static char g_err[256];
static uint8_t g_frame[RAIL_FRAME_HDR + RAIL_META_MAX_BODY + 64];

static void sample(struct rail_meta *m, int type, int version, int nrails, int nqps, unsigned cts)
{
    memset(m, 0, sizeof(*m));
    m->version = version;
    m->nonce = 11;
    m->nrails = nrails;
    m->nqps = nqps;
    m->addr1 = 0x1000;
    m->cts_bytes = cts;
    m->send_depth = type == RAIL_FRAME_META_S && version >= RAIL_WIRE_VERSION_FIFO ? 126 : 0;
    m->ctl_depth = m->send_depth && nqps > 1 ? 31 : 0;
    if (type == RAIL_FRAME_META_R) {
        m->eager_slots = 8;
        m->eager_bytes = 8192;
        m->addr2 = 0x2000;
    }
    for (int r = 0; r < nrails; r++) {
        struct rail_meta_rail *mr = &m->rails[r];
        mr->link_layer = RAIL_LL_ETH;
        mr->mtu = 3;
        mr->port = 1;
        mr->rkey1 = 0x100u + (uint32_t)r;
        mr->rkey2 = type == RAIL_FRAME_META_R ? 0x200u + (uint32_t)r : 0;
        for (int q = 0; q < nqps; q++)
            mr->qpn[q] = 0x40u + (uint32_t)(r * RAIL_MAX_QPS + q);
        mr->ece.vendor_id = 0x15b3;
        mr->ece.options = 0x1000u + (uint32_t)r;
        rail_ece_mark(&mr->ece, 0);
    }
}

/* Encodes m, checks the header, decodes into d: the decoder's return code. */
static int roundtrip(int type, const struct rail_meta *m, struct rail_meta *d, size_t *body)
{
    uint32_t body_len = 0, csum = 0;
    int version = 0;
    int n = rail_meta_encode(type, m, g_frame, sizeof(g_frame));
    if (n < RAIL_FRAME_HDR)
        return n;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, RAIL_META_MAX_BODY, &body_len, &csum,
                                          &version, g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT(version, m->version ? m->version : RAIL_WIRE_VERSION);
    *body = body_len;
    return rail_meta_decode_version(type, version, g_frame + RAIL_FRAME_HDR, body_len, csum, d,
                                    g_err, sizeof(g_err));
}

static int decode(int type, int version, size_t len, struct rail_meta *d)
{
    const uint8_t *body = g_frame + RAIL_FRAME_HDR;
    return rail_meta_decode_version(type, version, body, len, rail_wire_checksum(body, len), d,
                                    g_err, sizeof(g_err));
}

static void test_handle(void)
{
    struct rail_handle h = {.family = AF_INET, .port = 4000, .nonce = 99}, d;
    uint8_t buf[RAIL_HANDLE_BYTES];
    rail_handle_encode(&h, buf);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(d.meta_version, RAIL_WIRE_VERSION_FIFO);
    CHECK_EQ_INT(buf[44], RAIL_WIRE_VERSION_FIFO); /* what a version 5 plugin reads as "5 or up" */
}

static void test_roundtrip(void)
{
    static struct rail_meta m, d;
    size_t body;
    const int types[2] = {RAIL_FRAME_META_S, RAIL_FRAME_META_R};
    const int shapes[4][2] = {{1, 1}, {2, 3}, {8, 1}, {RAIL_MAX_RAILS, RAIL_MAX_QPS}};
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 4; k++) {
            int nrails = shapes[k][0], nqps = shapes[k][1];
            for (unsigned cts = RAIL_CTS_COMPACT_BYTES; cts <= RAIL_CTS_BYTES; cts *= 2) {
                sample(&m, types[t], RAIL_WIRE_VERSION_FIFO, nrails, nqps, cts);
                CHECK_EQ_INT(roundtrip(types[t], &m, &d, &body), 0);
                CHECK(body == rail_meta_body_len(nrails, nqps) + (size_t)nrails * RAIL_ECE_BYTES +
                                  RAIL_META_FIFO_BYTES);
                CHECK(body <= RAIL_META_MAX_BODY);
                CHECK_EQ_INT(d.version, RAIL_WIRE_VERSION_FIFO);
                CHECK_EQ_INT((int)d.cts_bytes, (int)cts);
                CHECK_EQ_INT(d.send_depth, types[t] == RAIL_FRAME_META_S ? 126 : 0);
                CHECK_EQ_INT(d.ctl_depth, types[t] == RAIL_FRAME_META_S && nqps > 1 ? 31 : 0);
                for (int r = 0; r < nrails; r++)
                    CHECK(memcmp(&d.rails[r].ece, &m.rails[r].ece, sizeof(m.rails[r].ece)) == 0);
            }
            /* Older frames carry no entry size: they decode as the 128-byte layout, whatever
             * the struct said, and are as long as before. */
            for (int v = RAIL_WIRE_VERSION; v <= RAIL_WIRE_VERSION_ECE; v++) {
                sample(&m, types[t], v, nrails, nqps, RAIL_CTS_COMPACT_BYTES);
                m.send_depth = 126; /* not on the wire before version 6 */
                m.ctl_depth = nqps > 1 ? 31 : 0;
                CHECK_EQ_INT(roundtrip(types[t], &m, &d, &body), 0);
                CHECK_EQ_INT((int)d.cts_bytes, RAIL_CTS_BYTES);
                CHECK_EQ_INT(d.send_depth, 0);
                CHECK_EQ_INT(d.ctl_depth, 0);
                CHECK(body ==
                      rail_meta_body_len(nrails, nqps) +
                          (v == RAIL_WIRE_VERSION_ECE ? (size_t)nrails * RAIL_ECE_BYTES : 0));
            }
        }
}

static void test_rejects(void)
{
    static struct rail_meta m, d;
    const int type = RAIL_FRAME_META_S, nrails = 2, nqps = 3;
    size_t len5 = rail_meta_body_len(nrails, nqps) + nrails * RAIL_ECE_BYTES;
    size_t len6 = len5 + RAIL_META_FIFO_BYTES, body;
    sample(&m, type, RAIL_WIRE_VERSION_FIFO, nrails, nqps, RAIL_CTS_COMPACT_BYTES);
    CHECK_EQ_INT(roundtrip(type, &m, &d, &body), 0);
    CHECK(body == len6);
    /* A version 6 body is not a version 5 body, nor the reverse. */
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_ECE, len6, &d), -EPROTO);
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len5, &d), -EPROTO);
    /* Entry sizes other than 64 and 128, and reserved bytes, are refused (checksum fixed). */
    uint8_t *x = g_frame + RAIL_FRAME_HDR + len5;
    const unsigned bad[] = {0, 32, 96, 256, 65535};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        x[0] = (uint8_t)bad[i];
        x[1] = (uint8_t)(bad[i] >> 8);
        CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), -EPROTO);
        CHECK(strstr(g_err, "clear-to-send entries") != NULL);
    }
    x[0] = RAIL_CTS_COMPACT_BYTES;
    x[1] = 0;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), 0);
    for (int i = 6; i < RAIL_META_FIFO_BYTES; i++) {
        x[i] = 1;
        CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), -EPROTO);
        x[i] = 0;
    }
    /* The send queue depth: the sender's, 1..65535 (little-endian at +2), none from the
     * receiver. */
    x[2] = 0xff;
    x[3] = 0xff;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), 0);
    CHECK_EQ_INT(d.send_depth, 65535);
    x[2] = x[3] = 0;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), -EPROTO);
    CHECK(strstr(g_err, "send queue depth of 0") != NULL);
    x[2] = 126;
    static struct rail_meta r;
    sample(&r, RAIL_FRAME_META_R, RAIL_WIRE_VERSION_FIFO, nrails, nqps, RAIL_CTS_COMPACT_BYTES);
    r.send_depth = 1; /* refused by the encoder: write the frame, then patch it */
    CHECK_EQ_INT(rail_meta_encode(RAIL_FRAME_META_R, &r, g_frame, sizeof(g_frame)), -EINVAL);
    r.send_depth = 0;
    CHECK(rail_meta_encode(RAIL_FRAME_META_R, &r, g_frame, sizeof(g_frame)) > 0);
    size_t rlen = rail_meta_body_len(nrails, nqps) + nrails * RAIL_ECE_BYTES;
    g_frame[RAIL_FRAME_HDR + rlen + 2] = 8;
    CHECK_EQ_INT(decode(RAIL_FRAME_META_R, RAIL_WIRE_VERSION_FIFO, rlen + RAIL_META_FIFO_BYTES, &d),
                 -EPROTO);
    CHECK(strstr(g_err, "only the sender") != NULL);
    /* The control QP's depth (little-endian at +4): from a sender with a data QP beside it. */
    CHECK(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)) > 0);
    CHECK_EQ_INT(x[4], 31);
    x[4] = 31;
    x[5] = 0;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), 0);
    CHECK_EQ_INT(d.ctl_depth, 31);
    x[4] = x[5] = 0xff;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), 0);
    CHECK_EQ_INT(d.ctl_depth, 65535);
    x[4] = x[5] = 0;
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len6, &d), 0);
    CHECK_EQ_INT(d.ctl_depth, 0);
    static struct rail_meta one;
    sample(&one, type, RAIL_WIRE_VERSION_FIFO, nrails, 1, RAIL_CTS_COMPACT_BYTES);
    CHECK(rail_meta_encode(type, &one, g_frame, sizeof(g_frame)) > 0);
    size_t len1 = rail_meta_body_len(nrails, 1) + nrails * RAIL_ECE_BYTES;
    g_frame[RAIL_FRAME_HDR + len1 + 4] = 31; /* one QP: no data QP beside a control QP */
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_FIFO, len1 + RAIL_META_FIFO_BYTES, &d), -EPROTO);
    CHECK(strstr(g_err, "control QP") != NULL);
    one.ctl_depth = 31;
    CHECK_EQ_INT(rail_meta_encode(type, &one, g_frame, sizeof(g_frame)), -EINVAL);
    r.ctl_depth = 31;
    CHECK_EQ_INT(rail_meta_encode(RAIL_FRAME_META_R, &r, g_frame, sizeof(g_frame)), -EINVAL);
    r.ctl_depth = 0;
    CHECK(rail_meta_encode(RAIL_FRAME_META_R, &r, g_frame, sizeof(g_frame)) > 0);
    g_frame[RAIL_FRAME_HDR + rlen + 4] = 31;
    CHECK_EQ_INT(decode(RAIL_FRAME_META_R, RAIL_WIRE_VERSION_FIFO, rlen + RAIL_META_FIFO_BYTES, &d),
                 -EPROTO);
    CHECK(strstr(g_err, "only the sender") != NULL);
    sample(&m, type, RAIL_WIRE_VERSION_FIFO, nrails, nqps, RAIL_CTS_COMPACT_BYTES);
    m.ctl_depth = 65536;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
    m.ctl_depth = 31;
    /* The encoder writes only what the decoder takes. */
    m.cts_bytes = 96;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
    m.cts_bytes = 0;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
    m.cts_bytes = RAIL_CTS_COMPACT_BYTES;
    m.send_depth = 0;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
    m.send_depth = 65536;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
    /* Control frames stay at version 4. */
    CHECK_EQ_INT(decode(RAIL_FRAME_CTL, RAIL_WIRE_VERSION_FIFO, len6, &d), -EPROTO);
}

int main(void)
{
    test_handle();
    test_roundtrip();
    test_rejects();
    return check_report("test_net_wire_fifo");
}
