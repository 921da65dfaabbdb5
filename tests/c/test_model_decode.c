/* test_model_decode.c — step-by-step decoding and attention maps of a model (model_decode.c,
 * model_map.c), natively under ASan + UBSan.
 *
 * Decoding is held to attn_model_forward: for every variant of the registry (a mixture: of every
 * mixable one), the logits of each step equal the forward pass's logits at that position (a causal
 * model's position i sees only the prefix), at two shapes — one short, one longer than the
 * kernels' 64-row chunks — with parameters of order 1 so that attention is far from uniform. The linear family's state must not grow with seqLen.
 * Then the errors: a model that is not causal, decoding past seqLen, a position out of turn, a
 * token outside the vocabulary, a state never reset. Attention maps: every row a distribution,
 * nothing above the diagonal when causal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/c/internal.h" /* the registry's typed tables: attn_family_of, attn_accepts, ... */

#include "check.h"

static const char *variant_name(int v) { return attn_variant_id((attn_variant)v); }

typedef struct shape {
    int vocab, seq_len, d_model, heads, layers, d_ff;
} shape;

static const shape SHAPES[] = {
    {11, 12, 16, 4, 2, 24}, /* four heads: a causal fixed model uses each of its four patterns */
    {7, 70, 8, 2, 1, 12},   /* past one 64-row chunk of the linear and softmax kernels */
};

static void config_for(int variant, const shape *sh, int causal, int tiling, attn_model_config *cfg) {
    attn_model_config_default(cfg);
    cfg->variant = variant;
    cfg->vocab = sh->vocab, cfg->seq_len = sh->seq_len, cfg->d_model = sh->d_model;
    cfg->heads = sh->heads, cfg->layers = sh->layers, cfg->d_ff = sh->d_ff;
    cfg->causal = causal;
    cfg->seed = 7;
    cfg->options.tiling = tiling;
    if (attn_is_composite((attn_variant)variant)) /* every variant a mixture may combine */
        for (int v = 0; v < ATTN_VARIANT_COUNT && cfg->options.n_components < ATTN_MAX_COMPONENTS; v++)
            if (attn_is_mixable((attn_variant)v)) cfg->options.component[cfg->options.n_components++] = v;
}

