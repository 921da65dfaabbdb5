/* api.c — the public entry points: validation, workspace planning, dispatch and metadata. */
#include <stddef.h> /* offsetof */

#include "internal.h"

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

void attn_options_default(attn_options *opt) {
    *opt = (attn_options){0};
    opt->eps = 1e-6f;
    opt->tiling = ATTN_TILING_KRONECKER;
    opt->pattern = ATTN_PATTERN_CURRENT;
    opt->window = 3;
}

#define STR_(x) #x
#define STR(x) STR_(x)
#define INPUT_NAME(name) " " #name

/* Built at compile time from variants.def; the binding parses the space-separated fields. */
static const char metadata_json[] =
    "{\"version\":\"" ATTN_VERSION "\","
    "\"simd\":" STR(ATTN_SIMD) ","
    "\"fma\":" STR(ATTN_FMA) ","
    "\"inputFields\":\"" ATTN_INPUT_LIST(INPUT_NAME) "\","
    "\"dimFields\":\"n d dv h L a b rank\","
    "\"patterns\":\"current previous next left right first last\","
    "\"tilings\":\"kronecker tile\","
    "\"variants\":["
#define X(ENUM, id, label, family, dims, inputs, options, cost, summary, formula) \
    "{\"id\":\"" id "\",\"label\":\"" label "\",\"family\":\"" family "\",\"dims\":\"" dims   \
    "\",\"inputs\":\"" inputs "\",\"options\":\"" options "\",\"cost\":\"" cost             \
    "\",\"summary\":\"" summary "\",\"formula\":\"" formula "\"},"
#include "variants.def"
#undef X
    "null]}";

const char *attn_metadata_json(void) { return metadata_json; }

#if defined(__wasm__)
extern unsigned char __heap_base;
size_t attn_heap_base(void) { return (size_t)&__heap_base; }
#else
size_t attn_heap_base(void) { return 0; }
#endif

int64_t attn_find_nonfinite(const float *x, size_t count) {
    /* x - x is 0 for a finite x and NaN otherwise, and a NaN survives any sum: one vector pass,
     * then a scalar one only to locate the first culprit. */
    vf acc = vf_zero();
    size_t i = 0;
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

static int is_finite(float x) { return x - x == 0.0f; }

#define FAIL(status, text)           \
    do {                             \
        if (detail) *detail = text;  \
        return status;               \
    } while (0)

/* What variants.def says each variant reads: the checks below follow it, so a new variant's
 * dimensions and arrays are checked without touching this file. */
typedef struct variant_rules { const char *family, *dims, *inputs; } variant_rules;
static const variant_rules rules[ATTN_VARIANT_COUNT] = {
#define X(ENUM, id, label, family, dims, inputs, options, cost, summary, formula) {family, dims, inputs},
#include "variants.def"
#undef X
};

static int str_eq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}
/* The next space-separated token of *list, cut at ':' (for "name:shape"), into buf. */
static int next_token(const char **list, char *buf, size_t size) {
    const char *p = *list;
    while (*p == ' ') p++;
    if (!*p) return 0;
    size_t len = 0;
    while (*p && *p != ' ') {
        if (len + 1 < size) buf[len++] = *p == ':' ? '\0' : *p;
        p++;
    }
    buf[len < size ? len : size - 1] = '\0';
    *list = p;
    return 1;
}

static int family_is(attn_variant v, const char *family) { return str_eq(rules[v].family, family); }
/* A mixture mixes the logits of softmax-type variants other than itself. */
static int mixable(attn_variant v) {
    return (unsigned)v < ATTN_VARIANT_COUNT && v != ATTN_MIXTURE &&
           (family_is(v, "softmax") || family_is(v, "synthesizer"));
}

typedef struct dim_rule { const char *name; size_t offset; const char *message; } dim_rule;
#define DIM_RULE(f) {#f, offsetof(attn_dims, f), #f " must be a positive integer"}
static const dim_rule dim_rules[] = {DIM_RULE(d), DIM_RULE(dv), DIM_RULE(h), DIM_RULE(a), DIM_RULE(b), DIM_RULE(rank)};
#undef DIM_RULE

static attn_status check_dims(attn_variant v, const attn_dims *dims, const char **detail) {
    /* a mixture's own list is the union of its possible components'; they are checked one by one */
    const char *list = v == ATTN_MIXTURE ? "n dv" : rules[v].dims;
    char name[16];
    int reads_L = 0, reads_a = 0, reads_b = 0;
    while (next_token(&list, name, sizeof name)) {
        reads_L |= str_eq(name, "L"), reads_a |= str_eq(name, "a"), reads_b |= str_eq(name, "b");
        for (size_t i = 0; i < sizeof dim_rules / sizeof *dim_rules; i++)
            if (str_eq(name, dim_rules[i].name) &&
                *(const int32_t *)(const void *)((const char *)dims + dim_rules[i].offset) < 1)
                FAIL(ATTN_ERR_SHAPE, dim_rules[i].message);
    }
    int L = dims->L > 0 ? dims->L : dims->n;
    if (reads_L) {
        if (dims->L < 0) FAIL(ATTN_ERR_SHAPE, "L must be a positive integer");
        if (L < dims->n) FAIL(ATTN_ERR_VALUE, "L must be >= n");
    }
    if (reads_a && reads_b && (int64_t)dims->a * dims->b != L) FAIL(ATTN_ERR_VALUE, "a*b must equal L");
    return ATTN_OK;
}

