/* ops.c — the kernels every variant family shares: a register-blocked matrix product, the
 * softmax row pieces (max, shifted exp with sum) and small vector helpers.
 *
 * Summation order: every element of a matrix product accumulates over the contraction index k in
 * increasing order, in every build and every code path (vector body or scalar tail), so the
 * SIMD and scalar builds round the same way; only the FMA build (one rounding per step) differs.
 */
#include "internal.h"

/* 4 rows x 8 columns of C per step: 8 vector accumulators, 2 vector loads of B and 4 broadcasts of
 * A per k, which fits the 16 registers of x86-64 SSE that WebAssembly engines map v128 onto. */
static void gemm_rows4(int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
                       int ldc, int accumulate) {
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * (size_t)lda, *a3 = A + 3 * (size_t)lda;
    float *c0 = C, *c1 = C + ldc, *c2 = C + 2 * (size_t)ldc, *c3 = C + 3 * (size_t)ldc;
    int j = 0;
    for (; j + 2 * VW <= N; j += 2 * VW) {
        vf s00, s01, s10, s11, s20, s21, s30, s31;
        if (accumulate) {
            s00 = vf_load(c0 + j), s01 = vf_load(c0 + j + VW);
            s10 = vf_load(c1 + j), s11 = vf_load(c1 + j + VW);
            s20 = vf_load(c2 + j), s21 = vf_load(c2 + j + VW);
            s30 = vf_load(c3 + j), s31 = vf_load(c3 + j + VW);
        } else {
            s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = vf_zero();
        }
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) {
            vf b0 = vf_load(b), b1 = vf_load(b + VW);
            vf x0 = vf_load_splat(a0 + k), x1 = vf_load_splat(a1 + k);
            s00 = vf_madd(x0, b0, s00), s01 = vf_madd(x0, b1, s01);
            s10 = vf_madd(x1, b0, s10), s11 = vf_madd(x1, b1, s11);
            vf x2 = vf_load_splat(a2 + k), x3 = vf_load_splat(a3 + k);
            s20 = vf_madd(x2, b0, s20), s21 = vf_madd(x2, b1, s21);
            s30 = vf_madd(x3, b0, s30), s31 = vf_madd(x3, b1, s31);
        }
        vf_store(c0 + j, s00), vf_store(c0 + j + VW, s01);
        vf_store(c1 + j, s10), vf_store(c1 + j + VW, s11);
        vf_store(c2 + j, s20), vf_store(c2 + j + VW, s21);
        vf_store(c3 + j, s30), vf_store(c3 + j + VW, s31);
    }
    for (; j + VW <= N; j += VW) {
        vf s0, s1, s2, s3;
        if (accumulate) {
            s0 = vf_load(c0 + j), s1 = vf_load(c1 + j), s2 = vf_load(c2 + j), s3 = vf_load(c3 + j);
        } else {
            s0 = s1 = s2 = s3 = vf_zero();
        }
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) {
            vf b0 = vf_load(b);
            s0 = vf_madd(vf_splat(a0[k]), b0, s0);
            s1 = vf_madd(vf_splat(a1[k]), b0, s1);
            s2 = vf_madd(vf_splat(a2[k]), b0, s2);
            s3 = vf_madd(vf_splat(a3[k]), b0, s3);
        }
        vf_store(c0 + j, s0), vf_store(c1 + j, s1), vf_store(c2 + j, s2), vf_store(c3 + j, s3);
    }
    for (; j < N; j++) {
        float s0 = accumulate ? c0[j] : 0.0f, s1 = accumulate ? c1[j] : 0.0f;
        float s2 = accumulate ? c2[j] : 0.0f, s3 = accumulate ? c3[j] : 0.0f;
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) {
            s0 += a0[k] * *b, s1 += a1[k] * *b, s2 += a2[k] * *b, s3 += a3[k] * *b;
        }
        c0[j] = s0, c1[j] = s1, c2[j] = s2, c3[j] = s3;
    }
}

