/* recurrent.c — the recurrent family's forward scan: linear attention whose state forgets (gated,
 * as GLA, Mamba-2 and RetNet decay it) or overwrites (the delta rule of DeltaNet), or both (Gated
 * DeltaNet), as ONNX's LinearAttention (opset 27) defines them. One head; per token t, in order:
 *
 *   gated rules:  S ← diag(exp(g_t)) · S          (g [n, d], or [n] for one decay a token)
 *   delta rules:  u = β_t · (v_t − Sᵀ k_t)        (after the decay)
 *   other rules:  u = v_t
 *   every rule:   S ← S + k_t uᵀ;   y_t = scale · Sᵀ q_t   (read after the write)
 *
 * S [d, dv] starts as s0 (zeros when s0 is NULL) and ends as the state after the last token.
 * Column j of S, u and y depends on column j alone, in every rule: a scan over a range of columns
 * gives those columns' bits whatever else runs, so threads split dv. Sums over the key dimension
 * (Sᵀk, Sᵀq) add i = 0 .. d-1 in order; the rank-1 write is one multiply-add per element.
 * The scan over the pool's threads, the effective matrix W for display and the exact backward
 * pass follow, then the API's entry points (variants.def's recurrent family: plain-linear, gla,
 * deltanet, gated-deltanet, whose form column names the rule).
 */
#include "internal.h"

int attn_recurrent_gated(recurrent_rule rule) {
    switch (rule) {
    case RECURRENT_RULE_linear: case RECURRENT_RULE_delta: return 0;
    case RECURRENT_RULE_gated: case RECURRENT_RULE_gated_delta: return 1;
    case RECURRENT_RULE_COUNT: break;
    }
    return 0;
}

int attn_recurrent_delta(recurrent_rule rule) {
    switch (rule) {
    case RECURRENT_RULE_linear: case RECURRENT_RULE_gated: return 0;
    case RECURRENT_RULE_delta: case RECURRENT_RULE_gated_delta: return 1;
    case RECURRENT_RULE_COUNT: break;
    }
    return 0;
}

void attn_recurrent_load_state(const attn_recurrent_io *io, int c0, int w, float *S) {
    for (int i = 0; i < io->d; i++) {
        if (io->s0)
            attn_copy(S + (size_t)i * io->dv + c0, io->s0 + (size_t)i * io->dv + c0, w);
        else
            attn_fill(S + (size_t)i * io->dv + c0, (size_t)w, 0.0f);
    }
}

void attn_recurrent_keep_checkpoint(const attn_recurrent_io *io, int c0, int w, const float *S, float *checkpoints,
                                    int index) {
    size_t state = (size_t)io->d * io->dv;
    for (int i = 0; i < io->d; i++)
        attn_copy(checkpoints + (size_t)index * state + (size_t)i * io->dv + c0, S + (size_t)i * io->dv + c0, w);
}

/* decay[i] = exp(g_t[i]) (one decay a token: one exp, every i alike). */
static void decays(const attn_recurrent_io *io, int t, float *decay) {
    if (io->g_cols == 1) {
        attn_fill(decay, (size_t)io->d, attn_expf(io->g[t]));
        return;
    }
    const float *g = io->g + (size_t)t * io->g_cols;
    int i = 0; /* attn_expf is vf_exp on one lane: the same bits four at a time */
    for (; i + VW <= io->d; i += VW) vf_store(decay + i, vf_exp(vf_load(g + i)));
    for (; i < io->d; i++) decay[i] = attn_expf(g[i]);
}

/* One sweep of the rows i = 0 .. d-1 of columns [0, w) of a state (row stride ld), in order,
 * from `from` into S (the same array for a step in place):
 *   S[i,:] = from[i,:] * decay[i]  (decay NULL: from[i,:])
 *   S[i,:] += wk[i] * u            (wk not NULL: the rank-1 write)
 *   acc = sum_i x[i] * S[i,:]      (the rows as they are after the above)
 * Why one sweep: separate passes for the decay, the write and the read-out each load and store
 * all of S, and the scan is bound by those loads and stores, not by its arithmetic; the backward
 * recomputes its chunk's states out of place, with no copies. Each element sees the operations
 * the separate passes would apply to it (attn_scale, then attn_axpy, then acc from zero by
 * attn_axpy row after row), in their order, so the same bits: the columns go in blocks of
 * ROW_BLOCK vectors with acc and u in registers, then single vectors, then one at a time. */
