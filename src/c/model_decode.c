/* model_decode.c — step-by-step decoding of a causal model (docs/model.md, "Generation"), one
 * position per call.
 *
 * Position t needs, per head, only what earlier positions left behind, and each family keeps its
 * own (internal.h, "decoding"): the linear family's running state (docs/contract.md's causal
 * recurrences, so a step costs O(F * dv) whatever t is), or the values (and, when the variant reads
 * k, the keys) of positions 0..t for every other variant, whose row t each head computes directly:
 * O(t) per step instead of the O(t^2) of rerunning the prefix. Nothing here names a variant. The
 * state is the caller's: a header, the residual stream of the current position, then layers x
 * heads blocks of head_floats. The rest of a layer runs on the one row with the ops of
 * model_layer.c.
 */
#include "model.h"

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
    switch (attn_family_of(v)) {
    case FAMILY_linear: /* a state of fixed size per head */
        ds->keep = KEEP_STATE;
        ds->head_floats = attn_linear_step_floats(v, s->dh, s->dh);
        ds->scratch_floats = attn_linear_step_scratch(v, s->dh);
        break;
    case FAMILY_softmax:
    case FAMILY_synthesizer: /* a cache of the positions so far, and a row of logits per step */
    case FAMILY_fixed: {     /* a cache, no logits */
        ds->keep = KEEP_CACHE;
        for (int i = 0; i < s->nslots; i++) ds->cache_k |= s->slots[i].input == IN_k;
        ds->head_floats = smul(ds->cache_k ? 2 : 1, smul(T, dh)); /* v [T, dh], then k [T, dh] */
        if (attn_family_of(v) != FAMILY_fixed) {
            attn_options opt;
            model_head_options(cfg, s, 0, 0, &opt);
            ds->row_floats = T;
            ds->scratch_floats = (int64_t)attn_logit_row_scratch(v, &s->dims, &opt);
        }
        break;
    }
    case FAMILY_recurrent: /* refused by model_shape_of: no model holds one yet */
    case FAMILY_COUNT:
        break;
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

attn_status attn_model_decode_size(const attn_model *model, size_t *bytes) {
    decode_shape ds;
    attn_status st = model_opened(model, 0);
    if (st == ATTN_OK) st = decode_shape_of(&model->cfg, &model->s, &ds, 0);
    if (st == ATTN_OK && bytes) *bytes = (size_t)ds.state_floats * 4u;
    return st;
}

attn_status attn_model_decode_workspace_size(const attn_model *model, size_t *bytes) {
    decode_shape ds;
    size_t need = 0;
    attn_status st = model_opened(model, 0);
    if (st == ATTN_OK) st = decode_shape_of(&model->cfg, &model->s, &ds, 0);
    if (st == ATTN_OK) st = decode_ws_bytes(&model->s, &ds, &need, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

static float *head_block(const model_shape *s, const decode_shape *ds, void *state, int l, int h) {
    return (float *)state + 4 + residual_floats(s) + ((int64_t)l * s->H + h) * ds->head_floats;
}

attn_status attn_model_decode_reset(const attn_model *model, void *state) {
    decode_shape ds;
    attn_status st = model_opened(model, 0);
    if (st == ATTN_OK) st = decode_shape_of(&model->cfg, &model->s, &ds, 0);
    if (st != ATTN_OK) return st;
    const attn_model_config *cfg = &model->cfg;
    const model_shape *s = &model->s;
    if (!state) return ATTN_ERR_SHAPE;
    attn_fill((float *)state, (size_t)ds.state_floats, 0.0f);
    if (ds.keep == KEEP_STATE)
        for (int l = 0; l < s->layers; l++)
            for (int h = 0; h < s->H; h++)
                attn_linear_step_reset((attn_variant)cfg->variant, s->dh, s->dh, head_block(s, &ds, state, l, h));
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
    model_head_options(cfg, s, h, s->alpha_slot >= 0 ? hp + s->slots[s->alpha_slot].offset : 0, &opt);
    attn_inputs in; /* position t's projections (one row each) and the head's parameters */
    model_head_inputs(s, hp, b->proj, 0, 0, 1, &in);
    float *vcache = blk, *kcache = ds->cache_k ? blk + (size_t)s->T * dh : 0;
    switch (attn_family_of(variant)) {
    case FAMILY_linear:
        attn_linear_step(variant, dh, dh, opt.eps, t, in.q, in.k, in.v, blk, b->scratch, y);
        return;
    case FAMILY_fixed:
        attn_copy(vcache + (size_t)t * dh, in.v, dh);
        attn_fixed_row(&opt, t + 1, t, vcache, dh, y);
        return;
    case FAMILY_softmax:
    case FAMILY_synthesizer:
        attn_copy(vcache + (size_t)t * dh, in.v, dh);
        if (kcache) attn_copy(kcache + (size_t)t * dh, in.k, dh);
        in.k = kcache, in.v = vcache; /* every position so far */
        attn_logit_row(variant, &s->dims, &in, &opt, t, b->scratch, b->row);
        attn_softmax_attend_row(b->row, t + 1, vcache, dh, y);
        return;
    case FAMILY_recurrent: /* refused by model_shape_of: no model holds one yet */
    case FAMILY_COUNT:
        return;
    }
}

attn_status attn_model_decode_step(const attn_model *model, const float *memory, size_t bytes,
                                   void *state, int32_t token, int32_t position, float *logits,
                                   void *workspace, size_t ws_bytes, const char **detail) {
    decode_shape ds;
    attn_status st = model_opened(model, detail);
    if (st == ATTN_OK) st = decode_shape_of(&model->cfg, &model->s, &ds, detail);
    if (st != ATTN_OK) return st;
    const attn_model_config *cfg = &model->cfg;
    const model_shape *s = &model->s;
    if (!memory || bytes < (size_t)s->total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need;
    st = decode_ws_bytes(s, &ds, &need, detail);
    if (st != ATTN_OK) return st;
    if (!workspace || ws_bytes < need) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_model_decode_workspace_size");
    if (!state) FAIL(ATTN_ERR_SHAPE, "state is required");
    if (!logits) FAIL(ATTN_ERR_SHAPE, "logits is required");
    decode_header *hd = (decode_header *)state;
    if (hd->magic != DECODE_MAGIC) FAIL(ATTN_ERR_VALUE, "state was not set up by attn_model_decode_reset");
    if (hd->bytes != (uint64_t)ds.state_floats * 4u)
        FAIL(ATTN_ERR_SHAPE, "state was reset for a configuration of another size");
    if (token < 0 || token >= s->V) FAIL(ATTN_ERR_VALUE, "token is outside [0, vocab)");
    if (position < 0) FAIL(ATTN_ERR_VALUE, "position must be >= 0");
    if (position >= s->T)
        FAIL(ATTN_ERR_VALUE, "position is past seqLen: the position embeddings and the Synthesizer's L-sized parameters end there");
    if (position != hd->next) FAIL(ATTN_ERR_VALUE, "position must be the number of tokens fed since attn_model_decode_reset");

    arena ws = {(unsigned char *)workspace, 0, 0, 1};
    decode_bufs b;
    decode_layout(s, &ds, &ws, &b);
    int D = s->D, F = s->F, dh = s->dh, t = position;
    const float *P = memory;
    float *res = (float *)state + 4; /* the residual stream of this position */
    add_into((size_t)D, P + (size_t)token * D, P + (size_t)s->V * D + (size_t)t * D, res);
    for (int l = 0; l < s->layers; l++) {
        const float *Pl = P + s->layers_off + l * s->layer_floats;
        float stats[2];
        model_layernorm(1, D, res, Pl + s->ln1g, Pl + s->ln1b, b.a, stats);
        for (int h = 0; h < s->H; h++) {
            const float *hp = Pl + s->heads + h * s->head_floats;
            for (int k = 0; k < s->nproj; k++)
                attn_gemm(1, dh, D, b.a, D, hp + s->slots[s->proj_slot[k]].offset, dh, b.proj + (size_t)k * dh, dh, 0);
            decode_head(cfg, s, &ds, hp, h, head_block(s, &ds, state, l, h), t, &b, b.ycat + (size_t)h * dh);
        }
        for (int h = 0; h < s->H; h++)
            attn_gemm(1, D, dh, b.ycat + (size_t)h * dh, dh, Pl + s->wo + (size_t)h * dh * D, D, b.dtmp, D, h > 0);
        add_into((size_t)D, res, b.dtmp, res);
        model_layernorm(1, D, res, Pl + s->ln2g, Pl + s->ln2b, b.a, stats);
        attn_copy(b.pre, Pl + s->fc1b, F);
        attn_gemm(1, F, D, b.a, D, Pl + s->fc1, F, b.pre, F, 1);
        model_gelu_forward((size_t)F, b.pre, b.act);
        attn_copy(b.dtmp, Pl + s->fc2b, D);
        attn_gemm(1, D, F, b.act, F, Pl + s->fc2, D, b.dtmp, D, 1);
        add_into((size_t)D, res, b.dtmp, res);
    }
    float stats[2];
    model_layernorm(1, D, res, P + s->lnfg, P + s->lnfb, b.a, stats);
    attn_copy(logits, P + s->outb, s->V);
    attn_gemm(1, s->V, D, b.a, D, P + s->out, s->V, logits, s->V, 1);
    hd->next = position + 1;
    if (detail) *detail = "";
    return ATTN_OK;
}
