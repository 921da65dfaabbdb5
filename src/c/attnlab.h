/* attnlab.h — self-attention variants: softmax, Synthesizer (dense, random, factorized, mixture),
 * linear (elu+1), Efficient Attention, first-order Taylor, fixed patterns, and the recurrent family
 * of gated and delta-rule linear attention (ONNX LinearAttention: plain, GLA, DeltaNet, Gated
 * DeltaNet).
 *
 * Usage
 *   attn_dims dims = { .n = n, .d = d, .dv = dv };
 *   attn_inputs in = { .q = q, .k = k, .v = v };
 *   attn_options opt; attn_options_default(&opt);
 *   attn_plan plan;
 *   const char *detail;
 *   if (attn_plan_make(ATTN_SOFTMAX, &dims, &opt, 0, &plan, &detail) != ATTN_OK) ...;
 *   void *ws = aligned_alloc(16, plan.workspace_bytes + 16);
 *   attn_status s = attn_plan_run(&plan, &in, out, NULL, NULL, NULL, ws, plan.workspace_bytes, &detail);
 *   if (s != ATTN_OK) printf("%s: %s\n", attn_status_string(s), detail);
 * (attn_run does both steps in one call.)
 *
 * The contract: docs/contract.md gives the math of every variant, the numerics policy, the
 * accuracy bar and the error codes; variants.def and options.def are the registry.
 *
 * The caller owns every buffer: inputs, output, optional weights/state, and a workspace whose
 * size the plan gives. The library allocates nothing and has no global mutable state, so calls on
 * different buffers may run concurrently.
 *
 * Matrices are row-major float32. n = sequence length, d = query/key width, dv = value width.
 * Every variant computes y = A*v for an n x n matrix A whose rows are non-negative and sum to 1.
 * Softmax-type variants never materialise A unless weights are requested (online softmax over
 * key blocks); linear variants run in O(n*d*dv) time and O(d*dv) extra memory.
 *
 * Determinism: results depend only on the inputs, the shape and the build. Summation order is
 * fixed: every element of a matrix product accumulates over its contraction index in increasing
 * order, and softmax rows are accumulated key block by key block in increasing j. The SIMD and
 * scalar builds run the same operations in the same order, so they round alike (bit-identical
 * results); the FMA builds (relaxed, or native with -mfma) round once per multiply-add and agree
 * within the accuracy bar of docs/contract.md.
 */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_VERSION "0.1.0"

/* Every variant, in the order of variants.def (the one list of variants). */
typedef enum attn_variant {
#define X(ENUM, id, label, family, form, mixable, dims, inputs, options, cost, summary, formula) ENUM,
#include "variants.def"
#undef X
    ATTN_VARIANT_COUNT
} attn_variant;

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_SHAPE = 1,       /* a dimension is missing, non-positive or inconsistent; an array is missing */
    ATTN_ERR_VALUE = 2,       /* NaN/Inf in an input, bad alpha, a*b != L, L < n, bad option value */
    ATTN_ERR_UNKNOWN = 3,     /* unknown variant, mixture component or model parameter name */
    ATTN_ERR_UNSUPPORTED = 4, /* an option the variant cannot honour (causal with a look-ahead
                               * pattern), a component a mixture cannot mix, a state it does not keep */
    ATTN_ERR_MEMORY = 5,      /* sizes overflow the address space, or the workspace is too small */
} attn_status;

/* "ok", "shape", "value", "unknown", "unsupported", "memory". */
const char *attn_status_string(attn_status status);

/* Dimensions: X(name, defaults_to, description); defaults_to names the dimension a 0 stands for
 * (L: n), or none. Those a variant does not read are ignored (variants.def says
 * which it reads). L defaults to n when 0. The order is the ABI of attn_dims. */
#define ATTN_DIM_LIST(X)                                                         \
    X(n, none, "sequence length: queries = keys = n")                                  \
    X(d, none, "query/key width (and the width of x)")                                 \
    X(dv, none, "value width: y is n x dv")                                            \
    X(h, none, "hidden width of dense")                                                \
    X(L, n, "length the Synthesizer parameters were made for (>= n; default n)")    \
    X(a, none, "factorized-dense: width of the first factor (a*b = L)")                \
    X(b, none, "factorized-dense: width of the second factor (a*b = L)")               \
    X(rank, none, "factorized-random: rank of r1*r2^T")
typedef struct attn_dims {
#define ATTN_DIM_FIELD(name, defaults_to, description) int32_t name;
    ATTN_DIM_LIST(ATTN_DIM_FIELD)
#undef ATTN_DIM_FIELD
} attn_dims;

