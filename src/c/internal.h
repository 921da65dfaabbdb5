/* internal.h — shared pieces of the variant families; not part of the public API. */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "attnlab.h"
#include "simd.h"

#define ATTN_INF __builtin_inff()

/* Block sizes of the streaming kernels: a query block of BI rows meets a key block of BJ columns.
 * A BI x BJ logit tile (16 KiB) and the packed key block stay in L1/L2 while the tile is used. */
#define BI 64
#define BJ 64
/* Rows per chunk in the linear-family kernels. */
#define BT 64

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/* Workspace carving. The same plan runs twice: once with base == NULL to measure (nothing is
 * computed then), once over the caller's workspace. Sizes are counted in 64 bits so that a
 * problem too large for the address space is reported instead of wrapping. */
typedef struct arena {
    unsigned char *base; /* NULL while measuring */
    uint64_t used;
} arena;
static inline float *arena_floats(arena *a, uint64_t count) {
    a->used = (a->used + 15u) & ~(uint64_t)15u;
    float *p = a->base ? (float *)(void *)(a->base + a->used) : 0;
    a->used += count * 4u;
    return p;
}
static inline int arena_measuring(const arena *a) { return a->base == 0; }

/* ---- ops.c: kernels shared by every family ---- */

/* C[m, N] = (accumulate ? C : 0) + A[m, K] * B[K, N]; leading dimensions in floats. */
void attn_gemm(int m, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
               int ldc, int accumulate);
/* dst[c*ldd + r] = src[r*lds + c] * mul for r < rows, c < cols. */
void attn_transpose(int rows, int cols, const float *src, int lds, float *dst, int ldd, float mul);
/* Largest of x[0..len), len >= 1. */
float attn_max(const float *x, int len);
/* x[i] = exp(x[i] - shift) for i < len; returns the sum of the new values. */
float attn_exp_shift_sum(float *x, int len, float shift);
/* x[i] *= s for i < len. */
void attn_scale(float *x, int len, float s);
/* y[i] += s * x[i] for i < len. */
void attn_axpy(float *y, const float *x, int len, float s);
void attn_fill(float *x, size_t len, float value);
void attn_copy(float *dst, const float *src, int len);
/* In-place softmax of a row of len values, max subtracted. */
void attn_softmax_row(float *x, int len);

/* ---- softmax.c / synthesizer.c: softmax over produced logits ---- */

/* A source of logits B[i, j]: writes the tile B[i0:i0+bi, j0:j0+bj] into S (row stride lds).
 * j0 is always a multiple of BJ and bj = min(BJ, n - j0); bi <= BI. */
typedef struct logit_source logit_source;
struct logit_source {
    void (*tile)(const logit_source *src, int i0, int bi, int j0, int bj, float *S, int lds);
    const attn_dims *dims;
    const attn_inputs *in;
    const float *p0, *p1; /* prepared operands (packed keys, hidden layer, factors, ...) */
    int tiling;
    /* mixture */
    int count;
    const logit_source *parts;
    const float *alpha;
    float *scratch; /* BI x BJ */
};

/* Prepares the logit source of a softmax-type variant (not mixture), taking what it needs from
 * the arena; when measuring, only counts. `weight` multiplies the logits (a mixture's alpha). */
void attn_prepare_logits(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                         const attn_options *opt, arena *ws, logit_source *src);
/* The mixture's source over its prepared parts. */
void attn_prepare_mixture(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                          const float *alpha, arena *ws, logit_source *parts, logit_source *src);
/* y = softmax_row(B + M) * v, streaming (weights == NULL) or through the n x n weights. */
void attn_softmax_attend(const logit_source *src, const attn_dims *dims, const float *v,
                         int causal, float *out, float *weights, arena *ws);

/* ---- linear.c ---- */
void attn_linear_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, float *out, float *weights, arena *ws);

/* ---- fixed.c ---- */
void attn_fixed(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, float *out,
                float *weights);

#endif /* ATTN_INTERNAL_H */
