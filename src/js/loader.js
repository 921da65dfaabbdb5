// loader.js — how init() finds and starts a module: which build the engine can run (features,
// chooseBuild), how many threads (chooseThreads), where each module lives by default, reading its
// bytes (a file in Node, a fetch elsewhere), checking and compiling them, and for a threaded build
// the shared memory, the workers' stacks and the pool (pool.js). What it returns — the module's
// exports, its memory, the pool — becomes an instance in attnlab.js. No work at import time.

import { AttnError, align, describe } from './errors.js';
import { PAGE, MAX_MEMORY } from './heap.js';
import { cores, stackBytes, startPool, threadsBlocked } from './pool.js';
import { BUILD_BY_NAME } from './builds.js';

// The builds and their modules (src/js/builds.js); threads > 1 loads the threaded module
// (docs/contract.md, "Threads"): the same core, on shared memory.
const moduleFile = (build, threads) => (threads > 1 ? BUILD_BY_NAME[build].threadsFile : BUILD_BY_NAME[build].file);
const MAX_AUTO_THREADS = 8; // threads: 'auto' takes the cores available, up to this many
const MAX_THREADS = 16; // attnlab.h ATTN_MAX_THREADS

// Where each module lives by default: next to this file. Each is a literal
// new URL('./file', import.meta.url), the form bundlers such as Vite recognise, so that they emit
// the .wasm files with the bundle and rewrite these URLs: the one place the files are named again
// (tests/builds.test.mjs checks these names against the manifest).
function defaultUrl(build) {
  switch (build) {
    case 'relaxed': return new URL('./attnlab-relaxed.wasm', import.meta.url);
    case 'simd': return new URL('./attnlab-simd.wasm', import.meta.url);
    default: return new URL('./attnlab-scalar.wasm', import.meta.url);
  }
}

function defaultThreadsUrl(build) {
  switch (build) {
    case 'relaxed': return new URL('./attnlab-relaxed-threads.wasm', import.meta.url);
    case 'simd': return new URL('./attnlab-simd-threads.wasm', import.meta.url);
    default: return new URL('./attnlab-scalar-threads.wasm', import.meta.url);
  }
}

// Smallest modules that use a SIMD128 / a relaxed-SIMD instruction: what the engine validates.
const SIMD_PROBE = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11);
const RELAXED_PROBE = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1,
  0, 10, 15, 1, 13, 0, 65, 1, 253, 15, 65, 2, 253, 15, 253, 128, 2, 11);

/** What the current engine can run. */
export function features() {
  return {
    simd: WebAssembly.validate(SIMD_PROBE),
    relaxedSimd: WebAssembly.validate(RELAXED_PROBE),
  };
}

// How many threads to run: 'auto' takes the cores (up to 8) where this thread may lead a pool.
export function chooseThreads(threads = 'auto') {
  if (threads === 'auto') {
    return threadsBlocked() ? 1 : Math.max(1, Math.min(MAX_AUTO_THREADS, cores()));
  }
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new AttnError('VALUE', `threads must be "auto" or an integer from 1 to ${MAX_THREADS}, got ${describe(threads)}`);
  }
  if (threads > 1) {
    const why = threadsBlocked();
    if (why) throw new AttnError('UNSUPPORTED', `threads: ${threads} cannot run here: ${why}; use threads: 1 or "auto"`);
  }
  return threads;
}

export function chooseBuild(simd = 'auto') {
  const can = features();
  if (simd === 'auto') return can.relaxedSimd ? 'relaxed' : can.simd ? 'simd' : 'scalar';
  if (simd === false) return 'scalar';
  if (simd === true) {
    if (!can.simd) throw new AttnError('UNSUPPORTED', 'this engine does not support WebAssembly SIMD128; use simd: false');
    return 'simd';
  }
  if (simd === 'relaxed') {
    if (!can.relaxedSimd) {
      throw new AttnError('UNSUPPORTED', 'this engine does not support WebAssembly relaxed SIMD ' +
        '(Node needs --experimental-wasm-relaxed-simd); use simd: true or "auto"');
    }
    return 'relaxed';
  }
  throw new AttnError('VALUE', `simd must be "auto", "relaxed", true or false, got ${describe(simd)}`);
}