attn_status attn_check(attn_variant v, const attn_dims *dims, const attn_options *opt,
                       const char **detail) {
    if ((unsigned)v >= ATTN_VARIANT_COUNT) FAIL(ATTN_ERR_UNKNOWN, "variant is not known");
    if (!dims || !opt) FAIL(ATTN_ERR_SHAPE, "dims and options are required");
    if (dims->n < 1) FAIL(ATTN_ERR_SHAPE, "n must be a positive integer");
    attn_status s = check_dims(v, dims, detail);
    if (s != ATTN_OK) return s;
    if (opt->has_scale && !is_finite(opt->scale)) FAIL(ATTN_ERR_VALUE, "scale must be a finite number");
    if (!is_finite(opt->eps) || opt->eps < 0.0f) FAIL(ATTN_ERR_VALUE, "eps must be a finite number >= 0");
    if (opt->tiling != ATTN_TILING_KRONECKER && opt->tiling != ATTN_TILING_TILE)
        FAIL(ATTN_ERR_VALUE, "tiling must be kronecker or tile");
    if ((unsigned)opt->pattern >= ATTN_PATTERN_COUNT) FAIL(ATTN_ERR_VALUE, "pattern is not known");
    if (v == ATTN_FIXED) {
        if (opt->window < 1) FAIL(ATTN_ERR_VALUE, "window must be a positive integer");
        if (opt->causal && (opt->pattern == ATTN_PATTERN_NEXT || opt->pattern == ATTN_PATTERN_RIGHT ||
                            opt->pattern == ATTN_PATTERN_LAST))
            FAIL(ATTN_ERR_UNSUPPORTED, "pattern looks ahead, so it cannot be causal");
    }
    if (v == ATTN_MIXTURE) {
        if (opt->n_components < 1 || opt->n_components > ATTN_MAX_COMPONENTS)
            FAIL(ATTN_ERR_VALUE, "components must list 1 to 8 variants");
        float sum = 0.0f;
        for (int c = 0; c < opt->n_components; c++) {
            attn_variant part = (attn_variant)opt->component[c];
            if (!mixable(part))
                FAIL(ATTN_ERR_UNKNOWN, "components may only be softmax, dense, dense1, random, "
                                       "factorized-dense or factorized-random");
            s = check_dims(part, dims, detail);
            if (s != ATTN_OK) return s;
            float a = opt->alpha[c];
            if (!is_finite(a)) FAIL(ATTN_ERR_VALUE, "alpha must hold finite numbers");
            if (!opt->alpha_is_logits && a < 0.0f) FAIL(ATTN_ERR_VALUE, "alpha must be non-negative");
            sum += a;
        }
        if (!opt->alpha_is_logits && (sum < 1.0f - 1e-5f || sum > 1.0f + 1e-5f))
            FAIL(ATTN_ERR_VALUE, "alpha must sum to 1 (within 1e-5)");
    }
    return ATTN_OK;
}

typedef struct input_rule { const char *name; size_t offset; const char *message; } input_rule;
#define INPUT_RULE(f) {#f, offsetof(attn_inputs, f), #f " is missing"},
static const input_rule input_rules[] = {ATTN_INPUT_LIST(INPUT_RULE)};
#undef INPUT_RULE

/* "x is missing" for the first array the variant reads (variants.def) that is NULL, else NULL;
 * a mixture reads v and what its components read. */
static const char *missing_input(attn_variant v, const attn_inputs *in, const attn_options *opt) {
    const char *list = v == ATTN_MIXTURE ? "v:n*dv" : rules[v].inputs;
    char name[16];
    while (next_token(&list, name, sizeof name))
        for (size_t i = 0; i < sizeof input_rules / sizeof *input_rules; i++)
            if (str_eq(name, input_rules[i].name) &&
                !*(const float *const *)(const void *)((const char *)in + input_rules[i].offset))
                return input_rules[i].message;
    for (int c = 0; v == ATTN_MIXTURE && c < opt->n_components; c++) {
        const char *missing = missing_input((attn_variant)opt->component[c], in, opt);
        if (missing) return missing;
    }
    return 0;
}

/* The dispatch groups: the linear family, fixed, mixture, and the other softmax-type variants. */
static attn_variant family_of(attn_variant v) {
    if (family_is(v, "linear")) return ATTN_LINEAR;
    if (family_is(v, "fixed")) return ATTN_FIXED;
    return v == ATTN_MIXTURE ? ATTN_MIXTURE : ATTN_SOFTMAX;
}

