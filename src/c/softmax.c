/* softmax.c — softmax attention over any source of logits (logits.c holds the sources: the dot
 * product, the Synthesizers and their mixture).
 *
 * Without weights, attention streams (online softmax, as in FlashAttention): a block of BI query
 * rows visits the key blocks in increasing j; each logit tile is masked, exponentiated against the
 * running row maximum and multiplied into the output block, which is rescaled when the maximum
 * grows. Memory: one tile and one output block, never n x n.
 *
 * Layout, chosen so that every inner loop is the 4 x 8 micro-kernel at constant strides:
 *   tile T[g][j][r]   = B[i0 + 8g + r, j0 + j]   8 queries side by side per key (QP lanes)
 *   value panels      Vp[e/8][j][e%8] = v[j, e]  8 value columns side by side per key
 * Logits: T(4 keys x 8 queries) = key panel (broadcast) x query panel (vectors).
 * Output: O(4 queries x 8 values) += T column (broadcast) x value panel (vectors).
 * The row statistics (max, sum) of 8 queries are two vectors, updated with no horizontal work.
 *
 * With weights, the n x n matrix is the caller's buffer: it is filled tile by tile, softmaxed
 * exactly row by row, and multiplied by v.
 */
#include "internal.h"

/* ---- the driver ---- */

void attn_mask_tile(int n, int causal, int i0, int bi, int j0, int bj, float *T) {
    int bjp = round_up(bj, KP);
    if (bjp == bj && !(causal && j0 + bj - 1 > i0)) return;
    int groups = round_up(bi, QP) / QP;
    for (int g = 0; g < groups; g++)
        for (int j = 0; j < bjp; j++)
            for (int r = 0; r < QP; r++) {
                int query = i0 + g * QP + r, key = j0 + j;
                if (key >= n || (causal && key > query)) T[((size_t)g * BJ + j) * QP + r] = -ATTN_INF;
            }
}

/* Online softmax of one row group's tile (8 queries x bjp keys, in place), updating the running
 * maximum and sum of those queries; returns the factors their output rows must be scaled by. */
static void online_softmax(float *tg, int bjp, float *row_max, float *row_sum, float *shrink) {
    vf mx0 = vf_splat(-ATTN_INF), mx1 = mx0;
    for (int j = 0; j < bjp; j++) {
        mx0 = vf_max(mx0, vf_load(tg + j * QP));
        mx1 = vf_max(mx1, vf_load(tg + j * QP + VW));
    }
    vf old0 = vf_load(row_max), old1 = vf_load(row_max + VW);
    vf new0 = vf_max(old0, mx0), new1 = vf_max(old1, mx1);
    vf f0 = vf_exp(vf_sub(old0, new0)), f1 = vf_exp(vf_sub(old1, new1)); /* exp(-inf) = 0 */
    vf s0 = vf_zero(), s1 = vf_zero();
    for (int j = 0; j < bjp; j += 2) { /* bjp is a multiple of KP: four independent exps a step */
        float *t = tg + j * QP;
        vf e0 = vf_exp(vf_sub(vf_load(t), new0)), e1 = vf_exp(vf_sub(vf_load(t + VW), new1));
        vf e2 = vf_exp(vf_sub(vf_load(t + QP), new0)), e3 = vf_exp(vf_sub(vf_load(t + QP + VW), new1));
        vf_store(t, e0), vf_store(t + VW, e1), vf_store(t + QP, e2), vf_store(t + QP + VW, e3);
        s0 = vf_add(s0, vf_add(e0, e2)), s1 = vf_add(s1, vf_add(e1, e3));
    }
    vf_store(row_max, new0), vf_store(row_max + VW, new1);
    vf_store(row_sum, vf_madd(vf_load(row_sum), f0, s0));
    vf_store(row_sum + VW, vf_madd(vf_load(row_sum + VW), f1, s1));
    vf_store(shrink, f0), vf_store(shrink + VW, f1);
}

/* Vp[p][j][t] = v[j, 8p + t], zero past dv and past n (up to n rounded to KP): one panel p a
 * piece, each writing only its own, so threads share the copy (same bytes as one thread). */
typedef struct values_job {
    int n, dv;
    const float *v;
    float *vp;
} values_job;

