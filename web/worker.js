// Module worker: every attention call of the page runs here, never on the main thread.
//
// Requests (postMessage; the protocol: worker-client.js): { id, type, ... }   Replies: { id, ok: true, ... } | { id, ok: false, error }
//   hello { build }                       -> { build, simd, threads, threadsWhy, version, variants, options, dims, features }
//   run   { variant, inputs, options, weights, build, timing, extras }
//         -> { output, weights?, timing, build, simd, intermediates? }   (Float32Arrays transferred)
//   scale { plan: { variants:[{id, opts}], builds, ns, d, dv, seed, preset, causal } }
//         -> a { id, type: 'progress', point } per size, then { id, ok: true, done: true }
//   webgpu {}                             -> { available, adapter?, why? }  (initWebGPU() in this worker)
// error: { code, message } (code from AttnError: SHAPE, VALUE, UNKNOWN, UNSUPPORTED, MEMORY, LOAD).
// Builds are 'auto' | 'relaxed' | 'simd' | 'scalar' | 'webgpu'; one instance per build, kept.
// 'webgpu' is attnlab/webgpu's instance (its calls return Promises; its timing awaits each call
// and reports the shaders' compilation apart, README "WebGPU").

import { buildRequest, WASM_MAX_N } from './gen.js';
import { intermediates } from '../dist/reference.js';
import { loadBinding, initBuild, initWebGPUBuild, errorOf, serve } from './worker-host.js';

const SLOW_MS = 2000; // a scaling point slower than this stops its series (the next n costs ≥ 2×)
const MAX_INPUT_VALUES = 48 * 1024 * 1024; // inputs above ~192 MB are skipped in the scaling run

const labs = new Map(); // build -> its instance (a promise), kept for the next request

function getLab(build = 'auto') {
  if (!labs.has(build)) {
    const p = (build === 'webgpu' ? initWebGPUBuild() : initBuild(build)).catch((err) => {
      labs.delete(build);
      throw err;
    });
    labs.set(build, p);
  }
  return labs.get(build);
}

function stats(samples) {
  const s = samples.slice().sort((a, b) => a - b);
  const q = (p) => {
    const x = (s.length - 1) * p;
    const lo = Math.floor(x), hi = Math.ceil(x);
    return s[lo] + (s[hi] - s[lo]) * (x - lo);
  };
  return { median: q(0.5), min: s[0], max: s[s.length - 1], q1: q(0.25), q3: q(0.75), samples: s.length };
}

/**
 * Median time of one call: a warm-up call, then samples until the budget is spent. Calls faster
 * than 1 ms are batched so the timer's resolution does not dominate.
 */
function timeCalls(lab, id, inputs, options, { budgetMs = 80, minSamples = 3, maxSamples = 25 } = {}) {
  let t = performance.now();
  lab.attention(id, inputs, options);
  const first = performance.now() - t;
  if (first * minSamples > 4 * budgetMs && first > 200) {
    return { ...stats([first]), batch: 1, calls: 1, warm: false };
  }
  const batch = first < 1 ? Math.min(2000, Math.max(1, Math.ceil(1 / Math.max(first, 0.002)))) : 1;
  const samples = [];
  const start = performance.now();
  while (samples.length < maxSamples && (samples.length < minSamples || performance.now() - start < budgetMs)) {
    t = performance.now();
    for (let r = 0; r < batch; r++) lab.attention(id, inputs, options);
    samples.push((performance.now() - t) / batch);
    if (samples.length >= 1 && samples[0] * minSamples > 4 * budgetMs) break;
  }
  return { ...stats(samples), batch, calls: 1 + samples.length * batch, warm: true };
}

/**
 * timeCalls for the WebGPU instance, whose calls return Promises: a first call, which is not a
 * sample (when it compiled pipelines, its time is reported as compileMs: compiling shaders),
 * then samples of one awaited call each (upload, kernels and read-back: what a caller waits for).
 */
async function timeGpuCalls(gpu, id, inputs, options, { budgetMs = 80, minSamples = 3, maxSamples = 25 } = {}) {
  const compiledBefore = gpu.pipelinesCompiled;
  let t = performance.now();
  await gpu.attention(id, inputs, options);
  const firstMs = performance.now() - t;
  const compileMs = gpu.pipelinesCompiled > compiledBefore ? firstMs : null;
  const samples = [], kernels = [];
  const start = performance.now();
  while (samples.length < maxSamples && (samples.length < minSamples || performance.now() - start < budgetMs)) {
    t = performance.now();
    await gpu.attention(id, inputs, options);
    samples.push(performance.now() - t);
    if (gpu.gpuTime != null) kernels.push(gpu.gpuTime);
    if (samples[0] * minSamples > 4 * budgetMs) break;
  }
  // the kernels' own time, where timestamp-query tells it (the median of the samples')
  const gpuMs = kernels.length === samples.length ? stats(kernels).median : null;
  return { ...stats(samples), batch: 1, calls: 1 + samples.length, warm: true, compileMs, gpuMs };
}

