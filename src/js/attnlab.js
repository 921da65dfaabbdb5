// attnlab — the JavaScript binding of the attnlab WebAssembly core.
//
//   import { init } from 'attnlab';
//   const lab = await init();
//   const { output, weights } = lab.attention('softmax', { n, d, dv, q, k, v }, { weights: true });
//
// Nothing runs at import time. init() loads one of three modules, cached per build and thread
// count:
//   relaxed  SIMD128 + relaxed-SIMD fused multiply-add (engines that validate it)
//   simd     SIMD128
//   scalar   no SIMD
// each single-threaded, or threaded (attnlab-*-threads.wasm: one instance per thread on a shared
// memory, with workers started by pool.js; docs/contract.md, "Threads"). Choosing, finding and
// starting the module is loader.js's; this file is init()'s cache and the instance.
// The module allocates nothing itself: every call lays its buffers out above the module's static
// data (inputs, output, weights, workspace), grows memory when a call needs more than any call
// before it, and copies the results out into fresh Float32Arrays.

import { AttnError, STATUS_CODES, align, describe, overflowError } from './errors.js';
import { CHECK_CALL, PLANS_MADE } from './internal.js';
import { parseMetadata, describeOptions, describeDims } from './registry.js';
import { Heap, MAX_MEMORY } from './heap.js';
import { Options } from './options.js';
import { Model } from './model.js';
import { train } from './train.js';
import { features, chooseBuild, chooseThreads, load } from './loader.js';
import { readDims, arraySpecs, readArrays, checkKeepAlone, nonFinite, checkFiniteInJs } from './inputs.js';

export { AttnError, features };

export { tasks } from './tasks.js'; // loadCorpus: the subpath 'attnlab/corpus' (src/js/corpus.js)
export { evaluateHeldOut } from './train.js';
export const version = '0.1.0';

// The control block of one call, at the start of the binding's memory: attn_dims, attn_inputs (an
// array of pointers in ATTN_INPUT_LIST order), attn_options (fields in optionFields order), the
// detail pointer, and the attn_plan. Field orders come from the module's metadata.
const DIMS_OFFSET = 0;
const INPUTS_OFFSET = 64;
const OPTIONS_OFFSET = 160;
const DETAIL_OFFSET = 320;
const PLAN_OFFSET = 384;
// After the call's structs, a scratch area where models are measured and checked before any of
// their memory is allocated (src/js/model.js): an attn_model_config, results, an attn_model_param.
const MODEL_SCRATCH_BYTES = 512;
const WANT_WEIGHTS = 1; // attnlab.h ATTN_WANT_*
const WANT_STATE = 2;
const WANT_GRADS = 4;
const WANT_KEPT = 8;

const cache = new Map();

// A threaded instance dropped without dispose() (init({ fresh: true }), then forgotten) would keep
// its workers, and through them its memory, alive for as long as the page or process runs. The
// held value is the pool's stop(), which must not reach the instance, or it would never be
// collected.
const pools = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((stop) => stop()) : null;

// For tests only, and not part of the API: lab[INTERNAL] reaches the module's exports (wrapped as
// the instance's own calls are) and its memory, to drive the pool's test exports
// (attn_threads_probe, attn_threads_canary; attnlab.h).
const INTERNAL = Symbol.for('attnlab.internal');

