// The workers' side of the page's one worker protocol (the page's side, and the messages:
// web/worker-client.js), shared by web/worker.js and web/experiment-worker.js: loading the
// binding, an instance of a build, errors as plain data, and the loop that answers requests in
// order while control messages act at once.
import { BUILDS } from '../dist/builds.js';

const BINDING_URL = new URL('../dist/attnlab.js', import.meta.url).href;
/** The builds a request may name, as init() options ('auto': the best this engine runs). */
const INIT_OPTIONS = { auto: {}, ...Object.fromEntries(BUILDS.map((b) => [b.name, b.init])) };

let modPromise = null;

/** The binding module, imported once (a failed import is tried again by the next request). */
export function loadBinding() {
  if (!modPromise) {
    modPromise = import(BINDING_URL).catch((err) => {
      modPromise = null;
      throw Object.assign(new Error(`could not load the binding (${BINDING_URL}): ${err.message}. Build it with \`npm run build\`.`), { code: 'LOAD' });
    });
  }
  return modPromise;
}

/** A new instance of `build` (options: init()'s others), its modules found in dist/ beside the binding. */
export async function initBuild(build, options = {}) {
  if (!INIT_OPTIONS[build]) throw Object.assign(new Error(`unknown build '${build}'`), { code: 'UNKNOWN' });
  const mod = await loadBinding();
  return mod.init({ ...INIT_OPTIONS[build], ...options, locateFile: (file) => new URL(`../dist/${file}`, import.meta.url).href });
}

/**
 * The WebGPU build: attnlab/webgpu's instance behind the face of a WebAssembly one (build,
 * variants, attention), its calls returning Promises; `gpu` is the instance itself (warmup).
 */
export async function initWebGPUBuild() {
  let mod;
  try {
    mod = await import(new URL('../dist/webgpu.js', import.meta.url).href);
  } catch (err) {
    throw Object.assign(new Error(`could not load attnlab/webgpu (dist/webgpu.js): ${err.message}`), { code: 'LOAD' });
  }
  const gpu = await mod.initWebGPU();
  return {
    build: 'webgpu', simd: false, threads: 1, gpu, adapter: gpu.adapter, variants: gpu.variants, options: gpu.options, dims: gpu.dims,
    attention: (id, inputs, options) => gpu.attention(id, inputs, options),
  };
}

/** An error as the reply carries it (AttnError's code: SHAPE, VALUE, UNKNOWN, UNSUPPORTED, MEMORY, LOAD). */
export function errorOf(err) {
  return { code: err?.code ?? 'ERROR', name: err?.name ?? 'Error', message: String(err?.message ?? err) };
}

/**
 * Answers requests one at a time, in order: handlers[type](msg, post) returns { reply, transfer }
 * (post(event) sends an event of the request before its reply). control[type]() handles a
 * message at once, with no reply (a run in progress yields to the event loop, so it arrives mid-run).
 */
export function serve(handlers, control = {}) {
  let queue = Promise.resolve();
  self.onmessage = (e) => {
    const msg = e.data;
    if (Object.hasOwn(control, msg.type)) return control[msg.type]();
    queue = queue.then(async () => {
      const post = (m) => self.postMessage({ id: msg.id, ...m });
      try {
        const h = Object.hasOwn(handlers, msg.type) ? handlers[msg.type] : null;
        if (!h) throw Object.assign(new Error(`unknown request '${msg.type}'`), { code: 'UNKNOWN' });
        const { reply, transfer } = await h(msg, post);
        self.postMessage({ id: msg.id, ok: true, ...reply }, transfer);
      } catch (err) {
        self.postMessage({ id: msg.id, ok: false, error: errorOf(err) });
      }
    });
  };
}
