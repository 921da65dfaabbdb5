/* model.c — small transformers over any attention variant: the parameter table, the seeded
 * initialisation, the forward pass, the masked cross-entropy and its full backward pass, AdamW;
 * step-by-step decoding of a causal model and the attention map of a head (at the end).
 *
 * Activations are [NR, width] row-major with NR = batch * seq_len rows (sequence-major). Every
 * matrix product is attn_gemm / attn_gemm_tn (the packed micro-kernel), including the transposed
 * products of the backward pass, whose transposed weights go through a small scratch. Each head's
 * attention runs per sequence through the public plan API, so the model sees exactly what
 * attn_plan_run and attn_plan_backward give. Per head the projections live head-major
 * ([head][rows][dh]), the layout attn_plan_run reads in place; concat(y) wo is then a sum over heads
 * of y_h wo[h*dh.., :], accumulated in head order, which is the k order of one product over the
 * concatenation.
 *
 * Determinism: every reduction (bias and LayerNorm sums over rows, parameter gradients of the
 * heads over the sequences of a batch, the loss, the clipping norm) runs in one fixed order.
 */
#include "internal.h"

#define LN_EPS 1e-5f
#define ADAM_B1 0.9f
#define ADAM_B2 0.98f
#define ADAM_EPS 1e-8f
#define GELU_C 0.7978845608f
#define GELU_K 0.044715f

#define FAIL(status, text)          \
    do {                            \
        if (detail) *detail = text; \
        return status;              \
    } while (0)

/* ---- the registry, read here: which arrays a variant reads (attn_inputs_of) and their names ---- */

#define SLOT_ALPHA IN_COUNT /* a head's slot that is not an input: a mixture's logits */
#define MAX_SLOTS (IN_COUNT + 1)

static const char *const input_names[IN_COUNT] = {
#define X(name) #name,
    ATTN_INPUT_LIST(X)
#undef X
};

static int str_eq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* ---- sizes, saturating so that a huge configuration is refused instead of wrapping ---- */

#define SAT_LIMIT ((int64_t)1 << 62)
static int64_t smul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > SAT_LIMIT / b ? SAT_LIMIT : a * b;
}
static int64_t sadd(int64_t a, int64_t b) { return a + b > SAT_LIMIT ? SAT_LIMIT : a + b; }

/* ---- the model's shape: every offset of the parameter table, derived from the config ---- */

typedef struct slot {
    int input;            /* an input_id, or SLOT_ALPHA */
    int ndim, rows, cols;
    int64_t count, offset; /* offset: floats from the head's first parameter */
    double init_std;       /* 0: constant zero */
} slot;

typedef struct model_shape {
    int V, T, D, H, layers, F, dh;
    attn_dims dims;            /* of every head's attention */
    int nslots;
    slot slots[MAX_SLOTS];     /* one head's parameters in table order */
    int nproj;                 /* of wq, wk, wx, wv: those the variant reads */
    int proj_slot[4];          /* their slot indices, in slot order */
    int alpha_slot;            /* -1 unless mixture */
    int npatterns;
    int patterns[ATTN_MODEL_MAX_PATTERNS];
    int64_t head_floats;
    int head_params;
    /* floats from the layer's first parameter */
    int64_t ln1g, ln1b, heads, wo, ln2g, ln2b, fc1, fc1b, fc2, fc2b, layer_floats;
    int layer_params;
    int64_t layers_off;        /* first float of layer 0 */
    int64_t lnfg, lnfb, out, outb, total;
    int params;
} model_shape;

/* Layer-level parameters after the heads, in table order. */
enum { LP_WO, LP_LN2G, LP_LN2B, LP_FC1, LP_FC1B, LP_FC2, LP_FC2B, LP_COUNT };

static int is_projection(int input) {
    return input == IN_q || input == IN_k || input == IN_x || input == IN_v;
}

/* The options of head h: the config's, with causal, the fixed pattern of the head and the mixture
 * weights as logits (from alpha, or 0 while only checking). */
static void head_options(const attn_model_config *cfg, const model_shape *s, int h,
                         const float *alpha, attn_options *opt) {
    *opt = cfg->options;
    opt->causal = cfg->causal != 0;
    if (cfg->variant == ATTN_FIXED) opt->pattern = s->patterns[h % s->npatterns];
    if (cfg->variant == ATTN_MIXTURE) {
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
    case IN_b1: case IN_b2: case IN_ba: case IN_bb: return 0.0;
    case IN_COUNT: break; /* not an input */
    }
    return 0.0;
}

static attn_status make_shape(const attn_model_config *cfg, model_shape *s, const char **detail) {
    if (!cfg) FAIL(ATTN_ERR_SHAPE, "config is required");
    *s = (model_shape){0};
    if ((uint32_t)cfg->variant >= ATTN_VARIANT_COUNT) FAIL(ATTN_ERR_UNKNOWN, "variant is not known");
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
    if (cfg->n_patterns && cfg->variant != ATTN_FIXED)
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
        head_options(cfg, s, h, 0, &opt);
        attn_status st = attn_check((attn_variant)cfg->variant, &s->dims, &opt, detail);
        if (st != ATTN_OK) return st;
    }

    /* One head's parameters: the arrays the variant (a mixture: its components) reads, in
     * ATTN_INPUT_LIST order with wv moved last and the mixture logits before it. */
    int reads[IN_COUNT] = {0};
    const input_shape *shapes[IN_COUNT] = {0};
    int ncomp = cfg->variant == ATTN_MIXTURE ? cfg->options.n_components : 1;
    for (int c = 0; c < ncomp; c++) {
        input_list list = attn_inputs_of((attn_variant)(cfg->variant == ATTN_MIXTURE ? cfg->options.component[c] : cfg->variant));
        for (int i = 0; i < list.count; i++) reads[list.at[i].input] = 1, shapes[list.at[i].input] = &list.at[i];
    }
    reads[IN_v] = 1;
    int order[MAX_SLOTS], norder = 0;
    for (int i = 0; i < IN_COUNT; i++)
        if (reads[i] && i != IN_v) order[norder++] = i;
    if (cfg->variant == ATTN_MIXTURE) order[norder++] = SLOT_ALPHA;
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

/* Entry `index` (< s->params) of the table. */
static void describe(const model_shape *s, int index, attn_model_param *info) {
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
    switch (j) {
    case LP_WO: set_info(info, index, base + s->wo, 2, D, D, proj_std, 0); break;
    case LP_LN2G: set_info(info, index, base + s->ln2g, 1, D, 1, 0, 1); break;
    case LP_LN2B: set_info(info, index, base + s->ln2b, 1, D, 1, 0, 0); break;
    case LP_FC1: set_info(info, index, base + s->fc1, 2, D, s->F, 0.02, 0); break;
    case LP_FC1B: set_info(info, index, base + s->fc1b, 1, s->F, 1, 0, 0); break;
    case LP_FC2: set_info(info, index, base + s->fc2, 2, s->F, D, proj_std, 0); break;
    default: set_info(info, index, base + s->fc2b, 1, D, 1, 0, 0); break;
    }
}

/* Parameter indices of the pieces the passes address directly. */
static int idx_layer(const model_shape *s, int l) { return 2 + l * s->layer_params; }
static int idx_head(const model_shape *s, int l, int h, int slot_index) {
    return idx_layer(s, l) + 2 + h * s->head_params + slot_index;
}
static int idx_after_heads(const model_shape *s, int l, int which) {
    return idx_layer(s, l) + 2 + s->H * s->head_params + which;
}
static int idx_final(const model_shape *s, int which) { return 2 + s->layers * s->layer_params + which; }
static int frozen(const attn_model_config *cfg, int index) { return cfg->frozen && cfg->frozen[index]; }

void attn_model_config_default(attn_model_config *cfg) {
    *cfg = (attn_model_config){0};
    cfg->variant = ATTN_SOFTMAX;
    cfg->weight_decay = 0.01f;
    cfg->r_std = 0.2;
    attn_options_default(&cfg->options);
}

attn_status attn_model_check(const attn_model_config *cfg, const char **detail) {
    model_shape s;
    return make_shape(cfg, &s, detail);
}

attn_status attn_model_param_count(const attn_model_config *cfg, int32_t *count, const char **detail) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, detail);
    if (st == ATTN_OK && count) *count = s.params;
    return st;
}

attn_status attn_model_param_info(const attn_model_config *cfg, int32_t index, attn_model_param *info,
                                  const char **detail) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!info) FAIL(ATTN_ERR_SHAPE, "info is required");
    if (index < 0 || index >= s.params) FAIL(ATTN_ERR_SHAPE, "index is outside the parameter table");
    describe(&s, index, info);
    return ATTN_OK;
}

attn_status attn_model_param_find(const attn_model_config *cfg, const char *name, int32_t *index,
                                  const char **detail) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!name) FAIL(ATTN_ERR_SHAPE, "name is required");
    for (int i = 0; i < s.params; i++) {
        attn_model_param info;
        describe(&s, i, &info);
        if (str_eq(info.name, name)) {
            if (index) *index = i;
            return ATTN_OK;
        }
    }
    FAIL(ATTN_ERR_UNKNOWN, "no parameter has this name");
}