/**
 * Loads (once per build, cached) and returns an attnlab instance.
 *
 * The cached instance is shared by every init() caller of that build: dispose() on it ends it for
 * all of them (their next call throws DISPOSED). Code that wants to dispose of its instance
 * without affecting anyone else asks for its own with init({ fresh: true }).
 * threads: 'auto' (the default: the cores available, up to 8, where this thread may lead a pool,
 * else 1) or a number N >= 1; N > 1 where threads cannot run (a browser's main thread, a page that
 * is not cross-origin isolated) throws UNSUPPORTED saying why. lab.threads says how many run.
 * @param {{ simd?: 'auto' | 'relaxed' | boolean, threads?: 'auto' | number,
 *           wasmBinary?: ArrayBuffer | Uint8Array,
 *           locateFile?: (file: string) => string | URL, fresh?: boolean }} [options]
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    return Promise.reject(new AttnError('UNKNOWN', 'init() takes an options object'));
  }
  for (const key of Object.keys(options)) {
    if (!['simd', 'threads', 'wasmBinary', 'locateFile', 'fresh'].includes(key)) {
      return Promise.reject(new AttnError('UNKNOWN',
        `unknown init option "${key}"; expected simd, threads, wasmBinary, locateFile or fresh`));
    }
  }
  if (options.fresh !== undefined && typeof options.fresh !== 'boolean') {
    return Promise.reject(new AttnError('VALUE', `fresh must be true or false, got ${describe(options.fresh)}`));
  }
  if (options.locateFile !== undefined && typeof options.locateFile !== 'function') {
    return Promise.reject(new AttnError('VALUE', `locateFile must be a function (file name -> URL or path), got ${describe(options.locateFile)}`));
  }
  const bytes = options.wasmBinary;
  if (bytes !== undefined && !(bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes))) {
    return Promise.reject(new AttnError('VALUE', `wasmBinary must be an ArrayBuffer or a Uint8Array, got ${describe(bytes)}`));
  }
  let build, threads;
  try {
    build = chooseBuild(options.simd);
    threads = chooseThreads(options.threads);
  } catch (err) {
    return Promise.reject(err);
  }
  // Overrides name a particular file or bytes, so they get an instance of their own, as does fresh.
  const cacheable = !options.fresh && options.wasmBinary === undefined && options.locateFile === undefined;
  const auto = options.threads === undefined || options.threads === 'auto';
  // 'auto' has a key of its own: it may end up on one thread, which an explicit threads: N must
  // never be handed from the cache
  const key = `${build}:${auto ? 'auto' : threads}`;
  if (cacheable && cache.has(key)) return cache.get(key);
  const forget = () => { if (cache.get(key) === pending) cache.delete(key); };
  // threads 'auto' never fails for want of threads: whatever stops the threaded module (its file
  // missing or unknown to locateFile, shared memory refused, workers that cannot start, say a
  // bundle that left pool-worker.js out), the single-threaded module runs instead.
  const pending = load(build, threads, options)
    .catch((err) => (auto && threads > 1 && err?.code === 'LOAD' ? load(build, 1, options) : Promise.reject(err)))
    .then((loaded) => new Instance(loaded.exports, forget, loaded));
  if (cacheable) {
    cache.set(key, pending);
    pending.catch(() => cache.delete(key)); // a failed load may succeed on a later call
  }
  return pending;
}

/* ---- the instance ---- */

// An instance is three concerns: its memory (heap.js: views, strings, growth, the blocks models
// keep), its attention options (options.js: read from the caller, written for the core), and
// here the calls: each lays its dims and options into the control block, plans, lays its arrays
// out above the models' blocks, runs and copies the results out. Models see the small ModelHost
// interface (#host; src/js/model.js).
class Instance {
  #exports;
  #heap;
  #meta;
  #byId;
  #options; // the attention options' reader and writer
  #heapBase;
  #controlBytes;
  #modelScratch; // offset of the models' scratch area in the control block
  #gradsOffset; // attn_grads: one pointer per input field, then alpha
  #host = null; // what models may use of this instance (src/js/model.js's ModelHost)
  #onDispose;
  #pool;
  #broken = null; // why the instance cannot run any more (BROKEN), once a threaded call trapped

