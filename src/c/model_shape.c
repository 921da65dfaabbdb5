/* model_shape.c — a model's configuration turned into its shape: the checks of attn_model_check,
 * every offset of the parameter table (docs/model.md, "Parameters"), the table's entries and the
 * seeded initialisation (the same bits as src/js/prng.js). Which arrays a head carries comes from
 * the registry (attn_inputs_of, variants.def's inputs column): a variant that reads only arrays
 * the table knows needs nothing here.
 */
#include "model.h"

/* The names of the input arrays, for the table's names ("l0.h1.wq", "l0.h1.r"). */
static const char *const input_names[IN_COUNT] = {
#define X(name) #name,
    ATTN_INPUT_LIST(X)
#undef X
};

static int str_eq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* ---- the shape ---- */

void model_head_options(const attn_model_config *cfg, const model_shape *s, int h,
                        const float *alpha, attn_options *opt) {
    *opt = cfg->options;
    opt->causal = cfg->causal != 0;
    if (attn_accepts((attn_variant)cfg->variant, OPTION_pattern)) opt->pattern = s->patterns[h % s->npatterns];
    if (attn_is_composite((attn_variant)cfg->variant)) {
        opt->alpha_is_logits = 1;
        for (int c = 0; c < ATTN_MAX_COMPONENTS; c++) opt->alpha[c] = alpha && c < opt->n_components ? alpha[c] : 0.0f;
    }
}

/* The initial standard deviation of a head parameter (docs/model.md's table); 0 = zeros. Every
 * input has its case, so that a new one does not compile until it has its scale. */
static double head_std(const attn_model_config *cfg, input_id input) {
    switch (input) {
    case IN_q: case IN_k: case IN_x: case IN_v: case IN_w1: case IN_w: case IN_wa: case IN_wb:
    case IN_w2: return 0.02;
    case IN_r: case IN_r1: case IN_r2: return cfg->r_std;
    case IN_g: case IN_beta: case IN_s0: break; /* the recurrent family: no model yet (in_models) */
    case IN_b1: case IN_b2: case IN_ba: case IN_bb: return 0.0;
    case IN_COUNT: break; /* not an input */
    }
    return 0.0;
}

