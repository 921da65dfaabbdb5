/* test_native.c — the C core built natively under AddressSanitizer and UBSan, before any
 * WebAssembly step. Every variant, causal on and off, weights on and off, at sizes around the
 * SIMD width, with each buffer allocated at exactly its size so an overrun is caught. Checks
 * against a float64 softmax written from its definition (docs/contract.md), and properties every variant must have:
 * zero above the diagonal when causal, y = A*v (the recurrent family: when s0 is not given), and
 * but for the recurrent family (whose W is no average) rows of A non-negative and summing to 1.
 * The full float64 reference lives in src/js/reference.js; this test is about memory safety. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/c/internal.h" /* the registry: attn_variant_id, attn_keeps_lse */

#include "check.h"

static float *rand_array(size_t count) {
    float *p = malloc((count ? count : 1) * sizeof *p);
    for (size_t i = 0; i < count; i++) p[i] = rnd();
    return p;
}

/* Row i of softmax's float64 logits, q_i . k_j / sqrt(d) for the keys it sees (j <= i when
 * causal), into row; returns how many, and their maximum in *mx. */
static int ref_softmax_logits(int n, int d, const float *q, const float *k, int causal, int i,
                              double *row, double *mx) {
    int valid = causal ? i + 1 : n;
    *mx = -INFINITY;
    for (int j = 0; j < valid; j++) {
        double s = 0;
        for (int c = 0; c < d; c++) s += (double)q[i * d + c] * k[j * d + c];
        row[j] = s / sqrt((double)d);
        if (row[j] > *mx) *mx = row[j];
    }
    return valid;
}

/* float64 softmax attention straight from its definition. */
static void ref_softmax(int n, int d, int dv, const float *q, const float *k, const float *v,
                        int causal, double *y) {
    double *row = malloc((size_t)n * sizeof *row);
    for (int i = 0; i < n; i++) {
        double mx, sum = 0;
        int valid = ref_softmax_logits(n, d, q, k, causal, i, row, &mx);
        for (int j = 0; j < valid; j++) sum += row[j] = exp(row[j] - mx);
        for (int e = 0; e < dv; e++) {
            double acc = 0;
            for (int j = 0; j < valid; j++) acc += row[j] / sum * v[j * dv + e];
            y[i * dv + e] = acc;
        }
    }
    free(row);
}

/* The backward pass with every gradient array at exactly its size (ASan catches an overrun): its
 * y equals the forward's bit for bit, every gradient is finite, and grads.v = A^T dout, which holds
 * for every variant (y = A v with A independent of v). */
