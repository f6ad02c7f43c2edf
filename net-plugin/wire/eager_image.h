/* SPDX-License-Identifier: Apache-2.0 */
/* Flagged eager images (wire version 4), pure: no I/O, no verbs.
 *
 * A small eager message from host memory is written with a plain RDMA WRITE (no immediate, so
 * the receiver spends no receive WR and gets no completion) into an image slot of the receiver,
 * which finds it by polling that memory. The image is a run of 8-byte words, each carrying
 * 4 bytes and a 4-byte flag derived from the message number:
 *   word 0 {size}, word 1 {tag}, word 2 {tag index}, words 3.. {4 payload bytes}, the last
 *   payload word padded with zeros; value in the low half, flag in the high half.
 * A word whose flag matches was written whole by this message: the only assumption is that an
 * aligned 8-byte word lands whole (as NCCL's LL protocol assumes of the same NICs), not that the
 * bytes of a write land in order. Image slots hold nothing but images or zeros (a flag is never
 * 0), and the receiver zeroes every word an image may have used in a slot each time it
 * delivers a message from that slot, before the slot can go back to the sender. So a stale word
 * is at most one message of the slot old (a copy re-sent after a rail failure that landed after
 * the zeroing, cleared again at the slot's next delivery), and its flag is that of an earlier
 * message of the slot: flags repeat only every 2^31 messages. */
#ifndef NCCL_RAIL_EAGER_IMAGE_H
#define NCCL_RAIL_EAGER_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RAIL_IMAGE_MAX_PAYLOAD 512 /* NCCL_RAIL_EAGER_POLL_MAX's upper bound */
#define RAIL_IMAGE_HDR_WORDS   3
/* Bytes of one image slot: the largest image, rounded up to 64. */
#define RAIL_IMAGE_STRIDE                                                                          \
    ((((RAIL_IMAGE_HDR_WORDS + (RAIL_IMAGE_MAX_PAYLOAD + 3) / 4) * 8) + 63) / 64 * 64)

/* The flag of message number seq (never 0). */
static inline uint32_t rail_image_flag(uint64_t seq)
{
    return (uint32_t)seq | 0x80000000u;
}
/* Bytes of the image of a size-byte message (size <= RAIL_IMAGE_MAX_PAYLOAD). */
static inline size_t rail_image_bytes(uint32_t size)
{
    return ((size_t)RAIL_IMAGE_HDR_WORDS + (size + 3u) / 4u) * 8u;
}
/* Offset of the image slots in the receiver's bounce region: after `slots` bounce slots of
 * `slot_stride` bytes, at a 64-byte boundary. */
static inline uint64_t rail_image_region_off(int slots, uint64_t slot_stride)
{
    return ((uint64_t)slots * slot_stride + 63u) & ~(uint64_t)63u;
}

/* Writes the image of message seq into dst (rail_image_bytes(size) bytes, 8-byte aligned). */
void rail_image_encode_any(void *dst, uint64_t seq, int32_t tag, uint32_t tag_index,
                           const void *payload, uint32_t size);
/* The same; an 8-byte message's five words inline (test_eager_image compares the two). */
static inline void rail_image_encode(void *dst, uint64_t seq, int32_t tag, uint32_t tag_index,
                                     const void *payload, uint32_t size)
{
    if (size != 8) {
        rail_image_encode_any(dst, seq, tag, tag_index, payload, size);
        return;
    }
    uint64_t *w = dst, f = (uint64_t)rail_image_flag(seq) << 32;
    uint32_t lo, hi;
    memcpy(&lo, payload, 4);
    memcpy(&hi, (const uint8_t *)payload + 4, 4);
    w[0] = f | 8u;
    w[1] = f | (uint32_t)tag;
    w[2] = f | tag_index;
    w[3] = f | lo;
    w[4] = f | hi;
}

struct rail_image_info {
    int32_t tag;
    uint32_t tag_index;
    uint32_t size;
};

/* Looks at image slot `img` (8-byte aligned, RAIL_IMAGE_STRIDE bytes) for message seq.
 * 1: every word of it is there (*out filled); 0: not (all) there yet; -EPROTO: its words say
 * size > max_size, which no sender writes (reason in err). Reads each word once, atomically. */
int rail_image_peek(const void *img, uint64_t seq, uint32_t max_size, struct rail_image_info *out,
                    char *err, size_t errlen);
/* Copies the payload of a complete image (peeked) into dst (size bytes). */
void rail_image_copy(const void *img, uint32_t size, void *dst);

#endif
