/* api.c — the public entry points: validation, workspace planning, dispatch and metadata. */
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

/* Which dimensions each variant reads, beyond n. */
enum { NEED_D = 1, NEED_DV = 2, NEED_H = 4, NEED_L = 8, NEED_AB = 16, NEED_RANK = 32 };
static int needed_dims(attn_variant v) {
    switch (v) {
    case ATTN_SOFTMAX: case ATTN_LINEAR: case ATTN_EFFICIENT: case ATTN_TAYLOR: return NEED_D | NEED_DV;
    case ATTN_DENSE: return NEED_D | NEED_DV | NEED_H | NEED_L;
    case ATTN_DENSE1: return NEED_D | NEED_DV | NEED_L;
    case ATTN_RANDOM: return NEED_DV | NEED_L;
    case ATTN_FACTORIZED_DENSE: return NEED_D | NEED_DV | NEED_AB | NEED_L;
    case ATTN_FACTORIZED_RANDOM: return NEED_DV | NEED_L | NEED_RANK;
    case ATTN_MIXTURE: return NEED_DV;
    case ATTN_FIXED: return NEED_DV;
    default: return 0;
    }
}

static attn_status check_dims(attn_variant v, const attn_dims *dims, const char **detail) {
    int need = needed_dims(v);
    int L = dims->L > 0 ? dims->L : dims->n;
    if ((need & NEED_D) && dims->d < 1) FAIL(ATTN_ERR_SHAPE, "d must be a positive integer");
    if ((need & NEED_DV) && dims->dv < 1) FAIL(ATTN_ERR_SHAPE, "dv must be a positive integer");
    if ((need & NEED_H) && dims->h < 1) FAIL(ATTN_ERR_SHAPE, "h must be a positive integer");
    if ((need & NEED_RANK) && dims->rank < 1) FAIL(ATTN_ERR_SHAPE, "rank must be a positive integer");
    if ((need & NEED_AB) && dims->a < 1) FAIL(ATTN_ERR_SHAPE, "a must be a positive integer");
    if ((need & NEED_AB) && dims->b < 1) FAIL(ATTN_ERR_SHAPE, "b must be a positive integer");
    if (need & (NEED_L | NEED_AB)) {
        if (dims->L < 0) FAIL(ATTN_ERR_SHAPE, "L must be a positive integer");
        if (L < dims->n) FAIL(ATTN_ERR_VALUE, "L must be >= n");
    }
    if ((need & NEED_AB) && (int64_t)dims->a * dims->b != L) FAIL(ATTN_ERR_VALUE, "a*b must equal L");
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
            if ((unsigned)part > ATTN_FACTORIZED_RANDOM)
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

/* The name of the first array the variant reads that is NULL, or NULL when all are there. */
static const char *missing_input(attn_variant v, const attn_inputs *in) {
#define NEED(name) \
    if (!in->name) return #name " is missing"
    switch (v) {
    case ATTN_SOFTMAX: case ATTN_LINEAR: case ATTN_EFFICIENT: case ATTN_TAYLOR: NEED(q); NEED(k); break;
    case ATTN_DENSE: NEED(x); NEED(w1); NEED(b1); NEED(w2); NEED(b2); break;
    case ATTN_DENSE1: NEED(x); NEED(w); break;
    case ATTN_RANDOM: NEED(r); break;
    case ATTN_FACTORIZED_DENSE: NEED(x); NEED(wa); NEED(ba); NEED(wb); NEED(bb); break;
    case ATTN_FACTORIZED_RANDOM: NEED(r1); NEED(r2); break;
    default: break;
    }
    NEED(v);
#undef NEED
    return 0;
}

static attn_variant family_of(attn_variant v) {
    return v == ATTN_LINEAR || v == ATTN_EFFICIENT || v == ATTN_TAYLOR ? ATTN_LINEAR : v;
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

attn_status attn_workspace_size(attn_variant v, const attn_dims *dims, const attn_options *opt,
                                int want_weights, size_t *bytes) {
    attn_status s = attn_check(v, dims, opt, 0);
    if (s != ATTN_OK) return s;
    attn_dims rd = resolve_dims(dims);
    attn_inputs none = {0};
    float weights_marker = 0.0f; /* non-NULL so the plan counts what weights need; never written */
    arena measure = {0, 0, 1};
    plan(v, &rd, &none, opt, 0, want_weights ? &weights_marker : 0, &measure);
    uint64_t total = (measure.used + 15u) & ~(uint64_t)15u;
    if (total > (uint64_t)(SIZE_MAX / 2)) return ATTN_ERR_MEMORY;
    *bytes = (size_t)total;
    return ATTN_OK;
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
    const char *missing = missing_input(v, in);
    for (int c = 0; !missing && v == ATTN_MIXTURE && c < opt->n_components; c++)
        missing = missing_input((attn_variant)opt->component[c], in);
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
    uint64_t total = (measure.used + 15u) & ~(uint64_t)15u;
    if (total > (uint64_t)(SIZE_MAX / 2)) return ATTN_ERR_MEMORY;
    *width = attn_state_width(v, dims->d);
    *ws_bytes = (size_t)total;
    return ATTN_OK;
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
    const char *missing = missing_input(v, in);
    if (missing) FAIL(ATTN_ERR_SHAPE, missing);
    arena ws = {(unsigned char *)workspace, 0, 0};
    attn_linear_state(v, dims, in, state, normalizer, &ws);
    if (detail) *detail = "";
    return ATTN_OK;
}
