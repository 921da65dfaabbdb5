/* internal.h — shared pieces of the variant families; not part of the public API. */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "attnlab.h"
#include "simd.h"

#define ATTN_INF __builtin_inff()

/* Block sizes of the streaming kernels: a query block of BI rows meets a key block of BJ columns.
 * A BI x BJ logit tile (16 KiB) and the packed key block stay in L1/L2 while the tile is used;
 * 32 to 128 measured the same (the micro-kernel, not memory, is the limit). */
#define BI 64
#define BJ 64
/* Rows per chunk in the linear-family kernels. */
#define BT 64

/* Sets *detail (when the caller asked for it) and returns status: how every entry point fails. */
#define FAIL(status, text)          \
    do {                            \
        if (detail) *detail = text; \
        return status;              \
    } while (0)

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/* Workspace carving. The same plan runs twice: once measuring (nothing is computed then), once
 * over the caller's workspace. Sizes are counted in 64 bits so that a
 * problem too large for the address space is reported instead of wrapping. */
typedef struct arena {
    unsigned char *base; /* the caller's workspace; unused while measuring */
    uint64_t used;
    int measuring;
    int threads; /* scratch slices the kernels that split work carve: 0 or 1 = one (plans set it) */
} arena;
#define ARENA_LIMIT ((uint64_t)1 << 62) /* a measured size saturates here instead of wrapping */
static inline float *arena_floats(arena *a, uint64_t count) {
    if (a->used >= ARENA_LIMIT || count >= ARENA_LIMIT / 4u) {
        a->used = ARENA_LIMIT; /* only while measuring: a plan this large is refused */
        return 0;
    }
    a->used = (a->used + 15u) & ~(uint64_t)15u;
    float *p = a->measuring ? 0 : (float *)(void *)(a->base + a->used);
    a->used += count * 4u;
    return p;
}
static inline int arena_measuring(const arena *a) { return a->measuring; }

/* ---- threads.c: pieces of work over the pool (serial without threads) ----
 * fn(ctx, piece, thread) for every piece in [0, pieces), each exactly once, any order, on threads
 * [0, attn_thread_count()); thread indexes the scratch slice the piece may use. Returns when all
 * are done. */
typedef void (*attn_piece_fn)(void *ctx, int piece, int thread);
void attn_parallel(int pieces, attn_piece_fn fn, void *ctx);
/* Threads a call may split over now: 1 inside a piece (nested work runs serially). */
int attn_thread_count(void);
/* attn_parallel when the pool's threads fit the `slices` scratch slices the caller carved (its
 * workspace was measured for that many threads), else every piece serially on thread 0. */
void attn_parallel_slices(int pieces, attn_piece_fn fn, void *ctx, int slices);
static inline int arena_threads(const arena *a) { return a->threads > 1 ? a->threads : 1; }

/* ---- stages.c: the independent work between two waits ----
 * A stage is one job of attn_parallel made of tasks that do not depend on one another: row blocks
 * that carry a chain of row-wise steps, and column blocks of sums over every row. The passes of a
 * model (model_pass.c) are a few stages a layer instead of dozens of jobs, each ending in a wait.
 * A stage keeps pointers to what its tasks are given (blocks, colsum_args, products, one_product):
 * they must live until attn_stage_run. */
typedef void (*task_fn)(const void *ctx, int piece, int thread);
typedef struct task {
    task_fn fn;
    const void *ctx;
    int pieces;
} task;
#define STAGE_TASKS 48
typedef struct stage {
    int count;
    task tasks[STAGE_TASKS];
} stage;
/* Runs the stage's tasks as one job, and empties it. */
void attn_stage_run(stage *st);
/* Adds fn over pieces [0, pieces); a full stage runs first. */
void attn_stage_add(stage *st, task_fn fn, const void *ctx, int pieces);

/* fn(ctx, lo, hi, thread) over [0, count) in blocks of `block`. */
typedef void (*block_fn)(const void *ctx, int lo, int hi, int thread);
typedef struct blocks {
    block_fn fn;
    const void *ctx;
    int count, block;
} blocks;
/* fn over [0, count) in blocks of a multiple of `align`, `per_thread` blocks per thread. */
void attn_stage_blocks(stage *st, blocks *b, int count, int align, int per_thread, block_fn fn, const void *ctx);
/* Row blocks of a batch's rows: multiples of KP rows, at least 16. */
void attn_stage_rows(stage *st, blocks *b, int rows, block_fn fn, const void *ctx);

/* out += the column sums of x [rows, cols], rows in order, by column blocks. */
typedef struct colsum_args {
    int rows, cols;
    const float *x;
    float *out;
} colsum_args;
void attn_stage_column_sums(stage *st, blocks *b, colsum_args *a, int rows, int cols, const float *x, float *out);

/* Weight gradients C_i[m, N] = At_i^T B_i (K = the batch's rows) of `count` products of one shape,
 * item i's pointers from at() (a NULL C, a frozen weight, is skipped), by blocks of rows of C. */
typedef void (*product_fn)(const void *ctx, int item, const float **At, const float **B, float **C);
typedef struct products {
    int m, N, K, lda, ldb, ldc, rows, per;
    product_fn at;
    const void *ctx;
} products;
void attn_stage_products(stage *st, products *p, int count);
/* One weight gradient C[m, N] = At^T B, At [K, m] (row stride lda); nothing when C is NULL. */
typedef struct one_product {
    const float *At, *B;
    float *C;
} one_product;
void attn_stage_weight_grad(stage *st, products *p, one_product *o, int m, int N, int K, const float *At, int lda,
                            const float *B, int ldb, float *C);

