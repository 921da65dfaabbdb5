/* linear.c — attention without an n x n matrix: linear (elu+1 kernel, Katharopoulos et al. 2020),
 * taylor (1 + q̂·k̂) and efficient (Shen et al. 2021).
 *
 * linear and taylor share one kernelised form with a feature map phi of width F:
 *   y_i = phi(q_i)^T S / (phi(q_i)·z + eps),  S = sum_j phi(k_j) v_j^T  [F, dv],  z = sum_j phi(k_j)
 * linear: phi(t) = elu(t) + 1, F = d.  taylor: phi(x) = [1, x/|x|], F = d + 1, which gives
 * exactly 1 + q̂·k̂ and docs/contract.md's (sum v + q̂^T sum k̂ v^T) / (n + q̂·sum k̂ + eps).
 *
 * Rows are processed in chunks of BT. Causal: y of a chunk = phi(Q) S_before + tril(phi(Q) phi(K)^T) V
 * (the chunk's own prefix), then S and z absorb the chunk. Every product is attn_gemm_tn with the
 * left operand stored transposed, so features are computed row-major and transposed once. Time O(n·F·dv + n·BT·(F+dv)); memory
 * O(F·dv + BT·(F+BT)), independent of n. Weights, when requested, are built from the definition.
 */
#include "internal.h"

static int feature_width(attn_variant v, int d) { return v == ATTN_TAYLOR ? d + 1 : d; }

float attn_taylor_norm(const float *x, int d) {
    /* |x| as max|x_c| * |x / max|x_c||, so squares cannot overflow (|x_c| up to 3.4e38) */
    float big = 0.0f, ss = 0.0f;
    for (int c = 0; c < d; c++) big = __builtin_fabsf(x[c]) > big ? __builtin_fabsf(x[c]) : big;
    for (int c = 0; c < d && big > 0.0f; c++) ss += (x[c] / big) * (x[c] / big);
    return big * __builtin_sqrtf(ss);
}

/* Columns [c, c + VW) of rows r0 .. r0+3 of x as four vectors of four rows each (column i in col[i]);
 * past column d they are 0. */
static inline void load_columns4(const float *x, int d, int c, vf col[VW]) {
    if (c + VW <= d) {
        col[0] = vf_load(x + c), col[1] = vf_load(x + d + c);
        col[2] = vf_load(x + 2 * (size_t)d + c), col[3] = vf_load(x + 3 * (size_t)d + c);
        vf_transpose4(&col[0], &col[1], &col[2], &col[3]);
        return;
    }
    float t[VW][VW] = {{0}};
    for (int i = 0; c + i < d; i++)
        for (int r = 0; r < VW; r++) t[i][r] = x[(size_t)r * d + c + i];
    for (int i = 0; i < VW; i++) col[i] = vf_load(t[i]);
}

/* attn_taylor_norm of rows 0..3 of x, one row per lane: per lane the same operations in the same
 * order (the maximum is exact in any order; the squares add over c in increasing order), so the
 * same bits, at a quarter of the scalar divisions and without the scalar chain of additions, which
 * cost taylor as much as its two matrix products. */
static void taylor_norms4(const float *x, int d, float norm[VW]) {
    vf big = vf_zero(), ss = vf_zero(), col[VW];
    for (int c = 0; c < d; c += VW) {
        load_columns4(x, d, c, col);
        for (int i = 0; i < VW && c + i < d; i++) big = vf_max(big, vf_max(col[i], vf_sub(vf_zero(), col[i])));
    }
    vf div = vf_select_gt0(big, big, vf_splat(1.0f)); /* a zero row: 0 / 1, no 0 / 0 */
    for (int c = 0; c < d; c += VW) {
        load_columns4(x, d, c, col);
        for (int i = 0; i < VW && c + i < d; i++) {
            vf q = vf_div(col[i], div);
            ss = vf_add(ss, vf_mul(q, q));
        }
    }
    ss = vf_select_gt0(big, ss, vf_zero()); /* the scalar loop skips the squares when big is 0 */
    float b[VW], s[VW];
    vf_store(b, big), vf_store(s, ss);
    for (int r = 0; r < VW; r++) norm[r] = b[r] * __builtin_sqrtf(s[r]);
}

