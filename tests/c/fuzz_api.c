/* fuzz_api.c — libFuzzer harness over the public C API (attnlab.h), built by tests/c/fuzz.sh with
 * clang-19 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all, so any memory error,
 * overflow or other undefined behaviour stops it.
 *
 * An input is read as: variant (1 byte), flags (1 byte), eight dimensions (a selector byte and 4
 * bytes each: mostly small sizes, sometimes 0, negative, 2^30, INT32_MAX), the raw bytes of
 * attn_options (every field, garbage included), then the values the arrays are filled with.
 * A byte 'm' after the options turns the input into a small model over the same sizes and options
 * (the model API: check, table, size, init, forward, backward, AdamW). Every call must return a
 * status, never crash; a plan changed after attn_plan_make must be
 * refused; a plan that is accepted and small enough is run on arrays of exactly the sizes
 * variants.def gives, so an overrun is caught by ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/c/internal.h" /* the registry: attn_inputs_of, attn_dim */

typedef struct reader { const uint8_t *data; size_t size, at; } reader;
static uint8_t take8(reader *r) { return r->at < r->size ? r->data[r->at++] : 0; }
static uint32_t take32(reader *r) {
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) x = x << 8 | take8(r);
    return x;
}

static int32_t take_dim(reader *r) {
    uint8_t kind = take8(r);
    uint32_t raw = take32(r);
    switch (kind % 16) {
    case 0: return 0;
    case 1: return -(int32_t)(raw % 1000) - 1;
    case 2: return ATTN_MAX_DIM;
    case 3: return ATTN_MAX_DIM + 1;
    case 4: return INT32_MAX;
    case 5: return (int32_t)(raw & 0x7fffffff);
    default: return (int32_t)(raw % 70) + 1;
    }
}

/* Elements of a [rows, cols] array (attn_dim: L of 0 is n, DIM_ONE is 1), or -1 past `cap`. */
static int64_t shape_count(dim_id rows, dim_id cols, const attn_dims *dims, int64_t cap) {
    int64_t r = attn_dim(dims, rows), c = attn_dim(dims, cols);
    if (r < 1 || r > cap || c < 1 || c > cap || r * c > cap) return -1;
    return r * c;
}

#define MAX_FLOATS (1 << 16)

/* The model API on a configuration made of the same dimensions and options: every call returns a
 * status; a small enough model is initialised, run forward, backward and through an AdamW step on
 * tokens and targets from the input (some out of range, which must be refused). */