attn_status attn_model_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, 0);
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
    attn_status st = make_shape(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s.total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    const double sqrt3 = __builtin_sqrt(3.0);
    for (int i = 0; i < s.params; i++) {
        attn_model_param info;
        describe(&s, i, &info);
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

/* ---- the workspace ---- */

typedef struct bufs {
    int B, NR;
    float *res;        /* (2 layers + 1) x [NR, D]: each layer's input, after attention, ..., final */
    float *acts;       /* layers x layer_floats: see layer_view */
    int64_t act_floats;
    float *lnf, *lnf_stats, *logits;
    float *dres, *dtmp, *dy, *dproj, *dpre, *wt, *head_grads, *attn_out;
    void *plan_ws;
    size_t plan_bytes;
    /* Threads: each thread's own attention workspace (plan_stride bytes apart) and output
     * scratch (T x dh floats apart), and one head_grads per sequence, summed in sequence order
     * after the sequences ran in parallel, as one thread sums them. */
    int threads;
    size_t plan_stride;
    float *row_loss;   /* [NR]: each position's cross-entropy */
    int32_t *row_hit;  /* [NR]: whether its argmax is the target */
} bufs;

typedef struct layer_view {
    float *ln1, *ln1_stats; /* stats: mean [NR], then 1/std [NR] */
    float *proj;            /* [H][nproj][NR, dh] */
    float *y;               /* [H][NR, dh] */
    float *ln2, *ln2_stats;
    float *pre, *act;       /* [NR, F]: fc1 output, GELU of it */
} layer_view;

static void layer_view_of(const model_shape *s, const bufs *w, int l, layer_view *v) {
    int64_t BD = (int64_t)w->NR * s->D, BF = (int64_t)w->NR * s->F;
    float *p = w->acts + l * w->act_floats;
    v->ln1 = p, p += BD;
    v->ln1_stats = p, p += 2 * w->NR;
    v->proj = p, p += s->nproj * BD;
    v->y = p, p += BD;
    v->ln2 = p, p += BD;
    v->ln2_stats = p, p += 2 * w->NR;
    v->pre = p, p += BF;
    v->act = p;
}

/* The largest attention workspace of any head (patterns differ, nothing else does). */
static attn_status plan_bytes(const attn_model_config *cfg, const model_shape *s, size_t *bytes,
                              const char **detail) {
    *bytes = 0;
    for (int h = 0; h < s->H && h < s->npatterns; h++) {
        attn_options opt;
        attn_plan plan;
        head_options(cfg, s, h, 0, &opt);
        attn_status st = attn_plan_make((attn_variant)cfg->variant, &s->dims, &opt, ATTN_WANT_GRADS, &plan, detail);
        if (st != ATTN_OK) return st;
        if (plan.workspace_bytes > *bytes) *bytes = plan.workspace_bytes;
    }
    return ATTN_OK;
}

/* Floats of one layer's transposed weights in bufs.wt (the backward pass: wt_layer). */
static int64_t wt_layer_floats(const model_shape *s) {
    return sadd(sadd(smul(2 * (int64_t)s->F, s->D), smul(s->D, s->D)), smul(smul(s->H, s->nproj), smul(s->dh, s->D)));
}

/* Carves (or, measuring, counts) the workspace of a batch. */
static void layout(const model_shape *s, int B, size_t pbytes, arena *ws, bufs *w) {
    int64_t NR = smul(B, s->T), D = s->D, F = s->F, V = s->V;
    int64_t BD = smul(NR, D), BF = smul(NR, F);
    w->B = B, w->NR = (int)(NR < SAT_LIMIT ? NR : 0);
    w->threads = attn_thread_count(); /* the same when measuring and running: fixed per instance */
    w->plan_stride = (pbytes + 15u) & ~(size_t)15u;
    w->plan_ws = arena_floats(ws, (uint64_t)smul(w->threads, (int64_t)w->plan_stride / 4)), w->plan_bytes = pbytes;
    w->res = arena_floats(ws, (uint64_t)smul(2 * (int64_t)s->layers + 1, BD));
    w->act_floats = sadd(sadd(smul(3 + s->nproj, BD), smul(2, BF)), 4 * NR);
    w->act_floats = (w->act_floats + 3) & ~(int64_t)3; /* keep every layer 16-byte aligned */
    w->acts = arena_floats(ws, (uint64_t)smul(s->layers, w->act_floats));
    w->lnf = arena_floats(ws, (uint64_t)BD);
    w->lnf_stats = arena_floats(ws, (uint64_t)smul(2, NR));
    w->logits = arena_floats(ws, (uint64_t)smul(NR, V));
    w->dres = arena_floats(ws, (uint64_t)BD);
    w->dtmp = arena_floats(ws, (uint64_t)BD);
    w->dy = arena_floats(ws, (uint64_t)BD);
    w->dproj = arena_floats(ws, (uint64_t)smul(s->nproj, BD));
    w->dpre = arena_floats(ws, (uint64_t)BF);
    w->wt = arena_floats(ws, (uint64_t)sadd(smul(V, D), smul(s->layers, wt_layer_floats(s))));
    w->head_grads = arena_floats(ws, (uint64_t)smul(B, s->head_floats));
    w->attn_out = arena_floats(ws, (uint64_t)smul(w->threads, smul(s->T, s->dh)));
    w->row_loss = arena_floats(ws, (uint64_t)NR);
    w->row_hit = (int32_t *)(void *)arena_floats(ws, (uint64_t)NR);
}

/* The workspace size, with the checks every pass needs on batch. */
static attn_status workspace_bytes(const attn_model_config *cfg, const model_shape *s, int32_t batch,
                                   size_t *bytes, size_t *pbytes, const char **detail) {
    if (batch < 1) FAIL(ATTN_ERR_SHAPE, "batch must be a positive integer");
    int64_t NR = smul(batch, s->T);
    int64_t widest = s->D > s->F ? s->D : s->F;
    if (s->V > widest) widest = s->V;
    if (smul(NR, widest) >= ((int64_t)1 << 31) || smul(s->nproj, smul(NR, s->D)) >= ((int64_t)1 << 31))
        FAIL(ATTN_ERR_MEMORY, "batch * seqLen * width exceeds 2^31");
    attn_status st = plan_bytes(cfg, s, pbytes, detail);
    if (st != ATTN_OK) return st;
    arena measure = {0, 0, 1, 1};
    bufs w;
    layout(s, batch, *pbytes, &measure, &w);
    uint64_t need = (measure.used + 15u) & ~(uint64_t)15u;
    if (need >= ARENA_LIMIT || need > (uint64_t)(SIZE_MAX / 2)) FAIL(ATTN_ERR_MEMORY, "the workspace does not fit in the address space");
    *bytes = (size_t)need;
    return ATTN_OK;
}

attn_status attn_model_workspace_size(const attn_model_config *cfg, int32_t batch, size_t *bytes) {
    model_shape s;
    size_t need, pbytes;
    attn_status st = make_shape(cfg, &s, 0);
    if (st == ATTN_OK) st = workspace_bytes(cfg, &s, batch, &need, &pbytes, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

/* ---- the pieces of a layer ---- */

typedef struct ln_args {
    int rows, D;
    const float *x, *g, *b, *stats, *dy;
    float *y, *stats_out, *dx, *dg, *db;
} ln_args;

static void layernorm_rows(const void *ctx, int lo, int hi) {
    const ln_args *a = ctx;
    int D = a->D;
    for (int i = lo; i < hi; i++) {
        const float *xr = a->x + (size_t)i * D;
        float *yr = a->y + (size_t)i * D;
        float sum = 0.0f, var = 0.0f;
        for (int c = 0; c < D; c++) sum += xr[c];
        float mean = sum / (float)D;
        for (int c = 0; c < D; c++) var += (xr[c] - mean) * (xr[c] - mean);
        float rstd = 1.0f / __builtin_sqrtf(var / (float)D + LN_EPS);
        for (int c = 0; c < D; c++) yr[c] = (xr[c] - mean) * rstd * a->g[c] + a->b[c];
        a->stats_out[i] = mean, a->stats_out[a->rows + i] = rstd;
    }
}

/* y = g * (x - mean) / sqrt(var + eps) + b per row (biased variance); keeps mean and 1/std. On
 * the calling thread: decoding's one position (the passes run layernorm_rows in their stages). */
static void layernorm(int rows, int D, const float *x, const float *g, const float *b, float *y,
                      float *stats) {
    ln_args a = {rows, D, x, g, b, 0, 0, y, stats, 0, 0, 0};
    layernorm_rows(&a, 0, rows);
}

static void layernorm_backward_rows(const void *ctx, int lo, int hi) {
    const ln_args *a = ctx;
    int D = a->D;
    for (int i = lo; i < hi; i++) {
        const float *xr = a->x + (size_t)i * D, *dyr = a->dy + (size_t)i * D;
        float *dxr = a->dx + (size_t)i * D;
        float mean = a->stats[i], rstd = a->stats[a->rows + i], s1 = 0.0f, s2 = 0.0f;
        for (int c = 0; c < D; c++) {
            float xhat = (xr[c] - mean) * rstd, dxhat = dyr[c] * a->g[c];
            s1 += dxhat, s2 += dxhat * xhat;
        }
        s1 /= (float)D, s2 /= (float)D;
        for (int c = 0; c < D; c++) {
            float xhat = (xr[c] - mean) * rstd;
            dxr[c] += rstd * (dyr[c] * a->g[c] - s1 - xhat * s2);
        }
    }
}

/* Columns [lo, hi) of dg and db, over the rows in order. */
static void layernorm_backward_columns(const void *ctx, int lo, int hi) {
    const ln_args *a = ctx;
    int D = a->D;
    float *dg = a->dg, *db = a->db;
    for (int i = 0; i < a->rows; i++) {
        const float *xr = a->x + (size_t)i * D, *dyr = a->dy + (size_t)i * D;
        float mean = a->stats[i], rstd = a->stats[a->rows + i];
        if (dg)
            for (int c = lo; c < hi; c++) dg[c] += dyr[c] * ((xr[c] - mean) * rstd);
        if (db)
            for (int c = lo; c < hi; c++) db[c] += dyr[c];
    }
}


/* tanh(u) = 1 - 2 / (exp(2u) + 1) with the library's exp, so every build computes the same GELU;
 * exp saturates at both ends, giving exactly +-1 there. */
static inline vf gelu_tanh(vf t) {
    vf t3 = vf_mul(vf_mul(t, t), t);
    vf u = vf_mul(vf_splat(GELU_C), vf_add(t, vf_mul(vf_splat(GELU_K), t3)));
    vf e = vf_exp(vf_add(u, u));
    return vf_sub(vf_splat(1.0f), vf_div(vf_splat(2.0f), vf_add(e, vf_splat(1.0f))));
}
static inline vf gelu4(vf t) {
    return vf_mul(vf_mul(vf_splat(0.5f), t), vf_add(vf_splat(1.0f), gelu_tanh(t)));
}
/* d gelu / dt = 0.5 (1 + th) + 0.5 t (1 - th^2) c (1 + 3k t^2) */
static inline vf gelu_grad4(vf t) {
    vf th = gelu_tanh(t), one = vf_splat(1.0f), half = vf_splat(0.5f);
    vf inner = vf_mul(vf_splat(GELU_C), vf_add(one, vf_mul(vf_splat(3.0f * GELU_K), vf_mul(t, t))));
    vf sech2 = vf_sub(one, vf_mul(th, th));
    return vf_add(vf_mul(half, vf_add(one, th)), vf_mul(vf_mul(vf_mul(half, t), sech2), inner));
}

typedef struct elem_args {
    const float *x;
    float *y;
} elem_args;

/* The tail goes through a padded vector, so every element sees the same instructions. */
static void gelu_forward_span(const void *ctx, int lo, int hi) {
    const elem_args *a = ctx;
    const float *x = a->x;
    float *y = a->y;
    int i = lo;
    for (; i + VW <= hi; i += VW) vf_store(y + i, gelu4(vf_load(x + i)));
    if (i < hi) {
        float t[VW] = {0};
        for (int j = i; j < hi; j++) t[j - i] = x[j];
        vf_store(t, gelu4(vf_load(t)));
        for (int j = i; j < hi; j++) y[j] = t[j - i];
    }
}
/* dx[i] *= gelu'(x[i]) */
static void gelu_backward_span(const void *ctx, int lo, int hi) {
    const elem_args *a = ctx;
    const float *x = a->x;
    float *dx = a->y;
    int i = lo;
    for (; i + VW <= hi; i += VW) vf_store(dx + i, vf_mul(vf_load(dx + i), gelu_grad4(vf_load(x + i))));
    if (i < hi) {
        float t[VW] = {0};
        for (int j = i; j < hi; j++) t[j - i] = x[j];
        vf_store(t, gelu_grad4(vf_load(t)));
        for (int j = i; j < hi; j++) dx[j] *= t[j - i];
    }
}
/* On the calling thread, as layernorm(); count < 2^31. */
static void gelu_forward(size_t count, const float *x, float *y) {
    elem_args a = {x, y};
    gelu_forward_span(&a, 0, (int)count);
}

/* Every row of x [rows, cols] set to b. */
static void broadcast_rows(int rows, int cols, const float *b, float *x) {
    for (int i = 0; i < rows; i++) attn_copy(x + (size_t)i * cols, b, cols);
}
static void add_into(size_t count, const float *a, const float *b, float *out) {
    for (size_t i = 0; i < count; i++) out[i] = a[i] + b[i];
}

/* C[m, N] = At^T B with At [K, m], B [K, N], K = the batch's rows: K in chunks so that the slices of
 * At and B a chunk reads stay in cache across the micro-kernel's column blocks. attn_gemm_tn with
 * accumulate continues each element's sum in the same k order, so the chunks change no rounding. */
#define WG_CHUNK 128
static void weight_grad(int m, int N, int K, const float *At, int lda, const float *B, int ldb, float *C, int ldc) {
    for (int k0 = 0; k0 < K; k0 += WG_CHUNK)
        attn_gemm_tn(m, N, imin(WG_CHUNK, K - k0), At + (size_t)k0 * lda, lda, B + (size_t)k0 * ldb, ldb, C, ldc, k0 > 0);
}

/* ---- stages: the independent work between two waits ----
 * A training step of a small model is dozens of short steps (a LayerNorm, a product, a GELU...),
 * and every job handed to the threads ends in a wait for its last piece. So the passes run in
 * stages: one job each, made of tasks that do not depend on one another — row blocks that carry a
 * chain of row-wise steps (a row's LayerNorm, its products with the weights, its GELU), and column
 * blocks of sums over every row (weight, bias and gain gradients), which read only what earlier
 * stages finished. A layer is a stage plus one per head forward, three plus one per head backward.
 *
 * Bits: a row block computes its rows with the operations one whole-matrix call uses (products
 * split at multiples of KP rows, as attn_gemm walks them; elementwise steps per element), and a
 * column block sums its columns over all rows in row order; so every thread count, and every
 * block size, gives the bits of one thread. */
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

static void stage_piece(void *ctx, int piece, int thread) {
    const stage *st = ctx;
    for (int i = 0; i < st->count; i++) {
        if (piece < st->tasks[i].pieces) {
            st->tasks[i].fn(st->tasks[i].ctx, piece, thread);
            return;
        }
        piece -= st->tasks[i].pieces;
    }
}

/* Runs the stage's tasks as one job, and empties it. Pieces are taken in the order tasks were
 * added: long ones first, short column blocks last to fill the gaps at the end. */
static void stage_run(stage *st) {
    int pieces = 0;
    for (int i = 0; i < st->count; i++) pieces += st->tasks[i].pieces;
    attn_parallel(pieces, stage_piece, st);
    st->count = 0;
}

/* Tasks of one stage are independent, so a full stage may run early: the rest follow in another. */
static void stage_add(stage *st, task_fn fn, const void *ctx, int pieces) {
    if (pieces <= 0) return;
    if (st->count == STAGE_TASKS) stage_run(st);
    st->tasks[st->count++] = (task){fn, ctx, pieces};
}

/* fn(ctx, lo, hi, thread) over [0, count) in blocks of `block`. */
typedef void (*block_fn)(const void *ctx, int lo, int hi, int thread);
typedef struct blocks {
    block_fn fn;
    const void *ctx;
    int count, block;
} blocks;

static void block_piece(const void *ctx, int piece, int thread) {
    const blocks *b = ctx;
    int lo = piece * b->block;
    b->fn(b->ctx, lo, imin(b->count, lo + b->block), thread);
}

/* Adds fn over [0, count) in blocks of a multiple of `align`, `per_thread` blocks per thread
 * (several even out uneven pieces; column sums, which each read every row, take one). */
static void stage_blocks(stage *st, blocks *b, int count, int align, int per_thread, block_fn fn, const void *ctx) {
    int threads = attn_thread_count();
    int block = round_up(imax(align, (count + per_thread * threads - 1) / (per_thread * threads)), align);
    *b = (blocks){fn, ctx, count, block};
    stage_add(st, block_piece, b, (count + block - 1) / block);
}

/* Row blocks of the batch: multiples of KP rows (see above), at least 16. */
static void stage_rows(stage *st, blocks *b, int rows, block_fn fn, const void *ctx) {
    stage_blocks(st, b, rows, 16, 4, fn, ctx);
}

/* Column sums: out += the column sums of x [rows, cols], rows in order. Blocks of a multiple of
 * 16 columns, so each block's axpy splits vector and scalar parts as one call over all columns. */
typedef struct colsum_args {
    int rows, cols;
    const float *x;
    float *out;
} colsum_args;
static void column_sums_block(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const colsum_args *a = ctx;
    for (int i = 0; i < a->rows; i++) attn_axpy(a->out + lo, a->x + (size_t)i * a->cols + lo, hi - lo, 1.0f);
}
static void stage_column_sums(stage *st, blocks *b, colsum_args *a, int rows, int cols, const float *x, float *out) {
    *a = (colsum_args){rows, cols, x, out};
    stage_blocks(st, b, cols, 16, 1, column_sums_block, a);
}

/* Weight gradients C_i[m, N] = At_i^T B_i (weight_grad, K = the batch's rows) of `count`
 * products of one shape, item i's pointers from at(); a piece is a block of rows of one C. */
typedef void (*product_fn)(const void *ctx, int item, const float **At, const float **B, float **C);
typedef struct products {
    int m, N, K, lda, ldb, ldc, rows, per;
    product_fn at;
    const void *ctx;
} products;

static void product_piece(const void *ctx, int piece, int thread) {
    (void)thread;
    const products *p = ctx;
    const float *At, *B;
    float *C;
    p->at(p->ctx, piece / p->per, &At, &B, &C);
    int i0 = (piece % p->per) * p->rows, rows = imin(p->rows, p->m - i0);
    if (C) weight_grad(rows, p->N, p->K, At + i0, p->lda, B, p->ldb, C + (size_t)i0 * p->ldc, p->ldc);
}

/* Adds the products: rows of C in blocks of at least 16 (a multiple of KP), about 2 per thread
 * over all products. A NULL C (a frozen weight) is skipped. */
static void stage_products(stage *st, products *p, int count) {
    int threads = attn_thread_count();
    int per = (threads * 2 + count - 1) / count;
    p->rows = round_up(imax(16, (p->m + per - 1) / per), KP);
    p->per = (p->m + p->rows - 1) / p->rows;
    stage_add(st, product_piece, p, count * p->per);
}

typedef struct one_product {
    const float *At, *B;
    float *C;
} one_product;
static void one_product_at(const void *ctx, int item, const float **At, const float **B, float **C) {
    (void)item;
    const one_product *o = ctx;
    *At = o->At, *B = o->B, *C = o->C;
}
/* One weight gradient C[m, N] = At^T B, At [K, m] (row stride lda). */
static void stage_weight_grad(stage *st, products *p, one_product *o, int m, int N, int K, const float *At,
                              int lda, const float *B, int ldb, float *C) {
    if (!C) return;
    *o = (one_product){At, B, C};
    *p = (products){.m = m, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = N, .at = one_product_at, .ctx = o};
    stage_products(st, p, 1);
}

static void ln_columns_block(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    layernorm_backward_columns(ctx, lo, hi);
}
/* The gain and bias gradients of a LayerNorm (dg, db may be NULL): sums over rows, by columns. */
static void stage_ln_columns(stage *st, blocks *b, ln_args *a, int rows, int D, const float *x,
                             const float *stats, const float *dy, float *dg, float *db) {
    if (!dg && !db) return;
    *a = (ln_args){rows, D, x, 0, 0, stats, dy, 0, 0, 0, dg, db};
    stage_blocks(st, b, D, 16, 1, ln_columns_block, a);
}

/* Attention inputs of head h (parameters at hp) for sequence b: the projections from `proj`. */
static void head_inputs(const model_shape *s, const float *hp, const float *proj, int h, int b,
                        int NR, attn_inputs *in) {
    *in = (attn_inputs){0};
    const float **field = (const float **)(void *)in;
    int k = 0;
    for (int i = 0; i < s->nslots; i++) {
        const slot *sl = &s->slots[i];
        if (sl->input == SLOT_ALPHA) continue;
        if (is_projection(sl->input))
            field[sl->input] = proj + ((size_t)(h * s->nproj + k++) * NR + (size_t)b * s->T) * s->dh;
        else
            field[sl->input] = hp + sl->offset;
    }
}

static attn_status head_plan(const attn_model_config *cfg, const model_shape *s, const float *hp, int h,
                             attn_plan *plan, const char **detail) {
    attn_options opt;
    head_options(cfg, s, h, s->alpha_slot >= 0 ? hp + s->slots[s->alpha_slot].offset : 0, &opt);
    return attn_plan_make((attn_variant)cfg->variant, &s->dims, &opt, ATTN_WANT_GRADS, plan, detail);
}

/* ---- the passes ---- */

/* One head's attention over the sequences of a batch, a piece per sequence b (threads.c): each
 * writes its own rows of y (and of dproj) and uses its thread's workspace slice; the backward
 * pass leaves the gradients of the head's own parameters per sequence, summed afterwards. */
typedef struct head_job {
    const model_shape *s;
    const bufs *w;
    const attn_plan *plan;
    const float *hp;
    float *hg;          /* backward: the head's parameter gradients */
    const float *proj;
    float *y;           /* forward: [H][NR, dh] */
    const attn_model_config *cfg;
    int h;
    attn_status status; /* the first failure (every piece runs the same plan: all fail alike) */
    const char *detail;
} head_job;

static void head_forward_piece(const void *ctx, int b, int thread) {
    head_job *job = (head_job *)(uintptr_t)ctx; /* the stage's task passes it back as const */
    const model_shape *s = job->s;
    const bufs *w = job->w;
    attn_inputs in;
    head_inputs(s, job->hp, job->proj, job->h, b, w->NR, &in);
    float *y = job->y + ((size_t)job->h * w->NR + (size_t)b * s->T) * s->dh;
    unsigned char *ws = (unsigned char *)w->plan_ws + (size_t)thread * w->plan_stride;
    const char *detail = 0;
    attn_status st = attn_plan_run(job->plan, &in, y, 0, 0, 0, ws, w->plan_bytes, &detail);
    if (st != ATTN_OK) job->status = st, job->detail = detail;
}

static void head_backward_piece(const void *ctx, int b, int thread) {
    head_job *job = (head_job *)(uintptr_t)ctx;
    const model_shape *s = job->s;
    const bufs *w = job->w;
    int NR = w->NR, T = s->T, dh = s->dh, h = job->h;
    attn_inputs in;
    head_inputs(s, job->hp, job->proj, h, b, NR, &in);
    float *head_grads = w->head_grads + (size_t)b * s->head_floats;
    attn_grads gr = {0};
    float **field = (float **)(void *)&gr;
    int k = 0;
    for (int i = 0; i < s->nslots; i++) {
        const slot *sl = &s->slots[i];
        if (sl->input == SLOT_ALPHA) gr.alpha = head_grads + sl->offset;
        else if (is_projection(sl->input))
            field[sl->input] = w->dproj + ((size_t)(h * s->nproj + k++) * NR + (size_t)b * T) * dh;
        else field[sl->input] = head_grads + sl->offset;
    }
    const float *dy = w->dy + ((size_t)h * NR + (size_t)b * T) * dh;
    unsigned char *ws = (unsigned char *)w->plan_ws + (size_t)thread * w->plan_stride;
    float *attn_out = w->attn_out + (size_t)thread * T * dh;
    const char *detail = 0;
    attn_status st = attn_plan_backward(job->plan, &in, dy, attn_out, &gr, ws, w->plan_bytes, &detail);
    if (st != ATTN_OK) job->status = st, job->detail = detail;
}

typedef struct ce_args {
    const model_shape *s;
    const bufs *w;
    const int32_t *targets;
    int counted, grads;
} ce_args;

/* Rows [lo, hi): each row's loss and hit into row_loss / row_hit, and with grads its gradient. */
static void cross_entropy_rows(const ce_args *a, int lo, int hi) {
    int V = a->s->V;
    for (int i = lo; i < hi; i++) {
        float *row = a->w->logits + (size_t)i * V;
        int t = a->targets[i];
        a->w->row_loss[i] = 0.0f, a->w->row_hit[i] = 0;
        if (t < 0) {
            if (a->grads) attn_fill(row, (size_t)V, 0.0f);
            continue;
        }
        float mx = attn_max(row, V), xt = row[t];
        int arg = 0;
        while (arg < V - 1 && !(row[arg] == mx)) arg++;
        a->w->row_hit[i] = arg == t;
        float sum = attn_exp_shift_sum(row, V, mx);
        a->w->row_loss[i] = attn_logf(sum) + mx - xt;
        if (a->grads) {
            attn_scale(row, V, 1.0f / sum);
            row[t] -= 1.0f;
            attn_scale(row, V, 1.0f / (float)a->counted);
        }
    }
}

/* The mean loss and the hits over the rows cross_entropy_rows filled: the rows' losses summed in
 * row order, in double. */
static void cross_entropy_total(const bufs *w, const int32_t *targets, int counted, float *loss, int32_t *correct) {
    double total = 0.0;
    int right = 0;
    for (int i = 0; i < w->NR; i++) {
        if (targets[i] < 0) continue;
        total += (double)w->row_loss[i];
        right += w->row_hit[i];
    }
    if (loss) *loss = counted ? (float)(total / counted) : 0.0f;
    if (correct) *correct = right;
}

/* ---- the forward pass: per layer, a stage of rows and a stage per head ---- */

typedef struct forward_ctx {
    const model_shape *s;
    const bufs *w;
    const float *P;
    const int32_t *tokens;
    int after;          /* the layer whose attention output these rows finish, or -1: the embedding */
    int next;           /* the layer whose LayerNorm and projections follow, or s->layers: the logits */
    float *logits;
    const ce_args *ce;  /* each row's loss (and gradient), or NULL */
} forward_ctx;

/* Rows [lo, hi) of the rest of layer l after its attention: the output projection (heads in
 * order, accumulating as one call per head does), the residual, LayerNorm, fc1 and GELU, fc2, the
 * residual. */
static void finish_layer_rows(const model_shape *s, const bufs *w, const float *P, int l, int lo, int hi) {
    int NR = w->NR, D = s->D, F = s->F, dh = s->dh, n = hi - lo;
    size_t BD = (size_t)NR * D;
    const float *Pl = P + s->layers_off + l * s->layer_floats;
    float *hin = w->res + 2 * (size_t)l * BD, *hmid = hin + BD, *hout = hmid + BD;
    layer_view v;
    layer_view_of(s, w, l, &v);
    float *tmp = w->dtmp + (size_t)lo * D;
    for (int h = 0; h < s->H; h++)
        attn_gemm(n, D, dh, v.y + ((size_t)h * NR + lo) * dh, dh, Pl + s->wo + (size_t)h * dh * D, D, tmp, D, h > 0);
    add_into((size_t)n * D, hin + (size_t)lo * D, tmp, hmid + (size_t)lo * D);
    ln_args ln = {NR, D, hmid, Pl + s->ln2g, Pl + s->ln2b, 0, 0, v.ln2, v.ln2_stats, 0, 0, 0};
    layernorm_rows(&ln, lo, hi);
    broadcast_rows(n, F, Pl + s->fc1b, v.pre + (size_t)lo * F);
    attn_gemm(n, F, D, v.ln2 + (size_t)lo * D, D, Pl + s->fc1, F, v.pre + (size_t)lo * F, F, 1);
    elem_args gelu = {v.pre, v.act};
    gelu_forward_span(&gelu, lo * F, hi * F);
    broadcast_rows(n, D, Pl + s->fc2b, tmp);
    attn_gemm(n, D, F, v.act + (size_t)lo * F, F, Pl + s->fc2, D, tmp, D, 1);
    add_into((size_t)n * D, hmid + (size_t)lo * D, tmp, hout + (size_t)lo * D);
}

/* Rows [lo, hi) from one attention to the next: the end of layer `after` (or the embedding), then
 * layer `next`'s LayerNorm and every head's projections (or the final LayerNorm, the logits and
 * the loss). */
static void forward_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const forward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    const float *P = c->P;
    int NR = w->NR, D = s->D, V = s->V, dh = s->dh, n = hi - lo;
    size_t BD = (size_t)NR * D;
    if (c->after < 0)
        for (int i = lo; i < hi; i++)
            add_into((size_t)D, P + (size_t)c->tokens[i] * D, P + (size_t)V * D + (size_t)(i % s->T) * D,
                     w->res + (size_t)i * D);
    else
        finish_layer_rows(s, w, P, c->after, lo, hi);
    if (c->next < s->layers) {
        const float *Pl = P + s->layers_off + c->next * s->layer_floats;
        layer_view v;
        layer_view_of(s, w, c->next, &v);
        ln_args ln = {NR, D, w->res + 2 * (size_t)c->next * BD, Pl + s->ln1g, Pl + s->ln1b, 0, 0, v.ln1, v.ln1_stats, 0, 0, 0};
        layernorm_rows(&ln, lo, hi);
        for (int h = 0; h < s->H; h++)
            for (int k = 0; k < s->nproj; k++)
                attn_gemm(n, dh, D, v.ln1 + (size_t)lo * D, D,
                          Pl + s->heads + h * s->head_floats + s->slots[s->proj_slot[k]].offset, dh,
                          v.proj + ((size_t)(h * s->nproj + k) * NR + lo) * dh, dh, 0);
    } else {
        ln_args ln = {NR, D, w->res + 2 * (size_t)s->layers * BD, P + s->lnfg, P + s->lnfb, 0, 0, w->lnf, w->lnf_stats, 0, 0, 0};
        layernorm_rows(&ln, lo, hi);
        float *logits = c->logits + (size_t)lo * V;
        broadcast_rows(n, V, P + s->outb, logits);
        attn_gemm(n, V, D, w->lnf + (size_t)lo * D, D, P + s->out, V, logits, V, 1);
        if (c->ce) cross_entropy_rows(c->ce, lo, hi);
    }
}

/* Logits of the batch; with `ce`, each row's loss too (and the loss's gradient in the logits). */
static attn_status forward(const attn_model_config *cfg, const model_shape *s, const float *P,
                           const int32_t *tokens, const bufs *w, float *logits, const ce_args *ce,
                           const char **detail) {
    stage st = {0};
    blocks rows;
    forward_ctx c = {s, w, P, tokens, -1, 0, logits, ce};
    for (int l = 0;; l++) {
        c.after = l - 1, c.next = l;
        stage_rows(&st, &rows, w->NR, forward_rows, &c);
        stage_run(&st);
        if (l == s->layers) return ATTN_OK;
        layer_view v;
        layer_view_of(s, w, l, &v);
        const float *Pl = P + s->layers_off + l * s->layer_floats;
        for (int h = 0; h < s->H; h++) {
            const float *hp = Pl + s->heads + h * s->head_floats;
            attn_plan plan;
            attn_status st_plan = head_plan(cfg, s, hp, h, &plan, detail);
            if (st_plan != ATTN_OK) return st_plan;
            head_job job = {s, w, &plan, hp, 0, v.proj, v.y, 0, h, ATTN_OK, 0};
            stage_add(&st, head_forward_piece, &job, w->B);
            stage_run(&st);
            if (job.status != ATTN_OK) {
                if (detail) *detail = job.detail;
                return job.status;
            }
        }
    }
}

/* ---- the backward pass: a stage at the top, then four a layer ----
 * Transposed weights (w->wt) let the row blocks take their products with attn_gemm: out^T [V, D]
 * first, then per layer fc2^T [D, F], fc1^T [F, D], wo^T [D, D] and each head's projections
 * W^T [dh, D] in (head, projection) order. */
static float *wt_layer(const model_shape *s, const bufs *w, int l) {
    return w->wt + (size_t)s->V * s->D + (size_t)l * (size_t)wt_layer_floats(s);
}

typedef struct backward_ctx {
    const attn_model_config *cfg;
    const model_shape *s;
    const bufs *w;
    const float *P;
    float *G;
    const int32_t *tokens;
    int l;
} backward_ctx;

/* Piece p: one weight of one layer transposed into w->wt. */
static void transpose_piece(const void *ctx, int piece, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    int D = s->D, F = s->F, dh = s->dh, per = 3 + s->H * s->nproj, l = piece / per, i = piece % per;
    const float *Pl = c->P + s->layers_off + l * s->layer_floats;
    float *t = wt_layer(s, c->w, l);
    size_t FD = (size_t)F * D;
    if (i == 0) attn_transpose(F, D, Pl + s->fc2, D, t, F, 1.0f);
    else if (i == 1) attn_transpose(D, F, Pl + s->fc1, F, t + FD, D, 1.0f);
    else if (i == 2) attn_transpose(D, D, Pl + s->wo, D, t + 2 * FD, D, 1.0f);
    else {
        int h = (i - 3) / s->nproj, k = (i - 3) % s->nproj;
        const float *W = Pl + s->heads + h * s->head_floats + s->slots[s->proj_slot[k]].offset;
        attn_transpose(D, dh, W, dh, t + 2 * FD + (size_t)D * D + (size_t)(i - 3) * dh * D, D, 1.0f);
    }
}

/* Rows [lo, hi) at the top: the logits' gradient (cross_entropy_rows left it in w->logits) back
 * through the output layer and the final LayerNorm into dres. */
static void top_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, V = s->V, n = hi - lo;
    attn_fill(w->dres + (size_t)lo * D, (size_t)n * D, 0.0f);
    attn_gemm(n, D, V, w->logits + (size_t)lo * V, V, w->wt, D, w->dtmp + (size_t)lo * D, D, 0);
    ln_args ln = {NR, D, w->res + 2 * (size_t)s->layers * NR * D, c->P + s->lnfg, 0, w->lnf_stats, w->dtmp, 0, 0,
                  w->dres, 0, 0};
    layernorm_backward_rows(&ln, lo, hi);
}

/* Rows [lo, hi), stage 1 of layer l: d pre-GELU = (dres fc2^T) * gelu'(pre). */
static void mlp_out_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int D = s->D, F = s->F;
    layer_view v;
    layer_view_of(s, w, c->l, &v);
    attn_gemm(hi - lo, F, D, w->dres + (size_t)lo * D, D, wt_layer(s, w, c->l), F, w->dpre + (size_t)lo * F, F, 0);
    elem_args gelu = {v.pre, w->dpre};
    gelu_backward_span(&gelu, lo * F, hi * F);
}

/* Rows [lo, hi), stage 2 of layer l: d ln2 = dpre fc1^T into dtmp, through LayerNorm 2 into dres
 * (the residual's gradient adds), then each head's d y = dres wo^T. */
static void mlp_in_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, F = s->F, dh = s->dh, n = hi - lo;
    size_t BD = (size_t)NR * D;
    const float *Pl = c->P + s->layers_off + c->l * s->layer_floats;
    const float *t = wt_layer(s, w, c->l);
    layer_view v;
    layer_view_of(s, w, c->l, &v);
    attn_gemm(n, D, F, w->dpre + (size_t)lo * F, F, t + (size_t)F * D, D, w->dtmp + (size_t)lo * D, D, 0);
    ln_args ln = {NR, D, w->res + (2 * (size_t)c->l + 1) * BD, Pl + s->ln2g, 0, v.ln2_stats, w->dtmp, 0, 0, w->dres, 0, 0};
    layernorm_backward_rows(&ln, lo, hi);
    for (int h = 0; h < s->H; h++)
        attn_gemm(n, dh, D, w->dres + (size_t)lo * D, D, t + 2 * (size_t)F * D + (size_t)h * dh, D,
                  w->dy + ((size_t)h * NR + lo) * dh, dh, 0);
}

