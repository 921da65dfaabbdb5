/* freestanding.c — the only libc the relaxed-SIMD build needs. That build is compiled by clang-19
 * and linked by wasm-ld-19 without Emscripten (whose clang 14 cannot emit the final relaxed-SIMD
 * opcodes), so there is no libc; clang may still turn a copy or fill loop into a call to these. */
#include <stddef.h>

void *memset(void *dst, int value, size_t len) {
    unsigned char *d = dst;
    while (len--) *d++ = (unsigned char)value;
    return dst;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t len) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (len--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t len) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s)
        while (len--) *d++ = *s++;
    else
        while (len--) d[len] = s[len];
    return dst;
}