/* ---- registry.c: the checks and tables of variants.def and options.def ---- */

/* The input arrays and dimensions as enums (ATTN_INPUT_LIST, ATTN_DIM_LIST order), so that a table
 * keyed by them is checked by the compiler. */
typedef enum input_id {
#define ATTN_INPUT_ID(name) IN_##name,
    ATTN_INPUT_LIST(ATTN_INPUT_ID)
#undef ATTN_INPUT_ID
    IN_COUNT
} input_id;
typedef enum dim_id {
#define ATTN_DIM_ID(name, defaults_to, description) DIM_##name,
    ATTN_DIM_LIST(ATTN_DIM_ID)
#undef ATTN_DIM_ID
    DIM_ONE /* the second dimension of a VECTOR: 1 */
} dim_id;
/* The options of options.def as an enum, so that which variant takes which is a bit set resolved
 * at compile time (attn_accepts). */
typedef enum option_id {
#define X(name, ...) OPTION_##name,
#include "options.def"
#undef X
    OPTION_COUNT
} option_id;

/* The families: how the core computes a variant (variants.def's family column), one row each,
 * with what the rest of the core asks of it:
 *   keeps_lse:   a kept forward pass keeps each row's log-sum-exp (the streaming softmax)
 *   keeps_state: ATTN_WANT_STATE: it can return the state it keeps instead of A
 *   keeps_normalizer: that state comes with a normaliser (the linear family's z; the recurrent
 *                family's state is S alone)
 *   quadratic:   its forward pass costs n^2 (it scores every pair of positions); else linear in n
 *   causal_only: causal by construction (a token's state holds only the tokens before it): it
 *                refuses causal = 0
 *   in_models:   a model's layer can hold it (attn_model_check refuses the others: the recurrent
 *                family's layer, with its projections for g and beta, is not built yet)
 *   signed_weights: its A may hold entries of either sign (the recurrent family's effective W,
 *                where q and k meet without a softmax or a positive feature map); every other
 *                family's A is non-negative, so a map of it may start its scale at 0
 *   input_free:  its A depends on none of the call's arrays, only on the positions (the fixed
 *                family's patterns): a map of it shows a pattern of weights up to 1, not a
 *                distribution the inputs shaped, so it is not put on another variant's scale
 *   learned_logits: its logits are (all or, for the mixture, in part) parameters a model learns —
 *                r, or projections of x — rather than q·k: outside a trained model the caller
 *                gives them, so they are as untrained as the caller's numbers (the Synthesizers)
 * Every switch over the families ends in FAMILY_COUNT with no default, so the compiler names each
 * place a new family must join (api.c's forward and backward, model_decode.c's state and step).
 * X(name, keeps_lse, keeps_state, keeps_normalizer, quadratic, causal_only, in_models, signed_weights,
 *   input_free, learned_logits) */
#define ATTN_FAMILY_LIST(X)                   \
    X(softmax, 1, 0, 0, 1, 0, 1, 0, 0, 0)     \
    X(synthesizer, 1, 0, 0, 1, 0, 1, 0, 0, 1) \
    X(linear, 0, 1, 1, 0, 0, 1, 0, 0, 0)      \
    X(fixed, 0, 0, 0, 0, 0, 1, 0, 1, 0)       \
    X(recurrent, 0, 1, 0, 0, 1, 0, 1, 0, 0)
typedef enum family_id {
#define ATTN_FAMILY_ID(name, ...) FAMILY_##name,
    ATTN_FAMILY_LIST(ATTN_FAMILY_ID)
#undef ATTN_FAMILY_ID
    FAMILY_COUNT
} family_id;
typedef struct family_facts {
    const char *name;
    int keeps_lse, keeps_state, keeps_normalizer, quadratic, causal_only, in_models, signed_weights;
    int input_free, learned_logits;
} family_facts;
family_id attn_family_of(attn_variant v);
/* The variant's id ("softmax", ...), and whether a mixture may combine its logits. */
const char *attn_variant_id(attn_variant v);
int attn_is_mixable(attn_variant v);
const family_facts *attn_family_facts(family_id family);

/* One entry of variants.def's inputs column: array `input` is [rows, cols]. */
typedef struct input_shape {
    input_id input;
    dim_id rows, cols;
    int optional; /* OPTIONAL_MATRIX: may be NULL (the variant says what it stands for) */
} input_shape;
typedef struct input_list {
    const input_shape *at;
    int count;
} input_list;
/* The arrays v reads, in its inputs column's order (a mixture's column lists every array one of
 * its components may read). */
input_list attn_inputs_of(attn_variant v);
/* The value of a dimension: 1 for DIM_ONE, n for an L of 0 (L's default). */
int32_t attn_dim(const attn_dims *dims, dim_id dim);

/* A mixture plan's weights replaced by other logits (finite, n_components of them) and the plan
 * sealed again: its checks and workspace do not depend on the weights' values, so a model keeps
 * one plan per head and gives it the head's learned logits before each pass instead of making it
 * again. ATTN_ERR_SHAPE for a plan that is not a mixture's with alpha_is_logits. */
attn_status attn_plan_set_alpha_logits(attn_plan *plan, const float *logits, const char **detail);

/* A mixture's weights (options.alpha): finite; as probabilities (alpha_is_logits unset)
 * non-negative and summing to 1. One of attn_validate's checks. */
attn_status attn_check_weights(const attn_options *opt, const char **detail);

/* Dimensions, option values and their relations (attn_check's rules); does not read arrays. */
attn_status attn_validate(attn_variant v, const attn_dims *dims, const attn_options *opt,
                          const char **detail);
