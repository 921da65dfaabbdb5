/* attnlab.h — self-attention variants: softmax, Synthesizer (dense, random, factorized, mixture),
 * linear (elu+1), Efficient Attention, first-order Taylor, fixed patterns.
 *
 * Usage
 *   attn_dims dims = { .n = n, .d = d, .dv = dv };
 *   attn_inputs in = { .q = q, .k = k, .v = v };
 *   attn_options opt; attn_options_default(&opt);
 *   size_t ws_bytes;
 *   if (attn_workspace_size(ATTN_SOFTMAX, &dims, &opt, 0, &ws_bytes) != ATTN_OK) ...;
 *   void *ws = aligned_alloc(16, round_up(ws_bytes, 16));
 *   const char *detail;
 *   attn_status s = attn_run(ATTN_SOFTMAX, &dims, &in, &opt, out, NULL, ws, ws_bytes, &detail);
 *   if (s != ATTN_OK) printf("%s: %s\n", attn_status_string(s), detail);
 *
 * The caller owns every buffer: inputs, output, optional weights, and a workspace whose size
 * attn_workspace_size() gives. The library allocates nothing and has no global mutable state,
 * so calls on different buffers may run concurrently.
 *
 * Matrices are row-major float32. n = sequence length, d = query/key width, dv = value width.
 * Every variant computes y = A*v for an n x n matrix A whose rows are non-negative and sum to 1.
 * Softmax-type variants never materialise A unless weights are requested (online softmax over
 * key blocks); linear variants run in O(n*d*dv) time and O(d*dv) extra memory.
 *
 * Determinism: results depend only on the inputs, the shape and the build. Summation order is
 * fixed: every element of a matrix product accumulates over its contraction index in increasing
 * order, and softmax rows are accumulated key block by key block in increasing j. The SIMD and
 * scalar builds run the same operations in the same order, so they round alike; the FMA builds
 * (relaxed, or native with -mfma) round once per multiply-add and agree within SPEC §3's bar.
 */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_VERSION "0.1.0"

/* Every variant. The order is that of variants.def. */
typedef enum attn_variant {
#define X(ENUM, id, label, family, dims, inputs, options, cost, summary, formula) ENUM,
#include "variants.def"
#undef X
    ATTN_VARIANT_COUNT
} attn_variant;

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_SHAPE = 1,       /* a dimension is missing, non-positive or inconsistent; an array is missing */
    ATTN_ERR_VALUE = 2,       /* NaN/Inf in an input, bad alpha, a*b != L, L < n, bad option value */
    ATTN_ERR_UNKNOWN = 3,     /* unknown variant or mixture component */
    ATTN_ERR_UNSUPPORTED = 4, /* an option the variant cannot honour (causal with a look-ahead pattern) */
    ATTN_ERR_MEMORY = 5,      /* sizes overflow the address space, or the workspace is too small */
} attn_status;

/* "ok", "shape", "value", "unknown", "unsupported", "memory". */
const char *attn_status_string(attn_status status);

/* Dimensions. Those a variant does not read are ignored (see variants.def for which it reads).
 * L defaults to n when 0. */
typedef struct attn_dims {
    int32_t n, d, dv, h, L, a, b, rank;
} attn_dims;

/* Input arrays. Only those the variant reads need be set. Shapes (rows x columns):
 *   q, k, x: [n, d]   v: [n, dv]
 *   dense:  w1 [d, h], b1 [h], w2 [h, L], b2 [L]        dense1: w [d, L]      random: r [L, L]
 *   factorized-dense: wa [d, a], ba [a], wb [d, b], bb [b]   factorized-random: r1, r2 [L, rank]
 * The field order is part of the ABI (the JS binding writes it as an array of pointers). */
#define ATTN_INPUT_LIST(X) \
    X(q) X(k) X(v) X(x) X(w1) X(b1) X(w2) X(b2) X(w) X(r) X(wa) X(ba) X(wb) X(bb) X(r1) X(r2)
typedef struct attn_inputs {
#define ATTN_INPUT_FIELD(name) const float *name;
    ATTN_INPUT_LIST(ATTN_INPUT_FIELD)
#undef ATTN_INPUT_FIELD
} attn_inputs;

typedef enum attn_tiling { ATTN_TILING_KRONECKER = 0, ATTN_TILING_TILE = 1 } attn_tiling;

