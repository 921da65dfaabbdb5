/* recurrent_chunked.c — the chunked forms: plain-linear's, deltanet's and gated-deltanet's from
 * 64 x 64 floats of state, gla's from 128 x 128 (recurrent.c picks the form by shape:
 * chunked_form, with the measurements). The same sums as the token-by-token scan,
 *   S_t = diag(e^{g_t}) S_{t-1} + k_t u_t^T,   y_t = scale S_t^T q_t
 * (g = 0 without a gate; u = v without the delta rule, else u_t = beta_t (v_t - (e^{g_t} S_{t-1})^T
 * k_t)), taken a chunk of tokens at a time through the GEMM micro-kernel:
 *   y_c = scale (Qg S + tril(Qg Kg^T) U_c);   S <- e^Gamma S + Kh^T U_c
 * (the state before the chunk, then the chunk's own causal triangle; the decays as factors and the
 * delta rules' U by forward substitution, below; otherwise Qg, Kg and Kh are Q and K, U is V). The
 * scan loads and stores all of S every token, which bounds it (from L1, and more so from L2 once S
 * outgrows L1); this touches S twice a chunk,
 * for CHUNK_T (d + dv) more multiply-adds a token (the triangle). Chunks of 16 tokens: at n = 4096
 * on SIMD128 plain-linear's ran 0.69-0.80x the scan's time at d = dv = 128 and 256, chunks of 32
 * 0.73-0.80x, of 64 0.82-0.94x. plain-linear's backward is the same products in reverse (below);
 * the other rules' are the scan's, from these checkpoints.
 *
 * Chunks end at CHUNK_T tokens and at every multiple of the checkpoint spacing, whether or not
 * checkpoints are kept, so keeping them does not change y, and the backward's own forward pass
 * gives attention()'s bits. Sums over the key dimension and over a chunk's tokens add in
 * increasing order (the micro-kernel's); a column's bits do not depend on the others when a range
 * starts at a multiple of 2 VW (the micro-kernel's width), which is how threads split dv. Not the
 * scan's bits, nor those of a sequence taken in pieces (their chunks end elsewhere): within the
 * bar of the float64 reference, as the scan. */
#include "internal.h"

#define CHUNK_T 16

/* The chunk starting at token t0 (every chunk of a pass starts where the last ended). */
static int chunk_length(int t0, int n, int spacing) { return imin(imin(CHUNK_T, n - t0), spacing - t0 % spacing); }

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Zeros above the diagonal of a chunk's bt x bt block (row stride CHUNK_T): the causal triangle. */
static void keep_lower_triangle(float *P, int bt) {
    for (int i = 0; i + 1 < bt; i++) attn_fill(P + (size_t)i * CHUNK_T + i + 1, (size_t)(bt - i - 1), 0.0f);
}

/* ---- the gated rules' chunks: the decays as factors ----
 * With G_s = g_{t0} + ... + g_{t0+s} (per key feature, inside the chunk) and Gamma = G_{bt-1},
 * the state after token s of the chunk is e^{G_s} S + sum_{j<=s} e^{G_s - G_j} k_j v_j^T, so
 *   y_c = scale (Qg S + tril(Qg Kg^T) V_c);   S <- e^Gamma S + Kh^T V_c
 * with Qg = q e^G, Kg = k e^{-G} and Kh = k e^{Gamma - G} (row by row, feature by feature). The
 * factors e^{+-G} are safe while |G| <= GATE_LIMIT: a chunk whose decays sum past it (a gate
 * near 0, or g > 0 growing the state) runs the scan's steps instead, the same in the backward. */
#define GATE_LIMIT 20.0f

typedef struct gate_factors {
    float *E, *Qg, *Kg, *Kh, *Kq; /* [CHUNK_T, d] each: e^G, then the scaled rows (Kq = k e^G: gated-deltanet's) */
} gate_factors;