static void gemm_row1(int N, int K, const float *a, const float *B, int ldb, float *c,
                      int accumulate) {
    int j = 0;
    for (; j + 2 * VW <= N; j += 2 * VW) {
        vf s0 = accumulate ? vf_load(c + j) : vf_zero();
        vf s1 = accumulate ? vf_load(c + j + VW) : vf_zero();
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) {
            vf x = vf_splat(a[k]);
            s0 = vf_madd(x, vf_load(b), s0);
            s1 = vf_madd(x, vf_load(b + VW), s1);
        }
        vf_store(c + j, s0), vf_store(c + j + VW, s1);
    }
    for (; j + VW <= N; j += VW) {
        vf s0 = accumulate ? vf_load(c + j) : vf_zero();
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) s0 = vf_madd(vf_splat(a[k]), vf_load(b), s0);
        vf_store(c + j, s0);
    }
    for (; j < N; j++) {
        float s = accumulate ? c[j] : 0.0f;
        const float *b = B + j;
        for (int k = 0; k < K; k++, b += ldb) s += a[k] * *b;
        c[j] = s;
    }
}

void attn_gemm(int m, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
               int ldc, int accumulate) {
    int i = 0;
    for (; i + 4 <= m; i += 4)
        gemm_rows4(N, K, A + (size_t)i * lda, lda, B, ldb, C + (size_t)i * ldc, ldc, accumulate);
    for (; i < m; i++) gemm_row1(N, K, A + (size_t)i * lda, B, ldb, C + (size_t)i * ldc, accumulate);
}

void attn_transpose(int rows, int cols, const float *src, int lds, float *dst, int ldd,
                    float mul) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) dst[(size_t)c * ldd + r] = src[(size_t)r * lds + c] * mul;
}

float attn_max(const float *x, int len) {
    int i = 0;
    float m = x[0];
    if (len >= 2 * VW) {
        vf m0 = vf_load(x), m1 = vf_load(x + VW);
        for (i = 2 * VW; i + 2 * VW <= len; i += 2 * VW) {
            m0 = vf_max(m0, vf_load(x + i));
            m1 = vf_max(m1, vf_load(x + i + VW));
        }
        m = vf_hmax(vf_max(m0, m1));
    }
    for (; i < len; i++) m = x[i] > m ? x[i] : m;
    return m;
}

float attn_exp_shift_sum(float *x, int len, float shift) {
    vf sh = vf_splat(shift), s0 = vf_zero(), s1 = vf_zero();
    int i = 0;
    for (; i + 2 * VW <= len; i += 2 * VW) {
        vf e0 = vf_exp(vf_sub(vf_load(x + i), sh));
        vf e1 = vf_exp(vf_sub(vf_load(x + i + VW), sh));
        vf_store(x + i, e0), vf_store(x + i + VW, e1);
        s0 = vf_add(s0, e0), s1 = vf_add(s1, e1);
    }
    float sum = vf_hsum(vf_add(s0, s1));
    for (; i < len; i++) {
        x[i] = attn_expf(x[i] - shift);
        sum += x[i];
    }
    return sum;
}

void attn_scale(float *x, int len, float s) {
    vf sv = vf_splat(s);
    int i = 0;
    for (; i + VW <= len; i += VW) vf_store(x + i, vf_mul(vf_load(x + i), sv));
    for (; i < len; i++) x[i] *= s;
}

void attn_axpy(float *y, const float *x, int len, float s) {
    vf sv = vf_splat(s);
    int i = 0;
    for (; i + VW <= len; i += VW) vf_store(y + i, vf_madd(sv, vf_load(x + i), vf_load(y + i)));
    for (; i < len; i++) y[i] += s * x[i];
}

void attn_fill(float *x, size_t len, float value) {
    for (size_t i = 0; i < len; i++) x[i] = value;
}

void attn_copy(float *dst, const float *src, int len) {
    for (int i = 0; i < len; i++) dst[i] = src[i];
}

float attn_logf(float x) {
    /* x = 2^e * mant with mant in [sqrt(1/2), sqrt(2)); log(mant) = 2 atanh(s), s = (mant-1)/(mant+1),
     * |s| < 0.172, by its odd series. Freestanding builds have no libm. */
    union { float f; uint32_t u; } bits = {x};
    int e = (int)((bits.u >> 23) & 0xFF) - 127;
    bits.u = (bits.u & 0x007FFFFFu) | 0x3F800000u; /* mant in [1, 2) */
    float mant = bits.f;
    if (mant > 1.41421356f) mant *= 0.5f, e++;
    float s = (mant - 1.0f) / (mant + 1.0f), s2 = s * s;
    float series = s * (2.0f + s2 * (0.666666667f + s2 * (0.4f + s2 * (0.285714286f + s2 * 0.222222222f))));
    return (float)e * 0.693147181f + series;
}

