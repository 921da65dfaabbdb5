/* recurrent.c — the recurrent family's forward scan: linear attention whose state forgets (gated,
 * as GLA, Mamba-2 and RetNet decay it) or overwrites (the delta rule of DeltaNet), or both (Gated
 * DeltaNet), as ONNX's LinearAttention (opset 27) defines them. One head; per token t, in order:
 *
 *   gated rules:  S ← diag(exp(g_t)) · S          (g [n, d], or [n] for one decay a token)
 *   delta rules:  u = β_t · (v_t − Sᵀ k_t)        (after the decay)
 *   other rules:  u = v_t
 *   every rule:   S ← S + k_t uᵀ;   y_t = scale · Sᵀ q_t   (read after the write)
 *
 * S [d, dv] starts as s0 (zeros when s0 is NULL) and ends as the state after the last token.
 * Column j of S, u and y depends on column j alone, in every rule: a scan over a range of columns
 * gives those columns' bits whatever else runs, so threads split dv. Sums over the key dimension
 * (Sᵀk, Sᵀq) add i = 0 .. d-1 in order; the rank-1 write is one multiply-add per element.
 * Its exact backward pass follows the scan. Not yet in variants.def: the registry, the API and
 * the binding come next.
 */
#include "internal.h"

int attn_recurrent_gated(recurrent_rule rule) {
    switch (rule) {
    case RECURRENT_RULE_linear: case RECURRENT_RULE_delta: return 0;
    case RECURRENT_RULE_gated: case RECURRENT_RULE_gated_delta: return 1;
    case RECURRENT_RULE_COUNT: break;
    }
    return 0;
}

int attn_recurrent_delta(recurrent_rule rule) {
    switch (rule) {
    case RECURRENT_RULE_linear: case RECURRENT_RULE_gated: return 0;
    case RECURRENT_RULE_delta: case RECURRENT_RULE_gated_delta: return 1;
    case RECURRENT_RULE_COUNT: break;
    }
    return 0;
}

/* acc[j] = sum_i x[i] * S[i, c0 + j] for j < w, i in increasing order (S's row stride ld). */
static void rows_dot(int d, int w, const float *x, const float *S, size_t ld, float *acc) {
    attn_fill(acc, (size_t)w, 0.0f);
    for (int i = 0; i < d; i++) attn_axpy(acc, S + (size_t)i * ld, w, x[i]);
}

/* The load of s0's columns [c0, c0 + w) into Sc (row stride dv), or zeros. */
static void load_state(const attn_recurrent_io *io, int c0, int w, float *Sc) {
    for (int i = 0; i < io->d; i++) {
        if (io->s0)
            attn_copy(Sc + (size_t)i * io->dv, io->s0 + (size_t)i * io->dv + c0, w);
        else
            attn_fill(Sc + (size_t)i * io->dv, (size_t)w, 0.0f);
    }
}

/* decay[i] = exp(g_t[i]) (one decay a token: one exp, every i alike). */
static void decays(const attn_recurrent_io *io, int t, float *decay) {
    if (io->g_cols == 1) {
        attn_fill(decay, (size_t)io->d, attn_expf(io->g[t]));
        return;
    }
    for (int i = 0; i < io->d; i++) decay[i] = attn_expf(io->g[(size_t)t * io->g_cols + i]);
}

/* Token t on columns [c0, c0 + w) of the state Sc (row stride dv): the decay, u (into u [w]),
 * the write, and y_t's columns. decay [d] is scratch. */
static void step(recurrent_rule rule, const attn_recurrent_io *io, int t, int c0, int w, float *Sc, float *u,
                 float *decay) {
    int d = io->d, dv = io->dv;
    const float *q = io->q + (size_t)t * d, *k = io->k + (size_t)t * d, *v = io->v + (size_t)t * dv + c0;
    if (attn_recurrent_gated(rule)) {
        decays(io, t, decay);
        for (int i = 0; i < d; i++) attn_scale(Sc + (size_t)i * dv, w, decay[i]);
    }
    if (attn_recurrent_delta(rule)) { /* u = beta (v - S^T k) */
        rows_dot(d, w, k, Sc, (size_t)dv, u);
        float beta = io->beta[t];
        for (int j = 0; j < w; j++) u[j] = beta * (v[j] - u[j]);
    } else {
        attn_copy(u, v, w);
    }
    for (int i = 0; i < d; i++) attn_axpy(Sc + (size_t)i * dv, u, w, k[i]);
    float *y = io->y + (size_t)t * dv + c0;
    rows_dot(d, w, q, Sc, (size_t)dv, y);
    attn_scale(y, w, io->scale);
}

void attn_recurrent_scan(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                         float *scratch) {
    int w = c1 - c0;
    load_state(io, c0, w, S + c0);
    for (int t = 0; t < io->n; t++) step(rule, io, t, c0, w, S + c0, scratch, scratch + w);
}

int attn_recurrent_scan_scratch(int d, int w) { return w + d; }

