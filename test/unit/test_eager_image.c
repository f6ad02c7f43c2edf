/* SPDX-License-Identifier: Apache-2.0 */
/* Flagged eager images (wire/eager_image.c): round trips of every size, then images landing
 * word by word in a seeded random order over the stale image of the slot's previous message,
 * over a zeroed slot, and over an older image of another size: the poller must not see the
 * message before its last word is there, must see it with the right bytes once it is, and must
 * refuse a size no sender writes. */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"
#include "wire/eager_image.h"

#define WORDS (RAIL_IMAGE_STRIDE / 8)

static char g_err[160];

static void fill(uint8_t *p, uint32_t n, uint32_t *seed)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(fuzz_step(seed) >> 16);
}

static void layout(void)
{
    CHECK_EQ_INT(rail_image_bytes(0), 24);
    CHECK_EQ_INT(rail_image_bytes(1), 32);
    CHECK_EQ_INT(rail_image_bytes(8), 40);
    CHECK_EQ_INT(rail_image_bytes(9), 48);
    CHECK(rail_image_bytes(RAIL_IMAGE_MAX_PAYLOAD) <= RAIL_IMAGE_STRIDE);
    CHECK_EQ_INT(RAIL_IMAGE_STRIDE % 64, 0);
    CHECK_EQ_INT(rail_image_region_off(16, 64 + 8192), 16 * (64 + 8192));
    CHECK_EQ_INT(rail_image_region_off(3, 64 + 1001), 3200); /* 3195 rounded up to 64 */
    CHECK_EQ_INT(rail_image_region_off(0, 64), 0);
    /* The flag never is 0 (zeroed memory) and differs between the messages that share a slot. */
    for (uint64_t seq = 0; seq < 100000; seq++) {
        CHECK_MSG(rail_image_flag(seq) != 0, "seq %llu", (unsigned long long)seq);
        for (uint64_t k = 1; k <= 3 && k * 16 <= seq; k++)
            if (rail_image_flag(seq) == rail_image_flag(seq - k * 16))
                CHECK_MSG(0, "seq %llu shares its flag with %llu", (unsigned long long)seq,
                          (unsigned long long)(seq - k * 16));
    }
    CHECK(rail_image_flag(0xFFFFFFFFull) != rail_image_flag(0x100000000ull - 16));
}

static void round_trips(void)
{
    uint64_t img[WORDS];
    uint8_t in[RAIL_IMAGE_MAX_PAYLOAD], out[RAIL_IMAGE_MAX_PAYLOAD + 8];
    uint32_t seed = 99;
    for (uint32_t size = 0; size <= RAIL_IMAGE_MAX_PAYLOAD; size++) {
        uint64_t seq = (uint64_t)size * 977u + 5u;
        struct rail_image_info info = {0};
        fill(in, size, &seed);
        memset(img, 0, sizeof(img));
        rail_image_encode(img, seq, -7 - (int32_t)size, size * 3u, in, size);
        CHECK_EQ_INT(rail_image_peek(img, seq, RAIL_IMAGE_MAX_PAYLOAD, &info, g_err, sizeof(g_err)),
                     1);
        CHECK_EQ_INT(info.size, size);
        CHECK_EQ_INT(info.tag, -7 - (int32_t)size);
        CHECK_EQ_INT(info.tag_index, size * 3u);
        memset(out, 0xA5, sizeof(out));
        rail_image_copy(img, size, out);
        CHECK_MSG(memcmp(in, out, size) == 0, "size %u: payload differs", size);
        CHECK_MSG(out[size] == 0xA5, "size %u: wrote past the payload", size);
        /* The same bytes are not message seq + 16 (the slot's next) nor seq - 16. */
        CHECK_EQ_INT(
            rail_image_peek(img, seq + 16, RAIL_IMAGE_MAX_PAYLOAD, &info, g_err, sizeof(g_err)), 0);
        if (seq >= 16)
            CHECK_EQ_INT(
                rail_image_peek(img, seq - 16, RAIL_IMAGE_MAX_PAYLOAD, &info, g_err, sizeof(g_err)),
                0);
    }
    struct rail_image_info info;
    memset(img, 0, sizeof(img));
    CHECK_EQ_INT(rail_image_peek(img, 0, 256, &info, g_err, sizeof(g_err)), 0); /* zeroed */
}

