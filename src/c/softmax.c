/* softmax.c — softmax attention over any source of logits, and the dot-product source.
 *
 * Without weights, attention streams (online softmax, as in FlashAttention): a block of BI query
 * rows visits the key blocks in increasing j; each BI x BJ logit tile is masked, exponentiated
 * against the running row maximum and multiplied into the output block, which is rescaled when
 * the maximum grows. Memory: one tile, never n x n. With weights, the n x n matrix is the
 * caller's buffer, so it is filled row block by row block and softmaxed exactly.
 */
#include "internal.h"

/* B = q * k^T * scale. Keys are packed transposed, block by block (d x bj, contiguous), with the
 * scale folded in, so each tile is one matrix product with unit-stride rows. */
static void dot_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *S, int lds) {
    int d = src->dims->d;
    attn_gemm(bi, bj, d, src->in->q + (size_t)i0 * d, d, src->p0 + (size_t)j0 * d, bj, S, lds, 0);
}

static void prepare_dot(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                        arena *ws, logit_source *src) {
    int n = dims->n, d = dims->d;
    float *kt = arena_floats(ws, (uint64_t)n * d);
    src->tile = dot_tile;
    src->p0 = kt;
    if (arena_measuring(ws)) return;
    float scale = opt->has_scale ? opt->scale : 1.0f / __builtin_sqrtf((float)d);
    for (int j0 = 0; j0 < n; j0 += BJ) {
        int bj = imin(BJ, n - j0);
        attn_transpose(bj, d, in->k + (size_t)j0 * d, d, kt + (size_t)j0 * d, bj, scale);
    }
}

void attn_prepare_synthesizer(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                              const attn_options *opt, arena *ws, logit_source *src);

void attn_prepare_logits(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                         const attn_options *opt, arena *ws, logit_source *src) {
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    if (v == ATTN_SOFTMAX)
        prepare_dot(dims, in, opt, ws, src);
    else
        attn_prepare_synthesizer(v, dims, in, opt, ws, src);
}

/* Masked, row-wise online softmax of one tile, accumulated into the output block. */
static void stream_block(const logit_source *src, int n, int dv, const float *v, int causal,
                         int i0, int bi, float *out, float *S, float *row_max, float *row_sum) {
    for (int r = 0; r < bi; r++) {
        row_max[r] = -ATTN_INF;
        row_sum[r] = 0.0f;
    }
    attn_fill(out, (size_t)bi * dv, 0.0f);
    int j_end = causal ? i0 + bi : n;
    for (int j0 = 0; j0 < j_end; j0 += BJ) {
        int bj = imin(BJ, n - j0);
        src->tile(src, i0, bi, j0, bj, S, BJ);
        for (int r = 0; r < bi; r++) {
            float *row = S + (size_t)r * BJ;
            int valid = causal ? imin(bj, i0 + r - j0 + 1) : bj;
            if (valid <= 0) { /* the whole tile row lies above the diagonal */
                attn_fill(row, (size_t)bj, 0.0f);
                continue;
            }
            float m_new = attn_max(row, valid);
            if (m_new > row_max[r]) {
                if (row_sum[r] > 0.0f) {
                    float shrink = attn_expf(row_max[r] - m_new);
                    row_sum[r] *= shrink;
                    attn_scale(out + (size_t)r * dv, dv, shrink);
                }
                row_max[r] = m_new;
            }
            row_sum[r] += attn_exp_shift_sum(row, valid, row_max[r]);
            attn_fill(row + valid, (size_t)(bj - valid), 0.0f);
        }
        attn_gemm(bi, dv, bj, S, BJ, v + (size_t)j0 * dv, dv, out, dv, 1);
    }
    for (int r = 0; r < bi; r++) attn_scale(out + (size_t)r * dv, dv, 1.0f / row_sum[r]);
}

void attn_softmax_attend(const logit_source *src, const attn_dims *dims, const float *v,
                         int causal, float *out, float *weights, arena *ws) {
    int n = dims->n, dv = dims->dv;
    if (weights) {
        if (arena_measuring(ws)) return;
        for (int i0 = 0; i0 < n; i0 += BI) {
            int bi = imin(BI, n - i0);
            for (int j0 = 0; j0 < n; j0 += BJ) {
                int bj = imin(BJ, n - j0);
                float *W = weights + (size_t)i0 * n + j0;
                if (causal && j0 > i0 + bi - 1) {
                    for (int r = 0; r < bi; r++) attn_fill(W + (size_t)r * n, (size_t)bj, 0.0f);
                } else {
                    src->tile(src, i0, bi, j0, bj, W, n);
                }
            }
            for (int r = 0; r < bi; r++) {
                float *row = weights + (size_t)(i0 + r) * n;
                int valid = causal ? i0 + r + 1 : n;
                attn_softmax_row(row, valid);
                attn_fill(row + valid, (size_t)(n - valid), 0.0f);
            }
        }
        attn_gemm(n, dv, n, weights, n, v, dv, out, dv, 0);
        return;
    }
    float *S = arena_floats(ws, (uint64_t)BI * BJ);
    float *row_max = arena_floats(ws, BI);
    float *row_sum = arena_floats(ws, BI);
    if (arena_measuring(ws)) return;
    for (int i0 = 0; i0 < n; i0 += BI) {
        int bi = imin(BI, n - i0);
        stream_block(src, n, dv, v, causal, i0, bi, out + (size_t)i0 * dv, S, row_max, row_sum);
    }
}
