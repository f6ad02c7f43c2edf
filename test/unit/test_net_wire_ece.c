/* SPDX-License-Identifier: Apache-2.0 */
/* The wire step of NCCL_IB_ECE_ENABLE (wire/net_wire.h): metadata frames of version 5 carry each
 * rail's ECE block; the listen handle's extension says whether the listener takes them, so that
 * plugins of versions 4 and 5 still connect to each other:
 *   - a handle of this plugin announces version 5; one with the extension zero (an older
 *     listener) reads as 4; a corrupted extension is refused, a newer listener's reads as 5;
 *   - version 5 frames round-trip every ECE field, at every size up to 8 rails x 128 QPs, and
 *     stay within RAIL_META_MAX_BODY; version 4 frames are unchanged (no ECE);
 *   - a body of one version is refused as the other; READY and control frames stay at 4; a
 *     version the plugin does not speak is refused with both versions named;
 *   - the ECE block's reserved bytes, QP bits at or above nqps, and values without a QP are
 *     refused; random corruption never yields out-of-range fields. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "wire/net_wire.h"

static char g_err[256];
static uint8_t g_frame[RAIL_FRAME_HDR + RAIL_META_MAX_BODY + 64];

static void test_handle_extension(void)
{
    struct rail_handle h = {.family = AF_INET, .port = 4000, .nonce = 99}, d;
    uint8_t buf[RAIL_HANDLE_BYTES];
    rail_handle_encode(&h, buf);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(d.meta_version, RAIL_WIRE_VERSION_MAX);

    /* An older listener writes zeros after the checked part: version 4 frames for it. */
    memset(buf + 44, 0, 8);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), 0);
    CHECK_EQ_INT(d.meta_version, RAIL_WIRE_VERSION);

    /* Every flipped bit of the extension is detected. */
    int undetected = 0;
    for (int i = 44; i < 52; i++)
        for (int bit = 0; bit < 8; bit++) {
            rail_handle_encode(&h, buf);
            buf[i] ^= (uint8_t)(1u << bit);
            if (rail_handle_decode(buf, &d, g_err, sizeof(g_err)) == 0)
                undetected++;
        }
    CHECK_EQ_INT(undetected, 0);

    /* A consistent extension naming version 4 (or reserved bytes) is not something a plugin
     * writes; version 5 and 6 listeners read as such, a newer one (7) takes this plugin's
     * newest. */
    for (int v = 4; v <= 7; v++) {
        rail_handle_encode(&h, buf);
        buf[44] = (uint8_t)v;
        uint32_t sum = rail_wire_checksum(buf, 48);
        memcpy(buf + 48, &sum, 4); /* little-endian host */
        int rc = rail_handle_decode(buf, &d, g_err, sizeof(g_err));
        if (v == 4) {
            CHECK_EQ_INT(rc, -EINVAL);
            CHECK(strstr(g_err, "metadata version 4") != NULL);
        } else {
            CHECK_EQ_INT(rc, 0);
            CHECK_EQ_INT(d.meta_version, v < RAIL_WIRE_VERSION_MAX ? v : RAIL_WIRE_VERSION_MAX);
        }
    }
    rail_handle_encode(&h, buf);
    buf[46] = 1;
    uint32_t sum = rail_wire_checksum(buf, 48);
    memcpy(buf + 48, &sum, 4);
    CHECK_EQ_INT(rail_handle_decode(buf, &d, g_err, sizeof(g_err)), -EINVAL);
}

static void sample(struct rail_meta *m, int type, int version, int nrails, int nqps)
{
    memset(m, 0, sizeof(*m));
    m->version = version;
    m->nonce = 7;
    m->nrails = nrails;
    m->nqps = nqps;
    m->addr1 = 0x1000;
    if (type == RAIL_FRAME_META_R) {
        m->eager_slots = 4;
        m->eager_bytes = 4096;
        m->addr2 = 0x2000;
    }
    for (int r = 0; r < nrails; r++) {
        struct rail_meta_rail *mr = &m->rails[r];
        mr->link_layer = RAIL_LL_IB;
        mr->mtu = 5;
        mr->port = 1;
        mr->lid = 1 + r;
        mr->rkey1 = 0x100u + (uint32_t)r;
        mr->rkey2 = type == RAIL_FRAME_META_R ? 0x200u + (uint32_t)r : 0;
        for (int q = 0; q < nqps; q++)
            mr->qpn[q] = 0x40u + (uint32_t)(r * RAIL_MAX_QPS + q);
        if (r % 2 == 0) { /* even rails: ECE on every other QP; odd rails: none */
            mr->ece.vendor_id = 0x15b3;
            mr->ece.options = 0x80000000u | (uint32_t)r;
            mr->ece.comp_mask = 0x3;
            for (int q = 0; q < nqps; q += 2)
                rail_ece_mark(&mr->ece, q);
        }
    }
}

