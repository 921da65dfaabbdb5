/* efficient_backward.c — gradients of Efficient Attention (efficient.c), causal and not.
 *
 * Non-causal: y = rho_q C, C = rho_k^T v. dC = rho_q^T dout, d rho_q = dout C^T,
 * d rho_k = v dC^T, dv = rho_k dC; each softmax's Jacobian p ⊙ (g - p·g), where for a column of
 * rho_k the inner product is sum_j rho_k[j, c] (v_j·dC_c) = C_c·dC_c.
 *
 * Causal: the kernelised form with phi(q_i) = Q'_i = rho_q(q_i) / Z(i), phi(k_j) = E_j
 * = exp(k_j - mu) and no denominator, where Z(i) (the prefix sums of E) depends on k too:
 *   dQ'_i = S(i) g_i,   d rho_q = dQ' / Z,   W = d rho_q ⊙ Q' (the gradient through Z),
 *   dk_jc = E_jc (sum_{i>=j} Q'_ic (g_i·v_j) - sum_{i>=j} W_ic),   dv_j = sum_{i>=j} P[i, j] g_i.
 * Every chunk has its own reference mu (the running maximum), so a term from a later row i carries
 * exp(mu_j - mu_i) <= 1: the reverse sweep's dS and dz are kept relative to the current chunk's
 * mu and shrink when it steps back, as the forward state grows. The running maximum cannot be run
 * backwards, so the forward sweep records, per chunk, the state's m and z at its start and the
 * column sums of W: 3d floats a chunk. A chunk whose Z underflows goes row by row, as in the
 * forward pass; its rows keep W in grads->k until the reverse sweep.
 *
 *
 * Threads: each pass splits as the forward pass does (see efficient_full_job and
 * efficient_grad_job): bit-identical to one thread when not causal, a parallel prefix and suffix
 * over blocks of chunks when causal.
 */
#include "internal.h"

/* dx = p ⊙ (g - p·g): the vector-Jacobian product of a softmax p. */
static void softmax_grad(int d, const float *p, const float *g, float *dx) {
    float s = attn_dot_in_order(p, g, d);
    for (int c = 0; c < d; c++) dx[c] = p[c] * (g[c] - s);
}

/* Efficient, not causal: the buffers of one thread (m, chunk_max, C, z, CT, dC, dCT, r are
 * shared between threads; rho, rho_t, drho are each thread's own). */
typedef struct efficient_full_buffers {
    float *m, *chunk_max, *rho, *rho_t, *C, *z, *CT, *drho, *dC, *dCT, *r;
} efficient_full_buffers;

/* One query chunk: y, dq. rho holds rho_q of the chunk afterwards. */
static void efficient_query_chunk(const attn_dims *dims, const attn_inputs *in, const float *dout,
                                  float *out, const attn_grads *grads, int t0, int bt,
                                  const efficient_full_buffers *b) {
    int d = dims->d, dv = dims->dv;
    const float *g = dout + (size_t)t0 * dv;
    attn_efficient_full_chunk(d, dv, bt, in->q + (size_t)t0 * d, b->C, b->rho, b->rho_t, out + (size_t)t0 * dv);
    attn_gemm(bt, d, dv, g, dv, b->CT, d, b->drho, d, 0);
    for (int i = 0; i < bt; i++)
        softmax_grad(d, b->rho + (size_t)i * d, b->drho + (size_t)i * d, grads->q + (size_t)(t0 + i) * d);
}

