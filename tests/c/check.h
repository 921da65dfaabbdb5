/* check.h — what the native C tests share: a CHECK that counts, and reports the first failures
 * with their place and a message naming the case, and a small deterministic generator. */
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H
#include <stdio.h>

static int failures = 0, checks = 0;
static unsigned rng_state = 12345u;

/* Uniform in [-1, 1), from a linear congruential generator: the same numbers on every machine. */
static inline float rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

#define CHECK(cond, ...)                                             \
    do {                                                             \
        checks++;                                                    \
        if (!(cond)) {                                               \
            failures++;                                              \
            if (failures < 30) {                                     \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                        \
                fprintf(stderr, "\n");                               \
            }                                                        \
        }                                                            \
    } while (0)

#endif
