/* model_map.c — the attention map of one head: the forward pass of one sequence, then that head's
 * plan with weights on the projections it left in the workspace.
 */
#include "model.h"

/* The plan of head h that returns its weights (patterns differ between heads, nothing else). */
static attn_status map_plan(const attn_model_config *cfg, const model_shape *s, const float *hp, int h,
                            attn_plan *plan, const char **detail) {
    attn_options opt;
    model_head_options(cfg, s, h, s->alpha_slot >= 0 && hp ? hp + s->slots[s->alpha_slot].offset : 0, &opt);
    return attn_plan_make((attn_variant)cfg->variant, &s->dims, &opt, ATTN_WANT_WEIGHTS, plan, detail);
}

/* The forward pass's workspace for one sequence, then the output and workspace of a weights plan. */
static attn_status map_ws_bytes(const attn_model *m, size_t *bytes, size_t *wbytes, const char **detail) {
    const attn_model_config *cfg = &m->cfg;
    const model_shape *s = &m->s;
    size_t fwd;
    attn_status st = model_workspace_bytes(m, 1, &fwd, detail);
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

attn_status attn_model_attention_map_workspace_size(const attn_model *model, size_t *bytes) {
    size_t need = 0, wbytes;
    attn_status st = model_opened(model, 0);
    if (st == ATTN_OK) st = map_ws_bytes(model, &need, &wbytes, 0);
    if (st == ATTN_OK && bytes) *bytes = need;
    return st;
}

attn_status attn_model_attention_map(const attn_model *model, const float *memory, size_t bytes,
                                     const int32_t *tokens, int32_t layer, int32_t head, float *A,
                                     void *workspace, size_t ws_bytes, const char **detail) {
    attn_status st = model_opened(model, detail);
    if (st != ATTN_OK) return st;
    const attn_model_config *cfg = &model->cfg;
    const model_shape *s = &model->s;
    if (!memory || bytes < (size_t)s->total * 16u) FAIL(ATTN_ERR_MEMORY, "the model block is smaller than attn_model_size");
    size_t need, wbytes;
    st = map_ws_bytes(model, &need, &wbytes, detail);
    if (st != ATTN_OK) return st;
    if (!workspace || ws_bytes < need) FAIL(ATTN_ERR_MEMORY, "workspace is smaller than attn_model_attention_map_workspace_size");
    if (!tokens) FAIL(ATTN_ERR_SHAPE, "tokens is required");
    if (!A) FAIL(ATTN_ERR_SHAPE, "A is required");
    if (layer < 0 || layer >= s->layers) FAIL(ATTN_ERR_SHAPE, "layer is outside [0, layers)");
    if (head < 0 || head >= s->H) FAIL(ATTN_ERR_SHAPE, "head is outside [0, heads)");
    for (int i = 0; i < s->T; i++)
        if (tokens[i] < 0 || tokens[i] >= s->V) FAIL(ATTN_ERR_VALUE, "tokens: a token is outside [0, vocab)");
    arena ws = {(unsigned char *)workspace, 0, 0, 1};
    bufs w;
    model_layout(s, 1, model->plan_bytes, &ws, &w);
    float *out = arena_floats(&ws, (uint64_t)s->T * s->dh);
    void *plan_ws = arena_floats(&ws, (wbytes + 3u) / 4u);
    /* the whole forward pass: it leaves every layer's projections in the workspace */
    st = model_forward(model, memory, tokens, &w, w.logits, 0, detail);
    if (st != ATTN_OK) return st;
    const float *hp = memory + s->layers_off + layer * s->layer_floats + s->heads + head * s->head_floats;
    layer_view v;
    model_layer_view(s, &w, layer, &v);
    attn_plan plan;
    st = map_plan(cfg, s, hp, head, &plan, detail);
    if (st != ATTN_OK) return st;
    attn_inputs in;
    model_head_inputs(s, hp, v.proj, head, 0, s->T, &in);
    st = attn_plan_run(&plan, &in, out, A, 0, 0, plan_ws, wbytes, detail);
    if (st == ATTN_OK && detail) *detail = "";
    return st;
}
