/* model_pass.c — a batch through the model and back: the workspace the passes share, the forward
 * pass (logits, and the masked cross-entropy), the full backward pass, and the entry points that
 * check their inputs and run them.
 *
 * Activations are [NR, width] row-major with NR = batch * seq_len rows (sequence-major). Every
 * matrix product is attn_gemm / attn_gemm_tn (the packed micro-kernel), including the transposed
 * products of the backward pass, whose transposed weights go through a small scratch. Per head the
 * projections live head-major ([head][rows][dh]), the layout attn_plan_run reads in place;
 * concat(y) wo is then a sum over heads of y_h wo[h*dh.., :], accumulated in head order, which is
 * the k order of one product over the concatenation. The passes run as stages (stages.c) of the
 * ops of model_layer.c.
 *
 * Determinism: every reduction (bias and LayerNorm sums over rows, parameter gradients of the
 * heads over the sequences of a batch, the loss) runs in one fixed order.
 */
#include "model.h"

/* ---- the workspace ---- */

void model_layer_view(const model_shape *s, const bufs *w, int l, layer_view *v) {
    int64_t BD = (int64_t)w->NR * s->D, BF = (int64_t)w->NR * s->F;
    float *p = w->acts + l * w->act_floats;
    v->ln1 = p, p += BD;
    v->ln1_stats = p, p += 2 * w->NR;
    v->proj = p, p += s->nproj * BD;
    v->y = p, p += BD;
    v->ln2 = p, p += BD;
    v->ln2_stats = p, p += 2 * w->NR;
    v->pre = p, p += BF;
    v->act = p, p += BF;
    v->lse = s->keeps_lse ? p : 0; /* last: the buffers before it keep the offsets they had without it */
}

/* Floats of one layer's transposed weights in bufs.wt (the backward pass: wt_layer). */
static int64_t wt_layer_floats(const model_shape *s) {
    return sadd(sadd(smul(2 * (int64_t)s->F, s->D), smul(s->D, s->D)), smul(smul(s->H, s->nproj), smul(s->dh, s->D)));
}

/* Carves (or, measuring, counts) the workspace of a batch. */
void model_layout(const model_shape *s, int B, size_t pbytes, arena *ws, bufs *w) {
    int64_t NR = smul(B, s->T), D = s->D, F = s->F, V = s->V;
    int64_t BD = smul(NR, D), BF = smul(NR, F);
    w->B = B, w->NR = (int)(NR < SAT_LIMIT ? NR : 0);
    w->threads = attn_thread_count(); /* the same when measuring and running: fixed per instance */
    w->plan_stride = (pbytes + 15u) & ~(size_t)15u;
    w->plan_ws = arena_floats(ws, (uint64_t)smul(w->threads, (int64_t)w->plan_stride / 4)), w->plan_bytes = pbytes;
    w->res = arena_floats(ws, (uint64_t)smul(2 * (int64_t)s->layers + 1, BD));
    w->act_floats = sadd(sadd(smul(3 + s->nproj, BD), smul(2, BF)), sadd(4 * NR, s->keeps_lse ? smul(s->H, NR) : 0));
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
    w->row_loss = arena_floats(ws, (uint64_t)NR);
    w->row_hit = (int32_t *)(void *)arena_floats(ws, (uint64_t)NR);
}

/* The workspace size, with the checks every pass needs on batch. */
attn_status model_workspace_bytes(const attn_model *m, int32_t batch, size_t *bytes, const char **detail) {
    const model_shape *s = &m->s;
    if (batch < 1) FAIL(ATTN_ERR_SHAPE, "batch must be a positive integer");
    int64_t NR = smul(batch, s->T);
    int64_t widest = s->D > s->F ? s->D : s->F;
    if (s->V > widest) widest = s->V;
    if (smul(NR, widest) >= ((int64_t)1 << 31) || smul(s->nproj, smul(NR, s->D)) >= ((int64_t)1 << 31))
        FAIL(ATTN_ERR_MEMORY, "batch * seqLen * width exceeds 2^31");
    arena measure = {0, 0, 1, 1};
    bufs w;
    model_layout(s, batch, m->plan_bytes, &measure, &w);
    uint64_t need = (measure.used + 15u) & ~(uint64_t)15u;
    if (need >= ARENA_LIMIT || need > (uint64_t)(SIZE_MAX / 2)) FAIL(ATTN_ERR_MEMORY, "the workspace does not fit in the address space");
    *bytes = (size_t)need;
    return ATTN_OK;
}

