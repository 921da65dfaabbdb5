/* test_recurrent.c — the recurrent family's scan (src/c/recurrent.c) against a float64 reference
 * written from the recurrences (ONNX LinearAttention's update rules), built natively under
 * AddressSanitizer and UBSan like the other C tests.
 *
 * Every rule, per-key and per-token decays, with and without s0, n across 1 .. 130, odd d and dv.
 * Inputs in the range the contract's bar covers: g <= 0, beta in [0, 1], unit-norm keys (the
 * delta rules' transitions then never grow the state). Each y and final-state element lies within
 * 1e-5 + 1e-4 |ref| of the reference. Also: a split of the columns gives one scan's bits, and two
 * scans over the halves of a sequence, the second from the first's state, give the whole's.
 * The backward (attn_recurrent_backward): the gradients of sum(dy * y) + sum(dF * S_n) for q, k,
 * v, g, beta and s0 against float64 central differences of that loss (each element within
 * 1e-4 + 1e-3 max|ref| of its array), the same bits for every checkpoint spacing and from the
 * checkpoints a scan keeps (a kept forward pass's), and its y the
 * scan's. The chunked form plain-linear takes for wide states likewise (chunked_case), and its
 * gradients against float64 ones from the math. */
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

/* ---- gradients: central differences of a float64 loss ---- */

/* The arrays in float64: q, k [n, d]; v [n, dv]; g [n, g_cols]; beta [n]; s0 [d, dv] (or NULL). */
typedef struct problem {
    recurrent_rule rule;
    int n, d, dv, g_cols;
    double scale;
    double *q, *k, *v, *g, *beta, *s0, *dy, *dF;
} problem;

/* L = sum(dy * y) + sum(dF * S_n), token by token from the recurrences. */
static double loss64(const problem *p) {
    int n = p->n, d = p->d, dv = p->dv;
    double *S = malloc((size_t)d * dv * sizeof *S), *u = malloc((size_t)dv * sizeof *u), L = 0;
    int gated = p->rule == RECURRENT_RULE_gated || p->rule == RECURRENT_RULE_gated_delta;
    int delta = p->rule == RECURRENT_RULE_delta || p->rule == RECURRENT_RULE_gated_delta;
    for (int i = 0; i < d * dv; i++) S[i] = p->s0 ? p->s0[i] : 0.0;
    for (int t = 0; t < n; t++) {
        const double *q = p->q + (size_t)t * d, *k = p->k + (size_t)t * d, *v = p->v + (size_t)t * dv;
        if (gated)
            for (int i = 0; i < d; i++)
                for (int j = 0; j < dv; j++) S[i * dv + j] *= exp(p->g[(size_t)t * p->g_cols + (p->g_cols == 1 ? 0 : i)]);
        for (int j = 0; j < dv; j++) {
            double sk = 0;
            for (int i = 0; i < d; i++) sk += S[i * dv + j] * k[i];
            u[j] = delta ? p->beta[t] * (v[j] - sk) : v[j];
        }
        for (int i = 0; i < d; i++)
            for (int j = 0; j < dv; j++) S[i * dv + j] += k[i] * u[j];
        for (int j = 0; j < dv; j++) {
            double y = 0;
            for (int i = 0; i < d; i++) y += S[i * dv + j] * q[i];
            L += p->dy[(size_t)t * dv + j] * p->scale * y;
        }
    }
    for (int i = 0; i < d * dv; i++) L += p->dF[i] * S[i];
    free(S), free(u);
    return L;
}

/* d loss64 / d x[i] for every element of x [count], by central differences, against got. */
static double check_grad(problem *p, double *x, int count, const float *got, const char *label, const char *what) {
    double *ref = malloc((size_t)count * sizeof *ref), max_ref = 0, worst = 0;
    for (int i = 0; i < count; i++) {
        double keep = x[i], h = 1e-5;
        x[i] = keep + h;
        double up = loss64(p);
        x[i] = keep - h;
        double down = loss64(p);
        x[i] = keep;
        ref[i] = (up - down) / (2 * h);
        max_ref = fmax(max_ref, fabs(ref[i]));
    }
    double bar = 1e-4 + 1e-3 * max_ref;
    for (int i = 0; i < count; i++) {
        double err = fabs(got[i] - ref[i]);
        worst = fmax(worst, err / bar);
        CHECK(err <= bar, "%s: d%s[%d] = %.7g, differences give %.7g (bar %.3g)", label, what, i, got[i], ref[i], bar);
    }
    free(ref);
    return worst;
}