/* Message seq lands one word at a time, in random order, over `before`. */
static void landing(uint32_t seed, uint64_t seq, uint32_t size, const uint64_t *before)
{
    uint64_t img[WORDS], fresh[WORDS];
    uint8_t in[RAIL_IMAGE_MAX_PAYLOAD], out[RAIL_IMAGE_MAX_PAYLOAD];
    int order[WORDS];
    size_t n = rail_image_bytes(size) / 8;
    struct rail_image_info info;

    fill(in, size, &seed);
    memcpy(img, before, sizeof(img));
    memset(fresh, 0, sizeof(fresh));
    rail_image_encode(fresh, seq, 42, 7, in, size);
    for (size_t i = 0; i < n; i++)
        order[i] = (int)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (fuzz_step(&seed) >> 8) % (i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t k = 0; k < n; k++) {
        CHECK_MSG(rail_image_peek(img, seq, RAIL_IMAGE_MAX_PAYLOAD, &info, g_err, sizeof(g_err)) ==
                      0,
                  "seed %u size %u: seen with %zu of %zu words landed", seed, size, k, n);
        img[order[k]] = fresh[order[k]];
    }
    CHECK_MSG(rail_image_peek(img, seq, RAIL_IMAGE_MAX_PAYLOAD, &info, g_err, sizeof(g_err)) == 1,
              "seed %u size %u: not seen once landed", seed, size);
    CHECK(info.size == size && info.tag == 42 && info.tag_index == 7);
    rail_image_copy(img, size, out);
    CHECK_MSG(memcmp(in, out, size) == 0, "seed %u size %u: payload differs", seed, size);
}

static void streams(void)
{
    uint64_t stale[WORDS];
    uint8_t junk[RAIL_IMAGE_MAX_PAYLOAD];
    for (uint32_t seed = 1; seed <= 400; seed++) {
        uint32_t s = seed * 2654435761u;
        uint32_t size = (fuzz_step(&s) >> 8) % (RAIL_IMAGE_MAX_PAYLOAD + 1);
        uint32_t old = (fuzz_step(&s) >> 8) % (RAIL_IMAGE_MAX_PAYLOAD + 1);
        uint64_t seq = 16 + (fuzz_step(&s) >> 4);
        memset(stale, 0, sizeof(stale));
        if (seed % 4 != 0) { /* the slot's previous message (same tag, index, even the payload) */
            fill(junk, old, &s);
            rail_image_encode(stale, seq - 16, 42, 7, junk, old);
        }
        landing(s, seq, size, stale);
    }
    /* An identical payload as the previous message of the slot: only the flags tell them. */
    uint8_t same[64] = {1, 2, 3};
    memset(stale, 0, sizeof(stale));
    rail_image_encode(stale, 100, 42, 7, same, 64);
    struct rail_image_info info;
    CHECK_EQ_INT(rail_image_peek(stale, 116, 512, &info, g_err, sizeof(g_err)), 0);
}

static void refused(void)
{
    uint64_t img[WORDS];
    uint8_t in[RAIL_IMAGE_MAX_PAYLOAD] = {0};
    struct rail_image_info info;
    rail_image_encode(img, 3, 1, 1, in, 300);
    CHECK_EQ_INT(rail_image_peek(img, 3, 256, &info, g_err, sizeof(g_err)), -EPROTO);
    CHECK(strstr(g_err, "300 bytes") != NULL);
    CHECK_EQ_INT(rail_image_peek(img, 3, 300, &info, g_err, sizeof(g_err)), 1);
    /* A size word beyond what any image slot holds, flagged right. */
    img[0] = (uint64_t)rail_image_flag(3) << 32 | (RAIL_IMAGE_MAX_PAYLOAD + 1u);
    CHECK_EQ_INT(rail_image_peek(img, 3, UINT32_MAX, &info, g_err, sizeof(g_err)), -EPROTO);
    img[0] = (uint64_t)rail_image_flag(3) << 32 | 0xFFFFFFFFu;
    CHECK_EQ_INT(rail_image_peek(img, 3, UINT32_MAX, &info, g_err, sizeof(g_err)), -EPROTO);
}

/* rail_image_encode's inline 8-byte words against rail_image_encode_any: the same bytes, no
 * word past the image touched, over random sequence numbers, tags, indexes and payloads (and
 * every other size goes to the general encoder). */
static void encode_inline(void)
{
    uint32_t seed = 8;
    for (int it = 0; it < 20000; it++) {
        uint64_t a[WORDS], b[WORDS];
        uint8_t in[16];
        uint32_t size = it % 4 ? 8 : (uint32_t)(fuzz_step(&seed) >> 8) % 17;
        uint64_t seq = (uint64_t)fuzz_step(&seed) << 20 ^ fuzz_step(&seed);
        int32_t tag = (int32_t)fuzz_step(&seed);
        uint32_t index = fuzz_step(&seed);
        fill(in, sizeof(in), &seed);
        memset(a, 0x5a, sizeof(a));
        memset(b, 0x5a, sizeof(b));
        rail_image_encode(a, seq, tag, index, in, size);
        rail_image_encode_any(b, seq, tag, index, in, size);
        bool same = memcmp(a, b, sizeof(a)) == 0;
        CHECK_MSG(same, "size %u seq %llu: the inline image differs", size,
                  (unsigned long long)seq);
        if (!same)
            break;
    }
}

int main(void)
{
    layout();
    encode_inline();
    round_trips();
    streams();
    refused();
    return check_report("test_eager_image");
}
