/* efficient.c — Efficient Attention (Shen et al. 2021), the linear family's form without a
 * feature map: y = softmax_features(q) (softmax_positions(k)^T v), causal with rho_k over the
 * prefix j <= i (docs/contract.md, "The variants").
 */
#include "internal.h"

/* ---- weights over threads: blocks of BI query rows (as linear_kernel.c's), from rho_q, the
 * normalised exp(k - m)^T, or causal the running m and z after each row ---- */
typedef struct weights_job {
    const attn_dims *dims;
    const attn_inputs *in;
    int causal;
    float *weights;
    float *rho_q, *kt, *ms, *zs; /* ms, zs: m and z after each row (causal) */
    float **e;                   /* causal: per thread, [n] */
} weights_job;

/* Column maxima of k [n, d] into m [d]. */
/* m[c] = max_i k[i, c] for columns [c0, c1), c0 a multiple of VW: vectors over whole groups of
 * VW columns, scalars for the rest, so a column is computed alike whichever range holds it. */
static void column_max_range(int n, int d, const float *k, int c0, int c1, float *m) {
    int c = c0;
    /* blocks of 4 VW columns with their maxima in registers down all the rows (as
     * attn_add_column_sums); rows in the same order, so the same result even with a NaN */
    for (; c + 4 * VW <= c1; c += 4 * VW) {
        vf m0 = vf_splat(-ATTN_INF), m1 = m0, m2 = m0, m3 = m0;
        for (int i = 0; i < n; i++) {
            const float *kr = k + (size_t)i * d + c;
            m0 = vf_max(m0, vf_load(kr)), m1 = vf_max(m1, vf_load(kr + VW));
            m2 = vf_max(m2, vf_load(kr + 2 * VW)), m3 = vf_max(m3, vf_load(kr + 3 * VW));
        }
        vf_store(m + c, m0), vf_store(m + c + VW, m1), vf_store(m + c + 2 * VW, m2), vf_store(m + c + 3 * VW, m3);
    }
    attn_fill(m + c, (size_t)(c1 - c), -ATTN_INF);
    for (int i = 0; i < n; i++) {
        const float *kr = k + (size_t)i * d;
        int cc = c;
        for (; cc + VW <= c1; cc += VW) vf_store(m + cc, vf_max(vf_load(m + cc), vf_load(kr + cc)));
        for (; cc < c1; cc++) m[cc] = kr[cc] > m[cc] ? kr[cc] : m[cc];
    }
}

static void column_max(int n, int d, const float *k, float *m) { column_max_range(n, d, k, 0, d, m); }

/* e[r, c] = exp(k[r, c] - m[c]) for columns [c0, c1), as column_max_range splits them. */
static void exp_minus_columns_range(int rows, int d, const float *k, const float *m, int c0, int c1,
                                    float *e) {
    for (int r = 0; r < rows; r++) {
        const float *kr = k + (size_t)r * d;
        float *er = e + (size_t)r * d;
        int c = c0;
        /* k - m <= 0: m is the column maximum (so far) */
        for (; c + VW <= c1; c += VW) vf_store(er + c, vf_exp_nonpositive(vf_sub(vf_load(kr + c), vf_load(m + c))));
        for (; c < c1; c++) er[c] = attn_expf(kr[c] - m[c]);
    }
}

void attn_exp_minus_columns(int rows, int d, const float *k, const float *m, float *e) {
    exp_minus_columns_range(rows, d, k, m, 0, d, e);
}

void attn_softmax_rows(int rows, int d, const float *x, float *dst) {
    for (int r = 0; r < rows; r++) {
        attn_copy(dst + (size_t)r * d, x + (size_t)r * d, d);
        attn_softmax_row(dst + (size_t)r * d, d);
    }
}

/* Non-causal efficient attention: y = rho_q(q) (rho_k(k)^T v), rho_k normalised over positions.
 * S = sum_j exp(k_j - m) v_j^T is divided row by row by z = sum_j exp(k_j - m). The column
 * maximum is a running one: S and z are rescaled (per feature) whenever a chunk raises it, as the
 * streaming softmax does for rows. */
/* Features [c0, c1) of the context (c0 a multiple of VW, of KP too): each feature's m, z and S row
 * depend on that feature's column of k alone, so ranges of features may run on any thread and give
 * the bits of one pass over all of them. */