/* "x is missing" for the first array the variant reads that is NULL, else NULL. */
const char *attn_missing_input(attn_variant v, const attn_inputs *in, const attn_options *opt);
/* Softmax-type variants keep each row's log-sum-exp from a kept forward pass (a model's too); the
 * linear family and fixed keep nothing (the family table's keeps_lse). */
int attn_keeps_lse(attn_variant v);
/* A composite variant (one that takes `components`: the mixture) reads its components' arrays. */
int attn_is_composite(attn_variant v);
/* Zeroes the gradient arrays of every input v reads (a mixture: its components'), whole. */
void attn_zero_grads(attn_variant v, const attn_dims *dims, const attn_options *opt,
                     const attn_grads *grads);
/* Whether v takes the option: causal, weights and keep always, the rest by its options column. */
int attn_accepts(attn_variant v, option_id option);

/* ---- ops.c: kernels shared by every family ---- */

/* C[m, N] = (accumulate ? C : 0) + A[m, K] * B[K, N]; leading dimensions in floats. */
void attn_gemm(int m, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
               int ldc, int accumulate);
/* dst[c*ldd + r] = src[r*lds + c] * mul for r < rows, c < cols. */
void attn_transpose(int rows, int cols, const float *src, int lds, float *dst, int ldd, float mul);
/* Largest of x[0..len), len >= 1. */
float attn_max(const float *x, int len);
/* x[i] = exp(x[i] - shift) for i < len; returns the sum of the new values. */
float attn_exp_shift_sum(float *x, int len, float shift);
/* x[i] *= s for i < len. */
void attn_scale(float *x, int len, float s);
/* y[i] += s * x[i] for i < len. */
void attn_axpy(float *y, const float *x, int len, float s);
void attn_fill(float *x, size_t len, float value);
void attn_copy(float *dst, const float *src, int len);
/* z[c] += sum_r x[r * ldx + c] for c < cols, rows in increasing order: exact additions, the bits
 * of the multiply-adds by 1 they replace. */
void attn_add_column_sums(int rows, int cols, const float *x, size_t ldx, float *z);
/* Natural logarithm of a normal x > 0 (scalar; relative error below 3e-7). */
float attn_logf(float x);
/* In-place softmax of a row of len values, max subtracted. */
void attn_softmax_row(float *x, int len);

/* ---- packed panels (ops.c) ----
 * The softmax-type kernels work on panels so that every inner loop walks memory at a constant
 * stride: a "query panel" holds 8 rows of a matrix interleaved ([width][8]), a "key panel" 4 rows
 * ([width][4]). Rows past the end are zero. Element (row r, column c) of the source is
 * src[r * row_stride + c * col_stride], so a matrix and its transpose pack alike. */
#define QP 8 /* rows per query panel = lanes of a logit tile row group */
#define KP 4 /* rows per key panel = rows of the micro-kernel */
/* For loop bounds of sizes the plan has admitted (they fit in int with room to spare). */
static inline int round_up(int x, int to) { return (x + to - 1) / to * to; }
/* For workspace sizes, which are measured before anything is admitted: never overflows. */
static inline uint64_t round_up64(int x, int to) {
    return ((uint64_t)(uint32_t)x + (uint64_t)to - 1) / (uint64_t)to * (uint64_t)to;
}
void attn_pack_panels(int rows, int width, const float *src, size_t row_stride, size_t col_stride,
                      float mul, int panel, float *dst);
/* One attn_pack_panels call's arguments; attn_pack_panels_all packs several, split over threads
 * (same bytes as packing them in turn). */
typedef struct attn_pack {
    int rows, width;
    const float *src;
    size_t row_stride, col_stride;
    float mul;
    int panel;
    float *dst;
} attn_pack;
void attn_pack_panels_all(const attn_pack *packs, int count);

/* The 4 x 8 micro-kernel: acc[r][0..7] (+)= sum_k a[k*sa + r] * b[k*sb + 0..7], r < 4; the
 * accumulator rows are acc_stride apart. a is read by broadcast loads, b by vector loads. */
void attn_micro_4x8(int K, const float *a, int sa, const float *b, int sb, float *acc,
                    int acc_stride, int accumulate);
/* The same kernel with row r of A at a[r*sr + k] (rows of a row-major matrix, read in place). */
void attn_micro_4x8_rows(int K, const float *a, size_t sr, const float *b, int sb, float *acc,
                         int acc_stride, int accumulate);
/* C[m, N] = (accumulate ? C : 0) + At^T B, At [K, m] (row stride lda), B [K, N]: the micro-kernel
 * over 4 x 8 blocks, scalar code for the edges. */
void attn_gemm_tn(int m, int N, int K, const float *At, int lda, const float *B, int ldb, float *C,
                  int ldc, int accumulate);

/* ---- logits.c: the sources of logits; softmax.c: the streaming driver over them ----
 * A logit tile covers query rows [i0, i0 + bi) and key columns [j0, j0 + bj), j0 a multiple of
 * BJ, bi <= BI. It is stored transposed in groups of QP queries: T[g][j][r] = B[i0 + QP*g + r, j0 + j]
 * at T + g*BJ*QP + j*QP + r, for j < round_up(bj, KP). Sources need not mask; the driver does. */
typedef struct logit_source logit_source;
/* The two sides of a dot source, B[i, j] = q_i . (kmul * k_j) (+ bias_j): element (i, c) of the
 * query side is q[i * q_row + c * q_col], of the key side k[j * k_row + c * k_col], so that a
 * matrix and its transpose serve alike (dense reads the columns of w2 as its keys). */
