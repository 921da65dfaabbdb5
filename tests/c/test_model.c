/* test_model.c — the small-transformer engine (src/c/model_*.c), natively under ASan + UBSan.
 *
 * The float64 model below is written from the model contract (docs/model.md) and calls nothing
 * from src/c: its own parameter list (checked against the C table; which arrays a head carries it
 * reads from the registry, variants.def's inputs column, as the contract says), its own attention
 * matrices (docs/contract.md's definitions), LayerNorm, GELU and the masked cross-entropy.
 * The C gradients of every parameter are checked against central differences of that float64 loss,
 * for every variant, 1-2 layers, 1-2 heads, causal and not. A variant added to the registry whose
 * attention this file does not define (has_float64_attention) still trains here under the
 * sanitizers and has its parameter table checked; its gradients are checked against the float64
 * model of src/js/reference-model.js by tests/model.test.mjs. Then: a softmax model overfits one
 * batch, frozen parameters stay put, the same seed gives bit-identical training, the initial values
 * equal src/js/prng.js's, and bad configs and inputs are refused with a detail.
 * Each check draws its numbers from a stream of its own (stream_named), so that a variant added to
 * the registry changes no other check's numbers.
 * `test_model bench [variant]` times training steps at the reference shape instead. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/c/internal.h" /* the registry's typed tables: attn_family_of, attn_accepts, ... */

#include "check.h"

/* ---- the registry, as this test reads it (registry.c's tables; variants.def's inputs column) ---- */

static const char *variant_name(int v) { return attn_variant_id((attn_variant)v); }
/* Whether variant v takes an option (its options column). */
static int takes(int v, option_id option) { return attn_accepts((attn_variant)v, option); }

/* The arrays a variant reads: its inputs column, as names and the names of their dimensions. */
typedef struct rarray {
    const char *name, *rows, *cols; /* cols NULL: a vector */
} rarray;
#define MATRIX(name, rows, cols) {#name, #rows, #cols},
#define VECTOR(name, length) {#name, #length, NULL},
#define OPTIONAL_MATRIX(name, rows, cols) {#name, #rows, #cols},
#define X(ENUM, id, label, family, form, mixable, dims, inputs, ...) static const rarray ENUM##_arrays[] = {inputs};
#include "../../src/c/variants.def"
#undef X
#undef MATRIX
#undef VECTOR
#undef OPTIONAL_MATRIX
static const struct {
    const rarray *at;
    int count;
} arrays_of[ATTN_VARIANT_COUNT] = {
#define X(ENUM, ...) {ENUM##_arrays, (int)(sizeof ENUM##_arrays / sizeof *ENUM##_arrays)},
#include "../../src/c/variants.def"
#undef X
};
static const char *const input_names[] = {
#define X(name) #name,
    ATTN_INPUT_LIST(X)
#undef X
};
enum { INPUTS = sizeof input_names / sizeof *input_names };

/* ---- numbers: each check its own stream ---- */

typedef struct stream {
    unsigned state;
} stream;
/* The stream of a check, seeded from its name (FNV-1a), so that no check's numbers depend on how
 * many the checks before it drew. */
static stream stream_named(const char *name) {
    unsigned h = 0x811c9dc5u;
    for (; *name; name++) h = (h ^ (unsigned char)*name) * 0x01000193u;
    return (stream){h};
}
static double urand(stream *s) { /* [0, 1) */
    s->state = s->state * 1664525u + 1013904223u;
    return (double)(s->state >> 8) / 16777216.0;
}

/* ---- the float64 model ---- */

typedef struct rparam {
    char name[32];
    int rows, cols; /* cols 0: a vector of `rows` */
    size_t off;
} rparam;

typedef struct rmodel {
    attn_model_config cfg;
    int V, T, D, H, layers, F, dh, hid, a, b, rank;
    int np;
    rparam p[512];
    size_t total;
} rmodel;