attn_status model_shape_of(const attn_model_config *cfg, model_shape *s, const char **detail) {
    if (!cfg) FAIL(ATTN_ERR_SHAPE, "config is required");
    *s = (model_shape){0};
    if ((uint32_t)cfg->variant >= ATTN_VARIANT_COUNT) FAIL(ATTN_ERR_UNKNOWN, "variant is not known");
    if (!attn_family_facts(attn_family_of((attn_variant)cfg->variant))->in_models)
        FAIL(ATTN_ERR_UNSUPPORTED, "a recurrent variant cannot be a model's attention yet: its layer (projections for g "
                                   "and beta, a short convolution, an output norm) is not built");
    if (cfg->vocab < 1) FAIL(ATTN_ERR_SHAPE, "vocab must be a positive integer");
    if (cfg->seq_len < 1) FAIL(ATTN_ERR_SHAPE, "seqLen must be a positive integer");
    if (cfg->d_model < 1) FAIL(ATTN_ERR_SHAPE, "dModel must be a positive integer");
    if (cfg->heads < 1) FAIL(ATTN_ERR_SHAPE, "heads must be a positive integer");
    if (cfg->layers < 1) FAIL(ATTN_ERR_SHAPE, "layers must be a positive integer");
    if (cfg->d_ff < 1) FAIL(ATTN_ERR_SHAPE, "dFF must be a positive integer");
    if (cfg->hidden < 0) FAIL(ATTN_ERR_SHAPE, "hidden must be a positive integer (0: dModel / heads)");
    if (cfg->rank < 0) FAIL(ATTN_ERR_SHAPE, "rank must be a positive integer (0: min(8, seqLen))");
    if (cfg->d_model % cfg->heads != 0) FAIL(ATTN_ERR_SHAPE, "heads must divide dModel");
    if (!(cfg->weight_decay - cfg->weight_decay == 0.0f) || cfg->weight_decay < 0.0f)
        FAIL(ATTN_ERR_VALUE, "weightDecay must be a finite number >= 0");
    if (!(cfg->r_std > 0.0 && cfg->r_std <= 1e6)) FAIL(ATTN_ERR_VALUE, "rStd must be a number in (0, 1e6]");
    if ((int64_t)cfg->layers * cfg->heads > ATTN_MODEL_MAX_HEADS)
        FAIL(ATTN_ERR_MEMORY, "layers * heads is more than ATTN_MODEL_MAX_HEADS (4096)");
    int32_t big = ATTN_MAX_DIM;
    if (cfg->vocab > big || cfg->seq_len > big || cfg->d_model > big || cfg->heads > big ||
        cfg->layers > big || cfg->d_ff > big || cfg->hidden > big || cfg->rank > big)
        FAIL(ATTN_ERR_MEMORY, "a dimension is larger than 2^30");

    s->V = cfg->vocab, s->T = cfg->seq_len, s->D = cfg->d_model, s->H = cfg->heads;
    s->keeps_lse = attn_keeps_lse((attn_variant)cfg->variant);
    s->layers = cfg->layers, s->F = cfg->d_ff, s->dh = cfg->d_model / cfg->heads;
    int a = 1;
    for (int f = 1; (int64_t)f * f <= s->T; f++)
        if (s->T % f == 0) a = f;
    s->dims = (attn_dims){.n = s->T, .d = s->dh, .dv = s->dh, .h = cfg->hidden ? cfg->hidden : s->dh,
                          .L = s->T, .a = a, .b = s->T / a,
                          .rank = cfg->rank ? cfg->rank : imin(8, s->T)};

    /* Fixed heads cycle through the config's patterns, or by default through those a causal
     * model may use. */
    static const int every[] = {ATTN_PATTERN_PREVIOUS, ATTN_PATTERN_CURRENT, ATTN_PATTERN_NEXT, ATTN_PATTERN_LEFT,
                                ATTN_PATTERN_RIGHT, ATTN_PATTERN_FIRST, ATTN_PATTERN_LAST};
    _Static_assert(sizeof every / sizeof *every == ATTN_PATTERN_COUNT,
                   "a new pattern needs its place in the default cycle (docs/model.md)");
    static const int looks_ahead[ATTN_PATTERN_COUNT] = { /* the pattern list's own flags */
#define X(ENUM, name, ahead, description) ahead,
        ATTN_PATTERN_LIST(X)
#undef X
    };
    if (cfg->n_patterns < 0 || cfg->n_patterns > ATTN_MODEL_MAX_PATTERNS)
        FAIL(ATTN_ERR_VALUE, "n_patterns must be in [0, ATTN_MODEL_MAX_PATTERNS]");
    if (cfg->n_patterns && !attn_accepts((attn_variant)cfg->variant, OPTION_pattern))
        FAIL(ATTN_ERR_VALUE, "patterns are for fixed heads: another variant takes none");
    for (int i = 0; i < cfg->n_patterns; i++) {
        int p = cfg->patterns[i];
        if (p < 0 || p >= ATTN_PATTERN_COUNT) FAIL(ATTN_ERR_VALUE, "patterns: an entry is not an attn_pattern");
        if (cfg->causal && looks_ahead[p]) FAIL(ATTN_ERR_VALUE, "patterns: a causal model cannot take a pattern that looks ahead (next, right, last)");
        s->patterns[s->npatterns++] = p;
    }
    if (!cfg->n_patterns)
        for (int i = 0; i < (int)(sizeof every / sizeof *every); i++)
            if (!(cfg->causal && looks_ahead[every[i]])) s->patterns[s->npatterns++] = every[i];

    /* The attention's own checks, for every distinct head (they differ only in the fixed pattern). */
    for (int h = 0; h < s->H && h < s->npatterns; h++) {
        attn_options opt;
        model_head_options(cfg, s, h, 0, &opt);
        attn_status st = attn_check((attn_variant)cfg->variant, &s->dims, &opt, detail);
        if (st != ATTN_OK) return st;
    }

    /* One head's parameters: the arrays the variant (a mixture: its components) reads, in
     * ATTN_INPUT_LIST order with wv moved last and the mixture logits before it. */
    int reads[IN_COUNT] = {0};
    const input_shape *shapes[IN_COUNT] = {0};
    int composite = attn_is_composite((attn_variant)cfg->variant);
    int ncomp = composite ? cfg->options.n_components : 1;
    for (int c = 0; c < ncomp; c++) {
        input_list list = attn_inputs_of((attn_variant)(composite ? cfg->options.component[c] : cfg->variant));
        for (int i = 0; i < list.count; i++) reads[list.at[i].input] = 1, shapes[list.at[i].input] = &list.at[i];
    }
    reads[IN_v] = 1;
    int order[MAX_SLOTS], norder = 0;
    for (int i = 0; i < IN_COUNT; i++)
        if (reads[i] && i != IN_v) order[norder++] = i;
    if (composite) order[norder++] = SLOT_ALPHA;
    order[norder++] = IN_v;
    s->alpha_slot = -1;
    int64_t off = 0;
    for (int k = 0; k < norder; k++) {
        slot *sl = &s->slots[s->nslots];
        sl->input = order[k];
        if (order[k] == SLOT_ALPHA) {
            sl->ndim = 1, sl->rows = ncomp, sl->cols = 1;
            s->alpha_slot = s->nslots;
        } else if (is_projection(order[k])) {
            sl->ndim = 2, sl->rows = s->D, sl->cols = s->dh;
            s->proj_slot[s->nproj++] = s->nslots;
        } else { /* its shape in variants.def, over the head's dims */
            const input_shape *shape = shapes[order[k]];
            sl->ndim = shape->cols == DIM_ONE ? 1 : 2;
            sl->rows = attn_dim(&s->dims, shape->rows), sl->cols = attn_dim(&s->dims, shape->cols);
        }
        sl->count = (int64_t)sl->rows * sl->cols;
        sl->offset = off;
        sl->init_std = order[k] == SLOT_ALPHA ? 0.0 : head_std(cfg, (input_id)order[k]);
        off = sadd(off, sl->count);
        s->nslots++;
    }
    s->head_floats = off;
    s->head_params = s->nslots;

    int64_t D = s->D, F = s->F;
    s->ln1g = 0, s->ln1b = D, s->heads = 2 * D;
    s->wo = sadd(s->heads, smul(s->H, s->head_floats));
    s->ln2g = sadd(s->wo, smul(D, D)), s->ln2b = sadd(s->ln2g, D);
    s->fc1 = sadd(s->ln2b, D), s->fc1b = sadd(s->fc1, smul(D, F));
    s->fc2 = sadd(s->fc1b, F), s->fc2b = sadd(s->fc2, smul(F, D));
    s->layer_floats = sadd(s->fc2b, D);
    int64_t layer_params = sadd(sadd(2, smul(s->H, s->head_params)), LP_COUNT); /* H can be 2^30 */
    s->layers_off = smul(sadd(s->V, s->T), D);
    s->lnfg = sadd(s->layers_off, smul(s->layers, s->layer_floats));
    s->lnfb = sadd(s->lnfg, D), s->out = sadd(s->lnfb, D), s->outb = sadd(s->out, smul(D, s->V));
    s->total = sadd(s->outb, s->V);
    int64_t nparams = sadd(2 + 4, smul(s->layers, layer_params));
    /* int32 offsets in the table, and 16 bytes per parameter in a block below half the address space */
    if (s->total >= ((int64_t)1 << 31) || nparams >= ((int64_t)1 << 31) ||
        (uint64_t)s->total > (uint64_t)(SIZE_MAX / 2) / 16u)
        FAIL(ATTN_ERR_MEMORY, "the model does not fit in the address space");
    s->layer_params = (int)layer_params; /* < nparams < 2^31 */
    s->params = (int)nparams;
    if (detail) *detail = "";
    return ATTN_OK;
}

