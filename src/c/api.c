/* api.c — the public entry points: plans (check once, measure once), runs, and the one-call
 * conveniences over them. The checks themselves are registry.c's; the kernels are the families'.
 */
#include "internal.h"

#define PLAN_MAGIC 0x6174706cu /* "atpl" */

/* FNV-1a over the plan's fields before `magic`: a plan changed after attn_plan_make (its sizes no
 * longer the ones checked) is refused instead of run. */
static uint32_t plan_seal(const attn_plan *plan) {
    const unsigned char *p = (const unsigned char *)plan;
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < offsetof(attn_plan, magic); i++) h = (h ^ p[i]) * 0x01000193u;
    return PLAN_MAGIC ^ h;
}
/* Internal plan flag: the state alone, no output (attn_state). */
#define WANT_STATE_ONLY 0x100

/* Plans made so far (attn_plans_made). Plans are made on the calling thread, never by the pool's
 * workers, so a plain counter is exact. */
static uint32_t plans_made;

uint32_t attn_plans_made(void) { return plans_made; }

const char *attn_status_string(attn_status status) {
    switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_SHAPE: return "shape";
    case ATTN_ERR_VALUE: return "value";
    case ATTN_ERR_UNKNOWN: return "unknown";
    case ATTN_ERR_UNSUPPORTED: return "unsupported";
    case ATTN_ERR_MEMORY: return "memory";
    }
    return "invalid status";
}

#if defined(__wasm__)
extern unsigned char __heap_base;
size_t attn_heap_base(void) { return (size_t)&__heap_base; }
#else
size_t attn_heap_base(void) { return 0; }
#endif

int64_t attn_find_nonfinite(const float *x, size_t count) {
    /* x - x is 0 for a finite x and NaN otherwise, and a NaN survives any sum: one vector pass,
     * then a scalar one only to locate the first culprit. */
    vf acc = vf_zero(), acc1 = vf_zero(), acc2 = vf_zero(), acc3 = vf_zero();
    size_t i = 0;
    /* four chains: one add's latency per vector was the bound (0.7 ms for q, k, v and y at
     * n = 16384, d = dv = 64); 0 stays exactly 0 in any grouping and a NaN survives it */
    for (; i + 4 * VW <= count; i += 4 * VW) {
        vf v0 = vf_load(x + i), v1 = vf_load(x + i + VW), v2 = vf_load(x + i + 2 * VW), v3 = vf_load(x + i + 3 * VW);
        acc = vf_add(acc, vf_sub(v0, v0)), acc1 = vf_add(acc1, vf_sub(v1, v1));
        acc2 = vf_add(acc2, vf_sub(v2, v2)), acc3 = vf_add(acc3, vf_sub(v3, v3));
    }
    acc = vf_add(vf_add(acc, acc1), vf_add(acc2, acc3));
    for (; i + VW <= count; i += VW) {
        vf v = vf_load(x + i);
        acc = vf_add(acc, vf_sub(v, v));
    }
    float tail = 0.0f;
    for (; i < count; i++) tail += x[i] - x[i];
    if (vf_hsum(acc) + tail == 0.0f) return -1;
    for (i = 0; i < count; i++)
        if (!(x[i] - x[i] == 0.0f)) return (int64_t)i;
    return -1;
}

/* Lays out (measuring) or runs the backward pass of a plan: with its own forward pass (kept NULL,
 * out receives y), or from a kept forward pass (attn_plan_run_kept's y and lse; out unused). The
 * linear family and fixed keep nothing: from a kept pass they run their whole backward, their y
 * going to a scratch carved here, before their own buffers, alike when measuring and running. */
static void backward(const attn_plan *plan, const attn_inputs *in, const float *dout, float *out,
                     const attn_kept *kept, const attn_grads *grads, arena *ws) {
    attn_variant v = plan->variant;
    if (kept && !attn_keeps_lse(v)) out = arena_floats(ws, (uint64_t)plan->dims.n * (uint64_t)plan->dims.dv);
    switch (attn_family_of(v)) {
    case FAMILY_softmax:
    case FAMILY_synthesizer:
        attn_softmax_backward(v, &plan->dims, in, &plan->options, dout, out, kept, grads, ws);
        return;
    case FAMILY_linear:
        attn_linear_backward(v, &plan->dims, in, &plan->options, dout, out, !kept, grads, ws);
        return;
    case FAMILY_fixed:
        if (!arena_measuring(ws)) attn_fixed_backward(&plan->dims, in, &plan->options, dout, out, grads);
        return;
    case FAMILY_recurrent:
        attn_recurrent_family_backward(v, &plan->dims, in, &plan->options, dout, out, kept != 0,
                                       kept ? kept->checkpoints : 0, grads, ws);
        return;
    case FAMILY_COUNT:
        return;
    }
}