static void add_param(rmodel *m, const char *name, int rows, int cols) {
    rparam *p = &m->p[m->np++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->rows = rows, p->cols = cols;
    p->off = m->total;
    m->total += (size_t)rows * (cols ? cols : 1);
}

/* A head's size for a dimension name of variants.def (docs/model.md: n and L are seqLen, d and dv
 * the head width, h the hidden width, then a, b and rank), or 0 for a name it does not give. */
static int head_dim(const rmodel *m, const char *name) {
    if (!strcmp(name, "n") || !strcmp(name, "L")) return m->T;
    if (!strcmp(name, "d") || !strcmp(name, "dv")) return m->dh;
    if (!strcmp(name, "h")) return m->hid;
    if (!strcmp(name, "a")) return m->a;
    if (!strcmp(name, "b")) return m->b;
    if (!strcmp(name, "rank")) return m->rank;
    return 0;
}

static void rmodel_make(rmodel *m, const attn_model_config *cfg) {
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->V = cfg->vocab, m->T = cfg->seq_len, m->D = cfg->d_model, m->H = cfg->heads;
    m->layers = cfg->layers, m->F = cfg->d_ff, m->dh = m->D / m->H;
    m->hid = cfg->hidden ? cfg->hidden : m->dh;
    m->rank = cfg->rank ? cfg->rank : (m->T < 8 ? m->T : 8);
    m->a = 1;
    for (int f = 1; f * f <= m->T; f++)
        if (m->T % f == 0) m->a = f;
    m->b = m->T / m->a;
    /* the arrays a head reads (a mixture: its components'), by ATTN_INPUT_LIST index */
    const rarray *reads[INPUTS] = {0};
    int composite = takes(cfg->variant, OPTION_components);
    for (int c = 0; c < (composite ? cfg->options.n_components : 1); c++) {
        int v = composite ? cfg->options.component[c] : cfg->variant;
        for (int i = 0; i < arrays_of[v].count; i++)
            for (int k = 0; k < INPUTS; k++)
                if (!strcmp(arrays_of[v].at[i].name, input_names[k])) reads[k] = &arrays_of[v].at[i];
    }
    int D = m->D, dh = m->dh, T = m->T;
    char name[64];
    add_param(m, "tok_emb", m->V, D);
    add_param(m, "pos_emb", T, D);
    for (int l = 0; l < m->layers; l++) {
#define NAME(...) (snprintf(name, sizeof name, __VA_ARGS__), name)
        add_param(m, NAME("l%d.ln1.g", l), D, 0);
        add_param(m, NAME("l%d.ln1.b", l), D, 0);
        /* docs/model.md: the arrays in ATTN_INPUT_LIST order, q, k, x through their projections
         * [dModel, dh], the others at their shapes; a mixture's logits; wv last */
        for (int h = 0; h < m->H; h++) {
            for (int k = 0; k < INPUTS; k++) {
                const rarray *a = reads[k];
                if (!a || !strcmp(a->name, "v")) continue;
                if (!strcmp(a->name, "q") || !strcmp(a->name, "k") || !strcmp(a->name, "x")) {
                    add_param(m, NAME("l%d.h%d.w%s", l, h, a->name), D, dh);
                    continue;
                }
                int rows = head_dim(m, a->rows), cols = a->cols ? head_dim(m, a->cols) : 0;
                CHECK(rows && (cols || !a->cols), "%s: variants.def gives %s a dimension docs/model.md does not size (%s*%s)",
                      variant_name(cfg->variant), a->name, a->rows, a->cols ? a->cols : "");
                add_param(m, NAME("l%d.h%d.%s", l, h, a->name), rows, cols);
            }
            if (composite) add_param(m, NAME("l%d.h%d.alpha", l, h), cfg->options.n_components, 0);
            add_param(m, NAME("l%d.h%d.wv", l, h), D, dh);
        }
        add_param(m, NAME("l%d.wo", l), D, D);
        add_param(m, NAME("l%d.ln2.g", l), D, 0), add_param(m, NAME("l%d.ln2.b", l), D, 0);
        add_param(m, NAME("l%d.fc1", l), D, m->F), add_param(m, NAME("l%d.fc1b", l), m->F, 0);
        add_param(m, NAME("l%d.fc2", l), m->F, D), add_param(m, NAME("l%d.fc2b", l), D, 0);
#undef NAME
    }
    add_param(m, "lnf.g", D, 0), add_param(m, "lnf.b", D, 0);
    add_param(m, "out", D, m->V), add_param(m, "outb", m->V, 0);
}

static const double *rfind(const rmodel *m, const double *P, const char *name) {
    for (int i = 0; i < m->np; i++)
        if (!strcmp(m->p[i].name, name)) return P + m->p[i].off;
    return NULL;
}

/* C[m, n] = A[m, k] B[k, n] (+ bias per column) */
static void rmatmul(int M, int N, int K, const double *A, const double *B, const double *bias, double *C) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = bias ? bias[j] : 0.0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

static void rlayernorm(int rows, int D, const double *x, const double *g, const double *b, double *y) {
    for (int i = 0; i < rows; i++) {
        double mean = 0, var = 0;
        for (int c = 0; c < D; c++) mean += x[i * D + c];
        mean /= D;
        for (int c = 0; c < D; c++) var += (x[i * D + c] - mean) * (x[i * D + c] - mean);
        var /= D;
        for (int c = 0; c < D; c++) y[i * D + c] = (x[i * D + c] - mean) / sqrt(var + 1e-5) * g[c] + b[c];
    }
}

static double rgelu(double t) { return 0.5 * t * (1 + tanh(0.7978845608 * (t + 0.044715 * t * t * t))); }

/* The variants whose float64 attention this file defines: the softmax-type ones whose logits
 * rlogits knows (and mixtures of them), linear, taylor, efficient and every fixed pattern. A variant
 * added to the registry is not among them until this file defines it (see the header). */
static int has_float64_logits(int v) {
    return v == ATTN_SOFTMAX || v == ATTN_DENSE || v == ATTN_DENSE1 || v == ATTN_RANDOM ||
           v == ATTN_FACTORIZED_DENSE || v == ATTN_FACTORIZED_RANDOM;
}
static int has_float64_attention(const attn_model_config *cfg) {
    int v = cfg->variant;
    if (attn_family_of((attn_variant)v) == FAMILY_fixed || v == ATTN_LINEAR || v == ATTN_TAYLOR || v == ATTN_EFFICIENT) return 1;
    if (!takes(v, OPTION_components)) return has_float64_logits(v);
    for (int c = 0; c < cfg->options.n_components; c++)
        if (!has_float64_logits(cfg->options.component[c])) return 0;
    return 1;
}

/* The logits B [T, T] of a softmax-type variant (has_float64_logits). */
static void rlogits(const rmodel *m, int v, const double *P, const char *pre, const double *q, const double *k,
                    const double *x, double *B) {
    int T = m->T, dh = m->dh;
    char name[64];
#define PARAM(s) (snprintf(name, sizeof name, "%s%s", pre, s), rfind(m, P, name))
    const double *w1 = PARAM("w1"), *b1 = PARAM("b1"), *w2 = PARAM("w2"), *b2 = PARAM("b2"), *w = PARAM("w");
    const double *r = PARAM("r"), *wa = PARAM("wa"), *ba = PARAM("ba"), *wb = PARAM("wb"), *bb = PARAM("bb");
    const double *r1 = PARAM("r1"), *r2 = PARAM("r2");
#undef PARAM
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double s = 0;
            if (v == ATTN_SOFTMAX) {
                for (int c = 0; c < dh; c++) s += q[i * dh + c] * k[j * dh + c];
                s *= m->cfg.options.has_scale ? m->cfg.options.scale : 1.0 / sqrt((double)dh);
            } else if (v == ATTN_DENSE) {
                s = b2[j];
                for (int e = 0; e < m->hid; e++) {
                    double hdn = b1[e];
                    for (int c = 0; c < dh; c++) hdn += x[i * dh + c] * w1[c * m->hid + e];
                    if (hdn > 0) s += hdn * w2[e * T + j];
                }
            } else if (v == ATTN_DENSE1) {
                for (int c = 0; c < dh; c++) s += x[i * dh + c] * w[c * T + j];
            } else if (v == ATTN_RANDOM) {
                s = r[i * T + j];
            } else if (v == ATTN_FACTORIZED_DENSE) {
                int ca = m->cfg.options.tiling ? j % m->a : j / m->b, cb = j % m->b;
                double fa = ba[ca], fb = bb[cb];
                for (int c = 0; c < dh; c++) fa += x[i * dh + c] * wa[c * m->a + ca], fb += x[i * dh + c] * wb[c * m->b + cb];
                s = fa * fb;
            } else if (v == ATTN_FACTORIZED_RANDOM) {
                for (int c = 0; c < m->rank; c++) s += r1[i * m->rank + c] * r2[j * m->rank + c];
            }
            B[i * T + j] = s;
        }
}

