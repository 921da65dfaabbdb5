/* registry.c — what variants.def, options.def and attnlab.h's lists say, turned into the option
 * defaults, the checks every call goes through, and the metadata JSON the binding is built from.
 * Nothing here names a particular variant: a new variant or option is checked by its registry
 * line alone.
 */
#include "internal.h"

/* ---- the tables ---- */

typedef struct variant_rules {
    const char *id, *family, *dims, *inputs, *options;
    int mixable;
} variant_rules;
static const variant_rules variants[ATTN_VARIANT_COUNT] = {
#define X(ENUM, id, label, family, mixable, dims, inputs, options, cost, summary, formula) \
    {id, family, dims, inputs, options, mixable},
#include "variants.def"
#undef X
};

static const int pattern_looks_ahead[ATTN_PATTERN_COUNT] = {
#define X(ENUM, name, looks_ahead, description) looks_ahead,
    ATTN_PATTERN_LIST(X)
#undef X
};

typedef struct field_ref { const char *name; size_t offset; } field_ref;
static const field_ref dim_fields[] = {
#define X(name, defaults_to, description) {#name, offsetof(attn_dims, name)},
    ATTN_DIM_LIST(X)
#undef X
};
static const field_ref input_fields[] = {
#define X(name) {#name, offsetof(attn_inputs, name)},
    ATTN_INPUT_LIST(X)
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

static int list_has(const char *list, const char *name) {
    char token[24];
    while (next_token(&list, token, sizeof token))
        if (str_eq(token, name)) return 1;
    return 0;
}

static int32_t dim_value(const attn_dims *dims, const char *name) {
    for (size_t i = 0; i < sizeof dim_fields / sizeof *dim_fields; i++)
        if (str_eq(name, dim_fields[i].name))
            return *(const int32_t *)(const void *)((const char *)dims + dim_fields[i].offset);
    return 0;
}

int attn_family_is(attn_variant v, const char *family) { return str_eq(variants[v].family, family); }
int attn_accepts(attn_variant v, const char *option) {
    return str_eq(option, "causal") || str_eq(option, "weights") || list_has(variants[v].options, option);
}

/* ---- defaults ---- */

#define DEFAULT_BOOL(field, value)
#define DEFAULT_CALL(field, value)
#define DEFAULT_OPTIONAL(field, value)
#define DEFAULT_NUMBER(field, value) opt->field = (float)(value);
#define DEFAULT_ENUM(field, value) /* the list's first name: 0 */
#define DEFAULT_INT(field, value) opt->field = (int32_t)(value);
#define DEFAULT_VARIANTS(field, value)
#define DEFAULT_WEIGHTS(field, value)
void attn_options_default(attn_options *opt) {
    *opt = (attn_options){0};
#define X(name, kind, field, companion, value, values, min, description) DEFAULT_##kind(field, value)
#include "options.def"
#undef X
}

/* ---- checks ---- */

#define FAIL(status, text)          \
    do {                            \
        if (detail) *detail = text; \
        return status;              \
    } while (0)

static int is_finite(float x) { return x - x == 0.0f; }

static int is_composite(attn_variant v) { return list_has(variants[v].options, "components"); }

/* The dimensions v reads are positive and at most ATTN_MAX_DIM; L (0 = n) >= n; a*b = L. A
 * mixture reads n and dv itself; its components' dimensions are checked with the components. */
static attn_status check_dims(attn_variant v, const attn_dims *dims, const char **detail) {
    const char *list = is_composite(v) ? "n dv" : variants[v].dims;
    char name[16];
    while (next_token(&list, name, sizeof name)) {
        int32_t value = dim_value(dims, name);
        if (str_eq(name, "L") && value == 0) continue; /* defaults to n */
        if (value < 1) {
#define X(dim, defaults_to, description) if (str_eq(name, #dim)) FAIL(ATTN_ERR_SHAPE, #dim " must be a positive integer");
            ATTN_DIM_LIST(X)
#undef X
        }
        if (value > ATTN_MAX_DIM) FAIL(ATTN_ERR_MEMORY, "a dimension is larger than 2^30");
    }
    int64_t L = dims->L > 0 ? dims->L : dims->n;
    const char *read = is_composite(v) ? "n dv" : variants[v].dims;
    int reads_L = list_has(read, "L");
    if (reads_L && L < dims->n) FAIL(ATTN_ERR_VALUE, "L must be >= n");
    if (reads_L && list_has(read, "a") && list_has(read, "b") &&
        (int64_t)dims->a * dims->b != L)
        FAIL(ATTN_ERR_VALUE, "a*b must equal L");
    return ATTN_OK;
}

static int enum_count(const char *values) {
    return str_eq(values, "patterns") ? ATTN_PATTERN_COUNT : str_eq(values, "tilings") ? ATTN_TILING_COUNT : 0;
}

/* A mixture's components: 1 to ATTN_MAX_COMPONENTS known, mixable variants whose dims hold. */
static attn_status check_components(const attn_dims *dims, const attn_options *opt,
                                    const char **detail) {
    if (opt->n_components < 1 || opt->n_components > ATTN_MAX_COMPONENTS)
        FAIL(ATTN_ERR_VALUE, "components must list 1 to 8 variants");
    for (int c = 0; c < opt->n_components; c++) {
        if ((uint32_t)opt->component[c] >= ATTN_VARIANT_COUNT) FAIL(ATTN_ERR_UNKNOWN, "components: a variant is not known");
        if (!variants[opt->component[c]].mixable)
            FAIL(ATTN_ERR_UNSUPPORTED, "components: only mixable variants (variants.def) can be mixed");
        attn_status s = check_dims((attn_variant)opt->component[c], dims, detail);
        if (s != ATTN_OK) return s;
    }
    return ATTN_OK;
}

/* Mixture weights: finite; as probabilities (alpha_is_logits unset) non-negative, summing to 1. */
static attn_status check_weights(const attn_options *opt, const char **detail) {
    float sum = 0.0f;
    for (int c = 0; c < opt->n_components && c < ATTN_MAX_COMPONENTS; c++) {
        if (!is_finite(opt->alpha[c])) FAIL(ATTN_ERR_VALUE, "alpha must hold finite numbers");
        if (!opt->alpha_is_logits && opt->alpha[c] < 0.0f) FAIL(ATTN_ERR_VALUE, "alpha must be non-negative");
        sum += opt->alpha[c];
    }
    if (!opt->alpha_is_logits && (sum < 1.0f - 1e-5f || sum > 1.0f + 1e-5f))
        FAIL(ATTN_ERR_VALUE, "alpha must sum to 1 (within 1e-5)");
    return ATTN_OK;
}

/* One check per kind of options.def; `accepted` says whether the variant takes the option at all
 * (an option it does not take is ignored, whatever its field holds). */
#define CHECK_BOOL(name, field, companion, values, min)
#define CHECK_CALL(name, field, companion, values, min)
#define CHECK_OPTIONAL(name, field, companion, values, min) \
    if (opt->companion && !is_finite(opt->field)) FAIL(ATTN_ERR_VALUE, #name " must be a finite number");
#define CHECK_NUMBER(name, field, companion, values, min) \
    if (!is_finite(opt->field) || opt->field < (float)(min)) FAIL(ATTN_ERR_VALUE, #name " must be a finite number >= " #min);
#define CHECK_ENUM(name, field, companion, values, min) \
    if ((uint32_t)opt->field >= (uint32_t)enum_count(#values)) FAIL(ATTN_ERR_VALUE, #name " is not one of the " #values);
#define CHECK_INT(name, field, companion, values, min) \
    if (opt->field < (min)) FAIL(ATTN_ERR_VALUE, #name " must be an integer >= " #min);
#define CHECK_VARIANTS(name, field, companion, values, min) \
    if ((s = check_components(dims, opt, detail)) != ATTN_OK) return s;
#define CHECK_WEIGHTS(name, field, companion, values, min) \
    if ((s = check_weights(opt, detail)) != ATTN_OK) return s;

static attn_status check_options(attn_variant v, const attn_dims *dims, const attn_options *opt,
                                 const char **detail) {
    attn_status s = ATTN_OK;
#define X(name, kind, field, companion, value, values, min, description) \
    if (attn_accepts(v, #name)) { CHECK_##kind(name, field, companion, values, min) }
#include "options.def"
#undef X
    if (attn_accepts(v, "pattern") && opt->causal && pattern_looks_ahead[opt->pattern])
        FAIL(ATTN_ERR_UNSUPPORTED, "pattern looks ahead, so it cannot be causal");
    return s;
}

attn_status attn_validate(attn_variant v, const attn_dims *dims, const attn_options *opt,
                          const char **detail) {
    if ((uint32_t)v >= ATTN_VARIANT_COUNT) FAIL(ATTN_ERR_UNKNOWN, "variant is not known");
    if (!dims || !opt) FAIL(ATTN_ERR_SHAPE, "dims and options are required");
    if (dims->n < 1) FAIL(ATTN_ERR_SHAPE, "n must be a positive integer");
    attn_status s = check_dims(v, dims, detail);
    if (s != ATTN_OK) return s;
    return check_options(v, dims, opt, detail);
}

/* "x is missing" for the first array v reads (variants.def) that is NULL, else NULL; a mixture
 * reads v and what its components read. */
const char *attn_missing_input(attn_variant v, const attn_inputs *in, const attn_options *opt) {
    static const char *const messages[] = {
#define X(name) #name " is missing",
        ATTN_INPUT_LIST(X)
#undef X
    };
    const char *list = is_composite(v) ? "v:n*dv" : variants[v].inputs;
    char name[16];
    while (next_token(&list, name, sizeof name))
        for (size_t i = 0; i < sizeof input_fields / sizeof *input_fields; i++)
            if (str_eq(name, input_fields[i].name) &&
                !*(const float *const *)(const void *)((const char *)in + input_fields[i].offset))
                return messages[i];
    for (int c = 0; is_composite(v) && c < opt->n_components; c++) {
        const char *missing = attn_missing_input((attn_variant)opt->component[c], in, opt);
        if (missing) return missing;
    }
    return 0;
}

/* Elements of an array of this shape ("n*d"), for dims that passed the checks. */
static size_t shape_count(const char *shape, const attn_dims *dims) {
    size_t count = 1;
    char name[8];
    size_t len = 0;
    for (const char *p = shape;; p++) {
        if (*p && *p != '*') {
            if (len + 1 < sizeof name) name[len++] = *p;
            continue;
        }
        name[len] = '\0';
        int32_t value = dim_value(dims, name);
        if (str_eq(name, "L") && value == 0) value = dims->n;
        count *= (size_t)value;
        len = 0;
        if (!*p) return count;
    }
}

void attn_zero_grads(attn_variant v, const attn_dims *dims, const attn_options *opt,
                     const attn_grads *grads) {
    if (is_composite(v)) {
        for (int c = 0; c < opt->n_components; c++) attn_zero_grads((attn_variant)opt->component[c], dims, opt, grads);
        v = ATTN_VARIANT_COUNT; /* then v itself */
    }
    const char *list = v == ATTN_VARIANT_COUNT ? "v:n*dv" : variants[v].inputs;
    while (*list) {
        while (*list == ' ') list++;
        const char *colon = list;
        while (*colon && *colon != ':') colon++;
        const char *end = colon;
        while (*end && *end != ' ') end++;
        char name[16], shape[32];
        size_t nl = (size_t)(colon - list) < sizeof name - 1 ? (size_t)(colon - list) : sizeof name - 1;
        size_t sl = (size_t)(end - colon - 1) < sizeof shape - 1 ? (size_t)(end - colon - 1) : sizeof shape - 1;
        for (size_t i = 0; i < nl; i++) name[i] = list[i];
        for (size_t i = 0; i < sl; i++) shape[i] = colon[1 + i];
        name[nl] = '\0', shape[sl] = '\0';
        for (size_t i = 0; i < sizeof input_fields / sizeof *input_fields; i++)
            if (str_eq(name, input_fields[i].name)) {
                float *g = *(float *const *)(const void *)((const char *)grads + input_fields[i].offset);
                if (g) attn_fill(g, shape_count(shape, dims), 0.0f);
            }
        list = end;
    }
}

/* ---- metadata ---- */

#define STR_(x) #x
#define STR(x) STR_(x)
#define JSON_NAME(name) " " #name

/* Built at compile time; lists end in a null the binding drops (no trailing commas in C). */
static const char metadata_json[] =
    "{\"version\":\"" ATTN_VERSION "\","
    "\"simd\":" STR(ATTN_SIMD) ","
    "\"fma\":" STR(ATTN_FMA) ","
    "\"maxComponents\":" STR(ATTN_MAX_COMPONENTS) ","
    "\"maxDim\":" STR(ATTN_MAX_DIM) ","
    "\"inputFields\":\"" ATTN_INPUT_LIST(JSON_NAME) "\","
    "\"dims\":["
#define X(name, defaults_to, description) \
    "{\"name\":\"" #name "\",\"defaultsTo\":\"" #defaults_to "\",\"description\":\"" description "\"},"
    ATTN_DIM_LIST(X)
#undef X
    "null],"
    "\"optionFields\":["
#define FIELD(type, name) "{\"name\":\"" #name "\",\"type\":\"" #type "\",\"count\":1},"
#define ARRAY(type, name, count) "{\"name\":\"" #name "\",\"type\":\"" #type "\",\"count\":" STR(count) "},"
    ATTN_OPTION_FIELDS(FIELD, ARRAY)
#undef FIELD
#undef ARRAY
    "null],"
    "\"patterns\":["
#define X(ENUM, name, looks_ahead, description) \
    "{\"name\":\"" name "\",\"lookAhead\":" #looks_ahead ",\"description\":\"" description "\"},"
    ATTN_PATTERN_LIST(X)
#undef X
    "null],"
    "\"tilings\":["
#define X(ENUM, name, description) "{\"name\":\"" name "\",\"description\":\"" description "\"},"
    ATTN_TILING_LIST(X)
#undef X
    "null],"
    "\"options\":["
#define X(name, kind, field, companion, value, values, min, description)                      \
    "{\"name\":\"" #name "\",\"kind\":\"" #kind "\",\"field\":\"" #field "\",\"companion\":\"" \
    #companion "\",\"default\":" #value ",\"values\":\"" #values "\",\"min\":" #min            \
    ",\"description\":\"" description "\"},"
#include "options.def"
#undef X
    "null],"
    "\"variants\":["
#define X(ENUM, id, label, family, mixable, dims, inputs, options, cost, summary, formula)        \
    "{\"id\":\"" id "\",\"label\":\"" label "\",\"family\":\"" family "\",\"mixable\":" #mixable \
    ",\"dims\":\"" dims "\",\"inputs\":\"" inputs "\",\"options\":\"" options "\",\"cost\":\"" \
    cost "\",\"summary\":\"" summary "\",\"formula\":\"" formula "\"},"
#include "variants.def"
#undef X
    "null]}";

const char *attn_metadata_json(void) { return metadata_json; }