  constructor(exports, onDispose, { memory = exports.memory, pool = null, threads = 1, reserved = 0 } = {}) {
    this.#exports = pool ? this.#guard(exports) : exports;
    this.#heap = new Heap(memory);
    this.#onDispose = onDispose;
    this.#pool = pool;
    if (pool) pools?.register(this, pool.stop, this);
    if (typeof exports._initialize === 'function') exports._initialize(); // static constructors
    // above the static data (and, threaded, the workers' stacks)
    this.#heapBase = align(align(exports.attn_heap_base() >>> 0, 64) + reserved, 64);
    this.#meta = parseMetadata(this.#heap.cString(exports.attn_metadata_json()));
    this.#gradsOffset = align(PLAN_OFFSET + exports.attn_plan_size(), 16);
    this.#byId = new Map(this.#meta.variants.map((v, index) => [v.id, { ...v, index }]));
    this.#options = new Options({ meta: this.#meta, byId: this.#byId, heap: this.#heap, exports: () => this.#exports });
    this.#modelScratch = align(this.#gradsOffset + 4 * (this.#meta.inputFields.length + 1), 64);
    this.#controlBytes = this.#modelScratch + MODEL_SCRATCH_BYTES;
    this.#heap.reserve(this.#heapBase + this.#controlBytes, 'the control block'); // once, so no later check grows memory
    // What the module says it is: wasmBinary may hold another build than the one asked for.
    this.build = this.#meta.fma ? 'relaxed' : this.#meta.simd ? 'simd' : 'scalar';
    this.simd = this.build !== 'scalar';
    this.threads = threads;
    this.version = version;
    this.variants = Object.freeze(this.#meta.variants);
    this.options = describeOptions(this.#meta);
    this.dims = describeDims(this.#meta);
    this.#checkLayout();
    Object.defineProperty(this, INTERNAL, {
      value: Object.freeze({
        exports: () => { this.#alive(); return this.#exports; },
        memory: () => { this.#alive(); return this.#heap.memory; },
      }),
    });
    Object.freeze(this);
  }

  // The exports of a threaded instance, each call of which turns a trap into BROKEN: every entry
  // point (attention, attentionGrad, the models through #host) calls the module through here.
  // A trap in a threaded call leaves the pool mid-job (a worker gone, or the leader's job never
  // closed), so the instance is never called again. RangeError is the engine's own stack running
  // out inside WebAssembly, which unwinds the same way; any other error (a binding bug passing a
  // bad argument) is thrown before WebAssembly runs and leaves the instance as it was.
  #guard(raw) {
    const guarded = {};
    for (const [name, value] of Object.entries(raw)) {
      guarded[name] = typeof value !== 'function' ? value : (...args) => {
        if (this.#broken) throw new AttnError('BROKEN', this.#broken);
        try {
          return value(...args);
        } catch (err) {
          if (err instanceof WebAssembly.RuntimeError || err instanceof RangeError) throw this.#break(raw, err);
          throw err;
        }
      };
    }
    return Object.freeze(guarded);
  }

  // Marks the instance broken, stops its workers and drops it from init()'s cache; returns the
  // error every call from now on throws.
  #break(raw, err) {
    let failed = 0;
    try {
      failed = raw.attn_threads_failed(); // attnlab.h ATTN_THREADS_FAILED_*
      raw.attn_threads_fail(); // the workers still in the job take no more pieces
    } catch { /* the failure stays described by err */ }
    const thread = failed >> 8;
    const why = failed === 1 ? 'a worker thread failed (trapped in WebAssembly) while running its part of the call'
      : (failed & 0xff) === 2 ? `the stack of ${thread === 0 ? 'the calling thread' : `worker thread ${thread}`} overflowed ` +
        '(its canary was overwritten) during the call'
        : `the call trapped in WebAssembly on the calling thread (${err?.name}: ${err?.message})`;
    this.#broken = `this attnlab instance is broken: ${why}. Its threads are stopped and it cannot run ` +
      'any more calls; init({ fresh: true }) gives a new instance (init() no longer returns this one), ' +
      'and dispose() releases this one';
    this.#stopPool();
    this.#onDispose();
    return new AttnError('BROKEN', this.#broken);
  }

  #stopPool() {
    if (!this.#pool) return;
    pools?.unregister(this);
    this.#pool.stop(); // the workers end; the shared memory goes with the last reference
    this.#pool = null;
  }

  /**
   * A small transformer whose attention is one variant, trained in WebAssembly memory that this
   * instance holds until model.dispose(); docs/model.md.
   */
  model(config) {
    this.#alive();
    return new Model(this.#modelHost(), config);
  }

  /**
   * Trains a model on a task (lab.tasks / the tasks export) with warmup and cosine decay,
   * evaluating on a fixed held-out set every evalEvery steps; onProgress, AbortSignal; src/js/train.js.
   */
  train(model, task, options) {
    this.#alive();
    return train(model, task, options);
  }

  /**
   * A model from model.save()'s bytes: its configuration, parameters and optimizer state
   * ({ resetOptimizer: true }: the parameters only, step 0 and fresh AdamW moments, to fine-tune).
   */
  loadModel(bytes, options) {
    this.#alive();
    return Model.load(this.#modelHost(), bytes, options);
  }

  // What src/js/model.js may use of this instance (its ModelHost): the memory, the options, the
  // registry, and the module's exports with the control block's two areas models use.
  #modelHost() {
    this.#host ??= Object.freeze({
      heap: this.#heap,
      options: this.#options,
      meta: this.#meta,
      variant: (id) => this.#byId.get(id),
      exports: () => { this.#alive(); return this.#exports; },
      detailPtr: () => this.#heapBase + DETAIL_OFFSET,
      modelScratch: () => this.#heapBase + this.#modelScratch,
    });
    return this.#host;
  }

  /** Bytes of WebAssembly memory held now. */
  memoryBytes() {
    this.#alive();
    return this.#heap.byteLength;
  }

  dispose() {
    if (!this.#exports) return;
    this.#stopPool();
    this.#exports = null;
    this.#heap.dispose();
    this.#onDispose();
  }

  /**
   * Runs one variant; docs/contract.md gives the math, the inputs and the options. With keep: true
   * the result also has lse (softmax-type variants) and backward(dOutput), the backward pass from
   * this forward pass (docs/contract.md, "Gradients").
   * @returns {{ output: Float32Array, weights?: Float32Array, state?: Float32Array, normalizer?: Float32Array,
   *             lse?: Float32Array, backward?: (dOutput: ArrayLike<number>) => { output: Float32Array, grads: Record<string, Float32Array> } }}
   */
  attention(id, inputs, options = {}) {
    const { variant, opt, dims, arrays } = this.#read(id, inputs, options);
    if (opt.keep) return this.#attentionKept(variant, opt, dims, arrays);
    this.#alive(); // reading the inputs ran the caller's getters, which may have disposed of this instance
    this.#writeControl(dims, opt);
    const flags = (opt.weights ? WANT_WEIGHTS : 0) | (opt.state ? WANT_STATE : 0);
    const { wsBytes, stateWidth } = this.#plan(variant, dims, opt, flags);
    const n = dims.n;
    const outputs = [{ name: 'output', count: n * dims.dv, cols: dims.dv }];
    if (opt.weights) outputs.push({ name: 'weights', count: n * n, cols: n });
    if (opt.state) outputs.push({ name: 'state', count: stateWidth * dims.dv, cols: dims.dv });
    if (opt.state && variant.keepsNormalizer) outputs.push({ name: 'normalizer', count: stateWidth, cols: stateWidth });
    const base = this.#heapBase;
    return this.#execute(variant, dims, opt, wsBytes, arrays, outputs, (at, wsOffset) =>
      this.#exports.attn_plan_run(base + PLAN_OFFSET, base + INPUTS_OFFSET, at.output,
        at.weights ?? 0, at.state ?? 0, at.normalizer ?? 0, wsOffset, wsBytes, base + DETAIL_OFFSET));
  }

  /**
   * The backward pass: output y and the gradient of sum(dOutput * y) with respect to every array
   * the variant reads (and alpha or alphaLogits for a mixture); docs/contract.md, "Gradients".
   * @returns {{ output: Float32Array, grads: Record<string, Float32Array> }}
   */
  attentionGrad(id, inputs, dOutput, options = {}) {
    const { variant, opt, parts, dims, arrays } = this.#read(id, inputs, options);
    for (const flag of ['weights', 'state']) {
      if (opt[flag]) {
        throw new AttnError('UNSUPPORTED', `option "${flag}" does not apply to attentionGrad, which returns output and grads; call attention() for ${flag}`);
      }
    }
    if (opt.keep) {
      throw new AttnError('UNSUPPORTED', 'option "keep" does not apply to attentionGrad, which runs its own forward pass; ' +
        'call attention() with keep: true, then result.backward(dOutput)');
    }
    const [dout] = readArrays([{ name: 'dOutput', shape: ['n', 'dv'] }], { dOutput }, dims, new Set(['dOutput']), parts);
    this.#alive(); // reading the inputs ran the caller's getters, which may have disposed of this instance
    this.#writeControl(dims, opt);
    const { wsBytes } = this.#plan(variant, dims, opt, WANT_GRADS);
    const base = this.#heapBase;
    const outputs = [{ name: 'output', count: dims.n * dims.dv, cols: dims.dv }];
    return this.#gradients(variant, opt, dims, wsBytes, [...arrays, dout], arrays, outputs, (at, wsOffset) =>
      this.#exports.attn_plan_backward(base + PLAN_OFFSET, base + INPUTS_OFFSET, at['input:dOutput'],
        at.output, base + this.#gradsOffset, wsOffset, wsBytes, base + DETAIL_OFFSET));
  }

  // A backward pass: a gradient output per array the variant reads (and alpha or alphaLogits for a
  // mixture), their pointers written into the attn_grads block, then call(at, wsOffset).
  #gradients(variant, opt, dims, wsBytes, laid, arrays, outputs, call) {
    for (const a of arrays) outputs.push({ name: a.name, count: a.count, cols: a.cols, grad: true });
    const alphaName = opt.components ? (opt.alphaLogits ? 'alphaLogits' : 'alpha') : null;
    if (alphaName) outputs.push({ name: alphaName, count: opt.components.length, cols: opt.components.length, grad: true });
    const base = this.#heapBase;
    const result = this.#execute(variant, dims, opt, wsBytes, laid, outputs, (at, wsOffset) => {
      const u32 = this.#heap.u32();
      const grads = (base + this.#gradsOffset) >>> 2;
      this.#meta.inputFields.forEach((name, i) => { u32[grads + i] = at[`grad:${name}`] ?? 0; });
      u32[grads + this.#meta.inputFields.length] = alphaName ? at[`grad:${alphaName}`] : 0;
      return call(at, wsOffset);
    });
    const grads = {};
    for (const o of outputs) if (o.grad) grads[o.name] = result[`grad:${o.name}`];
    return { output: result.output, grads };
  }

  // attention() with keep: true. The forward pass keeps y and, for softmax-type variants, each
  // row's log-sum-exp, for the recurrent family the state's checkpoints (attn_plan_run_kept: the
  // plan's keptFloats); the result's backward(dOutput) runs the backward pass from them
  // (attn_plan_backward_kept: attentionGrad's gradients, bit for bit, without its forward pass).
  // What backward needs lives in JavaScript memory, in copies of the binding's own made after the
  // run (the inputs as the core read them, y and the kept array), and is copied in again by
  // each backward call: nothing stays in WebAssembly memory, so there is nothing to dispose of and
  // later calls cannot change it, nor can changes to the returned arrays. The variant, dims,
  // options and inputs travel with the result, so backward cannot be handed another variant's or
  // shape's forward pass; it throws DISPOSED once the instance is disposed.
  #attentionKept(variant, opt, dims, arrays) {
    checkKeepAlone(opt);
    this.#alive(); // reading the inputs ran the caller's getters, which may have disposed of this instance
    this.#writeControl(dims, opt);
    const { wsBytes, keptFloats } = this.#plan(variant, dims, opt, WANT_KEPT);
    const outputs = [{ name: 'output', count: dims.n * dims.dv, cols: dims.dv }];
    // lse is the result's (softmax-type variants); the recurrent family's checkpoints stay inside
    const keptName = variant.keepsLse ? 'lse' : 'checkpoints';
    if (keptFloats) outputs.push({ name: keptName, count: keptFloats, cols: variant.keepsLse ? 1 : dims.dv });
    const base = this.#heapBase;
    const result = this.#execute(variant, dims, opt, wsBytes, arrays, outputs, (at, wsOffset) =>
      this.#exports.attn_plan_run_kept(base + PLAN_OFFSET, base + INPUTS_OFFSET, at.output, at[keptName] ?? 0,
        wsOffset, wsBytes, base + DETAIL_OFFSET));
    const heap = this.#heap.f32();
    const copy = (a, data) => ({ name: a.name, shape: a.shape, count: a.count, cols: a.cols, data });
    const kept = {
      variant, opt, dims,
      arrays: arrays.map((a) => copy(a, heap.slice(a.offset >>> 2, (a.offset >>> 2) + a.count))),
      y: copy({ name: 'output', shape: ['n', 'dv'], count: dims.n * dims.dv, cols: dims.dv }, result.output.slice()),
      kept: keptFloats ? copy({ name: 'kept', shape: [String(keptFloats)], count: keptFloats, cols: 1 }, result[keptName].slice()) : null,
    };
    if (!variant.keepsLse) delete result[keptName];
    result.backward = (dOutput) => this.#backwardKept(kept, dOutput);
    return result;
  }