/* ---- the parameter table ---- */

static char *put_str(char *p, const char *s) {
    while (*s) *p++ = *s++;
    *p = '\0';
    return p;
}
static char *put_int(char *p, int v) {
    char digits[12];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10), v /= 10; while (v);
    while (n) *p++ = digits[--n];
    *p = '\0';
    return p;
}

/* attnlab.h promises these offsets to the binding. */
_Static_assert(sizeof(attn_model_param) == 80 && offsetof(attn_model_param, index) == 32 &&
                   offsetof(attn_model_param, init_kind) == 60 && offsetof(attn_model_param, init_std) == 64,
               "attn_model_param layout");

static void set_info(attn_model_param *info, int index, int64_t offset, int ndim, int rows, int cols,
                     double std, double value) {
    info->index = index;
    info->offset = (int32_t)offset;
    info->count = (int32_t)((int64_t)rows * cols);
    info->ndim = ndim;
    info->rows = rows, info->cols = cols;
    info->is_matrix = ndim == 2;
    info->init_kind = std > 0.0;
    info->init_std = std;
    info->init_value = value;
}

void model_param_describe(const model_shape *s, int index, attn_model_param *info) {
    char *p = info->name;
    int D = s->D;
    double proj_std = 0.02 / __builtin_sqrt(2.0 * s->layers); /* wo, fc2: residual branches */
    if (index == 0) { put_str(p, "tok_emb"), set_info(info, index, 0, 2, s->V, D, 0.02, 0); return; }
    if (index == 1) { put_str(p, "pos_emb"), set_info(info, index, (int64_t)s->V * D, 2, s->T, D, 0.02, 0); return; }
    int j = index - 2;
    if (j >= s->layers * s->layer_params) {
        j -= s->layers * s->layer_params;
        static const char *const names[] = {"lnf.g", "lnf.b", "out", "outb"};
        put_str(p, names[j]);
        if (j == 0) set_info(info, index, s->lnfg, 1, D, 1, 0, 1);
        else if (j == 1) set_info(info, index, s->lnfb, 1, D, 1, 0, 0);
        else if (j == 2) set_info(info, index, s->out, 2, D, s->V, 0.02, 0);
        else set_info(info, index, s->outb, 1, s->V, 1, 0, 0);
        return;
    }
    int l = j / s->layer_params;
    j %= s->layer_params;
    int64_t base = s->layers_off + (int64_t)l * s->layer_floats;
    p = put_str(p, "l"), p = put_int(p, l), p = put_str(p, ".");
    if (j < 2) {
        put_str(p, j == 0 ? "ln1.g" : "ln1.b");
        set_info(info, index, base + (j == 0 ? s->ln1g : s->ln1b), 1, D, 1, 0, j == 0);
        return;
    }
    j -= 2;
    if (j < s->H * s->head_params) {
        int h = j / s->head_params;
        const slot *sl = &s->slots[j % s->head_params];
        p = put_str(p, "h"), p = put_int(p, h), p = put_str(p, ".");
        if (sl->input == SLOT_ALPHA) put_str(p, "alpha");
        else if (is_projection(sl->input)) p = put_str(p, "w"), put_str(p, input_names[sl->input]);
        else put_str(p, input_names[sl->input]);
        set_info(info, index, base + s->heads + (int64_t)h * s->head_floats + sl->offset, sl->ndim, sl->rows,
                 sl->cols, sl->init_std, 0);
        return;
    }
    j -= s->H * s->head_params;
    static const char *const names[LP_COUNT] = {"wo", "ln2.g", "ln2.b", "fc1", "fc1b", "fc2", "fc2b"};
    put_str(p, names[j]);
    switch ((layer_param)j) {
    case LP_WO: set_info(info, index, base + s->wo, 2, D, D, proj_std, 0); break;
    case LP_LN2G: set_info(info, index, base + s->ln2g, 1, D, 1, 0, 1); break;
    case LP_LN2B: set_info(info, index, base + s->ln2b, 1, D, 1, 0, 0); break;
    case LP_FC1: set_info(info, index, base + s->fc1, 2, D, s->F, 0.02, 0); break;
    case LP_FC1B: set_info(info, index, base + s->fc1b, 1, s->F, 1, 0, 0); break;
    case LP_FC2: set_info(info, index, base + s->fc2, 2, s->F, D, proj_std, 0); break;
    case LP_FC2B: set_info(info, index, base + s->fc2b, 1, D, 1, 0, 0); break;
    case LP_COUNT: break; /* j < LP_COUNT */
    }
}

