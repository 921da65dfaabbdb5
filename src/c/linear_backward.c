/* linear_backward.c — gradients of the linear family (linear, efficient, taylor), causal and not,
 * in O(F*dv) state: a forward sweep, then a reverse sweep of the prefix sums when causal.
 *
 * Kernelised form (linear, taylor): y_i = phi(q_i)^T S / den_i, den_i = phi(q_i)·z + eps. With
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
 * Efficient, non-causal: y = rho_q C, C = rho_k^T v. dC = rho_q^T dout, d rho_q = dout C^T,
 * d rho_k = v dC^T, dv = rho_k dC; each softmax's Jacobian p ⊙ (g - p·g), where for a column of
 * rho_k the inner product is sum_j rho_k[j, c] (v_j·dC_c) = C_c·dC_c.
 *
 * Efficient, causal: the kernelised form with phi(q_i) = Q'_i = rho_q(q_i) / Z(i), phi(k_j) = E_j
 * = exp(k_j - mu) and no denominator, where Z(i) (the prefix sums of E) depends on k too:
 *   dQ'_i = S(i) g_i,   d rho_q = dQ' / Z,   W = d rho_q ⊙ Q' (the gradient through Z),
 *   dk_jc = E_jc (sum_{i>=j} Q'_ic (g_i·v_j) - sum_{i>=j} W_ic),   dv_j = sum_{i>=j} P[i, j] g_i.
 * Every chunk has its own reference mu (the running maximum), so a term from a later row i carries
 * exp(mu_j - mu_i) <= 1: the reverse sweep's dS and dz are kept relative to the current chunk's
 * mu and shrink when it steps back, as the forward state grows. The running maximum cannot be run
 * backwards, so the forward sweep records, per chunk, the state's m and z at its start and the
 * column sums of W: 3d floats a chunk. A chunk whose Z underflows goes row by row, as in the
 * forward pass; its rows keep W in grads->k until the reverse sweep.
 */
#include "internal.h"

static float dot(const float *a, const float *b, int len) {
    float s = 0.0f;
    for (int i = 0; i < len; i++) s += a[i] * b[i];
    return s;
}

/* dx [rows, d] from d phi [rows, F] (F = attn_state_width): the feature map's Jacobian. */
static void feature_grad(attn_variant v, int rows, int d, const float *x, const float *phi,
                         const float *dphi, float *dx) {
    int F = attn_state_width(v, d);
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d, *pr = phi + (size_t)r * F, *gr = dphi + (size_t)r * F;
        float *out = dx + (size_t)r * d;
        if (v == ATTN_LINEAR) { /* (elu + 1)' is 1 above 0 and exp(t) = phi(t) below */
            int c = 0;
            for (; c + VW <= d; c += VW)
                vf_store(out + c, vf_mul(vf_load(gr + c), vf_select_gt0(vf_load(xr + c), vf_splat(1.0f), vf_load(pr + c))));
            for (; c < d; c++) out[c] = gr[c] * (xr[c] > 0.0f ? 1.0f : pr[c]);
            continue;
        }
        /* taylor: x̂ = x / max(|x|, 1e-12); above the floor its Jacobian is (I - x̂ x̂^T) / |x|,
         * below it I / 1e-12. The constant feature 0 has no gradient. */
        float norm = attn_taylor_norm(xr, d);
        const float *xh = pr + 1, *g = gr + 1;
        if (norm > 1e-12f) {
            float s = dot(xh, g, d);
            for (int c = 0; c < d; c++) out[c] = (g[c] - xh[c] * s) / norm;
        } else {
            for (int c = 0; c < d; c++) out[c] = g[c] / 1e-12f;
        }
    }
}

/* dx = p ⊙ (g - p·g): the vector-Jacobian product of a softmax p. */
static void softmax_grad(int d, const float *p, const float *g, float *dx) {
    float s = dot(p, g, d);
    for (int c = 0; c < d; c++) dx[c] = p[c] * (g[c] - s);
}

/* Zero above the diagonal of a [query, key] block, j > i. */
static void mask_upper(int bt, float *X) {
    for (int r = 0; r + 1 < bt; r++) attn_fill(X + (size_t)r * BT + r + 1, (size_t)(bt - r - 1), 0.0f);
}

