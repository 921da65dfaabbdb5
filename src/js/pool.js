// pool.js — the workers of a threaded attnlab instance (docs/contract.md, "Threads").
//
// The calling thread (the leader) and threads - 1 workers each run an instance of the same
// threaded module on one shared WebAssembly.Memory. The C core (src/c/threads.c) splits each call
// into pieces and hands them out through counters in that memory, so a call needs no message:
// the leader runs pieces itself and sleeps on memory.atomic.wait32 until the workers are done,
// which is why the leader must be a thread that may block (Node's main thread, a Worker).
// Messages are only exchanged here, at start and stop.

const STACK_BYTES = 256 * 1024; // each worker's stack, as the leader's (build.sh: -z stack-size)

/** Bytes of memory the workers' stacks take above the module's static data. */
export function stackBytes(threads) {
  return (threads - 1) * STACK_BYTES;
}

/** Cores this engine reports, or 1. */
export function cores() {
  const os = globalThis.process?.getBuiltinModule?.('node:os');
  if (os?.availableParallelism) return os.availableParallelism();
  return globalThis.navigator?.hardwareConcurrency || 1;
}

/**
 * Why this thread cannot lead a pool, or null when it can: shared memory must exist, the page must
 * be cross-origin isolated (browsers), and this thread must be allowed to block on Atomics.wait.
 */
export function threadsBlocked() {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics?.wait !== 'function') {
    return 'this engine has no SharedArrayBuffer';
  }
  if (globalThis.crossOriginIsolated === false) {
    return 'the page is not cross-origin isolated (it needs the headers Cross-Origin-Opener-Policy: same-origin ' +
      'and Cross-Origin-Embedder-Policy: require-corp)';
  }
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0); // 'not-equal' where blocking is allowed
  } catch {
    return "this thread may not block (a browser's main thread); call attnlab from a Worker";
  }
  try {
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch {
    return 'this engine has no shared WebAssembly memory';
  }
  return null;
}

const START_MS = 10000; // how long the workers may take to load and enter the pool

function spawn() {
  const threads = globalThis.process?.getBuiltinModule?.('node:worker_threads');
  if (threads) {
    // No execArgv: the caller's (say --input-type) may not apply to a worker; V8's flags (relaxed
    // SIMD) are the process's anyway.
    const worker = new threads.Worker(new URL('./pool-worker.js', import.meta.url), { execArgv: [] });
    return {
      on: (fn) => {
        worker.on('message', fn);
        worker.on('error', (err) => fn({ type: 'error', message: err.message }));
        // a worker that ends without an error event (killed, or exit() in its code) must not
        // leave the start waiting; after a 'ready' this settles nothing
        worker.on('exit', (code) => fn({ type: 'error', message: `exited with code ${code} before it was ready` }));
      },
      unref: () => worker.unref(), // once started: an idle pool never keeps Node running
      post: (message) => worker.postMessage(message),
      terminate: () => worker.terminate(),
    };
  }
  // This exact form, new Worker(new URL('./file', import.meta.url), { type: 'module' }), is what
  // bundlers such as Vite recognise to emit the worker with the bundle.
  const worker = new Worker(new URL('./pool-worker.js', import.meta.url), { type: 'module' });
  return {
    on: (fn) => {
      worker.addEventListener('message', (event) => fn(event.data));
      worker.addEventListener('error', (event) => fn({ type: 'error', message: event.message ?? 'worker failed to load' }));
    },
    post: (message) => worker.postMessage(message),
    terminate: () => worker.terminate(),
    unref: () => {},
  };
}

// Spins (attnlab.h, attn_threads_start): long when every thread of this JS thread's pools has a
// core of its own, short when they oversubscribe the cores and spinning would steal the time of
// the threads that have work.
export const LONG_SPIN = 1 << 20;
export const SHORT_SPIN = 1000;

// This JS thread's running pools ({ threads, exports }) and their threads, leaders included: each
// pool spins as if it had the machine to itself unless all of them fit on the cores together.
const live = new Set();
let liveThreads = 0;

/** Threads (leaders included) of the pools this JS thread runs now. */
export function poolThreads() {
  return liveThreads;
}

function spinNow() {
  return liveThreads <= cores() ? LONG_SPIN : SHORT_SPIN;
}

// Gives every running pool the spin their total now calls for; between calls (the JS thread is
// here, so none of its pools is in a job), and attn_threads_spin is atomic anyway.
function respin() {
  const spin = spinNow();
  for (const p of live) p.exports.attn_threads_spin(spin);
}

/**
 * Starts threads - 1 workers on `memory`, their stacks at [stackBase, stackBase + stackBytes), and
 * switches the core to split calls over them. Resolves with { stop() } once every worker waits;
 * stop() may be called more than once.
 */
export async function startPool({ module, memory, exports, threads, stackBase }) {
  const workers = [];
  const entry = { threads, exports };
  const stop = () => {
    exports.attn_threads_stop(); // workers return from attn_thread_worker ...
    for (const w of workers) w.terminate(); // ... and are ended either way
    workers.length = 0;
    if (live.delete(entry)) {
      liveThreads -= threads;
      respin(); // the pools left may fit the cores again
    }
  };
  let timer;
  try {
    // a worker that never answers (a browser that never loads its script) must not hang init()
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`workers did not report ready within ${START_MS / 1000} s`)), START_MS);
    });
    await Promise.race([timeout, Promise.all(Array.from({ length: threads - 1 }, (_, i) => new Promise((resolve, reject) => {
      const index = i + 1;
      const worker = spawn();
      workers.push(worker);
      worker.on((message) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'error') reject(new Error(`worker ${index}: ${message.message}`));
      });
      worker.post({ module, memory, index, stackTop: stackBase + index * STACK_BYTES, stackBytes: STACK_BYTES });
    })))]);
    // 'ready' is posted just before a worker enters the pool: wait until all have.
    const deadline = Date.now() + START_MS;
    while (exports.attn_threads_running() < threads - 1) {
      if (Date.now() > deadline) throw new Error(`workers did not start within ${START_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    live.add(entry);
    liveThreads += threads;
    const status = exports.attn_threads_start(threads, spinNow());
    if (status !== 0) throw new Error(`attn_threads_start(${threads}) failed with status ${status}`);
    respin(); // the pools already running spin less if this one oversubscribes the cores
    for (const w of workers) w.unref();
  } catch (err) {
    stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { stop };
}