/* Rows [lo, hi), stage 4 of layer l: d ln1 = the sum over heads and projections of dproj W^T
 * into dtmp (in (head, projection) order), through LayerNorm 1 into dres. */
static void attention_in_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, dh = s->dh, n = hi - lo;
    size_t BD = (size_t)NR * D;
    const float *Pl = c->P + s->layers_off + c->l * s->layer_floats;
    const float *t = wt_layer(s, w, c->l) + 2 * (size_t)s->F * D + (size_t)D * D;
    layer_view v;
    layer_view_of(s, w, c->l, &v);
    for (int hk = 0; hk < s->H * s->nproj; hk++)
        attn_gemm(n, D, dh, w->dproj + ((size_t)hk * NR + lo) * dh, dh, t + (size_t)hk * dh * D, D,
                  w->dtmp + (size_t)lo * D, D, hk > 0);
    ln_args ln = {NR, D, w->res + 2 * (size_t)c->l * BD, Pl + s->ln1g, 0, v.ln1_stats, w->dtmp, 0, 0, w->dres, 0, 0};
    layernorm_backward_rows(&ln, lo, hi);
}

/* Columns [lo, hi) of the embeddings' gradients: every row's dres into its token's and its
 * position's rows, rows in order. */
static void embedding_columns(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int D = s->D, T = s->T, tok = !frozen(c->cfg, 0), pos = !frozen(c->cfg, 1);
    for (int i = 0; i < w->NR; i++) {
        const float *d = w->dres + (size_t)i * D + lo;
        if (tok) attn_axpy(c->G + (size_t)c->tokens[i] * D + lo, d, hi - lo, 1.0f);
        if (pos) attn_axpy(c->G + (size_t)s->V * D + (size_t)(i % T) * D + lo, d, hi - lo, 1.0f);
    }
}