/* Lays out (measuring) or runs the forward pass of a plan over the workspace; kept, when not NULL,
 * receives what a kept pass keeps (plan->kept_floats: softmax-type variants' log-sum-exp of each
 * row, the recurrent family's checkpoints). state, when not NULL, may
 * receive the state after the last token, if the family's forward pass ends with it: returns 1
 * when it did (the recurrent family: its scan leaves it; a second scan for it would double the
 * call's time), 0 when the state needs its own pass. */
static int forward(const attn_plan *plan, const attn_inputs *in, float *out, float *weights,
                   float *kept, float *state, arena *ws) {
    attn_variant v = plan->variant;
    const attn_dims *dims = &plan->dims;
    const attn_options *opt = &plan->options;
    switch (attn_family_of(v)) {
    case FAMILY_softmax:
    case FAMILY_synthesizer: { /* softmax-type: a logit source under the streaming softmax */
        logit_sources sources;
        const logit_source *src = attn_prepare_logits(v, dims, in, opt, ws, &sources, 0);
        attn_softmax_attend(src, dims, in->v, opt->causal, out, weights, kept, ws);
        return 0;
    }
    case FAMILY_linear:
        attn_linear_family(v, dims, in, opt, out, weights, ws);
        return 0;
    case FAMILY_fixed:
        if (!arena_measuring(ws)) attn_fixed(dims, in, opt, out, weights);
        return 0;
    case FAMILY_recurrent:
        attn_recurrent_family(v, dims, in, opt, out, weights, state, kept, ws);
        return state != 0;
    case FAMILY_COUNT:
        return 0;
    }
    return 0;
}

/* The floats a kept forward pass keeps for the backward beyond y: softmax-type variants each row's
 * log-sum-exp; the recurrent family the state every ceil(sqrt(n)) tokens (its backward then runs
 * no forward pass of its own); the linear family and fixed nothing (they recompute). */
static uint64_t kept_floats(attn_variant v, const attn_dims *dims) {
    switch (attn_family_of(v)) {
    case FAMILY_softmax:
    case FAMILY_synthesizer: return (uint64_t)dims->n;
    case FAMILY_recurrent: return attn_recurrent_checkpoint_floats(dims->n, dims->d, dims->dv);
    case FAMILY_linear:
    case FAMILY_fixed:
    case FAMILY_COUNT:
        return 0;
    }
    return 0;
}

/* F, the rows of the state a family keeps: the linear family's features; the recurrent family's
 * key width d. */
static int32_t state_rows(attn_variant v, int d) {
    switch (attn_family_of(v)) {
    case FAMILY_linear: return attn_state_width(v, d);
    case FAMILY_recurrent: return d;
    case FAMILY_softmax:
    case FAMILY_synthesizer:
    case FAMILY_fixed: /* keep no state */
    case FAMILY_COUNT:
        return 0;
    }
    return 0;
}

/* Lays out (measuring) or runs the state pass of a plan (ATTN_WANT_STATE): the state after the
 * last token, alone. normalizer: the linear family's z (the recurrent family keeps none). */
static void state_pass(const attn_plan *plan, const attn_inputs *in, float *state, float *normalizer, arena *ws) {
    attn_variant v = plan->variant;
    switch (attn_family_of(v)) {
    case FAMILY_linear:
        attn_linear_state(v, &plan->dims, in, state, normalizer, ws);
        return;
    case FAMILY_recurrent:
        attn_recurrent_state(v, &plan->dims, in, &plan->options, state, ws);
        return;
    case FAMILY_softmax:
    case FAMILY_synthesizer:
    case FAMILY_fixed: /* keep no state: attn_plan_make refuses ATTN_WANT_STATE */
    case FAMILY_COUNT:
        return;
    }
}