/* The chunk's factors; 0 when some |G| passes GATE_LIMIT (then only E is written). */
static int make_gate_factors(const attn_recurrent_io *io, int t0, int bt, const gate_factors *f) {
    int d = io->d;
    float *E = f->E, lo = 0.0f, hi = 0.0f;
    vf vlo = vf_zero(), vhi = vf_zero();
    for (int s = 0; s < bt; s++) { /* G, row by row */
        const float *g = io->g + (size_t)(t0 + s) * io->g_cols;
        float *row = E + (size_t)s * d;
        int i = 0;
        for (; i + VW <= d; i += VW) {
            vf x = vf_add(s ? vf_load(row - d + i) : vf_zero(), io->g_cols == 1 ? vf_splat(g[0]) : vf_load(g + i));
            vlo = vf_min(vlo, x), vhi = vf_max(vhi, x);
            vf_store(row + i, x);
        }
        for (; i < d; i++) {
            float x = (s ? row[i - d] : 0.0f) + g[io->g_cols == 1 ? 0 : i];
            lo = x < lo ? x : lo, hi = x > hi ? x : hi;
            row[i] = x;
        }
    }
    float lanes[VW];
    vf_store(lanes, vlo);
    for (int l = 0; l < VW; l++) lo = lanes[l] < lo ? lanes[l] : lo;
    vf_store(lanes, vhi);
    for (int l = 0; l < VW; l++) hi = lanes[l] > hi ? lanes[l] : hi;
    if (!(lo >= -GATE_LIMIT && hi <= GATE_LIMIT)) return 0;
    const float *gamma = E + (size_t)(bt - 1) * d;
    for (int s = bt - 1; s >= 0; s--) { /* e^G, last row first: gamma's row is needed exponentiated */
        float *row = E + (size_t)s * d;
        int i = 0;
        for (; i + VW <= d; i += VW) vf_store(row + i, vf_exp(vf_load(row + i)));
        for (; i < d; i++) row[i] = attn_expf(row[i]);
    }
    for (int s = 0; s < bt; s++) {
        const float *e = E + (size_t)s * d, *q = io->q + (size_t)(t0 + s) * d, *k = io->k + (size_t)(t0 + s) * d;
        float *qg = f->Qg + (size_t)s * d, *kg = f->Kg + (size_t)s * d, *kh = f->Kh + (size_t)s * d;
        float *kq = f->Kq ? f->Kq + (size_t)s * d : 0;
        int i = 0;
        for (; i + VW <= d; i += VW) {
            vf ev = vf_load(e + i), kgv = vf_div(vf_load(k + i), ev);
            vf_store(qg + i, vf_mul(vf_load(q + i), ev));
            vf_store(kg + i, kgv);
            vf_store(kh + i, vf_mul(kgv, vf_load(gamma + i)));
            if (kq) vf_store(kq + i, vf_mul(vf_load(k + i), ev));
        }
        for (; i < d; i++) {
            qg[i] = q[i] * e[i];
            kg[i] = k[i] / e[i];
            kh[i] = kg[i] * gamma[i];
            if (kq) kq[i] = k[i] * e[i];
        }
    }
    return 1;
}

/* ---- deltanet's chunks: the delta rule's corrections by forward substitution ----
 * The delta rule writes u_t = beta_t (v_t - S_{t-1}^T k_t), and inside a chunk S_{t-1} is the state
 * before it plus the chunk's earlier writes, so
 *   u_t = beta_t (v_t - S^T k_t - sum_{j<t} (k_t . k_j) u_j),
 * rows of U = (I + tril(diag(beta) K K^T, -1))^{-1} diag(beta) (V - K S), the DeltaNet paper's WY
 * form: K S through the micro-kernel, then the chunk's rows in order, each less its earlier rows
 * times k_t . k_j. Then y_c = scale (Q S + tril(Q K^T) U) and S += K^T U, as for plain-linear
 * with U for V. gated-deltanet's decays enter as gla's do: u_t reads the decayed state,
 * e^{G_t} S + sum_{j<t} e^{G_t - G_j} k_j u_j^T, so K S becomes Kq S (Kq = k e^G) and k_t . k_j
 * becomes Kq_t . Kg_j; then y and S as gla's, with U for V. Their backward is the scan's, from
 * these checkpoints. */