/* ---- kernelised form ---- */

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
        a[r] = -dot(gr, y + (size_t)r * dv, dv);
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

static void kernel_full(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                        const float *dout, float *out, const attn_grads *grads,
                        kernel_grad_buffers *b) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    attn_absorb_keys(v, dims, in, b->f.phi_k, b->f.S, b->f.z);
    attn_transpose(F, dv, b->f.S, dv, b->ST, F, 1.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        float *y = out + (size_t)t0 * dv;
        attn_kernel_chunk(v, dims, in, t0, bt, eps, 0, y, &b->f);
        scaled_grads(bt, dv, dout + (size_t)t0 * dv, y, b->f.den, eps, b->G, b->a);
        attn_gemm(bt, F, dv, b->G, dv, b->ST, F, b->dphi, F, 0);
        add_scaled_rows(bt, F, b->dphi, b->a, b->f.z);
        feature_grad(v, bt, d, in->q + (size_t)t0 * d, b->f.phi_q, b->dphi, grads->q + (size_t)t0 * d);
        attn_gemm_tn(F, dv, bt, b->f.phi_q, F, b->G, dv, b->dS, dv, 1);
        add_weighted_rows(bt, F, b->f.phi_q, b->a, b->dz);
    }
    attn_transpose(F, dv, b->dS, dv, b->dST, F, 1.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *kb = in->k + (size_t)t0 * d, *vb = in->v + (size_t)t0 * dv;
        attn_feature_map(v, bt, d, kb, b->f.phi_k);
        attn_gemm(bt, F, dv, vb, dv, b->dST, F, b->dphi, F, 0);
        for (int r = 0; r < bt; r++) attn_axpy(b->dphi + (size_t)r * F, b->dz, F, 1.0f);
        feature_grad(v, bt, d, kb, b->f.phi_k, b->dphi, grads->k + (size_t)t0 * d);
        attn_gemm(bt, dv, F, b->f.phi_k, F, b->dS, dv, grads->v + (size_t)t0 * dv, dv, 0);
    }
}

static void kernel_causal(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                          const float *dout, float *out, const attn_grads *grads,
                          kernel_grad_buffers *b) {
    int n = dims->n, d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    int skip = F - d; /* taylor's constant feature has no gradient and no room in grads->k */
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
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
        mask_upper(bt, b->dP);
        attn_gemm(bt, F, bt, b->dP, BT, b->f.phi_k, F, b->dphi, F, 1);
        feature_grad(v, bt, d, in->q + (size_t)t0 * d, b->f.phi_q, b->dphi, grads->q + (size_t)t0 * d);
        attn_gemm_tn(bt, F, bt, b->dP, BT, b->f.phi_q, F, b->dphi, F, 0);
        for (int r = 0; r < bt; r++) attn_copy(gk + (size_t)r * d, b->dphi + (size_t)r * F + skip, d);
        attn_copy(grads->v + (size_t)t0 * dv, b->G, bt * dv);
        attn_kernel_absorb(v, dims, in, t0, bt, &b->f);
    }
    for (int t0 = (n - 1) / BT * BT; t0 >= 0; t0 -= BT) {
        int bt = imin(BT, n - t0);
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
        feature_grad(v, bt, d, kb, b->f.phi_k, b->dphi, gk);
        attn_gemm(bt, dv, bt, b->f.PT, BT, b->G, dv, gv, dv, 0);
        attn_gemm(bt, dv, F, b->f.phi_k, F, b->dS, dv, gv, dv, 1);
        attn_gemm_tn(F, dv, bt, b->f.phi_q, F, b->G, dv, b->dS, dv, 1);
        add_weighted_rows(bt, F, b->f.phi_q, b->a, b->dz);
    }
}

