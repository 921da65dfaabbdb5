/* test_linear_backward.c — attn_backward of every linear-family variant of the registry, causal
 * and not, built natively under AddressSanitizer and UBSan like test_native.c.
 *
 * The reference is independent of the C core: the float64 forward pass written from the
 * definitions of docs/contract.md (the explicit A, then y = A v) and central differences of
 * L = sum(dout * y) in float64. Each gradient element must lie within 1e-4 + 1e-3 * max|ref| of
 * them (max over that array). Sizes cross the SIMD width and the chunk of 64 rows (n = 130 spans
 * three chunks). For n > 17 the differences are taken on the rows around the chunk edges only:
 * every row of k and v moves every output, so a full check costs O(n^3 d). Also: the backward's
 * output is attn_run's to the bit, each buffer is allocated at exactly its size so an overrun is
 * caught, a causal efficient chunk whose prefix sums underflow (the row-by-row path) is checked,
 * and a taylor row with |q| = 0 under eps = 0 gives finite gradients.
 * Inputs are drawn again while some row is ill-conditioned (conditioning() below): docs/contract.md
 * holds a row whose similarities sum to the order of eps only to the float32-evaluation bar. At
 * d = 1 taylor's unit vectors are +-1, so a query opposite every key it sees has similarities of
 * exactly 0, and the factored form's terms g_i / eps (10^6 times the result) leave rounding of
 * the same order in every gradient. The number of draws set aside is printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/c/internal.h" /* the registry (attn_family_of, attn_accepts) and linear_form */

/* The float64 reference is O(n^2 d) per difference; unoptimised under the sanitizers it would
 * take minutes. (gcc only: clang has no such pragma, and build.sh compiles with gcc.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")
#endif

#include "check.h"

/* ---- float64 reference, from the definitions ---- */

typedef struct problem {
    attn_variant var;
    int n, d, dv, causal;
    double eps;
    double *q, *k, *v, *g; /* g = dout */
    double *A, *fq, *fk;   /* scratch: [n, n], [n, d], [n, d] */
    double *sums;          /* scratch: [d] */
} problem;

static double elu1(double t) { return t > 0 ? t + 1 : exp(t); }

/* Rows of x normalised, x / max(|x|, 1e-12). */
static void unit_rows(int n, int d, const double *x, double *out) {
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int c = 0; c < d; c++) s += x[i * d + c] * x[i * d + c];
        double norm = fmax(sqrt(s), 1e-12);
        for (int c = 0; c < d; c++) out[i * d + c] = x[i * d + c] / norm;
    }
}

static void ref_weights(const problem *p, int row) {
    int n = p->n, d = p->d;
    double *A = p->A;
    linear_form form = attn_linear_form(p->var);
    if (form == LINEAR_FORM_efficient) {
        for (int i = 0; i < n; i++) { /* rho_q: softmax of each q row over its features */
            if (row >= 0 && i != row) continue;
            double mx = -INFINITY, s = 0;
            for (int c = 0; c < d; c++) mx = fmax(mx, p->q[i * d + c]);
            for (int c = 0; c < d; c++) s += p->fq[i * d + c] = exp(p->q[i * d + c] - mx);
            for (int c = 0; c < d; c++) p->fq[i * d + c] /= s;
        }
        /* rho_k = exp(k) over the sum of exp(k) over the positions j < valid; |k| stays far
         * below float64's exp range in these tests, so no maximum is subtracted */
        double *ek = p->fk, *sums = p->sums;
        for (int i = 0; i < n * d; i++) ek[i] = exp(p->k[i]);
        for (int c = 0; c < d; c++) sums[c] = 0;
        for (int j = 0; j < n && !p->causal; j++)
            for (int c = 0; c < d; c++) sums[c] += ek[j * d + c];
        for (int i = 0; i < n; i++) {
            int valid = p->causal ? i + 1 : n;
            for (int c = 0; c < d && p->causal; c++) sums[c] += ek[i * d + c];
            if (row >= 0 && i != row) continue;
            for (int c = 0; c < d; c++) p->fq[i * d + c] /= sums[c]; /* rho_q / sums, this row only */
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int c = 0; c < d && j < valid; c++) s += p->fq[i * d + c] * ek[j * d + c];
                A[i * n + j] = s;
            }
        }
        return;
    }
    /* phi(q)·phi(k) = fq·fk + constant: one case per form of the core, so a new one needs its
     * reference here before this test compiles */
    double constant = 0;
    switch (form) {
    case LINEAR_FORM_elu1:
        for (int i = 0; i < n * d; i++) p->fq[i] = elu1(p->q[i]), p->fk[i] = elu1(p->k[i]);
        break;
    case LINEAR_FORM_taylor: /* 1 + q̂·k̂ */
        unit_rows(n, d, p->q, p->fq);
        unit_rows(n, d, p->k, p->fk);
        constant = 1;
        break;
    case LINEAR_FORM_efficient: /* above */
    case LINEAR_FORM_COUNT: break;
    }
    for (int i = row < 0 ? 0 : row; i < (row < 0 ? n : row + 1); i++) {
        int valid = p->causal ? i + 1 : n;
        double sum = 0;
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int c = 0; c < d; c++) s += p->fq[i * d + c] * p->fk[j * d + c];
            s += constant;
            A[i * n + j] = j < valid ? s : 0;
            sum += A[i * n + j];
        }
        for (int j = 0; j < n; j++) A[i * n + j] /= sum + p->eps;
    }
}