void attn_efficient_context_range(const attn_dims *dims, const attn_inputs *in, int c0, int c1,
                                  float *m, float *chunk_max, float *e, float *S, float *z) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    attn_fill(m + c0, (size_t)(c1 - c0), -ATTN_INF);
    attn_fill(S + (size_t)c0 * dv, (size_t)(c1 - c0) * dv, 0.0f);
    attn_fill(z + c0, (size_t)(c1 - c0), 0.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *kb = in->k + (size_t)t0 * d;
        column_max_range(bt, d, kb, c0, c1, chunk_max);
        for (int c = c0; c < c1; c++)
            if (chunk_max[c] > m[c]) {
                float shrink = m[c] == -ATTN_INF ? 0.0f : attn_expf(m[c] - chunk_max[c]);
                z[c] *= shrink;
                attn_scale(S + (size_t)c * dv, dv, shrink);
                m[c] = chunk_max[c];
            }
        exp_minus_columns_range(bt, d, kb, m, c0, c1, e);
        attn_gemm_tn(c1 - c0, dv, bt, e + c0, d, in->v + (size_t)t0 * dv, dv, S + (size_t)c0 * dv, dv, 1);
        attn_add_column_sums(bt, c1 - c0, e + c0, (size_t)d, z + c0);
    }
    for (int c = c0; c < c1; c++) attn_scale(S + (size_t)c * dv, dv, 1.0f / z[c]);
}

void attn_efficient_context(const attn_dims *dims, const attn_inputs *in, float *m,
                            float *chunk_max, float *e, float *S, float *z) {
    attn_efficient_context_range(dims, in, 0, dims->d, m, chunk_max, e, S, z);
}

void attn_efficient_full_chunk(int d, int dv, int bt, const float *qb, const float *context,
                               float *rho, float *rho_t, float *y) {
    attn_softmax_rows(bt, d, qb, rho);
    attn_transpose(bt, d, rho, d, rho_t, BT, 1.0f);
    attn_gemm_tn(bt, dv, d, rho_t, BT, context, dv, y, dv, 0);
}

/* rho_t[c * ldt + r] = softmax(q_r)_c for r < rows: attn_softmax_rows then attn_transpose, with the
 * same bits, four rows at a time in the lanes of a vector (columns by vf_transpose4) when d is a
 * multiple of 2 VW. Row by row, each row's max, horizontal sums, 1 / sum and five calls cost about
 * as much as its 2 d exps; in lanes they are gone, and so is the transpose. Per lane, the same
 * operations in the same order: the maximum is exact in any order; attn_exp_shift_sum's two vector
 * accumulators hold the positions 0..3 and 4..7 mod 8, here acc[p] sums position p mod 8 in
 * increasing order, then (acc[p] + acc[p + 4]) and the (0 + 2) + (1 + 3) of vf_hsum; x - max <= 0,
 * so vf_exp_nonpositive gives vf_exp's bits. The other rows (and other d) take the two calls. */
static void softmax_rows_t(int rows, int d, const float *q, float *rho, float *rho_t, int ldt) {
    int r = 0;
    if (d % (2 * VW) == 0)
        for (; r + VW <= rows; r += VW) {
            const float *x = q + (size_t)r * d;
            float *t = rho_t + r;
            vf col[VW], m = vf_splat(-ATTN_INF), acc[2 * VW];
            for (int c = 0; c < d; c += VW) {
                attn_load_columns4(x, d, c, col);
                for (int i = 0; i < VW; i++) m = vf_max(m, col[i]);
            }
            for (int p = 0; p < 2 * VW; p++) acc[p] = vf_zero();
            for (int c = 0; c < d; c += VW) {
                attn_load_columns4(x, d, c, col);
                for (int i = 0; i < VW; i++) {
                    vf e = vf_exp_nonpositive(vf_sub(col[i], m));
                    acc[c % (2 * VW) + i] = vf_add(acc[c % (2 * VW) + i], e);
                    vf_store(t + (size_t)(c + i) * ldt, e);
                }
            }
            vf sum = vf_add(vf_add(acc[0], acc[4]), vf_add(acc[2], acc[6]));
            sum = vf_add(sum, vf_add(vf_add(acc[1], acc[5]), vf_add(acc[3], acc[7])));
            vf inv = vf_div(vf_splat(1.0f), sum);
            for (int c = 0; c < d; c++) vf_store(t + (size_t)c * ldt, vf_mul(vf_load(t + (size_t)c * ldt), inv));
        }
    if (r < rows) {
        attn_softmax_rows(rows - r, d, q + (size_t)r * d, rho);
        attn_transpose(rows - r, d, rho, d, rho_t + r, ldt, 1.0f);
    }
}

