// pool-worker.js — one worker of a threaded attnlab instance (src/js/pool.js): it instantiates the
// threaded module on the instance's shared memory, moves its stack pointer to its own stack, and
// runs attn_thread_worker(index), which takes pieces of the leader's calls until the pool stops.
// Runs as a Node worker_threads worker or a browser module Worker; it imports nothing.

const nodePort = globalThis.process?.getBuiltinModule?.('node:worker_threads')?.parentPort ?? null;
const post = (message) => (nodePort ? nodePort.postMessage(message) : globalThis.postMessage(message));

async function start({ module, memory, index, stackTop, stackBytes }) {
  let exports = null;
  try {
    exports = (await WebAssembly.instantiate(module, { env: { memory } })).exports;
    exports.__stack_pointer.value = stackTop;
    post({ type: 'ready', index });
    // returns after attn_threads_stop(); its canary goes at the stack's low end
    exports.attn_thread_worker(index, stackTop - stackBytes);
    post({ type: 'stopped', index });
  } catch (err) {
    // A trap (or a stack exhausted in the engine) ended this worker in the middle of a piece: the
    // leader waits for that piece, so tell it through the pool. A trapped instance stays
    // callable; its stack pointer is wherever the trap left it, so reset it first.
    if (exports) {
      try {
        exports.__stack_pointer.value = stackTop;
        exports.attn_threads_fail();
      } catch { /* nothing more this worker can do */ }
    }
    post({ type: 'error', index, message: err?.message ?? String(err) });
  }
}

if (nodePort) nodePort.once('message', start);
else globalThis.addEventListener('message', (event) => start(event.data), { once: true });