  // result.backward(dOutput) of a kept forward pass: { output, grads } as attentionGrad gives them.
  #backwardKept(kept, dOutput) {
    this.#alive();
    const { variant, opt, dims } = kept;
    const parts = opt.components ? opt.components.map((c) => this.#byId.get(c)) : [variant];
    const [dout] = readArrays([{ name: 'dOutput', shape: ['n', 'dv'] }], { dOutput }, dims, new Set(['dOutput']), parts);
    this.#alive(); // reading dOutput may have run the caller's getters
    this.#writeControl(dims, opt);
    const { wsBytes } = this.#plan(variant, dims, opt, WANT_KEPT);
    const base = this.#heapBase;
    const laid = [...kept.arrays, dout, kept.y, ...(kept.kept ? [kept.kept] : [])];
    const outputs = []; // y is the kept one: no output of the call's own
    const result = this.#gradients(variant, opt, dims, wsBytes, laid, kept.arrays, outputs, (at, wsOffset) =>
      this.#exports.attn_plan_backward_kept(base + PLAN_OFFSET, base + INPUTS_OFFSET, at['input:dOutput'],
        at['input:output'], at['input:kept'] ?? 0, base + this.#gradsOffset, wsOffset, wsBytes, base + DETAIL_OFFSET));
    return { output: kept.y.data.slice(), grads: result.grads };
  }