static void kernel_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                            const attn_options *opt, const float *dout, float *out,
                            const attn_grads *grads, arena *ws) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    kernel_grad_buffers b;
    b.f.phi_q = arena_floats(ws, (uint64_t)BT * F);
    b.f.phi_k = arena_floats(ws, (uint64_t)BT * F);
    b.f.phi_qt = arena_floats(ws, (uint64_t)F * BT);
    b.f.phi_kt = arena_floats(ws, (uint64_t)F * BT);
    b.f.PT = arena_floats(ws, (uint64_t)BT * BT);
    b.f.S = arena_floats(ws, (uint64_t)F * dv);
    b.f.z = arena_floats(ws, (uint64_t)F);
    b.f.den = arena_floats(ws, (uint64_t)BT);
    b.G = arena_floats(ws, (uint64_t)BT * dv);
    b.a = arena_floats(ws, (uint64_t)BT);
    b.dP = arena_floats(ws, (uint64_t)BT * BT);
    b.VT = arena_floats(ws, (uint64_t)dv * BT);
    b.ST = arena_floats(ws, (uint64_t)dv * F);
    b.dphi = arena_floats(ws, (uint64_t)BT * F);
    b.dS = arena_floats(ws, (uint64_t)F * dv);
    b.dST = arena_floats(ws, (uint64_t)dv * F);
    b.dz = arena_floats(ws, (uint64_t)F);
    if (arena_measuring(ws)) return;
    attn_fill(b.f.S, (size_t)F * dv, 0.0f);
    attn_fill(b.f.z, (size_t)F, 0.0f);
    attn_fill(b.dS, (size_t)F * dv, 0.0f);
    attn_fill(b.dz, (size_t)F, 0.0f);
    if (opt->causal)
        kernel_causal(v, dims, in, opt->eps, dout, out, grads, &b);
    else
        kernel_full(v, dims, in, opt->eps, dout, out, grads, &b);
}

/* ---- efficient attention ---- */

static void efficient_full_backward(const attn_dims *dims, const attn_inputs *in,
                                    const float *dout, float *out, const attn_grads *grads,
                                    arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    float *m = arena_floats(ws, (uint64_t)d);
    float *chunk_max = arena_floats(ws, (uint64_t)d);
    float *rho = arena_floats(ws, (uint64_t)BT * d); /* rho_q, then rho_k, of a chunk */
    float *rho_t = arena_floats(ws, (uint64_t)d * BT);
    float *C = arena_floats(ws, (uint64_t)d * dv);
    float *z = arena_floats(ws, (uint64_t)d);
    float *CT = arena_floats(ws, (uint64_t)dv * d);
    float *drho = arena_floats(ws, (uint64_t)BT * d);
    float *dC = arena_floats(ws, (uint64_t)d * dv);
    float *dCT = arena_floats(ws, (uint64_t)dv * d);
    float *r = arena_floats(ws, (uint64_t)d);
    if (arena_measuring(ws)) return;
    attn_efficient_context(dims, in, m, chunk_max, rho, C, z);
    attn_transpose(d, dv, C, dv, CT, d, 1.0f);
    attn_fill(dC, (size_t)d * dv, 0.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *g = dout + (size_t)t0 * dv;
        attn_efficient_full_chunk(d, dv, bt, in->q + (size_t)t0 * d, C, rho, rho_t, out + (size_t)t0 * dv);
        attn_gemm(bt, d, dv, g, dv, CT, d, drho, d, 0);
        for (int i = 0; i < bt; i++)
            softmax_grad(d, rho + (size_t)i * d, drho + (size_t)i * d, grads->q + (size_t)(t0 + i) * d);
        attn_gemm_tn(d, dv, bt, rho, d, g, dv, dC, dv, 1);
    }
    attn_transpose(d, dv, dC, dv, dCT, d, 1.0f);
    for (int c = 0; c < d; c++) {
        r[c] = dot(C + (size_t)c * dv, dC + (size_t)c * dv, dv);
        z[c] = 1.0f / z[c]; /* as the context was divided */
    }
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *kb = in->k + (size_t)t0 * d;
        attn_exp_minus_columns(bt, d, kb, m, rho);
        for (int j = 0; j < bt; j++)
            for (int c = 0; c < d; c++) rho[(size_t)j * d + c] *= z[c];
        attn_gemm(bt, dv, d, rho, d, dC, dv, grads->v + (size_t)t0 * dv, dv, 0);
        attn_gemm(bt, d, dv, in->v + (size_t)t0 * dv, dv, dCT, d, drho, d, 0);
        for (int j = 0; j < bt; j++) {
            const float *pj = rho + (size_t)j * d, *gj = drho + (size_t)j * d;
            float *dk = grads->k + (size_t)(t0 + j) * d;
            for (int c = 0; c < d; c++) dk[c] = pj[c] * (gj[c] - r[c]);
        }
    }
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

