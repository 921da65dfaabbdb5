/* backward.c — gradients of the softmax-type variants (softmax, the Synthesizer variants and
 * their mixture), streaming like FlashAttention's backward pass: never n x n.
 *
 * The forward pass runs first and keeps each row's log-sum-exp (lse) and y, or a kept forward pass
 * (attn_plan_run_kept) hands them over and this one is skipped. With D_i = dO_i . y_i,
 * each block of BI queries then visits the key blocks again: the logit tile is recomputed by its
 * source, P = exp(B - lse) (the softmax, exactly), dP = dO v^T, dS = P * (dP - D); dV accumulates
 * P^T dO, and dS goes back to the logit source, which accumulates the gradients of what it read
 * (dQ = dS K, dK = dS^T Q for dot products; r, the factors, the mixture weights for the others).
 *
 * Layouts, as in softmax.c: tiles are [group of 8 queries][key][query], so dP is the micro-kernel
 * over v's key panels (broadcast) and dO's query panels (vectors), like a logit tile; P and dS
 * are also copied transposed, [key][query], so that P^T dO and dS^T Q read rows of them in place.
 * Memory: O((n + BI*BJ) * (d + dv)) per source.
 */
#include "internal.h"

typedef struct backward_buffers {
    float *lse, *D;  /* [round_up(n, QP)]: padding rows get lse = +inf, so their P is 0 */
    float *dop;      /* dO in query panels [n/8][dv][8] */
    float *vkp;      /* v in key panels [n/4][dv][4] */
    float *dorow;    /* dO row-major with dvp columns (zero-padded) */
    float *dvacc;    /* the gradient of v, row-major with dvp columns */
    float *T, *dPT;  /* a logit tile (then P), and dP (then dS), tile layout */
    float *Pt, *dSt; /* P and dS transposed, [BJ][BI] */
    float *mscratch, *mtiles, *mdS; /* threads, a mixture: the thread's own scratch, part tiles
                                     * and alpha_c dS (NULL: the source's own) */
} backward_buffers;

/* P, dP and dS of one key block for every group of the query block, and their transposes. */
static void block_gradients(const backward_buffers *b, int dv, int i0, int bi, int j0, int bjp) {
    int groups = round_up(bi, QP) / QP;
    for (int g = 0; g < groups; g++) {
        float *tg = b->T + (size_t)g * BJ * QP, *dg = b->dPT + (size_t)g * BJ * QP;
        const float *dop = b->dop + (size_t)(i0 + g * QP) * dv;
        for (int jj = 0; jj < bjp; jj += KP)
            attn_micro_4x8(dv, b->vkp + (size_t)(j0 + jj) * dv, KP, dop, QP, dg + (size_t)jj * QP, QP, 0);
        const float *lse = b->lse + i0 + g * QP, *D = b->D + i0 + g * QP;
        vf l0 = vf_load(lse), l1 = vf_load(lse + VW), d0 = vf_load(D), d1 = vf_load(D + VW);
        for (int j = 0; j < bjp; j++) {
            float *t = tg + (size_t)j * QP, *dp = dg + (size_t)j * QP;
            vf p0 = vf_exp(vf_sub(vf_load(t), l0)), p1 = vf_exp(vf_sub(vf_load(t + VW), l1));
            vf s0 = vf_mul(p0, vf_sub(vf_load(dp), d0)), s1 = vf_mul(p1, vf_sub(vf_load(dp + VW), d1));
            vf_store(t, p0), vf_store(t + VW, p1), vf_store(dp, s0), vf_store(dp + VW, s1);
            float *pt = b->Pt + (size_t)j * BI + g * QP, *st = b->dSt + (size_t)j * BI + g * QP;
            vf_store(pt, p0), vf_store(pt + VW, p1), vf_store(st, s0), vf_store(st + VW, s1);
        }
    }
}

/* ---- threads: a query-block pass and a key-block pass (sources with grad_q / grad_k) ----
 * One thread visits each (query block, key block) once and pushes dS to both sides. Over threads,
 * pass 1 splits by query blocks (dQ: a row sums its key blocks in increasing j, as one thread
 * does) and pass 2 by key blocks (dV, dK, dbias: a key row sums its query blocks in increasing i,
 * as one thread does), each recomputing the tiles it needs: the same bits, at the cost of
 * computing each P and dS twice. random's and factorized-dense's gradients are all query rows
 * (the key pass gives dV alone); a mixture's dalpha, one sum over every block in one thread's
 * order, is kept per block by the query pass and added up in that order by its finish. */