/* One key chunk: dv, dk (b->z holds 1 / z, b->r the inner products C_c·dC_c). */
static void efficient_key_chunk(const attn_dims *dims, const attn_inputs *in,
                                const attn_grads *grads, int t0, int bt,
                                const efficient_full_buffers *b) {
    int d = dims->d, dv = dims->dv;
    const float *kb = in->k + (size_t)t0 * d;
    float *rho = b->rho;
    attn_exp_minus_columns(bt, d, kb, b->m, rho);
    for (int j = 0; j < bt; j++)
        for (int c = 0; c < d; c++) rho[(size_t)j * d + c] *= b->z[c];
    attn_gemm(bt, dv, d, rho, d, b->dC, dv, grads->v + (size_t)t0 * dv, dv, 0);
    attn_gemm(bt, d, dv, in->v + (size_t)t0 * dv, dv, b->dCT, d, b->drho, d, 0);
    for (int j = 0; j < bt; j++) {
        const float *pj = rho + (size_t)j * d, *gj = b->drho + (size_t)j * d;
        float *dk = grads->k + (size_t)(t0 + j) * d;
        for (int c = 0; c < d; c++) dk[c] = pj[c] * (gj[c] - b->r[c]);
    }
}

/* Threads (bit-identical to one thread, as the kernelised form): the context by ranges of
 * features; the query chunks (rho_q parked in grads->k); dC by ranges of its rows, each summing
 * the chunks in increasing order as one thread does; the key chunks. */
typedef struct efficient_full_job {
    const attn_dims *dims;
    const attn_inputs *in;
    const float *dout;
    float *out;
    const attn_grads *grads;
    int cols; /* features per piece, a multiple of VW and KP */
    const efficient_full_buffers *slices;
} efficient_full_job;

static void efficient_context_part(void *ctx, int piece, int thread) {
    const efficient_full_job *j = ctx;
    const efficient_full_buffers *b = &j->slices[thread];
    int c0 = piece * j->cols, c1 = imin(j->dims->d, c0 + j->cols);
    attn_efficient_context_range(j->dims, j->in, c0, c1, b->m, b->chunk_max, b->rho, b->C, b->z);
}

static void efficient_query_part(void *ctx, int piece, int thread) {
    const efficient_full_job *j = ctx;
    const efficient_full_buffers *b = &j->slices[thread];
    int t0 = piece * BT, bt = imin(BT, j->dims->n - t0), d = j->dims->d;
    efficient_query_chunk(j->dims, j->in, j->dout, j->out, j->grads, t0, bt, b);
    attn_copy(j->grads->k + (size_t)t0 * d, b->rho, bt * d); /* rho_q for the dC pass; dk comes last */
}

static void efficient_dcontext_part(void *ctx, int piece, int thread) {
    const efficient_full_job *j = ctx;
    const efficient_full_buffers *b = &j->slices[thread];
    int n = j->dims->n, d = j->dims->d, dv = j->dims->dv;
    int c0 = piece * j->cols, c1 = imin(d, c0 + j->cols);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *rho = j->grads->k + (size_t)t0 * d; /* rho_q, parked by the query pass */
        attn_gemm_tn(c1 - c0, dv, bt, rho + c0, d, j->dout + (size_t)t0 * dv, dv, b->dC + (size_t)c0 * dv, dv, 1);
    }
}

static void efficient_key_part(void *ctx, int piece, int thread) {
    const efficient_full_job *j = ctx;
    int t0 = piece * BT;
    efficient_key_chunk(j->dims, j->in, j->grads, t0, imin(BT, j->dims->n - t0), &j->slices[thread]);
}