static void *aligned(size_t bytes) {
    void *p = aligned_alloc(16, (bytes + 15) / 16 * 16 + 16);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* cfg opened (attn_model_open) into memory of its own, which the model starts: free() it. */
static attn_model *open_model(const attn_model_config *cfg) {
    size_t bytes = 0;
    const char *detail = "";
    CHECK(attn_model_open_size(cfg, &bytes) == ATTN_OK, "attn_model_open_size");
    void *memory = aligned(bytes);
    attn_model *model = 0;
    CHECK(attn_model_open(cfg, memory, bytes, &model, &detail) == ATTN_OK && (void *)model == memory, "open: %s", detail);
    if (!model) free(memory);
    return model;
}

/* A model block whose parameters are uniform in [-0.8, 0.8] (mixture logits included, so the
 * components are weighted unevenly), and the model opened (*model; free() it). */
static float *make_model(const attn_model_config *cfg, size_t *bytes, attn_model **model) {
    CHECK(attn_model_size(cfg, bytes) == ATTN_OK, "attn_model_size");
    float *memory = aligned(*bytes);
    const char *detail = "";
    CHECK(attn_model_init(cfg, memory, *bytes, &detail) == ATTN_OK, "init: %s", detail);
    for (size_t i = 0; i < *bytes / 16; i++) memory[i] = 0.8f * rnd();
    *model = open_model(cfg);
    return memory;
}

static void check_decode_equals_forward(int variant, const shape *sh, int tiling) {
    attn_model_config cfg;
    config_for(variant, sh, 1, tiling, &cfg);
    const char *name = variant_name(variant), *detail = "";
    if (attn_model_check(&cfg, &detail) != ATTN_OK) {
        CHECK(0, "%s seqLen=%d: the config is refused: %s", name, sh->seq_len, detail);
        return;
    }
    size_t bytes, fws, state_bytes, dws;
    attn_model *model;
    float *memory = make_model(&cfg, &bytes, &model);
    int T = sh->seq_len, V = sh->vocab;
    int32_t *tokens = malloc(sizeof(int32_t) * T);
    for (int i = 0; i < T; i++) tokens[i] = (int32_t)((rnd() + 1.0f) * 0.5f * (float)V) % V;
    CHECK(attn_model_workspace_size(model, 1, &fws) == ATTN_OK, "workspace size");
    void *ws = aligned(fws);
    float *expected = malloc(sizeof(float) * T * V), *logits = malloc(sizeof(float) * V);
    CHECK(attn_model_forward(model, memory, bytes, tokens, 1, expected, ws, fws, &detail) == ATTN_OK,
          "%s: forward: %s", name, detail);

    CHECK(attn_model_decode_size(model, &state_bytes) == ATTN_OK, "%s: decode size", name);
    CHECK(attn_model_decode_workspace_size(model, &dws) == ATTN_OK, "%s: decode workspace size", name);
    void *state = aligned(state_bytes), *dwork = aligned(dws);
    for (int pass = 0; pass < 2; pass++) { /* a reset state decodes the same again */
        CHECK(attn_model_decode_reset(model, state) == ATTN_OK, "%s: reset", name);
        for (int t = 0; t < T; t++) {
            attn_status st = attn_model_decode_step(model, memory, bytes, state, tokens[t], t, logits, dwork, dws, &detail);
            CHECK(st == ATTN_OK, "%s seqLen=%d: step %d: %s", name, T, t, detail);
            if (st != ATTN_OK) break;
            for (int c = 0; c < V; c++) {
                float e = expected[(size_t)t * V + c], a = logits[c];
                CHECK(fabsf(a - e) <= 1e-5f + 1e-4f * fabsf(e),
                      "%s seqLen=%d tiling=%d pass %d: position %d logit %d: step %.9g, forward %.9g", name, T,
                      tiling, pass, t, c, a, e);
            }
        }
    }
    /* past seqLen: the position embeddings (and Synthesizer rows) end there */
    attn_status st = attn_model_decode_step(model, memory, bytes, state, tokens[0], T, logits, dwork, dws, &detail);
    CHECK(st == ATTN_ERR_VALUE && strstr(detail, "seqLen"), "%s: decoding past seqLen gave %s (%s)", name,
          attn_status_string(st), detail);
    free(state), free(dwork), free(ws), free(expected), free(logits), free(tokens), free(memory), free(model);
}

/* Whether a model can hold the variant (the recurrent family's layer is not built: test_model
 * checks that it is refused). */
static int in_models(int v) { return attn_family_facts(attn_family_of((attn_variant)v))->in_models; }

static void check_state_sizes(void) {
    /* linear, taylor, efficient: a state (and scratch) of the same size whatever seqLen; the others
     * grow with it */
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++) {
        if (!in_models(v)) continue;
        shape a = SHAPES[0], b = SHAPES[0];
        b.seq_len = 4 * a.seq_len;
        attn_model_config ca, cb;
        config_for(v, &a, 1, ATTN_TILING_KRONECKER, &ca);
        config_for(v, &b, 1, ATTN_TILING_KRONECKER, &cb);
        attn_model *ma = open_model(&ca), *mb = open_model(&cb);
        size_t sa = 0, sb = 0;
        CHECK(attn_model_decode_size(ma, &sa) == ATTN_OK && attn_model_decode_size(mb, &sb) == ATTN_OK,
              "%s: decode size", variant_name(v));
        int constant = attn_family_facts(attn_family_of((attn_variant)v))->keeps_state; /* a state of fixed size */
        CHECK(constant ? sa == sb : sb > sa, "%s: state of %zu bytes at seqLen %d, %zu at %d", variant_name(v), sa,
              a.seq_len, sb, b.seq_len);
        size_t wa = 0, wb = 0;
        CHECK(attn_model_decode_workspace_size(ma, &wa) == ATTN_OK && attn_model_decode_workspace_size(mb, &wb) == ATTN_OK,
              "%s: decode workspace size", variant_name(v));
        CHECK(!constant || wa == wb, "%s: a workspace of %zu bytes at seqLen %d, %zu at %d", variant_name(v), wa, a.seq_len,
              wb, b.seq_len);
        free(ma), free(mb);
    }
}