/* attn_efficient_full_chunk's y, without leaving rho row-major (the forward pass does not need it). */
static void efficient_out_chunk(int d, int dv, int bt, const float *qb, const float *context, float *rho,
                                float *rho_t, float *y) {
    softmax_rows_t(bt, d, qb, rho, rho_t, BT);
    attn_gemm_tn(bt, dv, d, rho_t, BT, context, dv, y, dv, 0);
}

/* Threads: the context by ranges of features, then the outputs by chunks (see kernelized). */
typedef struct efficient_job {
    const attn_dims *dims;
    const attn_inputs *in;
    float *out, *m, *chunk_max, *S, *z;
    int cols;      /* features per context piece, a multiple of VW and KP */
    float **e, **et; /* per thread: [BT, d] and [d, BT] */
} efficient_job;

static void efficient_context_piece(void *ctx, int piece, int thread) {
    const efficient_job *j = ctx;
    int c0 = piece * j->cols, c1 = imin(j->dims->d, c0 + j->cols);
    attn_efficient_context_range(j->dims, j->in, c0, c1, j->m, j->chunk_max, j->e[thread], j->S, j->z);
}

static void efficient_output_piece(void *ctx, int piece, int thread) {
    const efficient_job *j = ctx;
    int d = j->dims->d, dv = j->dims->dv, t0 = piece * BT, bt = imin(BT, j->dims->n - t0);
    efficient_out_chunk(d, dv, bt, j->in->q + (size_t)t0 * d, j->S, j->e[thread], j->et[thread],
                        j->out + (size_t)t0 * dv);
}

static void efficient_full(const attn_dims *dims, const attn_inputs *in, float *out, arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    float *m = arena_floats(ws, (uint64_t)d);
    float *chunk_max = arena_floats(ws, (uint64_t)d);
    float *e = arena_floats(ws, (uint64_t)BT * d);
    float *et = arena_floats(ws, (uint64_t)d * BT);
    float *S = arena_floats(ws, (uint64_t)d * dv);
    float *z = arena_floats(ws, (uint64_t)d);
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    float *es[ATTN_MAX_THREADS], *ets[ATTN_MAX_THREADS];
    es[0] = e, ets[0] = et;
    for (int t = 1; t < threads; t++) es[t] = arena_floats(ws, (uint64_t)BT * d), ets[t] = arena_floats(ws, (uint64_t)d * BT);
    if (arena_measuring(ws)) return;
    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BT) {
        int cols = round_up(imax(VW, (d + 2 * pool - 1) / (2 * pool)), VW); /* VW = KP = 4 */
        efficient_job job = {dims, in, out, m, chunk_max, S, z, cols, es, ets};
        attn_parallel((d + cols - 1) / cols, efficient_context_piece, &job);
        attn_parallel((n + BT - 1) / BT, efficient_output_piece, &job);
        return;
    }
    attn_efficient_context(dims, in, m, chunk_max, e, S, z);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        efficient_out_chunk(d, dv, bt, in->q + (size_t)t0 * d, S, e, et, out + (size_t)t0 * dv);
    }
}

/* Running per-feature state of causal efficient attention after rows 0..i:
 * m_c = max_{j<=i} k_jc, z_c = sum_{j<=i} exp(k_jc - m_c), S_c = sum_{j<=i} exp(k_jc - m_c) v_j
 * (S may be NULL: weights only need m and z). When m_c grows, z_c and S_c are rescaled, so no
 * exponent is ever positive and none underflows relative to its row's largest term. */
void attn_efficient_absorb(int d, int dv, const float *k_row, const float *v_row, float *m,
                           float *z, float *S) {
    for (int c = 0; c < d; c++) {
        float kc = k_row[c];
        if (kc > m[c]) {
            float shrink = m[c] == -ATTN_INF ? 0.0f : attn_expf(m[c] - kc);
            z[c] *= shrink;
            if (S) attn_scale(S + (size_t)c * dv, dv, shrink);
            m[c] = kc;
        }
        float e = attn_expf(kc - m[c]);
        z[c] += e;
        if (S) attn_axpy(S + (size_t)c * dv, v_row, dv, e);
    }
}