#define ROW_BLOCK 4
static inline __attribute__((always_inline)) void sweep_vectors(int nb, int d, size_t ld, const float *from, float *S,
                                                                 const float *decay, const float *wk, const float *u,
                                                                 const float *x, float *acc) {
    vf a[ROW_BLOCK], uv[ROW_BLOCK];
    int store = decay || wk || from != S;
    for (int b = 0; b < nb; b++) {
        a[b] = vf_zero();
        uv[b] = wk ? vf_load(u + b * VW) : vf_zero();
    }
    for (int i = 0; i < d; i++) {
        const float *src = from + (size_t)i * ld;
        float *row = S + (size_t)i * ld;
        vf xs = vf_splat(x[i]), ds = vf_splat(decay ? decay[i] : 1.0f), ks = vf_splat(wk ? wk[i] : 0.0f);
        for (int b = 0; b < nb; b++) {
            vf r = vf_load(src + b * VW);
            if (decay) r = vf_mul(r, ds);
            if (wk) r = vf_madd(ks, uv[b], r);
            if (store) vf_store(row + b * VW, r);
            a[b] = vf_madd(xs, r, a[b]);
        }
    }
    for (int b = 0; b < nb; b++) vf_store(acc + b * VW, a[b]);
}

static void sweep(int d, int w, size_t ld, const float *from, float *S, const float *decay, const float *wk,
                  const float *u, const float *x, float *acc) {
    int j = 0;
    for (; j + ROW_BLOCK * VW <= w; j += ROW_BLOCK * VW)
        sweep_vectors(ROW_BLOCK, d, ld, from + j, S + j, decay, wk, wk ? u + j : 0, x, acc + j);
    for (; j + VW <= w; j += VW) sweep_vectors(1, d, ld, from + j, S + j, decay, wk, wk ? u + j : 0, x, acc + j);
    for (; j < w; j++) { /* the scalar tail, as attn_scale's and attn_axpy's */
        float a = 0.0f;
        for (int i = 0; i < d; i++) {
            float e = from[(size_t)i * ld + j];
            if (decay) e *= decay[i];
            if (wk) e += wk[i] * u[j];
            S[(size_t)i * ld + j] = e;
            a += x[i] * e;
        }
        acc[j] = a;
    }
}

/* Token t on columns [c0, c0 + w) of the state (row stride dv), from `from` (S_{t-1}) into Sc
 * (S_t; the same array for a step in place): the decay, u, the write, and y_t's columns (into y),
 * in one sweep of the state (two for the delta rules, whose u needs S~^T k before the write). u [w] and
 * decay [d] are scratch; r [w], when not NULL, receives the delta rules' residual v - S~^T k
 * (the backward's). */
static void step(recurrent_rule rule, const attn_recurrent_io *io, int t, int c0, int w, const float *from,
                 float *Sc, float *u, float *decay, float *r, float *y) {
    int d = io->d, dv = io->dv;
    const float *q = io->q + (size_t)t * d, *k = io->k + (size_t)t * d, *v = io->v + (size_t)t * dv + c0;
    const float *decay_t = 0;
    if (attn_recurrent_gated(rule)) decays(io, t, decay), decay_t = decay;
    if (attn_recurrent_delta(rule)) { /* u = beta (v - S~^T k), then the write and the read-out */
        sweep(d, w, (size_t)dv, from, Sc, decay_t, 0, 0, k, u);
        float beta = io->beta[t];
        for (int j = 0; j < w; j++) {
            float rj = v[j] - u[j];
            if (r) r[j] = rj;
            u[j] = beta * rj;
        }
        sweep(d, w, (size_t)dv, Sc, Sc, 0, k, u, q, y);
    } else {
        sweep(d, w, (size_t)dv, from, Sc, decay_t, k, v, q, y);
    }
    attn_scale(y, w, io->scale);
}

/* The checkpoint spacing that minimises the backward's memory, ceil(n / C) + C states: C = ceil(sqrt(n)). */
static int checkpoint_spacing(int n) {
    int c = 1;
    while ((int64_t)c * c < n) c++;
    return c;
}

static int chunks_of(int n, int chunk) { return (int)(((int64_t)n + chunk - 1) / chunk); }

