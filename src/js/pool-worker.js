// pool-worker.js — one worker of a threaded attnlab instance (src/js/pool.js): it instantiates the
// threaded module on the instance's shared memory, moves its stack pointer to its own stack, and
// runs attn_thread_worker(index), which takes pieces of the leader's calls until the pool stops.
// Runs as a Node worker_threads worker or a browser module Worker; it imports nothing.

const nodePort = globalThis.process?.getBuiltinModule?.('node:worker_threads')?.parentPort ?? null;
const post = (message) => (nodePort ? nodePort.postMessage(message) : globalThis.postMessage(message));

async function start({ module, memory, index, stackTop }) {
  try {
    const instance = await WebAssembly.instantiate(module, { env: { memory } });
    instance.exports.__stack_pointer.value = stackTop;
    post({ type: 'ready', index });
    instance.exports.attn_thread_worker(index); // returns after attn_threads_stop()
    post({ type: 'stopped', index });
  } catch (err) {
    post({ type: 'error', index, message: err?.message ?? String(err) });
  }
}

if (nodePort) nodePort.once('message', start);
else globalThis.addEventListener('message', (event) => start(event.data), { once: true });
