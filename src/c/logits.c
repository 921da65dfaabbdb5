/* logits.c — every source of logits B (n x n) that softmax.c's streaming driver consumes: the
 * scaled dot product (softmax), the Synthesizer sources (Tay et al. 2020: dense, dense1, random,
 * factorized-dense, factorized-random) and their mixture. A source fills one logit tile at a time;
 * only what it reads per row (packed panels, hidden layer, factors) is precomputed, O(n * width),
 * never n x n. Parameters sized by L >= n are read in their first n rows/columns.
 * softmax, dense, dense1 and factorized-random are dot products between a per-query and a per-key
 * matrix, so they share the packed micro-kernel (prepare_dot).
 *
 * Adding a softmax-type variant: a case in attn_prepare_logits (and a tile function when it is
 * not a dot product).
 */
#include "internal.h"

/* ---- dot sources: B[i, j] = qside_i . kside_j (+ bias_j) ---- */

static void dot_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int n = src->dims->n, width = src->width;
    int groups = round_up(bi, QP) / QP, bjp = round_up(bj, KP);
    for (int g = 0; g < groups; g++) {
        const float *qpanel = src->qside + (size_t)(i0 + g * QP) * width;
        float *tg = T + (size_t)g * BJ * QP;
        for (int jj = 0; jj < bjp; jj += KP) {
            float *acc = tg + (size_t)jj * QP;
            if (src->key_bias)
                for (int r = 0; r < KP; r++) {
                    int key = j0 + jj + r;
                    attn_fill(acc + r * QP, QP, key < n ? src->key_bias[key] : 0.0f);
                }
            attn_micro_4x8(width, src->kside + (size_t)(j0 + jj) * width, KP, qpanel, QP, acc, QP,
                           src->key_bias != 0);
        }
    }
}

static void prepare_dot(logit_source *src, int n, int width, const float *q, size_t q_row,
                      size_t q_col, const float *k, size_t k_row, size_t k_col, float kmul,
                      const float *bias, arena *ws) {
    float *qside = arena_floats(ws, round_up64(n, QP) * (uint64_t)width);
    float *kside = arena_floats(ws, round_up64(n, KP) * (uint64_t)width);
    src->tile = dot_tile;
    src->qside = qside, src->kside = kside, src->key_bias = bias, src->width = width;
    if (arena_measuring(ws)) return;
    attn_pack_panels(n, width, q, q_row, q_col, 1.0f, QP, qside);
    attn_pack_panels(n, width, k, k_row, k_col, kmul, KP, kside);
}


/* B = r[:n, :n]. */
static void random_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int L = src->dims->L, groups = round_up(bi, QP) / QP;
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

/* One softmax-type variant's source (not mixture), taking what it needs from the arena; when
 * measuring, only counts. */
static void prepare_one(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, arena *ws, logit_source *src) {
    int n = dims->n, d = dims->d, L = dims->L;
    int measuring = arena_measuring(ws);
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    switch (v) {
    case ATTN_SOFTMAX: { /* B = q k^T scale, the scale folded into the key panels */
        float scale = opt->has_scale ? opt->scale : 1.0f / __builtin_sqrtf((float)d);
        prepare_dot(src, n, d, in->q, (size_t)d, 1, in->k, (size_t)d, 1, scale, 0, ws);
        break;
    }
    case ATTN_DENSE: { /* B = H w2 + b2: H against the columns of w2 */
        int h = dims->h;
        float *hidden = arena_floats(ws, (uint64_t)n * h);
        if (!measuring) affine(n, d, h, in->x, in->w1, in->b1, 1, hidden);
        prepare_dot(src, n, h, hidden, (size_t)h, 1, in->w2, 1, (size_t)L, 1.0f, in->b2, ws);
        break;
    }
    case ATTN_DENSE1: /* B = x w: x against the columns of w */
        prepare_dot(src, n, d, in->x, (size_t)d, 1, in->w, 1, (size_t)L, 1.0f, 0, ws);
        break;
    case ATTN_FACTORIZED_RANDOM: /* B = r1 r2^T */
        prepare_dot(src, n, dims->rank, in->r1, (size_t)dims->rank, 1, in->r2,
                    (size_t)dims->rank, 1, 1.0f, 0, ws);
        break;
    case ATTN_RANDOM: src->tile = random_tile; break;
    case ATTN_FACTORIZED_DENSE: {
        int a = dims->a, b = dims->b;
        float *fa = arena_floats(ws, (uint64_t)n * a), *fb = arena_floats(ws, (uint64_t)n * b);
        float *fa_panels = arena_floats(ws, round_up64(n, QP) * (uint64_t)a);
        float *fb_panels = arena_floats(ws, round_up64(n, QP) * (uint64_t)b);
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
    default: break; /* the plan admits only softmax-type variants here */
    }
}

const logit_source *attn_prepare_logits(attn_variant v, const attn_dims *dims,
                                        const attn_inputs *in, const attn_options *opt, arena *ws,
                                        logit_sources *sources) {
    if (v != ATTN_MIXTURE) {
        prepare_one(v, dims, in, opt, ws, &sources->main);
        return &sources->main;
    }
    int count = opt->n_components;
    for (int c = 0; c < count; c++) sources->alpha[c] = opt->alpha[c];
    if (opt->alpha_is_logits) attn_softmax_row(sources->alpha, count);
    logit_source *src = &sources->main;
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    src->tile = mixture_tile;
    src->count = count;
    src->parts = sources->parts;
    src->alpha = sources->alpha;
    src->scratch = arena_floats(ws, (uint64_t)BI * BJ);
    for (int c = 0; c < count; c++)
        prepare_one((attn_variant)opt->component[c], dims, in, opt, ws, &sources->parts[c]);
    return src;
}