/* The attention matrix A [T, T] of head `pre` from its q, k, x. */
static void rattention(const rmodel *m, const double *P, const char *pre, int head, const double *q,
                       const double *k, const double *x, double *A) {
    int T = m->T, dh = m->dh, v = m->cfg.variant, causal = m->cfg.causal != 0;
    double eps = m->cfg.options.eps;
    double B[64 * 64], tmp[64 * 64];
    memset(A, 0, sizeof(double) * T * T);
    if (attn_family_of((attn_variant)v) == FAMILY_fixed) {
        /* docs/model.md's default cycle, and the patterns of it a causal model may take */
        static const int all[] = {ATTN_PATTERN_PREVIOUS, ATTN_PATTERN_CURRENT, ATTN_PATTERN_NEXT, ATTN_PATTERN_LEFT,
                                  ATTN_PATTERN_RIGHT, ATTN_PATTERN_FIRST, ATTN_PATTERN_LAST};
        static const int causal_ok[] = {ATTN_PATTERN_PREVIOUS, ATTN_PATTERN_CURRENT, ATTN_PATTERN_LEFT, ATTN_PATTERN_FIRST};
#define BEHIND(ENUM, name, ahead, description) +!(ahead)
        _Static_assert(sizeof all / sizeof *all == ATTN_PATTERN_COUNT, "a new pattern needs its place in the cycle");
        _Static_assert(sizeof causal_ok / sizeof *causal_ok == 0 ATTN_PATTERN_LIST(BEHIND),
                       "a new pattern that does not look ahead needs its place in the causal cycle");
#undef BEHIND
        int pat = m->cfg.n_patterns ? m->cfg.patterns[head % m->cfg.n_patterns]
                  : causal ? causal_ok[head % (sizeof causal_ok / sizeof *causal_ok)] : all[head % ATTN_PATTERN_COUNT];
        int w = m->cfg.options.window;
        for (int i = 0; i < T; i++) {
            int lo = i, hi = i;
            if (pat == ATTN_PATTERN_PREVIOUS) lo = hi = i > 0 ? i - 1 : 0;
            if (pat == ATTN_PATTERN_NEXT) lo = hi = i < T - 1 ? i + 1 : i;
            if (pat == ATTN_PATTERN_LEFT && i > 0) lo = i - w < 0 ? 0 : i - w, hi = i - 1;
            if (pat == ATTN_PATTERN_RIGHT && i < T - 1) lo = i + 1, hi = i + w > T - 1 ? T - 1 : i + w;
            if (pat == ATTN_PATTERN_FIRST) lo = hi = 0;
            if (pat == ATTN_PATTERN_LAST) lo = hi = T - 1;
            for (int j = lo; j <= hi; j++) A[i * T + j] = 1.0 / (hi - lo + 1);
        }
        return;
    }
    if (v == ATTN_LINEAR || v == ATTN_TAYLOR) {
        for (int i = 0; i < T; i++) {
            double den = 0, nq = 0;
            for (int c = 0; c < dh; c++) nq += q[i * dh + c] * q[i * dh + c];
            nq = fmax(sqrt(nq), 1e-12);
            for (int j = 0; j <= (causal ? i : T - 1); j++) {
                double s = 0, nk = 0;
                for (int c = 0; c < dh; c++) nk += k[j * dh + c] * k[j * dh + c];
                nk = fmax(sqrt(nk), 1e-12);
                for (int c = 0; c < dh; c++) {
                    double a = q[i * dh + c], b = k[j * dh + c];
                    if (v == ATTN_LINEAR) s += (a > 0 ? a + 1 : exp(a)) * (b > 0 ? b + 1 : exp(b));
                    else s += a / nq * (b / nk);
                }
                if (v == ATTN_TAYLOR) s += 1;
                A[i * T + j] = s, den += s;
            }
            for (int j = 0; j < T; j++) A[i * T + j] /= den + eps;
        }
        return;
    }
    if (v == ATTN_EFFICIENT) {
        for (int i = 0; i < T; i++) {
            double rq[64], mx = -INFINITY, sum = 0;
            for (int c = 0; c < dh; c++) mx = fmax(mx, q[i * dh + c]);
            for (int c = 0; c < dh; c++) sum += rq[c] = exp(q[i * dh + c] - mx);
            int last = causal ? i : T - 1;
            for (int c = 0; c < dh; c++) {
                double kmx = -INFINITY, ks = 0;
                for (int j = 0; j <= last; j++) kmx = fmax(kmx, k[j * dh + c]);
                for (int j = 0; j <= last; j++) ks += exp(k[j * dh + c] - kmx);
                for (int j = 0; j <= last; j++) A[i * T + j] += rq[c] / sum * exp(k[j * dh + c] - kmx) / ks;
            }
        }
        return;
    }
    /* softmax-type */
    if (takes(v, OPTION_components)) {
        char name[64];
        snprintf(name, sizeof name, "%salpha", pre);
        const double *al = rfind(m, P, name);
        int nc = m->cfg.options.n_components;
        double mx = -INFINITY, sum = 0, w[8];
        for (int c = 0; c < nc; c++) mx = fmax(mx, al[c]);
        for (int c = 0; c < nc; c++) sum += w[c] = exp(al[c] - mx);
        memset(B, 0, sizeof(double) * T * T);
        for (int c = 0; c < nc; c++) {
            rlogits(m, m->cfg.options.component[c], P, pre, q, k, x, tmp);
            for (int e = 0; e < T * T; e++) B[e] += w[c] / sum * tmp[e];
        }
    } else {
        rlogits(m, v, P, pre, q, k, x, B);
    }
    for (int i = 0; i < T; i++) {
        int last = causal ? i : T - 1;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j <= last; j++) mx = fmax(mx, B[i * T + j]);
        for (int j = 0; j <= last; j++) sum += A[i * T + j] = exp(B[i * T + j] - mx);
        for (int j = 0; j <= last; j++) A[i * T + j] /= sum;
    }
}

/* The mean masked cross-entropy of the whole model, in float64. */
static double rloss(const rmodel *m, const double *P, const int *tokens, const int *targets, int batch) {
    int T = m->T, D = m->D, F = m->F, V = m->V, dh = m->dh;
    double *h = calloc((size_t)T * D, sizeof *h), *a = calloc((size_t)T * D, sizeof *a);
    double *cat = calloc((size_t)T * D, sizeof *cat), *tmp = calloc((size_t)T * D, sizeof *tmp);
    double *f = calloc((size_t)T * F, sizeof *f), *logits = calloc((size_t)T * V, sizeof *logits);
    double *q = calloc((size_t)T * dh, sizeof *q), *k = calloc((size_t)T * dh, sizeof *k);
    double *x = calloc((size_t)T * dh, sizeof *x), *v = calloc((size_t)T * dh, sizeof *v);
    double A[64 * 64], total = 0;
    int counted = 0;
    char name[64];
#define P_(...) (snprintf(name, sizeof name, __VA_ARGS__), rfind(m, P, name))
    for (int s = 0; s < batch; s++) {
        const int *tok = tokens + s * T, *tgt = targets + s * T;
        const double *te = P_("tok_emb"), *pe = P_("pos_emb");
        for (int i = 0; i < T; i++)
            for (int c = 0; c < D; c++) h[i * D + c] = te[tok[i] * D + c] + pe[i * D + c];
        for (int l = 0; l < m->layers; l++) {
            rlayernorm(T, D, h, P_("l%d.ln1.g", l), P_("l%d.ln1.b", l), a);
            for (int hd = 0; hd < m->H; hd++) {
                char pre[32];
                snprintf(pre, sizeof pre, "l%d.h%d.", l, hd);
                const double *w;
                memset(q, 0, sizeof(double) * T * dh), memset(k, 0, sizeof(double) * T * dh), memset(x, 0, sizeof(double) * T * dh);
                if ((w = P_("%swq", pre))) rmatmul(T, dh, D, a, w, NULL, q);
                if ((w = P_("%swk", pre))) rmatmul(T, dh, D, a, w, NULL, k);
                if ((w = P_("%swx", pre))) rmatmul(T, dh, D, a, w, NULL, x);
                rmatmul(T, dh, D, a, P_("%swv", pre), NULL, v);
                rattention(m, P, pre, hd, q, k, x, A);
                for (int i = 0; i < T; i++)
                    for (int e = 0; e < dh; e++) {
                        double y = 0;
                        for (int j = 0; j < T; j++) y += A[i * T + j] * v[j * dh + e];
                        cat[i * D + hd * dh + e] = y;
                    }
            }
            rmatmul(T, D, D, cat, P_("l%d.wo", l), NULL, tmp);
            for (int e = 0; e < T * D; e++) h[e] += tmp[e];
            rlayernorm(T, D, h, P_("l%d.ln2.g", l), P_("l%d.ln2.b", l), a);
            rmatmul(T, F, D, a, P_("l%d.fc1", l), P_("l%d.fc1b", l), f);
            for (int e = 0; e < T * F; e++) f[e] = rgelu(f[e]);
            rmatmul(T, D, F, f, P_("l%d.fc2", l), P_("l%d.fc2b", l), tmp);
            for (int e = 0; e < T * D; e++) h[e] += tmp[e];
        }
        rlayernorm(T, D, h, P_("lnf.g"), P_("lnf.b"), a);
        rmatmul(T, V, D, a, P_("out"), P_("outb"), logits);
        for (int i = 0; i < T; i++) {
            if (tgt[i] < 0) continue;
            double mx = -INFINITY, sum = 0;
            for (int c = 0; c < V; c++) mx = fmax(mx, logits[i * V + c]);
            for (int c = 0; c < V; c++) sum += exp(logits[i * V + c] - mx);
            total += log(sum) + mx - logits[i * V + tgt[i]];
            counted++;
        }
    }
#undef P_
    free(h), free(a), free(cat), free(tmp), free(f), free(logits), free(q), free(k), free(x), free(v);
    return counted ? total / counted : 0.0;
}

