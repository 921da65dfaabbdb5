/* ops.c — the kernels every variant family shares: a register-blocked matrix product, the
 * softmax row pieces (max, shifted exp with sum) and small vector helpers.
 *
 * Summation order: every element of a matrix product accumulates over the contraction index k in
 * increasing order, in every build and every code path (vector body or scalar tail), so the
 * SIMD and scalar builds round the same way; only the FMA build (one rounding per step) differs.
 */
#include "internal.h"

/* dst[c, r] = src[r, c] * mul. Whole 4 x 4 blocks go through vectors (four row loads, a register
 * transpose, four column stores): element by element this was a scalar load, multiply and strided
 * store, as long as the matrix product it feeds in the linear family's chunks. Every element is
 * the same single product, so the bits do not depend on the path. */
void attn_transpose(int rows, int cols, const float *src, int lds, float *dst, int ldd,
                    float mul) {
    vf m = vf_splat(mul);
    int r = 0;
    for (; r + VW <= rows; r += VW) {
        const float *s = src + (size_t)r * lds;
        int c = 0;
        for (; c + VW <= cols; c += VW) {
            vf x0 = vf_mul(vf_load(s + c), m), x1 = vf_mul(vf_load(s + lds + c), m);
            vf x2 = vf_mul(vf_load(s + 2 * (size_t)lds + c), m), x3 = vf_mul(vf_load(s + 3 * (size_t)lds + c), m);
            vf_transpose4(&x0, &x1, &x2, &x3);
            float *d = dst + (size_t)c * ldd + r;
            vf_store(d, x0), vf_store(d + ldd, x1), vf_store(d + 2 * (size_t)ldd, x2), vf_store(d + 3 * (size_t)ldd, x3);
        }
        for (; c < cols; c++)
            for (int i = 0; i < VW; i++) dst[(size_t)c * ldd + r + i] = src[(size_t)(r + i) * lds + c] * mul;
    }
    for (; r < rows; r++)
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

/* Several attn_pack_panels calls as one job over threads: each pack in pieces of PACK_ROWS rows (a
 * multiple of every panel height), each piece writing only its own panels, so the bytes are the
 * ones a single thread writes. A call's packing of q and k ran on the calling thread alone: ~5 %
 * of a softmax call at n = 1024, which two threads could not halve. */
#define PACK_ROWS 128
typedef struct pack_job {
    const attn_pack *packs;
    int count;
} pack_job;

static int pack_pieces(const attn_pack *p) { return (round_up(p->rows, p->panel) + PACK_ROWS - 1) / PACK_ROWS; }

static void pack_piece(void *ctx, int piece, int thread) {
    (void)thread;
    const pack_job *job = ctx;
    for (int i = 0; i < job->count; i++) {
        const attn_pack *p = &job->packs[i];
        int pieces = pack_pieces(p);
        if (piece >= pieces) {
            piece -= pieces;
            continue;
        }
        /* r0 < rows: r0 is a multiple of the panel below round_up(rows, panel) */
        int r0 = piece * PACK_ROWS, rows = imin(PACK_ROWS, p->rows - r0);
        attn_pack_panels(rows, p->width, p->src + (size_t)r0 * p->row_stride, p->row_stride,
                         p->col_stride, p->mul, p->panel, p->dst + (size_t)r0 * p->width);
        return;
    }
}

void attn_pack_panels_all(const attn_pack *packs, int count) {
    int pieces = 0;
    for (int i = 0; i < count; i++) pieces += pack_pieces(&packs[i]);
    pack_job job = {packs, count};
    /* a hand-over to the workers costs more than a few pieces of copying (n below ~256) */
    if (pieces < 4) {
        for (int p = 0; p < pieces; p++) pack_piece(&job, p, 0);
        return;
    }
    attn_parallel(pieces, pack_piece, &job);
}

#if defined(__clang__)
#define ATTN_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define ATTN_NO_UNROLL
#endif

/* 8 accumulators, 2 vector loads and 4 broadcast loads per k. One k per iteration, not unrolled:
 * unrolled, clang loads the B vectors of two steps at once, which needs more than the 15 vector
 * registers V8 hands out on x86-64, and the store-load round trip of the spilled accumulator
 * then bounds the loop. Row r of A is read at a[r*sr + k*sa]: written once, instantiated for
 * packed panels (sr = 1, a constant) and for rows of a row-major matrix (sr = its stride). */
static inline __attribute__((always_inline)) void micro_4x8(int K, const float *a, int sa, size_t sr,
                                                            const float *b, int sb, float *acc,
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
        x = vf_load_splat(a), s00 = vf_madd(x, b0, s00), s01 = vf_madd(x, b1, s01);
        x = vf_load_splat(a + sr), s10 = vf_madd(x, b0, s10), s11 = vf_madd(x, b1, s11);
        x = vf_load_splat(a + 2 * sr), s20 = vf_madd(x, b0, s20), s21 = vf_madd(x, b1, s21);
        x = vf_load_splat(a + 3 * sr), s30 = vf_madd(x, b0, s30), s31 = vf_madd(x, b1, s31);
    }
    vf_store(c0, s00), vf_store(c0 + VW, s01), vf_store(c1, s10), vf_store(c1 + VW, s11);
    vf_store(c2, s20), vf_store(c2 + VW, s21), vf_store(c3, s30), vf_store(c3 + VW, s31);
}

