/* linear_kernel_backward.c — gradients of the kernelised form of the linear family (elu+1,
 * taylor; linear_kernel.c), causal and not, in O(F*dv) state: a forward sweep, then a reverse
 * sweep of the prefix sums when causal.
 *
 * y_i = phi(q_i)^T S / den_i, den_i = phi(q_i)·z + eps. With
 * G_i = dout_i / den_i and a_i = -G_i·y_i (the gradient of 1/den):
 *   d phi(q_i) = S G_i + a_i z,   dS = sum_i phi(q_i) G_i^T,   dz = sum_i a_i phi(q_i),
 *   d phi(k_j) = dS v_j + dz,     dv_j = dS^T phi(k_j),
 * where, causal, S and z are the prefixes up to i and dS, dz the suffixes from j. Non-causal: S and
 * z, then one pass over the queries (y, dq, dS, dz), then one over the keys. Causal: the forward
 * sweep carries S and z and does everything a chunk needs of itself — y, dq whole, and the chunk's
 * own (triangular) share of d phi(k) — with dP[i, j] = G_i·v_j + a_i for j <= i:
 *   d phi(Q) = G S^T + a z^T + dP phi(K),   d phi(K) (own) = dP^T phi(Q).
 * The reverse sweep carries dS and dz from the last chunk back and adds the later chunks' share:
 *   d phi(K) += V dS^T + dz,   dV = P^T G + phi(K) dS,   then dS += phi(Q)^T G, dz += phi(Q)^T a.
 * Between the sweeps, grads->k holds the own share of d phi(k) and grads->v holds G, each row
 * overwritten by its gradient when the reverse sweep reaches it, so the workspace does not grow
 * with n.
 *
 * Threads: each pass splits as the forward pass does (see kernel_grad_job): bit-identical to one
 * thread when not causal, a parallel prefix and suffix over blocks of chunks when causal.
 */
#include "internal.h"

typedef struct kernel_grad_buffers {
    attn_kernel_buffers f;
    float *G;          /* [BT, dv]: dout / den */
    float *a;          /* [BT]: -G_i·y_i */
    float *dP;         /* [query, key] */
    float *VT, *ST;    /* [dv, BT], [dv, F] */
    float *dphi;       /* [BT, F] */
    float *dS, *dST;   /* [F, dv], [dv, F] */
    float *dz;         /* [F] */
} kernel_grad_buffers;

/* G and a of bt rows from dout (or a stashed G when dout is NULL), y and den. */
static void scaled_grads(int bt, int dv, const float *dout, const float *y, const float *den,
                         float eps, float *G, float *a) {
    for (int r = 0; r < bt; r++) {
        float *gr = G + (size_t)r * dv;
        if (dout) {
            attn_copy(gr, dout + (size_t)r * dv, dv);
            attn_scale(gr, dv, 1.0f / (den[r] + eps));
        }
        a[r] = -attn_dot_in_order(gr, y + (size_t)r * dv, dv);
    }
}

/* x[r] += s[r] * z for each of rows rows of x [rows, F]. */
static void add_scaled_rows(int rows, int F, float *x, const float *s, const float *z) {
    for (int r = 0; r < rows; r++) attn_axpy(x + (size_t)r * F, z, F, s[r]);
}

/* z += sum_r s[r] x[r]. */
static void add_weighted_rows(int rows, int F, const float *x, const float *s, float *z) {
    for (int r = 0; r < rows; r++) attn_axpy(z, x + (size_t)r * F, F, s[r]);
}

/* Non-causal, one query chunk: y, G and a, d phi(q) and dq. */
static void full_query_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                             const float *dout, float *out, const attn_grads *grads, int t0, int bt,
                             kernel_grad_buffers *b) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    float *y = out + (size_t)t0 * dv;
    attn_kernel_chunk(v, dims, in, t0, bt, eps, 0, y, &b->f);
    scaled_grads(bt, dv, dout + (size_t)t0 * dv, y, b->f.den, eps, b->G, b->a);
    attn_gemm(bt, F, dv, b->G, dv, b->ST, F, b->dphi, F, 0);
    add_scaled_rows(bt, F, b->dphi, b->a, b->f.z);
    attn_feature_map_grad(v, bt, d, in->q + (size_t)t0 * d, b->f.phi_q, b->dphi, grads->q + (size_t)t0 * d);
}