attn_status attn_model_workspace_size(const attn_model *model, int32_t batch, size_t *bytes) {
    size_t need;
    attn_status st = model_opened(model, 0);
    if (st == ATTN_OK) st = model_workspace_bytes(model, batch, &need, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

/* ---- the forward pass: the embedding, then per layer its norm and projections, its heads'
 * attention, its output and MLP, then the logits. Each part is a stage (stages.c): rows split
 * over the threads, or a head's sequences. ---- */

typedef struct forward_ctx {
    const model_shape *s;
    const bufs *w;
    const float *P;
    const int32_t *tokens;
    int l;              /* the layer the rows are in */
    float *logits;
    const ce_args *ce;  /* each row's loss (and gradient), or NULL */
} forward_ctx;

/* The rows of one part, as a stage over the threads (every row's operations those of one call). */
static void run_rows(const bufs *w, block_fn rows_fn, const forward_ctx *c) {
    stage st = {0};
    blocks rows;
    attn_stage_rows(&st, &rows, w->NR, rows_fn, c);
    attn_stage_run(&st);
}

/* Rows [lo, hi): h = tok_emb[token] + pos_emb[position], layer 0's input. */
static void embed_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const forward_ctx *c = ctx;
    const model_shape *s = c->s;
    int D = s->D, V = s->V;
    for (int i = lo; i < hi; i++)
        add_into((size_t)D, c->P + (size_t)c->tokens[i] * D, c->P + (size_t)V * D + (size_t)(i % s->T) * D,
                 c->w->res + (size_t)i * D);
}

/* Rows [lo, hi) of layer l: a = LN1(h), then every head's projections of a (head-major). */
static void norm_project_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const forward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, dh = s->dh, n = hi - lo;
    const float *Pl = c->P + s->layers_off + c->l * s->layer_floats;
    layer_view v;
    model_layer_view(s, w, c->l, &v);
    ln_args ln = {NR, D, w->res + 2 * (size_t)c->l * NR * D, Pl + s->ln1g, Pl + s->ln1b, 0, 0, v.ln1, v.ln1_stats, 0, 0, 0};
    model_layernorm_rows(&ln, lo, hi);
    for (int h = 0; h < s->H; h++)
        for (int k = 0; k < s->nproj; k++)
            attn_gemm(n, dh, D, v.ln1 + (size_t)lo * D, D, Pl + s->heads + h * s->head_floats + s->slots[s->proj_slot[k]].offset,
                      dh, v.proj + ((size_t)(h * s->nproj + k) * NR + lo) * dh, dh, 0);
}

/* Layer l's heads, one after another, each a stage of its sequences: y_h = attention(q, k, v, ...)
 * from the head's plan (made when the model was opened). */
static attn_status attend(const attn_model *m, const float *P, const bufs *w, int l, const char **detail) {
    const model_shape *s = &m->s;
    layer_view v;
    model_layer_view(s, w, l, &v);
    const float *Pl = P + s->layers_off + l * s->layer_floats;
    for (int h = 0; h < s->H; h++) {
        const float *hp = Pl + s->heads + h * s->head_floats;
        attn_plan plan;
        attn_status st = model_head_plan(m, l, h, hp, &plan, detail);
        if (st != ATTN_OK) return st;
        head_job job = {s, w, &plan, hp, 0, v.proj, v.y, v.lse, 0, h, ATTN_OK, 0};
        stage heads = {0};
        attn_stage_add(&heads, model_head_forward_piece, &job, w->B);
        attn_stage_run(&heads);
        if (job.status != ATTN_OK) {
            if (detail) *detail = job.detail;
            return job.status;
        }
    }
    return ATTN_OK;
}

/* Rows [lo, hi) of layer l after its attention: h += concat(y) wo (heads in order, accumulating as
 * one call per head does); h += fc2(GELU(fc1(LN2(h)))). */