/* Input arrays. Only those the variant reads need be set; variants.def gives each shape:
 *   q, k, x: [n, d]   v: [n, dv]
 *   dense:  w1 [d, h], b1 [h], w2 [h, L], b2 [L]        dense1: w [d, L]      random: r [L, L]
 *   factorized-dense: wa [d, a], ba [a], wb [d, b], bb [b]   factorized-random: r1, r2 [L, rank]
 *   recurrent: g [n, d] (the decay in log space), beta [n], s0 [d, dv] (the state before the
 *   first token; optional: NULL is zeros)
 * The field order is part of the ABI (the JS binding writes it as an array of pointers). */
#define ATTN_INPUT_LIST(X) \
    X(q) X(k) X(v) X(x) X(w1) X(b1) X(w2) X(b2) X(w) X(r) X(wa) X(ba) X(wb) X(bb) X(r1) X(r2) X(g) X(beta) X(s0)
typedef struct attn_inputs {
#define ATTN_INPUT_FIELD(name) const float *name;
    ATTN_INPUT_LIST(ATTN_INPUT_FIELD)
#undef ATTN_INPUT_FIELD
} attn_inputs;

/* factorized-dense tilings: X(ENUM, name, description). The first is the default. */
#define ATTN_TILING_LIST(X)                                                                     \
    X(ATTN_TILING_KRONECKER, "kronecker", "B[i,j] = FA[i, j/b] * FB[i, j%b]: every a*b product")  \
    X(ATTN_TILING_TILE, "tile", "B[i,j] = FA[i, j%a] * FB[i, j%b]: period lcm(a,b), full only when gcd(a,b) = 1")
typedef enum attn_tiling {
#define ATTN_ENUM_ITEM(ENUM, ...) ENUM,
    ATTN_TILING_LIST(ATTN_ENUM_ITEM)
    ATTN_TILING_COUNT
} attn_tiling;

/* fixed patterns: X(ENUM, name, looks_ahead, description). A pattern that looks ahead (reads
 * j > i) cannot be causal. The first is the default. */
#define ATTN_PATTERN_LIST(X)                                                                    \
    X(ATTN_PATTERN_CURRENT, "current", 0, "A[i,i] = 1")                                          \
    X(ATTN_PATTERN_PREVIOUS, "previous", 0, "A[i,i-1] = 1; row 0 attends to itself")             \
    X(ATTN_PATTERN_NEXT, "next", 1, "A[i,i+1] = 1; the last row attends to itself")              \
    X(ATTN_PATTERN_LEFT, "left", 0, "uniform over [max(0,i-w), i-1]; row 0 attends to itself")   \
    X(ATTN_PATTERN_RIGHT, "right", 1, "uniform over [i+1, min(n-1,i+w)]; the last row attends to itself") \
    X(ATTN_PATTERN_FIRST, "first", 0, "A[i,0] = 1")                                              \
    X(ATTN_PATTERN_LAST, "last", 1, "A[i,n-1] = 1")
typedef enum attn_pattern {
    ATTN_PATTERN_LIST(ATTN_ENUM_ITEM)
    ATTN_PATTERN_COUNT
#undef ATTN_ENUM_ITEM
} attn_pattern;

#define ATTN_MAX_COMPONENTS 8
#define ATTN_MODEL_MAX_PATTERNS 16 /* attn_model_config.patterns: the most a model's fixed heads cycle through */
/* The most heads a model may have in all (layers * heads): its parameter table (a few entries per
 * head) stays small enough to read in milliseconds, whatever a configuration or a saved file says. */
#define ATTN_MODEL_MAX_HEADS 4096
/* The largest dimension accepted (larger ones are ATTN_ERR_MEMORY): every size the core computes
 * then fits its integer types. */
#define ATTN_MAX_DIM 1073741824

/* Options: X(type, name) for one value, ARRAY(type, name, count) for several. Every value is 4
 * bytes wide and the order is part of the ABI: the binding computes each field's offset from this
 * list (attn_metadata_json's optionFields). What each option means, its default and its checks:
 * options.def. */
#define ATTN_OPTION_FIELDS(X, ARRAY)                                                            \
    X(int32_t, causal)          /* row i uses only columns j <= i */                            \
    X(int32_t, has_scale)       /* use `scale`, else 1/sqrt(d) */                               \
    X(float, scale)                                                                             \
    X(float, eps)               /* linear, taylor: denominator epsilon */                       \
    X(int32_t, tiling)          /* factorized-dense: attn_tiling */                             \
    X(int32_t, pattern)         /* fixed: attn_pattern */                                       \
    X(int32_t, window)          /* fixed left/right: window w >= 1 */                           \
    X(int32_t, n_components)    /* mixture: entries of component/alpha in use */                \
    X(int32_t, alpha_is_logits) /* mixture: alpha holds logits; weights = softmax(alpha) */     \
    ARRAY(int32_t, component, ATTN_MAX_COMPONENTS) /* mixture: attn_variant of each component */ \
    ARRAY(float, alpha, ATTN_MAX_COMPONENTS)
