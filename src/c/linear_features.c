/* linear_features.c — the linear family's forms, and the kernelised form's feature maps: every
 * fact a map has (its width, whether it leads with the constant feature 1, the map itself and its
 * Jacobian) in one place, each a switch over linear_form that ends in LINEAR_FORM_COUNT with no
 * default, so the compiler names every spot a new map must fill.
 *
 * The kernelised form (linear_kernel.c, linear_kernel_backward.c):
 *   y_i = phi(q_i)^T S / (phi(q_i)·z + eps),  S = sum_j phi(k_j) v_j^T  [F, dv],  z = sum_j phi(k_j)
 * elu1 (variant linear): phi(t) = elu(t) + 1, F = d.
 * taylor: phi(x) = [1, x/|x|], F = d + 1, which gives exactly 1 + q̂·k̂ and docs/contract.md's
 *   (sum v + q̂^T sum k̂ v^T) / (n + q̂·sum k̂ + eps). Its feature 0 is the constant 1, so z[0] is a
 *   count of keys, written as one (float sums of ones stall at 2^24) and given no gradient.
 * efficient (efficient.c, efficient_backward.c) has no feature map: two softmaxes; its state has
 * d rows. */
#include "internal.h"

/* variants.def's form column, read for the linear family: LINEAR_FORM_<form>; the other families
 * have none. A new family must say so here (an undefined FORM_OF_<family> does not compile). */
#define FORM_OF_linear(form) LINEAR_FORM_##form
#define FORM_OF_softmax(form) LINEAR_FORM_COUNT
#define FORM_OF_synthesizer(form) LINEAR_FORM_COUNT
#define FORM_OF_fixed(form) LINEAR_FORM_COUNT
#define FORM_OF_recurrent(form) LINEAR_FORM_COUNT
static const linear_form forms[ATTN_VARIANT_COUNT] = {
#define X(ENUM, id, label, family, form, ...) [ENUM] = FORM_OF_##family(form),
#include "variants.def"
#undef X
};

linear_form attn_linear_form(attn_variant v) { return forms[v]; }

linear_kind attn_linear_kind(attn_variant v) {
    switch (attn_linear_form(v)) {
    case LINEAR_FORM_elu1: case LINEAR_FORM_taylor: return LINEAR_KIND_KERNEL;
    case LINEAR_FORM_efficient: return LINEAR_KIND_EFFICIENT;
    case LINEAR_FORM_COUNT: break;
    }
    return LINEAR_KIND_COUNT;
}

int attn_state_width(attn_variant v, int d) {
    switch (attn_linear_form(v)) {
    case LINEAR_FORM_elu1: return d;
    case LINEAR_FORM_taylor: return d + 1;
    case LINEAR_FORM_efficient: return d;
    case LINEAR_FORM_COUNT: break;
    }
    return 0;
}

int attn_leads_with_one(attn_variant v) {
    switch (attn_linear_form(v)) {
    case LINEAR_FORM_elu1: return 0;
    case LINEAR_FORM_taylor: return 1;
    case LINEAR_FORM_efficient: return 0;
    case LINEAR_FORM_COUNT: break;
    }
    return 0;
}

float attn_taylor_norm(const float *x, int d) {
    /* |x| as max|x_c| * |x / max|x_c||, so squares cannot overflow (|x_c| up to 3.4e38) */
    float big = 0.0f, ss = 0.0f;
    for (int c = 0; c < d; c++) big = __builtin_fabsf(x[c]) > big ? __builtin_fabsf(x[c]) : big;
    for (int c = 0; c < d && big > 0.0f; c++) ss += (x[c] / big) * (x[c] / big);
    return big * __builtin_sqrtf(ss);
}

/* attn_taylor_norm of rows 0..3 of x, one row per lane: per lane the same operations in the same
 * order (the maximum is exact in any order; the squares add over c in increasing order), so the
 * same bits, at a quarter of the scalar divisions and without the scalar chain of additions, which
 * cost taylor as much as its two matrix products. */
