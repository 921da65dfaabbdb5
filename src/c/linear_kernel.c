/* linear_kernel.c — the kernelised form of the linear family (elu+1, Katharopoulos et al. 2020;
 * taylor), with a feature map phi of width F (linear_features.c):
 *   y_i = phi(q_i)^T S / (phi(q_i)·z + eps),  S = sum_j phi(k_j) v_j^T  [F, dv],  z = sum_j phi(k_j)
 *
 * Rows are processed in chunks of BT. Causal: y of a chunk = phi(Q) S_before + tril(phi(Q) phi(K)^T) V
 * (the chunk's own prefix), then S and z absorb the chunk. Every product is attn_gemm_tn with the
 * left operand stored transposed, so features are computed row-major and transposed once. Time
 * O(n·F·dv + n·BT·(F+dv)); memory O(F·dv + BT·(F+BT)), independent of n. Weights, when requested,
 * are built from the definition.
 */
#include "internal.h"

/* den[q] = sum_f xt[f][q] * z[f] for q < bt: the normaliser of bt queries, vectorised over q. */
static void transposed_dot(int F, int bt, const float *xt, const float *z, float *den) {
    /* the fill and attn_axpy per feature, with each block of 4 VW queries in registers down all
     * the features: the same multiply-adds in the same order (0 + z[0] x[0] + z[1] x[1] + ...) */
    int q = 0;
    for (; q + 4 * VW <= bt; q += 4 * VW) {
        vf s0 = vf_zero(), s1 = vf_zero(), s2 = vf_zero(), s3 = vf_zero();
        for (int f = 0; f < F; f++) {
            const float *xf = xt + (size_t)f * BT + q;
            vf zf = vf_splat(z[f]);
            s0 = vf_madd(zf, vf_load(xf), s0), s1 = vf_madd(zf, vf_load(xf + VW), s1);
            s2 = vf_madd(zf, vf_load(xf + 2 * VW), s2), s3 = vf_madd(zf, vf_load(xf + 3 * VW), s3);
        }
        vf_store(den + q, s0), vf_store(den + q + VW, s1), vf_store(den + q + 2 * VW, s2), vf_store(den + q + 3 * VW, s3);
    }
    attn_fill(den + q, (size_t)(bt - q), 0.0f);
    for (int f = 0; f < F; f++) attn_axpy(den + q, xt + (size_t)f * BT + q, bt - q, z[f]);
}

/* Row 0 of taylor's S, the sum of v over bt rows: its feature is the constant 1 and 1 * v is exact,
 * so these additions round as the matrix product's multiply-adds would (fused or not). */
static void add_rows(int bt, int dv, const float *vb, float *s) {
    for (int r = 0; r < bt; r++) {
        const float *vr = vb + (size_t)r * dv;
        int c = 0;
        for (; c + VW <= dv; c += VW) vf_store(s + c, vf_add(vf_load(s + c), vf_load(vr + c)));
        for (; c < dv; c++) s[c] += vr[c];
    }
}

void attn_absorb_keys(attn_variant v, const attn_dims *dims, const attn_inputs *in, float *phi_k,
                      float *S, float *z) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    /* taylor: the product over features 1..d alone, in whole blocks of KP rows when d is a multiple
     * of KP (over all F = d + 1 rows the last block held one row and cost a whole one) */
    int f0 = attn_leads_with_one(v);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *vb = in->v + (size_t)t0 * dv;
        attn_feature_map(v, bt, d, in->k + (size_t)t0 * d, phi_k);
        if (f0) add_rows(bt, dv, vb, S);
        attn_gemm_tn(F - f0, dv, bt, phi_k + f0, F, vb, dv, S + (size_t)f0 * dv, dv, 1);
        attn_add_column_sums(bt, F, phi_k, (size_t)F, z);
        if (attn_leads_with_one(v)) z[0] = (float)(t0 + bt); /* a count; float sums stall at 2^24 */
    }
}

void attn_kernel_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in, int t0,
                       int bt, float eps, int causal, float *y, const attn_kernel_buffers *b) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    attn_feature_map(v, bt, d, in->q + (size_t)t0 * d, b->phi_q);
    attn_transpose(bt, F, b->phi_q, F, b->phi_qt, BT, 1.0f);
    attn_gemm_tn(bt, dv, F, b->phi_qt, BT, b->S, dv, y, dv, 0);
    transposed_dot(F, bt, b->phi_qt, b->z, b->den);
    if (causal) { /* the chunk's own keys, j <= i */
        attn_feature_map(v, bt, d, in->k + (size_t)t0 * d, b->phi_k);
        attn_transpose(bt, F, b->phi_k, F, b->phi_kt, BT, 1.0f);
        attn_gemm_tn(bt, bt, F, b->phi_kt, BT, b->phi_qt, BT, b->PT, BT, 0);
        for (int key = 1; key < bt; key++) attn_fill(b->PT + (size_t)key * BT, (size_t)key, 0.0f);
        for (int key = 0; key < bt; key++) attn_axpy(b->den, b->PT + (size_t)key * BT, bt, 1.0f);
        attn_gemm_tn(bt, dv, bt, b->PT, BT, in->v + (size_t)t0 * dv, dv, y, dv, 1);
    }
    for (int r = 0; r < bt; r++) attn_scale(y + (size_t)r * dv, dv, 1.0f / (b->den[r] + eps));
}