typedef struct attn_options {
#define ATTN_OPTION_FIELD(type, name) type name;
#define ATTN_OPTION_ARRAY(type, name, count) type name[count];
    ATTN_OPTION_FIELDS(ATTN_OPTION_FIELD, ATTN_OPTION_ARRAY)
#undef ATTN_OPTION_FIELD
#undef ATTN_OPTION_ARRAY
} attn_options;

/* Fills the defaults of options.def: not causal, scale 1/sqrt(d), eps 1e-6, kronecker tiling,
 * pattern current, window 3, no mixture components. */
void attn_options_default(attn_options *opt);

/* ---- plans: check once, measure once, run ----
 * attn_plan_make checks dims and options against the variant's rules (the dimensions it reads are
 * positive, L >= n, a*b = L, option values, look-ahead patterns, mixable components, alpha) and
 * measures the workspace the run needs. attn_plan_run then runs without checking them again.
 * A plan is caller-owned plain data, sealed by attn_plan_make: attn_plan_run refuses one that was
 * not made there or was changed since (ATTN_ERR_SHAPE). */
#define ATTN_WANT_WEIGHTS 1 /* the run receives a weights buffer [n, n] */
#define ATTN_WANT_STATE 2   /* the run receives state [F, dv] and normalizer [F] (linear family) */
#define ATTN_WANT_GRADS 4   /* attn_plan_backward: the workspace covers the backward pass */
#define ATTN_WANT_KEPT 8    /* attn_plan_run_kept and attn_plan_backward_kept: the workspace covers a
                             * forward pass that keeps what the backward needs and the backward from
                             * it (softmax-type: less than ATTN_WANT_GRADS, no second forward; the
                             * others: n*dv floats more, for the y they recompute). Not with
                             * ATTN_WANT_WEIGHTS or ATTN_WANT_STATE (ATTN_ERR_UNSUPPORTED) */
typedef struct attn_plan {
    attn_variant variant;
    attn_dims dims;       /* L resolved (0 -> n) */
    attn_options options;
    int32_t flags;        /* ATTN_WANT_* */
    int32_t state_width;  /* F when ATTN_WANT_STATE: d, or d + 1 for taylor; else 0 */
    size_t workspace_bytes;
    int32_t threads;      /* threads the workspace has scratch slices for (threaded builds) */
    int32_t kept_floats;  /* ATTN_WANT_KEPT: the floats of attn_plan_run_kept's kept array (n for a
                           * softmax-type variant, ceil(n / ceil(sqrt(n))) * d * dv for a recurrent
                           * one, 0 for the others); else 0 */
    uint32_t magic;       /* a seal over the fields above, set by attn_plan_make */
} attn_plan;

/* On error *detail (if not NULL) is a static string naming the input, e.g. "a*b must equal L", and
 * the plan is unusable. ATTN_ERR_MEMORY when the workspace would pass half the address space;
 * ATTN_ERR_UNSUPPORTED for ATTN_WANT_STATE on a variant that keeps no state. */
attn_status attn_plan_make(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                           int32_t flags, attn_plan *plan, const char **detail);

/* How many plans attn_plan_make has made in this process (this instance), the ones made inside
 * attn_check, attn_run and the other one-call conveniences included: a diagnostic, e.g. to see
 * that an opened model's passes make none (attn_model_open makes them all). Wraps at 2^32. */
uint32_t attn_plans_made(void);

/* Runs a plan.
 *   inputs: the arrays the variant reads (attn_inputs)         out: [n, dv]
 *   weights: [n, n] when the plan wants weights, else ignored: receives A (linear variants compute
 *            it from its definition for display; y still takes the O(n*d*dv) path)
 *   state [F, dv], normalizer [F]: when the plan wants the state (see attn_state), else ignored
 *   workspace: ws_bytes >= plan->workspace_bytes, 16-byte aligned
 * Arrays must not overlap out/weights/state/workspace. NaN/Inf in inputs is not checked here
 * (attn_find_nonfinite; the JS binding checks). */
attn_status attn_plan_run(const attn_plan *plan, const attn_inputs *in, float *out, float *weights,
                          float *state, float *normalizer, void *workspace, size_t ws_bytes,
                          const char **detail);

/* Gradients: one array per input (same shapes as attn_inputs), and the mixture weights. Only the
 * arrays the variant reads need be set; they are overwritten. Entries of an L-sized parameter that
 * the call does not read (rows/columns >= n) get 0. The field order is part of the ABI. */
typedef struct attn_grads {
#define ATTN_GRAD_FIELD(name) float *name;
    ATTN_INPUT_LIST(ATTN_GRAD_FIELD)
#undef ATTN_GRAD_FIELD
    float *alpha; /* mixture: [n_components]: d/d alpha, or d/d alphaLogits when alpha_is_logits */
} attn_grads;