/* Emscripten's clang 14 inlines attn_micro_4x8 into gemm_strided, a function of some 3,700 wasm
 * lines, where V8 allocates the loop's registers worse: the linear family's products ran 2-3 %
 * slower than through a call (one call per 4 x 8 block of C and at least 64 steps of k; the other
 * kernels call it from other files, as a function already). clang-19 inlines it into gemm_block
 * instead, and there a call costs 4-6 %: so noinline for Emscripten only. */
#if defined(__EMSCRIPTEN__)
#define ATTN_MICRO_NOINLINE __attribute__((noinline))
#else
#define ATTN_MICRO_NOINLINE
#endif

ATTN_MICRO_NOINLINE void attn_micro_4x8(int K, const float *a, int sa, const float *b, int sb, float *acc,
                                        int acc_stride, int accumulate) {
    micro_4x8(K, a, sa, 1, b, sb, acc, acc_stride, accumulate);
}

void attn_micro_4x8_rows(int K, const float *a, size_t sr, const float *b, int sb, float *acc,
                         int acc_stride, int accumulate) {
    micro_4x8(K, a, 1, sr, b, sb, acc, acc_stride, accumulate);
}

/* Columns [j0, N) of C[rows, N] (+)= A B in scalar code, A(r, k) = A[r*sr + k*sa], accumulating
 * over k in increasing order like the micro-kernel. */
static void gemm_tail(int rows, int j0, int N, int K, const float *A, size_t sa, size_t sr,
                      const float *B, int ldb, float *C, int ldc, int accumulate) {
    for (int j = j0; j < N; j++)
        for (int r = 0; r < rows; r++) {
            float s = accumulate ? C[(size_t)r * ldc + j] : 0.0f;
            for (int k = 0; k < K; k++) s += A[(size_t)r * sr + (size_t)k * sa] * B[(size_t)k * ldb + j];
            C[(size_t)r * ldc + j] = s;
        }
}

/* C[4, N] (+)= A[4, K] B for 4 rows of a row-major A (row stride lda) read in place. */
static void gemm_rows4(int N, int K, const float *A, size_t lda, const float *B, int ldb, float *C,
                       int ldc, int accumulate) {
    int j = 0;
    for (; j + 2 * VW <= N; j += 2 * VW) micro_4x8(K, A, 1, lda, B + j, ldb, C + j, ldc, accumulate);
    gemm_tail(KP, j, N, K, A, 1, lda, B, ldb, C, ldc, accumulate);
}

/* C[rows, N] (+)= Ap^T B for one block of rows <= KP rows, Ap a panel [K][sa] (row r of the block
 * at Ap[k*sa + r]). Columns in steps of 8 through the micro-kernel; a block of fewer than KP rows
 * goes through a 4 x 8 scratch (the panel's padding rows are zero, so reading them is safe); the
 * last N % 8 columns are scalar, accumulating in the same k order. */
