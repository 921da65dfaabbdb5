/* logits.c — every source of logits B (n x n) that softmax.c's streaming driver consumes: the
 * scaled dot product (softmax), the Synthesizer sources (Tay et al. 2020: dense, dense1, random,
 * factorized-dense, factorized-random) and their mixture. A source fills one logit tile at a time;
 * only what it reads per row (packed panels, hidden layer, factors) is precomputed, O(n * width),
 * never n x n. Parameters sized by L >= n are read in their first n rows/columns.
 * softmax, dense, dense1 and factorized-random are dot products between a per-query and a per-key
 * matrix (dot_sides), so they share the packed micro-kernel (prepare_dot) and the row (dot_row).
 *
 * For the backward pass (backward.c) each source also pushes the gradient of its logits, dS, back
 * to the arrays it reads: a dot source accumulates dQ = dS K and dK = dS^T Q with the same
 * micro-kernel, the others their own way; `finish` then maps those onto the inputs' gradients.
 *
 * Decoding (a causal model fed one position at a time, model_decode.c) needs only row t of B over
 * keys 0..t: each source's `row` sits beside its tile and computes that row directly from position
 * t's query side, O(t * width) (attn_logit_row).
 *
 * Each variant has its section below, ending in its logit_kind: a dot product of two of its inputs
 * gives its sides and its finish, any other source its prepare, row and finish. Its name is the
 * variant's form in variants.def (softmax_kind for form softmax), which kinds[] at the end reads.
 */
#include "internal.h"

/* What logits.c knows of one softmax-type variant. */
typedef struct logit_kind {
    /* A dot product of two of its inputs gives only its sides and its finish: the tile, the
     * gradient and the row are the dot sources' own (prepare_dot, dot_row). query_at_t: decoding
     * reads row t of a query side that is a parameter (r1), not position t's own row (q, x). */
    dot_sides (*sides)(const attn_dims *dims, const attn_inputs *in, const attn_options *opt);
    void (*finish)(const logit_source *src, const attn_options *opt, const attn_grads *grads);
    int query_at_t;
    /* Any other source: its source over tiles (not a mixture's: attn_prepare_logits builds that
     * from its parts), taking what it needs from the arena (when measuring, only counting); row t
     * of its logits over keys 0..t (attn_logit_row) and the scratch floats that takes (NULL: none). */
    void (*prepare)(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int backward,
                    arena *ws, logit_source *src);
    void (*row)(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int t, float *scratch,
                float *row);
    uint64_t (*row_scratch)(const attn_dims *dims, const attn_options *opt);
} logit_kind;

/* ---- pieces several sources share ---- */

/* out[n, cols] = x[n, d] * w[d, cols] + bias, optionally through relu. */
static void affine(int n, int d, int cols, const float *x, const float *w, const float *bias,
                   int relu, float *out) {
    for (int i = 0; i < n; i++) attn_copy(out + (size_t)i * cols, bias, cols);
    attn_gemm(n, cols, d, x, d, w, cols, out, cols, 1);
    if (relu)
        for (size_t i = 0; i < (size_t)n * cols; i++) out[i] = out[i] > 0.0f ? out[i] : 0.0f;
}

/* gw += x^T dZ, gb += column sums of dZ, gx += dZ wt (wt = w^T [cols, d]); dZ [n, cols], row stride ldz. */
static void affine_backward(int n, int d, int cols, const float *x, const float *wt, const float *dZ,
                            int ldz, float *gx, float *gw, float *gb) {
    attn_gemm_tn(d, cols, n, x, d, dZ, ldz, gw, cols, 1);
    for (int i = 0; i < n; i++) attn_axpy(gb, dZ + (size_t)i * ldz, cols, 1.0f);
    attn_gemm(n, d, cols, dZ, ldz, wt, d, gx, d, 1);
}

/* The key side of a source whose gradient touches only query rows (random, factorized-dense). */
static void grad_nothing(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                         int bj, const float *dS, const float *dSt) {
    (void)src, (void)grads, (void)i0, (void)bi, (void)j0, (void)bj, (void)dS, (void)dSt;
}

static void finish_nothing(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)src, (void)opt, (void)g;
}

/* ---- dot sources: B[i, j] = qside_i . kside_j (+ bias_j) ---- */