/* The backward pass of a plan made with ATTN_WANT_GRADS: runs the forward pass (out: [n, dv],
 * y) and writes the gradient of sum(dout * y) with respect to every array the variant reads.
 *   dout: [n, dv]    grads: attn_grads, the arrays of the inputs the variant reads
 * Softmax-type variants recompute their logits block by block from each row's log-sum-exp
 * (FlashAttention's backward), the linear family keeps O(F*dv) state with a reverse sweep when
 * causal, fixed is A^T*dout: no variant allocates n x n. The grads arrays must not overlap the
 * inputs, dout, out or each other (some passes use them as scratch between sweeps). After a forward
 * pass of one's own, attn_plan_backward_kept (below) skips the one this runs. */
attn_status attn_plan_backward(const attn_plan *plan, const attn_inputs *in, const float *dout,
                               float *out, const attn_grads *grads, void *workspace,
                               size_t ws_bytes, const char **detail);

/* ---- a kept forward pass: the forward once, then its backward without running it again ----
 * A training step runs the forward pass, then the backward pass, which needs each row's y and
 * log-sum-exp: attn_plan_backward computes them again (a forward pass inside the backward, about a
 * third of its time for softmax-type variants); a kept forward pass hands them over instead. Both
 * take a plan made with ATTN_WANT_KEPT (alone, or with ATTN_WANT_GRADS for a workspace that covers
 * every entry point).
 *
 * attn_plan_run_kept: the forward pass.
 *   out [n, dv] = y, the bits attn_plan_run writes
 *   kept [plan->kept_floats]:
 *     softmax-type variants (softmax, the Synthesizer variants, mixture): lse [n], each row's
 *            log-sum-exp of its masked logits, lse_i = m_i + log sum_j exp(B_ij + M_ij - m_i),
 *            m_i = max_j (B_ij + M_ij), accumulated key block by key block as the forward pass
 *            does (so A_ij = exp(B_ij + M_ij - lse_i));
 *     the recurrent family: the state S [d, dv] before tokens 0, C, 2C, ... (C = ceil(sqrt(n))),
 *            ceil(n / C) states, so its backward recomputes each chunk from them instead of
 *            running the whole scan first;
 *     the linear family and fixed keep nothing beyond y: kept_floats is 0, kept is not written
 *            and may be NULL (see below).
 * attn_plan_backward_kept: the backward pass from it.
 *   dout [n, dv]; out [n, dv] and kept: what attn_plan_run_kept wrote for these inputs and this
 *   plan's dims and options (read only; on any thread count: a softmax-type forward pass, and a
 *   recurrent one, is the same bits on every thread count); grads as for attn_plan_backward. The
 *   recurrent family does not read out (its backward recomputes y chunk by chunk).
 * The gradients are bit-identical to attn_plan_backward's for the same inputs, plan and dout, on
 * every build and thread count: the kept y, lse and checkpoints are the bits attn_plan_backward
 * recomputes, and everything after them runs the same code in the same order. A y or kept array
 * from other inputs gives other (wrong) gradients, never a read outside the arrays.
 * The linear family (linear, efficient, taylor) and fixed recompute instead: attn_plan_run_kept is
 * attn_plan_run, and attn_plan_backward_kept runs their whole backward pass (the same gradients;
 * out and kept are not read and may be NULL), its y going to a scratch in the workspace. Their
 * forward pass is O(n*d*dv), a fraction of the backward's sweeps, and what the reverse sweep of a
 * causal one needs is the state after every position, O(n*F*dv): more to keep than to recompute.
 * The workspace is plan->workspace_bytes; out, kept, dout, the inputs and the grads arrays must not
 * overlap the workspace or the grads arrays. */
attn_status attn_plan_run_kept(const attn_plan *plan, const attn_inputs *in, float *out, float *kept,
                               void *workspace, size_t ws_bytes, const char **detail);
attn_status attn_plan_backward_kept(const attn_plan *plan, const attn_inputs *in, const float *dout,
                                    const float *out, const float *kept, const attn_grads *grads,
                                    void *workspace, size_t ws_bytes, const char **detail);

/* One-call conveniences: the workspace of attn_backward, and attn_plan_make + attn_plan_backward. */
attn_status attn_backward_size(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                               size_t *bytes);
attn_status attn_backward(attn_variant variant, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, void *workspace, size_t ws_bytes,
                          const char **detail);

/* sizeof(attn_plan) and plan->workspace_bytes / state_width / kept_floats, for callers that
 * cannot read C structs (the JS binding). */
size_t attn_plan_size(void);
size_t attn_plan_workspace_bytes(const attn_plan *plan);
int32_t attn_plan_state_width(const attn_plan *plan);
int32_t attn_plan_kept_floats(const attn_plan *plan);