static void gemm_block(int rows, int N, int K, const float *Ap, int sa, const float *B, int ldb,
                       float *C, int ldc, int accumulate) {
    int j = 0;
    for (; j + 2 * VW <= N; j += 2 * VW) {
        if (rows == KP) {
            attn_micro_4x8(K, Ap, sa, B + j, ldb, C + j, ldc, accumulate);
            continue;
        }
        float acc[KP * 2 * VW] = {0};
        for (int r = 0; r < rows && accumulate; r++) attn_copy(acc + r * 2 * VW, C + (size_t)r * ldc + j, 2 * VW);
        attn_micro_4x8(K, Ap, sa, B + j, ldb, acc, 2 * VW, accumulate);
        for (int r = 0; r < rows; r++) attn_copy(C + (size_t)r * ldc + j, acc + r * 2 * VW, 2 * VW);
    }
    gemm_tail(rows, j, N, K, Ap, (size_t)sa, 1, B, ldb, C, ldc, accumulate);
}

/* Columns of A packed per step: a [K_CHUNK][KP] panel lives on the stack (4 KiB). */
#define K_CHUNK 256

/* C[m, N] (+)= A B with A(r, k) = A[r*rs + k*cs]: full blocks of KP rows feed the micro-kernel
 * in place (a transposed operand as a panel, a row-major one through its row stride); a last
 * partial block is packed into a zero-padded panel, K_CHUNK columns at a time (continuing the same
 * k order, so the packing does not change a single rounding). */
static void gemm_strided(int m, int N, int K, const float *A, size_t rs, size_t cs, const float *B,
                         int ldb, float *C, int ldc, int accumulate) {
    float panel[K_CHUNK * KP];
    for (int i = 0; i < m; i += KP) {
        int rows = imin(KP, m - i);
        const float *Ai = A + (size_t)i * rs;
        float *Ci = C + (size_t)i * ldc;
        if (rows == KP && rs == 1 && cs <= 0x7fffffff) { /* a transposed operand: a panel in place */
            gemm_block(rows, N, K, Ai, (int)cs, B, ldb, Ci, ldc, accumulate);
            continue;
        }
        if (rows == KP && cs == 1) { /* four rows of a row-major operand, read in place */
            gemm_rows4(N, K, Ai, rs, B, ldb, Ci, ldc, accumulate);
            continue;
        }
        int k0 = 0;
        do {
            int kc = imin(K_CHUNK, K - k0);
            attn_pack_panels(rows, kc, Ai + (size_t)k0 * cs, rs, cs, 1.0f, KP, panel);
            gemm_block(rows, N, kc, panel, KP, B + (size_t)k0 * ldb, ldb, Ci, ldc, accumulate || k0 > 0);
            k0 += kc;
        } while (k0 < K);
    }
}

void attn_gemm(int m, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
               int ldc, int accumulate) {
    gemm_strided(m, N, K, A, (size_t)lda, 1, B, ldb, C, ldc, accumulate);
}

void attn_gemm_tn(int m, int N, int K, const float *At, int lda, const float *B, int ldb, float *C,
                  int ldc, int accumulate) {
    gemm_strided(m, N, K, At, 1, (size_t)lda, B, ldb, C, ldc, accumulate);
}

/* z[c] += sum_r x[r, c] (row stride ldx), rows in increasing order. Additions, not
 * attn_axpy(.., 1.0f): 1 * x is exact, so the bits are those of the multiply-adds (fused or not),
 * at one operation a vector instead of 2. */
/* Columns in blocks of 4 VW, their sums in registers down all the rows: row by row, each z vector
 * went through memory once a row (a store-to-load round trip per addition). */
void attn_add_column_sums(int rows, int cols, const float *x, size_t ldx, float *z) {
    int c = 0;
    for (; c + 4 * VW <= cols; c += 4 * VW) {
        vf s0 = vf_load(z + c), s1 = vf_load(z + c + VW), s2 = vf_load(z + c + 2 * VW), s3 = vf_load(z + c + 3 * VW);
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * ldx + c;
            s0 = vf_add(s0, vf_load(xr)), s1 = vf_add(s1, vf_load(xr + VW));
            s2 = vf_add(s2, vf_load(xr + 2 * VW)), s3 = vf_add(s3, vf_load(xr + 3 * VW));
        }
        vf_store(z + c, s0), vf_store(z + c + VW, s1), vf_store(z + c + 2 * VW, s2), vf_store(z + c + 3 * VW, s3);
    }
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * ldx;
        int cc = c;
        for (; cc + VW <= cols; cc += VW) vf_store(z + cc, vf_add(vf_load(z + cc), vf_load(xr + cc)));
        for (; cc < cols; cc++) z[cc] += xr[cc];
    }
}