uint64_t attn_recurrent_checkpoint_floats(int n, int d, int dv) {
    return (uint64_t)chunks_of(n, checkpoint_spacing(n)) * (uint64_t)d * (uint64_t)dv;
}

/* The scan over columns [c0, c1), keeping those columns of the state before every spacing-th
 * token in checkpoints when it is not NULL: the pool's forward pass (spacing ceil(sqrt(n))) and
 * the backward's own forward pass (its chunk) are this one loop. */
static void scan_columns(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S, float *scratch,
                         float *checkpoints, int spacing) {
    int w = c1 - c0, dv = io->dv;
    attn_recurrent_load_state(io, c0, w, S);
    for (int t = 0; t < io->n; t++) {
        if (checkpoints && t % spacing == 0) attn_recurrent_keep_checkpoint(io, c0, w, S, checkpoints, t / spacing);
        step(rule, io, t, c0, w, S + c0, S + c0, scratch, scratch + w, 0, io->y + (size_t)t * dv + c0);
    }
}

/* ---- the form a shape runs in: the scan, or chunks of tokens (recurrent_chunked.c) ----
 * Measured at n = 4096 on SIMD128 (one thread, the least of 25 interleaved calls), the chunked
 * forward against the scan: plain-linear 0.87-0.90x its time at d = dv = 64, 0.78-0.80x at 128,
 * 0.69-0.71x at 256, 0.98x at d = 32, dv = 128, and its backward (chunked too) 0.45-0.64x the
 * scan's backward there; below 64 x 64, or with a width under 32, a toss-up or a loss (0.91-1.8x
 * at d = dv = 32 ... 48 from run to run, 1.08-1.11x with widths 16 and 256: the chunk's triangle
 * costs 16 (d + dv) a token against the state's d dv). gla, whose chunks also make the decays'
 * factors: 1.03x at 64, 0.89x at 128, 0.81x at 256, so from 128 x 128. deltanet (the delta
 * rule's corrections by forward substitution a chunk): 1.01x at 32, 0.89x at 64, 0.74x at 128,
 * 0.68x at 256, so from 64 x 64; gated-deltanet (both): 1.01x at 32, 0.81x at 64, 0.67x at 128,
 * 0.61x at 256, from 64 x 64. Their backward (all but plain-linear's) stays the scan's, from the
 * chunked forward's checkpoints. */
#define CHUNKED_MIN_STATE (64 * 64)
#define CHUNKED_MIN_WIDTH 32
#define CHUNKED_MIN_GATED_STATE (128 * 128)

static int chunked_form(recurrent_rule rule, int d, int dv) {
    int wide = d >= CHUNKED_MIN_WIDTH && dv >= CHUNKED_MIN_WIDTH;
    switch (rule) {
    case RECURRENT_RULE_linear: case RECURRENT_RULE_delta: case RECURRENT_RULE_gated_delta:
        return wide && (int64_t)d * dv >= CHUNKED_MIN_STATE;
    case RECURRENT_RULE_gated: /* the decays' factors cost more than the scan saves below 128 x 128 */
        return wide && (int64_t)d * dv >= CHUNKED_MIN_GATED_STATE;
    case RECURRENT_RULE_COUNT: break;
    }
    return 0;
}

void attn_recurrent_forward_columns(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                                    float *scratch, float *checkpoints, int spacing) {
    if (chunked_form(rule, io->d, io->dv))
        attn_recurrent_chunked_forward(rule, io, c0, c1, S, scratch, checkpoints, spacing);
    else
        scan_columns(rule, io, c0, c1, S, scratch, checkpoints, spacing);
}

uint64_t attn_recurrent_forward_scratch(recurrent_rule rule, int d, int dv) {
    return chunked_form(rule, d, dv) ? attn_recurrent_chunked_scratch(d, dv) : (uint64_t)attn_recurrent_scan_scratch(d, dv);
}

void attn_recurrent_steps(recurrent_rule rule, const attn_recurrent_io *io, int t0, int t1, int c0, int w, float *S,
                          float *scratch) {
    for (int t = t0; t < t1; t++)
        step(rule, io, t, c0, w, S + c0, S + c0, scratch, scratch + w, 0, io->y + (size_t)t * io->dv + c0);
}