attn_status attn_plan_make(attn_variant v, const attn_dims *dims, const attn_options *opt,
                           int32_t flags, attn_plan *plan, const char **detail) {
    if (!plan) FAIL(ATTN_ERR_SHAPE, "plan is required");
    *plan = (attn_plan){0};
    if (flags & ~(int32_t)(ATTN_WANT_WEIGHTS | ATTN_WANT_STATE | ATTN_WANT_GRADS | ATTN_WANT_KEPT | WANT_STATE_ONLY))
        FAIL(ATTN_ERR_VALUE, "flags holds bits that are not ATTN_WANT_*");
    attn_status s = attn_validate(v, dims, opt, detail);
    if (s != ATTN_OK) return s;
    if ((flags & ATTN_WANT_STATE) && !attn_family_facts(attn_family_of(v))->keeps_state)
        FAIL(ATTN_ERR_UNSUPPORTED, "only the linear and recurrent families keep a state");
    /* a kept forward pass streams (the weights path computes no lse) and returns y and lse alone */
    if ((flags & ATTN_WANT_KEPT) && (flags & (ATTN_WANT_WEIGHTS | ATTN_WANT_STATE)))
        FAIL(ATTN_ERR_UNSUPPORTED, "a kept forward pass returns y and lse alone: weights and state need a run of their own");
    plan->variant = v;
    plan->dims = *dims;
    if (plan->dims.L <= 0) plan->dims.L = plan->dims.n;
    plan->options = *opt;
    plan->flags = flags;
    plan->state_width = (flags & ATTN_WANT_STATE) ? state_rows(v, dims->d) : 0;
    if (flags & ATTN_WANT_KEPT) {
        uint64_t floats = kept_floats(v, &plan->dims);
        if (floats > (uint64_t)INT32_MAX) FAIL(ATTN_ERR_MEMORY, "what a kept forward pass keeps does not fit in the address space");
        plan->kept_floats = (int32_t)floats;
    }
    plan->threads = attn_thread_count();

    /* The forward pass and the state pass run one after the other in the same workspace. */
    uint64_t need = 0;
    if (!(flags & WANT_STATE_ONLY)) {
        float weights_marker = 0.0f; /* non-NULL so the plan counts what weights need; never written */
        attn_inputs none = {0};
        arena measure = {0, 0, 1, plan->threads};
        forward(plan, &none, 0, (flags & ATTN_WANT_WEIGHTS) ? &weights_marker : 0, 0, 0, &measure);
        need = measure.used;
    }
    if (flags & ATTN_WANT_GRADS) {
        attn_inputs none = {0};
        arena measure = {0, 0, 1, plan->threads};
        backward(plan, &none, 0, 0, 0, 0, &measure);
        need = measure.used > need ? measure.used : need;
    }
    if (flags & ATTN_WANT_KEPT) { /* the forward pass above; the backward from it, smaller */
        attn_inputs none = {0};
        attn_kept kept = {0, 0, 0};
        arena measure = {0, 0, 1, plan->threads};
        backward(plan, &none, 0, 0, &kept, 0, &measure);
        need = measure.used > need ? measure.used : need;
    }
    if (flags & ATTN_WANT_STATE) {
        arena measure = {0, 0, 1, plan->threads};
        attn_inputs none = {0};
        state_pass(plan, &none, 0, 0, &measure);
        need = measure.used > need ? measure.used : need;
    }
    /* the arena saturates at ARENA_LIMIT: a saturated size is a lower bound, never a plan */
    if (need >= ARENA_LIMIT) FAIL(ATTN_ERR_MEMORY, "the problem does not fit in the address space");
    need = (need + 15u) & ~(uint64_t)15u;
    if (need > (uint64_t)(SIZE_MAX / 2)) FAIL(ATTN_ERR_MEMORY, "the problem does not fit in the address space");
    plan->workspace_bytes = (size_t)need;
    plan->magic = plan_seal(plan);
    plans_made++;
    if (detail) *detail = "";
    return ATTN_OK;
}

attn_status attn_plan_set_alpha_logits(attn_plan *plan, const float *logits, const char **detail) {
    if (!plan || plan->magic != plan_seal(plan))
        FAIL(ATTN_ERR_SHAPE, "plan was not made by attn_plan_make, or was changed since");
    if (!attn_is_composite(plan->variant) || !plan->options.alpha_is_logits)
        FAIL(ATTN_ERR_SHAPE, "the plan is not a mixture's with weights as logits");
    attn_options opt = plan->options; /* attn_plan_make's check of the weights, on the new ones */
    for (int c = 0; c < opt.n_components; c++) opt.alpha[c] = logits[c];
    attn_status st = attn_check_weights(&opt, detail);
    if (st != ATTN_OK) return st; /* the plan stays as it was */
    plan->options = opt;
    plan->magic = plan_seal(plan);
    return ATTN_OK;
}

