/* SPDX-License-Identifier: Apache-2.0 */
/* Deterministic pseudo-random input for the fuzz loops: the same sequence on every run and
 * platform (a 32-bit linear congruential generator; its high bits are the random ones). */
#ifndef NCCL_RAIL_TEST_FUZZ_H
#define NCCL_RAIL_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Advance *seed and return the new state. */
static inline uint32_t fuzz_step(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed;
}

/* buf[0..size): a random number (0 .. size - 2) of characters drawn from alphabet, then a NUL. */
static inline void fuzz_string(uint32_t *seed, const char *alphabet, char *buf, size_t size)
{
    size_t n_alpha = strlen(alphabet), len = (fuzz_step(seed) >> 16) % (size - 1);
    for (size_t i = 0; i < len; i++)
        buf[i] = alphabet[(fuzz_step(seed) >> 16) % n_alpha];
    buf[len] = '\0';
}

/* Runs run(seed) for n seeds spread over the 32-bit range (k * mult, k = 1..n): the simulated
 * streams of the protocol core tests. */
static inline void fuzz_seeds(void (*run)(uint32_t seed), int n, uint32_t mult)
{
    for (uint32_t k = 1; k <= (uint32_t)n; k++)
        run(k * mult);
}

#endif
