/* model_open.c — a model opened once (docs/model.md, "A model's lifetime"): the configuration's
 * checks and shape, an attention plan for every head of every layer and the largest workspace of
 * any, made here and read by every pass. A training step used to check the configuration, compute
 * the shape and make every head's plan in each of its calls (the workspace query, the forward
 * pass, the backward pass, AdamW); now none of them does.
 */
#include "model.h"

/* Bytes of the fixed part and the plans, rounded to 16 so that what a caller lays out after it
 * stays aligned. */
static size_t open_bytes(int64_t plans) {
    return (sizeof(struct attn_model) + (size_t)plans * sizeof(attn_plan) + 15u) & ~(size_t)15u;
}

attn_status attn_model_open_size(const attn_model_config *cfg, size_t *bytes) {
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, 0);
    if (st == ATTN_OK && bytes) *bytes = open_bytes((int64_t)s.layers * s.H);
    return st;
}

attn_status attn_model_open(const attn_model_config *cfg, void *memory, size_t bytes, attn_model **model,
                            const char **detail) {
    if (!model) FAIL(ATTN_ERR_SHAPE, "model is required");
    *model = 0;
    model_shape s;
    attn_status st = model_shape_of(cfg, &s, detail);
    if (st != ATTN_OK) return st;
    int nplans = s.layers * s.H; /* at most ATTN_MODEL_MAX_HEADS: model_shape_of checked */
    if (!memory || bytes < open_bytes(nplans)) FAIL(ATTN_ERR_MEMORY, "memory is smaller than attn_model_open_size");
    if ((uintptr_t)memory % 16u) FAIL(ATTN_ERR_MEMORY, "memory must be 16-byte aligned");
    attn_model *m = memory;
    m->magic = 0; /* until every plan is made: a failed opening leaves no model the passes accept */
    m->threads = attn_thread_count();
    m->cfg = *cfg;
    m->s = s;
    m->plan_bytes = 0;
    m->nplans = nplans;
    for (int l = 0; l < s.layers; l++)
        for (int h = 0; h < s.H; h++) {
            attn_options opt;
            attn_plan *plan = &m->plans[l * s.H + h];
            model_head_options(cfg, &s, h, 0, &opt);
            st = attn_plan_make((attn_variant)cfg->variant, &s.dims, &opt, ATTN_WANT_KEPT, plan, detail);
            if (st != ATTN_OK) return st;
            if (plan->workspace_bytes > m->plan_bytes) m->plan_bytes = plan->workspace_bytes;
        }
    m->magic = MODEL_MAGIC;
    *model = m;
    if (detail) *detail = "";
    return ATTN_OK;
}

attn_status model_opened(const attn_model *m, const char **detail) {
    if (!m || m->magic != MODEL_MAGIC) FAIL(ATTN_ERR_SHAPE, "model was not opened by attn_model_open");
    if (m->threads != attn_thread_count())
        FAIL(ATTN_ERR_SHAPE, "the thread count changed since attn_model_open: open the model again");
    return ATTN_OK;
}

attn_status model_head_plan(const attn_model *m, int l, int h, const float *hp, attn_plan *plan,
                            const char **detail) {
    *plan = m->plans[l * m->s.H + h];
    if (m->s.alpha_slot < 0) return ATTN_OK;
    return attn_plan_set_alpha_logits(plan, hp + m->s.slots[m->s.alpha_slot].offset, detail);
}