static void dot_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int n = src->dims->n, width = src->dot.width;
    const float *bias = src->dot.bias;
    int groups = round_up(bi, QP) / QP, bjp = round_up(bj, KP);
    for (int g = 0; g < groups; g++) {
        const float *qpanel = src->qside + (size_t)(i0 + g * QP) * width;
        float *tg = T + (size_t)g * BJ * QP;
        for (int jj = 0; jj < bjp; jj += KP) {
            float *acc = tg + (size_t)jj * QP;
            if (bias)
                for (int r = 0; r < KP; r++) {
                    int key = j0 + jj + r;
                    attn_fill(acc + r * QP, QP, key < n ? bias[key] : 0.0f);
                }
            attn_micro_4x8(width, src->kside + (size_t)(j0 + jj) * width, KP, qpanel, QP, acc, QP,
                           bias != 0);
        }
    }
}

/* dQ[i] += sum_j dS[i, j] K[j] over the block: the micro-kernel over the tile (queries in 4-row
 * halves of each group). Touches only the block's query rows. */
static void dot_grad_q(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                       int bj, const float *dS, const float *dSt) {
    (void)grads, (void)dSt;
    int wp = src->width_pad, groups = round_up(bi, QP) / QP, bjp = round_up(bj, KP);
    for (int g = 0; g < groups; g++)
        for (int half = 0; half < QP; half += KP)
            for (int c0 = 0; c0 < wp; c0 += 2 * VW)
                attn_micro_4x8(bjp, dS + (size_t)g * BJ * QP + half, QP, src->krow + (size_t)j0 * wp + c0, wp,
                               src->dq + (size_t)(i0 + g * QP + half) * wp + c0, wp, 1);
}

/* dK[j] += sum_i dS[i, j] Q[i], dbias[j] += sum_i dS[i, j] over the block, through dSt (keys).
 * Touches only the block's key rows. */
static void dot_grad_k(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                       int bj, const float *dS, const float *dSt) {
    (void)grads, (void)dS;
    int wp = src->width_pad, groups = round_up(bi, QP) / QP, bjp = round_up(bj, KP), rows = groups * QP;
    for (int jj = 0; jj < bjp; jj += KP)
        for (int c0 = 0; c0 < wp; c0 += 2 * VW)
            attn_micro_4x8_rows(rows, dSt + (size_t)jj * BI, BI, src->qrow + (size_t)i0 * wp + c0, wp,
                                src->dk + (size_t)(j0 + jj) * wp + c0, wp, 1);
    if (src->dbias)
        for (int j = 0; j < bj; j++) {
            const float *col = dSt + (size_t)j * BI;
            float sum = 0.0f;
            for (int i = 0; i < rows; i++) sum += col[i];
            src->dbias[j0 + j] += sum;
        }
}

/* Both: what the backward pass of one thread calls per block. */
static void dot_grad(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                     int bj, const float *dS, const float *dSt) {
    dot_grad_q(src, grads, i0, bi, j0, bj, dS, dSt);
    dot_grad_k(src, grads, i0, bi, j0, bj, dS, dSt);
}

/* The packed panels of both sides (and, for the backward pass, their row-major copies and
 * gradient accumulators) of the first n rows. */
static void prepare_dot(logit_source *src, int n, const dot_sides *sides, int backward, arena *ws) {
    int width = sides->width;
    const float *q = sides->q, *k = sides->k;
    size_t q_row = sides->q_row, q_col = sides->q_col, k_row = sides->k_row, k_col = sides->k_col;
    float kmul = sides->kmul;
    float *qside = arena_floats(ws, round_up64(n, QP) * (uint64_t)width);
    float *kside = arena_floats(ws, round_up64(n, KP) * (uint64_t)width);
    src->tile = dot_tile;
    src->dot = *sides;
    src->qside = qside, src->kside = kside;
    int wp = round_up(width, 2 * VW);
    uint64_t qcount = round_up64(n, QP) * (uint64_t)wp, kcount = round_up64(n, BJ) * (uint64_t)wp;
    if (backward) {
        src->grad = dot_grad, src->grad_q = dot_grad_q, src->grad_k = dot_grad_k;
        src->width_pad = wp;
        src->qrow = arena_floats(ws, qcount), src->krow = arena_floats(ws, kcount);
        src->dq = arena_floats(ws, qcount), src->dk = arena_floats(ws, kcount);
        src->dbias = sides->has_bias ? arena_floats(ws, round_up64(n, BJ)) : 0;
    }
    if (arena_measuring(ws)) return;
    attn_pack packs[2] = {{n, width, q, q_row, q_col, 1.0f, QP, qside},
                          {n, width, k, k_row, k_col, kmul, KP, kside}};
    attn_pack_panels_all(packs, 2);
    if (!backward) return;
    attn_fill(src->qrow, (size_t)qcount, 0.0f), attn_fill(src->krow, (size_t)kcount, 0.0f);
    attn_fill(src->dq, (size_t)qcount, 0.0f), attn_fill(src->dk, (size_t)kcount, 0.0f);
    if (src->dbias) attn_fill(src->dbias, (size_t)round_up64(n, BJ), 0.0f);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < width; c++) {
            src->qrow[(size_t)i * wp + c] = q[(size_t)i * q_row + (size_t)c * q_col];
            src->krow[(size_t)i * wp + c] = k[(size_t)i * k_row + (size_t)c * k_col] * kmul;
        }
}

