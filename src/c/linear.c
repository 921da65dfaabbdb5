/* linear.c — the linear family's entry: attention without an n x n matrix, in one of its forms
 * (linear_features.c): kernelised with a feature map (elu+1, Katharopoulos et al. 2020; taylor,
 * 1 + q̂·k̂; linear_kernel.c) or Efficient Attention (Shen et al. 2021; efficient.c). Here: the
 * forward pass, the state after all keys, and decoding's one-position step, each a switch over
 * the kind of form (kernelised or efficient).
 */
#include "internal.h"

void attn_linear_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, float *out, float *weights, arena *ws) {
    int causal = opt->causal != 0;
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL:
        attn_kernel_forward(v, dims, in, opt->eps, causal, out, ws);
        if (weights) attn_kernel_weights(v, dims, in, opt->eps, causal, weights, ws);
        return;
    case LINEAR_KIND_EFFICIENT:
        attn_efficient_forward(dims, in, causal, out, ws);
        if (weights) attn_efficient_weights(dims, in, causal, weights, ws);
        return;
    case LINEAR_KIND_COUNT: break;
    }
}

void attn_linear_state(attn_variant v, const attn_dims *dims, const attn_inputs *in, float *state,
                       float *normalizer, arena *ws) {
    int d = dims->d, dv = dims->dv, F = attn_state_width(v, d);
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL: {
        float *phi_k = arena_floats(ws, (uint64_t)BT * F);
        if (arena_measuring(ws)) return;
        attn_fill(state, (size_t)F * dv, 0.0f);
        attn_fill(normalizer, (size_t)F, 0.0f);
        attn_absorb_keys(v, dims, in, phi_k, state, normalizer);
        return;
    }
    case LINEAR_KIND_EFFICIENT: {
        float *m = arena_floats(ws, (uint64_t)d);
        float *chunk_max = arena_floats(ws, (uint64_t)d);
        float *e = arena_floats(ws, (uint64_t)BT * d);
        float *z = arena_floats(ws, (uint64_t)d);
        if (arena_measuring(ws)) return;
        attn_efficient_context(dims, in, m, chunk_max, e, state, z);
        for (int c = 0; c < d; c++) normalizer[c] = m[c] + attn_logf(z[c]); /* log sum_j exp(k_jc) */
        return;
    }
    case LINEAR_KIND_COUNT: break;
    }
}

/* ---- decoding: one position at a time ----
 * The causal recurrences, one row per call: O(F * dv) work and state whatever the position, the
 * "transformers are RNNs" property. The state is S [F, dv] then z [F] (efficient: then m [d]). */

int64_t attn_linear_step_floats(attn_variant v, int d, int dv) {
    int64_t F = attn_state_width(v, d);
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL: return F * dv + F;
    case LINEAR_KIND_EFFICIENT: return F * dv + F + d;
    case LINEAR_KIND_COUNT: break;
    }
    return 0;
}

void attn_linear_step_reset(attn_variant v, int d, int dv, float *state) {
    attn_fill(state, (size_t)attn_linear_step_floats(v, d, dv), 0.0f);
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL: return;
    case LINEAR_KIND_EFFICIENT: /* no key seen yet: every running maximum starts at -inf */
        attn_fill(state + (size_t)d * dv + d, (size_t)d, -ATTN_INF);
        return;
    case LINEAR_KIND_COUNT: break;
    }
}

int attn_linear_step_scratch(attn_variant v, int d) {
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL: return 2 * attn_state_width(v, d);
    case LINEAR_KIND_EFFICIENT: return d;
    case LINEAR_KIND_COUNT: break;
    }
    return 0;
}

/* S += phi(k) v^T, z += phi(k); y = phi(q)^T S / (phi(q).z + eps) */
static void kernel_step(attn_variant v, int d, int dv, float eps, int t, const float *q, const float *k,
                        const float *v_row, float *state, float *scratch, float *y) {
    int F = attn_state_width(v, d);
    float *S = state, *z = state + (size_t)F * dv, *phi_q = scratch, *phi_k = scratch + F;
    attn_feature_map(v, 1, d, k, phi_k);
    for (int f = 0; f < F; f++) attn_axpy(S + (size_t)f * dv, v_row, dv, phi_k[f]);
    attn_axpy(z, phi_k, F, 1.0f);
    if (attn_leads_with_one(v)) z[0] = (float)(t + 1); /* a count, as in the forward pass */
    attn_feature_map(v, 1, d, q, phi_q);
    attn_fill(y, (size_t)dv, 0.0f);
    for (int f = 0; f < F; f++) attn_axpy(y, S + (size_t)f * dv, dv, phi_q[f]);
    float den = 0.0f;
    for (int f = 0; f < F; f++) den += phi_q[f] * z[f];
    attn_scale(y, dv, 1.0f / (den + eps));
}

void attn_linear_step(attn_variant v, int d, int dv, float eps, int t, const float *q, const float *k,
                      const float *v_row, float *state, float *scratch, float *y) {
    switch (attn_linear_kind(v)) {
    case LINEAR_KIND_KERNEL:
        kernel_step(v, d, dv, eps, t, q, k, v_row, state, scratch, y);
        return;
    case LINEAR_KIND_EFFICIENT: { /* the forward pass's exact row-by-row update */
        float *S = state, *z = S + (size_t)d * dv, *m = z + d;
        attn_efficient_step(d, dv, q, k, v_row, m, z, S, scratch, y);
        return;
    }
    case LINEAR_KIND_COUNT: break;
    }
}