static double *doubles(const float *x, size_t count) {
    if (!x) return NULL;
    double *out = malloc((count ? count : 1) * sizeof *out);
    for (size_t i = 0; i < count; i++) out[i] = x[i];
    return out;
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
    attn_recurrent_scan(rule, &io, 0, dv, S, scratch, 0);

    double *ry = malloc((size_t)n * dv * sizeof *ry), *rS = malloc((size_t)d * dv * sizeof *rS);
    reference(rule, &io, ry, rS);
    for (int i = 0; i < n * dv; i++)
        CHECK(close_to(y[i], ry[i]), "%s: y[%d, %d] = %.9g, float64 %.9g", label, i / dv, i % dv, y[i], ry[i]);
    for (int i = 0; i < d * dv; i++)
        CHECK(close_to(S[i], rS[i]), "%s: S[%d, %d] = %.9g, float64 %.9g", label, i / dv, i % dv, S[i], rS[i]);

    /* columns one at a time, and in two uneven pieces: the same bits */
    float *y2 = floats((size_t)n * dv), *S2 = floats((size_t)d * dv);
    for (int j = 0; j < dv; j++) attn_recurrent_scan(rule, &(attn_recurrent_io){n, d, dv, g_cols, io.scale, q, k, v, g, beta, s0, y2}, j, j + 1, S2, scratch, 0);
    CHECK(!memcmp(y, y2, (size_t)n * dv * sizeof *y) && !memcmp(S, S2, (size_t)d * dv * sizeof *S),
          "%s: one column at a time differs from one scan", label);
    /* the first half, then the second from its state: the whole's bits */
    int half = n / 2;
    attn_recurrent_io first = {half, d, dv, g_cols, io.scale, q, k, v, g, beta, s0, y2};
    attn_recurrent_scan(rule, &first, 0, dv, S2, scratch, 0);
    float *mid = floats((size_t)d * dv);
    memcpy(mid, S2, (size_t)d * dv * sizeof *mid);
    attn_recurrent_io second = {n - half, d, dv, g_cols, io.scale, q + (size_t)half * d, k + (size_t)half * d,
                                v + (size_t)half * dv, g + (size_t)half * g_cols, beta + half, mid, y2 + (size_t)half * dv};
    attn_recurrent_scan(rule, &second, 0, dv, S2, scratch, 0);
    CHECK(!memcmp(y, y2, (size_t)n * dv * sizeof *y) && !memcmp(S, S2, (size_t)d * dv * sizeof *S),
          "%s: two halves (the second from the first's state) differ from the whole", label);

    free(q), free(k), free(v), free(g), free(beta), free(s0), free(y), free(S), free(scratch);
    free(ry), free(rS), free(y2), free(S2), free(mid);
}

/* W_ij = scale beta_j q_i^T A_i ... A_{j+1} k_j, the transitions A_t = (I - beta_t k_t k_t^T)
 * diag(e^{g_t}) (without the delta rule: beta 1 and no projection; without the gate: no decay)
 * multiplied out as d x d matrices in float64 (no carried vector, as the C has). */
static void reference_weights(recurrent_rule rule, const attn_recurrent_io *io, double *W) {
    int n = io->n, d = io->d;
    int gated = rule == RECURRENT_RULE_gated || rule == RECURRENT_RULE_gated_delta;
    int delta = rule == RECURRENT_RULE_delta || rule == RECURRENT_RULE_gated_delta;
    double *P = malloc((size_t)d * d * sizeof *P), *A = malloc((size_t)d * d * sizeof *A), *T = malloc((size_t)d * d * sizeof *T);
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < d * d; r++) P[r] = r % (d + 1) == 0; /* P = I: the product A_i ... A_{j+1} */
        for (int j = i; j >= 0; j--) {
            const float *k = io->k + (size_t)j * d, *q = io->q + (size_t)i * d;
            double beta = delta ? io->beta[j] : 1.0, s = 0;
            for (int r = 0; r < d; r++)
                for (int c = 0; c < d; c++) s += q[r] * P[r * d + c] * k[c];
            W[(size_t)i * n + j] = io->scale * beta * s;
            for (int r = 0; r < d; r++) /* A_j */
                for (int c = 0; c < d; c++) {
                    double decay = gated ? exp((double)io->g[(size_t)j * io->g_cols + (io->g_cols == 1 ? 0 : c)]) : 1.0;
                    A[r * d + c] = ((r == c) - (delta ? beta * k[r] * k[c] : 0.0)) * decay;
                }
            for (int r = 0; r < d; r++) /* P = P A_j */
                for (int c = 0; c < d; c++) {
                    double t = 0;
                    for (int m = 0; m < d; m++) t += P[r * d + m] * A[m * d + c];
                    T[r * d + c] = t;
                }
            memcpy(P, T, (size_t)d * d * sizeof *P);
        }
        for (int j = i + 1; j < n; j++) W[(size_t)i * n + j] = 0;
    }
    free(P), free(A), free(T);
}