static void delta_corrections(const attn_recurrent_io *io, int t0, int bt, int c0, int w, const float *K,
                              const float *S, const float *KK, float *U) {
    int d = io->d, dv = io->dv;
    const float *V = io->v + (size_t)t0 * dv + c0;
    attn_gemm(bt, w, d, K, d, S + c0, dv, U, w, 0);
    for (int t = 0; t < bt; t++) {
        float *u = U + (size_t)t * w;
        const float *v = V + (size_t)t * dv;
        int j = 0;
        for (; j + VW <= w; j += VW) vf_store(u + j, vf_sub(vf_load(v + j), vf_load(u + j)));
        for (; j < w; j++) u[j] = v[j] - u[j];
        for (int e = 0; e < t; e++) attn_axpy(u, U + (size_t)e * w, w, -KK[(size_t)t * CHUNK_T + e]);
        attn_scale(u, w, io->beta[t0 + t]);
    }
}

uint64_t attn_recurrent_chunked_scratch(int d, int dv) {
    /* P and K^T; the gated rules: their five factor blocks and the scan's scratch for a chunk past
     * GATE_LIMIT; the delta rules: K K^T and U */
    return (uint64_t)CHUNK_T * CHUNK_T + (uint64_t)d * CHUNK_T + 5 * (uint64_t)CHUNK_T * d + (uint64_t)dv + d +
           (uint64_t)CHUNK_T * CHUNK_T + (uint64_t)CHUNK_T * dv;
}

void attn_recurrent_chunked_forward(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                                    float *scratch, float *checkpoints, int spacing) {
    int n = io->n, d = io->d, dv = io->dv, w = c1 - c0, gated = attn_recurrent_gated(rule), delta = attn_recurrent_delta(rule);
    float *P = scratch, *Kt = P + CHUNK_T * CHUNK_T; /* the chunk's Q K^T; K_c^T [d, CHUNK_T] */
    float *blocks = Kt + (size_t)d * CHUNK_T, *steps = blocks + 5 * (size_t)CHUNK_T * d;
    float *KK = steps + dv + d, *U = KK + CHUNK_T * CHUNK_T; /* the delta rules' K K^T [bt, bt] and U [bt, w] */
    size_t block = (size_t)CHUNK_T * d;
    gate_factors f = {blocks, blocks + block, blocks + 2 * block, blocks + 3 * block, delta ? blocks + 4 * block : 0};
    attn_recurrent_load_state(io, c0, w, S);
    for (int t0 = 0, bt; t0 < n; t0 += bt) {
        bt = chunk_length(t0, n, spacing);
        if (checkpoints && t0 % spacing == 0) attn_recurrent_keep_checkpoint(io, c0, w, S, checkpoints, t0 / spacing);
        const float *Q = io->q + (size_t)t0 * d, *K = io->k + (size_t)t0 * d, *Kw = K, *Kr = K;
        const float *V = io->v + (size_t)t0 * dv + c0;
        if (gated) { /* Q K^T with the decays between; S's write; the delta rule's reads of S */
            if (!make_gate_factors(io, t0, bt, &f)) {
                attn_recurrent_steps(rule, io, t0, t0 + bt, c0, w, S, steps);
                continue;
            }
            Q = f.Qg, K = f.Kg, Kw = f.Kh, Kr = f.Kq;
        }
        float *y = io->y + (size_t)t0 * dv + c0;
        int ldv = dv;
        attn_gemm(bt, w, d, Q, d, S + c0, dv, y, dv, 0);
        attn_transpose(bt, d, K, d, Kt, CHUNK_T, 1.0f);
        if (delta) { /* the values the chunk writes: U for V */
            attn_gemm(bt, bt, d, Kr, d, Kt, CHUNK_T, KK, CHUNK_T, 0);
            delta_corrections(io, t0, bt, c0, w, Kr, S, KK, U);
            V = U, ldv = w;
        }
        attn_gemm(bt, bt, d, Q, d, Kt, CHUNK_T, P, CHUNK_T, 0);
        keep_lower_triangle(P, bt);
        attn_gemm(bt, w, bt, P, CHUNK_T, V, ldv, y, dv, 1);
        for (int i = 0; i < bt; i++) attn_scale(y + (size_t)i * dv, w, io->scale);
        if (gated)
            for (int i = 0; i < d; i++) attn_scale(S + (size_t)i * dv + c0, w, f.E[(size_t)(bt - 1) * d + i]);
        attn_gemm_tn(d, w, bt, Kw, d, V, ldv, S + c0, dv, 1);
    }
}