/* ---- helpers over the C engine ---- */

typedef struct engine {
    attn_model_config cfg;
    attn_model *model; /* opened once, in open_mem: every pass below takes it */
    void *open_mem;
    float *mem;
    size_t bytes, ws_bytes, P;
    void *ws;
    int np;
} engine;

static int engine_make(engine *e, const attn_model_config *cfg, int batch) {
    memset(e, 0, sizeof *e);
    e->cfg = *cfg;
    const char *detail = "";
    size_t open_bytes = 0;
    attn_status s = attn_model_size(cfg, &e->bytes);
    if (s == ATTN_OK) s = attn_model_open_size(cfg, &open_bytes);
    if (s == ATTN_OK) e->open_mem = aligned_alloc(16, open_bytes);
    if (s == ATTN_OK) s = attn_model_open(cfg, e->open_mem, open_bytes, &e->model, &detail);
    if (s == ATTN_OK) s = attn_model_workspace_size(e->model, batch, &e->ws_bytes);
    int32_t np = 0;
    if (s == ATTN_OK) s = attn_model_param_count(cfg, &np, &detail);
    CHECK(s == ATTN_OK, "%s: model config refused: %s %s", variant_name(cfg->variant), attn_status_string(s), detail);
    if (s != ATTN_OK) return 0;
    e->np = np;
    e->P = e->bytes / 16;
    e->mem = malloc(e->bytes);
    e->ws = aligned_alloc(16, (e->ws_bytes + 15) / 16 * 16);
    s = attn_model_init(cfg, e->mem, e->bytes, &detail);
    CHECK(s == ATTN_OK, "init: %s", detail);
    return s == ATTN_OK;
}
static void engine_free(engine *e) { free(e->mem), free(e->ws), free(e->open_mem); }

static float engine_loss(engine *e, const int *tok, const int *tgt, int batch, int grads) {
    float loss = NAN;
    int32_t correct = 0, counted = 0;
    const char *detail = "";
    attn_status s = grads ? attn_model_loss_backward(e->model, e->mem, e->bytes, tok, tgt, batch, &loss, &correct,
                                                     &counted, e->ws, e->ws_bytes, &detail)
                          : attn_model_loss(e->model, e->mem, e->bytes, tok, tgt, batch, &loss, &correct, &counted,
                                            e->ws, e->ws_bytes, &detail);
    CHECK(s == ATTN_OK, "%s: loss: %s %s", variant_name(e->cfg.variant), attn_status_string(s), detail);
    return loss;
}

static void random_batch(stream *rng, int batch, int T, int V, int *tok, int *tgt) {
    for (int i = 0; i < batch * T; i++) {
        tok[i] = (int)(urand(rng) * V);
        tgt[i] = (int)(urand(rng) * (V + 1)) - 1; /* some -1: no loss there */
    }
    tgt[0] = 0;
}

static attn_model_config tiny(int variant, int layers, int heads, int causal) {
    attn_model_config cfg;
    attn_model_config_default(&cfg);
    cfg.variant = variant;
    cfg.vocab = 7, cfg.seq_len = 5 + (layers == 2), cfg.d_model = 8, cfg.d_ff = 16;
    cfg.layers = layers, cfg.heads = heads, cfg.causal = causal, cfg.seed = 7;
    if (takes(variant, OPTION_components)) {
        cfg.options.n_components = 2;
        cfg.options.component[0] = ATTN_SOFTMAX, cfg.options.component[1] = ATTN_RANDOM;
    }
    if (takes(variant, OPTION_window)) cfg.options.window = 2;
    return cfg;
}

/* ---- the tests ---- */

/* The C table equals the float64 model's list: names, shapes, order, offsets. */
static void check_table(const engine *e, const rmodel *m) {
    CHECK(e->np == m->np, "%s: %d parameters, the contract lists %d", variant_name(e->cfg.variant), e->np, m->np);
    CHECK(e->P == m->total, "%s: %zu floats, the contract %zu", variant_name(e->cfg.variant), e->P, m->total);
    for (int i = 0; i < e->np && i < m->np; i++) {
        attn_model_param info;
        const char *detail;
        CHECK(attn_model_param_info(&e->cfg, i, &info, &detail) == ATTN_OK, "param_info %d", i);
        const rparam *r = &m->p[i];
        int ndim = r->cols ? 2 : 1;
        CHECK(!strcmp(info.name, r->name) && info.ndim == ndim && info.rows == r->rows &&
                  info.cols == (r->cols ? r->cols : 1) && (size_t)info.offset == r->off && info.is_matrix == (ndim == 2),
              "%s: param %d is %s [%d, %d] at %d, the contract says %s [%d, %d] at %zu", variant_name(e->cfg.variant), i,
              info.name, info.rows, info.cols, info.offset, r->name, r->rows, r->cols, r->off);
        int32_t found = -1;
        CHECK(attn_model_param_find(&e->cfg, r->name, &found, &detail) == ATTN_OK && found == i, "find %s", r->name);
    }
}

static double max_grad_err = 0; /* over all cases: |C - ref| / (1e-3 + max|ref| of the array) */

/* C gradients of every parameter against central differences of the float64 loss. Parameters are
 * set to values of order 1 (not the 0.02 initialisation) so that every gradient is well above the
 * float32 noise. `label` names the case among those of the same variant and sizes: with them it
 * seeds the case's stream. Returns whether the float64 model defines the case's attention. */