/* attn_recurrent_weights against the multiplied-out reference, and W v against the scan's y (s0
 * zero); attn_recurrent_forward (the scan over the pool, its scratch from an arena) and
 * attn_recurrent_backward_run give the bits of the scan and of the backward at chunk 1. */
static void wrapper_case(recurrent_rule rule, int n, int d, int dv, int g_cols) {
    char label[160];
    snprintf(label, sizeof label, "weights %s n=%d d=%d dv=%d g_cols=%d seed=%u", RULE_NAMES[rule], n, d, dv, g_cols, rng_state);
    size_t nd = (size_t)n * d, nv = (size_t)n * dv, st = (size_t)d * dv;
    float *q = floats(nd), *k = floats(nd), *v = floats(nv), *g = floats((size_t)n * g_cols), *beta = floats((size_t)n);
    for (size_t i = 0; i < nd; i++) q[i] = rnd();
    for (int t = 0; t < n; t++) { /* unit-norm keys */
        double ss = 0;
        for (int i = 0; i < d; i++) k[t * d + i] = rnd(), ss += (double)k[t * d + i] * k[t * d + i];
        for (int i = 0; i < d; i++) k[t * d + i] = (float)(k[t * d + i] / sqrt(ss));
    }
    for (size_t i = 0; i < nv; i++) v[i] = rnd();
    for (int i = 0; i < n * g_cols; i++) g[i] = -0.5f * (rnd() + 1.0f);
    for (int t = 0; t < n; t++) beta[t] = 0.5f * (rnd() + 1.0f);
    float *y = floats(nv), *S = floats(st), *scratch = floats((size_t)attn_recurrent_scan_scratch(d, dv));
    attn_recurrent_io io = {n, d, dv, g_cols, 1.0f / sqrtf((float)d), q, k, v, g, beta, 0, y};
    attn_recurrent_scan(rule, &io, 0, dv, S, scratch, 0);

    arena measure = {0, 0, 1, 1};
    attn_recurrent_weights(rule, &io, 0, &measure);
    uint64_t bytes = measure.used;
    measure = (arena){0, 0, 1, 1};
    attn_recurrent_forward(rule, &io, 0, 0, &measure);
    bytes = measure.used > bytes ? measure.used : bytes;
    measure = (arena){0, 0, 1, 1};
    attn_recurrent_backward_run(rule, &io, 0, 0, 0, 0, &measure);
    bytes = measure.used > bytes ? measure.used : bytes;
    void *ws = aligned_alloc(16, (size_t)((bytes + 15) & ~(uint64_t)15) + 16);

    float *W = floats((size_t)n * n);
    double *rW = malloc((size_t)n * n * sizeof *rW);
    attn_recurrent_weights(rule, &io, W, &(arena){ws, 0, 0, 1});
    reference_weights(rule, &io, rW);
    for (int i = 0; i < n * n; i++)
        CHECK(close_to(W[i], rW[i]), "%s: W[%d, %d] = %.9g, float64 %.9g", label, i / n, i % n, W[i], rW[i]);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < dv; c++) {
            double wv = 0;
            for (int j = 0; j < n; j++) wv += rW[(size_t)i * n + j] * v[(size_t)j * dv + c];
            CHECK(close_to(y[(size_t)i * dv + c], wv), "%s: y[%d, %d] = %.9g, but (W v) = %.9g", label, i, c, y[(size_t)i * dv + c], wv);
        }

    float *y2 = floats(nv), *S2 = floats(st);
    io.y = y2;
    attn_recurrent_forward(rule, &io, S2, 0, &(arena){ws, 0, 0, 1});
    CHECK(!memcmp(y, y2, nv * sizeof *y) && !memcmp(S, S2, st * sizeof *S), "%s: attn_recurrent_forward differs from the scan", label);

    float *dy = floats(nv), *all = floats(2 * (2 * nd + nv + (size_t)n * g_cols + n));
    for (size_t i = 0; i < nv; i++) dy[i] = rnd();
    float *at = all;
    attn_recurrent_grads mine, chunk1;
    float **fields[] = {&mine.q, &mine.k, &mine.v, &mine.g, &mine.beta, &chunk1.q, &chunk1.k, &chunk1.v, &chunk1.g, &chunk1.beta};
    size_t len[] = {nd, nd, nv, (size_t)n * g_cols, (size_t)n};
    for (int f = 0; f < 10; f++) *fields[f] = at, at += len[f % 5];
    mine.s0 = chunk1.s0 = 0;
    attn_recurrent_backward_run(rule, &io, dy, 0, 0, &mine, &(arena){ws, 0, 0, 1});
    float *work = floats(attn_recurrent_backward_floats(rule, n, d, dv, 1, 1));
    attn_recurrent_backward(rule, &io, dy, 0, 1, 0, &chunk1, work);
    size_t half = (size_t)(at - all) / 2;
    if (!attn_recurrent_gated(rule)) memset(mine.g, 0, len[3] * sizeof(float)), memset(chunk1.g, 0, len[3] * sizeof(float));
    if (!attn_recurrent_delta(rule)) memset(mine.beta, 0, len[4] * sizeof(float)), memset(chunk1.beta, 0, len[4] * sizeof(float));
    CHECK(!memcmp(all, all + half, half * sizeof(float)), "%s: attn_recurrent_backward_run differs from the backward at chunk 1", label);

    free(q), free(k), free(v), free(g), free(beta), free(y), free(S), free(scratch), free(ws), free(W), free(rW);
    free(y2), free(S2), free(dy), free(all), free(work);
}