/* L = sum(dout * A v), or only row `row`'s share of it (row >= 0: only q_row moved, which moves
 * no other row of A); A is reused when only v moved. */
static double ref_loss(const problem *p, int row, int reuse_A) {
    if (!reuse_A) ref_weights(p, row);
    int n = p->n, dv = p->dv;
    double L = 0;
    for (int i = row < 0 ? 0 : row; i < (row < 0 ? n : row + 1); i++)
        for (int e = 0; e < dv; e++) {
            double y = 0;
            for (int j = 0; j < n; j++) y += p->A[i * n + j] * p->v[j * dv + e];
            L += p->g[i * dv + e] * y;
        }
    return L;
}

/* The rows whose gradient is checked by differences. */
static int sample_rows(int n, int *rows) {
    if (n <= 17) {
        for (int i = 0; i < n; i++) rows[i] = i;
        return n;
    }
    int want[] = {0, 1, n / 2, 63, 64, 65, 127, n - 1}, count = 0;
    for (int w = 0; w < (int)(sizeof want / sizeof *want); w++) {
        int r = want[w], seen = r < 0 || r >= n;
        for (int c = 0; c < count && !seen; c++) seen = rows[c] == r;
        if (!seen) rows[count++] = r;
    }
    return count;
}

/* Central differences of x's sampled rows against the C gradient; returns the worst error / bar. */
static double check_array(problem *p, double *x, int width, const float *grad, const char *label,
                          const char *what) {
    int rows[32], count = sample_rows(p->n, rows), is_q = x == p->q, is_v = x == p->v;
    if (is_v) ref_weights(p, -1);
    double *ref = malloc((size_t)count * width * sizeof *ref), max_ref = 0;
    for (int s = 0; s < count; s++)
        for (int c = 0; c < width; c++) {
            double *e = x + (size_t)rows[s] * width + c, keep = *e, h = 1e-5;
            int row = is_q ? rows[s] : -1;
            *e = keep + h;
            double up = ref_loss(p, row, is_v);
            *e = keep - h;
            double down = ref_loss(p, row, is_v);
            *e = keep;
            ref[s * width + c] = (up - down) / (2 * h);
            max_ref = fmax(max_ref, fabs(ref[s * width + c]));
        }
    double bar = 1e-4 + 1e-3 * max_ref, worst = 0;
    for (int s = 0; s < count; s++)
        for (int c = 0; c < width; c++) {
            double got = grad[(size_t)rows[s] * width + c], err = fabs(got - ref[s * width + c]);
            worst = fmax(worst, err / bar);
            CHECK(err <= bar, "%s: d%s[%d, %d] = %.7g, differences give %.7g (bar %.3g)", label, what,
                  rows[s], c, got, ref[s * width + c], bar);
        }
    free(ref);
    return worst;
}

/* ---- the C core ---- */

typedef struct run {
    float *q, *k, *v, *g, *out, *gq, *gk, *gv;
} run;

static void run_backward(attn_variant var, const attn_dims *dims, const attn_options *opt,
                         run *r, const char *label) {
    attn_plan plan;
    const char *detail = "";
    attn_status s = attn_plan_make(var, dims, opt, ATTN_WANT_GRADS, &plan, &detail);
    CHECK(s == ATTN_OK, "%s: plan: %s", label, detail);
    if (s != ATTN_OK) return;
    void *ws = aligned_alloc(16, plan.workspace_bytes ? plan.workspace_bytes : 16);
    attn_inputs in = {.q = r->q, .k = r->k, .v = r->v};
    attn_grads grads = {.q = r->gq, .k = r->gk, .v = r->gv};
    s = attn_plan_backward(&plan, &in, r->g, r->out, &grads, ws, plan.workspace_bytes, &detail);
    CHECK(s == ATTN_OK, "%s: backward: %s", label, detail);
    free(ws);
}