static void output_mlp_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const forward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, F = s->F, dh = s->dh, n = hi - lo;
    size_t BD = (size_t)NR * D;
    const float *Pl = c->P + s->layers_off + c->l * s->layer_floats;
    float *hin = w->res + 2 * (size_t)c->l * BD, *hmid = hin + BD, *hout = hmid + BD;
    layer_view v;
    model_layer_view(s, w, c->l, &v);
    float *tmp = w->dtmp + (size_t)lo * D;
    for (int h = 0; h < s->H; h++)
        attn_gemm(n, D, dh, v.y + ((size_t)h * NR + lo) * dh, dh, Pl + s->wo + (size_t)h * dh * D, D, tmp, D, h > 0);
    add_into((size_t)n * D, hin + (size_t)lo * D, tmp, hmid + (size_t)lo * D);
    ln_args ln = {NR, D, hmid, Pl + s->ln2g, Pl + s->ln2b, 0, 0, v.ln2, v.ln2_stats, 0, 0, 0};
    model_layernorm_rows(&ln, lo, hi);
    broadcast_rows(n, F, Pl + s->fc1b, v.pre + (size_t)lo * F);
    attn_gemm(n, F, D, v.ln2 + (size_t)lo * D, D, Pl + s->fc1, F, v.pre + (size_t)lo * F, F, 1);
    elem_args gelu = {v.pre, v.act};
    model_gelu_forward_span(&gelu, lo * F, hi * F);
    broadcast_rows(n, D, Pl + s->fc2b, tmp);
    attn_gemm(n, D, F, v.act + (size_t)lo * F, F, Pl + s->fc2, D, tmp, D, 1);
    add_into((size_t)n * D, hmid + (size_t)lo * D, tmp, hout + (size_t)lo * D);
}

/* Rows [lo, hi) at the top: logits = LNf(h) out + outb, and with ce each row's loss. */
static void logits_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const forward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int NR = w->NR, D = s->D, V = s->V, n = hi - lo;
    ln_args ln = {NR, D, w->res + 2 * (size_t)s->layers * NR * D, c->P + s->lnfg, c->P + s->lnfb, 0, 0, w->lnf,
                  w->lnf_stats, 0, 0, 0};
    model_layernorm_rows(&ln, lo, hi);
    float *logits = c->logits + (size_t)lo * V;
    broadcast_rows(n, V, c->P + s->outb, logits);
    attn_gemm(n, V, D, w->lnf + (size_t)lo * D, D, c->P + s->out, V, logits, V, 1);
    if (c->ce) model_cross_entropy_rows(c->ce, lo, hi);
}

/* Logits of the batch; with `ce`, each row's loss too (and the loss's gradient in the logits). */
attn_status model_forward(const attn_model *m, const float *P, const int32_t *tokens, const bufs *w,
                          float *logits, const ce_args *ce, const char **detail) {
    forward_ctx c = {&m->s, w, P, tokens, 0, logits, ce};
    run_rows(w, embed_rows, &c);
    for (int l = 0; l < m->s.layers; l++) {
        c.l = l;
        run_rows(w, norm_project_rows, &c);
        attn_status st = attend(m, P, w, l, detail);
        if (st != ATTN_OK) return st;
        run_rows(w, output_mlp_rows, &c);
    }
    run_rows(w, logits_rows, &c);
    return ATTN_OK;
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

/* Rows [lo, hi) at the top: the logits' gradient (model_cross_entropy_rows left it in w->logits)
 * back through the output layer and the final LayerNorm into dres. */
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
    model_layernorm_backward_rows(&ln, lo, hi);
}

/* Rows [lo, hi), stage 1 of layer l: d pre-GELU = (dres fc2^T) * gelu'(pre). */
static void mlp_out_rows(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const backward_ctx *c = ctx;
    const model_shape *s = c->s;
    const bufs *w = c->w;
    int D = s->D, F = s->F;
    layer_view v;
    model_layer_view(s, w, c->l, &v);
    attn_gemm(hi - lo, F, D, w->dres + (size_t)lo * D, D, wt_layer(s, w, c->l), F, w->dpre + (size_t)lo * F, F, 0);
    elem_args gelu = {v.pre, w->dpre};
    model_gelu_backward_span(&gelu, lo * F, hi * F);
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
    model_layer_view(s, w, c->l, &v);
    attn_gemm(n, D, F, w->dpre + (size_t)lo * F, F, t + (size_t)F * D, D, w->dtmp + (size_t)lo * D, D, 0);
    ln_args ln = {NR, D, w->res + (2 * (size_t)c->l + 1) * BD, Pl + s->ln2g, 0, v.ln2_stats, w->dtmp, 0, 0, w->dres, 0, 0};
    model_layernorm_backward_rows(&ln, lo, hi);
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
    model_layer_view(s, w, c->l, &v);
    for (int hk = 0; hk < s->H * s->nproj; hk++)
        attn_gemm(n, D, dh, w->dproj + ((size_t)hk * NR + lo) * dh, dh, t + (size_t)hk * dh * D, D,
                  w->dtmp + (size_t)lo * D, D, hk > 0);
    ln_args ln = {NR, D, w->res + 2 * (size_t)c->l * BD, Pl + s->ln1g, 0, v.ln1_stats, w->dtmp, 0, 0, w->dres, 0, 0};
    model_layernorm_backward_rows(&ln, lo, hi);
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
    model_stage_ln_columns(st, lncols, ln, NR, s->D, hmid, stats, og->w->dtmp, dg, db);
    if (!og->Gwo) return;
    *prod = (products){.m = s->dh, .N = s->D, .K = NR, .lda = s->dh, .ldb = s->D, .ldc = s->D,
                       .at = output_grad_at, .ctx = og};
    attn_stage_products(st, prod, s->H);
}