/* attn_recurrent_backward against central differences, for every input; and the same bits for
 * every chunk length. Returns the worst error / bar. */
static double grad_case(recurrent_rule rule, int n, int d, int dv, int g_cols, int with_s0) {
    char label[160];
    snprintf(label, sizeof label, "backward %s n=%d d=%d dv=%d g_cols=%d s0=%d seed=%u", RULE_NAMES[rule], n, d, dv,
             g_cols, with_s0, rng_state);
    size_t nd = (size_t)n * d, nv = (size_t)n * dv, st = (size_t)d * dv;
    float *q = floats(nd), *k = floats(nd), *v = floats(nv), *g = floats((size_t)n * g_cols), *beta = floats((size_t)n);
    float *s0 = with_s0 ? floats(st) : 0, *dy = floats(nv), *dF = floats(st), *y = floats(nv);
    for (size_t i = 0; i < nd; i++) q[i] = rnd(), k[i] = 0.6f * rnd();
    for (size_t i = 0; i < nv; i++) v[i] = rnd(), dy[i] = rnd();
    for (int i = 0; i < n * g_cols; i++) g[i] = -0.5f * (rnd() + 1.0f);
    for (int t = 0; t < n; t++) beta[t] = 0.5f * (rnd() + 1.0f);
    for (size_t i = 0; i < st; i++) dF[i] = rnd();
    for (size_t i = 0; s0 && i < st; i++) s0[i] = rnd();
    attn_recurrent_io io = {n, d, dv, g_cols, 1.0f / sqrtf((float)d), q, k, v, g, beta, s0, y};
    float *gq = floats(nd), *gk = floats(nd), *gv = floats(nv), *gg = floats((size_t)n * g_cols), *gb = floats((size_t)n);
    float *gs = floats(st);
    attn_recurrent_grads grads = {gq, gk, gv, gg, gb, gs};
    /* the last: from the checkpoints a scan kept (a kept forward pass's), at the scan's spacing */
    int spacing = 1;
    while (spacing * spacing < n) spacing++;
    int chunks[] = {1, 2, 3, n, spacing}, first = 1;
    float *keep = floats(2 * nd + nv + (size_t)n * g_cols + n + st);
    for (int c = 0; c < 5; c++) {
        float *kept = 0;
        if (c == 4) {
            float *S_kept = floats(st), *scan_scratch = floats((size_t)attn_recurrent_scan_scratch(d, dv));
            kept = floats(attn_recurrent_checkpoint_floats(n, d, dv));
            attn_recurrent_scan(rule, &io, 0, dv, S_kept, scan_scratch, kept);
            free(S_kept), free(scan_scratch);
        }
        float *work = floats(attn_recurrent_backward_floats(rule, n, d, dv, chunks[c], !kept));
        attn_recurrent_backward(rule, &io, dy, dF, chunks[c], kept, &grads, work);
        free(work), free(kept);
        float *all[] = {gq, gk, gv, gg, gb, gs};
        size_t len[] = {nd, nd, nv, (size_t)n * g_cols, (size_t)n, st};
        size_t at = 0;
        for (int a = 0; a < 6; a++) {
            if (a == 3 && !attn_recurrent_gated(rule)) { at += len[a]; continue; }
            if (a == 4 && !attn_recurrent_delta(rule)) { at += len[a]; continue; }
            if (first)
                memcpy(keep + at, all[a], len[a] * sizeof(float));
            else
                CHECK(!memcmp(keep + at, all[a], len[a] * sizeof(float)), "%s: chunk %d%s gives other bits than chunk 1 (array %d)",
                      label, chunks[c], c == 4 ? " from kept checkpoints" : "", a);
            at += len[a];
        }
        first = 0;
    }
    /* y from the backward's forward pass: the scan's bits */
    float *y2 = floats(nv), *S2 = floats(st), *scratch = floats((size_t)attn_recurrent_scan_scratch(d, dv));
    io.y = y2;
    attn_recurrent_scan(rule, &io, 0, dv, S2, scratch, 0);
    CHECK(!memcmp(y, y2, nv * sizeof *y), "%s: the backward's y differs from the scan's", label);

    problem p = {rule, n, d, dv, g_cols, io.scale, doubles(q, nd), doubles(k, nd), doubles(v, nv),
                 doubles(g, (size_t)n * g_cols), doubles(beta, (size_t)n), doubles(s0, st), doubles(dy, nv), doubles(dF, st)};
    double worst = 0;
    worst = fmax(worst, check_grad(&p, p.q, (int)nd, gq, label, "q"));
    worst = fmax(worst, check_grad(&p, p.k, (int)nd, gk, label, "k"));
    worst = fmax(worst, check_grad(&p, p.v, (int)nv, gv, label, "v"));
    if (attn_recurrent_gated(rule)) worst = fmax(worst, check_grad(&p, p.g, n * g_cols, gg, label, "g"));
    if (attn_recurrent_delta(rule)) worst = fmax(worst, check_grad(&p, p.beta, n, gb, label, "beta"));
    if (s0) worst = fmax(worst, check_grad(&p, p.s0, (int)st, gs, label, "s0"));
    free(p.q), free(p.k), free(p.v), free(p.g), free(p.beta), free(p.s0), free(p.dy), free(p.dF);
    free(q), free(k), free(v), free(g), free(beta), free(s0), free(dy), free(dF), free(y), free(y2), free(S2), free(scratch);
    free(gq), free(gk), free(gv), free(gg), free(gb), free(gs), free(keep);
    return worst;
}