/* ---- one-call conveniences over the plans ---- */

/* attn_plan_make's checks alone. */
attn_status attn_check(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                       const char **detail);

/* Workspace bytes attn_run needs. want_weights: whether a weights buffer will be passed. */
attn_status attn_workspace_size(attn_variant variant, const attn_dims *dims,
                                const attn_options *opt, int want_weights, size_t *bytes);

/* Plans and runs: inputs as attn_inputs documents, out [n, dv], weights [n, n] or NULL. */
attn_status attn_run(attn_variant variant, const attn_dims *dims, const attn_inputs *in,
                     const attn_options *opt, float *out, float *weights, void *workspace,
                     size_t ws_bytes, const char **detail);

/* linear, taylor, efficient: the small state they keep instead of A, over all n keys (with
 * causal, the last prefix, which is the same sums). F = d, or d + 1 for taylor.
 *   linear:    state [F, dv] = sum_j phi(k_j) v_j^T              normalizer [F] = sum_j phi(k_j)
 *   taylor:    state [F, dv] = [sum_j v_j ; sum_j kh_j v_j^T]     normalizer [F] = [n ; sum_j kh_j]
 *   efficient: state [F, dv] = softmax_positions(k)^T v           normalizer [F] = log sum_j exp(k_jc)
 * Other variants: ATTN_ERR_UNSUPPORTED. attn_state_size gives F and the workspace bytes; attn_state
 * computes the state alone (no output). */
attn_status attn_state_size(attn_variant variant, const attn_dims *dims, const attn_options *opt,
                            int32_t *width, size_t *ws_bytes);
attn_status attn_state(attn_variant variant, const attn_dims *dims, const attn_inputs *in,
                       const attn_options *opt, float *state, float *normalizer, void *workspace,
                       size_t ws_bytes, const char **detail);

/* Index of the first NaN or infinity in x[0..count), or -1 when all are finite. */
int64_t attn_find_nonfinite(const float *x, size_t count);

/* A JSON document of the registry: every variant (variants.def), option (options.def), dimension,
 * input field, pattern and tiling, the struct field orders, and the layouts of attn_model_config
 * and attn_model_param (each field's name, type and offsetof; registry.c). The JS binding builds
 * lab.variants, lab.options, its option writer, its model config writer and its checks from it.
 * Static storage, put together on the first call. */
const char *attn_metadata_json(void);

/* The lowest address of memory no static data uses (WebAssembly builds hand memory above it to the
 * binding, which lays out each call's buffers there). */
size_t attn_heap_base(void);

/* ---- threads (the threaded WebAssembly builds) ----
 * A threaded build runs as several instances of one module on one shared memory: the caller's
 * thread (the leader) and up to ATTN_MAX_THREADS - 1 workers, each with its own stack. The leader
 * splits a call into independent pieces (query-row blocks of softmax-type attention, sequences of
 * a model's batch, row blocks of its matrix products) that the workers take from a shared counter.
 * Pieces write disjoint outputs and are computed exactly as one thread computes them, so results
 * are bit-identical to one thread. The pool is the one piece of global state: one leader at a time.
 * Workspace sizes (plans, models) are measured for the thread count set when they are measured.
 * Builds without threads: attn_threads_start(1) is ATTN_OK, more threads ATTN_ERR_UNSUPPORTED.
 *
 * A worker instance calls attn_thread_worker(index, stack_low), index in [1, threads), which returns 0 only
 * after attn_threads_stop() (-1 at once for an index outside [1, ATTN_MAX_THREADS); a worker
 * whose index is not below the started thread count takes no pieces). Once attn_threads_running() counts threads - 1 workers, the leader
 * calls attn_threads_start(threads, spin) and every later call splits its work over them.
 * spin: rounds a waiting thread polls before it sleeps (memory.atomic.wait32). A wake-up costs
 * tens of microseconds, more than many pieces take, so with a core per thread the caller spins
 * long (about a million rounds, a millisecond or so); with more threads than cores, spinning
 * steals the time of the threads that have work, so it spins little. */
#define ATTN_MAX_THREADS 16
attn_status attn_threads_start(int32_t threads, int32_t spin);
void attn_threads_stop(void);
int32_t attn_threads_running(void);
/* stack_low: the lowest address of the worker's stack, where it writes its canary (see
 * attn_threads_failed), or NULL for none. */
int32_t attn_thread_worker(int32_t index, void *stack_low);

/* Sets the spin of a running pool when spin >= 0 (a host that starts more pools than cores lowers
 * the spin of those already running); returns the spin now in effect (0 without threads). */
int32_t attn_threads_spin(int32_t spin);