static float *floats(size_t count) { return malloc((count ? count : 1) * sizeof(float)); }

static int finite_all(const float *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The largest condition number over rows of the normalised similarities: sum_j |sim(i, j)| /
 * (|sum_j sim(i, j)| + eps) for the keys row i sees, sim's terms taken apart where they can cancel
 * (taylor: 1 + q̂·k̂). 1 where every term is positive (elu+1) or there is no eps (efficient). */
static double conditioning(attn_variant var, int n, int d, int causal, double eps, const float *q,
                           const float *k) {
    double worst = 1;
    switch (attn_linear_form(var)) {
    case LINEAR_FORM_elu1: case LINEAR_FORM_efficient: return 1;
    case LINEAR_FORM_taylor: {
        double *qd = malloc((size_t)n * d * sizeof *qd), *kd = malloc((size_t)n * d * sizeof *kd);
        double *qh = malloc((size_t)n * d * sizeof *qh), *kh = malloc((size_t)n * d * sizeof *kh);
        for (int i = 0; i < n * d; i++) qd[i] = q[i], kd[i] = k[i];
        unit_rows(n, d, qd, qh);
        unit_rows(n, d, kd, kh);
        for (int i = 0; i < n; i++) {
            double sum = 0, size = 0;
            for (int j = 0; j < (causal ? i + 1 : n); j++) {
                double dot = 0;
                for (int c = 0; c < d; c++) dot += qh[i * d + c] * kh[j * d + c];
                sum += 1 + dot, size += 1 + fabs(dot);
            }
            worst = fmax(worst, size / (fabs(sum) + eps));
        }
        free(qd), free(kd), free(qh), free(kh);
        return worst;
    }
    case LINEAR_FORM_COUNT: break;
    }
    return worst;
}

static int ill_conditioned_draws; /* inputs drawn again (see the top of this file) */

/* kscale > 0: k's values spread by that much (a causal efficient chunk that underflows). */
static double run_case(attn_variant var, int n, int d, int dv, int causal, float eps, float kscale) {
    char label[128];
    snprintf(label, sizeof label, "%s n=%d d=%d dv=%d causal=%d eps=%g%s", attn_variant_id(var), n, d, dv,
             causal, eps, kscale > 0 ? " wide k" : "");
    attn_dims dims = {.n = n, .d = d, .dv = dv};
    attn_options opt;
    attn_options_default(&opt);
    opt.causal = causal;
    opt.eps = eps;
    run r = {floats((size_t)n * d), floats((size_t)n * d), floats((size_t)n * dv), floats((size_t)n * dv),
             floats((size_t)n * dv), floats((size_t)n * d), floats((size_t)n * d), floats((size_t)n * dv)};
    for (;;) {
        for (int i = 0; i < n * d; i++) r.q[i] = 2 * rnd(), r.k[i] = 2 * rnd();
        if (conditioning(var, n, d, causal, eps, r.q, r.k) <= 1e4) break;
        ill_conditioned_draws++;
    }
    if (kscale > 0)
        for (int i = 0; i < n; i++) r.k[i * d] = kscale * (float)((i * 37) % 11 - 5);
    for (int i = 0; i < n * dv; i++) r.v[i] = 2 * rnd(), r.g[i] = 2 * rnd();
    run_backward(var, &dims, &opt, &r, label);

    /* The forward pass inside the backward is attn_run's, to the bit. */
    float *y = floats((size_t)n * dv);
    size_t bytes = 0;
    attn_workspace_size(var, &dims, &opt, 0, &bytes);
    void *ws = aligned_alloc(16, bytes ? bytes : 16);
    attn_inputs in = {.q = r.q, .k = r.k, .v = r.v};
    const char *detail;
    CHECK(attn_run(var, &dims, &in, &opt, y, 0, ws, bytes, &detail) == ATTN_OK, "%s: run", label);
    CHECK(memcmp(y, r.out, (size_t)n * dv * sizeof *y) == 0, "%s: out differs from attn_run's y", label);
    free(ws);
    free(y);

    problem p = {var, n, d, dv, causal, eps, 0, 0, 0, 0, 0, 0, 0, 0};
    double **arrays[] = {&p.q, &p.k, &p.v, &p.g};
    const float *srcs[] = {r.q, r.k, r.v, r.g};
    int widths[] = {d, d, dv, dv};
    for (int a = 0; a < 4; a++) {
        *arrays[a] = malloc((size_t)n * widths[a] * sizeof(double));
        for (int i = 0; i < n * widths[a]; i++) (*arrays[a])[i] = srcs[a][i];
    }
    p.A = malloc((size_t)n * n * sizeof(double));
    p.fq = malloc((size_t)n * d * sizeof(double));
    p.fk = malloc((size_t)n * d * sizeof(double));
    p.sums = malloc((size_t)d * sizeof(double));
    double worst = check_array(&p, p.q, d, r.gq, label, "q");
    worst = fmax(worst, check_array(&p, p.k, d, r.gk, label, "k"));
    worst = fmax(worst, check_array(&p, p.v, dv, r.gv, label, "v"));
    CHECK(finite_all(r.gq, (size_t)n * d) && finite_all(r.gk, (size_t)n * d) && finite_all(r.gv, (size_t)n * dv),
          "%s: a gradient is not finite", label);
    for (int a = 0; a < 4; a++) free(*arrays[a]);
    free(p.A), free(p.fq), free(p.fk), free(p.sums);
    free(r.q), free(r.k), free(r.v), free(r.g), free(r.out), free(r.gq), free(r.gk), free(r.gv);
    return worst;
}

/* A taylor query row of zeros, eps = 0: the forward is finite (every similarity is 1), and so
 * must the gradients be. */
static void zero_row_case(int causal) {
    int n = 70, d = 4, dv = 3;
    attn_dims dims = {.n = n, .d = d, .dv = dv};
    attn_options opt;
    attn_options_default(&opt);
    opt.causal = causal;
    opt.eps = 0.0f;
    run r = {floats((size_t)n * d), floats((size_t)n * d), floats((size_t)n * dv), floats((size_t)n * dv),
             floats((size_t)n * dv), floats((size_t)n * d), floats((size_t)n * d), floats((size_t)n * dv)};
    for (int i = 0; i < n * d; i++) r.q[i] = 2 * rnd(), r.k[i] = 2 * rnd();
    for (int i = 0; i < n * dv; i++) r.v[i] = 2 * rnd(), r.g[i] = 2 * rnd();
    for (int c = 0; c < d; c++) r.q[3 * d + c] = 0.0f, r.q[66 * d + c] = 0.0f, r.k[5 * d + c] = 0.0f;
    run_backward(ATTN_TAYLOR, &dims, &opt, &r, "taylor zero rows");
    CHECK(finite_all(r.out, (size_t)n * dv), "taylor zero rows causal=%d: out not finite", causal);
    CHECK(finite_all(r.gq, (size_t)n * d) && finite_all(r.gk, (size_t)n * d) && finite_all(r.gv, (size_t)n * dv),
          "taylor zero rows causal=%d: a gradient is not finite", causal);
    free(r.q), free(r.k), free(r.v), free(r.g), free(r.out), free(r.gq), free(r.gk), free(r.gv);
}

int main(void) {
    rng_state = 2024u; /* the seed these cases were written with */
    static const int ns[] = {1, 3, 4, 5, 17, 64, 130}, ds[] = {1, 3, 8}, dvs[] = {1, 5};
    static const float epss[] = {1e-6f, 0.1f};
    int variants = 0;
    for (int vi = 0; vi < ATTN_VARIANT_COUNT; vi++) { /* every variant of the linear family */
        attn_variant var = (attn_variant)vi;
        if (attn_family_of(var) != FAMILY_linear) continue;
        variants++;
        double worst = 0;
        int cases = 0;
        for (int ni = 0; ni < 7; ni++)
            for (int di = 0; di < 3; di++)
                for (int vvi = 0; vvi < 2; vvi++)
                    for (int causal = 0; causal < 2; causal++)
                        for (int ei = 0; ei < 2; ei++) {
                            /* a variant without eps (efficient): one run each */
                            if (ei && !attn_accepts(var, OPTION_eps)) continue;
                            worst = fmax(worst, run_case(var, ns[ni], ds[di], dvs[vvi], causal, epss[ei], 0));
                            cases++;
                        }
        printf("test_linear_backward: %-9s %3d cases, worst error %.3f of the bar\n", attn_variant_id(var),
               cases, worst);
    }
    CHECK(variants > 0, "no variant of the linear family in the registry");
    double wide = 0;
    for (int causal = 0; causal < 2; causal++)
        wide = fmax(wide, run_case(ATTN_EFFICIENT, 130, 3, 2, causal, 1e-6f, 30.0f));
    printf("test_linear_backward: efficient with k spread over +-150: worst %.3f of the bar\n", wide);
    printf("test_linear_backward: %d ill-conditioned draws of q and k set aside\n", ill_conditioned_draws);
    zero_row_case(0);
    zero_row_case(1);
    if (failures) {
        fprintf(stderr, "test_linear_backward: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("test_linear_backward: all %d checks passed\n", checks);
    return 0;
}