static void pack_values_panel(void *ctx, int p, int thread) {
    (void)thread;
    const values_job *job = ctx;
    int n = job->n, dv = job->dv, np = round_up(n, KP);
    float *dst = job->vp + (size_t)p * np * QP;
    for (int j = 0; j < np; j++)
        for (int t = 0; t < QP; t++) {
            int e = p * QP + t;
            dst[(size_t)j * QP + t] = j < n && e < dv ? job->v[(size_t)j * dv + e] : 0.0f;
        }
}

static void pack_values(int n, int dv, const float *v, float *vp) {
    values_job job = {n, dv, v, vp};
    int panels = round_up(dv, QP) / QP;
    if (n < 4 * BI) { /* a hand-over to the workers would cost more than the copy */
        for (int p = 0; p < panels; p++) pack_values_panel(&job, p, 0);
        return;
    }
    attn_parallel(panels, pack_values_panel, &job);
}

/* One thread's scratch for the streaming driver: a tile, the output block and row statistics of
 * one query block, and a tile of scratch for a mixture's parts. */
typedef struct stream_slice {
    float *T, *O, *row_max, *row_sum, *shrink, *scratch;
} stream_slice;

static void carve_slice(arena *ws, int dvp, stream_slice *s) {
    s->T = arena_floats(ws, (uint64_t)BI * BJ);
    s->O = arena_floats(ws, (uint64_t)BI * dvp);
    s->row_max = arena_floats(ws, BI);
    s->row_sum = arena_floats(ws, BI);
    s->shrink = arena_floats(ws, BI);
    s->scratch = arena_floats(ws, (uint64_t)BI * BJ);
}

/* Query rows [i0, i0 + BI): their own output rows and log-sum-exps, nothing shared is written,
 * so blocks may run on any thread in any order and give the bits one thread gives. */
static void stream_block(const logit_source *src, int n, int dv, int causal, const float *vp,
                         float *out, float *lse, int i0, const stream_slice *sl) {
    int dvp = round_up(dv, QP), np = round_up(n, KP), panels = dvp / QP;
    float *T = sl->T, *O = sl->O, *row_max = sl->row_max, *row_sum = sl->row_sum, *shrink = sl->shrink;
    int bi = imin(BI, n - i0), groups = round_up(bi, QP) / QP;
    attn_fill(row_max, BI, -ATTN_INF);
    attn_fill(row_sum, BI, 0.0f);
    attn_fill(O, (size_t)BI * dvp, 0.0f);
    int j_end = causal ? i0 + bi : n;
    for (int j0 = 0; j0 < j_end; j0 += BJ) {
        int bj = imin(BJ, n - j0), bjp = round_up(bj, KP);
        src->tile(src, i0, bi, j0, bj, T);
        attn_mask_tile(n, causal, i0, bi, j0, bj, T);
        for (int g = 0; g < groups; g++) {
            float *tg = T + (size_t)g * BJ * QP;
            float *og = O + (size_t)g * QP * dvp;
            online_softmax(tg, bjp, row_max + g * QP, row_sum + g * QP, shrink + g * QP);
            for (int r = 0; r < QP; r++)
                if (shrink[g * QP + r] != 1.0f) attn_scale(og + (size_t)r * dvp, dvp, shrink[g * QP + r]);
            for (int half = 0; half < QP; half += KP)
                for (int p = 0; p < panels; p++)
                    attn_micro_4x8(bjp, tg + half, QP, vp + ((size_t)p * np + j0) * QP, QP,
                                   og + (size_t)half * dvp + p * QP, dvp, 1);
        }
    }
    for (int r = 0; r < bi && lse; r++) lse[i0 + r] = row_max[r] + attn_logf(row_sum[r]);
    for (int r = 0; r < bi; r++) {
        float inv = 1.0f / row_sum[r];
        const float *o = O + (size_t)r * dvp;
        float *y = out + (size_t)(i0 + r) * dv;
        for (int e = 0; e < dv; e++) y[e] = o[e] * inv;
    }
}

typedef struct stream_job {
    const logit_source *src;
    int n, dv, causal;
    const float *vp;
    float *out, *lse;
    const stream_slice *slices; /* one per thread */
} stream_job;

/* Piece p = query block p, on the calling thread's slice. A mixture's tile writes its parts
 * through scratch (and, prepared for the backward pass, into per-part tiles): the thread's copy
 * of the source points both at its own slice. Without per-part tiles the mixture sums the same
 * values in the same order, so the tile is the same to the bit. */