/* ---- plain-linear's backward: exact, chunk by chunk in reverse ----
 * Per stretch between checkpoints (the last first), the states before each of its chunks are
 * recomputed from the checkpoint (the forward's products, so its bits); then per chunk, the last
 * first, with dS the gradient of the state after the chunk and Y = scale dY_c:
 *   P = tril(Q K^T);  dP = tril(Y V^T)
 *   dQ = Y S_c^T + dP K        (S_c: the state before the chunk)
 *   dK = dP^T Q + V dS^T
 *   dV = P^T Y + K dS
 *   dS += Q^T Y                (now the gradient of S_c)
 * from the gradient of the final state (zero when none is given); the last dS is s0's. The
 * products with S_c and dS come out transposed ([d, chunk]) and are added in transposed, so S
 * and dS are never transposed themselves. Memory: the checkpoints (when the backward runs its
 * own forward pass), the states of one stretch, dS, and a few chunk-sized blocks. */

/* The chunk-sized blocks after the states: P, dP [CHUNK_T, CHUNK_T]; K^T, T [d, CHUNK_T] and T^T
 * [CHUNK_T, d]; V^T, Y^T [dv, CHUNK_T]; Y [CHUNK_T, dv]; or, before them, the own forward pass's
 * scratch. */
static uint64_t blocks_floats(int d, int dv) {
    uint64_t blocks = 2 * (uint64_t)CHUNK_T * CHUNK_T + (uint64_t)CHUNK_T * (3 * (uint64_t)d + 3 * (uint64_t)dv);
    uint64_t forward = attn_recurrent_chunked_scratch(d, dv);
    return blocks > forward ? blocks : forward;
}

uint64_t attn_recurrent_chunked_backward_floats(int n, int d, int dv, int spacing, int own_checkpoints) { /* plain-linear's */
    uint64_t state = (uint64_t)d * (uint64_t)dv;
    /* the checkpoints, one stretch's states, dS, and the final state of the own forward pass */
    uint64_t states = (own_checkpoints ? ceil_div((uint64_t)n, (uint64_t)spacing) : 0) + ceil_div((uint64_t)spacing, CHUNK_T) + 2;
    if (state > (ARENA_LIMIT / 4u) / (states + 2)) return ARENA_LIMIT / 4u; /* refused, never wrapped */
    return states * state + blocks_floats(d, dv);
}

/* x[r, :] += T[:, r] for r < rows: a block that came out transposed, added in. */
static void add_transposed(int rows, int cols, const float *T, int ldt, float *Tt, float *x, int ldx) {
    attn_transpose(cols, rows, T, ldt, Tt, cols, 1.0f);
    for (int r = 0; r < rows; r++) attn_axpy(x + (size_t)r * ldx, Tt + (size_t)r * cols, cols, 1.0f);
}