/* dst[r*row + c*col] += mul * acc[r*wp + c] for r < rows, c < width. */
static void scatter_add(int rows, int width, const float *acc, int wp, float mul, float *dst,
                        size_t row, size_t col) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < width; c++) dst[(size_t)r * row + (size_t)c * col] += mul * acc[(size_t)r * wp + c];
}

/* The sides' gradients back onto the arrays they were read from (the query side's only when it
 * is an input: dense's is its hidden layer, which finish_dense carries on). */
static void dot_finish_sides(const logit_source *src, float *gq, float *gk, float *gbias) {
    const dot_sides *sides = &src->dot;
    int n = src->dims->n, w = sides->width, wp = src->width_pad;
    if (gq) scatter_add(n, w, src->dq, wp, 1.0f, gq, sides->q_row, sides->q_col);
    scatter_add(n, w, src->dk, wp, sides->kmul, gk, sides->k_row, sides->k_col);
    if (gbias)
        for (int j = 0; j < n; j++) gbias[j] += src->dbias[j];
}

/* row[j] = q_i . (kmul * k_j) (+ bias_j) for j < n: row i of a dot source's logits, each product
 * a scalar sum in increasing c (decoding's one row, where the tiles' micro-kernel has no work).
 * Four keys at a time, so that four independent sums hide each other's latency; every sum is the
 * one a single loop gives (the product and the sum are separate statements, so that no compiler
 * fuses them into a multiply-add). */
static void dot_row(const dot_sides *s, int i, int n, float *row) {
    const float *q = s->q + (size_t)i * s->q_row, *bias = s->bias;
    size_t qc = s->q_col, kr = s->k_row, kc = s->k_col;
    int width = s->width, j = 0;
    float kmul = s->kmul;
    for (; j + 4 <= n; j += 4) {
        const float *k0 = s->k + (size_t)j * kr, *k1 = k0 + kr, *k2 = k1 + kr, *k3 = k2 + kr;
        float s0 = bias ? bias[j] : 0.0f, s1 = bias ? bias[j + 1] : 0.0f;
        float s2 = bias ? bias[j + 2] : 0.0f, s3 = bias ? bias[j + 3] : 0.0f;
        for (int c = 0; c < width; c++) {
            float qv = q[(size_t)c * qc];
            size_t at = (size_t)c * kc;
            float p0 = qv * (k0[at] * kmul), p1 = qv * (k1[at] * kmul);
            float p2 = qv * (k2[at] * kmul), p3 = qv * (k3[at] * kmul);
            s0 += p0, s1 += p1, s2 += p2, s3 += p3;
        }
        row[j] = s0, row[j + 1] = s1, row[j + 2] = s2, row[j + 3] = s3;
    }
    for (; j < n; j++) {
        const float *k = s->k + (size_t)j * kr;
        float sum = bias ? bias[j] : 0.0f;
        for (int c = 0; c < width; c++) {
            float p = q[(size_t)c * qc] * (k[(size_t)c * kc] * kmul);
            sum += p;
        }
        row[j] = sum;
    }
}

/* ---- softmax: B = q k^T scale, the scale folded into the key side ---- */

static void finish_softmax(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)opt;
    dot_finish_sides(src, g->q, g->k, 0);
}
static float softmax_scale(const attn_options *opt, int d) {
    return opt->has_scale ? opt->scale : 1.0f / __builtin_sqrtf((float)d);
}
static dot_sides softmax_sides(const attn_dims *dims, const attn_inputs *in, const attn_options *opt) {
    int d = dims->d;
    return (dot_sides){.width = d, .q = in->q, .q_row = (size_t)d, .q_col = 1,
                       .k = in->k, .k_row = (size_t)d, .k_col = 1, .kmul = softmax_scale(opt, d)};
}
static const logit_kind softmax_kind = {.sides = softmax_sides, .finish = finish_softmax};