/* Non-causal, one key chunk: d phi(k) = dS v + dz, dk and dv (b->dST, b->dS, b->dz: the totals). */
static void full_key_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_grads *grads, int t0, int bt, kernel_grad_buffers *b) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    const float *kb = in->k + (size_t)t0 * d, *vb = in->v + (size_t)t0 * dv;
    attn_feature_map(v, bt, d, kb, b->f.phi_k);
    attn_gemm(bt, F, dv, vb, dv, b->dST, F, b->dphi, F, 0);
    for (int r = 0; r < bt; r++) attn_axpy(b->dphi + (size_t)r * F, b->dz, F, 1.0f);
    attn_feature_map_grad(v, bt, d, kb, b->f.phi_k, b->dphi, grads->k + (size_t)t0 * d);
    attn_gemm(bt, dv, F, b->f.phi_k, F, b->dS, dv, grads->v + (size_t)t0 * dv, dv, 0);
}

static void kernel_full(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                        const float *dout, float *out, const attn_grads *grads,
                        kernel_grad_buffers *b) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    attn_absorb_keys(v, dims, in, b->f.phi_k, b->f.S, b->f.z);
    attn_transpose(F, dv, b->f.S, dv, b->ST, F, 1.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        full_query_chunk(v, dims, in, eps, dout, out, grads, t0, bt, b);
        attn_gemm_tn(F, dv, bt, b->f.phi_q, F, b->G, dv, b->dS, dv, 1);
        add_weighted_rows(bt, F, b->f.phi_q, b->a, b->dz);
    }
    attn_transpose(F, dv, b->dS, dv, b->dST, F, 1.0f);
    for (int t0 = 0; t0 < n; t0 += BT) full_key_chunk(v, dims, in, grads, t0, imin(BT, n - t0), b);
}

/* Causal, forward sweep of one chunk: y, dq whole, the chunk's own share of d phi(k) into
 * grads->k and G into grads->v (for the reverse sweep); then the state absorbs the chunk. phi(q),
 * G and a stay in b. */
static void causal_forward_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                                 float eps, const float *dout, float *out, const attn_grads *grads,
                                 int t0, int bt, kernel_grad_buffers *b) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    int skip = attn_leads_with_one(v); /* a constant feature has no gradient and no room in grads->k */
    const float *vb = in->v + (size_t)t0 * dv;
    float *y = out + (size_t)t0 * dv, *gk = grads->k + (size_t)t0 * d;
    attn_kernel_chunk(v, dims, in, t0, bt, eps, 1, y, &b->f);
    scaled_grads(bt, dv, dout + (size_t)t0 * dv, y, b->f.den, eps, b->G, b->a);
    attn_transpose(F, dv, b->f.S, dv, b->ST, F, 1.0f);
    attn_gemm(bt, F, dv, b->G, dv, b->ST, F, b->dphi, F, 0);
    add_scaled_rows(bt, F, b->dphi, b->a, b->f.z);
    attn_transpose(bt, dv, vb, dv, b->VT, BT, 1.0f);
    attn_gemm(bt, bt, dv, b->G, dv, b->VT, BT, b->dP, BT, 0);
    for (int r = 0; r < bt; r++) { /* + a_i: row i's keys j <= i are in its denominator */
        float *row = b->dP + (size_t)r * BT;
        for (int j = 0; j <= r; j++) row[j] += b->a[r];
    }
    attn_mask_upper(bt, b->dP);
    attn_gemm(bt, F, bt, b->dP, BT, b->f.phi_k, F, b->dphi, F, 1);
    attn_feature_map_grad(v, bt, d, in->q + (size_t)t0 * d, b->f.phi_q, b->dphi, grads->q + (size_t)t0 * d);
    attn_gemm_tn(bt, F, bt, b->dP, BT, b->f.phi_q, F, b->dphi, F, 0);
    for (int r = 0; r < bt; r++) attn_copy(gk + (size_t)r * d, b->dphi + (size_t)r * F + skip, d);
    attn_copy(grads->v + (size_t)t0 * dv, b->G, bt * dv);
    attn_kernel_absorb(v, dims, in, t0, bt, &b->f);
}