/* Lays out (measuring) or runs the variant over the workspace. dims has L resolved. */
static void plan(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                 const attn_options *opt, float *out, float *weights, arena *ws) {
    switch (family_of(v)) {
    case ATTN_LINEAR: attn_linear_family(v, dims, in, opt, out, weights, ws); break;
    case ATTN_FIXED:
        if (!arena_measuring(ws)) attn_fixed(dims, in, opt, out, weights);
        break;
    case ATTN_MIXTURE: {
        logit_source parts[ATTN_MAX_COMPONENTS], src;
        float alpha[ATTN_MAX_COMPONENTS];
        int count = opt->n_components;
        for (int c = 0; c < count; c++) alpha[c] = opt->alpha[c];
        if (opt->alpha_is_logits) attn_softmax_row(alpha, count);
        attn_prepare_mixture(dims, in, opt, alpha, ws, parts, &src);
        attn_softmax_attend(&src, dims, in->v, opt->causal, out, weights, ws);
        break;
    }
    default: {
        logit_source src;
        attn_prepare_logits(v, dims, in, opt, ws, &src);
        attn_softmax_attend(&src, dims, in->v, opt->causal, out, weights, ws);
        break;
    }
    }
}

static attn_dims resolve_dims(const attn_dims *dims) {
    attn_dims r = *dims;
    if (r.L <= 0) r.L = r.n;
    return r;
}

/* What a measuring plan took, rounded to 16 bytes, or ATTN_ERR_MEMORY past half the address space. */
static attn_status measured_bytes(const arena *measure, size_t *bytes) {
    uint64_t total = (measure->used + 15u) & ~(uint64_t)15u;
    if (total > (uint64_t)(SIZE_MAX / 2)) return ATTN_ERR_MEMORY;
    *bytes = (size_t)total;
    return ATTN_OK;
}

attn_status attn_workspace_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                                int want_weights, size_t *bytes) {
    attn_status s = attn_check(v, dims, opt, 0);
    if (s != ATTN_OK) return s;
    attn_dims rd = resolve_dims(dims);
    attn_inputs none = {0};
    float weights_marker = 0.0f; /* non-NULL so the plan counts what weights need; never written */
    arena measure = {0, 0, 1};
    plan(v, &rd, &none, opt, 0, want_weights ? &weights_marker : 0, &measure);
    return measured_bytes(&measure, bytes);
}

attn_status attn_run(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                     const attn_options *opt, float *out, float *weights, void *workspace,
                     size_t ws_bytes, const char **detail) {
    attn_status s = attn_check(v, dims, opt, detail);
    if (s != ATTN_OK) return s;
    size_t need;
    s = attn_workspace_size(v, dims, opt, weights != 0, &need);
    if (s != ATTN_OK) FAIL(s, "the problem does not fit in the address space");
    if (ws_bytes < need || (need && !workspace)) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_workspace_size");
    if (!in || !out) FAIL(ATTN_ERR_SHAPE, "inputs and out are required");
    const char *missing = missing_input(v, in, opt);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    attn_dims rd = resolve_dims(dims);
    arena ws = {(unsigned char *)workspace, 0, 0};
    plan(v, &rd, in, opt, out, weights, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}

static int is_linear_family(attn_variant v) { return family_of(v) == ATTN_LINEAR; }

attn_status attn_state_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                            int32_t *width, size_t *ws_bytes) {
    attn_status s = attn_check(v, dims, opt, 0);
    if (s != ATTN_OK) return s;
    if (!is_linear_family(v)) return ATTN_ERR_UNSUPPORTED;
    arena measure = {0, 0, 1};
    attn_linear_state(v, dims, 0, 0, 0, &measure);
    *width = attn_state_width(v, dims->d);
    return measured_bytes(&measure, ws_bytes);
}

attn_status attn_state(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                       const attn_options *opt, float *state, float *normalizer, void *workspace,
                       size_t ws_bytes, const char **detail) {
    attn_status s = attn_check(v, dims, opt, detail);
    if (s != ATTN_OK) return s;
    if (!is_linear_family(v)) FAIL(ATTN_ERR_UNSUPPORTED, "only linear, efficient and taylor keep a state");
    int32_t width;
    size_t need;
    s = attn_state_size(v, dims, opt, &width, &need);
    if (s != ATTN_OK) FAIL(s, "the problem does not fit in the address space");
    if (ws_bytes < need || !workspace) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_state_size");
    if (!in || !state || !normalizer) FAIL(ATTN_ERR_SHAPE, "inputs, state and normalizer are required");
    const char *missing = missing_input(v, in, opt);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    arena ws = {(unsigned char *)workspace, 0, 0};
    attn_linear_state(v, dims, in, state, normalizer, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}