void attn_kernel_absorb(attn_variant v, const attn_dims *dims, const attn_inputs *in, int t0,
                        int bt, const attn_kernel_buffers *b) {
    int dv = dims->dv, F = attn_state_width(v, dims->d);
    attn_gemm_tn(F, dv, bt, b->phi_k, F, in->v + (size_t)t0 * dv, dv, b->S, dv, 1);
    attn_add_column_sums(bt, F, b->phi_k, (size_t)F, b->z);
    if (attn_leads_with_one(v)) b->z[0] = (float)(t0 + bt); /* a count; float sums stall at 2^24 */
}

/* ---- threads (not causal): the state by rows of S, then the outputs by chunks ----
 * S[f, :] and z[f] of a block of feature rows sum the keys chunk by chunk in increasing order, as
 * one thread does, and each output chunk reads only the totals: bit-identical to one thread (each
 * piece maps the keys' features again, a small part of the work). */
typedef struct kernel_job {
    attn_variant v;
    const attn_dims *dims;
    const attn_inputs *in;
    float eps, *out;
    int F, rows; /* rows of S per state piece, a multiple of KP */
    const attn_kernel_buffers *slices; /* per thread: its phi buffers and den; S, z shared */
} kernel_job;

void attn_absorb_keys_rows(attn_variant v, const attn_dims *dims, const attn_inputs *in, int f0,
                           int rows, float *phi_k, float *S, float *z) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        attn_feature_map(v, bt, d, in->k + (size_t)t0 * d, phi_k);
        attn_gemm_tn(rows, dv, bt, phi_k + f0, F, in->v + (size_t)t0 * dv, dv, S + (size_t)f0 * dv, dv, 1);
        attn_add_column_sums(bt, rows, phi_k + f0, (size_t)F, z + f0);
        if (attn_leads_with_one(v) && f0 == 0) z[0] = (float)(t0 + bt); /* as attn_absorb_keys */
    }
}

static void state_piece(void *ctx, int piece, int thread) {
    const kernel_job *j = ctx;
    const attn_kernel_buffers *b = &j->slices[thread];
    int f0 = piece * j->rows, rows = imin(j->rows, j->F - f0);
    attn_absorb_keys_rows(j->v, j->dims, j->in, f0, rows, b->phi_k, b->S, b->z);
}

static void output_piece(void *ctx, int piece, int thread) {
    const kernel_job *j = ctx;
    int t0 = piece * BT, bt = imin(BT, j->dims->n - t0);
    attn_kernel_chunk(j->v, j->dims, j->in, t0, bt, j->eps, 0, j->out + (size_t)t0 * j->dims->dv, &j->slices[thread]);
}

/* ---- threads (causal): a parallel prefix of states over blocks of chunks ----
 * The causal state after chunk c is the sum of every earlier chunk's phi(k)^T v (and phi(k)), so
 * the chunks split into `blocks` consecutive blocks, block b starting from the sum of blocks < b:
 *   pass 1 (parallel): block 0 runs its outputs from the zero state, which leaves its total state;
 *           blocks 1 .. blocks-2 each sum their own keys from zero (the last block's sum is unused);
 *   pass 2 (serial, blocks-2 additions of F x dv): the sums become inclusive prefixes in place;
 *   pass 3 (parallel): blocks 1 .. blocks-1 run their outputs from the prefix before them.
 * blocks = threads + 1, so each pass is one piece per thread. Block 0 runs outputs while the others
 * only sum keys (about a third of a chunk's output work), so block 0 gets weight 1 and the others 3.
 * Boundaries and the combine order depend on the thread count alone: deterministic per thread
 * count, but a state sums its chunks in another grouping than one thread does, so the bits differ
 * from one thread's (within the accuracy bar). */
typedef struct prefix_job {
    attn_variant v;
    const attn_dims *dims;
    const attn_inputs *in;
    float eps, *out;
    int F, blocks, chunks;
    float *S, *z; /* per block but the last: its state [F, dv] and [F], blocks - 1 of each */
    const attn_kernel_buffers *slices; /* per thread: phi buffers, PT, den (S, z set per block) */
} prefix_job;

