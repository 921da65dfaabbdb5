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


static struct {
    int32_t threads;    /* participants, the leader included; 1 = serial */
    int32_t generation; /* bumped by the leader to start a job; idle workers sleep on it */
    int32_t stop;       /* nonzero: workers return from attn_thread_worker */
    int32_t in_job;     /* nonzero while a job runs: nested requests run serially */
    attn_piece_fn fn;
    void *ctx;
    int32_t pieces;
    int32_t done;       /* pieces of the current job finished */
    int32_t running;    /* workers inside attn_thread_worker */
    int32_t spin;       /* rounds to spin on a word before sleeping on it */
    /* (job << 32) | next piece. A worker claims piece i by moving (job, i) to (job, i + 1) with
     * one compare-and-swap, having read fn, ctx and pieces after loading the ticket: the leader
     * writes those only while the ticket is closed (next = CLOSED) or names another job, so a
     * claim that succeeds proves they were the job's own throughout, and a worker that wakes late
     * never needs to be waited for. */
    uint64_t ticket;
} pool = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1000, 0xffffffffu};

#define CLOSED 0xffffffffu

static int32_t load(int32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(int32_t *p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static int32_t fetch_add(int32_t *p, int32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

/* Blocks while *p == seen: spins first, then sleeps until a notify. Every change of a word some
 * thread may sleep on is followed by a notify (generation: the leader; done: the thread that
 * finishes the last piece), and wait32 returns at once when the word has already changed, so an
 * idle pool sleeps without waking up. */
static void wait_while(int32_t *p, int32_t seen) {
    for (int i = 0, spin = pool.spin; i < spin; i++)
        if (load(p) != seen) return;
    while (load(p) == seen) __builtin_wasm_memory_atomic_wait32(p, seen, -1);
}

/* Claims and runs pieces of the current job until none is left. */
static void take_pieces(int thread) {
    /* a worker beyond the thread count the job was sized for (started with more workers than
     * attn_threads_start was given) takes no pieces: its scratch slice does not exist */
    if (thread >= load(&pool.threads)) return;
    for (;;) {
        uint64_t t = __atomic_load_n(&pool.ticket, __ATOMIC_SEQ_CST);
        uint32_t next = (uint32_t)t;
        attn_piece_fn fn = pool.fn;
        void *ctx = pool.ctx;
        int32_t pieces = pool.pieces;
        if (next == CLOSED || next >= (uint32_t)pieces) return;
        if (!__atomic_compare_exchange_n(&pool.ticket, &t, t + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            continue;
        fn(ctx, (int)next, thread);
        if (fetch_add(&pool.done, 1) + 1 == pieces) __builtin_wasm_memory_atomic_notify(&pool.done, 1);
    }
}

attn_status attn_threads_start(int32_t threads, int32_t spin) {
    if (threads < 1 || threads > ATTN_MAX_THREADS || spin < 0) return ATTN_ERR_VALUE;
    if (load(&pool.in_job)) return ATTN_ERR_UNSUPPORTED;
    store(&pool.spin, spin);
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
    /* an index outside the pool would run pieces on another thread's scratch slice */
    if (thread < 1 || thread >= ATTN_MAX_THREADS) return -1;
    /* seen before counting itself in: the leader starts jobs only once every worker is counted,
     * so no job can slip between the two */
    int32_t seen = load(&pool.generation);
    fetch_add(&pool.running, 1);
    for (;;) {
        wait_while(&pool.generation, seen);
        seen = load(&pool.generation);
        if (load(&pool.stop)) break;
        take_pieces(thread);
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
    /* the ticket is closed between jobs, so the fields can be written */
    uint64_t job = (__atomic_load_n(&pool.ticket, __ATOMIC_SEQ_CST) >> 32) + 1;
    pool.fn = fn, pool.ctx = ctx, pool.pieces = pieces;
    store(&pool.done, 0);
    __atomic_store_n(&pool.ticket, job << 32, __ATOMIC_SEQ_CST); /* open: piece 0 is next */
    fetch_add(&pool.generation, 1);
    __builtin_wasm_memory_atomic_notify(&pool.generation, 0xffffffffu);
    take_pieces(0);
    for (int32_t done; (done = load(&pool.done)) < pieces;) wait_while(&pool.done, done);
    __atomic_store_n(&pool.ticket, (job << 32) | CLOSED, __ATOMIC_SEQ_CST);
    store(&pool.in_job, 0);
}

#else /* one thread: the same entry points, serial */

attn_status attn_threads_start(int32_t threads, int32_t spin) {
    (void)spin;
    return threads == 1 ? ATTN_OK : ATTN_ERR_UNSUPPORTED;
}
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