void attn_recurrent_scan(recurrent_rule rule, const attn_recurrent_io *io, int c0, int c1, float *S,
                         float *scratch, float *checkpoints) {
    scan_columns(rule, io, c0, c1, S, scratch, checkpoints, checkpoint_spacing(io->n));
}

int64_t attn_recurrent_scan_scratch(int d, int w) { return (int64_t)w + d; }

/* ---- the forward over the pool: column blocks ---- */

typedef struct forward_job {
    recurrent_rule rule;
    const attn_recurrent_io *io;
    float *S, **scratch, *checkpoints;
    int cols;
} forward_job;

static void forward_piece(void *ctx, int piece, int thread) {
    const forward_job *j = ctx;
    int c0 = piece * j->cols;
    attn_recurrent_forward_columns(j->rule, j->io, c0, imin(c0 + j->cols, j->io->dv), j->S, j->scratch[thread],
                                   j->checkpoints, checkpoint_spacing(j->io->n));
}

void attn_recurrent_forward(recurrent_rule rule, const attn_recurrent_io *io, float *S, float *checkpoints,
                            arena *ws) {
    int threads = imin(arena_threads(ws), ATTN_MAX_THREADS), d = io->d, dv = io->dv;
    float *scratch[ATTN_MAX_THREADS];
    for (int t = 0; t < threads; t++) scratch[t] = arena_floats(ws, attn_recurrent_forward_scratch(rule, d, dv));
    if (arena_measuring(ws)) return;
    int pool = attn_thread_count();
    /* the columns are independent: any split gives one thread's bits, so split by the pool, in
     * blocks of whole vectors (the chunked form: of the micro-kernel's 2 VW columns) */
    int cols = dv, unit = chunked_form(rule, d, dv) ? 2 * VW : VW;
    if (threads > 1 && pool > 1 && pool <= threads) cols = round_up(imax(unit, (dv + pool - 1) / pool), unit);
    forward_job job = {rule, io, S, scratch, checkpoints, cols};
    attn_parallel_slices((dv + cols - 1) / cols, forward_piece, &job, threads);
}

/* ---- the effective matrix, for display ----
 * y = W v + (the part s0 gives), with W_ij = scale * beta_j * q_i^T A_i ... A_{j+1} k_j for j <= i
 * and 0 above the diagonal, where A_t = (I - beta_t k_t k_t^T) diag(e^{g_t}) is token t's
 * transition (beta = 1 without the delta rule, no decay without the gate). Row i carries
 * x = q_i back through the transposes, A_t^T x = diag(e^{g_t}) (x - beta_t k_t (k_t . x)), so
 * one dot product k_j . x gives both W_ij and the next x: O(n^2 d) in all. */

typedef struct weights_job {
    recurrent_rule rule;
    const attn_recurrent_io *io;
    const float *decay; /* [n, d]: e^g, gated rules */
    float *W, **x;
} weights_job;

static void weights_piece(void *ctx, int piece, int thread) {
    const weights_job *job = ctx;
    const attn_recurrent_io *io = job->io;
    int n = io->n, d = io->d, delta = attn_recurrent_delta(job->rule), gated = attn_recurrent_gated(job->rule);
    for (int i = piece * BI; i < imin(n, (piece + 1) * BI); i++) {
        float *x = job->x[thread], *row = job->W + (size_t)i * n;
        attn_copy(x, io->q + (size_t)i * d, d);
        for (int j = i; j >= 0; j--) {
            const float *k = io->k + (size_t)j * d;
            float beta = delta ? io->beta[j] : 1.0f, kx = attn_dot_in_order(k, x, d);
            row[j] = io->scale * beta * kx;
            if (j == 0) break;
            if (delta) attn_axpy(x, k, d, -beta * kx);
            if (gated)
                for (int c = 0; c < d; c++) x[c] *= job->decay[(size_t)j * d + c];
        }
        attn_fill(row + i + 1, (size_t)(n - i - 1), 0.0f);
    }
}

void attn_recurrent_weights(recurrent_rule rule, const attn_recurrent_io *io, float *W, arena *ws) {
    int n = io->n, d = io->d, threads = imin(arena_threads(ws), ATTN_MAX_THREADS);
    float *decay = attn_recurrent_gated(rule) ? arena_floats(ws, (uint64_t)n * d) : 0;
    float *x[ATTN_MAX_THREADS];
    for (int t = 0; t < threads; t++) x[t] = arena_floats(ws, (uint64_t)d);
    if (arena_measuring(ws)) return;
    for (int t = 0; decay && t < n; t++) decays(io, t, decay + (size_t)t * d);
    weights_job job = {rule, io, decay, W, x};
    attn_parallel_slices((n + BI - 1) / BI, weights_piece, &job, threads);
}