void attn_efficient_full_backward(const attn_dims *dims, const attn_inputs *in,
                                  const float *dout, float *out, const attn_grads *grads,
                                  arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    efficient_full_buffers slices[ATTN_MAX_THREADS], *b = &slices[0];
    b->m = arena_floats(ws, (uint64_t)d);
    b->chunk_max = arena_floats(ws, (uint64_t)d);
    b->rho = arena_floats(ws, (uint64_t)BT * d); /* rho_q, then rho_k, of a chunk */
    b->rho_t = arena_floats(ws, (uint64_t)d * BT);
    b->C = arena_floats(ws, (uint64_t)d * dv);
    b->z = arena_floats(ws, (uint64_t)d);
    b->CT = arena_floats(ws, (uint64_t)dv * d);
    b->drho = arena_floats(ws, (uint64_t)BT * d);
    b->dC = arena_floats(ws, (uint64_t)d * dv);
    b->dCT = arena_floats(ws, (uint64_t)dv * d);
    b->r = arena_floats(ws, (uint64_t)d);
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    for (int t = 1; t < threads; t++) {
        slices[t] = *b;
        slices[t].rho = arena_floats(ws, (uint64_t)BT * d);
        slices[t].rho_t = arena_floats(ws, (uint64_t)d * BT);
        slices[t].drho = arena_floats(ws, (uint64_t)BT * d);
    }
    if (arena_measuring(ws)) return;
    attn_fill(b->dC, (size_t)d * dv, 0.0f);
    int pool = attn_thread_count(), chunks = (n + BT - 1) / BT;
    int split = threads > 1 && pool > 1 && pool <= threads && n > BT;
    efficient_full_job job = {dims, in, dout, out, grads, round_up(imax(VW, (d + 2 * pool - 1) / (2 * pool)), VW), slices};
    int col_pieces = (d + job.cols - 1) / job.cols;
    if (split)
        attn_parallel(col_pieces, efficient_context_part, &job);
    else
        attn_efficient_context(dims, in, b->m, b->chunk_max, b->rho, b->C, b->z);
    attn_transpose(d, dv, b->C, dv, b->CT, d, 1.0f);
    if (split) {
        attn_parallel(chunks, efficient_query_part, &job);
        attn_parallel(col_pieces, efficient_dcontext_part, &job);
    } else {
        for (int t0 = 0; t0 < n; t0 += BT) {
            int bt = imin(BT, n - t0);
            efficient_query_chunk(dims, in, dout, out, grads, t0, bt, b);
            attn_gemm_tn(d, dv, bt, b->rho, d, dout + (size_t)t0 * dv, dv, b->dC, dv, 1);
        }
    }
    attn_transpose(d, dv, b->dC, dv, b->dCT, d, 1.0f);
    for (int c = 0; c < d; c++) {
        b->r[c] = attn_dot_in_order(b->C + (size_t)c * dv, b->dC + (size_t)c * dv, dv);
        b->z[c] = 1.0f / b->z[c]; /* as the context was divided */
    }
    if (split)
        attn_parallel(chunks, efficient_key_part, &job);
    else
        for (int t0 = 0; t0 < n; t0 += BT) efficient_key_chunk(dims, in, grads, t0, imin(BT, n - t0), b);
}

typedef struct efficient_grad_buffers {
    attn_efficient_buffers f;
    float *ST, *VT; /* [dv, d], [dv, BT] */
    float *dP;      /* [query, key]: g_i·v_j, j <= i */
    float *dQ;      /* [BT, d]: dQ', then d rho_q, then W and its suffix sums */
    float *Qr;      /* [BT, d]: Q' row-major */
    float *tmp;     /* [BT, d] */
    float *dS, *dST, *dz, *mu_next;
    float *stats;   /* per chunk: m and z at its start, the column sums of W; 3d each */
} efficient_grad_buffers;

/* Threads: a block's own share of the reverse sweep's dS and dz (the terms its rows add), summed
 * during its forward sweep: each term is relative to its row's reference mu (the running maximum
 * of its chunk, or of the row when the chunk goes row by row) and enters shrunk to the reference
 * of the block's first term (mu only grows with the row, so the factors are <= 1). */
typedef struct suffix_share {
    float *dS, *dz, *mu; /* [d, dv], [d], [d] */
    float *X;            /* [d, dv] scratch: a chunk's Q'^T g */
    int have;            /* a term has entered (mu is set) */
} suffix_share;

/* The factor that brings a term relative to mu to the share's reference, per feature, into s. */
static void share_factors(int d, const float *mu, suffix_share *sh, float *s) {
    if (!sh->have) attn_copy(sh->mu, mu, d), sh->have = 1;
    for (int c = 0; c < d; c++) s[c] = attn_expf(sh->mu[c] - mu[c]);
}

