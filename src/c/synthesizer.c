/* synthesizer.c — the Synthesizer logit sources (Tay et al. 2020): dense, dense1, random,
 * factorized-dense, factorized-random and their mixture. Each fills logit tiles for the streaming
 * softmax of softmax.c; only what a source reads per row (hidden layer, factors) is precomputed,
 * O(n * width), never n x n. Parameters sized by L >= n are read in their first n rows/columns.
 */
#include "internal.h"

static int dim_L(const attn_dims *dims) { return dims->L > 0 ? dims->L : dims->n; }

/* B = H * w2 + b2, H = relu(x * w1 + b1) precomputed in p0 ([n, h]). */
static void dense_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *S, int lds) {
    int h = src->dims->h, L = dim_L(src->dims);
    for (int r = 0; r < bi; r++) attn_copy(S + (size_t)r * lds, src->in->b2 + j0, bj);
    attn_gemm(bi, bj, h, src->p0 + (size_t)i0 * h, h, src->in->w2 + j0, L, S, lds, 1);
}

/* B = x * w. */
static void dense1_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *S, int lds) {
    int d = src->dims->d, L = dim_L(src->dims);
    attn_gemm(bi, bj, d, src->in->x + (size_t)i0 * d, d, src->in->w + j0, L, S, lds, 0);
}

/* B = r[:n, :n]. */
static void random_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *S, int lds) {
    int L = dim_L(src->dims);
    for (int r = 0; r < bi; r++)
        attn_copy(S + (size_t)r * lds, src->in->r + (size_t)(i0 + r) * L + j0, bj);
}

/* B[i, j] = FA[i, j / b] * FB[i, j % b] (kronecker) or FA[i, j % a] * FB[i, j % b] (tile). */
static void factorized_dense_tile(const logit_source *src, int i0, int bi, int j0, int bj,
                                  float *S, int lds) {
    int a = src->dims->a, b = src->dims->b;
    for (int r = 0; r < bi; r++) {
        const float *fa = src->p0 + (size_t)(i0 + r) * a, *fb = src->p1 + (size_t)(i0 + r) * b;
        float *row = S + (size_t)r * lds;
        int ja = src->tiling == ATTN_TILING_TILE ? j0 % a : j0 / b, jb = j0 % b;
        for (int j = 0; j < bj; j++) {
            row[j] = fa[ja] * fb[jb];
            if (++jb == b) {
                jb = 0;
                if (src->tiling != ATTN_TILING_TILE) ja++;
            }
            if (src->tiling == ATTN_TILING_TILE && ++ja == a) ja = 0;
        }
    }
}

/* B = r1[:n] * r2[:n]^T, r2 packed transposed per key block in p0 like the keys of softmax.c. */
static void factorized_random_tile(const logit_source *src, int i0, int bi, int j0, int bj,
                                   float *S, int lds) {
    int rank = src->dims->rank;
    attn_gemm(bi, bj, rank, src->in->r1 + (size_t)i0 * rank, rank, src->p0 + (size_t)j0 * rank, bj,
              S, lds, 0);
}

/* out[n, cols] = x[n, d] * w[d, cols] + bias, optionally through relu. */
static void affine(int n, int d, int cols, const float *x, const float *w, const float *bias,
                   int relu, float *out) {
    for (int i = 0; i < n; i++) attn_copy(out + (size_t)i * cols, bias, cols);
    attn_gemm(n, cols, d, x, d, w, cols, out, cols, 1);
    if (relu)
        for (size_t i = 0; i < (size_t)n * cols; i++) out[i] = out[i] > 0.0f ? out[i] : 0.0f;
}

void attn_prepare_synthesizer(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                              const attn_options *opt, arena *ws, logit_source *src) {
    int n = dims->n, d = dims->d;
    int measuring = arena_measuring(ws);
    switch (v) {
    case ATTN_DENSE: {
        float *hidden = arena_floats(ws, (uint64_t)n * dims->h);
        src->tile = dense_tile;
        src->p0 = hidden;
        if (!measuring) affine(n, d, dims->h, in->x, in->w1, in->b1, 1, hidden);
        break;
    }
    case ATTN_DENSE1: src->tile = dense1_tile; break;
    case ATTN_RANDOM: src->tile = random_tile; break;
    case ATTN_FACTORIZED_DENSE: {
        float *fa = arena_floats(ws, (uint64_t)n * dims->a);
        float *fb = arena_floats(ws, (uint64_t)n * dims->b);
        src->tile = factorized_dense_tile;
        src->p0 = fa, src->p1 = fb;
        src->tiling = opt->tiling;
        if (!measuring) {
            affine(n, d, dims->a, in->x, in->wa, in->ba, 0, fa);
            affine(n, d, dims->b, in->x, in->wb, in->bb, 0, fb);
        }
        break;
    }
    case ATTN_FACTORIZED_RANDOM: {
        int rank = dims->rank;
        float *r2t = arena_floats(ws, (uint64_t)n * rank);
        src->tile = factorized_random_tile;
        src->p0 = r2t;
        if (!measuring)
            for (int j0 = 0; j0 < n; j0 += BJ) {
                int bj = imin(BJ, n - j0);
                attn_transpose(bj, rank, in->r2 + (size_t)j0 * rank, rank, r2t + (size_t)j0 * rank,
                               bj, 1.0f);
            }
        break;
    }
    default: break; /* attn_check admits no other variant here */
    }
}

/* B = sum_c alpha_c * B_c: the first part writes the tile, the others go through scratch. */
static void mixture_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *S,
                         int lds) {
    for (int c = 0; c < src->count; c++) {
        const logit_source *part = &src->parts[c];
        float a = src->alpha[c];
        if (c == 0) {
            part->tile(part, i0, bi, j0, bj, S, lds);
            for (int r = 0; r < bi; r++) attn_scale(S + (size_t)r * lds, bj, a);
        } else {
            part->tile(part, i0, bi, j0, bj, src->scratch, BJ);
            for (int r = 0; r < bi; r++)
                attn_axpy(S + (size_t)r * lds, src->scratch + (size_t)r * BJ, bj, a);
        }
    }
}

void attn_prepare_mixture(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                          const float *alpha, arena *ws, logit_source *parts, logit_source *src) {
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    src->tile = mixture_tile;
    src->count = opt->n_components;
    src->parts = parts;
    src->alpha = alpha;
    src->scratch = arena_floats(ws, (uint64_t)BI * BJ);
    for (int c = 0; c < opt->n_components; c++)
        attn_prepare_logits((attn_variant)opt->component[c], dims, in, opt, ws, &parts[c]);
}
