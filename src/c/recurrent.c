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
 * Not yet in variants.def: the registry, the API, gradients and the binding come next.
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

void attn_recurrent_scan(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                         float *scratch) {
    int n = io->n, d = io->d, dv = io->dv, w = c1 - c0, gated = attn_recurrent_gated(rule);
    int delta = attn_recurrent_delta(rule);
    float *u = scratch, *decay = scratch + w; /* [w], [d] */
    float *Sc = S + c0;
    for (int i = 0; i < d; i++) {
        if (io->s0)
            attn_copy(Sc + (size_t)i * dv, io->s0 + (size_t)i * dv + c0, w);
        else
            attn_fill(Sc + (size_t)i * dv, (size_t)w, 0.0f);
    }
    for (int t = 0; t < n; t++) {
        const float *q = io->q + (size_t)t * d, *k = io->k + (size_t)t * d, *v = io->v + (size_t)t * dv + c0;
        if (gated) {
            for (int i = 0; i < d; i++) decay[i] = attn_expf(io->g[(size_t)t * io->g_cols + (io->g_cols == 1 ? 0 : i)]);
            for (int i = 0; i < d; i++) attn_scale(Sc + (size_t)i * dv, w, decay[i]);
        }
        if (delta) { /* u = beta (v - S^T k) */
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
}

int attn_recurrent_scan_scratch(int d, int w) { return w + d; }