/* One chunk whose Z underflows, forward: row by row as the forward pass; W stays in grads->k. */
static void efficient_rows_forward(int d, int dv, const attn_inputs *in, int t0, int bt,
                                   const float *dout, float *out, const attn_grads *grads,
                                   efficient_grad_buffers *b, suffix_share *sh) {
    const attn_efficient_buffers *f = &b->f;
    for (int i = t0; i < t0 + bt; i++) {
        attn_efficient_rows(d, dv, in, i, i + 1, out, f);
        const float *g = dout + (size_t)i * dv;
        float *drho = b->tmp, *W = grads->k + (size_t)i * d;
        for (int c = 0; c < d; c++) drho[c] = attn_dot_in_order(f->S + (size_t)c * dv, g, dv) / f->z[c];
        softmax_grad(d, f->rho, drho, grads->q + (size_t)i * d);
        for (int c = 0; c < d; c++) W[c] = drho[c] * (f->rho[c] / f->z[c]);
        if (!sh) continue;
        float *s = b->tmp + d; /* the reverse sweep's row terms: Q'_i g_i into dS, W into dz */
        share_factors(d, f->m, sh, s);
        for (int c = 0; c < d; c++) {
            attn_axpy(sh->dS + (size_t)c * dv, g, dv, s[c] * (f->rho[c] / f->z[c]));
            sh->dz[c] += s[c] * W[c];
        }
    }
}

/* dS and dz, relative to mu_next, become relative to mu <= mu_next. */
static void shrink_to(int d, int dv, const float *mu, efficient_grad_buffers *b, int *have_next) {
    if (*have_next)
        for (int c = 0; c < d; c++) {
            float s = attn_expf(mu[c] - b->mu_next[c]);
            attn_scale(b->dS + (size_t)c * dv, dv, s);
            b->dz[c] *= s;
        }
    attn_copy(b->mu_next, mu, d);
    *have_next = 1;
}

/* The same chunk, reverse: its rows' states are rebuilt from the chunk's start, then each row
 * from the last takes the later rows' share and its own (j = i) term. */
static void efficient_rows_reverse(int d, int dv, const attn_inputs *in, int t0, int bt,
                                   const float *dout, const attn_grads *grads,
                                   efficient_grad_buffers *b, int *have_next) {
    attn_efficient_buffers *f = &b->f;
    float *M = f->E, *Z = f->Zq; /* [BT, d]: m and z after each row */
    for (int r = 0; r < bt; r++) {
        attn_efficient_absorb(d, 0, in->k + (size_t)(t0 + r) * d, 0, f->m, f->z, 0);
        attn_copy(M + (size_t)r * d, f->m, d);
        attn_copy(Z + (size_t)r * d, f->z, d);
    }
    for (int r = bt - 1; r >= 0; r--) {
        int i = t0 + r;
        const float *g = dout + (size_t)i * dv, *vi = in->v + (size_t)i * dv, *ki = in->k + (size_t)i * d;
        const float *mu = M + (size_t)r * d, *zr = Z + (size_t)r * d;
        float *gk = grads->k + (size_t)i * d, *gv = grads->v + (size_t)i * dv;
        float *e = b->tmp, *Qi = b->tmp + d;
        shrink_to(d, dv, mu, b, have_next);
        attn_softmax_rows(1, d, in->q + (size_t)i * d, f->rho);
        float gv_i = attn_dot_in_order(g, vi, dv), own = 0.0f;
        attn_fill(gv, (size_t)dv, 0.0f);
        for (int c = 0; c < d; c++) {
            const float *dSc = b->dS + (size_t)c * dv;
            e[c] = attn_expf(ki[c] - mu[c]);
            Qi[c] = f->rho[c] / zr[c];
            float W = gk[c];
            gk[c] = e[c] * (attn_dot_in_order(vi, dSc, dv) - b->dz[c] + Qi[c] * gv_i - W);
            attn_axpy(gv, dSc, dv, e[c]);
            own += e[c] * Qi[c];
            attn_axpy(b->dS + (size_t)c * dv, g, dv, Qi[c]);
            b->dz[c] += W;
        }
        attn_axpy(gv, g, dv, own);
    }
}