typedef enum attn_pattern {
    ATTN_PATTERN_CURRENT = 0,  /* A[i,i] = 1 */
    ATTN_PATTERN_PREVIOUS = 1, /* A[i,i-1] = 1; row 0 attends to itself */
    ATTN_PATTERN_NEXT = 2,     /* A[i,i+1] = 1; the last row attends to itself */
    ATTN_PATTERN_LEFT = 3,     /* uniform over [max(0,i-w), i-1]; row 0 attends to itself */
    ATTN_PATTERN_RIGHT = 4,    /* uniform over [i+1, min(n-1,i+w)]; the last row attends to itself */
    ATTN_PATTERN_FIRST = 5,    /* A[i,0] = 1 */
    ATTN_PATTERN_LAST = 6,     /* A[i,n-1] = 1 */
    ATTN_PATTERN_COUNT
} attn_pattern;

#define ATTN_MAX_COMPONENTS 8

/* Options. Every field is 4 bytes wide and the order is part of the ABI. */
typedef struct attn_options {
    int32_t causal;          /* row i uses only columns j <= i */
    int32_t has_scale;       /* softmax (and mixture's softmax component): use `scale`, else 1/sqrt(d) */
    float scale;
    float eps;               /* linear, taylor: denominator epsilon (default 1e-6) */
    int32_t tiling;          /* factorized-dense: attn_tiling */
    int32_t pattern;         /* fixed: attn_pattern */
    int32_t window;          /* fixed left/right: window w >= 1 (default 3) */
    int32_t n_components;    /* mixture: how many entries of component/alpha are used */
    int32_t alpha_is_logits; /* mixture: alpha holds logits; the weights are softmax(alpha) */
    int32_t component[ATTN_MAX_COMPONENTS]; /* mixture: attn_variant of each component */
    float alpha[ATTN_MAX_COMPONENTS];
} attn_options;

/* Fills the defaults: not causal, scale 1/sqrt(d), eps 1e-6, kronecker tiling, pattern current,
 * window 3, no mixture components. */
void attn_options_default(attn_options *opt);

/* Checks dims and options against the variant's rules (SPEC §2); does not read arrays.
 * On error *detail (if not NULL) is a static string naming the input, e.g. "a*b must equal L". */
attn_status attn_check(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                       const char **detail);

/* Workspace bytes attn_run needs for this problem. want_weights: whether a weights buffer will be
 * passed. Fails with ATTN_ERR_MEMORY when the size overflows size_t, and with attn_check's errors. */
attn_status attn_workspace_size(attn_variant variant, const attn_dims *dims,
                                const attn_options *opt, int want_weights, size_t *bytes);

/* Runs a variant.
 *   inputs: as attn_inputs documents          out: [n, dv]
 *   weights: [n, n] or NULL; when given, receives A (for linear variants it is computed from its
 *            definition for display, the output still takes the O(n*d*dv) path)
 *   workspace: ws_bytes >= attn_workspace_size(...), 16-byte aligned
 * Arrays must not overlap out/weights/workspace. NaN/Inf in inputs is not checked here (the JS
 * binding checks); use attn_check_finite. */
attn_status attn_run(attn_variant variant, const attn_dims *dims, const attn_inputs *in,
                     const attn_options *opt, float *out, float *weights, void *workspace,
                     size_t ws_bytes, const char **detail);

/* linear, taylor, efficient: the small state they keep instead of A, over all n keys (with
 * causal, the last prefix, which is the same sums). F = d, or d + 1 for taylor.
 *   linear:    state [F, dv] = sum_j phi(k_j) v_j^T              normalizer [F] = sum_j phi(k_j)
 *   taylor:    state [F, dv] = [sum_j v_j ; sum_j kh_j v_j^T]     normalizer [F] = [n ; sum_j kh_j]
 *   efficient: state [F, dv] = softmax_positions(k)^T v           normalizer [F] = log sum_j exp(k_jc)
 * Other variants: ATTN_ERR_UNSUPPORTED. attn_state_size gives F and the workspace bytes. */
attn_status attn_state_size(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                            int32_t *width, size_t *ws_bytes);
attn_status attn_state(attn_variant variant, const attn_dims *dims, const attn_inputs *in,
                       const attn_options *opt, float *state, float *normalizer, void *workspace,
                       size_t ws_bytes, const char **detail);

/* Index of the first NaN or infinity in x[0..count), or -1 when all are finite. */
int64_t attn_find_nonfinite(const float *x, size_t count);

/* A JSON document describing every variant (from variants.def), the input field order, the
 * patterns and the tilings: what the JS binding and the page are built from. Static storage. */
const char *attn_metadata_json(void);

/* The lowest address of memory no static data uses (WebAssembly builds hand memory above it to the
 * binding, which lays out each call's buffers there). */
size_t attn_heap_base(void);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