void attn_feature_map(attn_variant v, int rows, int d, const float *x, float *dst) {
    int F = feature_width(v, d);
    float norms[VW];
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d;
        float *out = dst + (size_t)r * F;
        if (v == ATTN_TAYLOR && r % VW == 0 && r + VW <= rows) taylor_norms4(xr, d, norms);
        if (v == ATTN_LINEAR) {
            int c = 0;
            for (; c + VW <= d; c += VW) {
                /* elu(t) + 1 = max(t, 0) + exp(min(t, 0)): t + 1 for t > 0 (exp(0) is exactly 1),
                 * exp(t) otherwise (+-0 + e is e), the bits of a select between t + 1 and exp(t),
                 * without the compare and the select (about 3 of the 30 operations of a vector).
                 * min also keeps exp away from large t. */
                vf t = vf_load(xr + c);
                vf_store(out + c, vf_add(vf_max(t, vf_zero()), vf_exp_nonpositive(vf_min(t, vf_zero()))));
            }
            for (; c < d; c++) out[c] = xr[c] > 0.0f ? xr[c] + 1.0f : attn_expf(xr[c]);
        } else { /* taylor */
            float norm = r - r % VW + VW <= rows ? norms[r % VW] : attn_taylor_norm(xr, d);
            out[0] = 1.0f;
            /* divide rather than multiply by 1/norm: for d = 1, x / sqrt(x*x) is exactly +-1,
             * so opposite unit vectors give a similarity of exactly 0 */
            float den = norm > 1e-12f ? norm : 1e-12f;
            for (int c = 0; c < d; c++) out[1 + c] = xr[c] / den;
        }
    }
}

/* z[c] += sum_r x[r, c] (row stride ldx), rows in increasing order. Additions, not
 * attn_axpy(.., 1.0f): 1 * x is exact, so the bits are those of the multiply-adds (fused or not),
 * at one operation a vector instead of 2. */
/* Columns in blocks of 4 VW, their sums in registers down all the rows: row by row, each z vector
 * went through memory once a row (a store-to-load round trip per addition). */
static void add_column_sums_ld(int rows, int cols, const float *x, size_t ldx, float *z) {
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

static void add_column_sums(int rows, int cols, const float *x, float *z) { add_column_sums_ld(rows, cols, x, (size_t)cols, z); }

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
    int n = dims->n, d = dims->d, dv = dims->dv, F = feature_width(v, d);
    /* taylor: the product over features 1..d alone, in whole blocks of KP rows when d is a multiple
     * of KP (over all F = d + 1 rows the last block held one row and cost a whole one) */
    int f0 = v == ATTN_TAYLOR ? 1 : 0;
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *vb = in->v + (size_t)t0 * dv;
        attn_feature_map(v, bt, d, in->k + (size_t)t0 * d, phi_k);
        if (f0) add_rows(bt, dv, vb, S);
        attn_gemm_tn(F - f0, dv, bt, phi_k + f0, F, vb, dv, S + (size_t)f0 * dv, dv, 1);
        add_column_sums(bt, F, phi_k, z);
        if (v == ATTN_TAYLOR) z[0] = (float)(t0 + bt); /* a count; float sums stall at 2^24 */
    }
}

void attn_kernel_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in, int t0,
                       int bt, float eps, int causal, float *y, const attn_kernel_buffers *b) {
    int d = dims->d, dv = dims->dv, F = feature_width(v, d);
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
    int dv = dims->dv, F = feature_width(v, dims->d);
    attn_gemm_tn(F, dv, bt, b->phi_k, F, in->v + (size_t)t0 * dv, dv, b->S, dv, 1);
    add_column_sums(bt, F, b->phi_k, b->z);
    if (v == ATTN_TAYLOR) b->z[0] = (float)(t0 + bt); /* a count; float sums stall at 2^24 */
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
    int n = dims->n, d = dims->d, dv = dims->dv, F = feature_width(v, d);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        attn_feature_map(v, bt, d, in->k + (size_t)t0 * d, phi_k);
        attn_gemm_tn(rows, dv, bt, phi_k + f0, F, in->v + (size_t)t0 * dv, dv, S + (size_t)f0 * dv, dv, 1);
        add_column_sums_ld(bt, rows, phi_k + f0, (size_t)F, z + f0);
        if (v == ATTN_TAYLOR && f0 == 0) z[0] = (float)(t0 + bt); /* as attn_absorb_keys */
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

/* First chunk of block b in [0, blocks]: cumulative weights 1, 4, 7, ... of 1 + 3 (blocks - 1). */
static int prefix_block_start(int b, int blocks, int chunks) {
    if (b <= 0) return 0;
    int64_t total = 1 + 3 * (int64_t)(blocks - 1);
    return (int)((int64_t)chunks * (1 + 3 * (int64_t)(b - 1)) / total);
}

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
    int c0 = prefix_block_start(piece, j->blocks, j->chunks), c1 = prefix_block_start(piece + 1, j->blocks, j->chunks);
    if (piece == 0) { /* block 0 starts from zero: its outputs now, and its state with them */
        kernel_run_chunks(j, c0, c1, &b);
        return;
    }
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        attn_feature_map(j->v, bt, d, j->in->k + (size_t)t0 * d, b.phi_k);
        attn_gemm_tn(F, dv, bt, b.phi_k, F, j->in->v + (size_t)t0 * dv, dv, b.S, dv, 1);
        add_column_sums(bt, F, b.phi_k, b.z);
        if (j->v == ATTN_TAYLOR) b.z[0] = (float)(t0 + bt - c0 * BT); /* the block's count, as absorb counts */
    }
}