/* ---- dense: B = H w2 + b2, H = relu(x w1 + b1): H against the columns of w2 ---- */

/* B = relu(x w1 + b1) w2 + b2: w2 and b2 from the key side, then back through relu and w1. */
static void finish_dense(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)opt;
    const attn_dims *dims = src->dims;
    int n = dims->n, d = dims->d, h = dims->h, wp = src->width_pad;
    dot_finish_sides(src, 0, g->w2, g->b2);
    float *dZ = src->dq; /* dH through relu, in place: H > 0 exactly where x w1 + b1 > 0 */
    for (int i = 0; i < n; i++)
        for (int c = 0; c < h; c++)
            if (!(src->hidden[(size_t)i * h + c] > 0.0f)) dZ[(size_t)i * wp + c] = 0.0f;
    affine_backward(n, d, h, src->in->x, src->w1t, dZ, wp, g->x, g->w1, g->b1);
}

static dot_sides dense_sides(const attn_dims *dims, const attn_inputs *in, const float *hidden) {
    int h = dims->h;
    return (dot_sides){.width = h, .q = hidden, .q_row = (size_t)h, .q_col = 1, .k = in->w2, .k_row = 1,
                       .k_col = (size_t)dims->L, .kmul = 1.0f, .bias = in->b2, .has_bias = 1};
}
static void prepare_dense(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int backward,
                          arena *ws, logit_source *src) {
    (void)opt;
    int n = dims->n, d = dims->d, h = dims->h, measuring = arena_measuring(ws);
    float *hidden = arena_floats(ws, (uint64_t)n * h);
    float *w1t = backward ? arena_floats(ws, (uint64_t)h * d) : 0;
    if (!measuring) affine(n, d, h, in->x, in->w1, in->b1, 1, hidden);
    if (!measuring && backward) attn_transpose(d, h, in->w1, h, w1t, d, 1.0f);
    dot_sides sides = dense_sides(dims, in, hidden);
    prepare_dot(src, n, &sides, backward, ws);
    src->hidden = hidden, src->w1t = w1t;
    src->finish = finish_dense;
}
/* H of the one query in scratch [h], then its dot products. */
static void dense_row(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int t,
                      float *scratch, float *row) {
    (void)opt;
    affine(1, dims->d, dims->h, in->x, in->w1, in->b1, 1, scratch);
    dot_sides sides = dense_sides(dims, in, scratch);
    dot_row(&sides, 0, t + 1, row);
}
static uint64_t dense_row_scratch(const attn_dims *dims, const attn_options *opt) {
    (void)opt;
    return (uint64_t)dims->h;
}
static const logit_kind dense_kind = {.prepare = prepare_dense, .row = dense_row, .row_scratch = dense_row_scratch};

/* ---- dense1: B = x w: x against the columns of w ---- */

static void finish_dense1(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)opt;
    dot_finish_sides(src, g->x, g->w, 0);
}
static dot_sides dense1_sides(const attn_dims *dims, const attn_inputs *in, const attn_options *opt) {
    (void)opt;
    int d = dims->d;
    return (dot_sides){.width = d, .q = in->x, .q_row = (size_t)d, .q_col = 1,
                       .k = in->w, .k_row = 1, .k_col = (size_t)dims->L, .kmul = 1.0f};
}
static const logit_kind dense1_kind = {.sides = dense1_sides, .finish = finish_dense1};

/* ---- factorized-random: B = r1 r2^T ---- */

static void finish_factorized_random(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)opt;
    dot_finish_sides(src, g->r1, g->r2, 0);
}

static dot_sides factorized_random_sides(const attn_dims *dims, const attn_inputs *in, const attn_options *opt) {
    (void)opt;
    int rank = dims->rank;
    return (dot_sides){.width = rank, .q = in->r1, .q_row = (size_t)rank, .q_col = 1,
                       .k = in->r2, .k_row = (size_t)rank, .k_col = 1, .kmul = 1.0f};
}
/* Decoding: r1's row t against r2's rows 0..t. */
static const logit_kind factorized_random_kind = {.sides = factorized_random_sides, .finish = finish_factorized_random,
                                                  .query_at_t = 1};

/* ---- random: B = r[:n, :n] ---- */

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

/* dr[i, j] = dS[i, j], straight into the gradient of r (each entry is one logit). */
static void random_grad(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                        int bj, const float *dS, const float *dSt) {
    (void)dS;
    int L = src->dims->L;
    for (int i = 0; i < bi; i++)
        for (int j = 0; j < bj; j++) grads->r[(size_t)(i0 + i) * L + j0 + j] += dSt[(size_t)j * BI + i];
}