static int decode(int type, int version, size_t len, struct rail_meta *d)
{
    const uint8_t *body = g_frame + RAIL_FRAME_HDR;
    return rail_meta_decode_version(type, version, body, len, rail_wire_checksum(body, len), d,
                                    g_err, sizeof(g_err));
}

static void test_roundtrip(int type, int nrails, int nqps)
{
    static struct rail_meta m, d;
    uint32_t body_len, csum;
    int version = 0;
    sample(&m, type, RAIL_WIRE_VERSION_ECE, nrails, nqps);
    int n = rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    size_t want = rail_meta_body_len(nrails, nqps) + (size_t)nrails * RAIL_ECE_BYTES;
    CHECK_EQ_INT(n, RAIL_FRAME_HDR + (int)want);
    CHECK(want <= RAIL_META_MAX_BODY);
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, RAIL_META_MAX_BODY, &body_len, &csum,
                                          &version, g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT(version, RAIL_WIRE_VERSION_ECE);
    CHECK_EQ_INT(decode(type, version, body_len, &d), 0);
    CHECK_EQ_INT(d.version, RAIL_WIRE_VERSION_ECE);
    for (int r = 0; r < nrails; r++) {
        CHECK(memcmp(&d.rails[r].ece, &m.rails[r].ece, sizeof(m.rails[r].ece)) == 0);
        CHECK(memcmp(d.rails[r].qpn, m.rails[r].qpn, 4 * (size_t)nqps) == 0);
    }
    /* The same metadata as version 4: no ECE block, no ECE decoded. */
    m.version = RAIL_WIRE_VERSION;
    n = rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(n, RAIL_FRAME_HDR + (int)rail_meta_body_len(nrails, nqps));
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, RAIL_META_MAX_BODY, &body_len, &csum,
                                          &version, g_err, sizeof(g_err)),
                 0);
    CHECK_EQ_INT(version, RAIL_WIRE_VERSION);
    CHECK_EQ_INT(decode(type, version, body_len, &d), 0);
    struct rail_wire_ece none = {0};
    for (int r = 0; r < nrails; r++)
        CHECK(memcmp(&d.rails[r].ece, &none, sizeof(none)) == 0);
}

static void test_versions(void)
{
    static struct rail_meta m, d;
    const int type = RAIL_FRAME_META_S;
    uint32_t body_len, csum;
    int version;
    sample(&m, type, RAIL_WIRE_VERSION_ECE, 2, 3);
    size_t len5 = rail_meta_body_len(2, 3) + 2 * RAIL_ECE_BYTES, len4 = rail_meta_body_len(2, 3);
    rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    /* A version 5 body is not a version 4 body, and the reverse. */
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION, len5, &d), -EPROTO);
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_ECE, len4, &d), -EPROTO);
    /* Versions this plugin does not speak, in a metadata header: both named. */
    g_frame[4] = RAIL_WIRE_VERSION_MAX + 1;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, RAIL_META_MAX_BODY, &body_len, &csum,
                                          &version, g_err, sizeof(g_err)),
                 -EPROTO);
    CHECK(strstr(g_err, "version 7") != NULL && strstr(g_err, "speaks 4..6") != NULL);
    g_frame[4] = RAIL_WIRE_VERSION - 1;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, type, RAIL_META_MAX_BODY, &body_len, &csum,
                                          &version, g_err, sizeof(g_err)),
                 -EPROTO);
    /* READY and control frames stay at version 4. */
    g_frame[4] = RAIL_WIRE_VERSION_ECE;
    g_frame[6] = RAIL_FRAME_CTL;
    CHECK_EQ_INT(rail_frame_header_decode(g_frame, RAIL_FRAME_CTL, RAIL_META_MAX_BODY, &body_len,
                                          &csum, &version, g_err, sizeof(g_err)),
                 -EPROTO);
    CHECK_EQ_INT(decode(RAIL_FRAME_CTL, RAIL_WIRE_VERSION_ECE, len5, &d), -EPROTO);
    uint8_t ready[64];
    CHECK_EQ_INT(rail_ready_encode(ready, sizeof(ready)), RAIL_FRAME_HDR + 8);
    CHECK_EQ_INT(ready[4], RAIL_WIRE_VERSION);
    /* The encoder writes only the two versions. */
    m.version = RAIL_WIRE_VERSION_MAX + 1;
    CHECK_EQ_INT(rail_meta_encode(type, &m, g_frame, sizeof(g_frame)), -EINVAL);
}