static int check_gradients(const attn_model_config *cfg, const char *label) {
    enum { BATCH = 2 };
    char name[96];
    snprintf(name, sizeof name, "gradients %s L%d H%d causal %d %s", variant_name(cfg->variant), cfg->layers,
             cfg->heads, cfg->causal, label);
    stream rng = stream_named(name);
    engine e;
    if (!engine_make(&e, cfg, BATCH)) return 1;
    rmodel *m = malloc(sizeof *m);
    rmodel_make(m, cfg);
    check_table(&e, m);
    if (e.np != m->np || e.P != m->total) { free(m), engine_free(&e); return 1; }
    for (int i = 0; i < m->np; i++) {
        const rparam *r = &m->p[i];
        size_t count = (size_t)r->rows * (r->cols ? r->cols : 1);
        int gain = strstr(r->name, ".g") && !r->cols;
        for (size_t k = 0; k < count; k++) {
            double u = 2 * urand(&rng) - 1;
            e.mem[r->off + k] = (float)(gain ? 1 + 0.3 * u : strstr(r->name, "ln") ? 0.2 * u : 0.6 * u);
        }
    }
    int T = cfg->seq_len, tok[BATCH * 8], tgt[BATCH * 8];
    random_batch(&rng, BATCH, T, cfg->vocab, tok, tgt);
    float loss = engine_loss(&e, tok, tgt, BATCH, 1);
    if (!has_float64_attention(cfg)) { /* trained under the sanitizers; the float64 comparison is JS's */
        CHECK(isfinite(loss), "%s: %s: loss %g", name, variant_name(cfg->variant), loss);
        free(m), engine_free(&e);
        return 0;
    }
    double *P = malloc(m->total * sizeof *P);
    for (size_t k = 0; k < m->total; k++) P[k] = e.mem[k];
    double ref = rloss(m, P, tok, tgt, BATCH);
    CHECK(fabs(loss - ref) <= 2e-5 * (1 + fabs(ref)), "%s L%d H%d causal %d: loss %.9g, float64 %.9g",
          variant_name(cfg->variant), cfg->layers, cfg->heads, cfg->causal, loss, ref);
    const float *G = e.mem + e.P;
    for (int i = 0; i < m->np; i++) {
        const rparam *r = &m->p[i];
        int count = r->rows * (r->cols ? r->cols : 1);
        /* every element of a small array, else 3 spread over it */
        int picks = count <= 4 ? count : 3;
        double ref_g[8], maxref = 0;
        int idx[8];
        for (int t = 0; t < picks; t++) {
            idx[t] = count <= 4 ? t : (int)((t * 2 + 1) * (long)count / (2 * picks));
            double *p = P + r->off + idx[t], saved = *p, hh = 1e-5;
            *p = saved + hh;
            double up = rloss(m, P, tok, tgt, BATCH);
            *p = saved - hh;
            double down = rloss(m, P, tok, tgt, BATCH);
            *p = saved;
            ref_g[t] = (up - down) / (2 * hh);
            maxref = fmax(maxref, fabs(ref_g[t]));
        }
        for (int t = 0; t < picks; t++) {
            double got = G[r->off + idx[t]], err = fabs(got - ref_g[t]);
            double rel = err / (1e-3 + maxref);
            if (rel > max_grad_err) max_grad_err = rel;
            CHECK(err <= 2e-5 + 2e-3 * maxref, "%s L%d H%d causal %d: d %s[%d] = %.7g, float64 %.7g",
                  variant_name(cfg->variant), cfg->layers, cfg->heads, cfg->causal, r->name, idx[t], got, ref_g[t]);
        }
    }
    free(P), free(m), engine_free(&e);
    return 1;
}

/* AdamW on one fixed batch: returns the loss after `steps`, with the first loss in *first. */
static float train(engine *e, const int *tok, const int *tgt, int batch, int steps, float lr, float *first) {
    float loss = 0;
    for (int step = 1; step <= steps; step++) {
        loss = engine_loss(e, tok, tgt, batch, 1);
        if (step == 1 && first) *first = loss;
        const char *detail = "";
        attn_status s = attn_model_adamw(e->model, e->mem, e->bytes, lr, step, NULL, &detail);
        CHECK(s == ATTN_OK, "adamw: %s", detail);
    }
    return engine_loss(e, tok, tgt, batch, 0);
}

static void check_overfit(void) {
    attn_model_config cfg = tiny(ATTN_SOFTMAX, 2, 2, 1);
    cfg.d_model = 16, cfg.d_ff = 32;
    engine e;
    if (!engine_make(&e, &cfg, 2)) return;
    stream rng = stream_named("overfit");
    int tok[12], tgt[12];
    for (int i = 0; i < 12; i++) tok[i] = (int)(urand(&rng) * 7), tgt[i] = (int)(urand(&rng) * 7);
    float first = 0, last = train(&e, tok, tgt, 2, 300, 1e-2f, &first);
    printf("test_model: softmax overfits one batch: loss %.4f -> %.5f after 300 steps\n", first, last);
    CHECK(last < first / 10, "softmax: loss %g -> %g, not 10x lower", first, last);
    engine_free(&e);
}

/* Frozen parameters keep their initial bits and get zero gradients and moments; the seed decides
 * everything: two models of one seed train to the same bits, another seed differs. */
static void check_freeze_and_determinism(void) {
    attn_model_config cfg = tiny(ATTN_RANDOM, 2, 2, 0);
    int32_t np = 0;
    attn_model_param_count(&cfg, &np, NULL);
    int32_t *frozen = calloc((size_t)np, sizeof *frozen);
    int32_t ir = -1, it = -1;
    CHECK(attn_model_param_find(&cfg, "l1.h0.r", &ir, NULL) == ATTN_OK, "no l1.h0.r");
    CHECK(attn_model_param_find(&cfg, "tok_emb", &it, NULL) == ATTN_OK, "no tok_emb");
    if (ir < 0 || it < 0) return;
    frozen[ir] = frozen[it] = 1;
    cfg.frozen = frozen;
    engine a, b, c;
    engine_make(&a, &cfg, 2), engine_make(&b, &cfg, 2);
    attn_model_config other = cfg;
    other.seed = 8;
    engine_make(&c, &other, 2);
    float *init = malloc(a.bytes);
    memcpy(init, a.mem, a.bytes);
    stream rng = stream_named("freeze and determinism");
    int tok[12], tgt[12];
    random_batch(&rng, 2, cfg.seq_len, cfg.vocab, tok, tgt);
    float la = train(&a, tok, tgt, 2, 25, 1e-2f, NULL), lb = train(&b, tok, tgt, 2, 25, 1e-2f, NULL);
    float lc = train(&c, tok, tgt, 2, 25, 1e-2f, NULL);
    CHECK(memcmp(&la, &lb, sizeof la) == 0 && memcmp(a.mem, b.mem, a.bytes) == 0,
          "same seed, different training: loss %.9g vs %.9g", la, lb);
    CHECK(la != lc, "seeds 7 and 8 trained to the same loss %.9g", la);
    attn_model_param info, rinfo;
    attn_model_param_info(&cfg, it, &info, NULL), attn_model_param_info(&cfg, ir, &rinfo, NULL);
    for (int which = 0; which < 2; which++) {
        const attn_model_param *p = which ? &rinfo : &info;
        int same = memcmp(a.mem + p->offset, init + p->offset, (size_t)p->count * 4) == 0, zero = 1;
        for (int s = 1; s < 4; s++)
            for (int k = 0; k < p->count; k++) zero &= a.mem[s * a.P + p->offset + k] == 0.0f;
        CHECK(same && zero, "frozen %s changed (values %d, gradient/moments zero %d)", p->name, same, zero);
    }
    int32_t i2 = -1;
    attn_model_param_find(&cfg, "l1.h1.r", &i2, NULL);
    attn_model_param_info(&cfg, i2, &info, NULL);
    CHECK(memcmp(a.mem + info.offset, init + info.offset, (size_t)info.count * 4) != 0, "l1.h1.r did not train");
    printf("test_model: 25 steps, seed 7 twice: loss %.9g and %.9g (bit-identical); seed 8: %.9g\n", la, lb, lc);
    free(init), free(frozen), engine_free(&a), engine_free(&b), engine_free(&c);
}