  // The attention plans this instance has made so far (src/js/internal.js): a model makes its
  // heads' plans when it is made, and no step makes one after.
  [PLANS_MADE]() {
    this.#alive();
    return this.#exports.attn_plans_made() >>> 0;
  }

  // attention()'s reading and checks of a call, without the run (src/js/internal.js): the variant,
  // options and dims as read, the plan's verdict on them, and the arrays as finite float32 (the
  // caller's own Float32Arrays, not copies: read them before control returns to the caller).
  [CHECK_CALL](id, inputs, options) {
    const { variant, opt, dims, arrays } = this.#read(id, inputs, options);
    if (opt.keep) checkKeepAlone(opt);
    this.#alive(); // reading the inputs ran the caller's getters, which may have disposed of this instance
    this.#writeControl(dims, opt);
    const flags = opt.keep ? WANT_KEPT : (opt.weights ? WANT_WEIGHTS : 0) | (opt.state ? WANT_STATE : 0);
    const { stateWidth } = this.#plan(variant, dims, opt, flags);
    checkFiniteInJs(arrays);
    const float32 = (a) => (a.data instanceof Float32Array ? a.data : Float32Array.from(a.data));
    return { variant, opt, dims, stateWidth, arrays: arrays.map((a) => ({ name: a.name, shape: a.shape, count: a.count, cols: a.cols, data: float32(a) })) };
  }