// Loads the module of a build: the threaded one when threads > 1. The bytes decide what runs:
// wasmBinary or locateFile may hand over a single-threaded module, which then runs on one thread
// (an error only when threads asked for more than one explicitly).
export async function load(build, threads, options) {
  const file = moduleFile(build, threads);
  let bytes = options.wasmBinary;
  let where = 'options.wasmBinary';
  if (bytes === undefined) {
    let url;
    try {
      url = options.locateFile ? options.locateFile(file) : threads > 1 ? defaultThreadsUrl(build) : defaultUrl(build);
      where = String(url);
    } catch (err) {
      throw new AttnError('LOAD', `locateFile("${file}") threw: ${err?.message ?? String(err)}. ` +
        'It must return the URL or path of the file.');
    }
    try {
      bytes = await readBytes(url);
    } catch (err) {
      throw new AttnError('LOAD', `could not load ${file} from ${where}: ${err.message}. ` +
        'Serve it next to attnlab.js, or pass init({ locateFile: (file) => url }) or ' +
        'init({ wasmBinary: bytes })' + (threads > 1 ? ', or init({ threads: 1 }) for the single-threaded module.' : '.'));
    }
  }
  const head = new Uint8Array(bytes instanceof ArrayBuffer ? bytes : bytes.buffer, bytes.byteOffset ?? 0, Math.min(4, bytes.byteLength));
  if (!(head[0] === 0 && head[1] === 0x61 && head[2] === 0x73 && head[3] === 0x6d)) {
    const text = new TextDecoder().decode(head).replace(/[^\x20-\x7e]/g, '?');
    throw new AttnError('LOAD', `${file} (from ${where}) is not a WebAssembly module: it starts with "${text}"` +
      (text.startsWith('<') ? ' (an HTML page: the server answered with a page instead of the file)' : '') +
      '. Serve the .wasm files next to attnlab.js, or pass locateFile or wasmBinary.');
  }
  const cannot = (err) => new AttnError('LOAD', `${file} (from ${where}) is not a module this engine can run ` +
    `as the ${build} build: ${err.message}`);
  let module;
  try {
    module = await WebAssembly.compile(bytes);
  } catch (err) {
    throw cannot(err);
  }
  // A threaded build imports its (shared) memory; a single-threaded one has its own.
  const threaded = WebAssembly.Module.imports(module).some((i) => i.kind === 'memory');
  if (!threaded) {
    if (threads > 1 && typeof options.threads === 'number') {
      throw new AttnError('UNSUPPORTED', `threads: ${threads}, but ${file} (from ${where}) is a single-threaded build; ` +
        `pass the ${moduleFile(build, 2)} module or threads: 1`);
    }
    try {
      const instance = await WebAssembly.instantiate(module, {});
      return { exports: instance.exports, threads: 1 };
    } catch (err) {
      throw cannot(err);
    }
  }
  let memory, instance;
  try {
    // shared memory must declare a maximum: wasm32's, the module's own
    memory = new WebAssembly.Memory({ initial: 32, maximum: MAX_MEMORY / PAGE, shared: true });
    instance = await WebAssembly.instantiate(module, { env: { memory } });
  } catch (err) {
    throw cannot(err);
  }
  const exports = instance.exports;
  if (threads <= 1) return { exports, memory, threads: 1 };
  // The workers' stacks sit right above the static data; the binding's buffers above them.
  const stackBase = align(exports.attn_heap_base() >>> 0, 64);
  const reserved = stackBytes(threads);
  const end = stackBase + reserved;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
  let pool;
  try {
    pool = await startPool({ module, memory, exports, threads, stackBase });
  } catch (err) {
    throw new AttnError('LOAD', `the ${build} build could not start ${threads - 1} worker threads: ${err.message}`);
  }
  return { exports, memory, pool, threads, reserved };
}

// A file: URL or a plain path is read from disk where the engine has Node's file system (fetch
// cannot read file: URLs there), anything else is fetched. process.getBuiltinModule (Node >= 20.16)
// reaches the file system without an import statement, which browser bundlers would try, and
// fail, to resolve.
async function readBytes(url) {
  const href = String(url);
  const fs = globalThis.process?.getBuiltinModule?.('node:fs/promises');
  if (fs && (href.startsWith('file:') || !/^[a-z][a-z0-9+.-]*:/i.test(href))) {
    return fs.readFile(href.startsWith('file:') ? new URL(href) : href);
  }
  if (href.startsWith('file:') && globalThis.process?.versions?.node) {
    throw new Error(`this Node (${globalThis.process.version}) cannot read files without an import; ` +
      'use Node >= 20.16, or pass init({ wasmBinary })');
  }
  const response = await fetch(href);
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
  return response.arrayBuffer();
}
