/* model.h — what the files of the model share; not part of the API. A model is told in seven files:
 *   model_shape.c   the configuration's checks, the parameter table (every offset) and the seeded
 *                   initialisation;
 *   model_open.c    the model opened once: its shape, every head's plan, the plans' workspace;
 *   model_layer.c   the ops of a layer, each forward beside its backward: LayerNorm, GELU, a head's
 *                   attention, the cross-entropy;
 *   model_pass.c    a batch through the layers and back (the forward and backward passes, as the
 *                   stages of stages.c), the workspace they share and the entry points;
 *   model_adamw.c   the optimiser;
 *   model_decode.c  step-by-step decoding of a causal model;
 *   model_map.c     the attention map of one head.
 * docs/model.md is their contract.
 */
#ifndef ATTN_MODEL_H
#define ATTN_MODEL_H

#include "internal.h"

/* ---- sizes, saturating so that a huge configuration is refused instead of wrapping ---- */

#define SAT_LIMIT ((int64_t)1 << 62)
static inline int64_t smul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    return a > SAT_LIMIT / b ? SAT_LIMIT : a * b;
}
static inline int64_t sadd(int64_t a, int64_t b) { return a + b > SAT_LIMIT ? SAT_LIMIT : a + b; }

/* ---- the shape: every offset of the parameter table, from the config (model_shape.c) ---- */

#define SLOT_ALPHA IN_COUNT /* a head's slot that is not an input: a mixture's logits */
#define MAX_SLOTS (IN_COUNT + 1)

typedef struct slot {
    int input;            /* an input_id, or SLOT_ALPHA */
    int ndim, rows, cols;
    int64_t count, offset; /* offset: floats from the head's first parameter */
    double init_std;       /* 0: constant zero */
} slot;