void attn_efficient_step(int d, int dv, const float *q, const float *k, const float *v, float *m, float *z,
                         float *S, float *rho, float *y) {
    attn_efficient_absorb(d, dv, k, v, m, z, S);
    attn_softmax_rows(1, d, q, rho);
    attn_fill(y, (size_t)dv, 0.0f);
    for (int c = 0; c < d; c++) attn_axpy(y, S + (size_t)c * dv, dv, rho[c] / z[c]);
}

void attn_efficient_rows(int d, int dv, const attn_inputs *in, int i0, int i1, float *out,
                         const attn_efficient_buffers *b) {
    for (int i = i0; i < i1; i++)
        attn_efficient_step(d, dv, in->q + (size_t)i * d, in->k + (size_t)i * d, in->v + (size_t)i * dv, b->m, b->z,
                       b->S, b->rho, out + (size_t)i * dv);
}

/* Causal efficient attention (docs/contract.md, "The variants"): y_i = sum_c rho_q(q_i)_c S_c(i) / z_c(i), with the
 * state after rows 0..i. Chunks of BT rows: the running maximum m jumps to the chunk's column
 * maximum, E = exp(k - m) for the chunk, Z(i) = z + the prefix sums of E, Q' = rho_q / Z, and
 *   y = Q' S + tril(Q' E^T) V        (the chunk's own rows j <= i)
 * as in the kernelised form. A row whose prefix sum would underflow (a column whose values span
 * more than exp's range inside one chunk) sends that chunk through the exact row-by-row update. */
int attn_efficient_chunk_start(int d, int bt, const float *kb, const attn_efficient_buffers *b) {
    column_max(bt, d, kb, b->chunk_max);
    for (int c = 0; c < d; c++) { /* the new maximum, and z rescaled to it (not yet stored) */
        float m_new = b->chunk_max[c] > b->m[c] ? b->chunk_max[c] : b->m[c];
        b->zs[c] = b->m[c] == -ATTN_INF ? 0.0f : b->z[c] * attn_expf(b->m[c] - m_new);
        b->chunk_max[c] = m_new;
    }
    attn_exp_minus_columns(bt, d, kb, b->chunk_max, b->E);
    int underflow = 0;
    for (int r = 0; r < bt; r++) { /* Zq[r] = zs + E[0] + ... + E[r] */
        float *zr = b->Zq + (size_t)r * d;
        attn_copy(zr, r ? zr - d : b->zs, d);
        attn_axpy(zr, b->E + (size_t)r * d, d, 1.0f);
        for (int c = 0; c < d; c++) underflow |= !(zr[c] > 1e-30f);
    }
    return underflow;
}

/* S rescaled to the chunk's new running maximum, which m becomes. */
static void efficient_rescale_state(int d, int dv, const attn_efficient_buffers *b) {
    for (int c = 0; c < d; c++) {
        if (b->chunk_max[c] > b->m[c])
            attn_scale(b->S + (size_t)c * dv, dv, b->m[c] == -ATTN_INF ? 0.0f : attn_expf(b->m[c] - b->chunk_max[c]));
        b->m[c] = b->chunk_max[c];
    }
}

void attn_efficient_chunk_out(int d, int dv, int bt, const float *qb, const float *vb, float *y,
                              const attn_efficient_buffers *b) {
    efficient_rescale_state(d, dv, b);
    for (int r = 0; r < bt; r++) { /* Qt = (rho_q / Z)^T, row by row */
        float *rho = b->rho_rows ? b->rho_rows + (size_t)r * d : b->rho;
        const float *zr = b->Zq + (size_t)r * d;
        attn_softmax_rows(1, d, qb + (size_t)r * d, rho);
        for (int c = 0; c < d; c++) b->Qt[(size_t)c * BT + r] = rho[c] / zr[c];
    }
    attn_transpose(bt, d, b->E, d, b->Et, BT, 1.0f);
    attn_gemm_tn(bt, dv, d, b->Qt, BT, b->S, dv, y, dv, 0);
    attn_gemm_tn(bt, bt, d, b->Et, BT, b->Qt, BT, b->PT, BT, 0);
    for (int key = 1; key < bt; key++) attn_fill(b->PT + (size_t)key * BT, (size_t)key, 0.0f);
    attn_gemm_tn(bt, dv, bt, b->PT, BT, vb, dv, y, dv, 1);
}