typedef struct dot_sides {
    int width;          /* the length of every dot product */
    const float *q;
    size_t q_row, q_col;
    const float *k;
    size_t k_row, k_col;
    float kmul;         /* the key side's factor (softmax's scale), 1 for the others */
    const float *bias;  /* the key bias [n], or NULL */
    int has_bias;       /* whether the source adds one: known while measuring, when bias is NULL */
} dot_sides;
struct logit_source {
    void (*tile)(const logit_source *src, int i0, int bi, int j0, int bj, float *T);
    /* Backward (prepared with backward = 1): accumulate the gradient of the block's logits,
     * dS in tile layout and dSt [BJ][BI] (dSt[j][i] = dS[i0 + i, j0 + j]), into the source's own
     * accumulators; finish turns them into the gradients of the inputs (adding to grads). */
    void (*grad)(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0, int bj,
                 const float *dS, const float *dSt);
    void (*finish)(const logit_source *src, const attn_options *opt, const attn_grads *grads);
    /* grad split in two: grad_q writes only the block's query rows, grad_k only its key rows, so
     * a query-block pass and a key-block pass can each run over threads (backward.c), every row
     * summing its blocks in the order one thread does. random and factorized-dense have only
     * query rows (grad_k does nothing); a mixture's grad_q leaves its block's dalpha sums in
     * dalpha_blocks for finish to add up in one thread's order (NULL when not measured for
     * threads). */
    void (*grad_q)(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0, int bj,
                   const float *dS, const float *dSt);
    void (*grad_k)(const logit_source *src, const attn_grads *grads, int i0, int bi, int j0, int bj,
                   const float *dS, const float *dSt);
    attn_variant variant;
    const attn_dims *dims; /* L resolved */
    const attn_inputs *in;
    /* dot sources: B[i, j] = qside_i . kside_j (+ dot.bias_j), packed from `dot` */
    dot_sides dot;
    const float *qside; /* query panels, dot.width floats per row */
    const float *kside; /* key panels, scaled by dot.kmul */
    /* factorized-dense: query panels of F_A and F_B */
    const float *fa, *fb;
    int tiling;
    /* mixture */
    int count;
    const logit_source *parts;
    const float *alpha;
    float *scratch; /* one tile */
    /* backward: dot sources keep both sides row-major with width_pad (width rounded up to 8,
     * zero-padded) columns and their gradient accumulators */
    int width_pad;
    float *qrow, *krow, *dq, *dk, *dbias;
    float *hidden, *w1t;  /* dense: relu(x w1 + b1) [n, h], w1^T [h, d] */
    float *dfa, *dfb;     /* factorized-dense: gradients of F_A, F_B in query panels */
    float *dfa_row, *dfb_row, *wat, *wbt; /* ... row-major, and wa^T, wb^T for the chain */
    float *part_tiles;    /* mixture: each part's tile, count tiles */
    float *part_dS;       /* mixture: alpha_c dS in both layouts, 2 tiles */
    float *dalpha;        /* mixture: [count] */
    float *dalpha_blocks; /* mixture, threads: count sums per logit block, [n/BI][dalpha_cols] */
    int dalpha_cols;      /* mixture, threads: key blocks per row of dalpha_blocks */
};
/* Storage for a source and, for a mixture, its parts and weights. */
typedef struct logit_sources {
    logit_source main;
    logit_source parts[ATTN_MAX_COMPONENTS];
    float alpha[ATTN_MAX_COMPONENTS];
} logit_sources;

/* Prepares the logit source of any softmax-type variant, mixture included, taking what it needs
 * from the arena (when measuring, only counting); returns the source to attend over. */
const logit_source *attn_prepare_logits(attn_variant v, const attn_dims *dims,
                                        const attn_inputs *in, const attn_options *opt, arena *ws,
                                        logit_sources *sources, int backward);
/* y = softmax_row(B + M) * v, streaming (weights == NULL) or through the n x n weights. When
 * streaming, lse (if not NULL) receives each row's log-sum-exp, max + log(sum). */
void attn_softmax_attend(const logit_source *src, const attn_dims *dims, const float *v,
                         int causal, float *out, float *weights, float *lse, arena *ws);
/* Sets T to -inf where key j0 + j is padding (>= n) or, when causal, lies after the query. */
void attn_mask_tile(int n, int causal, int i0, int bi, int j0, int bj, float *T);

/* ---- decoding: one position at a time (model_decode.c) ----
 * A causal decoder feeds position t after positions 0..t-1 and needs only row t of B. Each family
 * keeps what earlier positions left behind and does the step itself:
 *   softmax-type (logits.c, softmax.c): row t of the logits over keys 0..t, then its softmax over
 *     the values of positions 0..t (the decoder caches them, and the keys when the variant reads k);
 *   fixed (fixed.c): the mean of the cached values over the row's span;
 *   the linear family (linear.c): a running state of O(F * dv) floats. */
/* Row t [t + 1] of a softmax-type variant's logits: in->q and in->x hold position t's rows alone,
 * in->k the keys of positions 0..t ([t + 1, d]); the parameters are whole (those sized by L read
 * at row t and columns 0..t), as attn_inputs gives them. scratch: attn_logit_row_scratch floats. */
void attn_logit_row(attn_variant v, const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                    int t, float *scratch, float *row);
uint64_t attn_logit_row_scratch(attn_variant v, const attn_dims *dims, const attn_options *opt);
/* y [dv] = softmax(row) v over the n positions of v [n, dv]; row is overwritten. */
void attn_softmax_attend_row(float *row, int n, const float *v, int dv, float *y);

