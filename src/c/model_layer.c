/* model_layer.c — the ops of a layer, each forward beside its backward (as llm.c keeps them):
 * LayerNorm, GELU, a head's attention and the masked cross-entropy. The passes (model_pass.c) call
 * them on blocks of rows or columns inside their stages, so each op works on a range and keeps the
 * operations one call over the whole range would do: every block size and thread count gives the
 * same bits. Each head's attention runs per sequence through the public plan API, so the model sees
 * exactly what attn_plan_run and attn_plan_backward give.
 */
#include "model.h"

#define LN_EPS 1e-5f
#define GELU_C 0.7978845608f
#define GELU_K 0.044715f

/* ---- LayerNorm: y = g * (x - mean) / sqrt(var + eps) + b per row (biased variance) ---- */

/* Rows [lo, hi): y and each row's mean and 1/std (stats_out). */
void model_layernorm_rows(const void *ctx, int lo, int hi) {
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

/* Every row on the calling thread: decoding's one position (the passes run model_layernorm_rows
 * in their stages). */
void model_layernorm(int rows, int D, const float *x, const float *g, const float *b, float *y,
                     float *stats) {
    ln_args a = {rows, D, x, g, b, 0, 0, y, stats, 0, 0, 0};
    model_layernorm_rows(&a, 0, rows);
}

/* Rows [lo, hi): dx += the gradient through the row, from its saved mean and 1/std. */
void model_layernorm_backward_rows(const void *ctx, int lo, int hi) {
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

static void ln_columns_block(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    layernorm_backward_columns(ctx, lo, hi);
}
/* The gain and bias gradients of a LayerNorm (dg, db may be NULL): sums over rows, by columns. */
void model_stage_ln_columns(stage *st, blocks *b, ln_args *a, int rows, int D, const float *x,
                            const float *stats, const float *dy, float *dg, float *db) {
    if (!dg && !db) return;
    *a = (ln_args){rows, D, x, 0, 0, stats, dy, 0, 0, 0, dg, db};
    attn_stage_blocks(st, b, D, 16, 1, ln_columns_block, a);
}

/* ---- GELU(t) = t/2 (1 + tanh(0.7978845608 (t + 0.044715 t^3))) ---- */

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

/* The tail goes through a padded vector, so every element sees the same instructions. */
void model_gelu_forward_span(const void *ctx, int lo, int hi) {
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
void model_gelu_backward_span(const void *ctx, int lo, int hi) {
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
/* On the calling thread, as model_layernorm(); count < 2^31. */
void model_gelu_forward(size_t count, const float *x, float *y) {
    elem_args a = {x, y};
    model_gelu_forward_span(&a, 0, (int)count);
}

/* ---- attention: one head, a piece per sequence ---- */

/* Attention inputs of head h (parameters at hp) for sequence b: the projections from `proj`. */
void model_head_inputs(const model_shape *s, const float *hp, const float *proj, int h, int b,
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

/* Sequence b: y of the head's rows (and their lse), on the thread's workspace slice. */
void model_head_forward_piece(const void *ctx, int b, int thread) {
    head_job *job = (head_job *)(uintptr_t)ctx; /* the stage's task passes it back as const */
    const model_shape *s = job->s;
    const bufs *w = job->w;
    attn_inputs in;
    model_head_inputs(s, job->hp, job->proj, job->h, b, w->NR, &in);
    size_t row = (size_t)job->h * w->NR + (size_t)b * s->T;
    float *y = job->y + row * s->dh, *lse = job->lse ? job->lse + row : 0;
    unsigned char *ws = (unsigned char *)w->plan_ws + (size_t)thread * w->plan_stride;
    const char *detail = 0;
    attn_status st = attn_plan_run_kept(job->plan, &in, y, lse, ws, w->plan_bytes, &detail);
    if (st != ATTN_OK) job->status = st, job->detail = detail;
}

/* Sequence b: the gradients of its projections' rows (dproj) and of the head's parameters, into
 * the sequence's own head_grads (the pass sums them in sequence order), from the y and lse its
 * forward piece kept. */
void model_head_backward_piece(const void *ctx, int b, int thread) {
    head_job *job = (head_job *)(uintptr_t)ctx;
    const model_shape *s = job->s;
    const bufs *w = job->w;
    int NR = w->NR, T = s->T, dh = s->dh, h = job->h;
    attn_inputs in;
    model_head_inputs(s, job->hp, job->proj, h, b, NR, &in);
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
    size_t row = (size_t)h * NR + (size_t)b * T;
    const float *dy = w->dy + row * dh, *y = job->y + row * dh, *lse = job->lse ? job->lse + row : 0;
    unsigned char *ws = (unsigned char *)w->plan_ws + (size_t)thread * w->plan_stride;
    const char *detail = 0;
    attn_status st = attn_plan_backward_kept(job->plan, &in, dy, y, lse, &gr, ws, w->plan_bytes, &detail);
    if (st != ATTN_OK) job->status = st, job->detail = detail;
}

/* ---- the masked cross-entropy ---- */

/* Rows [lo, hi): each row's loss and hit into row_loss / row_hit, and with grads its gradient. */
void model_cross_entropy_rows(const ce_args *a, int lo, int hi) {
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

/* The mean loss and the hits over the rows model_cross_entropy_rows filled: the rows' losses
 * summed in row order, in double. */
void model_cross_entropy_total(const bufs *w, const int32_t *targets, int counted, float *loss, int32_t *correct) {
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
