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
 *
 * Failure: a trap on a worker ends that worker's call, so the pieces it held never count as done.
 * Its host catches the trap and calls attn_threads_fail(), which wakes the leader; the leader
 * then traps too, so the caller sees the failure instead of waiting forever. Wasm has no guard
 * pages, so a stack overflow does not trap: a canary at the low end of every stack, checked by
 * the leader after each job, turns one that reached it into the same failure. A failed pool is
 * never reused: its host drops the instance.
 */
#include "internal.h"

#if defined(ATTN_THREADS) && defined(__wasm__)

#define CANARY_0 0x5a17c0deu
#define CANARY_1 0xa11ab1e5u

static struct {
    int32_t threads;    /* participants, the leader included; 1 = serial */
    int32_t generation; /* bumped by the leader to start a job; idle workers sleep on it */
    int32_t stop;       /* nonzero: workers return from attn_thread_worker */
    int32_t in_job;     /* nonzero while a job runs: nested requests run serially */
    attn_piece_fn fn;
    void *ctx;
    int32_t pieces;
    int32_t done;       /* pieces of the current job finished; DONE_FAILED once the pool failed */
    int32_t running;    /* workers inside attn_thread_worker */
    int32_t spin;       /* rounds to spin on a word before sleeping on it */
    int32_t failed;     /* 0, or why the pool failed (attn_threads_failed); never cleared */
    /* (job << 32) | next piece. A worker claims piece i by moving (job, i) to (job, i + 1) with
     * one compare-and-swap, having read fn, ctx and pieces after loading the ticket: the leader
     * writes those only while the ticket is closed (next = CLOSED) or names another job, so a
     * claim that succeeds proves they were the job's own throughout, and a worker that wakes late
     * never needs to be waited for. The three words are relaxed atomics: for a claim that
     * succeeds, the ticket's sequentially consistent store (the leader's, after writing them) and
     * load (the worker's, before reading them) already order them, but a late worker may read
     * them while the leader writes the next job's (its claim then fails), which as plain
     * accesses would be a data race. */
    uint64_t ticket;
    /* each thread's stack canary (two words at the low end of its stack), NULL = none; a worker
     * sets its own before it counts itself in `running`, which the leader waits for */
    uint32_t *canary[ATTN_MAX_THREADS];
} pool = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1000, 0, 0xffffffffu, {0}};

#define CLOSED 0xffffffffu
/* set in done by attn_threads_fail: done then never equals a job's piece count (all far below
 * it) again, and the change wakes a leader that sleeps on done */
#define DONE_FAILED 0x40000000

/* the low end of the leader's stack, which wasm-ld lays out (--stack-first, -z stack-size) */
extern char __stack_low;