static attn_status backward(const attn_model *m, const float *P, float *G, const int32_t *tokens, const bufs *w,
                            const char **detail) {
    const attn_model_config *cfg = &m->cfg;
    const model_shape *s = &m->s;
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
        attn_stage_rows(&st, &rows, NR, top_rows, &c);
        attn_stage_weight_grad(&st, &prod, &one, D, V, NR, w->lnf, D, w->logits, V,
                          frozen(cfg, idx_final(s, 2)) ? 0 : G + s->out);
        if (!frozen(cfg, idx_final(s, 3))) attn_stage_column_sums(&st, &sums, &csum, NR, V, w->logits, G + s->outb);
        attn_stage_add(&st, transpose_piece, &c, s->layers * (3 + s->H * s->nproj));
        attn_stage_run(&st);
    }
    const float *lnx = w->res + 2 * (size_t)s->layers * BD, *lnstats = w->lnf_stats;
    float *lndg = frozen(cfg, idx_final(s, 0)) ? 0 : G + s->lnfg, *lndb = frozen(cfg, idx_final(s, 1)) ? 0 : G + s->lnfb;

    for (int l = s->layers - 1; l >= 0; l--) {
        int64_t lo = s->layers_off + l * s->layer_floats;
        float *Gl = G + lo;
        const float *hin = w->res + 2 * (size_t)l * BD, *hmid = hin + BD;
        layer_view v;
        model_layer_view(s, w, l, &v);
        c.l = l;
#define LAYER_GRAD(which, field) (frozen(cfg, idx_after_heads(s, l, which)) ? 0 : Gl + s->field)
        /* 1: dres is the gradient of the layer's output: d pre-GELU; fc2's gradients; the
         * LayerNorm above's gain and bias */
        attn_stage_rows(&st, &rows, NR, mlp_out_rows, &c);
        attn_stage_weight_grad(&st, &prod, &one, F, D, NR, v.act, F, w->dres, D, LAYER_GRAD(LP_FC2, fc2));
        float *g = LAYER_GRAD(LP_FC2B, fc2b);
        if (g) attn_stage_column_sums(&st, &sums, &csum, NR, D, w->dres, g);
        model_stage_ln_columns(&st, &lncols, &pending, NR, D, lnx, lnstats, w->dtmp, lndg, lndb);
        attn_stage_run(&st);
        /* 2: through fc1 and LayerNorm 2 into dres (now the gradient of hmid), each head's d y;
         * fc1's gradients */
        attn_stage_rows(&st, &rows, NR, mlp_in_rows, &c);
        attn_stage_weight_grad(&st, &prod, &one, D, F, NR, v.ln2, D, w->dpre, F, LAYER_GRAD(LP_FC1, fc1));
        if ((g = LAYER_GRAD(LP_FC1B, fc1b))) attn_stage_column_sums(&st, &sums, &csum, NR, F, w->dpre, g);
        attn_stage_run(&st);
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
            attn_status st_plan = model_head_plan(m, l, h, hp, &plan, detail);
            if (st_plan != ATTN_OK) return st_plan;
            head_job job = {s, w, &plan, hp, hg, v.proj, v.y, v.lse, cfg, h, ATTN_OK, 0};
            if (h == 0 && lone) {
                stage_attention_sums(&st, &lncols, &pending, &prod2, &og, hmid, v.ln2_stats, ln2g, ln2b);
                attn_stage_run(&st);
            }
            attn_stage_add(&st, model_head_backward_piece, &job, w->B);
            if (h == 0 && !lone) /* after the head's pieces, to fill the gaps at the end */
                stage_attention_sums(&st, &lncols, &pending, &prod2, &og, hmid, v.ln2_stats, ln2g, ln2b);
            attn_stage_run(&st);
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
        attn_stage_rows(&st, &rows, NR, attention_in_rows, &c);
        projection_grads pg = {&c, v.ln1, Gl};
        prod = (products){.m = D, .N = dh, .K = NR, .lda = D, .ldb = dh, .ldc = dh, .at = projection_grad_at, .ctx = &pg};
        attn_stage_products(&st, &prod, s->H * s->nproj);
        attn_stage_run(&st);
        lnx = hin, lnstats = v.ln1_stats;
        lndg = frozen(cfg, idx_layer(s, l)) ? 0 : Gl + s->ln1g, lndb = frozen(cfg, idx_layer(s, l) + 1) ? 0 : Gl + s->ln1b;
#undef LAYER_GRAD
    }
    /* the last LayerNorm's gain and bias, and the embeddings */
    model_stage_ln_columns(&st, &lncols, &pending, NR, D, lnx, lnstats, w->dtmp, lndg, lndb);
    if (!frozen(cfg, 0) || !frozen(cfg, 1)) attn_stage_blocks(&st, &sums2, D, 16, 1, embedding_columns, &c);
    attn_stage_run(&st);
    return ATTN_OK;
}