/* One chunk whose Z underflows, forward: row by row as the forward pass; W stays in grads->k. */
static void efficient_rows_forward(int d, int dv, const attn_inputs *in, int t0, int bt,
                                   const float *dout, float *out, const attn_grads *grads,
                                   efficient_grad_buffers *b) {
    const attn_efficient_buffers *f = &b->f;
    for (int i = t0; i < t0 + bt; i++) {
        attn_efficient_rows(d, dv, in, i, i + 1, out, f);
        const float *g = dout + (size_t)i * dv;
        float *drho = b->tmp, *W = grads->k + (size_t)i * d;
        for (int c = 0; c < d; c++) drho[c] = dot(f->S + (size_t)c * dv, g, dv) / f->z[c];
        softmax_grad(d, f->rho, drho, grads->q + (size_t)i * d);
        for (int c = 0; c < d; c++) W[c] = drho[c] * (f->rho[c] / f->z[c]);
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
        float gv_i = dot(g, vi, dv), own = 0.0f;
        attn_fill(gv, (size_t)dv, 0.0f);
        for (int c = 0; c < d; c++) {
            const float *dSc = b->dS + (size_t)c * dv;
            e[c] = attn_expf(ki[c] - mu[c]);
            Qi[c] = f->rho[c] / zr[c];
            float W = gk[c];
            gk[c] = e[c] * (dot(vi, dSc, dv) - b->dz[c] + Qi[c] * gv_i - W);
            attn_axpy(gv, dSc, dv, e[c]);
            own += e[c] * Qi[c];
            attn_axpy(b->dS + (size_t)c * dv, g, dv, Qi[c]);
            b->dz[c] += W;
        }
        attn_axpy(gv, g, dv, own);
    }
}