static int32_t load(int32_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void store(int32_t *p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static int32_t fetch_add(int32_t *p, int32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static void notify_all(int32_t *p) { __builtin_wasm_memory_atomic_notify(p, 0xffffffffu); }

/* Blocks while *p == seen: spins first, then sleeps until a notify. Every change of a word some
 * thread may sleep on is followed by a notify (generation: the leader; done: the thread that
 * finishes the last piece, or attn_threads_fail), and wait32 returns at once when the word has
 * already changed, so an idle pool sleeps without waking up. */
static void wait_while(int32_t *p, int32_t seen) {
    for (int i = 0, spin = __atomic_load_n(&pool.spin, __ATOMIC_RELAXED); i < spin; i++)
        if (load(p) != seen) return;
    while (load(p) == seen) __builtin_wasm_memory_atomic_wait32(p, seen, -1);
}

/* Records the first reason the pool failed (later ones would only hide it). */
static void set_failed(int32_t why) {
    int32_t expected = 0;
    __atomic_compare_exchange_n(&pool.failed, &expected, why, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Claims and runs pieces of the current job until none is left. */
static void take_pieces(int thread) {
    /* a worker beyond the thread count the job was sized for (started with more workers than
     * attn_threads_start was given) takes no pieces: its scratch slice does not exist */
    if (thread >= load(&pool.threads)) return;
    for (;;) {
        if (load(&pool.failed)) return; /* the job will not finish: leave the rest */
        uint64_t t = __atomic_load_n(&pool.ticket, __ATOMIC_SEQ_CST);
        uint32_t next = (uint32_t)t;
        attn_piece_fn fn = __atomic_load_n(&pool.fn, __ATOMIC_RELAXED);
        void *ctx = __atomic_load_n(&pool.ctx, __ATOMIC_RELAXED);
        int32_t pieces = __atomic_load_n(&pool.pieces, __ATOMIC_RELAXED);
        if (next == CLOSED || next >= (uint32_t)pieces) return;
        if (!__atomic_compare_exchange_n(&pool.ticket, &t, t + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            continue;
        fn(ctx, (int)next, thread);
        if (fetch_add(&pool.done, 1) + 1 == pieces) __builtin_wasm_memory_atomic_notify(&pool.done, 1);
    }
}

static void write_canary(uint32_t *at) {
    __atomic_store_n(&at[0], CANARY_0, __ATOMIC_RELAXED);
    __atomic_store_n(&at[1], CANARY_1, __ATOMIC_RELAXED);
}

/* Traps, recording whose, when a stack's canary has been overwritten: two loads per thread. */
static void check_canaries(int threads) {
    for (int t = 0; t < threads; t++) {
        uint32_t *c = pool.canary[t];
        if (c && (__atomic_load_n(&c[0], __ATOMIC_RELAXED) != CANARY_0 ||
                  __atomic_load_n(&c[1], __ATOMIC_RELAXED) != CANARY_1)) {
            set_failed(ATTN_THREADS_FAILED_STACK | t << 8);
            __builtin_trap();
        }
    }
}

attn_status attn_threads_start(int32_t threads, int32_t spin) {
    if (threads < 1 || threads > ATTN_MAX_THREADS || spin < 0) return ATTN_ERR_VALUE;
    if (load(&pool.in_job) || load(&pool.failed)) return ATTN_ERR_UNSUPPORTED;
    /* the leader's stack is this instance's, which wasm-ld puts at the bottom of memory: its
     * canary goes 16 bytes up, so that a null pointer still reads zeros */
    pool.canary[0] = (uint32_t *)(void *)(&__stack_low + 16);
    write_canary(pool.canary[0]);
    store(&pool.spin, spin);
    store(&pool.stop, 0);
    store(&pool.threads, threads);
    return ATTN_OK;
}

int32_t attn_threads_spin(int32_t spin) {
    if (spin >= 0) store(&pool.spin, spin);
    return load(&pool.spin);
}

void attn_threads_stop(void) {
    store(&pool.stop, 1);
    fetch_add(&pool.generation, 1);
    notify_all(&pool.generation);
    store(&pool.threads, 1);
}

int32_t attn_threads_running(void) { return load(&pool.running); }

void attn_threads_fail(void) {
    set_failed(ATTN_THREADS_FAILED_WORKER);
    __atomic_fetch_or(&pool.done, DONE_FAILED, __ATOMIC_SEQ_CST);
    notify_all(&pool.done);
}

int32_t attn_threads_failed(void) { return load(&pool.failed); }

void *attn_threads_canary(int32_t thread) {
    return thread >= 0 && thread < ATTN_MAX_THREADS ? pool.canary[thread] : 0;
}

int32_t attn_thread_worker(int32_t thread, void *stack_low) {
    /* an index outside the pool would run pieces on another thread's scratch slice */
    if (thread < 1 || thread >= ATTN_MAX_THREADS) return -1;
    if (stack_low) {
        pool.canary[thread] = stack_low;
        write_canary(pool.canary[thread]);
    }
    /* seen before counting itself in: the leader starts jobs only once every worker is counted,
     * so no job can slip between the two (and the canary above is in place before any job) */
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
    if (load(&pool.failed)) __builtin_trap(); /* a worker is gone: the job would never finish */
    store(&pool.in_job, 1);
    /* the ticket is closed between jobs, so the fields can be written */
    uint64_t job = (__atomic_load_n(&pool.ticket, __ATOMIC_SEQ_CST) >> 32) + 1;
    __atomic_store_n(&pool.fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&pool.ctx, ctx, __ATOMIC_RELAXED);
    __atomic_store_n(&pool.pieces, pieces, __ATOMIC_RELAXED);
    store(&pool.done, 0);
    __atomic_store_n(&pool.ticket, job << 32, __ATOMIC_SEQ_CST); /* open: piece 0 is next */
    fetch_add(&pool.generation, 1);
    notify_all(&pool.generation);
    take_pieces(0);
    for (int32_t done; (done = load(&pool.done)) != pieces;) {
        if (done & DONE_FAILED) __builtin_trap(); /* attn_threads_fail: the host sees a trap */
        wait_while(&pool.done, done);
    }
    if (load(&pool.failed)) __builtin_trap();
    check_canaries(threads);
    __atomic_store_n(&pool.ticket, (job << 32) | CLOSED, __ATOMIC_SEQ_CST);
    store(&pool.in_job, 0);
}

/* The probe's job: each piece records its thread, then waits (bounded) until every thread of the
 * pool has run one, so that the threads cannot finish the job before all of them have joined. */
typedef struct {
    int32_t mask;
    int32_t all;
    int32_t trap; /* 1: on a worker, 2: on the leader */
} probe_job;

static void probe_piece(void *ctx, int piece, int thread) {
    (void)piece;
    probe_job *job = ctx;
    if (job->trap == (thread == 0 ? 2 : 1)) __builtin_trap();
    __atomic_fetch_or(&job->mask, 1 << thread, __ATOMIC_SEQ_CST);
    notify_all(&job->mask);
    /* 1 ms naps, at most 5000 of them: a worker that never wakes fails the test, not hangs it */
    for (int nap = 0; nap < 5000; nap++) {
        int32_t m = load(&job->mask);
        if ((m & job->all) == job->all || load(&pool.failed)) return;
        __builtin_wasm_memory_atomic_wait32(&job->mask, m, 1000000);
    }
}

int32_t attn_threads_probe(int32_t pieces, int32_t trap) {
    if (pieces < 1) return 0;
    probe_job job = {0, (int32_t)((1u << attn_thread_count()) - 1), trap};
    attn_parallel(pieces, probe_piece, &job);
    return load(&job.mask);
}

#else /* one thread: the same entry points, serial */

attn_status attn_threads_start(int32_t threads, int32_t spin) {
    (void)spin;
    return threads == 1 ? ATTN_OK : ATTN_ERR_UNSUPPORTED;
}
int32_t attn_threads_spin(int32_t spin) { (void)spin; return 0; }
void attn_threads_stop(void) {}
int32_t attn_threads_running(void) { return 0; }
void attn_threads_fail(void) {}
int32_t attn_threads_failed(void) { return 0; }
void *attn_threads_canary(int32_t thread) { (void)thread; return 0; }
int32_t attn_thread_worker(int32_t thread, void *stack_low) { (void)thread; (void)stack_low; return 0; }
int attn_thread_count(void) { return 1; }
void attn_parallel(int pieces, attn_piece_fn fn, void *ctx) {
    for (int p = 0; p < pieces; p++) fn(ctx, p, 0);
}
int32_t attn_threads_probe(int32_t pieces, int32_t trap) {
    if (trap == 2 && pieces >= 1) __builtin_trap();
    return pieces >= 1 ? 1 : 0;
}

#endif

void attn_parallel_slices(int pieces, attn_piece_fn fn, void *ctx, int slices) {
    if (attn_thread_count() <= slices) {
        attn_parallel(pieces, fn, ctx);
        return;
    }
    for (int p = 0; p < pieces; p++) fn(ctx, p, 0);
}