attn_status attn_plan_run(const attn_plan *plan, const attn_inputs *in, float *out, float *weights,
                          float *state, float *normalizer, void *workspace, size_t ws_bytes,
                          const char **detail) {
    if (!plan || plan->magic != plan_seal(plan))
        FAIL(ATTN_ERR_SHAPE, "plan was not made by attn_plan_make, or was changed since");
    int want_out = !(plan->flags & WANT_STATE_ONLY);
    int want_weights = want_out && (plan->flags & ATTN_WANT_WEIGHTS);
    int want_state = plan->flags & ATTN_WANT_STATE;
    if (ws_bytes < plan->workspace_bytes || (plan->workspace_bytes && !workspace))
        FAIL(ATTN_ERR_MEMORY, "workspace is smaller than the plan's workspace_bytes");
    if (!in || (want_out && !out)) FAIL(ATTN_ERR_SHAPE, "inputs and out are required");
    if (want_weights && !weights) FAIL(ATTN_ERR_SHAPE, "the plan wants weights, and weights is NULL");
    int normalizes = attn_family_facts(attn_family_of(plan->variant))->keeps_normalizer;
    if (want_state && (!state || (normalizes && !normalizer)))
        FAIL(ATTN_ERR_SHAPE, normalizes ? "the plan wants the state: state and normalizer are required"
                                        : "the plan wants the state: state is required");
    const char *missing = attn_missing_input(plan->variant, in, &plan->options);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    int state_written = 0;
    if (want_out) {
        arena ws = {(unsigned char *)workspace, 0, 0, plan->threads};
        state_written = forward(plan, in, out, want_weights ? weights : 0, 0, want_state ? state : 0, &ws);
    }
    if (want_state && !state_written) {
        arena ws = {(unsigned char *)workspace, 0, 0, plan->threads};
        state_pass(plan, in, state, normalizer, &ws);
    }
    if (detail) *detail = "";
    return ATTN_OK;
}

/* The arrays of the inputs v reads must have gradient arrays too (and alpha for a mixture). */
static const char *missing_grad(attn_variant v, const attn_grads *grads, const attn_options *opt) {
    attn_inputs as_inputs;
    const float **dst = (const float **)(void *)&as_inputs;
    float *const *src = (float *const *)(const void *)grads;
    for (size_t i = 0; i < sizeof as_inputs / sizeof *dst; i++) dst[i] = src[i];
    const char *missing = attn_missing_input(v, &as_inputs, opt);
    if (missing) return "grads: an array of the inputs the variant reads is missing";
    if (attn_is_composite(v) && !grads->alpha) return "grads: alpha is missing";
    return 0;
}