/* The first values of a few streams, printed by src/js/prng.js (normalStream(42, name) * std,
 * rounded to float32), for a mixture softmax + random with 2 layers and 2 heads. */
static void check_init(void) {
    attn_model_config cfg = tiny(ATTN_MIXTURE, 2, 2, 0);
    cfg.seed = 42;
    engine e;
    if (!engine_make(&e, &cfg, 1)) return;
    static const struct { const char *name; float v[3]; } expect[] = {
        {"tok_emb", {-0.000886925380f, -0.0114875268f, -0.0162867401f}},
        {"l0.h0.wq", {-0.0293439534f, 0.00288093300f, -0.00623197155f}},
        {"l1.fc2", {0.00984763075f, 0.00152257807f, 0.0156492535f}},
        {"l0.h1.r", {0.125065625f, 0.109085038f, 0.164558321f}},
    };
    for (size_t k = 0; k < sizeof expect / sizeof *expect; k++) {
        int32_t i = -1;
        attn_model_param info;
        attn_model_param_find(&cfg, expect[k].name, &i, NULL);
        attn_model_param_info(&cfg, i, &info, NULL);
        for (int t = 0; t < 3; t++)
            CHECK(e.mem[info.offset + t] == expect[k].v[t], "init %s[%d] = %.9g, prng.js %.9g", expect[k].name, t,
                  e.mem[info.offset + t], expect[k].v[t]);
    }
    static const struct { const char *name; double value; int kind; } consts[] = {
        {"l0.ln1.g", 1, 0}, {"l1.fc1b", 0, 0}, {"l0.h1.alpha", 0, 0}, {"lnf.b", 0, 0}};
    for (size_t k = 0; k < sizeof consts / sizeof *consts; k++) {
        int32_t i = -1;
        attn_model_param info;
        attn_model_param_find(&cfg, consts[k].name, &i, NULL);
        attn_model_param_info(&cfg, i, &info, NULL);
        int ok = info.init_kind == 0;
        for (int t = 0; t < info.count; t++) ok &= e.mem[info.offset + t] == (float)consts[k].value;
        CHECK(ok, "init %s is not the constant %g", consts[k].name, consts[k].value);
    }
    engine_free(&e);

    /* r_std scales r: the same stream, so the values are 5x those at the default 0.2 (each rounded
     * to float32 once, from the same float64 normal) */
    cfg.r_std = 1.0;
    if (!engine_make(&e, &cfg, 1)) return;
    int32_t i = -1;
    attn_model_param info;
    attn_model_param_find(&cfg, "l0.h1.r", &i, NULL);
    attn_model_param_info(&cfg, i, &info, NULL);
    CHECK(info.init_std == 1.0, "l0.h1.r's init_std with r_std 1: %g", info.init_std);
    for (int t = 0; t < 3; t++)
        CHECK(fabs(e.mem[info.offset + t] - 5.0 * expect[3].v[t]) <= 1e-6 * fabs(5.0 * expect[3].v[t]),
              "r_std 1: l0.h1.r[%d] = %.9g, expected 5 x %.9g", t, e.mem[info.offset + t], expect[3].v[t]);
    engine_free(&e);
}

/* A macro, so that the call runs before its detail is read. */
#define expect_error(call, want, detail, needle, what)                                                     \
    do {                                                                                                   \
        attn_status got_ = (call);                                                                         \
        CHECK(got_ == (want) && (detail) && strstr((detail), (needle)),                                    \
              "%s: got %s \"%s\", expected %s naming \"%s\"", what, attn_status_string(got_),           \
              (detail) ? (detail) : "(null)", attn_status_string(want), needle);                          \
    } while (0)

static void check_errors(void) {
    const char *detail = NULL;
    attn_model_config cfg = tiny(ATTN_SOFTMAX, 1, 2, 0);
    attn_model_config bad = cfg;
    bad.heads = 3;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_SHAPE, detail, "heads must divide dModel", "heads 3, dModel 8");
    bad = cfg, bad.vocab = 0;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_SHAPE, detail, "vocab", "vocab 0");
    bad = cfg, bad.variant = ATTN_VARIANT_COUNT;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_UNKNOWN, detail, "variant", "unknown variant");
    bad = tiny(ATTN_MIXTURE, 1, 1, 0), bad.options.component[1] = ATTN_LINEAR;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_UNSUPPORTED, detail, "components", "mixture of linear");
    bad = tiny(ATTN_MIXTURE, 1, 1, 0), bad.options.n_components = 0;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "components", "mixture of nothing");
    bad = tiny(ATTN_LINEAR, 1, 1, 0), bad.options.eps = -1;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "eps", "eps -1");
    bad = tiny(ATTN_FIXED, 1, 1, 0), bad.options.window = 0;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "window", "window 0");
    bad = tiny(ATTN_FIXED, 1, 1, 1), bad.n_patterns = 1, bad.patterns[0] = ATTN_PATTERN_NEXT;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "looks ahead", "causal model given next");
    bad = tiny(ATTN_FIXED, 1, 1, 0), bad.n_patterns = ATTN_MODEL_MAX_PATTERNS + 1;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "n_patterns", "17 patterns");
    bad = tiny(ATTN_FIXED, 1, 1, 0), bad.n_patterns = 1, bad.patterns[0] = ATTN_PATTERN_COUNT;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "attn_pattern", "pattern out of range");
    bad = cfg, bad.n_patterns = 1;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "fixed heads", "softmax given patterns");
    bad = cfg, bad.r_std = 0;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "rStd", "rStd 0");
    bad = cfg, bad.r_std = NAN;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "rStd", "rStd NaN");
    bad = cfg, bad.weight_decay = -1;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_VALUE, detail, "weightDecay", "weightDecay -1");
    bad = cfg, bad.d_model = 1 << 30, bad.vocab = 1 << 30, bad.heads = 1;
    expect_error(attn_model_check(&bad, &detail), ATTN_ERR_MEMORY, detail, "address space", "a huge model");

    engine e;
    if (!engine_make(&e, &cfg, 2)) return;
    int tok[10] = {0}, tgt[10] = {0};
    float loss;
    int32_t correct, counted, idx;
    tok[3] = 7;
    expect_error(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_VALUE, detail, "token", "token 7 of vocab 7");
    tok[3] = -1;
    float *logits = malloc(10 * 7 * sizeof *logits);
    expect_error(attn_model_forward(e.model, e.mem, e.bytes, tok, 2, logits, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_VALUE, detail, "token", "token -1");
    tok[3] = 0, tgt[9] = 7;
    expect_error(attn_model_loss_backward(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_VALUE, detail, "target", "target 7");
    tgt[9] = -2;
    expect_error(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_VALUE, detail, "target", "target -2");
    tgt[9] = -1;
    expect_error(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes - 16, &detail),
                 ATTN_ERR_MEMORY, detail, "workspace", "a short workspace");
    expect_error(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 3, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_MEMORY, detail, "workspace", "a batch larger than the workspace's");
    expect_error(attn_model_forward(e.model, e.mem, e.bytes - 4, tok, 2, logits, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_MEMORY, detail, "model block", "a short model block");
    expect_error(attn_model_forward(e.model, e.mem, e.bytes, tok, 0, logits, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_SHAPE, detail, "batch", "batch 0");
    expect_error(attn_model_param_find(&cfg, "l0.h0.r", &idx, &detail), ATTN_ERR_UNKNOWN, detail, "name", "softmax has no r");
    expect_error(attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, 0, NULL, &detail), ATTN_ERR_VALUE, detail, "step", "step 0");
    expect_error(attn_model_adamw(e.model, e.mem, e.bytes, NAN, 1, NULL, &detail), ATTN_ERR_VALUE, detail, "lr", "lr NaN");

    /* forward's logits are the ones the loss reads: no target -> loss 0; all -> accuracy counts */
    for (int i = 0; i < 10; i++) tgt[i] = -1;
    CHECK(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail) == ATTN_OK &&
              loss == 0 && counted == 0 && correct == 0, "no targets: loss %g counted %d", loss, counted);
    CHECK(attn_model_forward(e.model, e.mem, e.bytes, tok, 2, logits, e.ws, e.ws_bytes, &detail) == ATTN_OK, "forward: %s", detail);
    double ce = 0;
    int right = 0;
    for (int i = 0; i < 10; i++) {
        tgt[i] = i % 7;
        double mx = -INFINITY, sum = 0;
        int arg = 0;
        for (int c = 0; c < 7; c++)
            if (logits[i * 7 + c] > mx) mx = logits[i * 7 + c], arg = c;
        for (int c = 0; c < 7; c++) sum += exp(logits[i * 7 + c] - mx);
        ce += log(sum) + mx - logits[i * 7 + tgt[i]];
        right += arg == tgt[i];
    }
    CHECK(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail) == ATTN_OK &&
              fabs(loss - ce / 10) < 1e-5 && counted == 10 && correct == right,
          "loss %g (from forward's logits %g), correct %d (%d)", loss, ce / 10, correct, right);
    free(logits);
    engine_free(&e);
}