/* plain-linear's gradients in float64 from the math, the recurrence walked back from the last
 * token (S_t = S_{t-1} + k_t v_t^T, y_t = scale S_t^T q_t; the loss of loss64): into gq, gk, gv
 * and gs (s0's). */
static void linear_grads64(const attn_recurrent_io *io, const float *dy, const float *dF, double *gq, double *gk,
                           double *gv, double *gs) {
    int n = io->n, d = io->d, dv = io->dv;
    size_t st = (size_t)d * dv;
    double *S = malloc((size_t)(n + 1) * st * sizeof *S), *dS = malloc(st * sizeof *dS);
    for (size_t i = 0; i < st; i++) S[i] = io->s0 ? io->s0[i] : 0.0;
    for (int t = 0; t < n; t++)
        for (int i = 0; i < d; i++)
            for (int j = 0; j < dv; j++)
                S[(t + 1) * st + (size_t)i * dv + j] = S[t * st + (size_t)i * dv + j] + (double)io->k[(size_t)t * d + i] * io->v[(size_t)t * dv + j];
    for (size_t i = 0; i < st; i++) dS[i] = dF[i];
    for (int t = n - 1; t >= 0; t--) {
        const double *St = S + (size_t)(t + 1) * st;
        const float *dyt = dy + (size_t)t * dv;
        for (int i = 0; i < d; i++) {
            double a = 0;
            for (int j = 0; j < dv; j++) a += St[(size_t)i * dv + j] * dyt[j];
            gq[(size_t)t * d + i] = io->scale * a;
            for (int j = 0; j < dv; j++) dS[(size_t)i * dv + j] += io->scale * (double)io->q[(size_t)t * d + i] * dyt[j];
        }
        for (int i = 0; i < d; i++) {
            double a = 0;
            for (int j = 0; j < dv; j++) a += dS[(size_t)i * dv + j] * io->v[(size_t)t * dv + j];
            gk[(size_t)t * d + i] = a;
        }
        for (int j = 0; j < dv; j++) {
            double a = 0;
            for (int i = 0; i < d; i++) a += dS[(size_t)i * dv + j] * io->k[(size_t)t * d + i];
            gv[(size_t)t * dv + j] = a;
        }
    }
    memcpy(gs, dS, st * sizeof *gs);
    free(S), free(dS);
}