/* ---- the linear family ----
 * linear.c: the entry, the state and decoding's step; linear_features.c: the forms and feature
 * maps; linear_kernel.c: the kernelised form (elu+1, taylor); efficient.c: efficient attention;
 * the backward passes likewise in linear_backward.c, linear_kernel_backward.c, efficient_backward.c. */
void attn_linear_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                        const attn_options *opt, float *out, float *weights, arena *ws);

/* How a linear-family variant computes (variants.def's form column): kernelised with a feature
 * map phi (elu+1, taylor), or efficient attention's two softmaxes. Every switch over it ends in
 * LINEAR_FORM_COUNT with no default (linear_features.c holds each map's facts), so the compiler
 * names every place a new map must join. attn_linear_form gives LINEAR_FORM_COUNT for a variant
 * of another family. */
typedef enum linear_form { LINEAR_FORM_elu1, LINEAR_FORM_taylor, LINEAR_FORM_efficient, LINEAR_FORM_COUNT } linear_form;
linear_form attn_linear_form(attn_variant v);
/* The two kinds of form: kernelised, y = phi(q)^T S / (phi(q)·z + eps) with a feature map
 * (linear_kernel.c, which reads only the map's facts below), or efficient attention
 * (efficient.c). The entry points (linear.c, linear_backward.c) switch over the kind, so a new
 * feature map joins linear_features.c's switches alone. */
typedef enum linear_kind { LINEAR_KIND_KERNEL, LINEAR_KIND_EFFICIENT, LINEAR_KIND_COUNT } linear_kind;
linear_kind attn_linear_kind(attn_variant v);
/* Rows F of the state S [F, dv] and z [F]: the feature map's width (d + 1 for taylor; d for
 * elu+1 and efficient). */
int attn_state_width(attn_variant v, int d);
/* 1 when feature 0 is the constant 1 (taylor): z[0] is then a count of keys, written as one,
 * and the feature has no gradient. */
int attn_leads_with_one(attn_variant v);
/* phi of `rows` rows of x [rows, d] into dst [rows, F]; dx [rows, d] from d phi [rows, F] and
 * that phi: the map's vector-Jacobian product. */
void attn_feature_map(attn_variant v, int rows, int d, const float *x, float *dst);
void attn_feature_map_grad(attn_variant v, int rows, int d, const float *x, const float *phi,
                           const float *dphi, float *dx);
/* |x| of a taylor row, as the feature map computes it (before the 1e-12 floor). */
float attn_taylor_norm(const float *x, int d);

/* Columns [c, c + VW) of rows 0..3 of x [., d] as four vectors of four rows each (column i in
 * col[i]); past column d they are 0. */
static inline void attn_load_columns4(const float *x, int d, int c, vf col[VW]) {
    if (c + VW <= d) {
        col[0] = vf_load(x + c), col[1] = vf_load(x + d + c);
        col[2] = vf_load(x + 2 * (size_t)d + c), col[3] = vf_load(x + 3 * (size_t)d + c);
        vf_transpose4(&col[0], &col[1], &col[2], &col[3]);
        return;
    }
    float t[VW][VW] = {{0}};
    for (int i = 0; c + i < d; i++)
        for (int r = 0; r < VW; r++) t[i][r] = x[(size_t)r * d + c + i];
    for (int i = 0; i < VW; i++) col[i] = vf_load(t[i]);
}

/* Threads, causal forward: the first chunk of block b in [0, blocks] of a parallel prefix over
 * `chunks` chunks, block 0 weighing 1 and each other 3 (see linear_kernel.c's prefix_job). */
static inline int attn_prefix_block_start(int b, int blocks, int chunks) {
    if (b <= 0) return 0;
    int64_t total = 1 + 3 * (int64_t)(blocks - 1);
    return (int)((int64_t)chunks * (1 + 3 * (int64_t)(b - 1)) / total);
}
/* Weights (A) are built over threads by blocks of BI query rows when n spans more than one. */
static inline int attn_weights_split(int n) { return n > BI && attn_thread_count() > 1; }

/* The kernelised form (linear_kernel.c). The forward pass, and its weights A[i, j] =
 * phi(q_i)·phi(k_j) / (sum_{j' (<= i)} phi(q_i)·phi(k_j') + eps). */
void attn_kernel_forward(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                         int causal, float *out, arena *ws);
void attn_kernel_weights(attn_variant v, const attn_dims *dims, const attn_inputs *in, float eps,
                         int causal, float *weights, arena *ws);
/* The pieces of the forward pass that linear_kernel_backward.c reruns, so that its y is the
 * forward's to the bit (F = attn_state_width): */
/* S += sum_j phi(k_j) v_j^T and z += sum_j phi(k_j) over all n keys, BT rows at a time. */
void attn_absorb_keys(attn_variant v, const attn_dims *dims, const attn_inputs *in, float *phi_k,
                      float *S, float *z);
/* The rows [f0, f0 + rows) of that S and z alone (f0 a multiple of KP; rows too unless they end
 * at F), each summing the keys in attn_absorb_keys's order: the same bits, a piece for a thread. */
void attn_absorb_keys_rows(attn_variant v, const attn_dims *dims, const attn_inputs *in, int f0,
                           int rows, float *phi_k, float *S, float *z);
