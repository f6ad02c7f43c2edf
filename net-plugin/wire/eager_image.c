/* SPDX-License-Identifier: Apache-2.0 */
/* Flagged eager images: encoding on the sender, polling and copy-out on the receiver (layout
 * and the reasoning behind it in eager_image.h). */
#include "wire/eager_image.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static uint64_t word(uint32_t value, uint32_t flag)
{
    return (uint64_t)flag << 32 | value;
}

static uint64_t load(const void *img, size_t i)
{
    return __atomic_load_n((const uint64_t *)img + i, __ATOMIC_RELAXED);
}

void rail_image_encode_any(void *dst, uint64_t seq, int32_t tag, uint32_t tag_index,
                           const void *payload, uint32_t size)
{
    uint64_t *w = dst;
    const uint8_t *p = payload;
    uint32_t flag = rail_image_flag(seq);

    w[0] = word(size, flag);
    w[1] = word((uint32_t)tag, flag);
    w[2] = word(tag_index, flag);
    /* Whole words with a fixed-size copy (one load each), then the 1-3 byte tail. */
    uint32_t off = 0, i = RAIL_IMAGE_HDR_WORDS;
    for (; size - off >= 4; off += 4, i++) {
        uint32_t v;
        memcpy(&v, p + off, 4);
        w[i] = word(v, flag);
    }
    if (off < size) {
        uint32_t v = 0;
        memcpy(&v, p + off, size - off);
        w[i] = word(v, flag);
    }
}

int rail_image_peek(const void *img, uint64_t seq, uint32_t max_size, struct rail_image_info *out,
                    char *err, size_t errlen)
{
    uint32_t flag = rail_image_flag(seq);
    uint64_t h[RAIL_IMAGE_HDR_WORDS] = {load(img, 0), load(img, 1), load(img, 2)};

    /* The three header words' flags with one branch (the slot holds them all, read or not). */
    if (((uint32_t)(h[0] >> 32) != flag) | ((uint32_t)(h[1] >> 32) != flag) |
        ((uint32_t)(h[2] >> 32) != flag))
        return 0;
    uint32_t size = (uint32_t)h[0];
    if (size > max_size || size > RAIL_IMAGE_MAX_PAYLOAD) {
        snprintf(err, errlen, "flagged eager message of %u bytes (at most %u)", size,
                 max_size < RAIL_IMAGE_MAX_PAYLOAD ? max_size : RAIL_IMAGE_MAX_PAYLOAD);
        return -EPROTO;
    }
    size_t n = rail_image_bytes(size) / 8;
    for (size_t i = RAIL_IMAGE_HDR_WORDS; i < n; i++)
        if ((uint32_t)(load(img, i) >> 32) != flag)
            return 0;
    out->size = size;
    out->tag = (int32_t)(uint32_t)h[1];
    out->tag_index = (uint32_t)h[2];
    return 1;
}

void rail_image_copy(const void *img, uint32_t size, void *dst)
{
    uint8_t *d = dst;
    uint32_t off = 0, i = RAIL_IMAGE_HDR_WORDS;
    for (; size - off >= 4; off += 4, i++) {
        uint32_t v = (uint32_t)load(img, i);
        memcpy(d + off, &v, 4);
    }
    if (off < size) {
        uint32_t v = (uint32_t)load(img, i);
        memcpy(d + off, &v, size - off);
    }
}