/* Forward sweep of one chunk from the state in b->f: its stats, y, dq, the chunk's own share of
 * dk (or, row by row, W) and of dv; then the state absorbs the chunk. sh (threads, or NULL) takes
 * in the chunk's terms of the reverse sweep's dS and dz. */
static void efficient_forward_chunk(const attn_dims *dims, const attn_inputs *in, const float *dout,
                                    float *out, const attn_grads *grads, int t0, int bt,
                                    efficient_grad_buffers *b, suffix_share *sh) {
    int d = dims->d, dv = dims->dv;
    attn_efficient_buffers *f = &b->f;
    const float *qb = in->q + (size_t)t0 * d, *vb = in->v + (size_t)t0 * dv;
    const float *g = dout + (size_t)t0 * dv;
    float *stats = b->stats + (size_t)(t0 / BT) * 3 * d, *wsum = stats + 2 * d;
    float *gk = grads->k + (size_t)t0 * d;
    attn_copy(stats, f->m, d);
    attn_copy(stats + d, f->z, d);
    if (attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, f)) {
        efficient_rows_forward(d, dv, in, t0, bt, dout, out, grads, b, sh);
        return;
    }
    attn_efficient_chunk_out(d, dv, bt, qb, vb, out + (size_t)t0 * dv, f);
    attn_transpose(d, dv, f->S, dv, b->ST, d, 1.0f);
    for (int i = 0; i < bt * d; i++) b->Qr[i] = f->rho_rows[i] / f->Zq[i];
    attn_gemm(bt, d, dv, g, dv, b->ST, d, b->dQ, d, 0);
    attn_transpose(bt, dv, vb, dv, b->VT, BT, 1.0f);
    attn_gemm(bt, bt, dv, g, dv, b->VT, BT, b->dP, BT, 0);
    attn_mask_upper(bt, b->dP);
    attn_gemm(bt, d, bt, b->dP, BT, f->E, d, b->dQ, d, 1);
    for (int r = 0; r < bt; r++) {
        float *dq = b->dQ + (size_t)r * d;
        const float *zr = f->Zq + (size_t)r * d, *Qr = b->Qr + (size_t)r * d;
        for (int c = 0; c < d; c++) dq[c] /= zr[c];
        softmax_grad(d, f->rho_rows + (size_t)r * d, dq, grads->q + (size_t)(t0 + r) * d);
        for (int c = 0; c < d; c++) dq[c] *= Qr[c];
    }
    attn_fill(wsum, (size_t)d, 0.0f);
    for (int r = 0; r < bt; r++) attn_axpy(wsum, b->dQ + (size_t)r * d, d, 1.0f);
    for (int r = bt - 2; r >= 0; r--) attn_axpy(b->dQ + (size_t)r * d, b->dQ + (size_t)(r + 1) * d, d, 1.0f);
    attn_gemm_tn(bt, d, bt, b->dP, BT, b->Qr, d, b->tmp, d, 0);
    for (int i = 0; i < bt * d; i++) gk[i] = f->E[i] * (b->tmp[i] - b->dQ[i]);
    attn_gemm(bt, dv, bt, f->PT, BT, g, dv, grads->v + (size_t)t0 * dv, dv, 0);
    attn_efficient_chunk_absorb(d, dv, bt, vb, f);
    if (!sh) return;
    float *s = b->tmp; /* the reverse sweep's chunk terms: Q'^T g into dS, wsum into dz */
    share_factors(d, f->chunk_max, sh, s);
    attn_gemm_tn(d, dv, bt, b->Qr, d, g, dv, sh->X, dv, 0);
    for (int c = 0; c < d; c++) {
        attn_axpy(sh->dS + (size_t)c * dv, sh->X + (size_t)c * dv, dv, s[c]);
        sh->dz[c] += s[c] * wsum[c];
    }
}

/* Reverse sweep of one chunk: the later rows' share (b->dS, b->dz relative to b->mu_next) of dk
 * and dv, then dS and dz take in the chunk's rows. b->f's m and z are scratch here. */