/* A model is opened once: attn_model_open makes a plan for every head of every layer, and no pass
 * makes one again (losses, gradients, AdamW steps, forward, decoding, over several steps); the
 * passes read the configuration copied at opening, not the caller's; memory that was not opened is
 * refused; a mixture's learned logits reach its plans at each pass (a non-finite one is refused). */
static void check_opened_once(int variant) {
    attn_model_config cfg = tiny(variant, 2, 2, 1);
    const char *name = variant_name(variant), *detail = "";
    uint32_t before_open = attn_plans_made();
    engine e;
    if (!engine_make(&e, &cfg, 2)) return;
    uint32_t opened = attn_plans_made();
    CHECK(opened - before_open >= 4, "%s: opening a model of 2 layers x 2 heads made %u plans", name, opened - before_open);
    cfg.d_model = 999, cfg.variant = -1; /* the caller's copy changes; the opened model keeps its own */
    stream rng = stream_named("opened once");
    int tok[12], tgt[12];
    random_batch(&rng, 2, e.cfg.seq_len, e.cfg.vocab, tok, tgt);
    float first = 0, last = train(&e, tok, tgt, 2, 3, 1e-2f, &first);
    CHECK(last < first, "%s: 3 steps on one batch: loss %g -> %g", name, first, last);
    float *logits = malloc(sizeof(float) * 12 * 7);
    CHECK(attn_model_forward(e.model, e.mem, e.bytes, tok, 2, logits, e.ws, e.ws_bytes, &detail) == ATTN_OK, "%s: forward: %s", name, detail);
    size_t state_bytes = 0, dws = 0;
    CHECK(attn_model_decode_size(e.model, &state_bytes) == ATTN_OK && attn_model_decode_workspace_size(e.model, &dws) == ATTN_OK,
          "%s: decode sizes", name);
    void *state = aligned_alloc(16, (state_bytes + 15) / 16 * 16), *dwork = aligned_alloc(16, (dws + 15) / 16 * 16 + 16);
    attn_model_decode_reset(e.model, state);
    for (int t = 0; t < e.cfg.seq_len; t++)
        CHECK(attn_model_decode_step(e.model, e.mem, e.bytes, state, tok[t], t, logits, dwork, dws, &detail) == ATTN_OK,
              "%s: decode step %d: %s", name, t, detail);
    CHECK(attn_plans_made() == opened, "%s: the passes made %u plans after opening (none expected)", name, attn_plans_made() - opened);

    if (takes(variant, OPTION_components)) {
        int32_t ia = -1;
        attn_model_param info;
        attn_model_param_find(&e.cfg, "l1.h1.alpha", &ia, NULL);
        attn_model_param_info(&e.cfg, ia, &info, NULL);
        float loss, mixed = engine_loss(&e, tok, tgt, 2, 0);
        e.mem[info.offset] += 3.0f; /* another mixture: another loss, from the same plans */
        CHECK(engine_loss(&e, tok, tgt, 2, 0) != mixed, "%s: new alpha logits left the loss at %g", name, mixed);
        e.mem[info.offset] = NAN;
        int32_t correct, counted;
        expect_error(attn_model_loss(e.model, e.mem, e.bytes, tok, tgt, 2, &loss, &correct, &counted, e.ws, e.ws_bytes, &detail),
                     ATTN_ERR_VALUE, detail, "alpha", "a NaN mixture logit");
    }
    unsigned char *blank = calloc(1, 4096);
    expect_error(attn_model_forward((const attn_model *)(void *)blank, e.mem, e.bytes, tok, 2, logits, e.ws, e.ws_bytes, &detail),
                 ATTN_ERR_SHAPE, detail, "attn_model_open", "memory never opened");
    expect_error(attn_model_adamw(NULL, e.mem, e.bytes, 1e-3f, 1, NULL, &detail), ATTN_ERR_SHAPE, detail, "attn_model_open",
                 "no model");
    free(blank), free(state), free(dwork), free(logits);
    engine_free(&e);
}

/* AdamW is all or nothing: a gradient that is not finite, or an update that would overflow a
 * parameter, is ATTN_ERR_VALUE and leaves the whole block (parameters, gradients, moments) as it was. */