/* Patch one byte of the version 5 body (checksum recomputed) and decode. */
static int patched(int type, size_t len, size_t off, uint8_t val, struct rail_meta *d)
{
    uint8_t *body = g_frame + RAIL_FRAME_HDR, old = body[off];
    body[off] = val;
    int rc = decode(type, RAIL_WIRE_VERSION_ECE, len, d);
    body[off] = old;
    return rc;
}

static void test_rejects(void)
{
    static struct rail_meta m, d;
    const int type = RAIL_FRAME_META_R, nrails = 2, nqps = 3;
    size_t base = rail_meta_body_len(nrails, nqps), len = base + nrails * RAIL_ECE_BYTES;
    sample(&m, type, RAIL_WIRE_VERSION_ECE, nrails, nqps);
    rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
    CHECK_EQ_INT(decode(type, RAIL_WIRE_VERSION_ECE, len, &d), 0);
    for (int i = 0; i < 4; i++) /* rail 0's reserved flag bytes */
        CHECK_EQ_INT(patched(type, len, base + (size_t)i, 1, &d), -EPROTO);
    CHECK(strstr(g_err, "reserved") != NULL);
    /* rail 0, QP 3 of 3 (bit 3 of the first bitmap byte) */
    CHECK_EQ_INT(patched(type, len, base + 16, 0x08 | 0x05, &d), -EPROTO);
    CHECK(strstr(g_err, "QP 3 of 3") != NULL);
    CHECK_EQ_INT(patched(type, len, base + 31, 0x80, &d), -EPROTO); /* QP 127 */
    /* rail 1 has no QP with ECE: values are refused there. */
    CHECK_EQ_INT(patched(type, len, base + RAIL_ECE_BYTES + 8, 1, &d), -EPROTO);
    CHECK(strstr(g_err, "without a QP") != NULL);
    /* ... and accepted once a QP has it. */
    CHECK_EQ_INT(patched(type, len, base + RAIL_ECE_BYTES + 16, 0x04, &d), 0);
    CHECK_EQ_INT(rail_ece_has(&d.rails[1].ece, 2), 1);
    /* Truncations and an extension. */
    int accepted = 0;
    for (size_t l = 0; l < len + 40; l++)
        if (l != len && decode(type, RAIL_WIRE_VERSION_ECE, l, &d) == 0)
            accepted++;
    CHECK_EQ_INT(accepted, 0);
}

static void test_mutations(void)
{
    static struct rail_meta m, d;
    uint8_t *body = g_frame + RAIL_FRAME_HDR;
    int bad = 0;
    srand(5);
    for (int it = 0; it < 20000; it++) {
        int type = it & 1 ? RAIL_FRAME_META_R : RAIL_FRAME_META_S;
        int nrails = 1 + rand() % 3, nqps = 1 + rand() % 9;
        size_t len = rail_meta_body_len(nrails, nqps) + (size_t)nrails * RAIL_ECE_BYTES;
        sample(&m, type, RAIL_WIRE_VERSION_ECE, nrails, nqps);
        rail_meta_encode(type, &m, g_frame, sizeof(g_frame));
        for (int k = 1 + rand() % 3; k > 0; k--) /* mostly inside the ECE blocks */
            body[rand() % 4 ? len - 1 - (size_t)rand() % ((size_t)nrails * RAIL_ECE_BYTES)
                            : (size_t)rand() % len] = (uint8_t)rand();
        if (decode(type, RAIL_WIRE_VERSION_ECE, len, &d) != 0)
            continue;
        for (int r = 0; r < d.nrails; r++) {
            bool any = false;
            for (int q = 0; q < RAIL_MAX_QPS; q++) {
                if (rail_ece_has(&d.rails[r].ece, q) && q >= d.nqps)
                    bad++;
                any = any || rail_ece_has(&d.rails[r].ece, q);
            }
            if (!any && (d.rails[r].ece.vendor_id || d.rails[r].ece.options))
                bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_handle_extension();
    test_roundtrip(RAIL_FRAME_META_S, 1, 1);
    test_roundtrip(RAIL_FRAME_META_R, 2, 3);
    test_roundtrip(RAIL_FRAME_META_S, RAIL_MAX_RAILS, RAIL_MAX_QPS);
    test_roundtrip(RAIL_FRAME_META_R, RAIL_MAX_RAILS, RAIL_MAX_QPS);
    test_versions();
    test_rejects();
    test_mutations();
    return check_report("test_net_wire_ece");
}