static void efficient_reverse_chunk(const attn_dims *dims, const attn_inputs *in, const float *dout,
                                    const attn_grads *grads, int t0, int bt,
                                    efficient_grad_buffers *b, int *have_next) {
    int d = dims->d, dv = dims->dv;
    attn_efficient_buffers *f = &b->f;
    const float *vb = in->v + (size_t)t0 * dv, *g = dout + (size_t)t0 * dv;
    const float *stats = b->stats + (size_t)(t0 / BT) * 3 * d;
    float *gk = grads->k + (size_t)t0 * d;
    attn_copy(f->m, stats, d);
    attn_copy(f->z, stats + d, d);
    if (attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, f)) {
        efficient_rows_reverse(d, dv, in, t0, bt, dout, grads, b, have_next);
        return;
    }
    shrink_to(d, dv, f->chunk_max, b, have_next);
    attn_transpose(d, dv, b->dS, dv, b->dST, d, 1.0f);
    attn_gemm(bt, d, dv, vb, dv, b->dST, d, b->tmp, d, 0);
    for (int j = 0; j < bt; j++)
        for (int c = 0; c < d; c++) {
            size_t at = (size_t)j * d + c;
            gk[at] += f->E[at] * (b->tmp[at] - b->dz[c]);
        }
    attn_gemm(bt, dv, d, f->E, d, b->dS, dv, grads->v + (size_t)t0 * dv, dv, 1);
    attn_softmax_rows(bt, d, in->q + (size_t)t0 * d, f->rho_rows);
    for (int i = 0; i < bt * d; i++) b->Qr[i] = f->rho_rows[i] / f->Zq[i];
    attn_gemm_tn(d, dv, bt, b->Qr, d, g, dv, b->dS, dv, 1);
    attn_axpy(b->dz, stats + 2 * d, d, 1.0f);
}

/* ---- threads, efficient causal: the kernelised form's two prefixes (see kernel_grad_job), with
 * the running maximum carried along ----
 *   pass 1 (parallel): blocks 0 .. P-2 sum their own state (m, z, S) from the empty one;
 *   serial: the prefix before each block, combined as the forward pass combines (rescaled to the
 *           larger maximum);
 *   pass 2 (parallel): each block runs the forward sweep from its prefix (recording the chunks'
 *           stats); blocks 1 .. P-1 also sum their own share of dS and dz (suffix_share),
 *           relative to the reference (mu) their first chunk uses (its running maximum; row by
 *           row, its first row's);
 *   serial: the suffix after each block, in reverse block order: a later suffix is shrunk to the
 *           earlier block's reference (mu only grows with the row) and added;
 *   pass 3 (parallel): each block runs the reverse sweep from the suffix after it.
 * Deterministic per thread count; sums regrouped, so not one thread's bits. */
typedef struct efficient_grad_job {
    const attn_dims *dims;
    const attn_inputs *in;
    const float *dout;
    float *out;
    const attn_grads *grads;
    int blocks, chunks;
    float *m, *z, *S;       /* per block: the prefix state before it */
    float *dS, *dz, *mu;    /* per block: its own suffix share, then the suffix from it on */
    int have[ATTN_MAX_THREADS]; /* the suffix share is not empty */
    const efficient_grad_buffers *slices;
} efficient_grad_job;

static efficient_grad_buffers efficient_block_buffers(const efficient_grad_job *j, int thread, int slot, int dslot) {
    int d = j->dims->d, dv = j->dims->dv;
    efficient_grad_buffers b = j->slices[thread];
    b.f.m = j->m + (size_t)slot * d, b.f.z = j->z + (size_t)slot * d, b.f.S = j->S + (size_t)slot * d * dv;
    b.dS = j->dS + (size_t)dslot * d * dv, b.dz = j->dz + (size_t)dslot * d, b.mu_next = j->mu + (size_t)dslot * d;
    return b;
}