/* Item i = (head, projection): the projection's weight gradient ln1^T dproj (NULL C: frozen). */
typedef struct projection_grads {
    const backward_ctx *c;
    const float *ln1;
    float *Gl;
} projection_grads;
static void projection_grad_at(const void *ctx, int item, const float **At, const float **B, float **C) {
    const projection_grads *p = ctx;
    const model_shape *s = p->c->s;
    int h = item / s->nproj, k = item % s->nproj;
    *At = p->ln1, *B = p->c->w->dproj + (size_t)item * p->c->w->NR * s->dh;
    *C = frozen(p->c->cfg, idx_head(s, p->c->l, h, s->proj_slot[k]))
             ? 0 : p->Gl + s->heads + h * s->head_floats + s->slots[s->proj_slot[k]].offset;
}

/* Item h: wo's rows of head h, y_h^T dres. */
typedef struct output_grads {
    const bufs *w;
    const model_shape *s;
    const float *y;
    float *Gwo;
} output_grads;
static void output_grad_at(const void *ctx, int h, const float **At, const float **B, float **C) {
    const output_grads *o = ctx;
    *At = o->y + (size_t)h * o->w->NR * o->s->dh, *B = o->w->dres, *C = o->Gwo + (size_t)h * o->s->dh * o->s->D;
}

