/* fixed.c — input-independent attention patterns (Raganato et al. 2020): each row of A is a
 * uniform distribution over a span of positions [lo, hi], so y_i is the mean of v over that span.
 * O(n * w * dv) for the windowed patterns, O(n * dv) for the others; no softmax.
 */
#include "internal.h"

/* The span row i attends to, inclusive. */
static void pattern_span(int pattern, int n, int w, int i, int *lo, int *hi) {
    switch (pattern) {
    case ATTN_PATTERN_PREVIOUS: *lo = *hi = i > 0 ? i - 1 : 0; break;
    case ATTN_PATTERN_NEXT: *lo = *hi = i < n - 1 ? i + 1 : i; break;
    case ATTN_PATTERN_LEFT:
        if (i == 0) *lo = *hi = 0;
        else *lo = imax(0, i - w), *hi = i - 1;
        break;
    case ATTN_PATTERN_RIGHT:
        if (i == n - 1) *lo = *hi = i;
        else *lo = i + 1, *hi = w >= n - 1 - i ? n - 1 : i + w; /* i + w may overflow */
        break;
    case ATTN_PATTERN_FIRST: *lo = *hi = 0; break;
    case ATTN_PATTERN_LAST: *lo = *hi = n - 1; break;
    default: *lo = *hi = i; break; /* current */
    }
}

void attn_fixed(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, float *out,
                float *weights) {
    int n = dims->n, dv = dims->dv, w = opt->window;
    for (int i = 0; i < n; i++) {
        int lo, hi;
        pattern_span(opt->pattern, n, w, i, &lo, &hi);
        float share = 1.0f / (float)(hi - lo + 1);
        float *y = out + (size_t)i * dv;
        attn_fill(y, (size_t)dv, 0.0f);
        for (int j = lo; j <= hi; j++) attn_axpy(y, in->v + (size_t)j * dv, dv, 1.0f);
        attn_scale(y, dv, share);
        if (weights) {
            float *row = weights + (size_t)i * n;
            attn_fill(row, (size_t)n, 0.0f);
            for (int j = lo; j <= hi; j++) row[j] = share;
        }
    }
}

/* dv[j] = sum_i A[i, j] dout[i]: each row i hands dout[i] * share to every j of its span. */
void attn_fixed_backward(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                         const float *dout, float *out, const attn_grads *grads) {
    int n = dims->n, dv = dims->dv, w = opt->window;
    attn_fixed(dims, in, opt, out, 0);
    attn_fill(grads->v, (size_t)n * dv, 0.0f);
    for (int i = 0; i < n; i++) {
        int lo, hi;
        pattern_span(opt->pattern, n, w, i, &lo, &hi);
        float share = 1.0f / (float)(hi - lo + 1);
        for (int j = lo; j <= hi; j++) attn_axpy(grads->v + (size_t)j * dv, dout + (size_t)i * dv, dv, share);
    }
}
