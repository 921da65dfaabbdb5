/* threads.c — the thread pool of the threaded WebAssembly builds (ATTN_THREADS), and its serial
 * stand-in everywhere else.
 *
 * Every thread of a threaded build is one instance of the same module on one shared memory, so
 * the static `pool` below is the same bytes for all of them. The thread that calls the library
 * (the leader) splits a call into independent pieces and publishes them here; workers sit in
 * attn_thread_worker(), take pieces from a shared counter and run them with their own stack. No
 * message passing: a job is three words and two counters, and waiting is memory.atomic.wait32.
 *
 * Determinism: a piece's result depends only on the piece, never on which thread runs it or in
 * which order pieces finish (each piece writes its own outputs, and uses the scratch slice of the
 * thread running it only as scratch), so results are those of one thread wherever the kernels
 * split work into pieces that one thread would compute the same way.
 *
 * Nesting: a piece that asks for parallel work (a model's per-sequence attention calling the
 * attention's own split) runs it serially on its own thread: only the leader, outside a job,
 * starts jobs.
 */
#include "internal.h"

#if defined(ATTN_THREADS) && defined(__wasm__)

/* Spin this many rounds on a word before sleeping on it: a wake-up through memory.atomic.notify
 * costs tens of microseconds, more than many pieces take. */
#define SPIN_ROUNDS 20000

static struct {
    int32_t threads;    /* participants, the leader included; 1 = serial */
    int32_t generation; /* bumped by the leader to start a job; workers wait on it */
    int32_t stop;       /* nonzero: workers return from attn_thread_worker */
    int32_t in_job;     /* nonzero while a job runs: nested requests run serially */
    attn_piece_fn fn;
    void *ctx;
    int32_t pieces;
    int32_t next;       /* the next piece to take */
    int32_t acked;      /* workers done with the current job */
    int32_t running;    /* workers inside attn_thread_worker */
} pool = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static int32_t load(int32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(int32_t *p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static int32_t fetch_add(int32_t *p, int32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

/* Blocks while *p == seen: spins first, then sleeps until a notify (or 1 ms, a safety net). */
static void wait_while(int32_t *p, int32_t seen) {
    for (int i = 0; i < SPIN_ROUNDS; i++)
        if (load(p) != seen) return;
    while (load(p) == seen) __builtin_wasm_memory_atomic_wait32(p, seen, 1000000);
}

/* Takes pieces until none is left. */
static void take_pieces(int thread) {
    int32_t pieces = pool.pieces;
    for (int32_t p; (p = fetch_add(&pool.next, 1)) < pieces;) pool.fn(pool.ctx, p, thread);
}

attn_status attn_threads_start(int32_t threads) {
    if (threads < 1 || threads > ATTN_MAX_THREADS) return ATTN_ERR_VALUE;
    if (load(&pool.in_job)) return ATTN_ERR_UNSUPPORTED;
    store(&pool.stop, 0);
    store(&pool.threads, threads);
    return ATTN_OK;
}

void attn_threads_stop(void) {
    store(&pool.stop, 1);
    fetch_add(&pool.generation, 1);
    __builtin_wasm_memory_atomic_notify(&pool.generation, 0xffffffffu);
    store(&pool.threads, 1);
}

int32_t attn_threads_running(void) { return load(&pool.running); }

int32_t attn_thread_worker(int32_t thread) {
    /* seen before counting itself in: the leader starts jobs only once every worker is counted,
     * so no job can slip between the two */
    int32_t seen = load(&pool.generation);
    fetch_add(&pool.running, 1);
    for (;;) {
        wait_while(&pool.generation, seen);
        seen = load(&pool.generation);
        if (load(&pool.stop)) break;
        take_pieces(thread);
        if (fetch_add(&pool.acked, 1) + 1 == pool.threads - 1)
            __builtin_wasm_memory_atomic_notify(&pool.acked, 1);
    }
    fetch_add(&pool.running, -1);
    return 0;
}

int attn_thread_count(void) { return load(&pool.in_job) ? 1 : load(&pool.threads); }

void attn_parallel(int pieces, attn_piece_fn fn, void *ctx) {
    int threads = attn_thread_count();
    if (threads <= 1 || pieces <= 1) {
        for (int p = 0; p < pieces; p++) fn(ctx, p, 0);
        return;
    }
    store(&pool.in_job, 1);
    pool.fn = fn, pool.ctx = ctx, pool.pieces = pieces;
    store(&pool.next, 0);
    store(&pool.acked, 0);
    fetch_add(&pool.generation, 1); /* publishes the job: workers read it after this */
    __builtin_wasm_memory_atomic_notify(&pool.generation, 0xffffffffu);
    take_pieces(0);
    /* Every worker acknowledges every job, so none can still be reading this one's fields
     * when the next is written. */
    for (int32_t acked; (acked = load(&pool.acked)) < threads - 1;) wait_while(&pool.acked, acked);
    store(&pool.in_job, 0);
}

#else /* one thread: the same entry points, serial */

attn_status attn_threads_start(int32_t threads) { return threads == 1 ? ATTN_OK : ATTN_ERR_UNSUPPORTED; }
void attn_threads_stop(void) {}
int32_t attn_threads_running(void) { return 0; }
int32_t attn_thread_worker(int32_t thread) { (void)thread; return 0; }
int attn_thread_count(void) { return 1; }
void attn_parallel(int pieces, attn_piece_fn fn, void *ctx) {
    for (int p = 0; p < pieces; p++) fn(ctx, p, 0);
}

#endif

void attn_parallel_slices(int pieces, attn_piece_fn fn, void *ctx, int slices) {
    if (attn_thread_count() <= slices) {
        attn_parallel(pieces, fn, ctx);
        return;
    }
    for (int p = 0; p < pieces; p++) fn(ctx, p, 0);
}