typedef struct attn_kernel_buffers {
    float *phi_q, *phi_k;   /* [BT, F]; the forward shares one buffer */
    float *phi_qt, *phi_kt; /* [F, BT] */
    float *PT;              /* [key, query]: phi(k_j)·phi(q_i), zero for j > i (causal) */
    float *S, *z;           /* the state [F, dv], [F] */
    float *den;             /* [BT]: phi(q_i)·z (+ the chunk's own keys), eps not added */
} attn_kernel_buffers;
/* y [bt, dv] of rows t0..t0+bt against the state (plus, causal, the chunk's own keys j <= i);
 * leaves phi(q) (and, causal, phi(k)), their transposes, PT and den in b. */
void attn_kernel_chunk(attn_variant v, const attn_dims *dims, const attn_inputs *in, int t0,
                       int bt, float eps, int causal, float *y, const attn_kernel_buffers *b);
/* The state absorbs the chunk's keys (b->phi_k, as attn_kernel_chunk left it when causal). */
void attn_kernel_absorb(attn_variant v, const attn_dims *dims, const attn_inputs *in, int t0,
                        int bt, const attn_kernel_buffers *b);
/* Efficient attention (efficient.c): the forward pass, its weights A = rho_q(q) rho_k(k)^T (rho_k
 * over all positions, or causal over the prefix j <= i), and one row of the causal recurrence:
 * the state (S [d, dv], z [d], m [d]) absorbs (k, v), then y = sum_c rho_q(q)_c S_c / z_c (rho
 * [d] is scratch). */
void attn_efficient_forward(const attn_dims *dims, const attn_inputs *in, int causal, float *out, arena *ws);
void attn_efficient_weights(const attn_dims *dims, const attn_inputs *in, int causal, float *weights,
                            arena *ws);
void attn_efficient_step(int d, int dv, const float *q, const float *k, const float *v, float *m, float *z,
                         float *S, float *rho, float *y);
/* Efficient attention: e[r, c] = exp(k[r, c] - m[c]); rows of x softmaxed over features. */
void attn_exp_minus_columns(int rows, int d, const float *k, const float *m, float *e);
void attn_softmax_rows(int rows, int d, const float *x, float *dst);
/* The context rho_k(k)^T v [d, dv] into S, m = the column maxima of k, z = the column sums of
 * exp(k - m): one pass, with a running maximum. */
void attn_efficient_context(const attn_dims *dims, const attn_inputs *in, float *m,
                            float *chunk_max, float *e, float *S, float *z);
/* Features [c0, c1) of that context alone (c0 a multiple of VW; c1 too unless it is d): the bits
 * of the whole pass, for a piece on a thread; e [BT, d] is the piece's scratch. */
void attn_efficient_context_range(const attn_dims *dims, const attn_inputs *in, int c0, int c1,
                                  float *m, float *chunk_max, float *e, float *S, float *z);
/* Non-causal y of bt rows: rho [bt, d] = rho_q(q), rho_t its transpose [d, BT], y = rho context. */
void attn_efficient_full_chunk(int d, int dv, int bt, const float *qb, const float *context,
                               float *rho, float *rho_t, float *y);
/* Causal: the running state m, z [d], S [d, dv] (relative to m) and one chunk's buffers. */
typedef struct attn_efficient_buffers {
    float *m, *z, *S;
    float *chunk_max; /* the chunk's new running maximum */
    float *zs;        /* z rescaled to it */
    float *E, *Zq;    /* [BT, d]: exp(k - chunk_max), and zs + its prefix sums (Z of each row) */
    float *Et, *Qt;   /* [d, BT]: E^T and (rho_q / Z)^T */
    float *PT;        /* [key, query] */
    float *rho;       /* [d]: one row of rho_q */
    float *rho_rows;  /* [BT, d] or NULL: every row of rho_q of the chunk */
} attn_efficient_buffers;
/* Carves those buffers from the arena in one fixed order (rho_rows only when with_rows), so that
 * the forward and backward passes measure and run the same layout. */
void attn_efficient_carve(int d, int dv, int with_rows, arena *ws, attn_efficient_buffers *b);
/* Row-by-row update of the state over rows i0..i1 (absorb, then y_i = sum_c rho_c S_c / z_c). */
void attn_efficient_absorb(int d, int dv, const float *k_row, const float *v_row, float *m,
                           float *z, float *S);
void attn_efficient_rows(int d, int dv, const attn_inputs *in, int i0, int i1, float *out,
                         const attn_efficient_buffers *b);
/* chunk_max, zs, E and Zq of a chunk; nonzero when some Z underflows (the chunk must then go
 * row by row). */
int attn_efficient_chunk_start(int d, int bt, const float *kb, const attn_efficient_buffers *b);
/* Rescales S to chunk_max (m becomes it), then y = Q' S + tril(Q' E^T) V, Q' = rho_q / Z. */
void attn_efficient_chunk_out(int d, int dv, int bt, const float *qb, const float *vb, float *y,
                              const attn_efficient_buffers *b);
/* S += E^T V, z = zs + the column sums of E. */
void attn_efficient_chunk_absorb(int d, int dv, int bt, const float *vb,
                                 const attn_efficient_buffers *b);
/* The state (m, z, S) in b absorbs chunks [c0, c1), no outputs: a block's sum for a parallel
 * prefix (threads). */
void attn_efficient_block_sum(const attn_dims *dims, const attn_inputs *in, int c0, int c1,
                              const attn_efficient_buffers *b);
/* (m, z, S) becomes the state of (pm, pz, pS) followed by it, both rescaled to the larger maximum
 * (an empty side, m = -inf, weighs 0). */
void attn_efficient_combine(int d, int dv, const float *pm, const float *pz, const float *pS,
                            float *m, float *z, float *S);