static void stream_piece(void *ctx, int piece, int thread) {
    const stream_job *job = ctx;
    const stream_slice *sl = &job->slices[thread];
    logit_source local = *job->src;
    local.scratch = sl->scratch;
    local.part_tiles = 0;
    stream_block(&local, job->n, job->dv, job->causal, job->vp, job->out, job->lse, piece * BI, sl);
}
/* Rows [i0, i0 + BI) of the caller's n x n weights, tile by tile, each row softmaxed exactly, then
 * those rows of y = A v: a query block's own rows, computed as one thread computes them (the
 * product's rows in whole blocks of 4), so blocks may run on any thread. */
static void materialise_block(const logit_source *src, int n, int dv, int causal, const float *v,
                              float *out, float *weights, float *T, int i0) {
    int bi = imin(BI, n - i0), groups = round_up(bi, QP) / QP;
    for (int j0 = 0; j0 < n; j0 += BJ) {
        int bj = imin(BJ, n - j0);
        if (causal && j0 > i0 + bi - 1) break; /* the row softmax zeroes what follows */
        src->tile(src, i0, bi, j0, bj, T);
        for (int g = 0; g < groups; g++)
            for (int r = 0; r < QP && g * QP + r < bi; r++) {
                float *row = weights + (size_t)(i0 + g * QP + r) * n + j0;
                for (int j = 0; j < bj; j++) row[j] = T[((size_t)g * BJ + j) * QP + r];
            }
    }
    for (int r = 0; r < bi; r++) {
        float *row = weights + (size_t)(i0 + r) * n;
        int valid = causal ? i0 + r + 1 : n;
        attn_softmax_row(row, valid);
        attn_fill(row + valid, (size_t)(n - valid), 0.0f);
    }
    attn_gemm(bi, dv, n, weights + (size_t)i0 * n, n, v, dv, out + (size_t)i0 * dv, dv, 0);
}

typedef struct materialise_job {
    const logit_source *src;
    int n, dv, causal;
    const float *v;
    float *out, *weights;
    const stream_slice *slices; /* per thread: T and a mixture's scratch */
} materialise_job;

static void materialise_piece(void *ctx, int piece, int thread) {
    const materialise_job *j = ctx;
    const stream_slice *sl = &j->slices[thread];
    logit_source local = *j->src; /* a mixture's scratch: the thread's own (see stream_piece) */
    local.scratch = sl->scratch;
    local.part_tiles = 0;
    materialise_block(&local, j->n, j->dv, j->causal, j->v, j->out, j->weights, sl->T, piece * BI);
}

void attn_softmax_attend(const logit_source *src, const attn_dims *dims, const float *v,
                         int causal, float *out, float *weights, float *lse, arena *ws) {
    int n = dims->n, dv = dims->dv, dvp = round_up(dv, QP);
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    if (weights) { /* a tile and a mixture's scratch per thread */
        stream_slice slices[ATTN_MAX_THREADS];
        for (int t = 0; t < threads; t++) {
            slices[t].T = arena_floats(ws, (uint64_t)BI * BJ);
            slices[t].scratch = arena_floats(ws, (uint64_t)BI * BJ);
        }
        if (arena_measuring(ws)) return;
        materialise_job job = {src, n, dv, causal, v, out, weights, slices};
        attn_parallel_slices((n + BI - 1) / BI, materialise_piece, &job, threads);
        return;
    }
    float *vp = arena_floats(ws, (uint64_t)dvp * round_up(n, KP));
    /* one scratch slice per thread the workspace is measured for (threads.c) */
    stream_slice slices[ATTN_MAX_THREADS];
    for (int t = 0; t < threads; t++) carve_slice(ws, dvp, &slices[t]);
    if (arena_measuring(ws)) return;
    pack_values(n, dv, v, vp);
    stream_job job = {src, n, dv, causal, vp, out, lse, slices};
    attn_parallel_slices((n + BI - 1) / BI, stream_piece, &job, threads);
}

/* ---- decoding: one row at a time ---- */

/* The softmax of one row of logits against the values it weighs, as a scalar sum over positions
 * (decoding's O(t) step; the tiles above would pad one row to a block). */
void attn_softmax_attend_row(float *row, int n, const float *v, int dv, float *y) {
    float sum = attn_exp_shift_sum(row, n, attn_max(row, n));
    attn_fill(y, (size_t)dv, 0.0f);
    for (int j = 0; j < n; j++) attn_axpy(y, v + (size_t)j * dv, dv, row[j]);
    attn_scale(y, dv, 1.0f / sum);
}