/* ---- the backward pass: exact, from checkpoints ----
 * The forward keeps S every `chunk` tokens (before the chunk's first); the backward takes the
 * chunks last to first, recomputes a chunk's states from its checkpoint (the same steps, so the
 * same bits) and walks back through them with dS, the gradient of the state after token t:
 *   S~ = diag(e^g) S_{t-1};  r = v - S~^T k;  u = beta r (delta rules; else u = v);  S_t = S~ + k u^T
 *   dS += scale q dy^T;  dq = scale S_t dy;  du = dS^T k;  dv = beta du (else du)
 *   dk = dS u - beta S~ du (the second term: delta rules);  dbeta = du . r
 *   dS~ = dS - beta k du^T (delta rules; else dS);  dg_i = sum_j dS~_ij S~_ij (one decay a token:
 *   summed over i too);  dS <- diag(e^g) dS~
 * starting from the gradient of the final state (zero when none is given); the last dS is s0's.
 * The recurrence is not run backwards instead: with beta = 1 and a unit key its transition is a
 * projection, which has no inverse. A token of the delta rules takes two sweeps of the rows of dS
 * (read_out_sweep, then write_sweep: the write needs du, a sum over every row); the other rules
 * take one (read_out_write_sweep). S~ is made in registers from S_{t-1}, never stored. The dot
 * products over the dv columns (dq_i, dk_i, dg_i, dbeta) are summed in four lanes of partial sums
 * in column order, added as vf_hsum adds them, then the scalar tail in order: one order on every
 * build. plain-linear's chunked form has a backward of its own (recurrent_chunked.c); the other
 * rules' chunked forms keep checkpoints for this one.
 * Memory: ceil(n / chunk) + chunk + 2 states of d x dv, the chunk's residuals r and decays e^g
 * (kept from the recomputation: d exponentials a token are a share of a gated token's work worth
 * not doing twice), a few rows. */

uint64_t attn_recurrent_backward_floats(recurrent_rule rule, int n, int d, int dv, int chunk, int own_checkpoints) {
    if (rule == RECURRENT_RULE_linear && chunked_form(rule, d, dv))
        return attn_recurrent_chunked_backward_floats(n, d, dv, chunk, own_checkpoints);
    uint64_t state = (uint64_t)d * (uint64_t)dv;
    uint64_t states = (own_checkpoints ? (uint64_t)chunks_of(n, chunk) : 0) + (uint64_t)chunk + 2;
    /* a count arena_floats refuses, instead of one that wraps; r's chunk x dv is at most a state more */
    if (state > (ARENA_LIMIT / 4u) / (states + 2)) return ARENA_LIMIT / 4u;
    /* after r [chunk, dv]: u, du, the chunk's decays and dg's rows, or the own forward's scratch */
    uint64_t rows = 2 * (uint64_t)dv + (uint64_t)chunk * d + (uint64_t)d;
    uint64_t forward = own_checkpoints ? attn_recurrent_forward_scratch(rule, d, dv) : 0;
    return states * state + (uint64_t)chunk * dv + (rows > forward ? rows : forward);
}

/* sum_j a[j] b[j] in the order the comment above gives. */
static float dot_lanes(const float *a, const float *b, int len) {
    vf acc = vf_zero();
    int j = 0;
    for (; j + VW <= len; j += VW) acc = vf_madd(vf_load(a + j), vf_load(b + j), acc);
    float sum = vf_hsum(acc);
    for (; j < len; j++) sum += a[j] * b[j];
    return sum;
}

/* The read-out's backward for token t, one sweep of the rows: dS_i += scale q_i dy (in place),
 * dq_i = scale S_t,i . dy, and du = dS^T k (overwritten). */