/* Decoding's step: the state absorbs position t's key and value (k, v_row) and gives y_t [dv] for
 * its query q, as the causal forward pass computes row t. The state: linear, taylor: S [F, dv],
 * z [F]; efficient: S [d, dv], z [d] and the running maximum m [d]. attn_linear_step_floats gives
 * its size, attn_linear_step_reset empties it, attn_linear_step_scratch the scratch floats. */
int64_t attn_linear_step_floats(attn_variant v, int d, int dv);
void attn_linear_step_reset(attn_variant v, int d, int dv, float *state);
int attn_linear_step_scratch(attn_variant v, int d);
void attn_linear_step(attn_variant v, int d, int dv, float eps, int t, const float *q, const float *k,
                      const float *v_row, float *state, float *scratch, float *y);

/* The state of a linear-family variant after all n keys (see attn_state in attnlab.h). */
void attn_linear_state(attn_variant v, const attn_dims *dims, const attn_inputs *in, float *state,
                       float *normalizer, arena *ws);

/* ---- recurrent.c: the recurrent family (gated and delta-rule linear attention) ----
 * The update rules of ONNX's LinearAttention; which inputs a rule reads follows from it. */
typedef enum recurrent_rule {
    RECURRENT_RULE_linear,     /* S += k v^T */
    RECURRENT_RULE_gated,      /* S = diag(exp(g)) S + k v^T */
    RECURRENT_RULE_delta,      /* S += k (beta (v - S^T k))^T */
    RECURRENT_RULE_gated_delta, /* both: the decay first */
    RECURRENT_RULE_COUNT
} recurrent_rule;
int attn_recurrent_gated(recurrent_rule rule); /* reads g */
int attn_recurrent_delta(recurrent_rule rule); /* reads beta */
/* One head's arrays: q, k [n, d]; v, y [n, dv]; g [n, g_cols] (g_cols d, or 1: one decay a
 * token), read by the gated rules; beta [n], by the delta rules; s0 [d, dv] or NULL (zeros). */
typedef struct attn_recurrent_io {
    int n, d, dv, g_cols;
    float scale;
    const float *q, *k, *v, *g, *beta, *s0;
    float *y;
} attn_recurrent_io;
/* Columns [c0, c1) of y and of the final state S [d, dv] (row stride dv), token by token from s0;
 * scratch: attn_recurrent_scan_scratch(d, c1 - c0) floats. The columns are independent: any
 * split of [0, dv) gives the bits of one scan over all of it. checkpoints, when not NULL, receives
 * those columns of the state before every ceil(sqrt(n))-th token (attn_recurrent_checkpoint_floats
 * floats in all: a kept forward pass's, which the backward then need not compute). */
void attn_recurrent_scan(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                         float *scratch, float *checkpoints);
/* Columns [c0, c1) of y and S as attn_recurrent_scan, in the form that pays for the shape: the
 * scan, or a chunked form (recurrent.c, chunked_form: every rule past a width), whose bits differ
 * from the scan's (within the bar) and, for a range starting at a multiple of 2 VW, are those of
 * the whole range; checkpoints every `spacing` tokens. scratch: attn_recurrent_forward_scratch
 * (rule, d, dv) floats. */
void attn_recurrent_forward_columns(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                                    float *scratch, float *checkpoints, int spacing);
uint64_t attn_recurrent_forward_scratch(recurrent_rule rule, int d, int dv);
/* Columns [c0, c0 + w) of S [d, dv]: from s0 (zeros without it); into checkpoint `index` of
 * checkpoints (states of d x dv, one after another). Both forms start and keep states so. */
void attn_recurrent_load_state(const attn_recurrent_io *io, int c0, int w, float *S);
void attn_recurrent_keep_checkpoint(const attn_recurrent_io *io, int c0, int w, const float *S, float *checkpoints,
                                    int index);
/* recurrent_chunked.c, the chunked forms of every rule: the forward over columns
 * [c0, c1) (scratch: attn_recurrent_chunked_scratch floats); plain-linear's backward below. */
void attn_recurrent_chunked_forward(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                                    float *scratch, float *checkpoints, int spacing);
uint64_t attn_recurrent_chunked_scratch(int d, int dv);
/* The scan's steps for tokens [t0, t1) on columns [c0, c0 + w) of S (row stride dv), in place
 * (gla's chunks past its factors' limit); scratch: w + d floats. */
void attn_recurrent_steps(recurrent_rule rule, const attn_recurrent_io *io, int t0, int t1, int c0, int w, float *S,
                          float *scratch);
uint64_t attn_recurrent_checkpoint_floats(int n, int d, int dv);
int64_t attn_recurrent_scan_scratch(int d, int w);
/* The gradients of sum(dy * y) + sum(d_final * S_n) (d_final NULL: no term) into grads (each
 * overwritten; g as io->g, [n, g_cols]; beta read only by the delta rules; s0 NULL: not wanted),
 * exact, after a forward pass that writes y again; work: attn_recurrent_backward_floats. chunk:
 * the tokens between the forward's checkpoints (about sqrt(n) minimises the memory); any chunk
 * gives the same bits. kept: the checkpoints of a forward pass at this chunk (the scan's, when
 * chunk is ceil(sqrt(n))): no forward pass of its own, and work holds no checkpoints
 * (own_checkpoints 0); NULL: it runs one. */
typedef struct attn_recurrent_grads {
    float *q, *k, *v, *g, *beta, *s0;
} attn_recurrent_grads;
void attn_recurrent_backward(recurrent_rule rule, const attn_recurrent_io *io, const float *dy,
                             const float *d_final, int chunk, const float *kept, const attn_recurrent_grads *grads,
                             float *work);