void attn_model_config_default(attn_model_config *cfg) {
    *cfg = (attn_model_config){0};
    cfg->variant = ATTN_SOFTMAX;
    cfg->weight_decay = 0.01f;
    cfg->r_std = 0.2;
    attn_options_default(&cfg->options);
}

attn_status attn_model_check(const attn_model_config *cfg, const char **detail) {
    model_shape s;
    return model_shape_of(cfg, &s, detail);
}

attn_status attn_model_param_count(const attn_model_config *cfg, int32_t *count, const char **detail) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, detail);
    if (st == ATTN_OK && count) *count = s.params;
    return st;
}

attn_status attn_model_param_info(const attn_model_config *cfg, int32_t index, attn_model_param *info,
                                  const char **detail) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!info) FAIL(ATTN_ERR_SHAPE, "info is required");
    if (index < 0 || index >= s.params) FAIL(ATTN_ERR_SHAPE, "index is outside the parameter table");
    model_param_describe(&s, index, info);
    return ATTN_OK;
}

attn_status attn_model_param_find(const attn_model_config *cfg, const char *name, int32_t *index,
                                  const char **detail) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!name) FAIL(ATTN_ERR_SHAPE, "name is required");
    for (int i = 0; i < s.params; i++) {
        attn_model_param info;
        model_param_describe(&s, i, &info);
        if (str_eq(info.name, name)) {
            if (index) *index = i;
            return ATTN_OK;
        }
    }
    FAIL(ATTN_ERR_UNKNOWN, "no parameter has this name");
}