void attn_efficient_chunk_absorb(int d, int dv, int bt, const float *vb,
                                 const attn_efficient_buffers *b) {
    attn_gemm_tn(d, dv, bt, b->E, d, vb, dv, b->S, dv, 1);
    attn_copy(b->z, b->zs, d);
    attn_add_column_sums(bt, d, b->E, (size_t)d, b->z);
}

void attn_efficient_carve(int d, int dv, int with_rows, arena *ws, attn_efficient_buffers *b) {
    b->m = arena_floats(ws, (uint64_t)d);
    b->chunk_max = arena_floats(ws, (uint64_t)d);
    b->zs = arena_floats(ws, (uint64_t)d);
    b->z = arena_floats(ws, (uint64_t)d);
    b->S = arena_floats(ws, (uint64_t)d * dv);
    b->E = arena_floats(ws, (uint64_t)BT * d);
    b->Et = arena_floats(ws, (uint64_t)d * BT);
    b->Zq = arena_floats(ws, (uint64_t)BT * d);
    b->Qt = arena_floats(ws, (uint64_t)d * BT);
    b->PT = arena_floats(ws, (uint64_t)BT * BT);
    b->rho = arena_floats(ws, (uint64_t)d);
    b->rho_rows = with_rows ? arena_floats(ws, (uint64_t)BT * d) : 0;
}

/* Chunks [c0, c1) from the state (m, z, S) in b, absorbing each: the serial loop's body. */
static void efficient_run_chunks(const attn_dims *dims, const attn_inputs *in, int c0, int c1,
                                 float *out, const attn_efficient_buffers *b) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        const float *vb = in->v + (size_t)t0 * dv;
        if (attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, b)) {
            attn_efficient_rows(d, dv, in, t0, t0 + bt, out, b);
            continue;
        }
        attn_efficient_chunk_out(d, dv, bt, in->q + (size_t)t0 * d, vb, out + (size_t)t0 * dv, b);
        attn_efficient_chunk_absorb(d, dv, bt, vb, b);
    }
}

/* Threads: the parallel prefix of the kernelised form (see prefix_job), with the running maximum
 * carried along: a block's state (m, z, S) is relative to its own column maxima, and the combine
 * rescales both sides to the larger maximum, as a chunk does when it raises m. */
typedef struct efficient_prefix_job {
    const attn_dims *dims;
    const attn_inputs *in;
    float *out;
    int blocks, chunks;
    float *m, *z, *S; /* per block but the last: [d], [d], [d, dv] */
    const attn_efficient_buffers *slices; /* per thread: a chunk's buffers (m, z, S set per block) */
} efficient_prefix_job;

static attn_efficient_buffers efficient_block_state(const efficient_prefix_job *j, int slot, int thread) {
    int d = j->dims->d, dv = j->dims->dv;
    attn_efficient_buffers b = j->slices[thread];
    b.m = j->m + (size_t)slot * d, b.z = j->z + (size_t)slot * d, b.S = j->S + (size_t)slot * d * dv;
    return b;
}

void attn_efficient_block_sum(const attn_dims *dims, const attn_inputs *in, int c0, int c1,
                              const attn_efficient_buffers *b) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    for (int c = c0; c < c1; c++) { /* the state alone: no outputs, so no row-by-row fallback */
        int t0 = c * BT, bt = imin(BT, n - t0);
        attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, b);
        efficient_rescale_state(d, dv, b);
        attn_efficient_chunk_absorb(d, dv, bt, in->v + (size_t)t0 * dv, b);
    }
}

static void efficient_sum_piece(void *ctx, int piece, int thread) {
    const efficient_prefix_job *j = ctx;
    int d = j->dims->d, dv = j->dims->dv;
    attn_efficient_buffers b = efficient_block_state(j, piece, thread);
    attn_fill(b.m, (size_t)d, -ATTN_INF);
    attn_fill(b.z, (size_t)d, 0.0f);
    attn_fill(b.S, (size_t)d * dv, 0.0f);
    int c0 = attn_prefix_block_start(piece, j->blocks, j->chunks), c1 = attn_prefix_block_start(piece + 1, j->blocks, j->chunks);
    if (piece == 0) { /* block 0 starts from the empty state: its outputs now */
        efficient_run_chunks(j->dims, j->in, c0, c1, j->out, &b);
        return;
    }
    attn_efficient_block_sum(j->dims, j->in, c0, c1, &b);
}