  // The keys of inputs, each a dimension or an array some variant reads: a name no variant reads
  // (a typo such as kk) is an error, while x passed to softmax is not, so that one inputs object
  // can drive several variants.
  #inputNames(inputs) {
    const keys = Object.keys(inputs);
    const known = new Set([...this.#meta.dimFields, ...this.#meta.inputFields]);
    for (const key of keys) {
      if (!known.has(key)) {
        throw new AttnError('UNKNOWN', `unknown input "${key}"; inputs are the dimensions ` +
          `${this.#meta.dimFields.join(', ')} and the arrays ${this.#meta.inputFields.join(', ')}`);
      }
    }
    return new Set(keys);
  }

  // The variant, the options, the dimensions and the arrays of one call, each read exactly once
  // into the binding's own copies before anything shared is written: a getter or proxy that runs
  // meanwhile (even one that calls attention() again) can neither change this call nor be
  // changed by it.
  #read(id, inputs, options) {
    this.#alive();
    const variant = this.#byId.get(id);
    if (!variant) {
      throw new AttnError('UNKNOWN', `unknown variant ${describe(id)}; expected one of ` +
        `${this.#meta.variants.map((v) => v.id).join(', ')}`);
    }
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
      throw new AttnError('SHAPE', `inputs must be an object like { n, d, dv, q, k, v }, got ${describe(inputs)}`);
    }
    if (options === undefined || options === null) options = {};
    if (typeof options !== 'object' || Array.isArray(options)) {
      throw new AttnError('VALUE', `options must be an object, got ${describe(options)}`);
    }
    const opt = this.#options.read(variant, options);
    const parts = opt.components ? opt.components.map((c) => this.#byId.get(c)) : [variant];
    const names = this.#inputNames(inputs);
    const dims = readDims(parts, inputs, this.#meta);
    const arrays = readArrays(arraySpecs(parts), inputs, dims, names, parts);
    return { variant, opt, parts, dims, arrays };
  }

  #alive() {
    if (!this.#exports) {
      throw new AttnError('DISPOSED', 'this attnlab instance was disposed; call init() again for a new one');
    }
    if (this.#broken) throw new AttnError('BROKEN', this.#broken);
  }

  // Writes dims and options where attnlab.h's lists put them.
  #writeControl(dims, opt) {
    const base = this.#heapBase;
    const i32 = this.#heap.i32();
    i32.fill(0, base >>> 2, (base + this.#controlBytes) >>> 2);
    this.#meta.dimFields.forEach((name, i) => { i32[((base + DIMS_OFFSET) >>> 2) + i] = dims[name] ?? 0; });
    this.#options.writeAt(base + OPTIONS_OFFSET, opt);
  }

  // attn_plan_make: the core's one validation of the call, and its workspace size.
  #plan(variant, dims, opt, flags) {
    const base = this.#heapBase;
    const status = this.#exports.attn_plan_make(variant.index, base + DIMS_OFFSET, base + OPTIONS_OFFSET,
      flags, base + PLAN_OFFSET, base + DETAIL_OFFSET);
    if (status === 5) return { wsBytes: Infinity, stateWidth: 0, keptFloats: 0 }; // reported with the sizes below
    if (status !== 0) this.#fail(status, dims, opt);
    return {
      wsBytes: this.#exports.attn_plan_workspace_bytes(base + PLAN_OFFSET) >>> 0,
      stateWidth: this.#exports.attn_plan_state_width(base + PLAN_OFFSET),
      keptFloats: this.#exports.attn_plan_kept_floats(base + PLAN_OFFSET),
    };
  }