/* Causal, reverse sweep of one chunk: the later chunks' share (b->dS, b->dz: their suffix) of
 * d phi(k), dk and dv; then the suffix takes in the chunk's queries. */
static void causal_reverse_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                                 const float *out, const attn_grads *grads, int t0, int bt,
                                 kernel_grad_buffers *b) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d), skip = attn_leads_with_one(v);
    const float *qb = in->q + (size_t)t0 * d, *kb = in->k + (size_t)t0 * d;
    const float *vb = in->v + (size_t)t0 * dv;
    float *gk = grads->k + (size_t)t0 * d, *gv = grads->v + (size_t)t0 * dv;
    attn_feature_map(v, bt, d, qb, b->f.phi_q);
    attn_feature_map(v, bt, d, kb, b->f.phi_k);
    attn_transpose(bt, F, b->f.phi_q, F, b->f.phi_qt, BT, 1.0f);
    attn_transpose(bt, F, b->f.phi_k, F, b->f.phi_kt, BT, 1.0f);
    attn_gemm_tn(bt, bt, F, b->f.phi_kt, BT, b->f.phi_qt, BT, b->f.PT, BT, 0);
    for (int key = 1; key < bt; key++) attn_fill(b->f.PT + (size_t)key * BT, (size_t)key, 0.0f);
    attn_copy(b->G, gv, bt * dv);
    scaled_grads(bt, dv, 0, out + (size_t)t0 * dv, 0, 0.0f, b->G, b->a);
    attn_transpose(F, dv, b->dS, dv, b->dST, F, 1.0f);
    for (int r = 0; r < bt; r++) {
        float *row = b->dphi + (size_t)r * F;
        if (skip) row[0] = 0.0f;
        attn_copy(row + skip, gk + (size_t)r * d, d);
    }
    attn_gemm(bt, F, dv, vb, dv, b->dST, F, b->dphi, F, 1);
    for (int r = 0; r < bt; r++) attn_axpy(b->dphi + (size_t)r * F, b->dz, F, 1.0f);
    attn_feature_map_grad(v, bt, d, kb, b->f.phi_k, b->dphi, gk);
    attn_gemm(bt, dv, bt, b->f.PT, BT, b->G, dv, gv, dv, 0);
    attn_gemm(bt, dv, F, b->f.phi_k, F, b->dS, dv, gv, dv, 1);
    attn_gemm_tn(F, dv, bt, b->f.phi_q, F, b->G, dv, b->dS, dv, 1);
    add_weighted_rows(bt, F, b->f.phi_q, b->a, b->dz);
}

static void kernel_causal(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                          const float *dout, float *out, const attn_grads *grads,
                          kernel_grad_buffers *b) {
    int n = dims->n;
    for (int t0 = 0; t0 < n; t0 += BT)
        causal_forward_chunk(v, dims, in, eps, dout, out, grads, t0, imin(BT, n - t0), b);
    for (int t0 = (n - 1) / BT * BT; t0 >= 0; t0 -= BT)
        causal_reverse_chunk(v, dims, in, out, grads, t0, imin(BT, n - t0), b);
}

/* ---- threads, kernelised form ----
 * Not causal (bit-identical to one thread): S and z by blocks of feature rows (attn_absorb_keys_rows);
 * the query chunks (y, dq, and G parked in grads->v); dS and dz by blocks of feature rows, each
 * summing the chunks in increasing order as one thread does (phi(q) mapped again, a recomputed
 * from G and y with the same operations); the key chunks (dk, dv). Each output element comes from
 * the operations, in the order, that one thread uses.
 * Causal (regrouped, deterministic per thread count): P = threads blocks of consecutive chunks.
 *   pass 1 (parallel): blocks 0 .. P-2 sum their own phi(k)^T v and phi(k) from zero;
 *   serial: those become the prefix before each block (block order);
 *   pass 2 (parallel): each block runs the forward sweep from its prefix; blocks 1 .. P-1 also sum
 *           their own phi(q)^T G and phi(q)^T a from zero, in chunk order;
 *   serial: those become the suffix after each block (reverse block order);
 *   pass 3 (parallel): each block runs the reverse sweep from the suffix after it.
 * Block boundaries and combine orders depend on n and P alone; a state or suffix sums its chunks
 * in another grouping than one thread does, so the bits differ from one thread's (within the
 * accuracy bar), and are the same on every run. */