typedef struct backward_job {
    const logit_source *src;
    const attn_grads *grads;
    const backward_buffers *slices; /* per thread: the shared buffers, its own T, dPT, Pt, dSt */
    int n, dv, dvp, causal;
} backward_job;

/* The source as the thread sees it: a mixture's tile and gradient write their parts' tiles and
 * alpha_c dS, so each thread's copy points at its own. */
static logit_source thread_source(const backward_job *j, const backward_buffers *b) {
    logit_source local = *j->src;
    if (b->mtiles) local.scratch = b->mscratch, local.part_tiles = b->mtiles, local.part_dS = b->mdS;
    return local;
}

static void query_pass(void *ctx, int piece, int thread) {
    const backward_job *j = ctx;
    const backward_buffers *b = &j->slices[thread];
    logit_source src = thread_source(j, b);
    int n = j->n, i0 = piece * BI, bi = imin(BI, n - i0), j_end = j->causal ? i0 + bi : n;
    for (int j0 = 0; j0 < j_end; j0 += BJ) {
        int bj = imin(BJ, n - j0), bjp = round_up(bj, KP);
        src.tile(&src, i0, bi, j0, bj, b->T);
        attn_mask_tile(n, j->causal, i0, bi, j0, bj, b->T);
        block_gradients(b, j->dv, i0, bi, j0, bjp);
        src.grad_q(&src, j->grads, i0, bi, j0, bj, b->dPT, b->dSt);
    }
}

static void key_pass(void *ctx, int piece, int thread) {
    const backward_job *j = ctx;
    const backward_buffers *b = &j->slices[thread];
    logit_source src = thread_source(j, b);
    int n = j->n, dvp = j->dvp, j0 = piece * BJ, bj = imin(BJ, n - j0), bjp = round_up(bj, KP);
    for (int i0 = 0; i0 < n; i0 += BI) {
        int bi = imin(BI, n - i0), rows = round_up(bi, QP);
        if (j->causal && j0 >= i0 + bi) continue; /* one thread's j_end = i0 + bi */
        src.tile(&src, i0, bi, j0, bj, b->T);
        attn_mask_tile(n, j->causal, i0, bi, j0, bj, b->T);
        block_gradients(b, j->dv, i0, bi, j0, bjp);
        for (int jj = 0; jj < bjp; jj += KP) /* dV[j] += sum_i P[i, j] dO[i] */
            for (int e0 = 0; e0 < dvp; e0 += 2 * VW)
                attn_micro_4x8_rows(rows, b->Pt + (size_t)jj * BI, BI, b->dorow + (size_t)i0 * dvp + e0, dvp,
                                    b->dvacc + (size_t)(j0 + jj) * dvp + e0, dvp, 1);
        src.grad_k(&src, j->grads, i0, bi, j0, bj, b->dPT, b->dSt);
    }
}