/* ---- the entry points ---- */

/* The checks and workspace carving every pass shares. */
static attn_status prepare(const attn_model *m, const float *memory, size_t bytes, const int32_t *tokens,
                           const int32_t *targets, int32_t batch, void *workspace, size_t ws_bytes, bufs *w,
                           int *counted, const char **detail) {
    attn_status st = model_opened(m, detail);
    if (st != ATTN_OK) return st;
    const model_shape *s = &m->s;
    if (!memory || bytes < (size_t)s->total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need;
    st = model_workspace_bytes(m, batch, &need, detail);
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
    model_layout(s, batch, m->plan_bytes, &ws, w);
    return ATTN_OK;
}

attn_status attn_model_forward(const attn_model *model, const float *memory, size_t bytes,
                               const int32_t *tokens, int32_t batch, float *logits,
                               void *workspace, size_t ws_bytes, const char **detail) {
    bufs w;
    attn_status st = prepare(model, memory, bytes, tokens, 0, batch, workspace, ws_bytes, &w, 0, detail);
    if (st != ATTN_OK) return st;
    if (!logits) FAIL(ATTN_ERR_SHAPE, "logits is required");
    st = model_forward(model, memory, tokens, &w, logits, 0, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}

static attn_status loss_pass(const attn_model *m, float *memory, size_t bytes, const int32_t *tokens,
                             const int32_t *targets, int32_t batch, float *loss, int32_t *correct,
                             int32_t *counted, void *workspace, size_t ws_bytes, int grads,
                             const char **detail) {
    bufs w;
    int count = 0;
    attn_status st = prepare(m, memory, bytes, tokens, targets, batch, workspace, ws_bytes, &w, &count, detail);
    if (st != ATTN_OK) return st;
    ce_args ce = {&m->s, &w, targets, count, grads};
    st = model_forward(m, memory, tokens, &w, w.logits, &ce, detail);
    if (st != ATTN_OK) return st;
    model_cross_entropy_total(&w, targets, count, loss, correct);
    if (counted) *counted = count;
    if (grads) st = backward(m, memory, memory + m->s.total, tokens, &w, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}

attn_status attn_model_loss(const attn_model *model, const float *memory, size_t bytes,
                            const int32_t *tokens, const int32_t *targets, int32_t batch,
                            float *loss, int32_t *correct, int32_t *counted, void *workspace,
                            size_t ws_bytes, const char **detail) {
    /* grads = 0: the block is only read */
    return loss_pass(model, (float *)(uintptr_t)memory, bytes, tokens, targets, batch, loss, correct, counted,
                     workspace, ws_bytes, 0, detail);
}

attn_status attn_model_loss_backward(const attn_model *model, float *memory, size_t bytes,
                                     const int32_t *tokens, const int32_t *targets, int32_t batch,
                                     float *loss, int32_t *correct, int32_t *counted,
                                     void *workspace, size_t ws_bytes, const char **detail) {
    return loss_pass(model, memory, bytes, tokens, targets, batch, loss, correct, counted, workspace, ws_bytes, 1,
                     detail);
}