/* The sums of a layer's stage 3: LayerNorm 2's gain and bias (dg, db may be NULL) and wo's
 * gradient (og->Gwo NULL: frozen). */
static void stage_attention_sums(stage *st, blocks *lncols, ln_args *ln, products *prod, const output_grads *og,
                                 const float *hmid, const float *stats, float *dg, float *db) {
    const model_shape *s = og->s;
    int NR = og->w->NR;
    stage_ln_columns(st, lncols, ln, NR, s->D, hmid, stats, og->w->dtmp, dg, db);
    if (!og->Gwo) return;
    *prod = (products){.m = s->dh, .N = s->D, .K = NR, .lda = s->dh, .ldb = s->D, .ldc = s->D,
                       .at = output_grad_at, .ctx = og};
    stage_products(st, prod, s->H);
}

static attn_status backward(const attn_model_config *cfg, const model_shape *s, const float *P, float *G,
                            const int32_t *tokens, const bufs *w, const char **detail) {
    int NR = w->NR, D = s->D, F = s->F, V = s->V, dh = s->dh;
    size_t BD = (size_t)NR * D;
    attn_fill(G, (size_t)s->total, 0.0f);
    backward_ctx c = {cfg, s, w, P, G, tokens, s->layers};
    stage st = {0};
    blocks rows, sums, sums2, lncols;
    products prod, prod2;
    one_product one;
    colsum_args csum;
    ln_args pending; /* a LayerNorm's gain and bias sums, run in the next stage (they need all of dtmp) */
    {   /* the top: output layer and final LayerNorm; every transpose the layers will use */
        attn_transpose(D, V, P + s->out, V, w->wt, D, 1.0f);
        stage_rows(&st, &rows, NR, top_rows, &c);
        stage_weight_grad(&st, &prod, &one, D, V, NR, w->lnf, D, w->logits, V,
                          frozen(cfg, idx_final(s, 2)) ? 0 : G + s->out);
        if (!frozen(cfg, idx_final(s, 3))) stage_column_sums(&st, &sums, &csum, NR, V, w->logits, G + s->outb);
        stage_add(&st, transpose_piece, &c, s->layers * (3 + s->H * s->nproj));
        stage_run(&st);
    }
    const float *lnx = w->res + 2 * (size_t)s->layers * BD, *lnstats = w->lnf_stats;
    float *lndg = frozen(cfg, idx_final(s, 0)) ? 0 : G + s->lnfg, *lndb = frozen(cfg, idx_final(s, 1)) ? 0 : G + s->lnfb;

    for (int l = s->layers - 1; l >= 0; l--) {
        int64_t lo = s->layers_off + l * s->layer_floats;
        float *Gl = G + lo;
        const float *hin = w->res + 2 * (size_t)l * BD, *hmid = hin + BD;
        layer_view v;
        layer_view_of(s, w, l, &v);
        c.l = l;
#define LAYER_GRAD(which, field) (frozen(cfg, idx_after_heads(s, l, which)) ? 0 : Gl + s->field)
        /* 1: dres is the gradient of the layer's output: d pre-GELU; fc2's gradients; the
         * LayerNorm above's gain and bias */
        stage_rows(&st, &rows, NR, mlp_out_rows, &c);
        stage_weight_grad(&st, &prod, &one, F, D, NR, v.act, F, w->dres, D, LAYER_GRAD(LP_FC2, fc2));
        float *g = LAYER_GRAD(LP_FC2B, fc2b);
        if (g) stage_column_sums(&st, &sums, &csum, NR, D, w->dres, g);
        stage_ln_columns(&st, &lncols, &pending, NR, D, lnx, lnstats, w->dtmp, lndg, lndb);
        stage_run(&st);
        /* 2: through fc1 and LayerNorm 2 into dres (now the gradient of hmid), each head's d y;
         * fc1's gradients */
        stage_rows(&st, &rows, NR, mlp_in_rows, &c);
        stage_weight_grad(&st, &prod, &one, D, F, NR, v.ln2, D, w->dpre, F, LAYER_GRAD(LP_FC1, fc1));
        if ((g = LAYER_GRAD(LP_FC1B, fc1b))) stage_column_sums(&st, &sums, &csum, NR, F, w->dpre, g);
        stage_run(&st);
        /* 3: each head's attention backward, a piece per sequence; LayerNorm 2's gain and bias,
         * wo's gradient. With fewer sequences than threads the sums run first, in a stage of their
         * own, and each head's stage holds its sequences alone: a job of one piece runs inline, so
         * a lone sequence's attention splits over the threads itself (threads.c: within a job of
         * several pieces it would run serially). */
        output_grads og = {w, s, v.y, LAYER_GRAD(LP_WO, wo)};
        float *ln2g = LAYER_GRAD(LP_LN2G, ln2g), *ln2b = LAYER_GRAD(LP_LN2B, ln2b);
        int lone = w->B < attn_thread_count();
        for (int h = 0; h < s->H; h++) {
            const float *hp = P + lo + s->heads + h * s->head_floats;
            float *hg = Gl + s->heads + h * s->head_floats;
            attn_plan plan;
            attn_status st_plan = head_plan(cfg, s, hp, h, &plan, detail);
            if (st_plan != ATTN_OK) return st_plan;
            head_job job = {s, w, &plan, hp, hg, v.proj, 0, cfg, h, ATTN_OK, 0};
            if (h == 0 && lone) {
                stage_attention_sums(&st, &lncols, &pending, &prod2, &og, hmid, v.ln2_stats, ln2g, ln2b);
                stage_run(&st);
            }
            stage_add(&st, head_backward_piece, &job, w->B);
            if (h == 0 && !lone) /* after the head's pieces, to fill the gaps at the end */
                stage_attention_sums(&st, &lncols, &pending, &prod2, &og, hmid, v.ln2_stats, ln2g, ln2b);
            stage_run(&st);
            if (job.status != ATTN_OK) {
                if (detail) *detail = job.detail;
                return job.status;
            }
            for (int b = 0; b < w->B; b++) /* in sequence order, as one thread adds them */
                for (int i = 0; i < s->nslots; i++) {
                    const slot *sl = &s->slots[i];
                    if (!is_projection(sl->input) && !frozen(cfg, idx_head(s, l, h, i)))
                        attn_axpy(hg + sl->offset, w->head_grads + (size_t)b * s->head_floats + sl->offset,
                                  (int)sl->count, 1.0f);
                }
        }
        /* 4: through the projections and LayerNorm 1 into dres (now the gradient of hin); the
         * projections' gradients */
        stage_rows(&st, &rows, NR, attention_in_rows, &c);
        projection_grads pg = {&c, v.ln1, Gl};
        prod = (products){.m = D, .N = dh, .K = NR, .lda = D, .ldb = dh, .ldc = dh, .at = projection_grad_at, .ctx = &pg};
        stage_products(&st, &prod, s->H * s->nproj);
        stage_run(&st);
        lnx = hin, lnstats = v.ln1_stats;
        lndg = frozen(cfg, idx_layer(s, l)) ? 0 : Gl + s->ln1g, lndb = frozen(cfg, idx_layer(s, l) + 1) ? 0 : Gl + s->ln1b;
#undef LAYER_GRAD
    }
    /* the last LayerNorm's gain and bias, and the embeddings */
    stage_ln_columns(&st, &lncols, &pending, NR, D, lnx, lnstats, w->dtmp, lndg, lndb);
    if (!frozen(cfg, 0) || !frozen(cfg, 1)) stage_blocks(&st, &sums2, D, 16, 1, embedding_columns, &c);
    stage_run(&st);
    return ATTN_OK;
}