static void check_backward(attn_variant var, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, const float *out, const float *weights) {
    int n = dims->n, d = dims->d, dv = dims->dv, L = dims->L;
    attn_grads g = {0};
    float *owned[IN_COUNT + 1];
    int no = 0;
#define GRAD(name, count) if (in->name) g.name = owned[no++] = calloc((size_t)(count), sizeof(float))
    GRAD(q, n * d); GRAD(k, n * d); GRAD(v, n * dv); GRAD(x, n * d);
    GRAD(w1, d * dims->h); GRAD(b1, dims->h); GRAD(w2, dims->h * L); GRAD(b2, L);
    GRAD(w, d * L); GRAD(r, L * L); GRAD(wa, d * dims->a); GRAD(ba, dims->a);
    GRAD(wb, d * dims->b); GRAD(bb, dims->b); GRAD(r1, L * dims->rank); GRAD(r2, L * dims->rank);
    GRAD(g, n * d); GRAD(beta, n); GRAD(s0, d * dv);
#undef GRAD
    g.alpha = owned[no++] = calloc(ATTN_MAX_COMPONENTS, sizeof(float));
    unsigned saved = rng_state; /* dout from a stream of its own: the cases after keep their inputs */
    rng_state ^= 0x9e3779b9u;
    float *dout = rand_array((size_t)n * dv), *y = malloc((size_t)n * dv * sizeof *y);
    rng_state = saved;
    float *streamed = malloc((size_t)n * dv * sizeof *streamed);
    size_t bytes = 0;
    attn_workspace_size(var, dims, opt, 0, &bytes);
    void *fws = malloc(bytes ? bytes : 1);
    attn_run(var, dims, in, opt, streamed, NULL, fws, bytes, NULL);
    free(fws);
    attn_status s = attn_backward_size(var, dims, opt, &bytes);
    CHECK(s == ATTN_OK, "%s backward_size: %s", attn_variant_id(var), attn_status_string(s));
    void *ws = malloc(bytes ? bytes : 1);
    const char *detail = NULL;
    s = attn_backward(var, dims, in, opt, dout, y, &g, ws, bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d backward: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    for (int i = 0; i < n * dv; i++)
        CHECK(y[i] == streamed[i], "%s n=%d causal=%d: backward's y[%d] = %.9g, forward's %.9g", attn_variant_id(var), n,
              opt->causal, i, y[i], streamed[i]);
    for (int j = 0; j < n; j++)
        for (int e = 0; e < dv; e++) {
            double want = 0;
            for (int i = 0; i < n; i++) want += (double)weights[(size_t)i * n + j] * dout[i * dv + e];
            float got = g.v[j * dv + e];
            CHECK(fabs(got - want) <= 1e-5 + 1e-4 * fabs(want), "%s n=%d d=%d dv=%d causal=%d: dv[%d][%d] = %.8g, A^T dout = %.8g",
                  attn_variant_id(var), n, d, dv, opt->causal, j, e, got, want);
        }
    for (int t = 0; t < no; t++) free(owned[t]);
    free(dout), free(y), free(streamed), free(ws);
    (void)out;
}

/* Gradient arrays for every input in reads, each of exactly its size (ASan catches an overrun). */
typedef struct grad_set {
    attn_grads g;
    float *owned[IN_COUNT + 1];
    size_t count[IN_COUNT + 1];
    int no;
} grad_set;
static void grads_alloc(const attn_dims *dims, const attn_inputs *in, grad_set *gs) {
    int n = dims->n, d = dims->d, dv = dims->dv, L = dims->L;
    *gs = (grad_set){0};
#define GRAD(name, size)                                                                  \
    if (in->name) gs->count[gs->no] = (size_t)(size),                                     \
                  gs->g.name = gs->owned[gs->no++] = calloc((size_t)(size), sizeof(float))
    GRAD(q, n * d); GRAD(k, n * d); GRAD(v, n * dv); GRAD(x, n * d);
    GRAD(w1, d * dims->h); GRAD(b1, dims->h); GRAD(w2, dims->h * L); GRAD(b2, L);
    GRAD(w, d * L); GRAD(r, L * L); GRAD(wa, d * dims->a); GRAD(ba, dims->a);
    GRAD(wb, d * dims->b); GRAD(bb, dims->b); GRAD(r1, L * dims->rank); GRAD(r2, L * dims->rank);
    GRAD(g, n * d); GRAD(beta, n); GRAD(s0, d * dv);
#undef GRAD
    gs->count[gs->no] = ATTN_MAX_COMPONENTS;
    gs->g.alpha = gs->owned[gs->no++] = calloc(ATTN_MAX_COMPONENTS, sizeof(float));
}
static void grads_free(grad_set *gs) {
    for (int t = 0; t < gs->no; t++) free(gs->owned[t]);
}

/* float64 log-sum-exp of softmax's row i from its definition: log sum_j exp(q_i . k_j / sqrt(d)). */
static double ref_softmax_lse(int n, int d, const float *q, const float *k, int causal, int i) {
    double mx, sum = 0, *row = malloc((size_t)n * sizeof *row);
    int valid = ref_softmax_logits(n, d, q, k, causal, i, row, &mx);
    for (int j = 0; j < valid; j++) sum += exp(row[j] - mx);
    free(row);
    return mx + log(sum);
}

/* A kept forward pass (attn_plan_run_kept) then the backward from it (attn_plan_backward_kept):
 * y is attn_run's to the bit, softmax's lse is its float64 log-sum-exp, every gradient is
 * attn_plan_backward's to the bit, the workspace is smaller for softmax-type variants (no second
 * forward pass; the others add a scratch for the y they recompute), and the kept plan's misuses
 * are refused. Every buffer at its exact size. */
static void check_kept(attn_variant var, const attn_dims *dims, const attn_inputs *in, const attn_options *opt,
                       const float *streamed) {
    int n = dims->n, dv = dims->dv, softmax_type = attn_keeps_lse(var);
    unsigned saved = rng_state; /* dout from a stream of its own: the cases after keep their inputs */
    rng_state ^= 0x7f4a7c15u;
    float *dout = rand_array((size_t)n * dv);
    rng_state = saved;
    const char *detail = NULL;
    attn_plan full, kept;
    attn_status s = attn_plan_make(var, dims, opt, ATTN_WANT_GRADS, &full, &detail);
    CHECK(s == ATTN_OK, "%s n=%d grads plan: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    s = attn_plan_make(var, dims, opt, ATTN_WANT_KEPT, &kept, &detail);
    CHECK(s == ATTN_OK, "%s n=%d kept plan: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    if (s != ATTN_OK) return;
    /* the linear family and fixed recompute y into a scratch of n*dv floats */
    size_t scratch = softmax_type ? 0 : (size_t)n * dv * sizeof(float) + 16;
    CHECK(kept.workspace_bytes <= full.workspace_bytes + scratch, "%s n=%d causal=%d: the kept plan's workspace %zu > the grads plan's %zu + %zu",
          attn_variant_id(var), n, opt->causal, kept.workspace_bytes, full.workspace_bytes, scratch);
    if (softmax_type)
        CHECK(kept.workspace_bytes < full.workspace_bytes, "%s n=%d causal=%d: the kept plan's workspace %zu is not below the grads plan's %zu",
              attn_variant_id(var), n, opt->causal, kept.workspace_bytes, full.workspace_bytes);
    grad_set a, b;
    grads_alloc(dims, in, &a), grads_alloc(dims, in, &b);
    float *y_full = malloc((size_t)n * dv * sizeof(float)), *y_kept = malloc((size_t)n * dv * sizeof(float));
    /* what the kept pass keeps: lse [n], a recurrent variant's checkpoints, or nothing */
    float *lse = malloc(kept.kept_floats ? (size_t)kept.kept_floats * sizeof(float) : 1);
    CHECK(kept.kept_floats == (softmax_type ? n : attn_family_of(var) == FAMILY_recurrent ? (int)attn_recurrent_checkpoint_floats(n, dims->d, dv) : 0),
          "%s n=%d: kept_floats %d", attn_variant_id(var), n, kept.kept_floats);
    void *ws_full = malloc(full.workspace_bytes ? full.workspace_bytes : 1);
    void *ws_kept = malloc(kept.workspace_bytes ? kept.workspace_bytes : 1);
    s = attn_plan_backward(&full, in, dout, y_full, &a.g, ws_full, full.workspace_bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d backward: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    s = attn_plan_run_kept(&kept, in, y_kept, lse, ws_kept, kept.workspace_bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d run_kept: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    for (int i = 0; i < n * dv; i++)
        CHECK(y_kept[i] == streamed[i] || (y_kept[i] != y_kept[i] && streamed[i] != streamed[i]),
              "%s n=%d causal=%d: the kept pass's y[%d] = %.9g, attn_run's %.9g", attn_variant_id(var), n, opt->causal, i,
              y_kept[i], streamed[i]);
    if (var == ATTN_SOFTMAX)
        for (int i = 0; i < n; i++) {
            double want = ref_softmax_lse(n, dims->d, in->q, in->k, opt->causal, i);
            CHECK(fabs(lse[i] - want) <= 1e-5 + 1e-5 * fabs(want), "softmax n=%d d=%d causal=%d: lse[%d] = %.9g, float64 %.9g",
                  n, dims->d, opt->causal, i, lse[i], want);
        }
    s = attn_plan_backward_kept(&kept, in, dout, y_kept, lse, &b.g, ws_kept, kept.workspace_bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d backward_kept: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    for (int t = 0; t < a.no; t++)
        for (size_t i = 0; i < a.count[t]; i++)
            CHECK(memcmp(&a.owned[t][i], &b.owned[t][i], sizeof(float)) == 0,
                  "%s n=%d d=%d dv=%d causal=%d: gradient array %d [%zu] from the kept pass %.9g, attn_plan_backward's %.9g",
                  attn_variant_id(var), n, dims->d, dv, opt->causal, t, i, b.owned[t][i], a.owned[t][i]);
    /* misuse: a plan without ATTN_WANT_KEPT, a softmax-type variant's lse missing */
    CHECK(attn_plan_run_kept(&full, in, y_kept, lse, ws_full, full.workspace_bytes, &detail) == ATTN_ERR_SHAPE &&
              strstr(detail, "ATTN_WANT_KEPT"), "%s: run_kept on a grads plan: %s", attn_variant_id(var), detail);
    CHECK(attn_plan_backward(&kept, in, dout, y_kept, &b.g, ws_kept, kept.workspace_bytes, &detail) == ATTN_ERR_SHAPE,
          "%s: attn_plan_backward on a kept plan", attn_variant_id(var));
    s = attn_plan_backward_kept(&kept, in, dout, y_kept, NULL, &b.g, ws_kept, kept.workspace_bytes, &detail);
    CHECK(kept.kept_floats ? s == ATTN_ERR_SHAPE && strstr(detail, "kept") : s == ATTN_OK,
          "%s: backward_kept without kept: %s %s", attn_variant_id(var), attn_status_string(s), detail);
    s = attn_plan_run_kept(&kept, in, y_kept, NULL, ws_kept, kept.workspace_bytes, &detail);
    CHECK(kept.kept_floats ? s == ATTN_ERR_SHAPE && strstr(detail, "kept") : s == ATTN_OK,
          "%s: run_kept without kept: %s %s", attn_variant_id(var), attn_status_string(s), detail);
    CHECK(attn_plan_run_kept(&kept, in, y_kept, lse, ws_kept, kept.workspace_bytes - 16, &detail) ==
              (kept.workspace_bytes >= 16 ? ATTN_ERR_MEMORY : ATTN_OK), "%s: a short workspace", attn_variant_id(var));
    s = attn_plan_make(var, dims, opt, ATTN_WANT_KEPT | ATTN_WANT_WEIGHTS, &kept, &detail);
    CHECK(s == ATTN_ERR_UNSUPPORTED, "%s: kept with weights: %s", attn_variant_id(var), attn_status_string(s));
    grads_free(&a), grads_free(&b);
    free(dout), free(y_full), free(y_kept), free(lse), free(ws_full), free(ws_kept);
}

/* The recurrent family's state: attn_state's S (no normaliser: NULL is accepted) is the one a run
 * that wants y and the state gives, and that run's y is attn_run's, bit for bit. */
static void check_recurrent_state(attn_variant var, const attn_dims *dims, const attn_inputs *in,
                                  const attn_options *opt, const float *streamed) {
    int n = dims->n, d = dims->d, dv = dims->dv;
    int32_t width = 0;
    size_t bytes = 0;
    const char *detail = NULL;
    attn_status s = attn_state_size(var, dims, opt, &width, &bytes);
    CHECK(s == ATTN_OK && width == d, "%s state_size: %s, width %d", attn_variant_id(var), attn_status_string(s), width);
    float *alone = malloc((size_t)d * dv * sizeof(float)), *with_y = malloc((size_t)d * dv * sizeof(float));
    float *y = malloc((size_t)n * dv * sizeof(float));
    void *ws = malloc(bytes ? bytes : 1);
    s = attn_state(var, dims, in, opt, alone, NULL, ws, bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d state: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    free(ws);
    attn_plan plan;
    s = attn_plan_make(var, dims, opt, ATTN_WANT_STATE, &plan, &detail);
    CHECK(s == ATTN_OK, "%s n=%d state plan: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    ws = malloc(plan.workspace_bytes ? plan.workspace_bytes : 1);
    s = attn_plan_run(&plan, in, y, NULL, with_y, NULL, ws, plan.workspace_bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d run with state: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    CHECK(!memcmp(alone, with_y, (size_t)d * dv * sizeof(float)), "%s n=%d d=%d dv=%d: attn_state's S differs from a run's",
          attn_variant_id(var), n, d, dv);
    CHECK(!memcmp(y, streamed, (size_t)n * dv * sizeof(float)), "%s n=%d d=%d dv=%d: the run with state gives another y",
          attn_variant_id(var), n, d, dv);
    for (int i = 0; i < d * dv; i++) CHECK(isfinite(alone[i]), "%s n=%d: S[%d] = %g", attn_variant_id(var), n, i, alone[i]);
    free(ws), free(alone), free(with_y), free(y);
}

static void run_case(attn_variant var, int n, int d, int dv, int causal, int want_weights,
                     int pattern) {
    attn_dims dims = {.n = n, .d = d, .dv = dv, .h = 5, .L = n + 3, .rank = 3};
    if (var == ATTN_FACTORIZED_DENSE) dims.a = n + 1, dims.b = 2, dims.L = 2 * (n + 1);
    if (var == ATTN_MIXTURE) dims.a = n, dims.b = 1, dims.L = n;
    int L = dims.L;
    attn_options opt;
    attn_options_default(&opt);
    opt.causal = causal;
    opt.pattern = pattern;
    opt.tiling = (n & 1) ? ATTN_TILING_TILE : ATTN_TILING_KRONECKER;
    if (var == ATTN_MIXTURE) {
        opt.n_components = 3;
        opt.component[0] = ATTN_SOFTMAX, opt.alpha[0] = 0.5f;
        opt.component[1] = ATTN_DENSE1, opt.alpha[1] = 0.25f;
        opt.component[2] = ATTN_FACTORIZED_DENSE, opt.alpha[2] = 0.25f;
    }
    attn_inputs in = {0};
    float *arrays[IN_COUNT] = {0};
    int na = 0;
#define MAKE(name, count) in.name = arrays[na++] = rand_array((size_t)(count))
    MAKE(q, n * d); MAKE(k, n * d); MAKE(v, n * dv); MAKE(x, n * d);
    MAKE(w1, d * dims.h); MAKE(b1, dims.h); MAKE(w2, dims.h * L); MAKE(b2, L);
    MAKE(w, d * L); MAKE(r, L * L); MAKE(wa, d * dims.a); MAKE(ba, dims.a);
    MAKE(wb, d * dims.b); MAKE(bb, dims.b); MAKE(r1, L * dims.rank); MAKE(r2, L * dims.rank);
    MAKE(g, n * d); MAKE(beta, n); MAKE(s0, d * dv);
#undef MAKE
    int recurrent = attn_family_of(var) == FAMILY_recurrent;
    if (recurrent) { /* the contract's range: g <= 0, beta in [0, 1], unit keys */
        float *k = arrays[1], *g = arrays[na - 3], *beta = arrays[na - 2]; /* MAKE's order */
        for (int i = 0; i < n * d; i++) g[i] = -fabsf(g[i]);
        for (int t = 0; t < n; t++) {
            beta[t] = fabsf(beta[t]);
            double ss = 1e-30;
            for (int c = 0; c < d; c++) ss += (double)k[t * d + c] * k[t * d + c];
            for (int c = 0; c < d; c++) k[t * d + c] = (float)(k[t * d + c] / sqrt(ss));
        }
        if (want_weights) in.s0 = NULL; /* y = W v holds without s0 */
    }
    size_t ws_bytes = 0;
    attn_status s = attn_workspace_size(var, &dims, &opt, want_weights, &ws_bytes);
    CHECK(s == ATTN_OK, "%s workspace_size: %s", attn_variant_id(var), attn_status_string(s));
    void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
    float *out = malloc((size_t)n * dv * sizeof *out);
    float *weights = want_weights ? malloc((size_t)n * n * sizeof *weights) : NULL;
    const char *detail = NULL;
    s = attn_run(var, &dims, &in, &opt, out, weights, ws, ws_bytes, &detail);
    CHECK(s == ATTN_OK, "%s n=%d run: %s %s", attn_variant_id(var), n, attn_status_string(s), detail);
    for (int i = 0; i < n * dv; i++)
        CHECK(isfinite(out[i]), "%s n=%d d=%d dv=%d causal=%d: out[%d] = %g", attn_variant_id(var),
              n, d, dv, causal, i, out[i]);
    if (var == ATTN_SOFTMAX) {
        double *ref = malloc((size_t)n * dv * sizeof *ref);
        ref_softmax(n, d, dv, in.q, in.k, in.v, causal, ref);
        for (int i = 0; i < n * dv; i++)
            CHECK(fabs(out[i] - ref[i]) <= 1e-5 + 1e-4 * fabs(ref[i]),
                  "softmax n=%d d=%d dv=%d causal=%d weights=%d: out[%d,%d] = %.8g, ref %.8g",
                  n, d, dv, causal, want_weights, i / dv, i % dv, out[i], ref[i]);
        free(ref);
    }
    if (weights) {
        for (int i = 0; i < n; i++) {
            double sum = 0;
            for (int j = 0; j < n; j++) {
                float a = weights[(size_t)i * n + j];
                sum += a;
                CHECK(recurrent || a >= 0.0f, "%s n=%d: A[%d,%d] = %g < 0", attn_variant_id(var), n, i, j, a);
                if (causal && j > i)
                    CHECK(a == 0.0f, "%s n=%d causal: A[%d,%d] = %g", attn_variant_id(var), n, i, j, a);
            }
            CHECK(recurrent || fabs(sum - 1.0) < 1e-4, "%s n=%d causal=%d: row %d sums to %.8f",
                  attn_variant_id(var), n, causal, i, sum);
            for (int e = 0; e < dv; e++) {
                double y = 0;
                for (int j = 0; j < n; j++) y += (double)weights[(size_t)i * n + j] * in.v[j * dv + e];
                float o = out[i * dv + e];
                CHECK(fabs(o - y) <= 1e-5 + 1e-4 * fabs(y), "%s n=%d causal=%d: y[%d,%d] = %.8g, A*v = %.8g",
                      attn_variant_id(var), n, causal, i, e, o, y);
            }
        }
    }
    if (var == ATTN_LINEAR || var == ATTN_TAYLOR || var == ATTN_EFFICIENT) {
        int32_t width = 0;
        size_t state_ws_bytes = 0;
        s = attn_state_size(var, &dims, &opt, &width, &state_ws_bytes);
        CHECK(s == ATTN_OK && width == (var == ATTN_TAYLOR ? d + 1 : d), "%s state_size: %s, width %d",
              attn_variant_id(var), attn_status_string(s), width);
        float *state = malloc((size_t)width * dv * sizeof *state), *norm = malloc((size_t)width * sizeof *norm);
        void *state_ws = malloc(state_ws_bytes);
        s = attn_state(var, &dims, &in, &opt, state, norm, state_ws, state_ws_bytes, &detail);
        CHECK(s == ATTN_OK, "%s state: %s %s", attn_variant_id(var), attn_status_string(s), detail);
        /* the state's normaliser from its definition */
        for (int c = 0; c < width; c++) {
            double want = 0;
            for (int j = 0; j < n; j++) {
                if (var == ATTN_LINEAR) {
                    double t = in.k[j * d + c];
                    want += t > 0 ? t + 1 : exp(t);
                } else if (var == ATTN_TAYLOR) {
                    double ss = 0;
                    for (int e = 0; e < d; e++) ss += (double)in.k[j * d + e] * in.k[j * d + e];
                    want += c == 0 ? 1.0 : in.k[j * d + c - 1] / fmax(sqrt(ss), 1e-12);
                } else {
                    want += exp(in.k[j * d + c]);
                }
            }
            if (var == ATTN_EFFICIENT) want = log(want);
            CHECK(fabs(norm[c] - want) <= 1e-4 + 1e-4 * fabs(want), "%s n=%d: normalizer[%d] = %.8g, want %.8g",
                  attn_variant_id(var), n, c, norm[c], want);
        }
        free(state), free(norm), free(state_ws);
        CHECK(attn_state(ATTN_SOFTMAX, &dims, &in, &opt, out, out, ws, ws_bytes, &detail) == ATTN_ERR_UNSUPPORTED,
              "state of softmax accepted");
    }
    if (recurrent) check_recurrent_state(var, &dims, &in, &opt, out);
    if (weights) check_backward(var, &dims, &in, &opt, out, weights);
    else check_kept(var, &dims, &in, &opt, out);
    free(ws), free(out), free(weights);
    for (int i = 0; i < na; i++) free(arrays[i]);
}

static void test_errors(void) {
    attn_dims dims = {.n = 4, .d = 2, .dv = 2, .a = 3, .b = 3, .L = 10};
    attn_options opt;
    attn_options_default(&opt);
    const char *detail = NULL;
    CHECK(attn_check(ATTN_FACTORIZED_DENSE, &dims, &opt, &detail) == ATTN_ERR_VALUE, "a*b != L accepted");
    CHECK(strstr(detail, "a*b") != NULL, "detail '%s' does not name a*b", detail);
    dims.L = 2;
    CHECK(attn_check(ATTN_RANDOM, &dims, &opt, &detail) == ATTN_ERR_VALUE, "L < n accepted");
    CHECK(attn_check((attn_variant)99, &dims, &opt, &detail) == ATTN_ERR_UNKNOWN, "variant 99 accepted");
    opt.causal = 1, opt.pattern = ATTN_PATTERN_NEXT;
    CHECK(attn_check(ATTN_FIXED, &dims, &opt, &detail) == ATTN_ERR_UNSUPPORTED, "causal next accepted");
    attn_options_default(&opt);
    opt.n_components = 2, opt.component[0] = ATTN_SOFTMAX, opt.component[1] = ATTN_RANDOM;
    opt.alpha[0] = 0.5f, opt.alpha[1] = 0.4f;
    dims.L = 4;
    CHECK(attn_check(ATTN_MIXTURE, &dims, &opt, &detail) == ATTN_ERR_VALUE, "alpha summing to 0.9 accepted");
    dims.n = 1 << 30, dims.d = 64, dims.dv = 64;
    size_t bytes = 0;
    attn_options_default(&opt);
    attn_status s = attn_workspace_size(ATTN_SOFTMAX, &dims, &opt, 1, &bytes);
    CHECK(s == ATTN_OK || s == ATTN_ERR_MEMORY, "huge workspace query: %s", attn_status_string(s));
    float bad[3] = {1.0f, NAN, 2.0f};
    CHECK(attn_find_nonfinite(bad, 3) == 1, "NaN not found");
    bad[1] = INFINITY;
    CHECK(attn_find_nonfinite(bad, 3) == 1, "Inf not found");
    bad[1] = 0.0f;
    CHECK(attn_find_nonfinite(bad, 3) == -1, "finite array flagged");
    CHECK(strcmp(attn_status_string(ATTN_ERR_SHAPE), "shape") == 0, "status string");
    /* the checks follow variants.def: a dimension and an array each variant reads */
    attn_dims dense_dims = {.n = 2, .d = 2, .dv = 1, .h = 0};
    attn_options_default(&opt);
    CHECK(attn_check(ATTN_DENSE, &dense_dims, &opt, &detail) == ATTN_ERR_SHAPE && strstr(detail, "h must"),
          "dense with h = 0: %s", detail);
    CHECK(attn_check(ATTN_SOFTMAX, &dense_dims, &opt, &detail) == ATTN_OK, "softmax does not read h");
    float q[4] = {1, 2, 3, 4}, v[2] = {1, 2}, out[2];
    attn_inputs in = {.q = q, .v = v};
    size_t need = 0;
    CHECK(attn_workspace_size(ATTN_SOFTMAX, &dense_dims, &opt, 0, &need) == ATTN_OK, "workspace size");
    void *ws = malloc(need);
    CHECK(attn_run(ATTN_SOFTMAX, &dense_dims, &in, &opt, out, NULL, ws, need, &detail) == ATTN_ERR_SHAPE &&
              strcmp(detail, "k is missing") == 0, "softmax without k: %s", detail);
    free(ws);
    opt.n_components = 1, opt.component[0] = ATTN_LINEAR, opt.alpha[0] = 1.0f;
    CHECK(attn_check(ATTN_MIXTURE, &dense_dims, &opt, &detail) == ATTN_ERR_UNSUPPORTED, "linear mixed");
    opt.component[0] = 77;
    CHECK(attn_check(ATTN_MIXTURE, &dense_dims, &opt, &detail) == ATTN_ERR_UNKNOWN, "variant 77 mixed");
    CHECK(strstr(attn_metadata_json(), "\"factorized-random\"") != NULL, "metadata lacks a variant");
    /* the recurrent family: causal only; g and beta required where the rule reads them, s0 not */
    attn_dims rdims = {.n = 2, .d = 2, .dv = 1};
    attn_options_default(&opt);
    CHECK(attn_check(ATTN_GLA, &rdims, &opt, &detail) == ATTN_ERR_UNSUPPORTED && strstr(detail, "causal"),
          "gla with causal 0: %s", detail);
    opt.causal = 1;
    CHECK(attn_check(ATTN_GLA, &rdims, &opt, &detail) == ATTN_OK, "gla causal: %s", detail);
    CHECK(attn_workspace_size(ATTN_GATED_DELTANET, &rdims, &opt, 0, &need) == ATTN_OK, "gated-deltanet workspace size");
    ws = malloc(need);
    float rk[4] = {1, 0, 0, 1}, rg[4] = {0}, rbeta[2] = {1, 1};
    attn_inputs rin = {.q = q, .k = rk, .v = v, .g = rg};
    CHECK(attn_run(ATTN_GATED_DELTANET, &rdims, &rin, &opt, out, NULL, ws, need, &detail) == ATTN_ERR_SHAPE &&
              strcmp(detail, "beta is missing") == 0, "gated-deltanet without beta: %s", detail);
    rin.beta = rbeta;
    CHECK(attn_run(ATTN_GATED_DELTANET, &rdims, &rin, &opt, out, NULL, ws, need, &detail) == ATTN_OK, "gated-deltanet without s0: %s", detail);
    /* k = identity rows, beta 1, no decay: each token writes its value into its own key's row */
    CHECK(fabs(out[0] - 1 / sqrt(2.0)) < 1e-6 && fabs(out[1] - (3 * 1 + 4 * 2) / sqrt(2.0)) < 1e-5,
          "gated-deltanet y = %g %g, expected 1/sqrt(2) and 11/sqrt(2)", out[0], out[1]);
    free(ws);
}

/* Plans: checked once, reusable, refused when not made by attn_plan_make; sizes that would
 * overflow are ATTN_ERR_MEMORY, never a small workspace. */
static void test_plans(void) {
    attn_dims dims = {.n = 5, .d = 3, .dv = 2};
    attn_options opt;
    attn_options_default(&opt);
    attn_plan plan;
    const char *detail = NULL;
    CHECK(attn_plan_make(ATTN_LINEAR, &dims, &opt, ATTN_WANT_STATE, &plan, &detail) == ATTN_OK, "plan: %s", detail);
    CHECK(plan.state_width == 3 && attn_plan_state_width(&plan) == 3, "state width %d", plan.state_width);
    CHECK(attn_plan_size() == sizeof(attn_plan), "plan size");
    float *q = rand_array(15), *k = rand_array(15), *v = rand_array(10), out[10], state[6], norm[3];
    void *ws = malloc(plan.workspace_bytes + 1);
    attn_inputs in = {.q = q, .k = k, .v = v};
    CHECK(attn_plan_run(&plan, &in, out, NULL, state, norm, ws, plan.workspace_bytes, &detail) == ATTN_OK, "run: %s", detail);
    CHECK(attn_plan_run(&plan, &in, out, NULL, NULL, norm, ws, plan.workspace_bytes, &detail) == ATTN_ERR_SHAPE, "state NULL accepted");
    attn_plan forged = plan;
    forged.magic = 0;
    CHECK(attn_plan_run(&forged, &in, out, NULL, state, norm, ws, plan.workspace_bytes, &detail) == ATTN_ERR_SHAPE, "unmade plan ran");
    forged = plan;
    forged.dims.n = 1 << 20; /* sizes changed after the checks: refused, not run past the buffers */
    CHECK(attn_plan_run(&forged, &in, out, NULL, state, norm, ws, plan.workspace_bytes, &detail) == ATTN_ERR_SHAPE, "changed plan ran");
    CHECK(attn_plan_make(ATTN_SOFTMAX, &dims, &opt, ATTN_WANT_STATE, &plan, &detail) == ATTN_ERR_UNSUPPORTED, "softmax state");
    free(ws), free(q), free(k), free(v);
    /* dimensions near INT32_MAX: no overflow (UBSan would stop here), and no tiny workspace */
    static const int32_t huge[] = {ATTN_MAX_DIM, ATTN_MAX_DIM + 1, 0x7fffffff};
    for (int variant = 0; variant < ATTN_VARIANT_COUNT; variant++)
        for (int hi = 0; hi < 3; hi++)
            for (int which = 0; which < 3; which++) {
                attn_dims big = {.n = 7, .d = 4, .dv = 4, .h = 4, .L = 0, .a = 7, .b = 1, .rank = 2};
                if (which == 0) big.n = huge[hi], big.L = 0, big.a = 1, big.b = 1;
                if (which == 1) big.d = huge[hi], big.h = huge[hi], big.rank = huge[hi];
                if (which == 2) big.dv = huge[hi];
                attn_options o;
                attn_options_default(&o);
                o.n_components = 1, o.component[0] = ATTN_SOFTMAX, o.alpha[0] = 1.0f;
                size_t bytes = 0;
                attn_status s = attn_workspace_size((attn_variant)variant, &big, &o, 0, &bytes);
                /* n and dv are read by every variant, d by softmax (and the mixture's softmax) */
                int reads = which != 1 || variant == ATTN_SOFTMAX || variant == ATTN_MIXTURE;
                if (huge[hi] > ATTN_MAX_DIM && reads)
                    CHECK(s == ATTN_ERR_MEMORY, "%s with a dimension %d: %s, expected memory",
                          attn_variant_id((attn_variant)variant), huge[hi], attn_status_string(s));
                /* softmax-type variants stream over n: their workspace holds the packed v [n, dv] */
                if (s == ATTN_OK && which == 0 && attn_keeps_lse((attn_variant)variant))
                    CHECK(bytes >= (size_t)big.n * 4u, "%s with n = %d: ok with %zu bytes",
                          attn_variant_id((attn_variant)variant), big.n, bytes);
            }
}

/* Sizes whose workspace would pass 2^62 bytes in 64-bit arithmetic (two huge dimensions at once)
 * and models whose parameter count overflows int: ATTN_ERR_MEMORY, never an underestimate. */
static void test_saturation(void) {
    attn_dims big = {.n = ATTN_MAX_DIM, .d = ATTN_MAX_DIM, .dv = ATTN_MAX_DIM, .h = ATTN_MAX_DIM,
                     .L = ATTN_MAX_DIM, .a = 1 << 15, .b = 1 << 15, .rank = ATTN_MAX_DIM};
    attn_options opt;
    attn_options_default(&opt);
    opt.n_components = 1, opt.component[0] = ATTN_SOFTMAX, opt.alpha[0] = 1.0f;
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++) {
        size_t bytes = 0;
        if (v == ATTN_FIXED) continue; /* needs no workspace at all */
        opt.causal = attn_family_facts(attn_family_of((attn_variant)v))->causal_only;
        attn_status s = attn_workspace_size((attn_variant)v, &big, &opt, 0, &bytes);
        CHECK(s == ATTN_ERR_MEMORY, "%s with every dimension 2^30: %s, %zu bytes", attn_variant_id((attn_variant)v), attn_status_string(s), bytes);
        s = attn_backward_size((attn_variant)v, &big, &opt, &bytes);
        CHECK(s == ATTN_ERR_MEMORY, "%s backward with every dimension 2^30: %s", attn_variant_id((attn_variant)v), attn_status_string(s));
    }
    attn_model_config cfg;
    attn_model_config_default(&cfg);
    cfg.variant = ATTN_MIXTURE, cfg.vocab = 4, cfg.seq_len = 4, cfg.layers = 1, cfg.d_ff = 4;
    cfg.d_model = cfg.heads = 1 << 27;
    cfg.options.n_components = 6;
    for (int c = 0; c < 6; c++) cfg.options.component[c] = c, cfg.options.alpha[c] = 1.0f / 6;
    int32_t count = 0;
    const char *detail = NULL;
    CHECK(attn_model_param_count(&cfg, &count, &detail) == ATTN_ERR_MEMORY, "a model of 2^27 heads: %s", detail ? detail : "ok");
    attn_plan plan;
    attn_dims small = {.n = 4, .d = 2, .dv = 2};
    CHECK(attn_plan_make(ATTN_SOFTMAX, &small, &opt, 64, &plan, &detail) == ATTN_ERR_VALUE, "unknown plan flags accepted");
}

/* dense1 with d = 300 and n = 6: the matrix products pack A in chunks of 256 columns and handle a
 * partial block of rows; checked against float64 from the definition. */
static void test_long_contraction(void) {
    int n = 6, d = 300, dv = 3;
    attn_dims dims = {.n = n, .d = d, .dv = dv, .L = n};
    float *x = rand_array((size_t)n * d), *w = rand_array((size_t)d * n), *v = rand_array((size_t)n * dv);
    for (int i = 0; i < n * d; i++) x[i] *= 0.05f;
    float out[18];
    attn_options opt;
    attn_options_default(&opt);
    size_t need = 0;
    attn_workspace_size(ATTN_DENSE1, &dims, &opt, 0, &need);
    void *ws = malloc(need);
    attn_inputs in = {.x = x, .w = w, .v = v};
    const char *detail = NULL;
    CHECK(attn_run(ATTN_DENSE1, &dims, &in, &opt, out, NULL, ws, need, &detail) == ATTN_OK, "dense1 d=300: %s", detail);
    for (int i = 0; i < n; i++) {
        double row[6], mx = -INFINITY, sum = 0;
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += (double)x[i * d + c] * w[c * n + j];
            row[j] = s, mx = s > mx ? s : mx;
        }
        for (int j = 0; j < n; j++) sum += row[j] = exp(row[j] - mx);
        for (int e = 0; e < dv; e++) {
            double y = 0;
            for (int j = 0; j < n; j++) y += row[j] / sum * v[j * dv + e];
            CHECK(fabs(out[i * dv + e] - y) <= 1e-5 + 1e-4 * fabs(y), "dense1 d=300 y[%d][%d] = %g, expected %g", i, e, out[i * dv + e], y);
        }
    }
    free(ws), free(x), free(w), free(v);
}

int main(void) {
    static const int sizes[] = {1, 3, 4, 5, 17, 65, 130};
    int cases = 0;
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
            for (int causal = 0; causal < 2; causal++)
                for (int want_weights = 0; want_weights < 2; want_weights++) {
                    int n = sizes[si], d = sizes[(si + 2) % 7] % 20 + 1, dv = sizes[(si + 4) % 7] % 20 + 1;
                    if (!causal && attn_family_facts(attn_family_of((attn_variant)v))->causal_only) continue;
                    int pattern = v == ATTN_FIXED ? (int)(si % 7) : 0;
                    if (causal && v == ATTN_FIXED && (pattern == 2 || pattern == 4 || pattern == 6)) pattern = 3;
                    run_case((attn_variant)v, n, d, dv, causal, want_weights, pattern);
                    cases++;
                }
    test_errors();
    test_plans();
    test_saturation();
    test_long_contraction();
    printf("native C test: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