static void efficient_causal_backward(const attn_dims *dims, const attn_inputs *in,
                                      const float *dout, float *out, const attn_grads *grads,
                                      arena *ws) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    uint64_t chunks = round_up64(n, BT) / BT;
    efficient_grad_buffers b;
    attn_efficient_buffers *f = &b.f;
    attn_efficient_carve(d, dv, 1, ws, f);
    b.ST = arena_floats(ws, (uint64_t)dv * d);
    b.VT = arena_floats(ws, (uint64_t)dv * BT);
    b.dP = arena_floats(ws, (uint64_t)BT * BT);
    b.dQ = arena_floats(ws, (uint64_t)BT * d);
    b.Qr = arena_floats(ws, (uint64_t)BT * d);
    b.tmp = arena_floats(ws, (uint64_t)BT * d + d); /* the row path uses 2d */
    b.dS = arena_floats(ws, (uint64_t)d * dv);
    b.dST = arena_floats(ws, (uint64_t)dv * d);
    b.dz = arena_floats(ws, (uint64_t)d);
    b.mu_next = arena_floats(ws, (uint64_t)d);
    b.stats = arena_floats(ws, chunks * 3u * (uint64_t)d);
    if (arena_measuring(ws)) return;

    attn_fill(f->m, (size_t)d, -ATTN_INF);
    attn_fill(f->z, (size_t)d, 0.0f);
    attn_fill(f->S, (size_t)d * dv, 0.0f);
    for (int t0 = 0; t0 < n; t0 += BT) {
        int bt = imin(BT, n - t0);
        const float *qb = in->q + (size_t)t0 * d, *vb = in->v + (size_t)t0 * dv;
        const float *g = dout + (size_t)t0 * dv;
        float *stats = b.stats + (size_t)(t0 / BT) * 3 * d, *wsum = stats + 2 * d;
        float *gk = grads->k + (size_t)t0 * d;
        attn_copy(stats, f->m, d);
        attn_copy(stats + d, f->z, d);
        if (attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, f)) {
            efficient_rows_forward(d, dv, in, t0, bt, dout, out, grads, &b);
            continue;
        }
        attn_efficient_chunk_out(d, dv, bt, qb, vb, out + (size_t)t0 * dv, f);
        attn_transpose(d, dv, f->S, dv, b.ST, d, 1.0f);
        for (int i = 0; i < bt * d; i++) b.Qr[i] = f->rho_rows[i] / f->Zq[i];
        attn_gemm(bt, d, dv, g, dv, b.ST, d, b.dQ, d, 0);
        attn_transpose(bt, dv, vb, dv, b.VT, BT, 1.0f);
        attn_gemm(bt, bt, dv, g, dv, b.VT, BT, b.dP, BT, 0);
        mask_upper(bt, b.dP);
        attn_gemm(bt, d, bt, b.dP, BT, f->E, d, b.dQ, d, 1);
        for (int r = 0; r < bt; r++) {
            float *dq = b.dQ + (size_t)r * d;
            const float *zr = f->Zq + (size_t)r * d, *Qr = b.Qr + (size_t)r * d;
            for (int c = 0; c < d; c++) dq[c] /= zr[c];
            softmax_grad(d, f->rho_rows + (size_t)r * d, dq, grads->q + (size_t)(t0 + r) * d);
            for (int c = 0; c < d; c++) dq[c] *= Qr[c];
        }
        attn_fill(wsum, (size_t)d, 0.0f);
        for (int r = 0; r < bt; r++) attn_axpy(wsum, b.dQ + (size_t)r * d, d, 1.0f);
        for (int r = bt - 2; r >= 0; r--) attn_axpy(b.dQ + (size_t)r * d, b.dQ + (size_t)(r + 1) * d, d, 1.0f);
        attn_gemm_tn(bt, d, bt, b.dP, BT, b.Qr, d, b.tmp, d, 0);
        for (int i = 0; i < bt * d; i++) gk[i] = f->E[i] * (b.tmp[i] - b.dQ[i]);
        attn_gemm(bt, dv, bt, f->PT, BT, g, dv, grads->v + (size_t)t0 * dv, dv, 0);
        attn_efficient_chunk_absorb(d, dv, bt, vb, f);
    }

    int have_next = 0;
    attn_fill(b.dS, (size_t)d * dv, 0.0f);
    attn_fill(b.dz, (size_t)d, 0.0f);
    for (int t0 = (n - 1) / BT * BT; t0 >= 0; t0 -= BT) {
        int bt = imin(BT, n - t0);
        const float *vb = in->v + (size_t)t0 * dv, *g = dout + (size_t)t0 * dv;
        const float *stats = b.stats + (size_t)(t0 / BT) * 3 * d;
        float *gk = grads->k + (size_t)t0 * d;
        attn_copy(f->m, stats, d);
        attn_copy(f->z, stats + d, d);
        if (attn_efficient_chunk_start(d, bt, in->k + (size_t)t0 * d, f)) {
            efficient_rows_reverse(d, dv, in, t0, bt, dout, grads, &b, &have_next);
            continue;
        }
        shrink_to(d, dv, f->chunk_max, &b, &have_next);
        attn_transpose(d, dv, b.dS, dv, b.dST, d, 1.0f);
        attn_gemm(bt, d, dv, vb, dv, b.dST, d, b.tmp, d, 0);
        for (int j = 0; j < bt; j++)
            for (int c = 0; c < d; c++) {
                size_t at = (size_t)j * d + c;
                gk[at] += f->E[at] * (b.tmp[at] - b.dz[c]);
            }
        attn_gemm(bt, dv, d, f->E, d, b.dS, dv, grads->v + (size_t)t0 * dv, dv, 1);
        attn_softmax_rows(bt, d, in->q + (size_t)t0 * d, f->rho_rows);
        for (int i = 0; i < bt * d; i++) b.Qr[i] = f->rho_rows[i] / f->Zq[i];
        attn_gemm_tn(d, dv, bt, b.Qr, d, g, dv, b.dS, dv, 1);
        attn_axpy(b.dz, stats + 2 * d, d, 1.0f);
    }
}

void attn_linear_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, arena *ws) {
    if (v != ATTN_EFFICIENT)
        kernel_backward(v, dims, in, opt, dout, out, grads, ws);
    else if (opt->causal)
        efficient_causal_backward(dims, in, dout, out, grads, ws);
    else
        efficient_full_backward(dims, in, dout, out, grads, ws);
}