static void check_adamw_all_or_nothing(void) {
    attn_model_config cfg = tiny(ATTN_SOFTMAX, 1, 1, 1);
    engine e;
    if (!engine_make(&e, &cfg, 1)) return;
    const char *detail = NULL;
    size_t P = e.bytes / 16;
    float *G = e.mem + P;
    for (size_t i = 0; i < P; i++) G[i] = 1e-3f * (float)((int)(i % 7) - 3);
    CHECK(attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, 1, NULL, &detail) == ATTN_OK, "a plain step: %s", detail);
    unsigned char *saved = malloc(e.bytes);

    G[5] = NAN;
    memcpy(saved, e.mem, e.bytes);
    expect_error(attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, 2, NULL, &detail), ATTN_ERR_VALUE, detail,
                 "gradient is not finite", "a NaN gradient");
    CHECK(!memcmp(saved, e.mem, e.bytes), "a step refused for a NaN gradient changed the model block");
    G[5] = INFINITY;
    memcpy(saved, e.mem, e.bytes);
    expect_error(attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, 2, NULL, &detail), ATTN_ERR_VALUE, detail,
                 "gradient is not finite", "an infinite gradient");
    CHECK(!memcmp(saved, e.mem, e.bytes), "a step refused for an infinite gradient changed the model block");
    G[5] = 1e-3f; /* finite again */

    /* the last parameter (outb: a vector, no decay) at 3e38 with a gradient pushing it up: the
     * update (lr 1e38 times about 1) overflows; every other parameter's update alone is finite */
    e.mem[P - 1] = 3e38f, G[P - 1] = -1.0f;
    memcpy(saved, e.mem, e.bytes);
    expect_error(attn_model_adamw(e.model, e.mem, e.bytes, 1e38f, 2, NULL, &detail), ATTN_ERR_VALUE, detail,
                 "nothing was changed", "an update past float32's range");
    CHECK(!memcmp(saved, e.mem, e.bytes), "a step refused for an overflowing update changed the model block");
    CHECK(attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, 2, NULL, &detail) == ATTN_OK, "the same step at lr 1e-3: %s", detail);
    CHECK(memcmp(saved, e.mem, e.bytes) != 0, "an accepted step changed nothing");

    /* layers * heads above ATTN_MODEL_MAX_HEADS is refused before any table is built */
    attn_model_config big = cfg;
    big.layers = ATTN_MODEL_MAX_HEADS + 1, big.heads = 1, big.d_model = 1, big.d_ff = 1, big.vocab = 1, big.seq_len = 1;
    expect_error(attn_model_check(&big, &detail), ATTN_ERR_MEMORY, detail, "layers * heads", "4097 heads in all");
    big.layers = 10000000;
    expect_error(attn_model_check(&big, &detail), ATTN_ERR_MEMORY, detail, "layers * heads", "1e7 layers");
    big.layers = ATTN_MODEL_MAX_HEADS;
    CHECK(attn_model_check(&big, &detail) == ATTN_OK, "4096 heads in all: %s", detail);
    free(saved);
    engine_free(&e);
}

/* ---- speed ---- */

static double now(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int bench(int variant) {
    attn_model_config cfg;
    attn_model_config_default(&cfg);
    cfg.variant = variant, cfg.vocab = 65, cfg.seq_len = 64, cfg.d_model = 96, cfg.heads = 4, cfg.layers = 4;
    cfg.d_ff = 384, cfg.causal = 1, cfg.seed = 1;
    if (takes(variant, OPTION_components)) {
        cfg.options.n_components = 2;
        cfg.options.component[0] = ATTN_SOFTMAX, cfg.options.component[1] = ATTN_RANDOM;
    }
    enum { BATCH = 16 };
    engine e;
    if (!engine_make(&e, &cfg, BATCH)) return 1;
    stream rng = stream_named("bench");
    int *tok = malloc(BATCH * 64 * sizeof *tok), *tgt = malloc(BATCH * 64 * sizeof *tgt);
    for (int i = 0; i < BATCH * 64; i++) tok[i] = (int)(urand(&rng) * 65), tgt[i] = (int)(urand(&rng) * 65);
    train(&e, tok, tgt, BATCH, 2, 1e-3f, NULL);
    int steps = 20;
    double t0 = now(), tf = 0;
    for (int s = 0; s < steps; s++) {
        engine_loss(&e, tok, tgt, BATCH, 1);
        double t1 = now();
        attn_model_adamw(e.model, e.mem, e.bytes, 1e-3f, s + 3, NULL, NULL);
        tf += now() - t1;
    }
    double ms = (now() - t0) / steps * 1e3;
    double t2 = now();
    for (int s = 0; s < steps; s++) engine_loss(&e, tok, tgt, BATCH, 0);
    double fwd = (now() - t2) / steps * 1e3;
    printf("bench %-18s %zu params: %.1f ms/step (forward+loss %.1f ms, adamw %.2f ms), %.0f tokens/s\n",
           variant_name(variant), e.P, ms, fwd, tf / steps * 1e3, BATCH * 64 / (ms / 1e3));
    free(tok), free(tgt), engine_free(&e);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        int rc = 0;
        for (int v = 0; v < ATTN_VARIANT_COUNT; v++)
            if (argc < 3 || !strcmp(argv[2], variant_name(v))) rc |= bench(v);
        return rc;
    }
    int cases = 0, without = 0; /* without: variants this file has no float64 attention for */
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++) {
        if (!attn_family_facts(attn_family_of((attn_variant)v))->in_models) { /* no model layer for it yet: refused */
            attn_model_config cfg = tiny(v, 1, 1, 1);
            const char *detail = "";
            attn_status s = attn_model_check(&cfg, &detail);
            CHECK(s == ATTN_ERR_UNSUPPORTED && strstr(detail, "recurrent"), "%s: a model of it gave %s %s",
                  variant_name(v), attn_status_string(s), detail);
            continue;
        }
        for (int layers = 1; layers <= 2; layers++)
            for (int heads = 1; heads <= 2; heads++)
                for (int causal = 0; causal <= 1; causal++) {
                    attn_model_config cfg = tiny(v, layers, heads, causal);
                    if (check_gradients(&cfg, "")) cases++;
                    else if (layers == 1 && heads == 1 && !causal) {
                        printf("test_model: %s: no float64 attention here; trained under the sanitizers, its gradients "
                               "are tests/model.test.mjs's\n", variant_name(v));
                        without++;
                    }
                }
    }
    for (int v = 0; v < ATTN_VARIANT_COUNT; v++)
        if (attn_family_facts(attn_family_of((attn_variant)v))->in_models) check_opened_once(v);
    /* a mixture of every mixable variant this file defines, hidden and rank set, kronecker and
     * tile (and not causal, then causal) */
    for (int tiling = 0; tiling < 2; tiling++) {
        attn_model_config cfg = tiny(ATTN_MIXTURE, 2, 2, tiling);
        cfg.options.n_components = 0;
        for (int v = 0; v < ATTN_VARIANT_COUNT && cfg.options.n_components < ATTN_MAX_COMPONENTS; v++)
            if (attn_is_mixable((attn_variant)v) && has_float64_logits(v)) cfg.options.component[cfg.options.n_components++] = v;
        cfg.options.tiling = tiling, cfg.hidden = 3, cfg.rank = 2;
        cases += check_gradients(&cfg, tiling ? "every mixable, tile" : "every mixable, kronecker");
    }
    /* fixed heads with their patterns given: the list, cycled (4 heads, 3 patterns: head 3 wraps
     * to the first), not the default cycle */
    for (int causal = 0; causal <= 1; causal++) {
        attn_model_config cfg = tiny(ATTN_FIXED, 2, 4, causal);
        cfg.n_patterns = 3;
        cfg.patterns[0] = causal ? ATTN_PATTERN_FIRST : ATTN_PATTERN_LAST;
        cfg.patterns[1] = ATTN_PATTERN_LEFT, cfg.patterns[2] = ATTN_PATTERN_CURRENT;
        cases += check_gradients(&cfg, "patterns last|first, left, current");
    }
    printf("test_model: gradients of %d models against float64 central differences (largest error %.2e of max|grad|)%s\n",
           cases, max_grad_err, without ? "; see the variants above for the others" : "");
    check_init();
    check_overfit();
    check_freeze_and_determinism();
    check_errors();
    check_adamw_all_or_nothing();
    if (failures) {
        fprintf(stderr, "test_model: %d failures\n", failures);
        return 1;
    }
    printf("test_model: ok\n");
    return 0;
}