typedef struct model_shape {
    int V, T, D, H, layers, F, dh;
    int keeps_lse;             /* softmax-type heads: the forward pass keeps each row's log-sum-exp */
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
typedef enum layer_param { LP_WO, LP_LN2G, LP_LN2B, LP_FC1, LP_FC1B, LP_FC2, LP_FC2B, LP_COUNT } layer_param;

/* wq, wk, wx, wv: the projections of the layer's input that feed a head (the others are the
 * head's own parameters, read as they are). */
static inline int is_projection(int input) {
    return input == IN_q || input == IN_k || input == IN_x || input == IN_v;
}

/* Parameter indices of the pieces the passes address directly. */
static inline int idx_layer(const model_shape *s, int l) { return 2 + l * s->layer_params; }
static inline int idx_head(const model_shape *s, int l, int h, int slot_index) {
    return idx_layer(s, l) + 2 + h * s->head_params + slot_index;
}
static inline int idx_after_heads(const model_shape *s, int l, int which) {
    return idx_layer(s, l) + 2 + s->H * s->head_params + which;
}
static inline int idx_final(const model_shape *s, int which) { return 2 + s->layers * s->layer_params + which; }
/* Whether parameter `index` is frozen (no gradient, no update, not in the clipping norm). */
static inline int frozen(const attn_model_config *cfg, int index) { return cfg->frozen && cfg->frozen[index]; }


/* The shape of cfg, after every check of the configuration (attn_model_check). */
attn_status model_shape_of(const attn_model_config *cfg, model_shape *s, const char **detail);
/* The options of head h: the config's, with causal, the fixed pattern of the head and the mixture
 * weights as logits (from alpha, or 0 while only checking). */
void model_head_options(const attn_model_config *cfg, const model_shape *s, int h, const float *alpha,
                        attn_options *opt);
/* Entry `index` (< s->params) of the parameter table. */
void model_param_describe(const model_shape *s, int index, attn_model_param *info);

/* ---- the opened model (model_open.c) ---- */

#define MODEL_MAGIC 0x6d6f646cu /* "modl" */

/* What attn_model_open makes once and every pass reads. */
struct attn_model {
    uint32_t magic;
    int32_t threads;         /* attn_thread_count() at opening: the plans' and workspace's slices */
    attn_model_config cfg;   /* the caller's, copied (frozen still points at the caller's flags) */
    model_shape s;
    size_t plan_bytes;       /* the largest workspace of any head's plan */
    int32_t nplans;          /* layers * heads */
    attn_plan plans[];       /* head h of layer l at l * H + h, ATTN_WANT_KEPT, made with zero
                              * mixture logits (model_head_plan gives it the learned ones) */
};

/* The checks every pass makes of an opened model (opened, under this thread count). */
attn_status model_opened(const attn_model *m, const char **detail);
/* Head h of layer l's plan into *plan: the opened model's, with a mixture's weights set from the
 * head's alpha logits (parameters at hp); no plan is made. */
attn_status model_head_plan(const attn_model *m, int l, int h, const float *hp, attn_plan *plan,
                            const char **detail);

/* ---- the workspace of a batch (model_pass.c) ---- */

typedef struct bufs {
    int B, NR;
    float *res;        /* (2 layers + 1) x [NR, D]: each layer's input, after attention, ..., final */
    float *acts;       /* layers x layer_floats: see layer_view */
    int64_t act_floats;
    float *lnf, *lnf_stats, *logits;
    float *dres, *dtmp, *dy, *dproj, *dpre, *wt, *head_grads;
    void *plan_ws;
    size_t plan_bytes;
    /* Threads: each thread's own attention workspace (plan_stride bytes apart), and one
     * head_grads per sequence, summed in sequence order after the sequences ran in parallel, as
     * one thread sums them. */
    int threads;
    size_t plan_stride;
    float *row_loss;   /* [NR]: each position's cross-entropy */
    int32_t *row_hit;  /* [NR]: whether its argmax is the target */
} bufs;

typedef struct layer_view {
    float *ln1, *ln1_stats; /* stats: mean [NR], then 1/std [NR] */
    float *proj;            /* [H][nproj][NR, dh] */
    float *y;               /* [H][NR, dh] */
    float *lse;             /* [H][NR]: each row's log-sum-exp (keeps_lse), which the backward
                             * pass reads instead of running the head's forward pass again;
                             * NULL for the linear family and fixed, which keep nothing */
    float *ln2, *ln2_stats;
    float *pre, *act;       /* [NR, F]: fc1 output, GELU of it */
} layer_view;

/* Layer l's activations in the workspace. */
void model_layer_view(const model_shape *s, const bufs *w, int l, layer_view *v);
/* Carves (or, measuring, counts) the workspace of a batch of B sequences; pbytes: a head's plan. */
void model_layout(const model_shape *s, int B, size_t pbytes, arena *ws, bufs *w);
/* The workspace size of a batch, with the checks every pass needs on batch. */
attn_status model_workspace_bytes(const attn_model *m, int32_t batch, size_t *bytes, const char **detail);
/* Logits of the batch; with `ce`, each row's loss too (and the loss's gradient in the logits). */
typedef struct ce_args ce_args;
attn_status model_forward(const attn_model *m, const float *P, const int32_t *tokens, const bufs *w, float *logits,
                          const ce_args *ce, const char **detail);

/* ---- the ops of a layer (model_layer.c) ---- */

/* LayerNorm over rows of D: forward (y, and the mean and 1/std of each row in stats_out) and
 * backward (dx += through it, given the forward's stats; dg, db: sums over rows by columns). */
typedef struct ln_args {
    int rows, D;
    const float *x, *g, *b, *stats, *dy;
    float *y, *stats_out, *dx, *dg, *db;
} ln_args;
void model_layernorm_rows(const void *ctx, int lo, int hi);
void model_layernorm_backward_rows(const void *ctx, int lo, int hi);
/* The gain and bias gradients (dg, db may be NULL) as column blocks of a stage. */
void model_stage_ln_columns(stage *st, blocks *b, ln_args *a, int rows, int D, const float *x, const float *stats,
                            const float *dy, float *dg, float *db);
/* All rows on the calling thread: decoding's one position. */
void model_layernorm(int rows, int D, const float *x, const float *g, const float *b, float *y, float *stats);

/* GELU elementwise over [lo, hi) of x into y; backward: y (the gradient) *= gelu'(x). */
typedef struct elem_args {
    const float *x;
    float *y;
} elem_args;
void model_gelu_forward_span(const void *ctx, int lo, int hi);
void model_gelu_backward_span(const void *ctx, int lo, int hi);
void model_gelu_forward(size_t count, const float *x, float *y); /* on the calling thread */

/* A head's attention: its inputs (the projections from `proj`, the parameters at hp), its plan
 * (ATTN_WANT_KEPT), and the pieces (one per sequence) of its forward pass, which keeps y and lse,
 * and of its backward pass, which reads them (attn_plan_backward_kept: the gradients of
 * attn_plan_backward, bit for bit, without a second forward pass). */
void model_head_inputs(const model_shape *s, const float *hp, const float *proj, int h, int b, int NR,
                       attn_inputs *in);
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
    float *y;           /* [H][NR, dh]: the forward pass writes it, the backward pass reads it */
    float *lse;         /* [H][NR] (NULL: the head keeps none) */
    const attn_model_config *cfg;
    int h;
    attn_status status; /* the first failure (every piece runs the same plan: all fail alike) */
    const char *detail;
} head_job;
void model_head_forward_piece(const void *ctx, int b, int thread);
void model_head_backward_piece(const void *ctx, int b, int thread);

/* The masked cross-entropy: each row's loss and hit (and with grads, its gradient in the logits),
 * then the mean over the rows with a target, summed in row order. */
struct ce_args {
    const model_shape *s;
    const bufs *w;
    const int32_t *targets;
    int counted, grads;
};
void model_cross_entropy_rows(const ce_args *a, int lo, int hi);
void model_cross_entropy_total(const bufs *w, const int32_t *targets, int counted, float *loss, int32_t *correct);

/* ---- row helpers the passes and decoding share ---- */

/* Every row of x [rows, cols] set to b (a bias before a product accumulates onto it). */
static inline void broadcast_rows(int rows, int cols, const float *b, float *x) {
    for (int i = 0; i < rows; i++) attn_copy(x + (size_t)i * cols, b, cols);
}
/* out = a + b elementwise: the residual connections. */
static inline void add_into(size_t count, const float *a, const float *b, float *out) {
    for (size_t i = 0; i < count; i++) out[i] = a[i] + b[i];
}

#endif /* ATTN_MODEL_H */