/* Chunks [c0, c1) of y from the state in b, which absorbs each chunk after its outputs: the
 * serial loop's body, on any range of chunks. */
static void kernel_run_chunks(const prefix_job *j, int c0, int c1, const attn_kernel_buffers *b) {
    int n = j->dims->n, dv = j->dims->dv;
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        attn_kernel_chunk(j->v, j->dims, j->in, t0, bt, j->eps, 1, j->out + (size_t)t0 * dv, b);
        attn_kernel_absorb(j->v, j->dims, j->in, t0, bt, b);
    }
}

static void prefix_sum_piece(void *ctx, int piece, int thread) {
    const prefix_job *j = ctx;
    int n = j->dims->n, d = j->dims->d, dv = j->dims->dv, F = j->F;
    attn_kernel_buffers b = j->slices[thread];
    b.S = j->S + (size_t)piece * F * dv, b.z = j->z + (size_t)piece * F;
    attn_fill(b.S, (size_t)F * dv, 0.0f);
    attn_fill(b.z, (size_t)F, 0.0f);
    int c0 = attn_prefix_block_start(piece, j->blocks, j->chunks), c1 = attn_prefix_block_start(piece + 1, j->blocks, j->chunks);
    if (piece == 0) { /* block 0 starts from zero: its outputs now, and its state with them */
        kernel_run_chunks(j, c0, c1, &b);
        return;
    }
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        attn_feature_map(j->v, bt, d, j->in->k + (size_t)t0 * d, b.phi_k);
        attn_gemm_tn(F, dv, bt, b.phi_k, F, j->in->v + (size_t)t0 * dv, dv, b.S, dv, 1);
        attn_add_column_sums(bt, F, b.phi_k, (size_t)F, b.z);
        if (attn_leads_with_one(j->v)) b.z[0] = (float)(t0 + bt - c0 * BT); /* the block's count, as absorb counts */
    }
}

static void prefix_run_piece(void *ctx, int piece, int thread) {
    const prefix_job *j = ctx;
    int F = j->F, dv = j->dims->dv, block = piece + 1;
    attn_kernel_buffers b = j->slices[thread];
    b.S = j->S + (size_t)piece * F * dv, b.z = j->z + (size_t)piece * F; /* the prefix before it */
    kernel_run_chunks(j, attn_prefix_block_start(block, j->blocks, j->chunks),
                      attn_prefix_block_start(block + 1, j->blocks, j->chunks), &b);
}

void attn_kernel_forward(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                         int causal, float *out, arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    attn_kernel_buffers b;
    b.phi_k = arena_floats(ws, (uint64_t)BT * F);  /* [bt, F]: also phi(q) before its transpose */
    b.phi_q = b.phi_k;
    b.phi_kt = arena_floats(ws, (uint64_t)F * BT); /* [F, BT] */
    b.phi_qt = arena_floats(ws, (uint64_t)F * BT); /* [F, BT] */
    b.PT = arena_floats(ws, (uint64_t)BT * BT);    /* [key, query] within a chunk */
    b.S = arena_floats(ws, (uint64_t)F * dv);
    b.z = arena_floats(ws, (uint64_t)F);
    b.den = arena_floats(ws, (uint64_t)BT);
    /* the other threads' feature buffers and normalisers; causal, also their phi(k)^T and PT, and
     * one state per thread (the blocks of the prefix but the last) */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    attn_kernel_buffers slices[ATTN_MAX_THREADS];
    slices[0] = b;
    for (int t = 1; t < threads; t++) {
        slices[t] = b;
        slices[t].phi_k = slices[t].phi_q = arena_floats(ws, (uint64_t)BT * F);
        slices[t].phi_qt = arena_floats(ws, (uint64_t)F * BT);
        slices[t].den = arena_floats(ws, (uint64_t)BT);
        if (causal) {
            slices[t].phi_kt = arena_floats(ws, (uint64_t)F * BT);
            slices[t].PT = arena_floats(ws, (uint64_t)BT * BT);
        }
    }
    float *states = 0, *norms = 0;
    if (causal && threads > 1) {
        states = arena_floats(ws, (uint64_t)threads * F * dv);
        norms = arena_floats(ws, (uint64_t)threads * F);
    }
    if (arena_measuring(ws)) return;
    attn_fill(b.S, (size_t)F * dv, 0.0f);
    attn_fill(b.z, (size_t)F, 0.0f);
    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BT) {
        if (causal) {
            int chunks = (n + BT - 1) / BT, blocks = pool + 1;
            prefix_job job = {v, dims, in, eps, out, F, blocks, chunks, states, norms, slices};
            attn_parallel(blocks - 1, prefix_sum_piece, &job);
            for (int p = 1; p < blocks - 1; p++) { /* inclusive prefixes, in block order */
                attn_axpy(states + (size_t)p * F * dv, states + (size_t)(p - 1) * F * dv, F * dv, 1.0f);
                attn_axpy(norms + (size_t)p * F, norms + (size_t)(p - 1) * F, F, 1.0f);
            }
            attn_parallel(blocks - 1, prefix_run_piece, &job);
            return;
        }
        /* state pieces: about two per thread of whole KP-row blocks of S */
        int rows = round_up(imax(KP, (F + 2 * pool - 1) / (2 * pool)), KP);
        kernel_job job = {v, dims, in, eps, out, F, rows, slices};
        attn_parallel((F + rows - 1) / rows, state_piece, &job);
        attn_parallel((n + BT - 1) / BT, output_piece, &job);
        return;
    }
    if (!causal) attn_absorb_keys(v, dims, in, b.phi_k, b.S, b.z); /* then every query against the totals */
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        attn_kernel_chunk(v, dims, in, t0, bt, eps, causal, out + (size_t)t0 * dv, &b);
        if (causal) attn_kernel_absorb(v, dims, in, t0, bt, &b);
    }
}