/* ---- a pool's failure (threaded builds; no-ops in the others) ----
 * A trap in a piece on a worker ends that worker's attn_thread_worker() call without finishing
 * its piece. The worker's host must then call attn_threads_fail() on that instance (a trapped
 * instance stays callable): the leader, waiting for the job, traps in turn instead of waiting
 * forever. Each thread's stack has a canary at its low end, checked by the leader after every
 * job: WebAssembly has no guard page, so an overflow writes into whatever lies below the stack,
 * and the canary turns one that reached it into a trap of the leader. After either, the pool is
 * failed for good: every later job traps at once, and the host should drop the instance. */
#define ATTN_THREADS_FAILED_WORKER 1 /* a worker's host called attn_threads_fail() */
#define ATTN_THREADS_FAILED_STACK 2  /* | thread << 8: that thread's stack canary was overwritten */
void attn_threads_fail(void);
/* 0 while the pool works, else the first failure: ATTN_THREADS_FAILED_WORKER, or
 * ATTN_THREADS_FAILED_STACK | thread << 8. */
int32_t attn_threads_failed(void);

/* For tests of the pool (exported by the threaded builds only): the address of thread's two
 * canary words, which a test may overwrite to stand for an overflow; NULL before it has one. */
void *attn_threads_canary(int32_t thread);
/* For tests of the pool (exported by the threaded builds only): runs a job of `pieces` pieces
 * (>= 1), each of which records its thread and then waits, for at most about 5 s, until every
 * thread of the pool has run one, so that with pieces >= threads every thread runs at least one
 * however the threads are scheduled. Returns the bitmask of the threads that ran a piece (bit 0:
 * the leader; 1 without threads). trap = 1: a piece that runs on a worker traps instead (the
 * leader's pieces wait for the failure that follows, attn_threads_fail); trap = 2: a piece on
 * the leader traps; 0: none. */
int32_t attn_threads_probe(int32_t pieces, int32_t trap);

/* ---- models: small transformers (model_*.c; model.h says which file tells what) ----
 * A decoder-style transformer whose attention is any variant: token + learned position
 * embeddings; per layer, pre-LayerNorm multi-head attention (each head through attn_plan_run and
 * attn_plan_backward) with an output projection and a residual, then a pre-LayerNorm GELU MLP with
 * a residual; a final LayerNorm, the output projection and a masked cross-entropy; AdamW.
 * The model's math, parameter names, shapes, order and initialisation: docs/model.md.
 *
 * Memory: one caller-allocated model block (attn_model_size) of P floats four times over:
 * parameters [0, P), gradients [P, 2P), AdamW m [2P, 3P), AdamW v [3P, 4P), each section laid out in
 * the parameter table's order (attn_model_param_info). Every call also takes a workspace
 * (attn_model_workspace_size, 16-byte aligned) that holds the activations of one batch; nothing is
 * allocated. Results depend only on the inputs, the seed and the build (fixed summation order).
 *
 * Lifetime: a configuration is checked and measured by the calls that take it (attn_model_check,
 * the parameter table, attn_model_size, attn_model_init); attn_model_open then opens the model once
 * into caller memory: the configuration's shape (every parameter's offset), one attention plan for
 * every head of every layer and the largest plan workspace. The passes (forward, loss, backward,
 * AdamW, decoding, attention maps) take the opened model and check, measure and plan nothing of
 * the configuration again (attn_plans_made stays where attn_model_open left it). */

/* The configuration. The binding writes it by the layout attn_metadata_json publishes (each
 * field's name, type and offset; registry.c lists the fields). attn_model_config_default fills
 * the defaults. */
typedef struct attn_model_config {
    int32_t variant;      /* attn_variant of every head */
    int32_t vocab;        /* tokens are 0 .. vocab-1 */
    int32_t seq_len;      /* tokens per sequence; also L of the Synthesizer parameters */
    int32_t d_model;
    int32_t heads;        /* must divide d_model; each head has width dh = d_model / heads */
    int32_t layers;
    int32_t d_ff;         /* hidden width of the MLP */
    int32_t causal;       /* nonzero: position i attends to positions <= i only */
    int32_t hidden;       /* dense: the hidden width h; 0: dh */
    int32_t rank;         /* factorized-random: the rank; 0: min(8, seq_len) */
    float weight_decay;   /* AdamW decay of the matrices (default 0.01) */
    uint32_t seed;        /* initialisation */
    double r_std;         /* initial standard deviation of r, r1, r2 (random, factorized-random), in
                           * (0, 1e6]; default 0.2 */
    /* The attention options of every head: scale, eps, tiling, window, and for a mixture
     * n_components + component. causal comes from the field above; fixed heads take their pattern
     * from the list below (options.pattern is ignored); a mixture's weights are the learned logits
     * of each head's `alpha` parameter (options.alpha is ignored). */
    attn_options options;
    /* NULL, or one flag per parameter index (attn_model_param_count entries): nonzero = frozen,
     * i.e. no gradient (it stays 0), no update, no moments, not counted in the clipping norm.
     * Caller-owned; read by loss_backward and adamw. */
    const int32_t *frozen;
    /* fixed only: head h of every layer takes patterns[h % n_patterns] (attn_pattern values; a
     * causal model may not take one that looks ahead). n_patterns 0: the default cycle previous,
     * current, next, left, right, first, last without the look-ahead ones when causal
     * (docs/model.md). Another variant must leave n_patterns 0. */
    int32_t n_patterns;
    int32_t patterns[ATTN_MODEL_MAX_PATTERNS];
} attn_model_config;
#if defined(__wasm32__)
/* The binding writes this struct into a 256-byte block (src/js/model.js, CONFIG_BYTES). */
_Static_assert(sizeof(attn_model_config) <= 256, "attn_model_config outgrew the binding's 256-byte config block");
#endif