void attn_recurrent_chunked_backward(const attn_recurrent_io *io, const float *dy, const float *d_final, int spacing,
                                     const float *kept, const attn_recurrent_grads *grads, float *work) {
    int n = io->n, d = io->d, dv = io->dv, stretches = (int)ceil_div((uint64_t)n, (uint64_t)spacing);
    size_t state = (size_t)d * dv;
    float *own = kept ? 0 : work;
    float *states = work + (kept ? 0 : (size_t)stretches * state);
    float *dS = states + ceil_div((uint64_t)spacing, CHUNK_T) * state, *S_final = dS + state;
    float *P = S_final + state, *dP = P + CHUNK_T * CHUNK_T, *Kt = dP + CHUNK_T * CHUNK_T;
    float *T = Kt + (size_t)d * CHUNK_T, *Tt = T + (size_t)d * CHUNK_T, *Vt = Tt + (size_t)d * CHUNK_T;
    float *Yt = Vt + (size_t)dv * CHUNK_T, *Y = Yt + (size_t)dv * CHUNK_T;
    if (!kept) attn_recurrent_chunked_forward(RECURRENT_RULE_linear, io, 0, dv, S_final, P, own, spacing); /* y, the checkpoints */
    const float *checkpoints = kept ? kept : own;
    if (d_final)
        attn_copy(dS, d_final, (int)state);
    else
        attn_fill(dS, state, 0.0f);
    for (int c = stretches - 1; c >= 0; c--) {
        int s0 = c * spacing, s1 = imin(n, s0 + spacing), chunks = 0;
        /* the states before each chunk of the stretch */
        attn_copy(states, checkpoints + (size_t)c * state, (int)state);
        for (int t0 = s0, bt; t0 < s1; t0 += bt, chunks++) {
            bt = chunk_length(t0, n, spacing);
            if (t0 + bt >= s1) break;
            float *next = states + (size_t)(chunks + 1) * state;
            attn_copy(next, states + (size_t)chunks * state, (int)state);
            attn_gemm_tn(d, dv, bt, io->k + (size_t)t0 * d, d, io->v + (size_t)t0 * dv, dv, next, dv, 1);
        }
        /* the chunks, last first: chunk m starts at s0 + m CHUNK_T (the stretch starts at a multiple of spacing) */
        for (int m = chunks; m >= 0; m--) {
            int t0 = s0 + m * CHUNK_T, bt = chunk_length(t0, n, spacing);
            const float *Q = io->q + (size_t)t0 * d, *K = io->k + (size_t)t0 * d, *V = io->v + (size_t)t0 * dv;
            const float *Sc = states + (size_t)m * state;
            float *dQ = grads->q + (size_t)t0 * d, *dK = grads->k + (size_t)t0 * d, *dV = grads->v + (size_t)t0 * dv;
            for (int i = 0; i < bt; i++) attn_copy(Y + (size_t)i * dv, dy + (size_t)(t0 + i) * dv, dv);
            for (int i = 0; i < bt; i++) attn_scale(Y + (size_t)i * dv, dv, io->scale);
            attn_transpose(bt, dv, Y, dv, Yt, CHUNK_T, 1.0f);
            attn_transpose(bt, dv, V, dv, Vt, CHUNK_T, 1.0f);
            attn_transpose(bt, d, K, d, Kt, CHUNK_T, 1.0f);
            attn_gemm(bt, bt, d, Q, d, Kt, CHUNK_T, P, CHUNK_T, 0);
            attn_gemm(bt, bt, dv, Y, dv, Vt, CHUNK_T, dP, CHUNK_T, 0);
            keep_lower_triangle(P, bt);
            keep_lower_triangle(dP, bt);
            attn_gemm(bt, d, bt, dP, CHUNK_T, K, d, dQ, d, 0); /* dQ = dP K + (S_c Y^T)^T */
            attn_gemm(d, bt, dv, Sc, dv, Yt, CHUNK_T, T, CHUNK_T, 0);
            add_transposed(bt, d, T, CHUNK_T, Tt, dQ, d);
            attn_gemm_tn(bt, d, bt, dP, CHUNK_T, Q, d, dK, d, 0); /* dK = dP^T Q + (dS V^T)^T */
            attn_gemm(d, bt, dv, dS, dv, Vt, CHUNK_T, T, CHUNK_T, 0);
            add_transposed(bt, d, T, CHUNK_T, Tt, dK, d);
            attn_gemm_tn(bt, dv, bt, P, CHUNK_T, Y, dv, dV, dv, 0); /* dV = P^T Y + K dS */
            attn_gemm(bt, dv, d, K, d, dS, dv, dV, dv, 1);
            attn_gemm_tn(d, dv, bt, Q, d, Y, dv, dS, dv, 1); /* dS += Q^T Y */
        }
    }
    if (grads->s0) attn_copy(grads->s0, dS, (int)state);
}
