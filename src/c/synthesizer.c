/* synthesizer.c — the Synthesizer logit sources (Tay et al. 2020): dense, dense1, random,
 * factorized-dense, factorized-random and their mixture. Each fills logit tiles for the streaming
 * softmax of softmax.c; only what a source reads per row (hidden layer, factors) is precomputed,
 * O(n * width), never n x n. Parameters sized by L >= n are read in their first n rows/columns.
 * dense, dense1 and factorized-random are dot products between a per-query and a per-key matrix,
 * so they share softmax's packed micro-kernel (attn_prepare_dot).
 */
#include "internal.h"

static int dim_L(const attn_dims *dims) { return dims->L > 0 ? dims->L : dims->n; }

/* B = r[:n, :n]. */
static void random_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int L = dim_L(src->dims), groups = round_up(bi, QP) / QP;
    for (int g = 0; g < groups; g++)
        for (int r = 0; r < QP; r++) {
            int query = i0 + g * QP + r;
            /* padding rows of the last group repeat row i0: finite, and never output */
            const float *row = src->in->r + (size_t)(query < i0 + bi ? query : i0) * L + j0;
            for (int j = 0; j < bj; j++) T[((size_t)g * BJ + j) * QP + r] = row[j];
        }
}

/* B[i, j] = FA[i, j / b] * FB[i, j % b] (kronecker) or FA[i, j % a] * FB[i, j % b] (tile), with FA
 * and FB in query panels, so 8 queries are two vector products. */
static void factorized_dense_tile(const logit_source *src, int i0, int bi, int j0, int bj,
                                  float *T) {
    int a = src->dims->a, b = src->dims->b, groups = round_up(bi, QP) / QP;
    int tile_mode = src->tiling == ATTN_TILING_TILE;
    for (int g = 0; g < groups; g++) {
        const float *fa = src->fa + (size_t)(i0 + g * QP) * a, *fb = src->fb + (size_t)(i0 + g * QP) * b;
        float *tg = T + (size_t)g * BJ * QP;
        int ja = tile_mode ? j0 % a : j0 / b, jb = j0 % b;
        for (int j = 0; j < bj; j++) {
            const float *x = fa + (size_t)ja * QP, *y = fb + (size_t)jb * QP;
            vf_store(tg + j * QP, vf_mul(vf_load(x), vf_load(y)));
            vf_store(tg + j * QP + VW, vf_mul(vf_load(x + VW), vf_load(y + VW)));
            if (++jb == b) {
                jb = 0;
                if (!tile_mode) ja++;
            }
            if (tile_mode && ++ja == a) ja = 0;
        }
    }
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
    int n = dims->n, d = dims->d, L = dim_L(dims);
    int measuring = arena_measuring(ws);
    switch (v) {
    case ATTN_DENSE: { /* B = H w2 + b2: H against the columns of w2 */
        int h = dims->h;
        float *hidden = arena_floats(ws, (uint64_t)n * h);
        if (!measuring) affine(n, d, h, in->x, in->w1, in->b1, 1, hidden);
        attn_prepare_dot(src, n, h, hidden, (size_t)h, 1, in->w2, 1, (size_t)L, 1.0f, in->b2, ws);
        break;
    }
    case ATTN_DENSE1: /* B = x w: x against the columns of w */
        attn_prepare_dot(src, n, d, in->x, (size_t)d, 1, in->w, 1, (size_t)L, 1.0f, 0, ws);
        break;
    case ATTN_FACTORIZED_RANDOM: /* B = r1 r2^T */
        attn_prepare_dot(src, n, dims->rank, in->r1, (size_t)dims->rank, 1, in->r2,
                         (size_t)dims->rank, 1, 1.0f, 0, ws);
        break;
    case ATTN_RANDOM: src->tile = random_tile; break;
    case ATTN_FACTORIZED_DENSE: {
        int a = dims->a, b = dims->b;
        float *fa = arena_floats(ws, (uint64_t)n * a), *fb = arena_floats(ws, (uint64_t)n * b);
        float *fa_panels = arena_floats(ws, (uint64_t)round_up(n, QP) * a);
        float *fb_panels = arena_floats(ws, (uint64_t)round_up(n, QP) * b);
        src->tile = factorized_dense_tile;
        src->fa = fa_panels, src->fb = fb_panels;
        src->tiling = opt->tiling;
        if (!measuring) {
            affine(n, d, a, in->x, in->wa, in->ba, 0, fa);
            affine(n, d, b, in->x, in->wb, in->bb, 0, fb);
            attn_pack_panels(n, a, fa, (size_t)a, 1, 1.0f, QP, fa_panels);
            attn_pack_panels(n, b, fb, (size_t)b, 1, 1.0f, QP, fb_panels);
        }
        break;
    }
    default: break; /* attn_check admits no other variant here */
    }
}

/* B = sum_c alpha_c * B_c: the first part writes the tile, the others go through scratch. */
static void mixture_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int groups = round_up(bi, QP) / QP, span = round_up(bj, KP) * QP;
    for (int c = 0; c < src->count; c++) {
        const logit_source *part = &src->parts[c];
        float a = src->alpha[c];
        part->tile(part, i0, bi, j0, bj, c == 0 ? T : src->scratch);
        for (int g = 0; g < groups; g++) {
            float *tg = T + (size_t)g * BJ * QP;
            if (c == 0)
                attn_scale(tg, span, a);
            else
                attn_axpy(tg, src->scratch + (size_t)g * BJ * QP, span, a);
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