static void read_out_sweep(int d, int dv, float scale, const float *q, const float *k, const float *dy,
                           const float *Snow, float *dS, float *du, float *dq) {
    attn_fill(du, (size_t)dv, 0.0f);
    for (int i = 0; i < d; i++) {
        float *ds = dS + (size_t)i * dv;
        const float *sn = Snow + (size_t)i * dv;
        float sqi = scale * q[i];
        vf sq = vf_splat(sqi), kv = vf_splat(k[i]), acc = vf_zero();
        int j = 0;
        for (; j + VW <= dv; j += VW) {
            vf g = vf_load(dy + j), x = vf_madd(sq, g, vf_load(ds + j));
            vf_store(ds + j, x);
            vf_store(du + j, vf_madd(kv, x, vf_load(du + j)));
            acc = vf_madd(vf_load(sn + j), g, acc);
        }
        float dot = vf_hsum(acc);
        for (; j < dv; j++) {
            ds[j] += sqi * dy[j];
            du[j] += k[i] * ds[j];
            dot += sn[j] * dy[j];
        }
        dq[i] = scale * dot;
    }
}

/* The decay's backward on dS~'s vector x beside S~'s st: dg's partial sums c += x st, and
 * x e^g, the gradient of S_{t-1}; without a decay (decay NULL), x. */
static inline vf decay_backward(const float *decay, vf x, vf st, vf ev, vf *c) {
    if (!decay) return x;
    *c = vf_madd(x, st, *c);
    return vf_mul(x, ev);
}

/* The delta rules' write and decay backward for token t, one sweep of the rows, S~_i = e^{g_i}
 * S_{t-1,i} made as it goes: dk_i = dS_i . u - beta S~_i . du, dS_i -= beta k_i du, then (decay
 * not NULL: gated-deltanet) dg_i = dS_i . S~_i and dS_i *= e^{g_i}. */
static void write_sweep(int d, int dv, float beta, const float *k, const float *decay, const float *Sprev,
                        const float *u, const float *du, float *dS, float *dk, float *dg) {
    for (int i = 0; i < d; i++) {
        float *ds = dS + (size_t)i * dv;
        const float *sp = Sprev + (size_t)i * dv;
        float e = decay ? decay[i] : 1.0f, nbk = -beta * k[i];
        vf ev = vf_splat(e), nbkv = vf_splat(nbk), a = vf_zero(), b = vf_zero(), c = vf_zero();
        int j = 0;
        for (; j + VW <= dv; j += VW) {
            vf x = vf_load(ds + j), st = vf_load(sp + j), duj = vf_load(du + j);
            if (decay) st = vf_mul(st, ev);
            a = vf_madd(x, vf_load(u + j), a);
            b = vf_madd(st, duj, b);
            x = vf_madd(nbkv, duj, x);
            vf_store(ds + j, decay_backward(decay, x, st, ev, &c));
        }
        float sa = vf_hsum(a), sb = vf_hsum(b), sc = vf_hsum(c);
        for (; j < dv; j++) {
            float x = ds[j], st = decay ? sp[j] * e : sp[j];
            sa += x * u[j];
            sb += st * du[j], x += nbk * du[j];
            ds[j] = decay ? (sc += x * st, x * e) : x;
        }
        dk[i] = sa - beta * sb;
        if (decay) dg[i] = sc;
    }
}

/* The read-out's, the write's and the decay's backward in one sweep of the rows, for the rules
 * without the delta rule (plain-linear, gla), whose write needs neither du nor dk's second term:
 * per row, dS_i += scale q_i dy, du += k_i dS_i, dq_i = scale S_t,i . dy, dk_i = dS_i . u,
 * dg_i = dS_i . S~_i and dS_i *= e^{g_i}. Why: dS is loaded and stored once a token instead of
 * twice, and S_t is made in registers from S_{t-1} (S~ + k u^T, as the forward's sweep makes it:
 * the same bits) instead of loaded; the backward is bound by those loads and stores. Each value
 * sees the operations of a read-out sweep and a write sweep in their order. The scalar tail loads
 * S_t. */
