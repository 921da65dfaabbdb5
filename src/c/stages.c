/* stages.c — the stage schedule over the thread pool (threads.c): independent tasks run as one job.
 *
 * A training step of a small model is dozens of short steps (a LayerNorm, a product, a GELU...),
 * and every job handed to the threads ends in a wait for its last piece. So the passes run in
 * stages: one job each, made of tasks that do not depend on one another — row blocks that carry a
 * chain of row-wise steps (a row's LayerNorm, its products with the weights, its GELU), and column
 * blocks of sums over every row (weight, bias and gain gradients), which read only what earlier
 * stages finished. A layer of a model (model_pass.c) is a stage plus one per head forward, three
 * plus one per head backward.
 *
 * Bits: a row block computes its rows with the operations one whole-matrix call uses (products
 * split at multiples of KP rows, as attn_gemm walks them; elementwise steps per element), and a
 * column block sums its columns over all rows in row order; so every thread count, and every
 * block size, gives the bits of one thread.
 */
#include "internal.h"

static void stage_piece(void *ctx, int piece, int thread) {
    const stage *st = ctx;
    for (int i = 0; i < st->count; i++) {
        if (piece < st->tasks[i].pieces) {
            st->tasks[i].fn(st->tasks[i].ctx, piece, thread);
            return;
        }
        piece -= st->tasks[i].pieces;
    }
}

/* Runs the stage's tasks as one job, and empties it. Pieces are taken in the order tasks were
 * added: long ones first, short column blocks last to fill the gaps at the end. */
void attn_stage_run(stage *st) {
    int pieces = 0;
    for (int i = 0; i < st->count; i++) pieces += st->tasks[i].pieces;
    attn_parallel(pieces, stage_piece, st);
    st->count = 0;
}

/* Tasks of one stage are independent, so a full stage may run early: the rest follow in another. */
void attn_stage_add(stage *st, task_fn fn, const void *ctx, int pieces) {
    if (pieces <= 0) return;
    if (st->count == STAGE_TASKS) attn_stage_run(st);
    st->tasks[st->count++] = (task){fn, ctx, pieces};
}

static void block_piece(const void *ctx, int piece, int thread) {
    const blocks *b = ctx;
    int lo = piece * b->block;
    b->fn(b->ctx, lo, imin(b->count, lo + b->block), thread);
}

/* Adds fn over [0, count) in blocks of a multiple of `align`, `per_thread` blocks per thread
 * (several even out uneven pieces; column sums, which each read every row, take one). */
void attn_stage_blocks(stage *st, blocks *b, int count, int align, int per_thread, block_fn fn, const void *ctx) {
    int threads = attn_thread_count();
    int block = round_up(imax(align, (count + per_thread * threads - 1) / (per_thread * threads)), align);
    *b = (blocks){fn, ctx, count, block};
    attn_stage_add(st, block_piece, b, (count + block - 1) / block);
}

/* Row blocks of the batch: multiples of KP rows (see above), at least 16. */
void attn_stage_rows(stage *st, blocks *b, int rows, block_fn fn, const void *ctx) {
    attn_stage_blocks(st, b, rows, 16, 4, fn, ctx);
}

/* Column sums: out += the column sums of x [rows, cols], rows in order. Blocks of a multiple of
 * 16 columns, so each block's axpy splits vector and scalar parts as one call over all columns. */
static void column_sums_block(const void *ctx, int lo, int hi, int thread) {
    (void)thread;
    const colsum_args *a = ctx;
    for (int i = 0; i < a->rows; i++) attn_axpy(a->out + lo, a->x + (size_t)i * a->cols + lo, hi - lo, 1.0f);
}
void attn_stage_column_sums(stage *st, blocks *b, colsum_args *a, int rows, int cols, const float *x, float *out) {
    *a = (colsum_args){rows, cols, x, out};
    attn_stage_blocks(st, b, cols, 16, 1, column_sums_block, a);
}

/* Weight gradients C_i[m, N] = At_i^T B_i (weight_grad, K = the batch's rows) of `count`
 * products of one shape, item i's pointers from at(); a piece is a block of rows of one C. */
/* C[m, N] = At^T B with At [K, m], B [K, N], K = the batch's rows: K in chunks so that the slices of
 * At and B a chunk reads stay in cache across the micro-kernel's column blocks. attn_gemm_tn with
 * accumulate continues each element's sum in the same k order, so the chunks change no rounding. */
#define WG_CHUNK 128
static void weight_grad(int m, int N, int K, const float *At, int lda, const float *B, int ldb, float *C, int ldc) {
    for (int k0 = 0; k0 < K; k0 += WG_CHUNK)
        attn_gemm_tn(m, N, imin(WG_CHUNK, K - k0), At + (size_t)k0 * lda, lda, B + (size_t)k0 * ldb, ldb, C, ldc, k0 > 0);
}


static void product_piece(const void *ctx, int piece, int thread) {
    (void)thread;
    const products *p = ctx;
    const float *At, *B;
    float *C;
    p->at(p->ctx, piece / p->per, &At, &B, &C);
    int i0 = (piece % p->per) * p->rows, rows = imin(p->rows, p->m - i0);
    if (C) weight_grad(rows, p->N, p->K, At + i0, p->lda, B, p->ldb, C + (size_t)i0 * p->ldc, p->ldc);
}

/* Adds the products: rows of C in blocks of at least 16 (a multiple of KP), about 2 per thread
 * over all products. A NULL C (a frozen weight) is skipped. */
void attn_stage_products(stage *st, products *p, int count) {
    int threads = attn_thread_count();
    int per = (threads * 2 + count - 1) / count;
    p->rows = round_up(imax(16, (p->m + per - 1) / per), KP);
    p->per = (p->m + p->rows - 1) / p->rows;
    attn_stage_add(st, product_piece, p, count * p->per);
}

static void one_product_at(const void *ctx, int item, const float **At, const float **B, float **C) {
    (void)item;
    const one_product *o = ctx;
    *At = o->At, *B = o->B, *C = o->C;
}
/* One weight gradient C[m, N] = At^T B, At [K, m] (row stride lda). */
void attn_stage_weight_grad(stage *st, products *p, one_product *o, int m, int N, int K, const float *At, int lda,
                            const float *B, int ldb, float *C) {
    if (!C) return;
    *o = (one_product){At, B, C};
    *p = (products){.m = m, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = N, .at = one_product_at, .ctx = o};
    attn_stage_products(st, p, 1);
}