void attn_softmax_row(float *x, int len) {
    float m = attn_max(x, len);
    float sum = attn_exp_shift_sum(x, len, m);
    attn_scale(x, len, 1.0f / sum);
}

void attn_pack_panels(int rows, int width, const float *src, size_t row_stride, size_t col_stride,
                      float mul, int panel, float *dst) {
    int padded = round_up(rows, panel);
    for (int g = 0; g < padded; g += panel) {
        float *out = dst + (size_t)g * width;
        for (int c = 0; c < width; c++)
            for (int r = 0; r < panel; r++) {
                int row = g + r;
                out[(size_t)c * panel + r] =
                    row < rows ? src[(size_t)row * row_stride + (size_t)c * col_stride] * mul : 0.0f;
            }
    }
}

#if defined(__clang__)
#define ATTN_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define ATTN_NO_UNROLL
#endif

/* 8 accumulators, 2 vector loads and 4 broadcast loads per k. One k per iteration, not unrolled:
 * unrolled, clang loads the B vectors of two steps at once, which needs more than the 15 vector
 * registers V8 hands out on x86-64, and the store-load round trip of the spilled accumulator
 * then bounds the loop. */
void attn_micro_4x8(int K, const float *a, int sa, const float *b, int sb, float *acc,
                    int acc_stride, int accumulate) {
    float *c0 = acc, *c1 = acc + acc_stride, *c2 = acc + 2 * acc_stride, *c3 = acc + 3 * acc_stride;
    vf s00, s01, s10, s11, s20, s21, s30, s31;
    if (accumulate) {
        s00 = vf_load(c0), s01 = vf_load(c0 + VW), s10 = vf_load(c1), s11 = vf_load(c1 + VW);
        s20 = vf_load(c2), s21 = vf_load(c2 + VW), s30 = vf_load(c3), s31 = vf_load(c3 + VW);
    } else {
        s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = vf_zero();
    }
    ATTN_NO_UNROLL
    for (int k = 0; k < K; k++, a += sa, b += sb) {
        vf b0 = vf_load(b), b1 = vf_load(b + VW), x;
        x = vf_load_splat(a + 0), s00 = vf_madd(x, b0, s00), s01 = vf_madd(x, b1, s01);
        x = vf_load_splat(a + 1), s10 = vf_madd(x, b0, s10), s11 = vf_madd(x, b1, s11);
        x = vf_load_splat(a + 2), s20 = vf_madd(x, b0, s20), s21 = vf_madd(x, b1, s21);
        x = vf_load_splat(a + 3), s30 = vf_madd(x, b0, s30), s31 = vf_madd(x, b1, s31);
    }
    vf_store(c0, s00), vf_store(c0 + VW, s01), vf_store(c1, s10), vf_store(c1 + VW, s11);
    vf_store(c2, s20), vf_store(c2 + VW, s21), vf_store(c3, s30), vf_store(c3 + VW, s31);
}

void attn_gemm_tn(int m, int N, int K, const float *At, int lda, const float *B, int ldb, float *C,
                  int ldc, int accumulate) {
    int i = 0;
    for (; i + KP <= m; i += KP) {
        float *c = C + (size_t)i * ldc;
        int j = 0;
        for (; j + 2 * VW <= N; j += 2 * VW)
            attn_micro_4x8(K, At + i, lda, B + j, ldb, c + j, ldc, accumulate);
        for (; j < N; j++)
            for (int r = 0; r < KP; r++) {
                float s = accumulate ? c[(size_t)r * ldc + j] : 0.0f;
                for (int k = 0; k < K; k++) s += At[(size_t)k * lda + i + r] * B[(size_t)k * ldb + j];
                c[(size_t)r * ldc + j] = s;
            }
    }
    for (; i < m; i++)
        for (int j = 0; j < N; j++) {
            float s = accumulate ? C[(size_t)i * ldc + j] : 0.0f;
            for (int k = 0; k < K; k++) s += At[(size_t)k * lda + i] * B[(size_t)k * ldb + j];
            C[(size_t)i * ldc + j] = s;
        }
}