typedef struct kernel_grad_job {
    attn_variant v;
    const attn_dims *dims;
    const attn_inputs *in;
    float eps;
    const float *dout;
    float *out;
    const attn_grads *grads;
    int F, rows;              /* not causal: feature rows per state piece, a multiple of KP */
    int blocks, chunks;       /* causal */
    float *S, *z, *dS, *dz;   /* causal: one of each per block */
    kernel_grad_buffers *slices; /* per thread; not causal, S, z, ST, dS, dST, dz are shared */
} kernel_grad_job;

static void full_state_piece(void *ctx, int piece, int thread) {
    const kernel_grad_job *j = ctx;
    kernel_grad_buffers *b = &j->slices[thread];
    int f0 = piece * j->rows, rows = imin(j->rows, j->F - f0);
    attn_absorb_keys_rows(j->v, j->dims, j->in, f0, rows, b->f.phi_k, b->f.S, b->f.z);
}

static void full_query_piece(void *ctx, int piece, int thread) {
    const kernel_grad_job *j = ctx;
    kernel_grad_buffers *b = &j->slices[thread];
    int t0 = piece * BT, bt = imin(BT, j->dims->n - t0), dv = j->dims->dv;
    full_query_chunk(j->v, j->dims, j->in, j->eps, j->dout, j->out, j->grads, t0, bt, b);
    attn_copy(j->grads->v + (size_t)t0 * dv, b->G, bt * dv); /* for full_dstate_piece */
}

static void full_dstate_piece(void *ctx, int piece, int thread) {
    const kernel_grad_job *j = ctx;
    kernel_grad_buffers *b = &j->slices[thread];
    int n = j->dims->n, d = j->dims->d, dv = j->dims->dv, F = j->F;
    int f0 = piece * j->rows, rows = imin(j->rows, F - f0);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        float *G = j->grads->v + (size_t)t0 * dv;
        attn_feature_map(j->v, bt, d, j->in->q + (size_t)t0 * d, b->f.phi_q);
        scaled_grads(bt, dv, 0, j->out + (size_t)t0 * dv, 0, 0.0f, G, b->a);
        attn_gemm_tn(rows, dv, bt, b->f.phi_q + f0, F, G, dv, b->dS + (size_t)f0 * dv, dv, 1);
        for (int r = 0; r < bt; r++) attn_axpy(b->dz + f0, b->f.phi_q + (size_t)r * F + f0, rows, b->a[r]);
    }
}

static void full_key_piece(void *ctx, int piece, int thread) {
    const kernel_grad_job *j = ctx;
    int t0 = piece * BT;
    full_key_chunk(j->v, j->dims, j->in, j->grads, t0, imin(BT, j->dims->n - t0), &j->slices[thread]);
}

/* The thread's buffers with block `slot`'s state and block `dslot`'s suffix. */
static kernel_grad_buffers causal_block_buffers(const kernel_grad_job *j, int thread, int slot, int dslot) {
    int F = j->F, dv = j->dims->dv;
    kernel_grad_buffers b = j->slices[thread];
    b.f.S = j->S + (size_t)slot * F * dv, b.f.z = j->z + (size_t)slot * F;
    b.dS = j->dS + (size_t)dslot * F * dv, b.dz = j->dz + (size_t)dslot * F;
    return b;
}