  #fail(status, dims, opt) {
    const detail = this.#heap.cString(this.#heap.u32()[(this.#heapBase + DETAIL_OFFSET) >>> 2]);
    const shown = Object.entries(dims).map(([k, v]) => `${k} = ${v}`);
    if (opt?.pattern !== undefined && /pattern/.test(detail)) shown.push(`pattern "${opt.pattern}"`);
    for (const w of ['alpha', 'alphaLogits']) if (opt?.[w] && /alpha/.test(detail)) shown.push(`${w} [${opt[w].join(', ')}]`);
    throw new AttnError(STATUS_CODES[status] ?? 'VALUE', `${detail} (${shown.join(', ')})`);
  }

  // Lays a call out above the control block (inputs, then outputs, then the workspace; 64-byte
  // aligned), grows memory if it must (after checking the inputs: a rejected call never grows
  // it), copies the inputs in, runs call(offsets, wsOffset) and copies the outputs out, each
  // checked for NaN and infinities (finite inputs can still overflow an intermediate).
  #execute(variant, dims, opt, wsBytes, arrays, outputs, call) {
    const e = this.#exports;
    const base = this.#heapBase;
    let cursor = this.#heap.scratchBase();
    const place = (count) => {
      const at = cursor;
      cursor = align(cursor + count * 4, 64);
      return at;
    };
    const at = {};
    for (const a of arrays) a.offset = at[`input:${a.name}`] = place(a.count);
    for (const o of outputs) o.offset = at[o.grad ? `grad:${o.name}` : o.name] = place(o.count);
    const wsOffset = cursor;
    const end = cursor + wsBytes;
    if (!(end <= MAX_MEMORY)) {
      const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
      const inputBytes = arrays.reduce((s, a) => s + a.count * 4, 0);
      const parts = [`inputs ${gb(inputBytes)}`, ...outputs.filter((o) => !o.grad).map((o) => `${o.name} ${gb(o.count * 4)}`)];
      if (outputs.some((o) => o.grad)) parts.push(`gradients ${gb(outputs.filter((o) => o.grad).reduce((s, o) => s + o.count * 4, 0))}`);
      if (Number.isFinite(wsBytes)) parts.push(`workspace ${gb(wsBytes)}`);
      throw new AttnError('MEMORY', `${variant.id} with n = ${dims.n} needs ${Number.isFinite(end) ? gb(end) : 'more than 4 GiB'} ` +
        `(${parts.join(', ')}), more than WebAssembly's 4 GiB memory` +
        (opt.weights ? '; request weights only for small n' : '; use a smaller n'));
    }
    if (end > this.#heap.byteLength) {
      checkFiniteInJs(arrays); // a call that fails must not grow memory, so check before growing
      try {
        this.#heap.growTo(end);
      } catch (err) {
        throw new AttnError('MEMORY', `${variant.id} with n = ${dims.n} needs ${(end / 2 ** 20).toFixed(0)} MiB of ` +
          `WebAssembly memory and the engine refused to grow it (${err.message})`);
      }
    }
    const f32 = this.#heap.f32();
    const u32 = this.#heap.u32();
    this.#meta.inputFields.forEach((name, i) => { u32[((base + INPUTS_OFFSET) >>> 2) + i] = at[`input:${name}`] ?? 0; });
    for (const a of arrays) {
      f32.set(a.data, a.offset >>> 2);
      const bad = Number(e.attn_find_nonfinite(a.offset, a.count));
      if (bad >= 0) throw nonFinite(a, bad, a.data[bad]);
    }
    const status = call(at, wsOffset);
    if (status !== 0) this.#fail(status, dims, opt);
    const result = {};
    for (const o of outputs) {
      const bad = Number(e.attn_find_nonfinite(o.offset, o.count));
      if (bad >= 0) throw overflowError(variant, opt, o.grad ? `the gradient of ${o.name}` : o.name, bad, o.cols, this.#heap.f32()[(o.offset >>> 2) + bad]);
      const heap = this.#heap.f32();
      result[o.grad ? `grad:${o.name}` : o.name] = heap.slice(o.offset >>> 2, (o.offset >>> 2) + o.count);
    }
    return result;
  }

  // attn_options_default() must fill what the metadata says the layout is: every NUMBER and INT
  // default lands in its field.
  #checkLayout() {
    const base = this.#heapBase;
    this.#exports.attn_options_default(base + OPTIONS_OFFSET);
    for (const o of this.#meta.options) {
      if (o.kind !== 'NUMBER' && o.kind !== 'INT') continue;
      const field = this.#meta.optionFields.get(o.field);
      const at = (base + OPTIONS_OFFSET + field.offset) >>> 2;
      const value = field.float ? this.#heap.f32()[at] : this.#heap.i32()[at];
      if (!field || Math.abs(value - o.default) > 1e-6 * Math.abs(o.default)) {
        throw new AttnError('LOAD', `the ${this.build} module's attn_options layout does not match this binding (${o.name})`);
      }
    }
    if (this.#meta.version !== version) {
      throw new AttnError('LOAD', `the ${this.build} module is version ${this.#meta.version}, the binding ${version}`);
    }
    if (this.#meta.optionsBytes > DETAIL_OFFSET - OPTIONS_OFFSET || this.#meta.dimFields.length * 4 > INPUTS_OFFSET ||
        this.#meta.inputFields.length * 4 > OPTIONS_OFFSET - INPUTS_OFFSET) {
      throw new AttnError('LOAD', `the ${this.build} module's structs do not fit this binding's control block`);
    }
  }
}
