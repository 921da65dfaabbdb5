/* fixed.c — input-independent attention patterns (Raganato et al. 2020): each row of A is a
 * uniform distribution over a span of positions [lo, hi], so y_i is the mean of v over that span.
 * O(n * w * dv) for the windowed patterns, O(n * dv) for the others; no softmax.
 */
#include "internal.h"

/* The span row i attends to, inclusive. Every pattern has its case, so that a new one does not
 * compile without its span. */
static void pattern_span(attn_pattern pattern, int n, int w, int i, int *lo, int *hi) {
    *lo = *hi = i;
    switch (pattern) {
    case ATTN_PATTERN_CURRENT: break;
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
    case ATTN_PATTERN_COUNT: break; /* not a pattern: the checks admit none past the list */
    }
}

/* y [dv] = the mean of v's rows lo..hi. */
static void span_mean(int lo, int hi, const float *v, int dv, float *y) {
    attn_fill(y, (size_t)dv, 0.0f);
    for (int k = lo; k <= hi; k++) attn_axpy(y, v + (size_t)k * dv, dv, 1.0f);
    attn_scale(y, dv, 1.0f / (float)(hi - lo + 1));
}

void attn_fixed_row(const attn_options *opt, int n, int i, const float *v, int dv, float *y) {
    int lo, hi;
    pattern_span((attn_pattern)opt->pattern, n, opt->window, i, &lo, &hi);
    span_mean(lo, hi, v, dv, y);
}

/* ---- rows, and threads ----
 * The forward pass splits by blocks of BI query rows (each row is its own mean, and its own row of
 * A). The backward pass splits by blocks of BI key rows: dv[j] sums the rows i whose span holds j,
 * in increasing i, as one thread does, so both are bit-identical to one thread. No scratch. */
typedef struct fixed_job {
    const attn_dims *dims;
    const attn_inputs *in;
    const attn_options *opt;
    const float *dout;
    float *out, *weights;
    const attn_grads *grads;
} fixed_job;

static void fixed_rows(const fixed_job *j, int i0, int i1) {
    int n = j->dims->n, dv = j->dims->dv, w = j->opt->window;
    for (int i = i0; i < i1; i++) {
        int lo, hi;
        pattern_span((attn_pattern)j->opt->pattern, n, w, i, &lo, &hi);
        span_mean(lo, hi, j->in->v, dv, j->out + (size_t)i * dv);
        if (j->weights) {
            float *row = j->weights + (size_t)i * n, share = 1.0f / (float)(hi - lo + 1);
            attn_fill(row, (size_t)n, 0.0f);
            for (int k = lo; k <= hi; k++) row[k] = share;
        }
    }
}

static void fixed_rows_piece(void *ctx, int piece, int thread) {
    const fixed_job *j = ctx;
    (void)thread;
    fixed_rows(j, piece * BI, imin(j->dims->n, piece * BI + BI));
}

/* dv of key rows [j0, j1): every query row whose span meets them, in increasing order. Only rows
 * within reach of the block can meet it: 1 for current, previous and next, the window for left and
 * right (which alone read it); first and last meet one key, whose block takes every row while the
 * others only clear theirs, so a split does one thread's O(n * w * dv) work in all. */
static void fixed_key_rows(const fixed_job *j, int j0, int j1) {
    int n = j->dims->n, dv = j->dims->dv, w = j->opt->window;
    attn_pattern pattern = (attn_pattern)j->opt->pattern;
    attn_fill(j->grads->v + (size_t)j0 * dv, (size_t)(j1 - j0) * dv, 0.0f);
    int i0 = 0, i1 = n;
    if (pattern == ATTN_PATTERN_FIRST || pattern == ATTN_PATTERN_LAST) {
        int key = pattern == ATTN_PATTERN_FIRST ? 0 : n - 1;
        if (key < j0 || key >= j1) return;
    } else {
        int64_t reach = (pattern == ATTN_PATTERN_LEFT || pattern == ATTN_PATTERN_RIGHT) && w > 1 ? w : 1;
        i0 = (int)(j0 - reach > 0 ? j0 - reach : 0);
        i1 = (int)(j1 + reach < n ? j1 + reach : n);
    }
    for (int i = i0; i < i1; i++) {
        int lo, hi;
        pattern_span(pattern, n, w, i, &lo, &hi);
        float share = 1.0f / (float)(hi - lo + 1);
        for (int k = imax(lo, j0); k <= imin(hi, j1 - 1); k++)
            attn_axpy(j->grads->v + (size_t)k * dv, j->dout + (size_t)i * dv, dv, share);
    }
}

static void fixed_key_piece(void *ctx, int piece, int thread) {
    const fixed_job *j = ctx;
    (void)thread;
    fixed_key_rows(j, piece * BI, imin(j->dims->n, piece * BI + BI));
}

void attn_fixed(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, float *out,
                float *weights) {
    int n = dims->n;
    fixed_job job = {dims, in, opt, 0, out, weights, 0};
    if (n > BI && attn_thread_count() > 1)
        attn_parallel((n + BI - 1) / BI, fixed_rows_piece, &job);
    else
        fixed_rows(&job, 0, n);
}

/* dv[j] = sum_i A[i, j] dout[i]: each row i hands dout[i] * share to every j of its span. */
void attn_fixed_backward(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                         const float *dout, float *out, const attn_grads *grads) {
    int n = dims->n;
    attn_fixed(dims, in, opt, out, 0);
    fixed_job job = {dims, in, opt, dout, out, 0, grads};
    if (n > BI && attn_thread_count() > 1)
        attn_parallel((n + BI - 1) / BI, fixed_key_piece, &job);
    else
        fixed_key_rows(&job, 0, n);
}