uint64_t attn_recurrent_backward_floats(recurrent_rule rule, int n, int d, int dv, int chunk, int own_checkpoints);
/* plain-linear's chunked backward (attn_recurrent_backward runs it for the shapes whose forward is
 * chunked), as attn_recurrent_backward with g and beta unread; its bits depend on spacing. */
void attn_recurrent_chunked_backward(const attn_recurrent_io *io, const float *dy, const float *d_final, int spacing,
                                     const float *kept, const attn_recurrent_grads *grads, float *work);
uint64_t attn_recurrent_chunked_backward_floats(int n, int d, int dv, int spacing, int own_checkpoints);
/* The forward over the pool (attn_recurrent_forward_columns): columns of y and of the final state
 * S [d, dv] split into blocks of whole vectors, one per thread (the same bits on every thread
 * count), checkpoints every ceil(sqrt(n)) tokens; scratch from ws. */
void attn_recurrent_forward(recurrent_rule rule, const attn_recurrent_io *io, float *S, float *checkpoints,
                            arena *ws);
/* The effective matrix W [n, n]: y = W v when s0 is zero (recurrent.c gives W's formula), rows
 * over the pool; O(n^2 d), for display. */
void attn_recurrent_weights(recurrent_rule rule, const attn_recurrent_io *io, float *W, arena *ws);
/* attn_recurrent_backward with no final-state gradient, checkpoints every ceil(sqrt(n)) tokens
 * (O(sqrt(n) d dv) floats from ws), or from_kept: a kept forward pass's checkpoints (NULL while
 * measuring), and a workspace without them. */
void attn_recurrent_backward_run(recurrent_rule rule, const attn_recurrent_io *io, const float *dy, int from_kept,
                                 const float *checkpoints, const attn_recurrent_grads *grads, arena *ws);
/* A recurrent variant's rule (variants.def's form column). */
recurrent_rule attn_recurrent_rule(attn_variant v);
/* The API's entry points for the family: y (and W when weights is not NULL, the final state into
 * state and the checkpoints into checkpoints when they are not NULL); the final state alone (y to
 * scratch); the backward (out receives y; from_kept: from a kept pass's checkpoints), all from ws. */
void attn_recurrent_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, float *out, float *weights, float *state, float *checkpoints,
                           arena *ws);
void attn_recurrent_state(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, float *state, arena *ws);
void attn_recurrent_family_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                                    const attn_options *opt, const float *dout, float *out, int from_kept,
                                    const float *checkpoints, const attn_grads *grads, arena *ws);

/* ---- backward passes (backward.c: softmax-type; linear_backward.c: linear family; fixed.c) ----
 * Each runs the forward pass too (out = y), then writes the gradients of sum(dout * y) into the
 * grads arrays of the inputs the variant reads (overwriting them). Workspace from the arena; when
 * measuring, only counts (in, dout, out and grads are then NULL). No n x n memory. */
/* What a kept forward pass (attn_plan_run_kept) left for the backward: y [n, dv], and each row's
 * log-sum-exp [n] (softmax-type variants) or the state's checkpoints (the recurrent family); all
 * NULL while measuring. */
typedef struct attn_kept {
    const float *y, *lse, *checkpoints;
} attn_kept;
/* kept NULL: the forward pass runs first and writes out. kept: its y and lse are read instead and
 * out is not used; the logit tiles, P, dP and dS are those the forward pass would have given (its
 * y and lse are the bits this pass computes for itself), so the gradients are too. */
void attn_softmax_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, const float *dout, float *out,
                           const attn_kept *kept, const attn_grads *grads, arena *ws);
/* exact_y: out must end as attention()'s y (the causal family split over threads recomputes it
 * with a second forward pass); 0: out is scratch (a kept forward pass already gave y). */
void attn_linear_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out, int exact_y,
                          const attn_grads *grads, arena *ws);
void attn_fixed_backward(const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                         const float *dout, float *out, const attn_grads *grads);
/* The linear family's forms (linear_kernel_backward.c, efficient_backward.c), as
 * attn_linear_backward switches to them; out ends as the backward's own y. */
void attn_kernel_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, arena *ws);
void attn_efficient_full_backward(const attn_dims *dims, const attn_inputs *in,
                                  const float *dout, float *out, const attn_grads *grads,
                                  arena *ws);
void attn_efficient_causal_backward(const attn_dims *dims, const attn_inputs *in,
                                    const float *dout, float *out, const attn_grads *grads,
                                    arena *ws);
/* Pieces both share: a dot product summed in index order; zero above the diagonal of a [query,
 * key] block (j > i); the first chunk of block b in [0, blocks] of the causal backward's prefix
 * and suffix over threads (equal blocks). */
static inline float attn_dot_in_order(const float *a, const float *b, int len) {
    float s = 0.0f;
    for (int i = 0; i < len; i++) s += a[i] * b[i];
    return s;
}
static inline void attn_mask_upper(int bt, float *X) {
    for (int r = 0; r + 1 < bt; r++) attn_fill(X + (size_t)r * BT + r + 1, (size_t)(bt - r - 1), 0.0f);
}
static inline int attn_grad_block_start(int b, int blocks, int chunks) {
    return (int)((int64_t)chunks * b / blocks);
}

/* ---- fixed.c ---- */
void attn_fixed(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, float *out,
                float *weights);
/* y [dv] of row i of n: the mean of v [n, dv] over the span opt's pattern gives the row (for a
 * causal pattern the rows after i are never read: decoding passes n = i + 1). */
void attn_fixed_row(const attn_options *opt, int n, int i, const float *v, int dv, float *y);

#endif /* ATTN_INTERNAL_H */