static void efficient_sum_part(void *ctx, int piece, int thread) { /* block `piece` into slot piece + 1 */
    const efficient_grad_job *j = ctx;
    int d = j->dims->d, dv = j->dims->dv;
    efficient_grad_buffers b = efficient_block_buffers(j, thread, piece + 1, 0);
    attn_fill(b.f.m, (size_t)d, -ATTN_INF);
    attn_fill(b.f.z, (size_t)d, 0.0f);
    attn_fill(b.f.S, (size_t)d * dv, 0.0f);
    attn_efficient_block_sum(j->dims, j->in, attn_grad_block_start(piece, j->blocks, j->chunks),
                             attn_grad_block_start(piece + 1, j->blocks, j->chunks), &b.f);
}

static void efficient_forward_part(void *ctx, int piece, int thread) {
    efficient_grad_job *j = ctx;
    int n = j->dims->n, d = j->dims->d, dv = j->dims->dv;
    efficient_grad_buffers b = efficient_block_buffers(j, thread, piece, piece);
    int c0 = attn_grad_block_start(piece, j->blocks, j->chunks), c1 = attn_grad_block_start(piece + 1, j->blocks, j->chunks);
    suffix_share share = {b.dS, b.dz, b.mu_next, b.dST, 0}; /* dST: free in the forward sweep */
    if (piece > 0) attn_fill(share.dS, (size_t)d * dv, 0.0f), attn_fill(share.dz, (size_t)d, 0.0f);
    for (int c = c0; c < c1; c++)
        efficient_forward_chunk(j->dims, j->in, j->dout, j->out, j->grads, c * BT, imin(BT, n - c * BT), &b,
                                piece > 0 ? &share : 0);
    j->have[piece] = share.have; /* each piece its own word */
}

static void efficient_reverse_part(void *ctx, int piece, int thread) {
    const efficient_grad_job *j = ctx;
    int n = j->dims->n, dslot = (piece + 1) % j->blocks, have = j->have[dslot];
    efficient_grad_buffers b = j->slices[thread]; /* m, z, S: the thread's scratch */
    efficient_grad_buffers slot = efficient_block_buffers(j, thread, 0, dslot);
    b.dS = slot.dS, b.dz = slot.dz, b.mu_next = slot.mu_next;
    int c0 = attn_grad_block_start(piece, j->blocks, j->chunks), c1 = attn_grad_block_start(piece + 1, j->blocks, j->chunks);
    for (int c = c1 - 1; c >= c0; c--)
        efficient_reverse_chunk(j->dims, j->in, j->dout, j->grads, c * BT, imin(BT, n - c * BT), &b, &have);
}

static void efficient_causal_split(efficient_grad_job *j, int pool) {
    int d = j->dims->d, dv = j->dims->dv, P = pool;
    j->blocks = P, j->chunks = (j->dims->n + BT - 1) / BT;
    attn_fill(j->m, (size_t)d, -ATTN_INF); /* slot 0: the empty prefix of block 0 */
    attn_fill(j->z, (size_t)d, 0.0f);
    attn_fill(j->S, (size_t)d * dv, 0.0f);
    attn_parallel(P - 1, efficient_sum_part, j);
    for (int p = 2; p < P; p++) /* prefixes, in block order */
        attn_efficient_combine(d, dv, j->m + (size_t)(p - 1) * d, j->z + (size_t)(p - 1) * d, j->S + (size_t)(p - 1) * d * dv,
                               j->m + (size_t)p * d, j->z + (size_t)p * d, j->S + (size_t)p * d * dv);
    for (int p = 0; p < P; p++) j->have[p] = 0;
    attn_parallel(P, efficient_forward_part, j);
    for (int p = P - 2; p >= 1; p--) { /* suffixes, in reverse block order */
        if (!j->have[p + 1]) continue;
        float *dS = j->dS + (size_t)p * d * dv, *dz = j->dz + (size_t)p * d, *mu = j->mu + (size_t)p * d;
        const float *nS = j->dS + (size_t)(p + 1) * d * dv, *nz = j->dz + (size_t)(p + 1) * d, *nmu = j->mu + (size_t)(p + 1) * d;
        if (!j->have[p]) { /* an empty block (fewer chunks than blocks): the later suffix as it is */
            attn_copy(dS, nS, d * dv), attn_copy(dz, nz, d), attn_copy(mu, nmu, d);
            j->have[p] = 1;
            continue;
        }
        for (int c = 0; c < d; c++) {
            float s = attn_expf(mu[c] - nmu[c]);
            attn_axpy(dS + (size_t)c * dv, nS + (size_t)c * dv, dv, s);
            dz[c] += s * nz[c];
        }
    }
    attn_fill(j->dS, (size_t)d * dv, 0.0f); /* dslot 0: the empty suffix of block P - 1 */
    attn_fill(j->dz, (size_t)d, 0.0f);
    j->have[0] = 0;
    attn_parallel(P, efficient_reverse_part, j);
}