/* One entry of the parameter table. The binding reads it by the layout attn_metadata_json
 * publishes (registry.c lists the fields). */
typedef struct attn_model_param {
    char name[32];       /* NUL-terminated: "tok_emb", "l0.h1.wq", "lnf.g", ... */
    int32_t index;
    int32_t offset;      /* first float of the parameter within each section of the model block */
    int32_t count;       /* floats */
    int32_t ndim;        /* 1 or 2 */
    int32_t rows, cols;  /* ndim 2: [rows, cols], row-major; ndim 1: [count, 1] */
    int32_t is_matrix;   /* ndim 2: AdamW decays it */
    int32_t init_kind;   /* 0: every value is init_value; 1: fround(normal() * init_std) */
    double init_std;
    double init_value;
} attn_model_param;

/* Defaults: softmax, not causal, hidden and rank 0 (their defaults), weight_decay 0.01, seed 0, r_std 0.2,
 * attn_options_default, no frozen parameters; the sizes are 0 and must be set. */
void attn_model_config_default(attn_model_config *cfg);

/* The configuration's checks: sizes positive, heads dividing d_model, layers * heads at most
 * ATTN_MODEL_MAX_HEADS and the model block within half the address space (ATTN_ERR_MEMORY, sizes
 * in 64-bit arithmetic), and each head's attention dims and options through attn_check (a
 * Synthesizer's a*b, mixture components, option values). Its cost does not grow with the sizes. */
attn_status attn_model_check(const attn_model_config *cfg, const char **detail);

/* The parameter table: its length, one entry, or the index of a name (ATTN_ERR_UNKNOWN if none). */
attn_status attn_model_param_count(const attn_model_config *cfg, int32_t *count, const char **detail);
attn_status attn_model_param_info(const attn_model_config *cfg, int32_t index, attn_model_param *info,
                                  const char **detail);
attn_status attn_model_param_find(const attn_model_config *cfg, const char *name, int32_t *index,
                                  const char **detail);

/* Bytes of the model block: 16 * P (four float32 sections of P floats). */
attn_status attn_model_size(const attn_model_config *cfg, size_t *bytes);

/* Writes the initial parameters from cfg->seed and zeroes the gradients and moments. Parameter i
 * draws from its own stream: mulberry32 seeded with fnv1a(name) ^ (seed * 0x9e3779b1) (32-bit), a
 * normal number is (u1 + u2 + u3 + u4 - 2) * sqrt(3) in float64, and the value is
 * float32(normal * init_std): the same bits on every build and in JavaScript. */
attn_status attn_model_init(const attn_model_config *cfg, float *memory, size_t bytes,
                            const char **detail);

/* An opened model (model.h defines it): the configuration copied in, its shape, each head's plan.
 * Plain data in caller memory; nothing to close: free the memory when done. */
typedef struct attn_model attn_model;

/* Bytes of an opened model of cfg: a fixed part and one plan per head of every layer (16-byte
 * multiple). */
attn_status attn_model_open_size(const attn_model_config *cfg, size_t *bytes);

/* Opens cfg into `memory` (bytes >= attn_model_open_size, 16-byte aligned) and sets *model to it:
 * the checks of attn_model_check, the shape, and layers * heads plans (ATTN_WANT_KEPT), made on
 * this call's thread for this instance's thread count. cfg is copied: the caller may change or
 * free it; cfg->frozen is read through its pointer by every loss_backward and adamw call, so the
 * flags must outlive the model (their values may change between calls). A mixture's plans take the
 * head's learned alpha logits from the model block at each pass (no new plan). The passes refuse
 * (ATTN_ERR_SHAPE) a model whose memory was not opened, or opened under another thread count
 * (attn_threads_start / attn_threads_stop since): open it again. */
attn_status attn_model_open(const attn_model_config *cfg, void *memory, size_t bytes, attn_model **model,
                            const char **detail);

