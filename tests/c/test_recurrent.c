/* test_recurrent.c — the recurrent family's scan (src/c/recurrent.c) against a float64 reference
 * written from the recurrences (ONNX LinearAttention's update rules), built natively under
 * AddressSanitizer and UBSan like the other C tests.
 *
 * Every rule, per-key and per-token decays, with and without s0, n across 1 .. 130, odd d and dv.
 * Inputs in the range the contract's bar covers: g <= 0, beta in [0, 1], unit-norm keys (the
 * delta rules' transitions then never grow the state). Each y and final-state element lies within
 * 1e-5 + 1e-4 |ref| of the reference. Also: a split of the columns gives one scan's bits, and two
 * scans over the halves of a sequence, the second from the first's state, give the whole's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/c/internal.h" /* recurrent_rule, attn_recurrent_scan */

#include "check.h"

static const char *const RULE_NAMES[RECURRENT_RULE_COUNT] = {"linear", "gated", "delta", "gated_delta"};

/* The reference, in float64, token by token from the math. */
static void reference(recurrent_rule rule, const attn_recurrent_io *io, double *y, double *S) {
    int n = io->n, d = io->d, dv = io->dv;
    double *u = malloc((size_t)dv * sizeof *u);
    for (int i = 0; i < d * dv; i++) S[i] = io->s0 ? io->s0[i] : 0.0;
    for (int t = 0; t < n; t++) {
        const float *q = io->q + (size_t)t * d, *k = io->k + (size_t)t * d, *v = io->v + (size_t)t * dv;
        if (rule == RECURRENT_RULE_gated || rule == RECURRENT_RULE_gated_delta)
            for (int i = 0; i < d; i++) {
                double a = exp((double)io->g[(size_t)t * io->g_cols + (io->g_cols == 1 ? 0 : i)]);
                for (int j = 0; j < dv; j++) S[i * dv + j] *= a;
            }
        for (int j = 0; j < dv; j++) {
            if (rule == RECURRENT_RULE_delta || rule == RECURRENT_RULE_gated_delta) {
                double sk = 0;
                for (int i = 0; i < d; i++) sk += S[i * dv + j] * k[i];
                u[j] = io->beta[t] * (v[j] - sk);
            } else {
                u[j] = v[j];
            }
        }
        for (int i = 0; i < d; i++)
            for (int j = 0; j < dv; j++) S[i * dv + j] += k[i] * u[j];
        for (int j = 0; j < dv; j++) {
            double s = 0;
            for (int i = 0; i < d; i++) s += S[i * dv + j] * q[i];
            y[(size_t)t * dv + j] = io->scale * s;
        }
    }
    free(u);
}

static float *floats(size_t count) { return malloc((count ? count : 1) * sizeof(float)); }

static int close_to(float got, double want) { return fabs(got - want) <= 1e-5 + 1e-4 * fabs(want); }

