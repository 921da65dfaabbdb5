/* registry.c — what variants.def, options.def and attnlab.h's lists say, turned into the option
 * defaults, the checks every call goes through, and the metadata JSON the binding is built from.
 * Nothing here names a particular variant: a new variant or option is checked by its registry
 * line alone.
 */
#include "internal.h"

/* ---- the tables ---- */

/* The families' facts (internal.h, ATTN_FAMILY_LIST). */
static const family_facts families[FAMILY_COUNT] = {
#define X(name, keeps_lse, keeps_state, keeps_normalizer, quadratic, causal_only, in_models, signed_weights, \
          input_free, learned_logits)                                                                       \
    {#name, keeps_lse, keeps_state, keeps_normalizer, quadratic, causal_only, in_models, signed_weights,        \
     input_free, learned_logits},
    ATTN_FAMILY_LIST(X)
#undef X
};

/* The dims column, typed: one array of dim_id per variant (ATTN_SOFTMAX_dims, ...), in the
 * column's order (the order the checks name them). */
#define DIM(name) DIM_##name,
#define X(ENUM, id, label, family, form, mixable, dims, ...) static const dim_id ENUM##_dims[] = {dims};
#include "variants.def"
#undef X
#undef DIM

/* The options column as a bit set over option_id; causal, weights and keep are everyone's. */
#define OPTION_BIT(option) (1u << (option))
_Static_assert(OPTION_COUNT <= 32, "option_id bit sets are 32 bits wide");
#define COMMON_OPTIONS (OPTION_BIT(OPTION_causal) | OPTION_BIT(OPTION_weights) | OPTION_BIT(OPTION_keep))