static void taylor_norms4(const float *x, int d, float norm[VW]) {
    vf big = vf_zero(), ss = vf_zero(), col[VW];
    for (int c = 0; c < d; c += VW) {
        attn_load_columns4(x, d, c, col);
        for (int i = 0; i < VW && c + i < d; i++) big = vf_max(big, vf_max(col[i], vf_sub(vf_zero(), col[i])));
    }
    vf div = vf_select_gt0(big, big, vf_splat(1.0f)); /* a zero row: 0 / 1, no 0 / 0 */
    for (int c = 0; c < d; c += VW) {
        attn_load_columns4(x, d, c, col);
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

static void elu1_map(int rows, int d, const float *x, float *dst) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d;
        float *out = dst + (size_t)r * d;
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
    }
}

static void taylor_map(int rows, int d, const float *x, float *dst) {
    float norms[VW];
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d;
        float *out = dst + (size_t)r * (d + 1);
        if (r % VW == 0 && r + VW <= rows) taylor_norms4(xr, d, norms);
        float norm = r - r % VW + VW <= rows ? norms[r % VW] : attn_taylor_norm(xr, d);
        out[0] = 1.0f;
        /* divide rather than multiply by 1/norm: for d = 1, x / sqrt(x*x) is exactly +-1,
         * so opposite unit vectors give a similarity of exactly 0 */
        float den = norm > 1e-12f ? norm : 1e-12f;
        for (int c = 0; c < d; c++) out[1 + c] = xr[c] / den;
    }
}

void attn_feature_map(attn_variant v, int rows, int d, const float *x, float *dst) {
    switch (attn_linear_form(v)) {
    case LINEAR_FORM_elu1: elu1_map(rows, d, x, dst); return;
    case LINEAR_FORM_taylor: taylor_map(rows, d, x, dst); return;
    case LINEAR_FORM_efficient: /* no feature map: efficient.c's softmaxes */
    case LINEAR_FORM_COUNT: break;
    }
}

/* (elu + 1)' is 1 above 0 and exp(t) = phi(t) below */
static void elu1_map_grad(int rows, int d, const float *x, const float *phi, const float *dphi, float *dx) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d, *pr = phi + (size_t)r * d, *gr = dphi + (size_t)r * d;
        float *out = dx + (size_t)r * d;
        int c = 0;
        for (; c + VW <= d; c += VW)
            vf_store(out + c, vf_mul(vf_load(gr + c), vf_select_gt0(vf_load(xr + c), vf_splat(1.0f), vf_load(pr + c))));
        for (; c < d; c++) out[c] = gr[c] * (xr[c] > 0.0f ? 1.0f : pr[c]);
    }
}

/* x̂ = x / max(|x|, 1e-12); above the floor its Jacobian is (I - x̂ x̂^T) / |x|, below it
 * I / 1e-12. The constant feature 0 has no gradient. */
static void taylor_map_grad(int rows, int d, const float *x, const float *phi, const float *dphi, float *dx) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * d;
        const float *xh = phi + (size_t)r * (d + 1) + 1, *g = dphi + (size_t)r * (d + 1) + 1;
        float *out = dx + (size_t)r * d;
        float norm = attn_taylor_norm(xr, d);
        if (norm > 1e-12f) {
            float s = 0.0f;
            for (int c = 0; c < d; c++) s += xh[c] * g[c];
            for (int c = 0; c < d; c++) out[c] = (g[c] - xh[c] * s) / norm;
        } else {
            for (int c = 0; c < d; c++) out[c] = g[c] / 1e-12f;
        }
    }
}

void attn_feature_map_grad(attn_variant v, int rows, int d, const float *x, const float *phi,
                           const float *dphi, float *dx) {
    switch (attn_linear_form(v)) {
    case LINEAR_FORM_elu1: elu1_map_grad(rows, d, x, phi, dphi, dx); return;
    case LINEAR_FORM_taylor: taylor_map_grad(rows, d, x, phi, dphi, dx); return;
    case LINEAR_FORM_efficient: /* efficient_backward.c: its softmaxes' Jacobians */
    case LINEAR_FORM_COUNT: break;
    }
}