attn_status attn_model_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, 0);
    if (st == ATTN_OK && bytes) *bytes = (size_t)s.total * 16u;
    return st;
}

/* ---- initialisation: the same integers and float64 operations as src/js/prng.js ---- */

static uint32_t fnv1a(const char *s) {
    uint32_t h = 0x811c9dc5u;
    for (; *s; s++) h = (h ^ (uint32_t)(unsigned char)*s) * 0x01000193u;
    return h;
}
static double mulberry32(uint32_t *state) {
    uint32_t t = *state += 0x6d2b79f5u;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return (double)(t ^ (t >> 14)) / 4294967296.0;
}

attn_status attn_model_init(const attn_model_config *cfg, float *memory, size_t bytes,
                            const char **detail) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s.total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    const double sqrt3 = __builtin_sqrt(3.0);
    for (int i = 0; i < s.params; i++) {
        attn_model_param info;
        model_param_describe(&s, i, &info);
        float *p = memory + info.offset;
        if (!info.init_kind) {
            attn_fill(p, (size_t)info.count, (float)info.init_value);
            continue;
        }
        uint32_t state = fnv1a(info.name) ^ (cfg->seed * 0x9e3779b1u);
        for (int e = 0; e < info.count; e++) {
            double u1 = mulberry32(&state), u2 = mulberry32(&state);
            double u3 = mulberry32(&state), u4 = mulberry32(&state);
            double normal = (u1 + u2 + u3 + u4 - 2.0) * sqrt3;
            p[e] = (float)(normal * info.init_std);
        }
    }
    attn_fill(memory + s.total, (size_t)s.total * 3u, 0.0f);
    if (detail) *detail = "";
    return ATTN_OK;
}