static void causal_sum_piece(void *ctx, int piece, int thread) { /* block `piece` into slot piece + 1 */
    const kernel_grad_job *j = ctx;
    int n = j->dims->n, d = j->dims->d, dv = j->dims->dv, F = j->F;
    kernel_grad_buffers b = causal_block_buffers(j, thread, piece + 1, 0);
    int c0 = attn_grad_block_start(piece, j->blocks, j->chunks), c1 = attn_grad_block_start(piece + 1, j->blocks, j->chunks);
    attn_fill(b.f.S, (size_t)F * dv, 0.0f);
    attn_fill(b.f.z, (size_t)F, 0.0f);
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        attn_feature_map(j->v, bt, d, j->in->k + (size_t)t0 * d, b.f.phi_k);
        attn_gemm_tn(F, dv, bt, b.f.phi_k, F, j->in->v + (size_t)t0 * dv, dv, b.f.S, dv, 1);
        for (int r = 0; r < bt; r++) attn_axpy(b.f.z, b.f.phi_k + (size_t)r * F, F, 1.0f);
        if (attn_leads_with_one(j->v)) b.f.z[0] = (float)(t0 + bt - c0 * BT); /* the block's count, exact */
    }
}

static void causal_forward_piece(void *ctx, int piece, int thread) { /* from the prefix in slot piece */
    const kernel_grad_job *j = ctx;
    int n = j->dims->n, dv = j->dims->dv, F = j->F;
    kernel_grad_buffers b = causal_block_buffers(j, thread, piece, piece);
    int c0 = attn_grad_block_start(piece, j->blocks, j->chunks), c1 = attn_grad_block_start(piece + 1, j->blocks, j->chunks);
    if (piece > 0) { /* the block's own suffix share, into dslot piece */
        attn_fill(b.dS, (size_t)F * dv, 0.0f);
        attn_fill(b.dz, (size_t)F, 0.0f);
    }
    for (int c = c0; c < c1; c++) {
        int t0 = c * BT, bt = imin(BT, n - t0);
        causal_forward_chunk(j->v, j->dims, j->in, j->eps, j->dout, j->out, j->grads, t0, bt, &b);
        if (piece > 0) {
            attn_gemm_tn(F, dv, bt, b.f.phi_q, F, b.G, dv, b.dS, dv, 1);
            add_weighted_rows(bt, F, b.f.phi_q, b.a, b.dz);
        }
    }
}

static void causal_reverse_piece(void *ctx, int piece, int thread) { /* from the suffix after it */
    const kernel_grad_job *j = ctx;
    int n = j->dims->n;
    kernel_grad_buffers b = causal_block_buffers(j, thread, 0, (piece + 1) % j->blocks);
    int c0 = attn_grad_block_start(piece, j->blocks, j->chunks), c1 = attn_grad_block_start(piece + 1, j->blocks, j->chunks);
    for (int c = c1 - 1; c >= c0; c--) {
        int t0 = c * BT;
        causal_reverse_chunk(j->v, j->dims, j->in, j->out, j->grads, t0, imin(BT, n - t0), &b);
    }
}

static void kernel_split(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                         int causal, const float *dout, float *out, const attn_grads *grads,
                         kernel_grad_job *job, int pool) {
    int n = dims->n, dv = dims->dv, F = attn_state_width(v, dims->d);
    kernel_grad_buffers *b = &job->slices[0];
    *job = (kernel_grad_job){v, dims, in, eps, dout, out, grads, F, 0, 0, 0,
                             job->S, job->z, job->dS, job->dz, job->slices};
    if (causal) {
        int P = pool;
        job->blocks = P, job->chunks = (n + BT - 1) / BT;
        attn_fill(job->S, (size_t)F * dv, 0.0f); /* slot 0: the empty prefix of block 0 */
        attn_fill(job->z, (size_t)F, 0.0f);
        attn_parallel(P - 1, causal_sum_piece, job);
        for (int p = 2; p < P; p++) { /* inclusive prefixes, in block order */
            attn_axpy(job->S + (size_t)p * F * dv, job->S + (size_t)(p - 1) * F * dv, F * dv, 1.0f);
            attn_axpy(job->z + (size_t)p * F, job->z + (size_t)(p - 1) * F, F, 1.0f);
        }
        attn_parallel(P, causal_forward_piece, job);
        for (int p = P - 2; p >= 1; p--) { /* suffixes, in reverse block order */
            attn_axpy(job->dS + (size_t)p * F * dv, job->dS + (size_t)(p + 1) * F * dv, F * dv, 1.0f);
            attn_axpy(job->dz + (size_t)p * F, job->dz + (size_t)(p + 1) * F, F, 1.0f);
        }
        attn_fill(job->dS, (size_t)F * dv, 0.0f); /* dslot 0: the empty suffix of block P - 1 */
        attn_fill(job->dz, (size_t)F, 0.0f);
        attn_parallel(P, causal_reverse_piece, job);
        return;
    }
    /* state pieces: one per thread of whole KP-row blocks (each maps every key's, or query's,
     * features again, so fewer pieces redo less) */
    job->rows = round_up(imax(KP, (F + pool - 1) / pool), KP);
    int row_pieces = (F + job->rows - 1) / job->rows, chunks = (n + BT - 1) / BT;
    attn_parallel(row_pieces, full_state_piece, job);
    attn_transpose(F, dv, b->f.S, dv, b->ST, F, 1.0f);
    attn_parallel(chunks, full_query_piece, job);
    attn_parallel(row_pieces, full_dstate_piece, job);
    attn_transpose(F, dv, b->dS, dv, b->dST, F, 1.0f);
    attn_parallel(chunks, full_key_piece, job);
}