/* Workspace bytes of every call below for batches of up to `batch` sequences. */
attn_status attn_model_workspace_size(const attn_model *model, int32_t batch, size_t *bytes);

/* logits [batch * seq_len, vocab] of tokens [batch * seq_len] (each in [0, vocab)). */
attn_status attn_model_forward(const attn_model *model, const float *memory, size_t bytes,
                               const int32_t *tokens, int32_t batch, float *logits,
                               void *workspace, size_t ws_bytes, const char **detail);

/* The mean cross-entropy over the positions whose target (in [-1, vocab)) is not -1 (0 when there
 * are none), *correct = how many of them have the target as their argmax (the first index of the
 * maximum), *counted = how many there are. attn_model_loss leaves the model block alone;
 * attn_model_loss_backward also overwrites the gradient section with the gradient of that mean
 * (0 for frozen parameters). loss, correct and counted may be NULL. */
attn_status attn_model_loss(const attn_model *model, const float *memory, size_t bytes,
                            const int32_t *tokens, const int32_t *targets, int32_t batch,
                            float *loss, int32_t *correct, int32_t *counted, void *workspace,
                            size_t ws_bytes, const char **detail);
attn_status attn_model_loss_backward(const attn_model *model, float *memory, size_t bytes,
                                     const int32_t *tokens, const int32_t *targets, int32_t batch,
                                     float *loss, int32_t *correct, int32_t *counted,
                                     void *workspace, size_t ws_bytes, const char **detail);

/* One AdamW step (beta1 0.9, beta2 0.98, eps 1e-8, step >= 1 counting from 1) over the gradient
 * section, after clipping the non-frozen gradients to global L2 norm 1. Matrices decay by
 * lr * weight_decay * p; vectors do not. *grad_norm (if not NULL) receives the norm before clipping.
 * All or nothing: a gradient that is not finite, or a step that would leave any parameter or moment
 * non-finite (an lr or weight decay too large for float32), is ATTN_ERR_VALUE and changes nothing
 * (the step is computed once to check it, then again to write it: the same bits). */
attn_status attn_model_adamw(const attn_model *model, float *memory, size_t bytes, float lr,
                             int32_t step, float *grad_norm, const char **detail);

/* ---- step-by-step decoding of a causal model (one sequence) ----
 * Feeding tokens one position at a time gives the logits attn_model_forward gives for the same
 * prefix (within float32 rounding). The caller owns the state: a header, the residual stream of the
 * current position, and per layer and head
 *   linear, taylor: S [F, dv], z [F] (F = dh, or dh + 1 for taylor): O(F * dv) work per token,
 *                   whatever the position ("transformers are RNNs");
 *   efficient:      S [dh, dv], z [dh] and the running maximum of each key feature [dh];
 *   every other variant: a cache of the values of positions 0..t [seq_len, dh] (and, when it
 *                   reads the keys, of the keys [seq_len, dh]): O(t) work per token.
 * Synthesizer heads read row `position` of their L-sized parameters (L = seq_len) and the position
 * embeddings end at seq_len, so decoding stops there. A model that is not causal cannot be decoded
 * step by step: ATTN_ERR_UNSUPPORTED from every call below. */

/* Bytes of the state and of the workspace attn_model_decode_step needs (both 16-byte aligned). */
attn_status attn_model_decode_size(const attn_model *model, size_t *bytes);
attn_status attn_model_decode_workspace_size(const attn_model *model, size_t *bytes);

/* Empties the state: the next step feeds position 0. */
attn_status attn_model_decode_reset(const attn_model *model, void *state);

/* Feeds token (in [0, vocab)) at `position`, which must be the number of tokens fed since the
 * reset, and writes logits [vocab]: the scores of the token at position + 1. ATTN_ERR_VALUE for a
 * position at or past seq_len or out of turn, or a state that was not reset. */
attn_status attn_model_decode_step(const attn_model *model, const float *memory, size_t bytes,
                                   void *state, int32_t token, int32_t position, float *logits,
                                   void *workspace, size_t ws_bytes, const char **detail);

/* ---- attention maps ----
 * A [seq_len, seq_len]: the attention matrix of head `head` of layer `layer` on tokens (one
 * sequence of seq_len), from attn_plan_run with weights (the linear family computes it from its
 * definition for display, as attn_plan_run does). Rows are non-negative and sum to 1 (up to the
 * linear family's eps); causal: zero above the diagonal. The workspace holds one sequence's forward
 * pass and the weights plan: attn_model_attention_map_workspace_size bytes, 16-byte aligned. */
attn_status attn_model_attention_map_workspace_size(const attn_model *model, size_t *bytes);
attn_status attn_model_attention_map(const attn_model *model, const float *memory, size_t bytes,
                                     const int32_t *tokens, int32_t layer, int32_t head, float *A,
                                     void *workspace, size_t ws_bytes, const char **detail);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