/* The checks and workspace carving every pass shares. */
static attn_status prepare(const attn_model_config *cfg, model_shape *s, const float *memory, size_t bytes,
                           const int32_t *tokens, const int32_t *targets, int32_t batch, void *workspace,
                           size_t ws_bytes, bufs *w, int *counted, const char **detail) {
    attn_status st = make_shape(cfg, s, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s->total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need, pbytes;
    st = workspace_bytes(cfg, s, batch, &need, &pbytes, detail);
    if (st != ATTN_OK) return st;
    if (!workspace || ws_bytes < need) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_model_workspace_size");
    if (!tokens) FAIL(ATTN_ERR_SHAPE, "tokens is required");
    int NR = batch * s->T;
    for (int i = 0; i < NR; i++)
        if (tokens[i] < 0 || tokens[i] >= s->V) FAIL(ATTN_ERR_VALUE, "tokens: a token is outside [0, vocab)");
    if (counted) {
        if (!targets) FAIL(ATTN_ERR_SHAPE, "targets is required");
        *counted = 0;
        for (int i = 0; i < NR; i++) {
            if (targets[i] < -1 || targets[i] >= s->V) FAIL(ATTN_ERR_VALUE, "targets: a target is outside [-1, vocab)");
            *counted += targets[i] >= 0;
        }
    }
    arena ws = {(unsigned char *)workspace, 0, 0, 1};
    layout(s, batch, pbytes, &ws, w);
    return ATTN_OK;
}

attn_status attn_model_forward(const attn_model_config *cfg, const float *memory, size_t bytes,
                               const int32_t *tokens, int32_t batch, float *logits,
                               void *workspace, size_t ws_bytes, const char **detail) {
    model_shape s;
    bufs w;
    attn_status st = prepare(cfg, &s, memory, bytes, tokens, 0, batch, workspace, ws_bytes, &w, 0, detail);
    if (st != ATTN_OK) return st;
    if (!logits) FAIL(ATTN_ERR_SHAPE, "logits is required");
    st = forward(cfg, &s, memory, tokens, &w, logits, 0, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}

static attn_status loss_pass(const attn_model_config *cfg, float *memory, size_t bytes, const int32_t *tokens,
                             const int32_t *targets, int32_t batch, float *loss, int32_t *correct,
                             int32_t *counted, void *workspace, size_t ws_bytes, int grads,
                             const char **detail) {
    model_shape s;
    bufs w;
    int count = 0;
    attn_status st = prepare(cfg, &s, memory, bytes, tokens, targets, batch, workspace, ws_bytes, &w, &count, detail);
    if (st != ATTN_OK) return st;
    ce_args ce = {&s, &w, targets, count, grads};
    st = forward(cfg, &s, memory, tokens, &w, w.logits, &ce, detail);
    if (st != ATTN_OK) return st;
    cross_entropy_total(&w, targets, count, loss, correct);
    if (counted) *counted = count;
    if (grads) st = backward(cfg, &s, memory, memory + s.total, tokens, &w, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}

attn_status attn_model_loss(const attn_model_config *cfg, const float *memory, size_t bytes,
                            const int32_t *tokens, const int32_t *targets, int32_t batch,
                            float *loss, int32_t *correct, int32_t *counted, void *workspace,
                            size_t ws_bytes, const char **detail) {
    /* grads = 0: the block is only read */
    return loss_pass(cfg, (float *)(uintptr_t)memory, bytes, tokens, targets, batch, loss, correct, counted,
                     workspace, ws_bytes, 0, detail);
}

attn_status attn_model_loss_backward(const attn_model_config *cfg, float *memory, size_t bytes,
                                     const int32_t *tokens, const int32_t *targets, int32_t batch,
                                     float *loss, int32_t *correct, int32_t *counted,
                                     void *workspace, size_t ws_bytes, const char **detail) {
    return loss_pass(cfg, memory, bytes, tokens, targets, batch, loss, correct, counted, workspace, ws_bytes, 1,
                     detail);
}

/* ---- AdamW ---- */

static double power(double x, int32_t n) { /* x^n by squaring: no libm in the freestanding build */
    double r = 1.0;
    for (; n; n >>= 1, x *= x)
        if (n & 1) r *= x;
    return r;
}

typedef struct adamw_job {
    const attn_model_config *cfg;
    const model_shape *s;
    float *P, *G, *M, *Vm;
    float lr, clip, bc1, bc2;
    int write;                        /* 0: only check that every result is finite */
    int bad[ATTN_MAX_THREADS];        /* per thread, so that no two threads write one word */
} adamw_job;

/* The update of parameter i (frozen ones are left alone): with write = 0 it computes the same
 * values and only notes, in bad[thread], whether any would not be finite. */
static void adamw_piece(void *ctx, int i, int thread) {
    adamw_job *j = ctx;
    if (frozen(j->cfg, i)) return;
    attn_model_param info;
    describe(j->s, i, &info);
    float wd = info.is_matrix ? j->cfg->weight_decay : 0.0f, lr = j->lr, clip = j->clip;
    float bc1 = j->bc1, bc2 = j->bc2;
    float *p = j->P + info.offset, *m = j->M + info.offset, *v = j->Vm + info.offset;
    const float *g = j->G + info.offset;
    float check = 0.0f; /* stays 0 while every value is finite: inf - inf and NaN make it NaN */
    for (int e = 0; e < info.count; e++) {
        float ge = g[e] * clip;
        float me = ADAM_B1 * m[e] + (1.0f - ADAM_B1) * ge;
        float ve = ADAM_B2 * v[e] + (1.0f - ADAM_B2) * ge * ge;
        float mhat = me / bc1, vhat = ve / bc2;
        float pe = p[e] - lr * (mhat / (__builtin_sqrtf(vhat) + ADAM_EPS) + wd * p[e]);
        if (j->write) {
            m[e] = me, v[e] = ve, p[e] = pe;
        } else {
            check += (pe - pe) + (me - me) + (ve - ve);
        }
    }
    if (!j->write && !(check == 0.0f)) j->bad[thread] = 1;
}

attn_status attn_model_adamw(const attn_model_config *cfg, float *memory, size_t bytes, float lr,
                             int32_t step, float *grad_norm, const char **detail) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s.total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    if (!(lr - lr == 0.0f) || lr < 0.0f) FAIL(ATTN_ERR_VALUE, "lr must be a finite number >= 0");
    if (step < 1) FAIL(ATTN_ERR_VALUE, "step must be an integer >= 1");
    float *P = memory, *G = memory + s.total, *M = G + s.total, *Vm = M + s.total;
    double norm2 = 0.0;
    for (int i = 0; i < s.params; i++) {
        if (frozen(cfg, i)) continue;
        attn_model_param info;
        describe(&s, i, &info);
        const float *g = G + info.offset;
        for (int e = 0; e < info.count; e++) norm2 += (double)g[e] * g[e];
    }
    double norm = __builtin_sqrt(norm2);
    if (grad_norm) *grad_norm = (float)norm;
    if (!(norm - norm == 0.0)) FAIL(ATTN_ERR_VALUE, "the gradient is not finite: nothing was changed");
    float clip = norm > 1.0 ? (float)(1.0 / norm) : 1.0f;
    adamw_job job = {cfg, &s, P, G, M, Vm, lr, clip, (float)(1.0 - power(ADAM_B1, step)),
                     (float)(1.0 - power(ADAM_B2, step)), 0, {0}};
    attn_parallel(s.params, adamw_piece, &job); /* a parameter a piece: elementwise, any order */
    for (int t = 0; t < ATTN_MAX_THREADS; t++)
        if (job.bad[t])
            FAIL(ATTN_ERR_VALUE, "the step would leave a parameter or an AdamW moment non-finite (lr or "
                                 "weightDecay too large for float32): nothing was changed");
    job.write = 1;
    attn_parallel(s.params, adamw_piece, &job);
    if (detail) *detail = "";
    return ATTN_OK;
}

/* ---- step-by-step decoding of a causal model ----
 * Position t needs, per head, only what earlier positions left behind, and each family keeps its
 * own (internal.h, "decoding"): the linear family's running state (docs/contract.md's causal
 * recurrences, so a step costs O(F * dv) whatever t is), or the values (and, when the variant reads
 * k, the keys) of positions 0..t for every other variant, whose row t each head computes directly:
 * O(t) per step instead of the O(t^2) of rerunning the prefix. Nothing here names a variant. The
 * state is the caller's: a header, the residual stream of the current position, then layers x
 * heads blocks of head_floats. */

#define DECODE_MAGIC 0x64656331u /* "dec1" */

typedef struct decode_header {
    uint32_t magic;
    int32_t next;   /* the position the next step must feed */
    uint64_t bytes; /* attn_model_decode_size of the configuration that reset it */
} decode_header;
_Static_assert(sizeof(decode_header) == 16, "the state's floats start 16-byte aligned");

enum { KEEP_STATE, KEEP_CACHE }; /* what a head carries from step to step */

typedef struct decode_shape {
    int keep;              /* KEEP_STATE: the linear family's; KEEP_CACHE: past values (and keys) */
    int cache_k;           /* KEEP_CACHE: whether the variant reads the keys */
    int64_t head_floats;   /* of one head's block, a multiple of 4 */
    int64_t state_floats;  /* header included */
    int64_t row_floats;    /* a softmax-type head's row of logits [T] */
    int64_t scratch_floats; /* a head's step: attn_linear_step_scratch or attn_logit_row_scratch */
} decode_shape;

/* The residual stream's floats in the state, rounded so that every head's block starts 16-byte aligned. */
static int64_t residual_floats(const model_shape *s) { return ((int64_t)s->D + 3) & ~(int64_t)3; }

static attn_status decode_shape_of(const attn_model_config *cfg, const model_shape *s, decode_shape *ds,
                                   const char **detail) {
    if (!cfg->causal)
        FAIL(ATTN_ERR_UNSUPPORTED, "a model that is not causal cannot be decoded step by step: each position attends to later ones");
    *ds = (decode_shape){0};
    attn_variant v = (attn_variant)cfg->variant;
    int64_t dh = s->dh, T = s->T;
    if (attn_family_is(v, "linear")) {
        ds->keep = KEEP_STATE;
        ds->head_floats = attn_linear_step_floats(v, s->dh, s->dh);
        ds->scratch_floats = attn_linear_step_scratch(v, s->dh);
    } else {
        ds->keep = KEEP_CACHE;
        for (int i = 0; i < s->nslots; i++) ds->cache_k |= s->slots[i].input == IN_k;
        ds->head_floats = smul(ds->cache_k ? 2 : 1, smul(T, dh)); /* v [T, dh], then k [T, dh] */
        if (!attn_family_is(v, "fixed")) {
            attn_options opt;
            head_options(cfg, s, 0, 0, &opt);
            ds->row_floats = T;
            ds->scratch_floats = (int64_t)attn_logit_row_scratch(v, &s->dims, &opt);
        }
    }
    ds->head_floats = (ds->head_floats + 3) & ~(int64_t)3;
    ds->state_floats = sadd(4 + residual_floats(s), smul(smul(s->layers, s->H), ds->head_floats));
    ds->state_floats = (ds->state_floats + 3) & ~(int64_t)3;
    if ((uint64_t)ds->state_floats > (uint64_t)(SIZE_MAX / 2) / 4u)
        FAIL(ATTN_ERR_MEMORY, "the decoding state does not fit in the address space");
    return ATTN_OK;
}

/* The scratch of one step. */
typedef struct decode_bufs {
    float *a, *proj, *ycat, *dtmp, *pre, *act; /* [D], [nproj][dh], [D], [D], [dFF], [dFF] */
    float *row, *scratch;                      /* a head's: row_floats, scratch_floats */
} decode_bufs;

static void decode_layout(const model_shape *s, const decode_shape *ds, arena *ws, decode_bufs *b) {
    int64_t D = s->D;
    b->a = arena_floats(ws, (uint64_t)D);
    b->proj = arena_floats(ws, (uint64_t)smul(s->nproj, s->dh));
    b->ycat = arena_floats(ws, (uint64_t)D);
    b->dtmp = arena_floats(ws, (uint64_t)D);
    b->pre = arena_floats(ws, (uint64_t)s->F);
    b->act = arena_floats(ws, (uint64_t)s->F);
    b->row = arena_floats(ws, (uint64_t)ds->row_floats);
    b->scratch = arena_floats(ws, (uint64_t)ds->scratch_floats);
}

static attn_status decode_ws_bytes(const model_shape *s, const decode_shape *ds, size_t *bytes,
                                   const char **detail) {
    arena measure = {0, 0, 1, 1};
    decode_bufs b;
    decode_layout(s, ds, &measure, &b);
    uint64_t need = (measure.used + 15u) & ~(uint64_t)15u;
    if (need >= ARENA_LIMIT || need > (uint64_t)(SIZE_MAX / 2)) FAIL(ATTN_ERR_MEMORY, "the decoding workspace does not fit in the address space");
    *bytes = (size_t)need;
    return ATTN_OK;
}

attn_status attn_model_decode_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    decode_shape ds;
    attn_status st = make_shape(cfg, &s, 0);
    if (st == ATTN_OK) st = decode_shape_of(cfg, &s, &ds, 0);
    if (st == ATTN_OK && bytes) *bytes = (size_t)ds.state_floats * 4u;
    return st;
}

attn_status attn_model_decode_workspace_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    decode_shape ds;
    size_t need = 0;
    attn_status st = make_shape(cfg, &s, 0);
    if (st == ATTN_OK) st = decode_shape_of(cfg, &s, &ds, 0);
    if (st == ATTN_OK) st = decode_ws_bytes(&s, &ds, &need, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

static float *head_block(const model_shape *s, const decode_shape *ds, void *state, int l, int h) {
    return (float *)state + 4 + residual_floats(s) + ((int64_t)l * s->H + h) * ds->head_floats;
}

attn_status attn_model_decode_reset(const attn_model_config *cfg, void *state) {
    model_shape s;
    decode_shape ds;
    attn_status st = make_shape(cfg, &s, 0);
    if (st == ATTN_OK) st = decode_shape_of(cfg, &s, &ds, 0);
    if (st != ATTN_OK) return st;
    if (!state) return ATTN_ERR_SHAPE;
    attn_fill((float *)state, (size_t)ds.state_floats, 0.0f);
    if (ds.keep == KEEP_STATE)
        for (int l = 0; l < s.layers; l++)
            for (int h = 0; h < s.H; h++)
                attn_linear_step_reset((attn_variant)cfg->variant, s.dh, s.dh, head_block(&s, &ds, state, l, h));
    decode_header *hd = (decode_header *)state;
    hd->magic = DECODE_MAGIC, hd->next = 0, hd->bytes = (uint64_t)ds.state_floats * 4u;
    return ATTN_OK;
}

/* y [dh] of head h at position t; the head's block (blk) absorbs the position. */
static void decode_head(const attn_model_config *cfg, const model_shape *s, const decode_shape *ds,
                        const float *hp, int h, float *blk, int t, decode_bufs *b, float *y) {
    int dh = s->dh;
    attn_variant variant = (attn_variant)cfg->variant;
    attn_options opt;
    head_options(cfg, s, h, s->alpha_slot >= 0 ? hp + s->slots[s->alpha_slot].offset : 0, &opt);
    attn_inputs in; /* position t's projections (one row each) and the head's parameters */
    head_inputs(s, hp, b->proj, 0, 0, 1, &in);
    if (ds->keep == KEEP_STATE) {
        attn_linear_step(variant, dh, dh, opt.eps, t, in.q, in.k, in.v, blk, b->scratch, y);
        return;
    }
    float *vcache = blk, *kcache = ds->cache_k ? blk + (size_t)s->T * dh : 0;
    attn_copy(vcache + (size_t)t * dh, in.v, dh);
    if (kcache) attn_copy(kcache + (size_t)t * dh, in.k, dh);
    if (attn_family_is(variant, "fixed")) {
        attn_fixed_row(&opt, t + 1, t, vcache, dh, y);
        return;
    }
    in.k = kcache, in.v = vcache; /* every position so far */
    attn_logit_row(variant, &s->dims, &in, &opt, t, b->scratch, b->row);
    attn_softmax_attend_row(b->row, t + 1, vcache, dh, y);
}

attn_status attn_model_decode_step(const attn_model_config *cfg, const float *memory, size_t bytes,
                                   void *state, int32_t token, int32_t position, float *logits,
                                   void *workspace, size_t ws_bytes, const char **detail) {
    model_shape s;
    decode_shape ds;
    attn_status st = make_shape(cfg, &s, detail);
    if (st == ATTN_OK) st = decode_shape_of(cfg, &s, &ds, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s.total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need;
    st = decode_ws_bytes(&s, &ds, &need, detail);
    if (st != ATTN_OK) return st;
    if (!workspace || ws_bytes < need) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_model_decode_workspace_size");
    if (!state) FAIL(ATTN_ERR_SHAPE, "state is required");
    if (!logits) FAIL(ATTN_ERR_SHAPE, "logits is required");
    decode_header *hd = (decode_header *)state;
    if (hd->magic != DECODE_MAGIC) FAIL(ATTN_ERR_VALUE, "state was not set up by attn_model_decode_reset");
    if (hd->bytes != (uint64_t)ds.state_floats * 4u)
        FAIL(ATTN_ERR_SHAPE, "state was reset for a configuration of another size");
    if (token < 0 || token >= s.V) FAIL(ATTN_ERR_VALUE, "token is outside [0, vocab)");
    if (position < 0) FAIL(ATTN_ERR_VALUE, "position must be >= 0");
    if (position >= s.T)
        FAIL(ATTN_ERR_VALUE, "position is past seqLen: the position embeddings and the Synthesizer's L-sized parameters end there");
    if (position != hd->next) FAIL(ATTN_ERR_VALUE, "position must be the number of tokens fed since attn_model_decode_reset");

    arena ws = {(unsigned char *)workspace, 0, 0, 1};
    decode_bufs b;
    decode_layout(&s, &ds, &ws, &b);
    int D = s.D, F = s.F, dh = s.dh, t = position;
    const float *P = memory;
    float *res = (float *)state + 4; /* the residual stream of this position */
    add_into((size_t)D, P + (size_t)token * D, P + (size_t)s.V * D + (size_t)t * D, res);
    for (int l = 0; l < s.layers; l++) {
        const float *Pl = P + s.layers_off + l * s.layer_floats;
        float stats[2];
        layernorm(1, D, res, Pl + s.ln1g, Pl + s.ln1b, b.a, stats);
        for (int h = 0; h < s.H; h++) {
            const float *hp = Pl + s.heads + h * s.head_floats;
            for (int k = 0; k < s.nproj; k++)
                attn_gemm(1, dh, D, b.a, D, hp + s.slots[s.proj_slot[k]].offset, dh, b.proj + (size_t)k * dh, dh, 0);
            decode_head(cfg, &s, &ds, hp, h, head_block(&s, &ds, state, l, h), t, &b, b.ycat + (size_t)h * dh);
        }
        for (int h = 0; h < s.H; h++)
            attn_gemm(1, D, dh, b.ycat + (size_t)h * dh, dh, Pl + s.wo + (size_t)h * dh * D, D, b.dtmp, D, h > 0);
        add_into((size_t)D, res, b.dtmp, res);
        layernorm(1, D, res, Pl + s.ln2g, Pl + s.ln2b, b.a, stats);
        attn_copy(b.pre, Pl + s.fc1b, F);
        attn_gemm(1, F, D, b.a, D, Pl + s.fc1, F, b.pre, F, 1);
        gelu_forward((size_t)F, b.pre, b.act);
        attn_copy(b.dtmp, Pl + s.fc2b, D);
        attn_gemm(1, D, F, b.act, F, Pl + s.fc2, D, b.dtmp, D, 1);
        add_into((size_t)D, res, b.dtmp, res);
    }
    float stats[2];
    layernorm(1, D, res, P + s.lnfg, P + s.lnfb, b.a, stats);
    attn_copy(logits, P + s.outb, s.V);
    attn_gemm(1, s.V, D, b.a, D, P + s.out, s.V, logits, s.V, 1);
    hd->next = position + 1;
    if (detail) *detail = "";
    return ATTN_OK;
}

/* ---- attention maps ---- */

/* The plan of head h that returns its weights (patterns differ between heads, nothing else). */
static attn_status map_plan(const attn_model_config *cfg, const model_shape *s, const float *hp, int h,
                            attn_plan *plan, const char **detail) {
    attn_options opt;
    head_options(cfg, s, h, s->alpha_slot >= 0 && hp ? hp + s->slots[s->alpha_slot].offset : 0, &opt);
    return attn_plan_make((attn_variant)cfg->variant, &s->dims, &opt, ATTN_WANT_WEIGHTS, plan, detail);
}

/* The forward pass's workspace for one sequence, then the output and workspace of a weights plan. */
static attn_status map_ws_bytes(const attn_model_config *cfg, const model_shape *s, size_t *bytes,
                                size_t *pbytes, size_t *wbytes, const char **detail) {
    size_t fwd;
    attn_status st = workspace_bytes(cfg, s, 1, &fwd, pbytes, detail);
    if (st != ATTN_OK) return st;
    *wbytes = 0;
    for (int h = 0; h < s->H && h < s->npatterns; h++) {
        attn_plan plan;
        st = map_plan(cfg, s, 0, h, &plan, detail);
        if (st != ATTN_OK) return st;
        if (plan.workspace_bytes > *wbytes) *wbytes = plan.workspace_bytes;
    }
    uint64_t need = (uint64_t)fwd + (((uint64_t)s->T * s->dh * 4u + 15u) & ~(uint64_t)15u) +
                    (((uint64_t)*wbytes + 15u) & ~(uint64_t)15u);
    if (need > (uint64_t)(SIZE_MAX / 2)) FAIL(ATTN_ERR_MEMORY, "the workspace does not fit in the address space");
    *bytes = (size_t)need;
    return ATTN_OK;
}

attn_status attn_model_attention_map_workspace_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    size_t need = 0, pbytes, wbytes;
    attn_status st = make_shape(cfg, &s, 0);
    if (st == ATTN_OK) st = map_ws_bytes(cfg, &s, &need, &pbytes, &wbytes, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

attn_status attn_model_attention_map(const attn_model_config *cfg, const float *memory, size_t bytes,
                                     const int32_t *tokens, int32_t layer, int32_t head, float *A,
                                     void *workspace, size_t ws_bytes, const char **detail) {
    model_shape s;
    attn_status st = make_shape(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    if (!memory || bytes < (size_t)s.total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need, pbytes, wbytes;
    st = map_ws_bytes(cfg, &s, &need, &pbytes, &wbytes, detail);
    if (st != ATTN_OK) return st;
    if (!workspace || ws_bytes < need) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_model_attention_map_workspace_size");
    if (!tokens) FAIL(ATTN_ERR_SHAPE, "tokens is required");
    if (!A) FAIL(ATTN_ERR_SHAPE, "A is required");
    if (layer < 0 || layer >= s.layers) FAIL(ATTN_ERR_SHAPE, "layer is outside [0, layers)");
    if (head < 0 || head >= s.H) FAIL(ATTN_ERR_SHAPE, "head is outside [0, heads)");
    for (int i = 0; i < s.T; i++)
        if (tokens[i] < 0 || tokens[i] >= s.V) FAIL(ATTN_ERR_VALUE, "tokens: a token is outside [0, vocab)");
    arena ws = {(unsigned char *)workspace, 0, 0, 1};
    bufs w;
    layout(&s, 1, pbytes, &ws, &w);
    float *out = arena_floats(&ws, (uint64_t)s.T * s.dh);
    void *plan_ws = arena_floats(&ws, (wbytes + 3u) / 4u);
    /* the whole forward pass: it leaves every layer's projections in the workspace */
    st = forward(cfg, &s, memory, tokens, &w, w.logits, 0, detail);
    if (st != ATTN_OK) return st;
    const float *hp = memory + s.layers_off + layer * s.layer_floats + s.heads + head * s.head_floats;
    layer_view v;
    layer_view_of(&s, &w, layer, &v);
    attn_plan plan;
    st = map_plan(cfg, &s, hp, head, &plan, detail);
    if (st != ATTN_OK) return st;
    attn_inputs in;
    head_inputs(&s, hp, v.proj, head, 0, s.T, &in);
    st = attn_plan_run(&plan, &in, out, A, 0, 0, plan_ws, wbytes, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}