static void fuzz_model(reader *r, attn_variant variant, const attn_dims *dims, const attn_options *opt) {
    attn_model_config cfg;
    attn_model_config_default(&cfg);
    cfg.variant = (int32_t)variant;
    cfg.vocab = dims->rank, cfg.seq_len = dims->n, cfg.d_model = dims->d, cfg.heads = dims->h;
    cfg.layers = dims->a, cfg.d_ff = dims->dv, cfg.causal = opt->causal & 1;
    cfg.hidden = take8(r) & 1 ? dims->h : 0, cfg.rank = take8(r) & 1 ? dims->b : 0;
    cfg.options = *opt;
    cfg.seed = take32(r);
    /* half the time a fixed-pattern list, including counts, entries and variants the core must
     * refuse (the other half leaves it empty, so other variants' models get built) */
    if (take8(r) & 1) {
        int32_t count = (int32_t)(take8(r) % (ATTN_MODEL_MAX_PATTERNS + 2));
        int negative = take8(r) == 255; /* read apart: one expression's two reads have no set order */
        cfg.n_patterns = count - negative;
        for (int i = 0; i < ATTN_MODEL_MAX_PATTERNS; i++) cfg.patterns[i] = (int32_t)(take8(r) % (ATTN_PATTERN_COUNT + 1));
    }
    const char *detail = 0;
    int32_t count = 0;
    size_t bytes = 0, ws_bytes = 0;
    attn_model_check(&cfg, &detail);
    if (attn_model_param_count(&cfg, &count, &detail) != ATTN_OK) return;
    if (attn_model_size(&cfg, &bytes) != ATTN_OK || bytes > ((size_t)8 << 20)) return;
    int32_t batch = 1 + (take8(r) & 1);
    int32_t *frozen = calloc((size_t)count, sizeof *frozen);
    for (int32_t i = 0; i < count; i++) frozen[i] = take8(r) == 0;
    cfg.frozen = frozen;
    size_t open_bytes = 0;
    attn_model *model = 0;
    void *opened = 0;
    if (attn_model_open_size(&cfg, &open_bytes) == ATTN_OK) opened = aligned_alloc(16, open_bytes);
    if (!opened || attn_model_open(&cfg, opened, open_bytes, &model, &detail) != ATTN_OK ||
        attn_model_workspace_size(model, batch, &ws_bytes) != ATTN_OK || ws_bytes > ((size_t)32 << 20)) {
        free(frozen), free(opened);
        return;
    }
    float *memory = malloc(bytes);
    void *ws = malloc(ws_bytes ? ws_bytes : 1);
    size_t cells = (size_t)batch * (size_t)cfg.seq_len;
    int32_t *tokens = malloc(cells * sizeof *tokens), *targets = malloc(cells * sizeof *targets);
    float *logits = malloc(cells * (size_t)cfg.vocab * sizeof *logits);
    for (size_t i = 0; i < cells; i++) {
        tokens[i] = (int32_t)(take8(r) % (uint32_t)(cfg.vocab + 1)); /* vocab itself is out of range */
        targets[i] = (int32_t)(take8(r) % (uint32_t)(cfg.vocab + 2)) - 1;
    }
    if (attn_model_init(&cfg, memory, bytes, &detail) == ATTN_OK) {
        float loss = 0.0f;
        int32_t correct = 0, counted = 0;
        attn_model_forward(model, memory, bytes, tokens, batch, logits, ws, ws_bytes, &detail);
        if (attn_model_loss_backward(model, memory, bytes, tokens, targets, batch, &loss, &correct, &counted, ws,
                                     ws_bytes, &detail) == ATTN_OK)
            attn_model_adamw(model, memory, bytes, 1e-3f, 1, 0, &detail);
    }
    free(frozen), free(opened), free(memory), free(ws), free(tokens), free(targets), free(logits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size, 0};
    attn_variant variant = (attn_variant)(take8(&r) % (ATTN_VARIANT_COUNT + 2)); /* some unknown */
    int32_t flags = take8(&r) & (ATTN_WANT_WEIGHTS | ATTN_WANT_STATE | ATTN_WANT_GRADS);
    attn_dims dims;
    int32_t *dim = (int32_t *)(void *)&dims;
    for (size_t i = 0; i < sizeof dims / sizeof *dim; i++) dim[i] = take_dim(&r);
    attn_options opt;
    attn_options_default(&opt);
    for (size_t i = 0; i < sizeof opt && r.at < r.size; i++) {
        uint8_t keep = take8(&r); /* half the fields keep their defaults, so plans get accepted */
        if (keep & 1) ((uint8_t *)&opt)[i] = take8(&r);
    }
    opt.n_components = opt.n_components % (ATTN_MAX_COMPONENTS + 2);

    if (take8(&r) == 0x6d) { /* 'm': a model instead of one attention call */
        fuzz_model(&r, variant, &dims, &opt);
        return 0;
    }
    const char *detail = 0;
    size_t bytes = 0;
    int32_t width = 0;
    attn_check(variant, &dims, &opt, &detail);
    attn_workspace_size(variant, &dims, &opt, flags & 1, &bytes);
    attn_state_size(variant, &dims, &opt, &width, &bytes);
    attn_plan plan;
    if (attn_plan_make(variant, &dims, &opt, flags, &plan, &detail) != ATTN_OK) return 0;
    if (plan.workspace_bytes > ((size_t)64 << 20)) return 0;
    uint8_t tamper = take8(&r), where = take8(&r);
    if (tamper & 1) { /* a plan changed after it was made must be refused, never run */
        attn_plan changed = plan;
        ((uint8_t *)&changed)[where % offsetof(attn_plan, magic)] ^= (uint8_t)(tamper | 2);
        if (attn_plan_run(&changed, 0, 0, 0, 0, 0, 0, 0, &detail) != ATTN_ERR_SHAPE) __builtin_trap();
    }

    /* Arrays of exactly their size: the variant's, or every input for a mixture's components. */
    attn_inputs in;
    attn_grads grads;
    memset(&in, 0, sizeof in);
    memset(&grads, 0, sizeof grads);
    const float **slot = (const float **)(void *)&in;
    float **grad_slot = (float **)(void *)&grads;
    float *owned[64] = {0};
    int n_owned = 0, ok = 1;
    for (int v = 0; v < ATTN_VARIANT_COUNT && ok; v++) {
        int mixed = 0;
        for (int c = 0; c < opt.n_components && c < ATTN_MAX_COMPONENTS; c++) mixed |= opt.component[c] == v;
        if (v != (int)variant && !mixed) continue;
        input_list list = attn_inputs_of((attn_variant)v); /* the registry's inputs column */
        for (int i = 0; i < list.count && ok; i++) {
            int index = (int)list.at[i].input;
            if (slot[index]) continue;
            int64_t count = shape_count(list.at[i].rows, list.at[i].cols, &dims, MAX_FLOATS);
            if (count < 0 || n_owned >= 62) { ok = 0; break; }
            float *p = malloc((size_t)count * sizeof *p);
            for (int64_t i = 0; i < count; i++) p[i] = (float)(int8_t)take8(&r) / 32.0f;
            owned[n_owned++] = p;
            slot[index] = p;
            grad_slot[index] = owned[n_owned++] = malloc((size_t)count * sizeof(float));
        }
    }
    int64_t out_count = shape_count(DIM_n, DIM_dv, &dims, MAX_FLOATS);
    int64_t n = shape_count(DIM_n, DIM_ONE, &dims, MAX_FLOATS);
    if (ok && out_count > 0 && n > 0 && n * n <= MAX_FLOATS) {
        float *out = malloc((size_t)out_count * sizeof *out);
        float *weights = (flags & ATTN_WANT_WEIGHTS) ? malloc((size_t)(n * n) * sizeof *weights) : 0;
        float *state = 0, *norm = 0;
        if (flags & ATTN_WANT_STATE) {
            state = malloc((size_t)plan.state_width * (size_t)dims.dv * sizeof *state);
            norm = malloc((size_t)plan.state_width * sizeof *norm);
        }
        void *ws = malloc(plan.workspace_bytes ? plan.workspace_bytes : 1);
        attn_plan_run(&plan, &in, out, weights, state, norm, ws, plan.workspace_bytes, &detail);
        if (flags & ATTN_WANT_GRADS) { /* the backward pass, gradient arrays of exactly their size */
            float alpha_grad[ATTN_MAX_COMPONENTS];
            grads.alpha = alpha_grad;
            float *dout = malloc((size_t)out_count * sizeof *dout);
            for (int64_t i = 0; i < out_count; i++) dout[i] = (float)(int8_t)take8(&r) / 16.0f;
            attn_plan_backward(&plan, &in, dout, out, &grads, ws, plan.workspace_bytes, &detail);
            free(dout);
        }
        free(ws), free(out), free(weights), free(state), free(norm);
    }
    for (int i = 0; i < n_owned; i++) free(owned[i]);
    return 0;
}