static void check_errors(void) {
    const shape *sh = &SHAPES[0];
    attn_model_config cfg;
    const char *detail = "";
    size_t bytes, state_bytes = 0, dws = 0;

    config_for(ATTN_SOFTMAX, sh, 0, ATTN_TILING_KRONECKER, &cfg);
    attn_model *model;
    float *memory = make_model(&cfg, &bytes, &model);
    CHECK(attn_model_decode_size(model, &state_bytes) == ATTN_ERR_UNSUPPORTED, "not causal: decode size");
    CHECK(attn_model_decode_workspace_size(model, &dws) == ATTN_ERR_UNSUPPORTED, "not causal: workspace size");
    float dummy[64] = {0};
    CHECK(attn_model_decode_reset(model, dummy) == ATTN_ERR_UNSUPPORTED, "not causal: reset");
    float logits[64];
    attn_status st = attn_model_decode_step(model, memory, bytes, dummy, 0, 0, logits, dummy, sizeof dummy, &detail);
    CHECK(st == ATTN_ERR_UNSUPPORTED && strstr(detail, "causal"), "not causal: step gave %s (%s)",
          attn_status_string(st), detail);
    free(memory), free(model);

    config_for(ATTN_RANDOM, sh, 1, ATTN_TILING_KRONECKER, &cfg);
    memory = make_model(&cfg, &bytes, &model);
    CHECK(attn_model_decode_size(model, &state_bytes) == ATTN_OK, "decode size");
    CHECK(attn_model_decode_workspace_size(model, &dws) == ATTN_OK, "workspace size");
    void *state = aligned(state_bytes), *ws = aligned(dws);
    memset(state, 0, state_bytes);
    st = attn_model_decode_step(model, memory, bytes, state, 0, 0, logits, ws, dws, &detail);
    CHECK(st == ATTN_ERR_VALUE && strstr(detail, "reset"), "a state never reset: %s (%s)", attn_status_string(st), detail);
    attn_model_decode_reset(model, state);
    st = attn_model_decode_step(model, memory, bytes, state, 0, 1, logits, ws, dws, &detail);
    CHECK(st == ATTN_ERR_VALUE && strstr(detail, "position"), "position 1 first: %s (%s)", attn_status_string(st), detail);
    st = attn_model_decode_step(model, memory, bytes, state, sh->vocab, 0, logits, ws, dws, &detail);
    CHECK(st == ATTN_ERR_VALUE && strstr(detail, "vocab"), "token = vocab: %s (%s)", attn_status_string(st), detail);
    st = attn_model_decode_step(model, memory, bytes, state, 0, 0, logits, ws, dws - 16, &detail);
    CHECK(st == ATTN_ERR_MEMORY, "a short workspace: %s (%s)", attn_status_string(st), detail);
    st = attn_model_decode_step(model, memory, bytes, state, 0, 0, logits, ws, dws, &detail);
    CHECK(st == ATTN_OK, "after refused calls, position 0 still decodes: %s (%s)", attn_status_string(st), detail);
    st = attn_model_decode_step(model, memory, bytes, state, 0, sh->seq_len, logits, ws, dws, &detail);
    CHECK(st == ATTN_ERR_VALUE && strstr(detail, "seqLen"), "position seqLen: %s (%s)", attn_status_string(st), detail);
    free(state), free(ws), free(memory), free(model);
}

static void check_attention_maps(int variant, int causal) {
    const shape *sh = &SHAPES[0];
    attn_model_config cfg;
    config_for(variant, sh, causal, ATTN_TILING_KRONECKER, &cfg);
    const char *name = variant_name(variant), *detail = "";
    size_t bytes, wsb;
    attn_model *model;
    float *memory = make_model(&cfg, &bytes, &model);
    int T = sh->seq_len;
    int32_t tokens[64];
    for (int i = 0; i < T; i++) tokens[i] = (int32_t)(i * 5 % sh->vocab);
    CHECK(attn_model_attention_map_workspace_size(model, &wsb) == ATTN_OK, "%s: map workspace size", name);
    void *ws = aligned(wsb);
    float *A = malloc(sizeof(float) * T * T);
    for (int l = 0; l < sh->layers; l++)
        for (int h = 0; h < sh->heads; h++) {
            attn_status st = attn_model_attention_map(model, memory, bytes, tokens, l, h, A, ws, wsb, &detail);
            CHECK(st == ATTN_OK, "%s layer %d head %d: %s", name, l, h, detail);
            for (int i = 0; i < T; i++) {
                double sum = 0.0;
                int ok = 1;
                for (int j = 0; j < T; j++) {
                    float a = A[i * T + j];
                    sum += a;
                    ok &= a >= 0.0f && !(causal && j > i && a != 0.0f);
                }
                CHECK(ok && fabs(sum - 1.0) < 1e-4, "%s %s layer %d head %d: row %d sums to %.7f, or has a weight "
                      "below 0 or past the diagonal", name, causal ? "causal" : "bidirectional", l, h, i, sum);
            }
        }
    attn_status st = attn_model_attention_map(model, memory, bytes, tokens, sh->layers, 0, A, ws, wsb, &detail);
    CHECK(st == ATTN_ERR_SHAPE && strstr(detail, "layer"), "%s: layer = layers gave %s", name, attn_status_string(st));
    st = attn_model_attention_map(model, memory, bytes, tokens, 0, sh->heads, A, ws, wsb, &detail);
    CHECK(st == ATTN_ERR_SHAPE && strstr(detail, "head"), "%s: head = heads gave %s", name, attn_status_string(st));
    free(A), free(ws), free(memory), free(model);
}

int main(void) {
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++)
        if (in_models(v))
            for (size_t k = 0; k < sizeof SHAPES / sizeof *SHAPES; k++) check_decode_equals_forward(v, &SHAPES[k], ATTN_TILING_KRONECKER);
    check_decode_equals_forward(ATTN_FACTORIZED_DENSE, &SHAPES[0], ATTN_TILING_TILE);
    check_decode_equals_forward(ATTN_MIXTURE, &SHAPES[1], ATTN_TILING_TILE);
    check_state_sizes();
    check_errors();
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++) {
        if (!in_models(v)) continue;
        check_attention_maps(v, 1);
        check_attention_maps(v, 0);
    }
    printf("test_model_decode: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