static void efficient_run_piece(void *ctx, int piece, int thread) {
    const efficient_prefix_job *j = ctx;
    int block = piece + 1;
    attn_efficient_buffers b = efficient_block_state(j, piece, thread); /* the prefix before it */
    efficient_run_chunks(j->dims, j->in, attn_prefix_block_start(block, j->blocks, j->chunks),
                         attn_prefix_block_start(block + 1, j->blocks, j->chunks), j->out, &b);
}

/* (m, z, S) becomes the combined state of (pm, pz, pS) followed by it: both rescaled to the
 * larger maximum (an empty side, m = -inf, weighs 0). */
void attn_efficient_combine(int d, int dv, const float *pm, const float *pz, const float *pS,
                            float *m, float *z, float *S) {
    for (int c = 0; c < d; c++) {
        float top = pm[c] > m[c] ? pm[c] : m[c];
        float before = pm[c] == -ATTN_INF ? 0.0f : attn_expf(pm[c] - top);
        float own = m[c] == -ATTN_INF ? 0.0f : attn_expf(m[c] - top);
        float *row = S + (size_t)c * dv;
        attn_scale(row, dv, own);
        attn_axpy(row, pS + (size_t)c * dv, dv, before);
        z[c] = pz[c] * before + z[c] * own;
        m[c] = top;
    }
}

static void efficient_causal(const attn_dims *dims, const attn_inputs *in, float *out, arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    attn_efficient_buffers b;
    attn_efficient_carve(d, dv, 0, ws, &b);
    /* threads: every other thread's chunk buffers, and one state per thread (see prefix_job) */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    attn_efficient_buffers slices[ATTN_MAX_THREADS];
    slices[0] = b;
    for (int t = 1; t < threads; t++) attn_efficient_carve(d, dv, 0, ws, &slices[t]);
    float *ms = 0, *zs = 0, *Ss = 0;
    if (threads > 1) {
        ms = arena_floats(ws, (uint64_t)threads * d);
        zs = arena_floats(ws, (uint64_t)threads * d);
        Ss = arena_floats(ws, (uint64_t)threads * d * dv);
    }
    if (arena_measuring(ws)) return;
    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BT) {
        int blocks = pool + 1;
        efficient_prefix_job job = {dims, in, out, blocks, (n + BT - 1) / BT, ms, zs, Ss, slices};
        attn_parallel(blocks - 1, efficient_sum_piece, &job);
        for (int p = 1; p < blocks - 1; p++) /* inclusive prefixes, in block order */
            attn_efficient_combine(d, dv, ms + (size_t)(p - 1) * d, zs + (size_t)(p - 1) * d, Ss + (size_t)(p - 1) * d * dv,
                              ms + (size_t)p * d, zs + (size_t)p * d, Ss + (size_t)p * d * dv);
        attn_parallel(blocks - 1, efficient_run_piece, &job);
        return;
    }
    attn_fill(b.m, (size_t)d, -ATTN_INF);
    attn_fill(b.z, (size_t)d, 0.0f);
    attn_fill(b.S, (size_t)d * dv, 0.0f);
    efficient_run_chunks(dims, in, 0, (n + BT - 1) / BT, out, &b);
}

/* Rows [i0, i1) of rho_q, and of k into kt's columns. */
static void efficient_weights_map(const weights_job *j, int i0, int i1) {
    int n = j->dims->n, d = j->dims->d;
    attn_softmax_rows(i1 - i0, d, j->in->q + (size_t)i0 * d, j->rho_q + (size_t)i0 * d);
    attn_transpose(i1 - i0, d, j->in->k + (size_t)i0 * d, d, j->kt + i0, n, 1.0f);
}

/* Causal rows [i0, i1) from the running m and z after each row (ms, zs), e [n] scratch. */
static void efficient_weights_causal_rows(const weights_job *j, int i0, int i1, float *e) {
    int n = j->dims->n, d = j->dims->d;
    for (int i = i0; i < i1; i++) {
        const float *m = j->ms + (size_t)i * d, *z = j->zs + (size_t)i * d;
        float *row = j->weights + (size_t)i * n;
        attn_fill(row, (size_t)n, 0.0f);
        for (int c = 0; c < d; c++) {
            attn_copy(e, j->kt + (size_t)c * n, i + 1);
            attn_exp_shift_sum(e, i + 1, m[c]);
            attn_axpy(row, e, i + 1, j->rho_q[(size_t)i * d + c] / z[c]);
        }
    }
}