/* got within 1e-4 + 1e-3 max|want| of want, element by element. */
static void grads_close(const float *got, const double *want, size_t count, const char *label, const char *what) {
    double max = 0;
    for (size_t i = 0; i < count; i++) max = fmax(max, fabs(want[i]));
    double bar = 1e-4 + 1e-3 * max;
    for (size_t i = 0; i < count; i++)
        CHECK(fabs(got[i] - want[i]) <= bar, "%s: d%s[%zu] = %.7g, float64 %.7g (bar %.3g)", label, what, i, got[i], want[i], bar);
}

/* The chunked forms (plain-linear, deltanet and gated-deltanet with d, dv >= 32 and d dv >= 64^2;
 * gla from 128^2; at gla's {64, 64} the scan, which the same checks hold for): y, the final state and the checkpoints
 * against the reference (each state at its token); keeping checkpoints leaves y's bits alone; a
 * split of the columns at a multiple of 8 gives the whole's bits; the backward's own forward
 * pass gives the forward's y, its gradients are those from a kept pass's checkpoints, and (with a
 * final-state gradient too) within the gradient bar of plain-linear's float64 gradients. */
/* gla's decays for chunked_case: g in (-1, 0]; "strong", in (-8, -6] on every fourth token of every
 * other 16 (the chunk length), so that those chunks sum past the factors' limit and run the scan's
 * steps while the others do not; "growing", g in [0, 0.3) */
typedef enum gate_kind { GATE_MILD, GATE_STRONG, GATE_GROWING } gate_kind;
static const char *const GATE_NAMES[] = {"mild", "strong", "growing"};