static void prefix_run_piece(void *ctx, int piece, int thread) {
    const prefix_job *j = ctx;
    int F = j->F, dv = j->dims->dv, block = piece + 1;
    attn_kernel_buffers b = j->slices[thread];
    b.S = j->S + (size_t)piece * F * dv, b.z = j->z + (size_t)piece * F; /* the prefix before it */
    kernel_run_chunks(j, prefix_block_start(block, j->blocks, j->chunks),
                      prefix_block_start(block + 1, j->blocks, j->chunks), &b);
}

static void kernelized(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                       int causal, float *out, arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = feature_width(v, d);
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
 * Every row of A is computed from whole-sequence tables (phi(q), phi(k)^T; efficient's rho_q, the
 * normalised exp(k - m)^T, or causal the running m and z after each row), which are themselves
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
    float *phi_q, *phi_k, *phi_kt; /* kernelised */
    float *rho_q, *kt, *ms, *zs;   /* efficient; ms, zs: m and z after each row (causal) */
    float **e;                     /* efficient causal: per thread, [n] */
} weights_job;

static int weights_split(int n) { return n > BI && attn_thread_count() > 1; }

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
static void kernelized_weights(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                               float eps, int causal, float *weights, arena *ws) {
    int n = dims->n, d = dims->d, F = feature_width(v, d);
    float *phi_q = arena_floats(ws, (uint64_t)n * F);
    float *phi_k = arena_floats(ws, (uint64_t)n * F);
    float *phi_kt = arena_floats(ws, (uint64_t)n * F);
    if (arena_measuring(ws)) return;
    weights_job job = {v, dims, in, eps, causal, F, weights, phi_q, phi_k, phi_kt, 0, 0, 0, 0, 0};
    if (weights_split(n)) {
        attn_parallel((n + BI - 1) / BI, kernel_weights_map_piece, &job);
        attn_parallel((n + BI - 1) / BI, kernel_weights_rows_piece, &job);
        return;
    }
    kernel_weights_map(&job, 0, n);
    kernel_weights_rows(&job, 0, n);
}

/* Column maxima of k [n, d] into m [d]. */
/* m[c] = max_i k[i, c] for columns [c0, c1), c0 a multiple of VW: vectors over whole groups of
 * VW columns, scalars for the rest, so a column is computed alike whichever range holds it. */