typedef struct variant_rules {
    const char *id;
    family_id family;
    const dim_id *dims;
    int ndims;
    uint32_t options; /* OPTION_BIT of each option it takes */
    int mixable;
} variant_rules;
#define OPT(name) | OPTION_BIT(OPTION_##name)
static const variant_rules variants[] = {
#define X(ENUM, id, label, family, form, mixable, dims, inputs, options, cost, summary, formula) \
    {id, FAMILY_##family, ENUM##_dims, (int)(sizeof ENUM##_dims / sizeof *ENUM##_dims), COMMON_OPTIONS options, mixable},
#include "variants.def"
#undef X
};
#undef OPT
_Static_assert(sizeof variants / sizeof *variants == ATTN_VARIANT_COUNT, "a variant without its rules");

/* The inputs column, typed: one array of input_shape per variant (ATTN_SOFTMAX_inputs, ...), then
 * the table of them. */
#define MATRIX(name, rows, cols) {IN_##name, DIM_##rows, DIM_##cols, 0},
#define OPTIONAL_MATRIX(name, rows, cols) {IN_##name, DIM_##rows, DIM_##cols, 1},
#define VECTOR(name, length) {IN_##name, DIM_##length, DIM_ONE, 0},
#define X(ENUM, id, label, family, form, mixable, dims, inputs, ...) static const input_shape ENUM##_inputs[] = {inputs};
#include "variants.def"
#undef X
#undef MATRIX
#undef OPTIONAL_MATRIX
#undef VECTOR
static const input_list variant_inputs[ATTN_VARIANT_COUNT] = {
#define X(ENUM, ...) {ENUM##_inputs, (int)(sizeof ENUM##_inputs / sizeof *ENUM##_inputs)},
#include "variants.def"
#undef X
};
input_list attn_inputs_of(attn_variant v) { return variant_inputs[v]; }

static const int pattern_looks_ahead[ATTN_PATTERN_COUNT] = {
#define X(ENUM, name, looks_ahead, description) looks_ahead,
    ATTN_PATTERN_LIST(X)
#undef X
};

/* Where dimension `dim` sits in attn_dims (dim_id order). */
static const size_t dim_offset[DIM_ONE] = {
#define X(name, defaults_to, description) offsetof(attn_dims, name),
    ATTN_DIM_LIST(X)
#undef X
};
/* Where array `input` sits in attn_inputs and in attn_grads (input_id order). */
static const size_t input_offset[IN_COUNT] = {
#define X(name) offsetof(attn_inputs, name),
    ATTN_INPUT_LIST(X)
#undef X
};
static const size_t grad_offset[IN_COUNT] = {
#define X(name) offsetof(attn_grads, name),
    ATTN_INPUT_LIST(X)
#undef X
};

/* A dimension's value as given (L's 0 stays 0). */
static int32_t dim_value(const attn_dims *dims, dim_id dim) {
    return *(const int32_t *)(const void *)((const char *)dims + dim_offset[dim]);
}

int32_t attn_dim(const attn_dims *dims, dim_id dim) {
    if (dim == DIM_ONE) return 1;
    int32_t value = dim_value(dims, dim);
    return dim == DIM_L && value == 0 ? dims->n : value;
}

const char *attn_variant_id(attn_variant v) { return variants[v].id; }
int attn_is_mixable(attn_variant v) { return variants[v].mixable; }
family_id attn_family_of(attn_variant v) { return variants[v].family; }
const family_facts *attn_family_facts(family_id family) { return &families[family]; }
int attn_keeps_lse(attn_variant v) { return families[variants[v].family].keeps_lse; }
int attn_accepts(attn_variant v, option_id option) { return (variants[v].options & OPTION_BIT(option)) != 0; }
int attn_is_composite(attn_variant v) { return attn_accepts(v, OPTION_components); }

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

static int is_finite(float x) { return x - x == 0.0f; }

static int reads_dim(const dim_id *list, int count, dim_id dim) {
    for (int i = 0; i < count; i++)
        if (list[i] == dim) return 1;
    return 0;
}

/* The dimensions v reads are positive and at most ATTN_MAX_DIM; L (0 = n) >= n; a*b = L. A
 * mixture reads n and dv itself; its components' dimensions are checked with the components. */
static attn_status check_dims(attn_variant v, const attn_dims *dims, const char **detail) {
    static const char *const not_positive[DIM_ONE] = {
#define X(dim, defaults_to, description) #dim " must be a positive integer",
        ATTN_DIM_LIST(X)
#undef X
    };
    static const dim_id composite_dims[] = {DIM_n, DIM_dv};
    int composite = attn_is_composite(v);
    const dim_id *list = composite ? composite_dims : variants[v].dims;
    int count = composite ? (int)(sizeof composite_dims / sizeof *composite_dims) : variants[v].ndims;
    for (int i = 0; i < count; i++) {
        int32_t value = dim_value(dims, list[i]);
        if (list[i] == DIM_L && value == 0) continue; /* defaults to n */
        if (value < 1) FAIL(ATTN_ERR_SHAPE, not_positive[list[i]]);
        if (value > ATTN_MAX_DIM) FAIL(ATTN_ERR_MEMORY, "a dimension is larger than 2^30");
    }
    int64_t L = dims->L > 0 ? dims->L : dims->n;
    int reads_L = reads_dim(list, count, DIM_L);
    if (reads_L && L < dims->n) FAIL(ATTN_ERR_VALUE, "L must be >= n");
    if (reads_L && reads_dim(list, count, DIM_a) && reads_dim(list, count, DIM_b) &&
        (int64_t)dims->a * dims->b != L)
        FAIL(ATTN_ERR_VALUE, "a*b must equal L");
    return ATTN_OK;
}

/* How many names an ENUM option's list holds (options.def's values column). */
#define ENUM_COUNT_patterns ATTN_PATTERN_COUNT
#define ENUM_COUNT_tilings ATTN_TILING_COUNT

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
attn_status attn_check_weights(const attn_options *opt, const char **detail) {
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
    if ((uint32_t)opt->field >= (uint32_t)ENUM_COUNT_##values) FAIL(ATTN_ERR_VALUE, #name " is not one of the " #values);
#define CHECK_INT(name, field, companion, values, min) \
    if (opt->field < (min)) FAIL(ATTN_ERR_VALUE, #name " must be an integer >= " #min);
#define CHECK_VARIANTS(name, field, companion, values, min) \
    if ((s = check_components(dims, opt, detail)) != ATTN_OK) return s;
#define CHECK_WEIGHTS(name, field, companion, values, min) \
    if ((s = attn_check_weights(opt, detail)) != ATTN_OK) return s;

static attn_status check_options(attn_variant v, const attn_dims *dims, const attn_options *opt,
                                 const char **detail) {
    attn_status s = ATTN_OK;
#define X(name, kind, field, companion, value, values, min, description) \
    if (attn_accepts(v, OPTION_##name)) { CHECK_##kind(name, field, companion, values, min) }
#include "options.def"
#undef X
    if (attn_accepts(v, OPTION_pattern) && opt->causal && pattern_looks_ahead[opt->pattern])
        FAIL(ATTN_ERR_UNSUPPORTED, "pattern looks ahead, so it cannot be causal");
    if (families[variants[v].family].causal_only && !opt->causal)
        FAIL(ATTN_ERR_UNSUPPORTED, "causal must be true: a recurrent variant is causal by construction (the state at "
                                   "token i holds tokens 0..i only), so it cannot attend to later tokens");
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

/* Whether a composite variant (a mixture) reads `input` itself: v alone; the rest it reads through
 * its components. */
static int reads_itself(attn_variant v, input_id input) { return !attn_is_composite(v) || input == IN_v; }

/* "x is missing" for the first array v reads (variants.def) that is NULL, else NULL; a mixture
 * reads v and what its components read. */
const char *attn_missing_input(attn_variant v, const attn_inputs *in, const attn_options *opt) {
    static const char *const messages[IN_COUNT] = {
#define X(name) #name " is missing",
        ATTN_INPUT_LIST(X)
#undef X
    };
    input_list list = attn_inputs_of(v);
    for (int i = 0; i < list.count; i++) {
        input_id input = list.at[i].input;
        if (list.at[i].optional) continue;
        if (reads_itself(v, input) && !*(const float *const *)(const void *)((const char *)in + input_offset[input]))
            return messages[input];
    }
    for (int c = 0; attn_is_composite(v) && c < opt->n_components; c++) {
        const char *missing = attn_missing_input((attn_variant)opt->component[c], in, opt);
        if (missing) return missing;
    }
    return 0;
}

void attn_zero_grads(attn_variant v, const attn_dims *dims, const attn_options *opt,
                     const attn_grads *grads) {
    for (int c = 0; attn_is_composite(v) && c < opt->n_components; c++)
        attn_zero_grads((attn_variant)opt->component[c], dims, opt, grads);
    input_list list = attn_inputs_of(v);
    for (int i = 0; i < list.count; i++) {
        const input_shape *shape = &list.at[i];
        if (!reads_itself(v, shape->input)) continue;
        float *g = *(float *const *)(const void *)((const char *)grads + grad_offset[shape->input]);
        if (g) attn_fill(g, (size_t)attn_dim(dims, shape->rows) * (size_t)attn_dim(dims, shape->cols), 0.0f);
    }
}

/* ---- metadata ---- */

#define STR_(x) #x
#define STR(x) STR_(x)
#define JSON_NAME(name) " " #name

/* The lists, built at compile time; each ends in a null the binding drops (no trailing commas in C). */
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
    "\"families\":["
#define X(name, keeps_lse, keeps_state, keeps_normalizer, quadratic, causal_only, in_models, signed_weights, \
          input_free, learned_logits)                                                                       \
    "{\"name\":\"" #name "\",\"keepsLse\":" #keeps_lse ",\"keepsState\":" #keeps_state                     \
    ",\"keepsNormalizer\":" #keeps_normalizer ",\"quadratic\":" #quadratic ",\"causalOnly\":" #causal_only     \
    ",\"inModels\":" #in_models ",\"signedWeights\":" #signed_weights ",\"inputFree\":" #input_free           \
    ",\"learnedLogits\":" #learned_logits "},"
    ATTN_FAMILY_LIST(X)
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
/* the inputs column as lab.variants reads it: space-separated name:shape words (name? : optional) */
#define MATRIX(name, rows, cols) " " #name ":" #rows "*" #cols
#define OPTIONAL_MATRIX(name, rows, cols) " " #name "?:" #rows "*" #cols
#define VECTOR(name, length) " " #name ":" #length
#define DIM(name) " " #name
#define OPT(name) " " #name
    "\"variants\":["
#define X(ENUM, id, label, family, form, mixable, dims, inputs, options, cost, summary, formula)  \
    "{\"id\":\"" id "\",\"label\":\"" label "\",\"family\":\"" #family "\",\"mixable\":" #mixable \
    ",\"dims\":\"" dims "\",\"inputs\":\"" inputs "\",\"options\":\"" options "\",\"cost\":\"" \
    cost "\",\"summary\":\"" summary "\",\"formula\":\"" formula "\"},"
#include "variants.def"
#undef X
#undef MATRIX
#undef OPTIONAL_MATRIX
#undef VECTOR
#undef DIM
#undef OPT
    "null],"; /* the struct layouts follow (attn_metadata_json) */

/* The layouts of the model's structs as the binding writes and reads them (src/js/model.js): each
 * field's name in the struct, its type and its offset, from offsetof, so the binding mirrors no
 * offset by hand. Every field of each struct is listed, in order; the asserts below catch one
 * appended without an entry. */
typedef struct field_layout {
    const char *name, *type;
    size_t offset, count;
} field_layout;
#define FIELD(S, type, name) {#name, type, offsetof(S, name), 1},
#define ARRAY(S, type, name) {#name, type, offsetof(S, name), sizeof(((S *)0)->name) / sizeof(((S *)0)->name[0])},
static const field_layout model_config_fields[] = {
    FIELD(attn_model_config, "int32_t", variant)
    FIELD(attn_model_config, "int32_t", vocab)
    FIELD(attn_model_config, "int32_t", seq_len)
    FIELD(attn_model_config, "int32_t", d_model)
    FIELD(attn_model_config, "int32_t", heads)
    FIELD(attn_model_config, "int32_t", layers)
    FIELD(attn_model_config, "int32_t", d_ff)
    FIELD(attn_model_config, "int32_t", causal)
    FIELD(attn_model_config, "int32_t", hidden)
    FIELD(attn_model_config, "int32_t", rank)
    FIELD(attn_model_config, "float", weight_decay)
    FIELD(attn_model_config, "uint32_t", seed)
    FIELD(attn_model_config, "double", r_std)
    FIELD(attn_model_config, "attn_options", options)
    FIELD(attn_model_config, "pointer", frozen)
    FIELD(attn_model_config, "int32_t", n_patterns)
    ARRAY(attn_model_config, "int32_t", patterns)
};
/* the struct's size: its last field's end, rounded up to its alignment */
#define ENDS_AT(S, end) (((end) + _Alignof(S) - 1) / _Alignof(S) * _Alignof(S) == sizeof(S))
_Static_assert(ENDS_AT(attn_model_config, offsetof(attn_model_config, patterns) + sizeof(((attn_model_config *)0)->patterns)),
               "attn_model_config has a field after patterns: list it in model_config_fields");
static const field_layout model_param_fields[] = {
    ARRAY(attn_model_param, "char", name)
    FIELD(attn_model_param, "int32_t", index)
    FIELD(attn_model_param, "int32_t", offset)
    FIELD(attn_model_param, "int32_t", count)
    FIELD(attn_model_param, "int32_t", ndim)
    FIELD(attn_model_param, "int32_t", rows)
    FIELD(attn_model_param, "int32_t", cols)
    FIELD(attn_model_param, "int32_t", is_matrix)
    FIELD(attn_model_param, "int32_t", init_kind)
    FIELD(attn_model_param, "double", init_std)
    FIELD(attn_model_param, "double", init_value)
};
_Static_assert(ENDS_AT(attn_model_param, offsetof(attn_model_param, init_value) + sizeof(double)),
               "attn_model_param has a field after init_value: list it in model_param_fields");
#undef ENDS_AT
#undef FIELD
#undef ARRAY

/* A writer that stops at the end of its buffer (a cut-off text fails to parse in the binding,
 * which then refuses the module: LOAD). */
typedef struct json_out {
    char *at, *end;
} json_out;
static void put_text(json_out *o, const char *text) {
    while (*text && o->at < o->end) *o->at++ = *text++;
}
static void put_size(json_out *o, size_t x) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + x % 10); while ((x /= 10) != 0);
    while (n && o->at < o->end) *o->at++ = digits[--n];
}
/* "key":{"bytes":B,"fields":[{"name":...,"type":...,"offset":O,"count":C},...]} */
static void put_layout(json_out *o, const char *key, size_t bytes, const field_layout *fields, size_t count) {
    put_text(o, "\"");
    put_text(o, key);
    put_text(o, "\":{\"bytes\":");
    put_size(o, bytes);
    put_text(o, ",\"fields\":[");
    for (size_t i = 0; i < count; i++) {
        put_text(o, i ? ",{\"name\":\"" : "{\"name\":\"");
        put_text(o, fields[i].name);
        put_text(o, "\",\"type\":\"");
        put_text(o, fields[i].type);
        put_text(o, "\",\"offset\":");
        put_size(o, fields[i].offset);
        put_text(o, ",\"count\":");
        put_size(o, fields[i].count);
        put_text(o, "}");
    }
    put_text(o, "]}");
}

/* The text above, then the layouts, whose offsets the preprocessor cannot write into a string:
 * put together on the first call (the binding's, on the thread that loads the module). */
static char metadata[sizeof metadata_json + 4096];
const char *attn_metadata_json(void) {
    if (metadata[0]) return metadata;
    json_out o = {metadata, metadata + sizeof metadata - 1};
    put_text(&o, metadata_json);
    put_layout(&o, "modelConfig", sizeof(attn_model_config), model_config_fields,
               sizeof model_config_fields / sizeof model_config_fields[0]);
    put_text(&o, ",");
    put_layout(&o, "modelParam", sizeof(attn_model_param), model_param_fields,
               sizeof model_param_fields / sizeof model_param_fields[0]);
    put_text(&o, "}");
    *o.at = 0;
    return metadata;
}