/* ---- the backward pass: exact, from checkpoints ----
 * The forward keeps S every `chunk` tokens (before the chunk's first); the backward takes the
 * chunks last to first, recomputes a chunk's states from its checkpoint (the same steps, so the
 * same bits) and walks back through them with dS, the gradient of the state after token t:
 *   S~ = diag(e^g) S_{t-1};  r = v - S~^T k;  u = beta r (delta rules; else u = v);  S_t = S~ + k u^T
 *   dS += scale q dy^T;  dq = scale S_t dy;  du = dS^T k;  dv = beta du (else du)
 *   dk = dS u - beta S~ du (the second term: delta rules);  dbeta = du . r
 *   dS~ = dS - beta k du^T (delta rules; else dS);  dg_i = sum_j dS~_ij S~_ij (one decay a token:
 *   summed over i too);  dS <- diag(e^g) dS~
 * starting from the gradient of the final state (zero when none is given); the last dS is s0's.
 * The recurrence is not run backwards instead: with beta = 1 and a unit key its transition is a
 * projection, which has no inverse. Memory: ceil(n / chunk) + chunk states of d x dv. */

static int chunks_of(int n, int chunk) { return (n + chunk - 1) / chunk; }

size_t attn_recurrent_backward_floats(int n, int d, int dv, int chunk) {
    size_t state = (size_t)d * dv;
    return ((size_t)chunks_of(n, chunk) + (size_t)chunk + 3) * state + 2 * (size_t)dv + (size_t)d;
}

void attn_recurrent_backward(recurrent_rule rule, const attn_recurrent_io *io, const float *dy,
                             const float *d_final, int chunk, const attn_recurrent_grads *grads,
                             float *work) {
    int n = io->n, d = io->d, dv = io->dv, gated = attn_recurrent_gated(rule), delta = attn_recurrent_delta(rule);
    size_t state = (size_t)d * dv;
    float *ckpt = work, *buf = ckpt + (size_t)chunks_of(n, chunk) * state, *S = buf + (size_t)chunk * state;
    float *St = S + state, *dS = St + state, *u = dS + state, *du = u + dv, *decay = du + dv;
    /* forward: y, the checkpoints, and the final state in S */
    load_state(io, 0, dv, S);
    for (int t = 0; t < n; t++) {
        if (t % chunk == 0) attn_copy(ckpt + (size_t)(t / chunk) * state, S, (int)state);
        step(rule, io, t, 0, dv, S, u, decay);
    }
    if (d_final)
        attn_copy(dS, d_final, (int)state);
    else
        attn_fill(dS, state, 0.0f);
    for (int c = chunks_of(n, chunk) - 1; c >= 0; c--) {
        int t0 = c * chunk, len = imin(chunk, n - t0);
        attn_copy(S, ckpt + (size_t)c * state, (int)state);
        for (int s = 0; s < len; s++) { /* the recomputed rows write y again, with the same bits */
            step(rule, io, t0 + s, 0, dv, S, u, decay);
            attn_copy(buf + (size_t)s * state, S, (int)state);
        }
        for (int s = len - 1; s >= 0; s--) {
            int t = t0 + s;
            const float *q = io->q + (size_t)t * d, *k = io->k + (size_t)t * d, *v = io->v + (size_t)t * dv;
            const float *g_out = dy + (size_t)t * dv, *Snow = buf + (size_t)s * state;
            float beta = delta ? io->beta[t] : 1.0f;
            /* S~ (the state before the write) into St, and u */
            attn_copy(St, s ? buf + (size_t)(s - 1) * state : ckpt + (size_t)c * state, (int)state);
            if (gated) {
                decays(io, t, decay);
                for (int i = 0; i < d; i++) attn_scale(St + (size_t)i * dv, dv, decay[i]);
            }
            if (delta) { /* r = v - S~^T k into u for now; u = beta r below */
                rows_dot(d, dv, k, St, (size_t)dv, u);
                for (int j = 0; j < dv; j++) u[j] = v[j] - u[j];
            } else {
                attn_copy(u, v, dv);
            }
            /* the read-out: dS += scale q dy^T, dq = scale S_t dy */
            for (int i = 0; i < d; i++) attn_axpy(dS + (size_t)i * dv, g_out, dv, io->scale * q[i]);
            for (int i = 0; i < d; i++)
                grads->q[(size_t)t * d + i] = io->scale * attn_dot_in_order(Snow + (size_t)i * dv, g_out, dv);
            rows_dot(d, dv, k, dS, (size_t)dv, du); /* du = dS^T k */
            if (delta) {
                grads->beta[t] = attn_dot_in_order(du, u, dv);
                for (int j = 0; j < dv; j++) u[j] *= beta; /* u = beta r */
            }
            for (int j = 0; j < dv; j++) grads->v[(size_t)t * dv + j] = beta * du[j];
            for (int i = 0; i < d; i++) { /* dk = dS u - beta S~ du */
                float a = attn_dot_in_order(dS + (size_t)i * dv, u, dv);
                float b = delta ? attn_dot_in_order(St + (size_t)i * dv, du, dv) : 0.0f;
                grads->k[(size_t)t * d + i] = a - beta * b;
            }
            if (delta) /* dS~ = dS - beta k du^T */
                for (int i = 0; i < d; i++) attn_axpy(dS + (size_t)i * dv, du, dv, -beta * k[i]);
            if (gated) {
                float total = 0.0f;
                for (int i = 0; i < d; i++) {
                    float gi = attn_dot_in_order(dS + (size_t)i * dv, St + (size_t)i * dv, dv);
                    if (io->g_cols == 1)
                        total += gi;
                    else
                        grads->g[(size_t)t * d + i] = gi;
                }
                if (io->g_cols == 1) grads->g[t] = total;
                for (int i = 0; i < d; i++) attn_scale(dS + (size_t)i * dv, dv, decay[i]);
            }
        }
    }
    if (grads->s0) attn_copy(grads->s0, dS, (int)state);
}