static void carve_kernel_grad(int F, int dv, arena *ws, kernel_grad_buffers *b) {
    b->f.phi_q = arena_floats(ws, (uint64_t)BT * F);
    b->f.phi_k = arena_floats(ws, (uint64_t)BT * F);
    b->f.phi_qt = arena_floats(ws, (uint64_t)F * BT);
    b->f.phi_kt = arena_floats(ws, (uint64_t)F * BT);
    b->f.PT = arena_floats(ws, (uint64_t)BT * BT);
    b->f.S = arena_floats(ws, (uint64_t)F * dv);
    b->f.z = arena_floats(ws, (uint64_t)F);
    b->f.den = arena_floats(ws, (uint64_t)BT);
    b->G = arena_floats(ws, (uint64_t)BT * dv);
    b->a = arena_floats(ws, (uint64_t)BT);
    b->dP = arena_floats(ws, (uint64_t)BT * BT);
    b->VT = arena_floats(ws, (uint64_t)dv * BT);
    b->ST = arena_floats(ws, (uint64_t)dv * F);
    b->dphi = arena_floats(ws, (uint64_t)BT * F);
    b->dS = arena_floats(ws, (uint64_t)F * dv);
    b->dST = arena_floats(ws, (uint64_t)dv * F);
    b->dz = arena_floats(ws, (uint64_t)F);
}

void attn_kernel_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d), causal = opt->causal != 0;
    kernel_grad_buffers slices[ATTN_MAX_THREADS];
    kernel_grad_buffers *b = &slices[0];
    carve_kernel_grad(F, dv, ws, b);
    /* threads: every other thread's buffers (not causal, sharing thread 0's state and its
     * gradient); causal, a state and a suffix per block */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    for (int t = 1; t < threads; t++) {
        carve_kernel_grad(F, dv, ws, &slices[t]);
        if (!causal) {
            slices[t].f.S = b->f.S, slices[t].f.z = b->f.z, slices[t].ST = b->ST;
            slices[t].dS = b->dS, slices[t].dST = b->dST, slices[t].dz = b->dz;
        }
    }
    kernel_grad_job job = {0};
    job.slices = slices;
    if (causal && threads > 1) {
        job.S = arena_floats(ws, (uint64_t)threads * F * dv);
        job.z = arena_floats(ws, (uint64_t)threads * F);
        job.dS = arena_floats(ws, (uint64_t)threads * F * dv);
        job.dz = arena_floats(ws, (uint64_t)threads * F);
    }
    if (arena_measuring(ws)) return;
    attn_fill(b->f.S, (size_t)F * dv, 0.0f);
    attn_fill(b->f.z, (size_t)F, 0.0f);
    attn_fill(b->dS, (size_t)F * dv, 0.0f);
    attn_fill(b->dz, (size_t)F, 0.0f);
    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BT)
        kernel_split(v, dims, in, opt->eps, causal, dout, out, grads, &job, pool);
    else if (causal)
        kernel_causal(v, dims, in, opt->eps, dout, out, grads, b);
    else
        kernel_full(v, dims, in, opt->eps, dout, out, grads, b);
}