static void read_out_write_sweep(int d, int dv, float scale, const float *q, const float *k, const float *dy,
                                 const float *decay, const float *Sprev, const float *Snow, const float *u,
                                 float *dS, float *du, float *dq, float *dk, float *dg) {
    attn_fill(du, (size_t)dv, 0.0f);
    for (int i = 0; i < d; i++) {
        float *ds = dS + (size_t)i * dv;
        const float *sp = Sprev + (size_t)i * dv, *sn = Snow + (size_t)i * dv;
        float sqi = scale * q[i], e = decay ? decay[i] : 1.0f;
        vf sq = vf_splat(sqi), kv = vf_splat(k[i]), ev = vf_splat(e), a = vf_zero(), b = vf_zero(), c = vf_zero();
        int j = 0;
        for (; j + VW <= dv; j += VW) {
            vf g = vf_load(dy + j), uj = vf_load(u + j), st = vf_load(sp + j);
            if (decay) st = vf_mul(st, ev);
            vf x = vf_madd(sq, g, vf_load(ds + j));
            vf_store(du + j, vf_madd(kv, x, vf_load(du + j)));
            a = vf_madd(vf_madd(kv, uj, st), g, a);
            b = vf_madd(x, uj, b);
            vf_store(ds + j, decay_backward(decay, x, st, ev, &c));
        }
        float sa = vf_hsum(a), sb = vf_hsum(b), sc = vf_hsum(c);
        for (; j < dv; j++) {
            float x = ds[j] + sqi * dy[j], st = decay ? sp[j] * e : sp[j];
            du[j] += k[i] * x;
            sa += sn[j] * dy[j];
            sb += x * u[j];
            ds[j] = decay ? (sc += x * st, x * e) : x;
        }
        dq[i] = scale * sa;
        dk[i] = sb;
        if (decay) dg[i] = sc;
    }
}

void attn_recurrent_backward(recurrent_rule rule, const attn_recurrent_io *io, const float *dy,
                             const float *d_final, int chunk, const float *kept, const attn_recurrent_grads *grads,
                             float *work) {
    if (rule == RECURRENT_RULE_linear && chunked_form(rule, io->d, io->dv)) {
        attn_recurrent_chunked_backward(io, dy, d_final, chunk, kept, grads, work);
        return;
    }
    int n = io->n, d = io->d, dv = io->dv, gated = attn_recurrent_gated(rule), delta = attn_recurrent_delta(rule);
    size_t state = (size_t)d * dv;
    float *own = kept ? 0 : work, *buf = work + (kept ? 0 : (size_t)chunks_of(n, chunk) * state), *S = buf + (size_t)chunk * state;
    float *dS = S + state, *r = dS + state, *u = r + (size_t)chunk * dv, *du = u + dv, *decays_of = du + dv;
    float *dg_rows = decays_of + (size_t)chunk * d; /* one decay a token: the rows' terms, summed into g's gradient */
    const float *ckpt = kept ? kept : own;
    /* forward: y, the checkpoints, and the final state in S; its scratch from u on */
    if (!kept) attn_recurrent_forward_columns(rule, io, 0, dv, S, u, own, chunk); /* gla's may be chunked */
    if (d_final)
        attn_copy(dS, d_final, (int)state);
    else
        attn_fill(dS, state, 0.0f);
    for (int c = chunks_of(n, chunk) - 1; c >= 0; c--) {
        int t0 = c * chunk, len = imin(chunk, n - t0);
        for (int s = 0; s < len; s++) /* the recomputed rows of y are not kept (du, free here, takes them) */
            step(rule, io, t0 + s, 0, dv, s ? buf + (size_t)(s - 1) * state : ckpt + (size_t)c * state,
                 buf + (size_t)s * state, u, decays_of + (size_t)s * d, r + (size_t)s * dv, du);
        for (int s = len - 1; s >= 0; s--) {
            int t = t0 + s;
            const float *k = io->k + (size_t)t * d, *rt = r + (size_t)s * dv;
            const float *Sprev = s ? buf + (size_t)(s - 1) * state : ckpt + (size_t)c * state;
            const float *q = io->q + (size_t)t * d, *dyt = dy + (size_t)t * dv;
            float *dg = !gated ? 0 : io->g_cols == 1 ? dg_rows : grads->g + (size_t)t * d;
            float *dq = grads->q + (size_t)t * d, *dk = grads->k + (size_t)t * d, *dv_t = grads->v + (size_t)t * dv;
            const float *decay = gated ? decays_of + (size_t)s * d : 0; /* as step() made them */
            if (delta) { /* dbeta = du . r;  u = beta r;  dv = beta du */
                float beta = io->beta[t];
                read_out_sweep(d, dv, io->scale, q, k, dyt, buf + (size_t)s * state, dS, du, dq);
                grads->beta[t] = dot_lanes(du, rt, dv);
                for (int j = 0; j < dv; j++) u[j] = beta * rt[j], dv_t[j] = beta * du[j];
                write_sweep(d, dv, beta, k, decay, Sprev, u, du, dS, dk, dg);
            } else { /* u = v;  dv = du */
                read_out_write_sweep(d, dv, io->scale, q, k, dyt, decay, Sprev, buf + (size_t)s * state,
                                     io->v + (size_t)t * dv, dS, du, dq, dk, dg);
                attn_copy(dv_t, du, dv);
            }
            if (gated && io->g_cols == 1) {
                float total = 0.0f;
                for (int i = 0; i < d; i++) total += dg_rows[i];
                grads->g[t] = total;
            }
        }
    }
    if (grads->s0) attn_copy(grads->s0, dS, (int)state);
}