/* ---- weights over threads: blocks of BI query rows ----
 * Every row of A is computed from whole-sequence tables (phi(q), phi(k)^T; efficient.c has its own), which are themselves
 * built row by row or column by column. Pass 1 builds the row-wise tables by row blocks, the
 * column-wise ones stay on the calling thread, pass 2 computes the rows of A by row blocks: each
 * element with one thread's operations in one thread's order, so bit-identical (the matrix
 * product's rows go in whole blocks of 4, as one thread's). */
typedef struct weights_job {
    attn_variant v;
    const attn_dims *dims;
    const attn_inputs *in;
    float eps;
    int causal, F;
    float *weights;
    float *phi_q, *phi_k, *phi_kt;
} weights_job;

static void kernel_weights_map(const weights_job *j, int i0, int i1) {
    int n = j->dims->n, d = j->dims->d, F = j->F;
    attn_feature_map(j->v, i1 - i0, d, j->in->q + (size_t)i0 * d, j->phi_q + (size_t)i0 * F);
    attn_feature_map(j->v, i1 - i0, d, j->in->k + (size_t)i0 * d, j->phi_k + (size_t)i0 * F);
    attn_transpose(i1 - i0, F, j->phi_k + (size_t)i0 * F, F, j->phi_kt + i0, n, 1.0f);
}

static void kernel_weights_rows(const weights_job *j, int i0, int i1) {
    int n = j->dims->n, F = j->F;
    attn_gemm(i1 - i0, n, F, j->phi_q + (size_t)i0 * F, F, j->phi_kt, n, j->weights + (size_t)i0 * n, n, 0);
    for (int i = i0; i < i1; i++) {
        float *row = j->weights + (size_t)i * n;
        int valid = j->causal ? i + 1 : n;
        attn_fill(row + valid, (size_t)(n - valid), 0.0f);
        float sum = 0.0f;
        for (int k = 0; k < valid; k++) sum += row[k];
        attn_scale(row, valid, 1.0f / (sum + j->eps));
    }
}

static void kernel_weights_map_piece(void *ctx, int piece, int thread) {
    const weights_job *j = ctx;
    (void)thread;
    kernel_weights_map(j, piece * BI, imin(j->dims->n, piece * BI + BI));
}

static void kernel_weights_rows_piece(void *ctx, int piece, int thread) {
    const weights_job *j = ctx;
    (void)thread;
    kernel_weights_rows(j, piece * BI, imin(j->dims->n, piece * BI + BI));
}

/* A[i, j] = phi(q_i)·phi(k_j) / (sum_{j' (<= i)} phi(q_i)·phi(k_j') + eps). */
void attn_kernel_weights(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                         int causal, float *weights, arena *ws) {
    int n = dims->n, d = dims->d, F = attn_state_width(v, d);
    float *phi_q = arena_floats(ws, (uint64_t)n * F);
    float *phi_k = arena_floats(ws, (uint64_t)n * F);
    float *phi_kt = arena_floats(ws, (uint64_t)n * F);
    if (arena_measuring(ws)) return;
    weights_job job = {v, dims, in, eps, causal, F, weights, phi_q, phi_k, phi_kt};
    if (attn_weights_split(n)) {
        attn_parallel((n + BI - 1) / BI, kernel_weights_map_piece, &job);
        attn_parallel((n + BI - 1) / BI, kernel_weights_rows_piece, &job);
        return;
    }
    kernel_weights_map(&job, 0, n);
    kernel_weights_rows(&job, 0, n);
}