static void efficient_weights_map_piece(void *ctx, int piece, int thread) {
    const weights_job *j = ctx;
    (void)thread;
    efficient_weights_map(j, piece * BI, imin(j->dims->n, piece * BI + BI));
}

static void efficient_weights_rows_piece(void *ctx, int piece, int thread) {
    const weights_job *j = ctx;
    int n = j->dims->n, d = j->dims->d, i0 = piece * BI, i1 = imin(n, i0 + BI);
    if (j->causal) {
        efficient_weights_causal_rows(j, i0, i1, j->e[thread]);
        return;
    }
    attn_gemm(i1 - i0, n, d, j->rho_q + (size_t)i0 * d, d, j->kt, n, j->weights + (size_t)i0 * n, n, 0);
}

/* A = rho_q(q) rho_k(k)^T, with rho_k over all positions, or (causal) over the prefix j <= i. */
void attn_efficient_weights(const attn_dims *dims, const attn_inputs *in, int causal, float *weights,
                            arena *ws) {
    int n = dims->n, d = dims->d;
    float *rho_q = arena_floats(ws, (uint64_t)n * d);
    float *kt = arena_floats(ws, (uint64_t)n * d);
    float *m = arena_floats(ws, (uint64_t)d);
    float *z = arena_floats(ws, (uint64_t)d);
    float *e = arena_floats(ws, (uint64_t)n);
    /* threads, causal: the running m and z after every row, and e per thread */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    float *es[ATTN_MAX_THREADS], *ms = 0, *zs = 0;
    es[0] = e;
    if (causal && threads > 1) {
        ms = arena_floats(ws, (uint64_t)n * d);
        zs = arena_floats(ws, (uint64_t)n * d);
        for (int t = 1; t < threads; t++) es[t] = arena_floats(ws, (uint64_t)n);
    }
    if (arena_measuring(ws)) return;
    int pool = attn_thread_count();
    int split = attn_weights_split(n) && (!causal || (threads > 1 && pool <= threads));
    weights_job job = {dims, in, causal, weights, rho_q, kt, ms, zs, es};
    if (split)
        attn_parallel((n + BI - 1) / BI, efficient_weights_map_piece, &job);
    else
        efficient_weights_map(&job, 0, n);
    if (!causal) {
        column_max(n, d, in->k, m);
        for (int c = 0; c < d; c++) {
            float *row = kt + (size_t)c * n;
            float sum = attn_exp_shift_sum(row, n, m[c]);
            attn_scale(row, n, 1.0f / sum);
        }
        if (split)
            attn_parallel((n + BI - 1) / BI, efficient_weights_rows_piece, &job);
        else
            attn_gemm(n, n, d, rho_q, d, kt, n, weights, n, 0);
        return;
    }
    attn_fill(m, (size_t)d, -ATTN_INF);
    attn_fill(z, (size_t)d, 0.0f);
    if (split) {
        for (int i = 0; i < n; i++) { /* the running state, row by row (O(n d)) */
            attn_efficient_absorb(d, 0, in->k + (size_t)i * d, 0, m, z, 0);
            attn_copy(ms + (size_t)i * d, m, d);
            attn_copy(zs + (size_t)i * d, z, d);
        }
        attn_parallel((n + BI - 1) / BI, efficient_weights_rows_piece, &job);
        return;
    }
    for (int i = 0; i < n; i++) {
        attn_efficient_absorb(d, 0, in->k + (size_t)i * d, 0, m, z, 0);
        float *row = weights + (size_t)i * n;
        attn_fill(row, (size_t)n, 0.0f);
        for (int c = 0; c < d; c++) {
            attn_copy(e, kt + (size_t)c * n, i + 1);
            attn_exp_shift_sum(e, i + 1, m[c]);
            attn_axpy(row, e, i + 1, rho_q[(size_t)i * d + c] / z[c]);
        }
    }
}

void attn_efficient_forward(const attn_dims *dims, const attn_inputs *in, int causal, float *out, arena *ws) {
    if (causal)
        efficient_causal(dims, in, out, ws);
    else
        efficient_full(dims, in, out, ws);
}
