/* SPDX-License-Identifier: Apache-2.0 */
/* Every decoder of the net plugin's wire formats on peer-controlled bytes. The first input byte
 * picks the decoder, the rest is the data: the listen handle, a handshake frame (header, then
 * META_S / META_R / CTL body with its checksum, of the header's version: 4, or 5 with the ECE
 * block), an immediate value, a clear-to-send entry, an eager header, any frame header (READY
 * included). A decoded handle re-encodes to what decodes to the same values; decoded metadata
 * re-encodes to the same bytes (every byte is a checked field), never above the largest body. */
#include "fuzz_util.h"
#include "wire/cts_layout.h"
#include "wire/net_wire.h"

static void copy_in(void *dst, size_t dlen, const uint8_t *src, size_t slen)
{
    memset(dst, 0, dlen);
    memcpy(dst, src, slen < dlen ? slen : dlen);
}

static void handle(const uint8_t *d, size_t n)
{
    uint8_t buf[RAIL_HANDLE_BYTES], again[RAIL_HANDLE_BYTES];
    struct rail_handle h, h2;
    char err[256];
    copy_in(buf, sizeof(buf), d, n);
    if (rail_handle_decode(buf, &h, err, sizeof(err)) != 0)
        return;
    rail_handle_encode(&h, again);
    /* Field by field: the struct has padding that decode does not write. */
    if (rail_handle_decode(again, &h2, err, sizeof(err)) != 0)
        fuzz_fail("re-encoded handle does not decode: %s", err);
    if (h.family != h2.family || h.port != h2.port || h.nonce != h2.nonce ||
        memcmp(h.addr, h2.addr, sizeof(h.addr)) != 0)
        fuzz_fail("handle does not survive a re-encode");
    /* An older listener's handle (4, 5) re-encodes as this plugin's (6). */
    if (h.meta_version < RAIL_WIRE_VERSION || h.meta_version > RAIL_WIRE_VERSION_MAX ||
        h2.meta_version != RAIL_WIRE_VERSION_MAX)
        fuzz_fail("handle metadata versions %d / %d", h.meta_version, h2.meta_version);
}

static void frame(const uint8_t *d, size_t n, int type)
{
    static uint8_t out[RAIL_FRAME_HDR + 65536];
    static struct rail_meta m, m2;
    uint32_t body_len = 0, sum = 0;
    int version = 0, version2 = 0;
    char err[256];
    if (n < RAIL_FRAME_HDR)
        return;
    if (rail_frame_header_decode(d, type, (uint32_t)(n - RAIL_FRAME_HDR), &body_len, &sum, &version,
                                 err, sizeof(err)) != 0)
        return;
    if (body_len > n - RAIL_FRAME_HDR)
        fuzz_fail("header accepted a body of %u bytes with %zu present", body_len,
                  n - RAIL_FRAME_HDR);
    if (rail_meta_decode_version(type, version, d + RAIL_FRAME_HDR, body_len, sum, &m, err,
                                 sizeof(err)) != 0)
        return;
    if (body_len > RAIL_META_MAX_BODY)
        fuzz_fail("metadata of %u bytes accepted (at most %d)", body_len, RAIL_META_MAX_BODY);
    int len = rail_meta_encode(type, &m, out, sizeof(out));
    if (len < RAIL_FRAME_HDR)
        fuzz_fail("decoded metadata does not encode (%d)", len);
    if (rail_frame_header_decode(out, type, (uint32_t)len, &body_len, &sum, &version2, err,
                                 sizeof(err)) ||
        rail_meta_decode_version(type, version2, out + RAIL_FRAME_HDR, body_len, sum, &m2, err,
                                 sizeof(err)))
        fuzz_fail("re-encoded metadata does not decode: %s", err);
    if (version2 != version || memcmp(d + RAIL_FRAME_HDR, out + RAIL_FRAME_HDR, body_len) != 0)
        fuzz_fail("metadata (version %d) does not survive a re-encode byte for byte", version);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    if (size < 1 || size > 70000)
        return 0;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    switch (data[0] % 8) {
    case 0:
        handle(d, n);
        break;
    case 1:
        frame(d, n, RAIL_FRAME_META_S);
        break;
    case 2:
        frame(d, n, RAIL_FRAME_META_R);
        break;
    case 3: {
        uint32_t imm = 0;
        struct rail_imm out;
        copy_in(&imm, sizeof(imm), d, n);
        if (rail_imm_decode(imm, &out) == 0 &&
            (out.kind == RAIL_IMM_DATA ? out.size < 1 || out.size > RAIL_IMM_DIRECT_MAX : 0))
            fuzz_fail("immediate 0x%08x: direct size %u", imm, out.size);
        break;
    }
    case 4: {
        struct rail_cts c;
        uint64_t want = 0;
        copy_in(&c, sizeof(c), d, n);
        if (n > sizeof(c))
            copy_in(&want, sizeof(want), d + sizeof(c), n - sizeof(c));
        for (int nrails = 1; nrails <= RAIL_MAX_RAILS; nrails += 3)
            if (rail_cts_check(&c, want, c.entry % RAIL_MAX_RECVS, nrails, err, sizeof(err)) == 0 &&
                (c.nreqs < 1 || c.nreqs > RAIL_MAX_RECVS))
                fuzz_fail("clear-to-send with %u requests accepted", c.nreqs);
        /* The same bytes as a compact entry (wire version 6): decoded, then checked alike. */
        uint8_t k[RAIL_CTS_COMPACT_BYTES];
        copy_in(k, sizeof(k), d, n);
        rail_cts_unpack(k, RAIL_CTS_COMPACT_BYTES, want, &c);
        if (rail_cts_check(&c, want, c.entry % RAIL_MAX_RECVS, 1, err, sizeof(err)) == 0 &&
            (c.nreqs < 1 || c.nreqs > RAIL_MAX_RECVS || c.seq != want ||
             (uint32_t)want != rail_cts_seq_load(k, RAIL_CTS_COMPACT_BYTES)))
            fuzz_fail("compact clear-to-send (%u requests, seq %llu) accepted", c.nreqs,
                      (unsigned long long)c.seq);
        break;
    }
    case 5: {
        struct rail_eager_hdr h;
        copy_in(&h, sizeof(h), d, n);
        if (rail_eager_hdr_check(&h, 4096, err, sizeof(err)) == 0 && h.size > 4096)
            fuzz_fail("eager header of %llu bytes accepted for a 4096-byte slot",
                      (unsigned long long)h.size);
        break;
    }
    case 6:
        frame(d, n, RAIL_FRAME_CTL);
        break;
    default: {
        uint32_t body_len, sum;
        uint8_t hdr[RAIL_FRAME_HDR];
        copy_in(hdr, sizeof(hdr), d, n);
        for (int type = 0; type <= RAIL_FRAME_CTL + 1; type++)
            (void)rail_frame_header_decode(hdr, type, 1 << 16, &body_len, &sum, NULL, err,
                                           sizeof(err));
        break;
    }
    }
    return 0;
}