static void run_case(recurrent_rule rule, int n, int d, int dv, int g_cols, int with_s0) {
    char label[160];
    snprintf(label, sizeof label, "%s n=%d d=%d dv=%d g_cols=%d s0=%d seed=%u", RULE_NAMES[rule], n, d, dv, g_cols,
             with_s0, rng_state);
    float *q = floats((size_t)n * d), *k = floats((size_t)n * d), *v = floats((size_t)n * dv);
    float *g = floats((size_t)n * g_cols), *beta = floats((size_t)n), *s0 = with_s0 ? floats((size_t)d * dv) : 0;
    for (int i = 0; i < n * d; i++) q[i] = rnd();
    for (int t = 0; t < n; t++) { /* unit-norm keys */
        double ss = 0;
        for (int i = 0; i < d; i++) k[t * d + i] = rnd(), ss += (double)k[t * d + i] * k[t * d + i];
        for (int i = 0; i < d; i++) k[t * d + i] = ss > 0 ? (float)(k[t * d + i] / sqrt(ss)) : (i == 0);
    }
    for (int i = 0; i < n * dv; i++) v[i] = rnd();
    for (int i = 0; i < n * g_cols; i++) g[i] = -0.5f * (rnd() + 1.0f); /* in (-1, 0] */
    for (int t = 0; t < n; t++) beta[t] = 0.5f * (rnd() + 1.0f);
    for (int i = 0; s0 && i < d * dv; i++) s0[i] = rnd();
    float *y = floats((size_t)n * dv), *S = floats((size_t)d * dv), *scratch = floats((size_t)attn_recurrent_scan_scratch(d, dv));
    attn_recurrent_io io = {n, d, dv, g_cols, 1.0f / sqrtf((float)d), q, k, v, g, beta, s0, y};
    attn_recurrent_scan(rule, &io, 0, dv, S, scratch);

    double *ry = malloc((size_t)n * dv * sizeof *ry), *rS = malloc((size_t)d * dv * sizeof *rS);
    reference(rule, &io, ry, rS);
    for (int i = 0; i < n * dv; i++)
        CHECK(close_to(y[i], ry[i]), "%s: y[%d, %d] = %.9g, float64 %.9g", label, i / dv, i % dv, y[i], ry[i]);
    for (int i = 0; i < d * dv; i++)
        CHECK(close_to(S[i], rS[i]), "%s: S[%d, %d] = %.9g, float64 %.9g", label, i / dv, i % dv, S[i], rS[i]);

    /* columns one at a time, and in two uneven pieces: the same bits */
    float *y2 = floats((size_t)n * dv), *S2 = floats((size_t)d * dv);
    for (int j = 0; j < dv; j++) attn_recurrent_scan(rule, &(attn_recurrent_io){n, d, dv, g_cols, io.scale, q, k, v, g, beta, s0, y2}, j, j + 1, S2, scratch);
    CHECK(!memcmp(y, y2, (size_t)n * dv * sizeof *y) && !memcmp(S, S2, (size_t)d * dv * sizeof *S),
          "%s: one column at a time differs from one scan", label);
    /* the first half, then the second from its state: the whole's bits */
    int half = n / 2;
    attn_recurrent_io first = {half, d, dv, g_cols, io.scale, q, k, v, g, beta, s0, y2};
    attn_recurrent_scan(rule, &first, 0, dv, S2, scratch);
    float *mid = floats((size_t)d * dv);
    memcpy(mid, S2, (size_t)d * dv * sizeof *mid);
    attn_recurrent_io second = {n - half, d, dv, g_cols, io.scale, q + (size_t)half * d, k + (size_t)half * d,
                                v + (size_t)half * dv, g + (size_t)half * g_cols, beta + half, mid, y2 + (size_t)half * dv};
    attn_recurrent_scan(rule, &second, 0, dv, S2, scratch);
    CHECK(!memcmp(y, y2, (size_t)n * dv * sizeof *y) && !memcmp(S, S2, (size_t)d * dv * sizeof *S),
          "%s: two halves (the second from the first's state) differ from the whole", label);

    free(q), free(k), free(v), free(g), free(beta), free(s0), free(y), free(S), free(scratch);
    free(ry), free(rS), free(y2), free(S2), free(mid);
}

int main(void) {
    rng_state = 2026u;
    static const int ns[] = {1, 2, 5, 64, 130}, ds[] = {1, 3, 8}, dvs[] = {1, 5, 8};
    int cases = 0;
    for (int rule = 0; rule < RECURRENT_RULE_COUNT; rule++)
        for (int ni = 0; ni < 5; ni++)
            for (int di = 0; di < 3; di++)
                for (int vi = 0; vi < 3; vi++)
                    for (int per_token = 0; per_token < 2; per_token++)
                        for (int with_s0 = 0; with_s0 < 2; with_s0++) {
                            if (per_token && !attn_recurrent_gated((recurrent_rule)rule)) continue;
                            run_case((recurrent_rule)rule, ns[ni], ds[di], dvs[vi], per_token ? 1 : ds[di], with_s0);
                            cases++;
                        }
    if (failures) {
        fprintf(stderr, "test_recurrent: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_recurrent: %d cases, all %d checks passed\n", cases, checks);
    return 0;
}