async function run(msg) {
  const lab = await getLab(msg.build ?? 'auto');
  const compiledBefore = lab.gpu?.pipelinesCompiled;
  const started = performance.now();
  const info = lab.variants.find((v) => v.id === msg.variant);
  const opts = { ...msg.options };
  delete opts.weights;
  // linear variants also hand back the state and normaliser they compute instead of A
  const wantState = !!msg.extras && (info?.options ?? []).includes('state');
  const first = await lab.attention(msg.variant, msg.inputs, { ...opts, weights: !!msg.weights, ...(wantState ? { state: true } : {}) });
  // WebGPU: a call that compiled pipelines waited for the shader compiler (reported as that)
  const firstCompiledMs = lab.gpu && lab.gpu.pipelinesCompiled > compiledBefore ? performance.now() - started : null;
  const reply = { output: first.output, build: lab.build, simd: lab.simd, adapter: lab.adapter ?? null };
  const transfer = [first.output.buffer];
  if (first.weights) {
    reply.weights = first.weights;
    transfer.push(first.weights.buffer);
  }
  if (msg.timing) {
    reply.timing = lab.gpu ? await timeGpuCalls(lab.gpu, msg.variant, msg.inputs, { ...opts, weights: false }, msg.timing)
      : timeCalls(lab, msg.variant, msg.inputs, { ...opts, weights: false }, msg.timing);
    if (firstCompiledMs != null) reply.timing.compileMs = firstCompiledMs + (reply.timing.compileMs ?? 0);
  }
  if (wantState) {
    reply.intermediates = intermediates(msg.variant, first, { n: msg.inputs.n, d: msg.inputs.d, dv: msg.inputs.dv });
    for (const m of reply.intermediates) transfer.push(m.data.buffer);
  }
  return { reply, transfer };
}

async function scale(msg, post) {
  const { plan } = msg;
  const base = await getLab('auto');
  const byId = Object.fromEntries(base.variants.map((v) => [v.id, v]));
  const stopped = new Map(); // `${variant}/${build}` -> reason
  for (const n of plan.ns) {
    for (const v of plan.variants) {
      const info = byId[v.id];
      if (!info) continue;
      let req = null;
      let reqError = null;
      for (const build of plan.builds) {
        const key = `${v.id}/${build}`;
        const point = { n, variant: v.id, build };
        if (stopped.has(key)) {
          post({ type: 'progress', point: { ...point, skipped: stopped.get(key) } });
          continue;
        }
        if (build !== 'webgpu' && n > WASM_MAX_N) {
          post({ type: 'progress', point: { ...point, skipped: `n > ${WASM_MAX_N} is timed on WebGPU only` } });
          continue;
        }
        try {
          if (!req && !reqError) {
            const dimsState = { n, d: plan.d, dv: plan.dv };
            const probe = buildRequest({ id: v.id, dimsState, seed: plan.seed, preset: 'random', edits: null, opts: v.opts, causal: plan.causal }, byId);
            const values = Object.values(probe.inputs).reduce((s, a) => s + (a && a.length ? a.length : 0), 0);
            if (values > MAX_INPUT_VALUES) reqError = `inputs too large (${Math.round((values * 4) / 2 ** 20)} MB)`;
            else req = probe;
          }
          if (reqError) {
            stopped.set(key, reqError);
            post({ type: 'progress', point: { ...point, skipped: reqError } });
            continue;
          }
          const lab = await getLab(build);
          const budget = { budgetMs: 150, minSamples: 3, maxSamples: 15 };
          const timing = lab.gpu ? await timeGpuCalls(lab.gpu, v.id, req.inputs, { ...req.options, weights: false }, budget)
            : timeCalls(lab, v.id, req.inputs, { ...req.options, weights: false }, budget);
          point.timing = timing;
          point.actualBuild = lab.build;
          point.dims = req.dims;
          point.options = req.options;
          if (timing.median > SLOW_MS) stopped.set(key, `stopped after n = ${n}: ${Math.round(timing.median)} ms per call`);
        } catch (err) {
          point.error = errorOf(err);
          stopped.set(key, `stopped after an error at n = ${n}: ${point.error.code}`);
        }
        post({ type: 'progress', point });
      }
    }
  }
  return { reply: { done: true }, transfer: [] };
}

function threadsWhy(threads) {
  if (threads > 1) return `cross-origin isolated: ${threads} threads share one WebAssembly memory`;
  if (!globalThis.crossOriginIsolated) {
    return 'one thread: the page is not cross-origin isolated (its server must send Cross-Origin-Opener-Policy: same-origin ' +
      'and Cross-Origin-Embedder-Policy: require-corp)';
  }
  if ((navigator.hardwareConcurrency ?? 1) <= 1) return 'one thread: this machine reports one core';
  return 'one thread: the threaded module or its workers could not start here (the single-threaded module runs)';
}

async function hello(msg) {
  const mod = await loadBinding();
  const lab = await getLab(msg.build ?? 'auto');
  let features = null;
  try {
    features = mod.features ? mod.features() : null;
  } catch {
    features = null;
  }
  return {
    reply: {
      build: lab.build, simd: lab.simd, version: lab.version ?? mod.version, features,
      // how many threads split each call, and why not more (README, "Threads")
      threads: lab.threads ?? 1, threadsWhy: threadsWhy(lab.threads ?? 1),
      // the registry, as plain data: what the page builds its controls and forms from
      ...JSON.parse(JSON.stringify({ variants: lab.variants, options: lab.options ?? {}, dims: lab.dims ?? null })),
    },
    transfer: [],
  };
}

// Whether the WebGPU build runs here: its instance made once (the Build menu offers it, or says why not).
async function webgpu() {
  try {
    const lab = await getLab('webgpu');
    return { reply: { available: true, adapter: lab.adapter }, transfer: [] };
  } catch (err) {
    return { reply: { available: false, why: errorOf(err).message }, transfer: [] };
  }
}

// Requests are handled one at a time, in order (worker-host.js).
serve({ hello, run, scale, webgpu });