void attn_recurrent_backward_run(recurrent_rule rule, const attn_recurrent_io *io, const float *dy, int from_kept,
                                 const float *checkpoints, const attn_recurrent_grads *grads, arena *ws) {
    int chunk = checkpoint_spacing(io->n);
    float *work = arena_floats(ws, attn_recurrent_backward_floats(rule, io->n, io->d, io->dv, chunk, !from_kept));
    if (arena_measuring(ws)) return;
    attn_recurrent_backward(rule, io, dy, 0, chunk, from_kept ? checkpoints : 0, grads, work);
}

/* ---- the API's entry points ---- */

/* variants.def's form column, read for the recurrent family: RECURRENT_RULE_<form>; the other
 * families have none. A new family must say so here (an undefined RULE_OF_<family> does not
 * compile). */
#define RULE_OF_recurrent(form) RECURRENT_RULE_##form
#define RULE_OF_softmax(form) RECURRENT_RULE_COUNT
#define RULE_OF_synthesizer(form) RECURRENT_RULE_COUNT
#define RULE_OF_linear(form) RECURRENT_RULE_COUNT
#define RULE_OF_fixed(form) RECURRENT_RULE_COUNT
static const recurrent_rule rules[ATTN_VARIANT_COUNT] = {
#define X(ENUM, id, label, family, form, ...) [ENUM] = RULE_OF_##family(form),
#include "variants.def"
#undef X
};

recurrent_rule attn_recurrent_rule(attn_variant v) { return rules[v]; }

/* The call's arrays as the scan reads them: g [n, d] (the API has no one-decay-a-token shape: a
 * g whose rows are constant is one); the scale, 1/sqrt(d) unless given. */
static attn_recurrent_io io_of(const attn_dims *dims, const attn_inputs *in, const attn_options *opt, float *y) {
    float scale = opt->has_scale ? opt->scale : 1.0f / __builtin_sqrtf((float)dims->d);
    return (attn_recurrent_io){dims->n, dims->d, dims->dv, dims->d, scale, in->q, in->k, in->v, in->g, in->beta, in->s0, y};
}

void attn_recurrent_family(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, float *out, float *weights, float *state, float *checkpoints,
                           arena *ws) {
    float *S = state ? state : arena_floats(ws, (uint64_t)dims->d * dims->dv);
    attn_recurrent_io io = io_of(dims, in, opt, out);
    attn_recurrent_forward(rules[v], &io, S, checkpoints, ws);
    if (weights) attn_recurrent_weights(rules[v], &io, weights, ws);
}

void attn_recurrent_state(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                          const attn_options *opt, float *state, arena *ws) {
    float *y = arena_floats(ws, (uint64_t)dims->n * dims->dv);
    attn_recurrent_io io = io_of(dims, in, opt, y);
    attn_recurrent_forward(rules[v], &io, state, 0, ws);
}

void attn_recurrent_family_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                                    const attn_options *opt, const float *dout, float *out, int from_kept,
                                    const float *checkpoints, const attn_grads *grads, arena *ws) {
    attn_recurrent_io io = io_of(dims, in, opt, out);
    attn_recurrent_grads g = grads ? (attn_recurrent_grads){grads->q, grads->k, grads->v, grads->g, grads->beta, grads->s0}
                                   : (attn_recurrent_grads){0};
    /* s0's gradient only when s0 was given (without it the state starts at zeros, no input) */
    if (!in->s0) g.s0 = 0;
    attn_recurrent_backward_run(rules[v], &io, dout, from_kept, checkpoints, &g, ws);
}