static void column_max_range(int n, int d, const float *k, int c0, int c1, float *m) {
    int c = c0;
    /* blocks of 4 VW columns with their maxima in registers down all the rows (as
     * add_column_sums_ld); rows in the same order, so the same result even with a NaN */
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
        add_column_sums_ld(bt, c1 - c0, e + c0, (size_t)d, z + c0);
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
                load_columns4(x, d, c, col);
                for (int i = 0; i < VW; i++) m = vf_max(m, col[i]);
            }
            for (int p = 0; p < 2 * VW; p++) acc[p] = vf_zero();
            for (int c = 0; c < d; c += VW) {
                load_columns4(x, d, c, col);
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

/* One row: the state absorbs (k, v), then y = sum_c rho_q(q)_c S_c / z_c; rho [d] is scratch. */
static void efficient_step(int d, int dv, const float *q, const float *k, const float *v, float *m, float *z,
                           float *S, float *rho, float *y) {
    attn_efficient_absorb(d, dv, k, v, m, z, S);
    attn_softmax_rows(1, d, q, rho);
    attn_fill(y, (size_t)dv, 0.0f);
    for (int c = 0; c < d; c++) attn_axpy(y, S + (size_t)c * dv, dv, rho[c] / z[c]);
}

void attn_efficient_rows(int d, int dv, const attn_inputs *in, int i0, int i1, float *out,
                         const attn_efficient_buffers *b) {
    for (int i = i0; i < i1; i++)
        efficient_step(d, dv, in->q + (size_t)i * d, in->k + (size_t)i * d, in->v + (size_t)i * dv, b->m, b->z,
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
    add_column_sums(bt, d, b->E, b->z);
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
    int c0 = prefix_block_start(piece, j->blocks, j->chunks), c1 = prefix_block_start(piece + 1, j->blocks, j->chunks);
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
    efficient_run_chunks(j->dims, j->in, prefix_block_start(block, j->blocks, j->chunks),
                         prefix_block_start(block + 1, j->blocks, j->chunks), j->out, &b);
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
static void efficient_weights(const attn_dims *dims, const attn_inputs *in, int causal,
                              float *weights, arena *ws) {
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
    int split = weights_split(n) && (!causal || (threads > 1 && pool <= threads));
    weights_job job = {ATTN_EFFICIENT, dims, in, 0.0f, causal, d, weights, 0, 0, 0, rho_q, kt, ms, zs, es};
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

void attn_linear_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, float *out, float *weights, arena *ws) {
    int causal = opt->causal != 0;
    if (v == ATTN_EFFICIENT) {
        if (causal)
            efficient_causal(dims, in, out, ws);
        else
            efficient_full(dims, in, out, ws);
        if (weights) efficient_weights(dims, in, causal, weights, ws);
    } else {
        kernelized(v, dims, in, opt->eps, causal, out, ws);
        if (weights) kernelized_weights(v, dims, in, opt->eps, causal, weights, ws);
    }
}

int attn_state_width(attn_variant v, int d) { return feature_width(v, d); }

void attn_linear_state(attn_variant v, const attn_dims *dims, const attn_inputs *in, float *state,
                       float *normalizer, arena *ws) {
    int d = dims->d, dv = dims->dv, F = feature_width(v, d);
    if (v == ATTN_EFFICIENT) {
        float *m = arena_floats(ws, (uint64_t)d);
        float *chunk_max = arena_floats(ws, (uint64_t)d);
        float *e = arena_floats(ws, (uint64_t)BT * d);
        float *z = arena_floats(ws, (uint64_t)d);
        if (arena_measuring(ws)) return;
        attn_efficient_context(dims, in, m, chunk_max, e, state, z);
        for (int c = 0; c < d; c++) normalizer[c] = m[c] + attn_logf(z[c]); /* log sum_j exp(k_jc) */
        return;
    }
    float *phi_k = arena_floats(ws, (uint64_t)BT * F);
    if (arena_measuring(ws)) return;
    attn_fill(state, (size_t)F * dv, 0.0f);
    attn_fill(normalizer, (size_t)F, 0.0f);
    attn_absorb_keys(v, dims, in, phi_k, state, normalizer);
}

/* ---- decoding: one position at a time ----
 * The causal recurrences above, one row per call: O(F * dv) work and state whatever the position,
 * the "transformers are RNNs" property. The state is S [F, dv] then z [F] (efficient: then m [d]). */

int64_t attn_linear_step_floats(attn_variant v, int d, int dv) {
    int64_t F = feature_width(v, d);
    return F * dv + F + (v == ATTN_EFFICIENT ? d : 0);
}

void attn_linear_step_reset(attn_variant v, int d, int dv, float *state) {
    attn_fill(state, (size_t)attn_linear_step_floats(v, d, dv), 0.0f);
    if (v == ATTN_EFFICIENT) /* no key seen yet: every running maximum starts at -inf */
        attn_fill(state + (size_t)d * dv + d, (size_t)d, -ATTN_INF);
}

int attn_linear_step_scratch(attn_variant v, int d) { return v == ATTN_EFFICIENT ? d : 2 * feature_width(v, d); }

void attn_linear_step(attn_variant v, int d, int dv, float eps, int t, const float *q, const float *k,
                      const float *v_row, float *state, float *scratch, float *y) {
    if (v == ATTN_EFFICIENT) { /* the forward pass's exact row-by-row update */
        float *S = state, *z = S + (size_t)d * dv, *m = z + d;
        efficient_step(d, dv, q, k, v_row, m, z, S, scratch, y);
        return;
    }
    /* S += phi(k) v^T, z += phi(k); y = phi(q)^T S / (phi(q).z + eps) */
    int F = feature_width(v, d);
    float *S = state, *z = state + (size_t)F * dv, *phi_q = scratch, *phi_k = scratch + F;
    attn_feature_map(v, 1, d, k, phi_k);
    for (int f = 0; f < F; f++) attn_axpy(S + (size_t)f * dv, v_row, dv, phi_k[f]);
    attn_axpy(z, phi_k, F, 1.0f);
    if (v == ATTN_TAYLOR) z[0] = (float)(t + 1); /* a count, as in the forward pass */
    attn_feature_map(v, 1, d, q, phi_q);
    attn_fill(y, (size_t)dv, 0.0f);
    for (int f = 0; f < F; f++) attn_axpy(y, S + (size_t)f * dv, dv, phi_q[f]);
    float den = 0.0f;
    for (int f = 0; f < F; f++) den += phi_q[f] * z[f];
    attn_scale(y, dv, 1.0f / (den + eps));
}