void attn_softmax_backward(attn_variant v, const attn_dims *dims, const attn_inputs *in,
                           const attn_options *opt, const float *dout, float *out,
                           const attn_kept *kept, const attn_grads *grads, arena *ws) {
    int n = dims->n, dv = dims->dv, dvp = round_up(dv, 2 * VW), causal = opt->causal != 0;
    uint64_t nq = round_up64(n, QP), nk = round_up64(n, BJ);
    logit_sources sources;
    const logit_source *src = attn_prepare_logits(v, dims, in, opt, ws, &sources, 1);
    backward_buffers b;
    b.lse = arena_floats(ws, nq), b.D = arena_floats(ws, nq);
    b.dop = arena_floats(ws, nq * (uint64_t)dv), b.vkp = arena_floats(ws, nk * (uint64_t)dv);
    b.dorow = arena_floats(ws, nq * (uint64_t)dvp), b.dvacc = arena_floats(ws, nk * (uint64_t)dvp);
    b.T = arena_floats(ws, (uint64_t)BI * BJ), b.dPT = arena_floats(ws, (uint64_t)BI * BJ);
    b.Pt = arena_floats(ws, (uint64_t)BI * BJ), b.dSt = arena_floats(ws, (uint64_t)BI * BJ);
    /* the tiles of the other threads, for sources whose gradient splits (threads above) */
    int threads = src->grad_q ? imin(arena_threads(ws), ATTN_MAX_THREADS) : 1;
    backward_buffers slices[ATTN_MAX_THREADS];
    b.mscratch = b.mtiles = b.mdS = 0;
    slices[0] = b;
    for (int t = 1; t < threads; t++) {
        slices[t] = b;
        slices[t].T = arena_floats(ws, (uint64_t)BI * BJ), slices[t].dPT = arena_floats(ws, (uint64_t)BI * BJ);
        slices[t].Pt = arena_floats(ws, (uint64_t)BI * BJ), slices[t].dSt = arena_floats(ws, (uint64_t)BI * BJ);
        if (src->count) { /* a mixture's own buffers (thread 0 uses the source's) */
            slices[t].mscratch = arena_floats(ws, (uint64_t)BI * BJ);
            slices[t].mtiles = arena_floats(ws, (uint64_t)src->count * BI * BJ);
            slices[t].mdS = arena_floats(ws, (uint64_t)2 * BI * BJ);
        }
    }
    /* The forward pass, unless a kept one gave y and lse: the same bits either way (the streaming
     * driver computes each row alike whatever the source was prepared for and on any thread), so
     * everything below is too. */
    if (!kept) attn_softmax_attend(src, dims, in ? in->v : 0, causal, out, 0, b.lse, ws); /* carves its own */
    if (arena_measuring(ws)) return;

    const float *y = kept ? kept->y : out;
    if (kept) attn_copy(b.lse, kept->lse, n);
    attn_zero_grads(v, dims, opt, grads);
    for (int i = n; i < (int)nq; i++) b.lse[i] = ATTN_INF, b.D[i] = 0.0f;
    for (int i = 0; i < n; i++) {
        const float *o = y + (size_t)i * dv, *g = dout + (size_t)i * dv;
        float s = 0.0f;
        for (int e = 0; e < dv; e++) s += g[e] * o[e];
        b.D[i] = s;
    }
    attn_pack packs[2] = {{n, dv, dout, (size_t)dv, 1, 1.0f, QP, b.dop},
                          {n, dv, in->v, (size_t)dv, 1, 1.0f, KP, b.vkp}};
    attn_pack_panels_all(packs, 2);
    attn_fill(b.dorow, (size_t)(nq * (uint64_t)dvp), 0.0f);
    attn_fill(b.dvacc, (size_t)(nk * (uint64_t)dvp), 0.0f);
    for (int i = 0; i < n; i++) attn_copy(b.dorow + (size_t)i * dvp, dout + (size_t)i * dv, dv);

    int pool = attn_thread_count();
    if (threads > 1 && pool > 1 && pool <= threads && n > BI) {
        backward_job job = {src, grads, slices, n, dv, dvp, causal};
        attn_parallel((n + BI - 1) / BI, query_pass, &job);
        attn_parallel((n + BJ - 1) / BJ, key_pass, &job);
    } else {
        for (int i0 = 0; i0 < n; i0 += BI) {
            int bi = imin(BI, n - i0), rows = round_up(bi, QP);
            int j_end = causal ? i0 + bi : n;
            for (int j0 = 0; j0 < j_end; j0 += BJ) {
                int bj = imin(BJ, n - j0), bjp = round_up(bj, KP);
                src->tile(src, i0, bi, j0, bj, b.T);
                attn_mask_tile(n, causal, i0, bi, j0, bj, b.T);
                block_gradients(&b, dv, i0, bi, j0, bjp);
                for (int jj = 0; jj < bjp; jj += KP) /* dV[j] += sum_i P[i, j] dO[i] */
                    for (int e0 = 0; e0 < dvp; e0 += 2 * VW)
                        attn_micro_4x8_rows(rows, b.Pt + (size_t)jj * BI, BI, b.dorow + (size_t)i0 * dvp + e0, dvp,
                                            b.dvacc + (size_t)(j0 + jj) * dvp + e0, dvp, 1);
                src->grad(src, grads, i0, bi, j0, bj, b.dPT, b.dSt);
            }
        }
    }
    for (int j = 0; j < n; j++)
        attn_axpy(grads->v + (size_t)j * dv, b.dvacc + (size_t)j * dvp, dv, 1.0f);
    src->finish(src, opt, grads);
}
