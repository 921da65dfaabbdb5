/* model_adamw.c — AdamW over the model block's gradient section (docs/model.md, "Training"): the
 * non-frozen gradients clipped to global L2 norm 1, then one step, all or nothing: the step is
 * computed once to check that every parameter and moment stays finite, then again to write it,
 * with the same bits. The clipping norm sums in one fixed order.
 */
#include "model.h"

#define ADAM_B1 0.9f
#define ADAM_B2 0.98f
#define ADAM_EPS 1e-8f

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
    model_param_describe(j->s, i, &info);
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

attn_status attn_model_adamw(const attn_model *model, float *memory, size_t bytes, float lr,
                             int32_t step, float *grad_norm, const char **detail) {
    attn_status st = model_opened(model, detail);
    if (st != ATTN_OK) return st;
    const attn_model_config *cfg = &model->cfg;
    const model_shape *s = &model->s;
    if (!memory || bytes < (size_t)s->total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    if (!(lr - lr == 0.0f) || lr < 0.0f) FAIL(ATTN_ERR_VALUE, "lr must be a finite number >= 0");
    if (step < 1) FAIL(ATTN_ERR_VALUE, "step must be an integer >= 1");
    float *P = memory, *G = memory + s->total, *M = G + s->total, *Vm = M + s->total;
    double norm2 = 0.0;
    for (int i = 0; i < s->params; i++) {
        if (frozen(cfg, i)) continue;
        attn_model_param info;
        model_param_describe(s, i, &info);
        const float *g = G + info.offset;
        for (int e = 0; e < info.count; e++) norm2 += (double)g[e] * g[e];
    }
    double norm = __builtin_sqrt(norm2);
    if (grad_norm) *grad_norm = (float)norm;
    if (!(norm - norm == 0.0)) FAIL(ATTN_ERR_VALUE, "the gradient is not finite: nothing was changed");
    float clip = norm > 1.0 ? (float)(1.0 / norm) : 1.0f;
    adamw_job job = {cfg, s, P, G, M, Vm, lr, clip, (float)(1.0 - power(ADAM_B1, step)),
                     (float)(1.0 - power(ADAM_B2, step)), 0, {0}};
    attn_parallel(s->params, adamw_piece, &job); /* a parameter a piece: elementwise, any order */
    for (int t = 0; t < ATTN_MAX_THREADS; t++)
        if (job.bad[t])
            FAIL(ATTN_ERR_VALUE, "the step would leave a parameter or an AdamW moment non-finite (lr or "
                                 "weightDecay too large for float32): nothing was changed");
    job.write = 1;
    attn_parallel(s->params, adamw_piece, &job);
    if (detail) *detail = "";
    return ATTN_OK;
}