static void chunked_case(recurrent_rule rule, int n, int d, int dv, int g_cols, gate_kind gates, int with_s0) {
    char label[200];
    snprintf(label, sizeof label, "chunked %s n=%d d=%d dv=%d g_cols=%d gates=%s s0=%d seed=%u", RULE_NAMES[rule], n, d,
             dv, g_cols, GATE_NAMES[gates], with_s0, rng_state);
    size_t nd = (size_t)n * d, nv = (size_t)n * dv, st = (size_t)d * dv;
    float *q = floats(nd), *k = floats(nd), *v = floats(nv), *s0 = with_s0 ? floats(st) : 0, *dy = floats(nv);
    float *g = floats((size_t)n * g_cols), *beta = floats((size_t)n);
    for (size_t i = 0; i < nd; i++) q[i] = rnd(), k[i] = rnd() / sqrtf((float)d);
    for (int t = 0; t < n; t++) beta[t] = 0.5f * (rnd() + 1.0f);
    for (int t = 0; attn_recurrent_delta(rule) && t < n; t++) { /* unit-norm keys, as the bar asks of the delta rules */
        double ss = 0;
        for (int i = 0; i < d; i++) ss += (double)k[(size_t)t * d + i] * k[(size_t)t * d + i];
        for (int i = 0; i < d; i++) k[(size_t)t * d + i] = (float)(k[(size_t)t * d + i] / sqrt(ss));
    }
    for (size_t i = 0; i < nv; i++) v[i] = rnd(), dy[i] = rnd();
    for (size_t i = 0; s0 && i < st; i++) s0[i] = rnd();
    for (int t = 0; t < n; t++)
        for (int i = 0; i < g_cols; i++) {
            float u = 0.5f * (rnd() + 1.0f); /* [0, 1) */
            int strong = gates == GATE_STRONG && (t / 16) % 2 == 0 && t % 4 == 0;
            g[(size_t)t * g_cols + i] = gates == GATE_GROWING ? 0.3f * u : strong ? -6.0f - 2.0f * u : -u;
        }
    int spacing = 1;
    while (spacing * spacing < n) spacing++;
    size_t ckpts = attn_recurrent_checkpoint_floats(n, d, dv);
    float *y = floats(nv), *y2 = floats(nv), *S = floats(st), *S2 = floats(st), *kept = floats(ckpts);
    float *scratch = floats(attn_recurrent_forward_scratch(rule, d, dv));
    attn_recurrent_io io = {n, d, dv, g_cols, 1.0f / sqrtf((float)d), q, k, v, g, beta, s0, y};
    attn_recurrent_forward_columns(rule, &io, 0, dv, S, scratch, kept, spacing);

    double *ry = malloc(nv * sizeof *ry), *rS = malloc(st * sizeof *rS);
    reference(rule, &io, ry, rS);
    /* g > 0 grows the state, outside the contract's bar (as for the scan): there each element is
     * held to the bar of the array's largest reference value instead */
    double ry_max = 0, rS_max = 0;
    for (size_t i = 0; i < nv; i++) ry_max = fmax(ry_max, fabs(ry[i]));
    for (size_t i = 0; i < st; i++) rS_max = fmax(rS_max, fabs(rS[i]));
#define CLOSE(got, want, max) (gates == GATE_GROWING ? fabs((got) - (want)) <= 1e-5 + 1e-4 * (max) : close_to(got, want))
    for (size_t i = 0; i < nv; i++)
        CHECK(CLOSE(y[i], ry[i], ry_max), "%s: y[%zu, %zu] = %.9g, float64 %.9g", label, i / dv, i % dv, y[i], ry[i]);
    for (size_t i = 0; i < st; i++) CHECK(CLOSE(S[i], rS[i], rS_max), "%s: S[%zu] = %.9g, float64 %.9g", label, i, S[i], rS[i]);
    for (int c = 0; c * spacing < n; c++) { /* the state before token c * spacing: the first c * spacing tokens' */
        attn_recurrent_io head = io;
        head.n = c * spacing, head.y = y2;
        reference(rule, &head, ry, rS);
        for (size_t i = 0; i < st; i++)
            CHECK(CLOSE(kept[(size_t)c * st + i], rS[i], rS_max), "%s: checkpoint %d [%zu] = %.9g, float64 %.9g", label, c,
                  i, kept[(size_t)c * st + i], rS[i]);
    }
#undef CLOSE

    io.y = y2;
    attn_recurrent_forward_columns(rule, &io, 0, dv, S2, scratch, 0, spacing);
    CHECK(!memcmp(y, y2, nv * sizeof *y) && !memcmp(S, S2, st * sizeof *S), "%s: keeping checkpoints changed the bits", label);
    memset(y2, 0, nv * sizeof *y2);
    attn_recurrent_forward_columns(rule, &io, 0, 8, S2, scratch, 0, spacing);
    attn_recurrent_forward_columns(rule, &io, 8, dv, S2, scratch, 0, spacing);
    CHECK(!memcmp(y, y2, nv * sizeof *y) && !memcmp(S, S2, st * sizeof *S), "%s: columns [0, 8) and [8, dv) differ from the whole", label);

    size_t ng = (size_t)n * g_cols, half_len = 2 * nd + nv + st + ng + (size_t)n;
    float *all = floats(2 * half_len), *at = all;
    memset(all, 0, 2 * half_len * sizeof *all); /* s0's rows stay 0 without s0, g's without a gate */
    attn_recurrent_grads own, from_kept;
    float **fields[] = {&own.q, &own.k, &own.v, &own.s0, &own.g, &own.beta,
                        &from_kept.q, &from_kept.k, &from_kept.v, &from_kept.s0, &from_kept.g, &from_kept.beta};
    size_t len[] = {nd, nd, nv, st, ng, (size_t)n};
    for (int f = 0; f < 12; f++) *fields[f] = at, at += len[f % 6];
    if (!s0) own.s0 = from_kept.s0 = 0;
    float *work = floats(attn_recurrent_backward_floats(rule, n, d, dv, spacing, 1));
    memset(y2, 0, nv * sizeof *y2);
    attn_recurrent_backward(rule, &io, dy, 0, spacing, 0, &own, work);
    CHECK(!memcmp(y, y2, nv * sizeof *y), "%s: the backward's own forward pass gives other bits of y", label);
    attn_recurrent_backward(rule, &io, dy, 0, spacing, kept, &from_kept, work);
    CHECK(!memcmp(all, all + (at - all) / 2, (size_t)(at - all) / 2 * sizeof(float)),
          "%s: the gradients from kept checkpoints differ from the backward's own", label);
    if (rule == RECURRENT_RULE_linear) { /* the others': against referenceGrad in tests/gradients.test.mjs */
        float *dF = floats(st);
        for (size_t i = 0; i < st; i++) dF[i] = rnd();
        attn_recurrent_backward(rule, &io, dy, dF, spacing, 0, &own, work);
        double *gq = malloc(nd * sizeof *gq), *gk = malloc(nd * sizeof *gk), *gv = malloc(nv * sizeof *gv), *gs = malloc(st * sizeof *gs);
        linear_grads64(&io, dy, dF, gq, gk, gv, gs);
        grads_close(own.q, gq, nd, label, "q");
        grads_close(own.k, gk, nd, label, "k");
        grads_close(own.v, gv, nv, label, "v");
        if (s0) grads_close(own.s0, gs, st, label, "s0");
        free(dF), free(gq), free(gk), free(gv), free(gs);
    }
    free(q), free(k), free(v), free(s0), free(dy), free(y), free(y2), free(S), free(S2), free(kept), free(scratch);
    free(ry), free(rS), free(all), free(work), free(g), free(beta);
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
    static const int wns[] = {1, 2, 7, 19}, wds[] = {1, 4}, wdvs[] = {1, 6};
    for (int rule = 0; rule < RECURRENT_RULE_COUNT; rule++)
        for (int ni = 0; ni < 4; ni++)
            for (int di = 0; di < 2; di++)
                for (int vi = 0; vi < 2; vi++)
                    for (int per_token = 0; per_token < 2; per_token++) {
                        if (per_token && !attn_recurrent_gated((recurrent_rule)rule)) continue;
                        wrapper_case((recurrent_rule)rule, wns[ni], wds[di], wdvs[vi], per_token ? 1 : wds[di]);
                        cases++;
                    }
    static const int cns[] = {1, 3, 64, 65, 150}, cds[][2] = {{64, 64}, {131, 127}, {33, 260}, {128, 35}};
    for (int ni = 0; ni < 5; ni++)
        for (int di = 0; di < 4; di++)
            chunked_case(RECURRENT_RULE_linear, cns[ni], cds[di][0], cds[di][1], cds[di][0], GATE_MILD, (ni + di) & 1), cases++;
    for (int ni = 0; ni < 5; ni++)
        for (int di = 0; di < 4; di++)
            chunked_case(RECURRENT_RULE_delta, cns[ni], cds[di][0], cds[di][1], cds[di][0], GATE_MILD, (ni + di + 1) & 1), cases++;
    static const int gated_ds[][2] = {{128, 128}, {131, 129}, {33, 520}, {64, 64}};
    static const recurrent_rule gated_rules[] = {RECURRENT_RULE_gated, RECURRENT_RULE_gated_delta};
    for (int r = 0; r < 2; r++)
        for (int ni = 0; ni < 5; ni++)
            for (int di = 0; di < 4; di++)
                for (int gates = 0; gates < 3; gates++) {
                    if (gates == GATE_GROWING && cns[ni] > 65) continue; /* e^{0.3 n}: past float32's range */
                    chunked_case(gated_rules[r], cns[ni], gated_ds[di][0], gated_ds[di][1],
                                 (ni + gates) & 1 ? 1 : gated_ds[di][0], (gate_kind)gates, (ni + di) & 1);
                    cases++;
                }
    static const int gns[] = {1, 2, 5, 9}, gds[] = {1, 3}, gdvs[] = {1, 4};
    for (int rule = 0; rule < RECURRENT_RULE_COUNT; rule++) {
        double worst = 0;
        int grad_cases = 0;
        for (int ni = 0; ni < 4; ni++)
            for (int di = 0; di < 2; di++)
                for (int vi = 0; vi < 2; vi++)
                    for (int per_token = 0; per_token < 2; per_token++) {
                        if (per_token && !attn_recurrent_gated((recurrent_rule)rule)) continue;
                        worst = fmax(worst, grad_case((recurrent_rule)rule, gns[ni], gds[di], gdvs[vi], per_token ? 1 : gds[di], (ni + vi) & 1));
                        grad_cases++;
                    }
        printf("test_recurrent: backward %-11s %2d cases, worst error %.1e of the bar\n", RULE_NAMES[rule], grad_cases, worst);
    }
    if (failures) {
        fprintf(stderr, "test_recurrent: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_recurrent: %d cases, all %d checks passed\n", cases, checks);
    return 0;
}