attn_status attn_plan_backward(const attn_plan *plan, const attn_inputs *in, const float *dout,
                               float *out, const attn_grads *grads, void *workspace,
                               size_t ws_bytes, const char **detail) {
    if (!plan || plan->magic != plan_seal(plan))
        FAIL(ATTN_ERR_SHAPE, "plan was not made by attn_plan_make, or was changed since");
    if (!(plan->flags & ATTN_WANT_GRADS)) FAIL(ATTN_ERR_SHAPE, "the plan was made without ATTN_WANT_GRADS");
    if (ws_bytes < plan->workspace_bytes || (plan->workspace_bytes && !workspace))
        FAIL(ATTN_ERR_MEMORY, "workspace is smaller than the plan's workspace_bytes");
    if (!in || !dout || !out || !grads) FAIL(ATTN_ERR_SHAPE, "inputs, dout, out and grads are required");
    const char *missing = attn_missing_input(plan->variant, in, &plan->options);
    if (!missing) missing = missing_grad(plan->variant, grads, &plan->options);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    arena ws = {(unsigned char *)workspace, 0, 0, plan->threads};
    backward(plan, in, dout, out, 0, grads, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}

/* What both kept entry points check first: a sealed plan made with ATTN_WANT_KEPT, and its workspace. */
static attn_status check_kept_plan(const attn_plan *plan, const void *workspace, size_t ws_bytes,
                                   const char **detail) {
    if (!plan || plan->magic != plan_seal(plan))
        FAIL(ATTN_ERR_SHAPE, "plan was not made by attn_plan_make, or was changed since");
    if (!(plan->flags & ATTN_WANT_KEPT)) FAIL(ATTN_ERR_SHAPE, "the plan was made without ATTN_WANT_KEPT");
    if (ws_bytes < plan->workspace_bytes || (plan->workspace_bytes && !workspace))
        FAIL(ATTN_ERR_MEMORY, "workspace is smaller than the plan's workspace_bytes");
    return ATTN_OK;
}

attn_status attn_plan_run_kept(const attn_plan *plan, const attn_inputs *in, float *out, float *kept,
                               void *workspace, size_t ws_bytes, const char **detail) {
    attn_status s = check_kept_plan(plan, workspace, ws_bytes, detail);
    if (s != ATTN_OK) return s;
    if (!in || !out) FAIL(ATTN_ERR_SHAPE, "inputs and out are required");
    if (plan->kept_floats && !kept)
        FAIL(ATTN_ERR_SHAPE, "kept is required: plan->kept_floats floats (a softmax-type variant's log-sum-exp of each row, a recurrent variant's checkpoints)");
    const char *missing = attn_missing_input(plan->variant, in, &plan->options);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    arena ws = {(unsigned char *)workspace, 0, 0, plan->threads};
    forward(plan, in, out, 0, plan->kept_floats ? kept : 0, 0, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}

attn_status attn_plan_backward_kept(const attn_plan *plan, const attn_inputs *in, const float *dout,
                                    const float *out, const float *kept, const attn_grads *grads,
                                    void *workspace, size_t ws_bytes, const char **detail) {
    attn_status s = check_kept_plan(plan, workspace, ws_bytes, detail);
    if (s != ATTN_OK) return s;
    if (!in || !dout || !grads) FAIL(ATTN_ERR_SHAPE, "inputs, dout and grads are required");
    if (attn_keeps_lse(plan->variant) && (!out || !kept))
        FAIL(ATTN_ERR_SHAPE, "out and kept are required: a softmax-type variant's backward reads the kept y and each row's log-sum-exp");
    if (plan->kept_floats && !kept)
        FAIL(ATTN_ERR_SHAPE, "kept is required: a recurrent variant's backward starts from the kept checkpoints");
    const char *missing = attn_missing_input(plan->variant, in, &plan->options);
    if (!missing) missing = missing_grad(plan->variant, grads, &plan->options);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    arena ws = {(unsigned char *)workspace, 0, 0, plan->threads};
    int lse = attn_keeps_lse(plan->variant);
    attn_kept from = {out, lse ? kept : 0, lse ? 0 : kept};
    backward(plan, in, dout, 0, &from, grads, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}

attn_status attn_backward_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                               size_t *bytes) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, ATTN_WANT_GRADS, &plan, 0);
    if (s == ATTN_OK) *bytes = plan.workspace_bytes;
    return s;
}

attn_status attn_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, const float *dout, float *out,
                          const attn_grads *grads, void *workspace, size_t ws_bytes,
                          const char **detail) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, ATTN_WANT_GRADS, &plan, detail);
    if (s != ATTN_OK) return s;
    return attn_plan_backward(&plan, in, dout, out, grads, workspace, ws_bytes, detail);
}

size_t attn_plan_size(void) { return sizeof(attn_plan); }
size_t attn_plan_workspace_bytes(const attn_plan *plan) { return plan->workspace_bytes; }
int32_t attn_plan_state_width(const attn_plan *plan) { return plan->state_width; }
int32_t attn_plan_kept_floats(const attn_plan *plan) { return plan->kept_floats; }

/* ---- one-call conveniences ---- */

attn_status attn_check(attn_variant v, const attn_dims *dims, const attn_options *opt,
                       const char **detail) {
    return attn_validate(v, dims, opt, detail);
}

attn_status attn_workspace_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                                int want_weights, size_t *bytes) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, want_weights ? ATTN_WANT_WEIGHTS : 0, &plan, 0);
    if (s == ATTN_OK) *bytes = plan.workspace_bytes;
    return s;
}

attn_status attn_run(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                     const attn_options *opt, float *out, float *weights, void *workspace,
                     size_t ws_bytes, const char **detail) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, weights ? ATTN_WANT_WEIGHTS : 0, &plan, detail);
    if (s != ATTN_OK) return s;
    return attn_plan_run(&plan, in, out, weights, 0, 0, workspace, ws_bytes, detail);
}

attn_status attn_state_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                            int32_t *width, size_t *ws_bytes) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, ATTN_WANT_STATE | WANT_STATE_ONLY, &plan, 0);
    if (s != ATTN_OK) return s;
    *width = plan.state_width;
    *ws_bytes = plan.workspace_bytes;
    return ATTN_OK;
}

attn_status attn_state(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                       const attn_options *opt, float *state, float *normalizer, void *workspace,
                       size_t ws_bytes, const char **detail) {
    attn_plan plan;
    attn_status s = attn_plan_make(v, dims, opt, ATTN_WANT_STATE | WANT_STATE_ONLY, &plan, detail);
    if (s != ATTN_OK) return s;
    return attn_plan_run(&plan, in, 0, 0, state, normalizer, workspace, ws_bytes, detail);
}