static void carve_efficient_grad(int d, int dv, arena *ws, efficient_grad_buffers *b) {
    attn_efficient_carve(d, dv, 1, ws, &b->f);
    b->ST = arena_floats(ws, (uint64_t)dv * d);
    b->VT = arena_floats(ws, (uint64_t)dv * BT);
    b->dP = arena_floats(ws, (uint64_t)BT * BT);
    b->dQ = arena_floats(ws, (uint64_t)BT * d);
    b->Qr = arena_floats(ws, (uint64_t)BT * d);
    b->tmp = arena_floats(ws, (uint64_t)BT * d + d); /* the row path uses 2d */
    b->dS = arena_floats(ws, (uint64_t)d * dv);
    b->dST = arena_floats(ws, (uint64_t)dv * d);
    b->dz = arena_floats(ws, (uint64_t)d);
    b->mu_next = arena_floats(ws, (uint64_t)d);
}

void attn_efficient_causal_backward(const attn_dims *dims, const attn_inputs *in,
                                    const float *dout, float *out, const attn_grads *grads,
                                    arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    uint64_t chunks = round_up64(n, BT) / BT;
    efficient_grad_buffers slices[ATTN_MAX_THREADS], *b = &slices[0];
    attn_efficient_buffers *f = &b->f;
    carve_efficient_grad(d, dv, ws, b);
    b->stats = arena_floats(ws, chunks * 3u * (uint64_t)d);
    /* threads: every other thread's buffers (the stats shared), a state and a suffix per block */
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    for (int t = 1; t < threads; t++) {
        carve_efficient_grad(d, dv, ws, &slices[t]);
        slices[t].stats = b->stats;
    }
    efficient_grad_job job = {dims, in, dout, out, grads, 0, 0, 0, 0, 0, 0, 0, 0, {0}, slices};
    if (threads > 1) {
        job.m = arena_floats(ws, (uint64_t)threads * d);
        job.z = arena_floats(ws, (uint64_t)threads * d);
        job.S = arena_floats(ws, (uint64_t)threads * d * dv);
        job.dS = arena_floats(ws, (uint64_t)threads * d * dv);
        job.dz = arena_floats(ws, (uint64_t)threads * d);
        job.mu = arena_floats(ws, (uint64_t)threads * d);
    }
    if (arena_measuring(ws)) return;
    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BT) {
        efficient_causal_split(&job, pool);
        return;
    }

    attn_fill(f->m, (size_t)d, -ATTN_INF);
    attn_fill(f->z, (size_t)d, 0.0f);
    attn_fill(f->S, (size_t)d * dv, 0.0f);
    for (int t0 = 0; t0 < n; t0 += BT) efficient_forward_chunk(dims, in, dout, out, grads, t0, imin(BT, n - t0), b, 0);
    int have_next = 0;
    attn_fill(b->dS, (size_t)d * dv, 0.0f);
    attn_fill(b->dz, (size_t)d, 0.0f);
    for (int t0 = (n - 1) / BT * BT; t0 >= 0; t0 -= BT)
        efficient_reverse_chunk(dims, in, dout, grads, t0, imin(BT, n - t0), b, &have_next);
}