static void prepare_random(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int backward,
                           arena *ws, logit_source *src) {
    (void)dims, (void)in, (void)opt, (void)backward, (void)ws;
    src->tile = random_tile, src->grad = random_grad, src->finish = finish_nothing;
    src->grad_q = random_grad, src->grad_k = grad_nothing; /* dr: the block's query rows */
}
static void random_row(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int t,
                       float *scratch, float *row) {
    (void)opt, (void)scratch;
    attn_copy(row, in->r + (size_t)t * dims->L, t + 1);
}
static const logit_kind random_kind = {.prepare = prepare_random, .row = random_row};

/* ---- factorized-dense: B[i, j] = F_A[i, ja] * F_B[i, jb], F_A = x wa + ba, F_B = x wb + bb ---- */

/* The columns of F_A and F_B that logit column j multiplies. */
static void factor_columns(const attn_dims *dims, int tiling, int j, int *ja, int *jb) {
    int a = dims->a, b = dims->b;
    *jb = j % b;
    *ja = tiling == ATTN_TILING_TILE ? j % a : j / b;
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
        int ja, jb;
        factor_columns(src->dims, src->tiling, j0, &ja, &jb);
        for (int j = 0; j < bj; j++) { /* the columns advance without a division per logit */
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

/* dFA[i, ja] += dS[i, j] FB[i, jb], dFB[i, jb] += dS[i, j] FA[i, ja], 8 queries per vector pair. */
static void factorized_dense_grad(const logit_source *src, const attn_grads *grads, int i0, int bi,
                                  int j0, int bj, const float *dS, const float *dSt) {
    (void)grads, (void)dSt;
    int a = src->dims->a, b = src->dims->b, groups = round_up(bi, QP) / QP;
    for (int g = 0; g < groups; g++) {
        size_t row = (size_t)(i0 + g * QP);
        const float *fa = src->fa + row * a, *fb = src->fb + row * b;
        float *dfa = src->dfa + row * a, *dfb = src->dfb + row * b;
        const float *dg = dS + (size_t)g * BJ * QP;
        for (int j = 0; j < bj; j++) {
            int ja, jb;
            factor_columns(src->dims, src->tiling, j0 + j, &ja, &jb);
            for (int h = 0; h < QP; h += VW) {
                vf ds = vf_load(dg + j * QP + h);
                float *pa = dfa + (size_t)ja * QP + h, *pb = dfb + (size_t)jb * QP + h;
                vf_store(pa, vf_madd(ds, vf_load(fb + (size_t)jb * QP + h), vf_load(pa)));
                vf_store(pb, vf_madd(ds, vf_load(fa + (size_t)ja * QP + h), vf_load(pb)));
            }
        }
    }
}

/* dst[i, c] = panels[i / 8][c][i % 8] for i < n, c < width. */
static void unpack_panels(int n, int width, const float *panels, float *dst) {
    for (int i = 0; i < n; i++)
        for (int c = 0; c < width; c++)
            dst[(size_t)i * width + c] = panels[((size_t)(i / QP) * width + c) * QP + i % QP];
}

static void finish_factorized_dense(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    (void)opt;
    const attn_dims *dims = src->dims;
    int n = dims->n, d = dims->d, a = dims->a, b = dims->b;
    unpack_panels(n, a, src->dfa, src->dfa_row);
    unpack_panels(n, b, src->dfb, src->dfb_row);
    affine_backward(n, d, a, src->in->x, src->wat, src->dfa_row, a, g->x, g->wa, g->ba);
    affine_backward(n, d, b, src->in->x, src->wbt, src->dfb_row, b, g->x, g->wb, g->bb);
}

static void prepare_factorized_dense(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                                     int backward, arena *ws, logit_source *src) {
    int n = dims->n, d = dims->d, a = dims->a, b = dims->b, measuring = arena_measuring(ws);
    uint64_t np = round_up64(n, QP);
    float *fa = arena_floats(ws, (uint64_t)n * a), *fb = arena_floats(ws, (uint64_t)n * b);
    float *fa_panels = arena_floats(ws, np * (uint64_t)a);
    float *fb_panels = arena_floats(ws, np * (uint64_t)b);
    src->tile = factorized_dense_tile;
    src->fa = fa_panels, src->fb = fb_panels;
    src->tiling = opt->tiling;
    if (backward) {
        src->grad = factorized_dense_grad, src->finish = finish_factorized_dense;
        src->grad_q = factorized_dense_grad, src->grad_k = grad_nothing; /* query rows only */
        src->dfa = arena_floats(ws, np * (uint64_t)a), src->dfb = arena_floats(ws, np * (uint64_t)b);
        src->dfa_row = arena_floats(ws, (uint64_t)n * a), src->dfb_row = arena_floats(ws, (uint64_t)n * b);
        src->wat = arena_floats(ws, (uint64_t)a * d), src->wbt = arena_floats(ws, (uint64_t)b * d);
    }
    if (!measuring) {
        affine(n, d, a, in->x, in->wa, in->ba, 0, fa);
        affine(n, d, b, in->x, in->wb, in->bb, 0, fb);
        attn_pack_panels(n, a, fa, (size_t)a, 1, 1.0f, QP, fa_panels);
        attn_pack_panels(n, b, fb, (size_t)b, 1, 1.0f, QP, fb_panels);
    }
    if (!measuring && backward) {
        attn_fill(src->dfa, (size_t)(np * (uint64_t)a), 0.0f), attn_fill(src->dfb, (size_t)(np * (uint64_t)b), 0.0f);
        attn_transpose(d, a, in->wa, a, src->wat, d, 1.0f);
        attn_transpose(d, b, in->wb, b, src->wbt, d, 1.0f);
    }
}
/* F_A and F_B of the one query in scratch [a + b], then their products. */
static void factorized_dense_row(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int t,
                                 float *scratch, float *row) {
    int d = dims->d, a = dims->a, b = dims->b;
    float *fa = scratch, *fb = scratch + a;
    affine(1, d, a, in->x, in->wa, in->ba, 0, fa);
    affine(1, d, b, in->x, in->wb, in->bb, 0, fb);
    for (int j = 0; j <= t; j++) {
        int ja, jb;
        factor_columns(dims, opt->tiling, j, &ja, &jb);
        row[j] = fa[ja] * fb[jb];
    }
}
static uint64_t factorized_dense_row_scratch(const attn_dims *dims, const attn_options *opt) {
    (void)opt;
    return (uint64_t)dims->a + (uint64_t)dims->b;
}
static const logit_kind factorized_dense_kind = {.prepare = prepare_factorized_dense, .row = factorized_dense_row,
                                                 .row_scratch = factorized_dense_row_scratch};

/* ---- mixture: B = sum_c alpha_c * B_c ---- */

/* alpha [count]: the options' weights, or the softmax of them when they are logits. */
static void mixture_weights(const attn_options *opt, float *alpha) {
    int count = opt->n_components;
    for (int c = 0; c < count; c++) alpha[c] = opt->alpha[c];
    if (opt->alpha_is_logits) attn_softmax_row(alpha, count);
}

/* The first part writes the tile, the others go through scratch (for the backward pass each part
 * keeps its own tile, which dalpha needs; the mixed sum is computed the same way). */
static void mixture_tile(const logit_source *src, int i0, int bi, int j0, int bj, float *T) {
    int groups = round_up(bi, QP) / QP, span = round_up(bj, KP) * QP;
    for (int c = 0; c < src->count; c++) {
        const logit_source *part = &src->parts[c];
        float a = src->alpha[c];
        float *own = src->part_tiles ? src->part_tiles + (size_t)c * BI * BJ : 0;
        float *dst = c == 0 ? T : src->scratch;
        part->tile(part, i0, bi, j0, bj, own ? own : dst);
        for (int g = 0; g < groups; g++) {
            float *tg = T + (size_t)g * BJ * QP;
            const float *pg = (own ? own : dst) + (size_t)g * BJ * QP;
            if (c == 0) {
                if (own) attn_copy(tg, pg, span);
                attn_scale(tg, span, a);
            } else {
                attn_axpy(tg, pg, span, a);
            }
        }
    }
}

/* sum dS * B_c over the block's real entries. */
static float mixture_block_sum(const logit_source *src, int c, int bi, int bj, const float *dS) {
    int groups = round_up(bi, QP) / QP;
    const float *tc = src->part_tiles + (size_t)c * BI * BJ;
    float sum = 0.0f;
    for (int g = 0; g < groups; g++)
        for (int j = 0; j < bj; j++)
            for (int r = 0; r < QP && g * QP + r < bi; r++) {
                size_t at = ((size_t)g * BJ + j) * QP + r;
                sum += dS[at] * tc[at];
            }
    return sum;
}

/* part_dS = alpha_c dS in both layouts: what part c's gradient gets. */
static void mixture_part_dS(const logit_source *src, int c, const float *dS, const float *dSt) {
    float *pdS = src->part_dS, *pdSt = src->part_dS + (size_t)BI * BJ, a = src->alpha[c];
    for (size_t t = 0; t < (size_t)BI * BJ; t++) pdS[t] = a * dS[t], pdSt[t] = a * dSt[t];
}

/* dalpha_c += sum dS * B_c over the block's real entries; each part gets alpha_c dS. */
static void mixture_grad(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                         int bj, const float *dS, const float *dSt) {
    const float *pdS = src->part_dS, *pdSt = src->part_dS + (size_t)BI * BJ;
    for (int c = 0; c < src->count; c++) {
        src->dalpha[c] += mixture_block_sum(src, c, bi, bj, dS);
        mixture_part_dS(src, c, dS, dSt);
        const logit_source *part = &src->parts[c];
        part->grad(part, grads, i0, bi, j0, bj, pdS, pdSt);
    }
}

/* Threads (backward.c's query pass): the block's sums go to its own entry of dalpha_blocks, which
 * finish_mixture adds up in one thread's block order; the parts' query sides. */
static void mixture_grad_q(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                           int bj, const float *dS, const float *dSt) {
    const float *pdS = src->part_dS, *pdSt = src->part_dS + (size_t)BI * BJ;
    float *entry = src->dalpha_blocks + ((size_t)(i0 / BI) * src->dalpha_cols + (size_t)(j0 / BJ)) * src->count;
    for (int c = 0; c < src->count; c++) {
        entry[c] = mixture_block_sum(src, c, bi, bj, dS);
        mixture_part_dS(src, c, dS, dSt);
        const logit_source *part = &src->parts[c];
        part->grad_q(part, grads, i0, bi, j0, bj, pdS, pdSt);
    }
}

/* ... and the key pass: the parts' key sides, from the same alpha_c dS. */
static void mixture_grad_k(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0,
                           int bj, const float *dS, const float *dSt) {
    const float *pdS = src->part_dS, *pdSt = src->part_dS + (size_t)BI * BJ;
    for (int c = 0; c < src->count; c++) {
        mixture_part_dS(src, c, dS, dSt);
        const logit_source *part = &src->parts[c];
        part->grad_k(part, grads, i0, bi, j0, bj, pdS, pdSt);
    }
}

/* The parts' gradients, then alpha's (through softmax when it was given as logits). */
static void finish_mixture(const logit_source *src, const attn_options *opt, const attn_grads *g) {
    for (int c = 0; c < src->count; c++) src->parts[c].finish(&src->parts[c], opt, g);
    if (src->dalpha_blocks) { /* the query pass's block sums, in one thread's order (blocks it
                               * skipped, and every block after a serial run, hold +0: adding it
                               * changes no sum that started at +0) */
        int n = src->dims->n, rows = (n + BI - 1) / BI;
        for (size_t e = 0; e < (size_t)rows * src->dalpha_cols; e++)
            for (int c = 0; c < src->count; c++) src->dalpha[c] += src->dalpha_blocks[e * src->count + c];
    }
    float dot = 0.0f;
    for (int c = 0; c < src->count; c++) dot += src->alpha[c] * src->dalpha[c];
    for (int c = 0; c < src->count; c++)
        g->alpha[c] = opt->alpha_is_logits ? src->alpha[c] * (src->dalpha[c] - dot) : src->dalpha[c];
}

/* The components' rows, mixed as mixture_tile mixes their tiles; scratch: a component's row [n],
 * then the scratch of the components' rows (one at a time). */
static void mixture_row(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, int t,
                        float *scratch, float *row) {
    float alpha[ATTN_MAX_COMPONENTS];
    mixture_weights(opt, alpha);
    float *part = scratch, *rest = scratch + dims->n;
    for (int c = 0; c < opt->n_components; c++) {
        attn_logit_row((attn_variant)opt->component[c], dims, in, opt, t, rest, c == 0 ? row : part);
        if (c == 0) attn_scale(row, t + 1, alpha[0]);
        else attn_axpy(row, part, t + 1, alpha[c]);
    }
}
static uint64_t mixture_row_scratch(const attn_dims *dims, const attn_options *opt) {
    uint64_t most = 0;
    for (int c = 0; c < opt->n_components; c++) {
        uint64_t need = attn_logit_row_scratch((attn_variant)opt->component[c], dims, opt);
        most = need > most ? need : most;
    }
    return (uint64_t)dims->n + most;
}
static const logit_kind mixture_kind = {.row = mixture_row, .row_scratch = mixture_row_scratch};

/* ---- every variant ---- */

/* The kind of every softmax-type variant, from variants.def's form column (<form>_kind, one of
 * the sections above: a form without its section does not compile); NULL for the families that
 * build no logits. A new family must say which it is here (an undefined KIND_OF_<family> does not
 * compile). */
#define KIND_OF_softmax(form) &form##_kind
#define KIND_OF_synthesizer(form) &form##_kind
#define KIND_OF_linear(form) 0 /* linear.c: no logits */
#define KIND_OF_fixed(form) 0  /* fixed.c: a pattern */
#define KIND_OF_recurrent(form) 0 /* recurrent.c: a scan */
static const logit_kind *const kinds[ATTN_VARIANT_COUNT] = {
#define X(ENUM, id, label, family, form, ...) [ENUM] = KIND_OF_##family(form),
#include "variants.def"
#undef X
};
static const logit_kind *kind_of(attn_variant v) { return kinds[v]; }

/* One softmax-type variant's source (not mixture), taking what it needs from the arena; when
 * measuring, only counts. The plan brings only softmax-type variants here. */
static void prepare_one(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, int backward, arena *ws, logit_source *src) {
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    src->variant = v;
    const logit_kind *kind = kind_of(v);
    if (!kind->sides) {
        kind->prepare(dims, in, opt, backward, ws, src);
        return;
    }
    dot_sides sides = kind->sides(dims, in, opt);
    prepare_dot(src, dims->n, &sides, backward, ws);
    src->finish = kind->finish;
}

const logit_source *attn_prepare_logits(attn_variant v, const attn_dims *dims,
                                        const attn_inputs *in, const attn_options *opt, arena *ws,
                                        logit_sources *sources, int backward) {
    if (!attn_is_composite(v)) {
        prepare_one(v, dims, in, opt, backward, ws, &sources->main);
        return &sources->main;
    }
    int count = opt->n_components;
    mixture_weights(opt, sources->alpha);
    logit_source *src = &sources->main;
    *src = (logit_source){0};
    src->dims = dims;
    src->in = in;
    src->variant = v;
    src->tile = mixture_tile;
    src->count = count;
    src->parts = sources->parts;
    src->alpha = sources->alpha;
    src->scratch = arena_floats(ws, (uint64_t)BI * BJ);
    if (backward) {
        src->grad = mixture_grad, src->finish = finish_mixture;
        src->part_tiles = arena_floats(ws, (uint64_t)count * BI * BJ);
        src->part_dS = arena_floats(ws, (uint64_t)2 * BI * BJ);
        src->dalpha = arena_floats(ws, (uint64_t)ATTN_MAX_COMPONENTS);
        if (!arena_measuring(ws)) attn_fill(src->dalpha, ATTN_MAX_COMPONENTS, 0.0f);
        if (arena_threads(ws) > 1) { /* threads: one entry of count sums per logit block */
            uint64_t blocks = round_up64(dims->n, BI) / BI * (round_up64(dims->n, BJ) / BJ) * (uint64_t)count;
            src->dalpha_cols = (int)(round_up64(dims->n, BJ) / BJ);
            src->dalpha_blocks = arena_floats(ws, blocks);
            if (!arena_measuring(ws)) attn_fill(src->dalpha_blocks, (size_t)blocks, 0.0f);
        }
    }
    int split = backward;
    for (int c = 0; c < count; c++) {
        prepare_one((attn_variant)opt->component[c], dims, in, opt, backward, ws, &sources->parts[c]);
        split = split && sources->parts[c].grad_q && sources->parts[c].grad_k;
    }
    if (split && arena_threads(ws) > 1) /* (dalpha_blocks is NULL while measuring) */
        src->grad_q = mixture_grad_q, src->grad_k = mixture_grad_k;
    return src;
}

void attn_logit_row(attn_variant v, const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                    int t, float *scratch, float *row) {
    const logit_kind *kind = kind_of(v);
    if (!kind->sides) {
        kind->row(dims, in, opt, t, scratch, row);
        return;
    }
    dot_sides sides = kind->sides(dims, in, opt);
    dot_row(&sides, kind->query_at_t ? t : 0, t + 1, row);
}

uint64_t attn_logit_row_scratch(attn_variant v, const attn_dims *dims, const attn_options *opt) {
    const logit_kind *kind = kind_of(v);
    return kind && kind->row_scratch ? kind->row_scratch(dims, opt) : 0;
}
