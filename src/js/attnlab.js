// attnlab — the JavaScript binding of the attnlab WebAssembly core.
//
//   import { init } from 'attnlab';
//   const lab = await init();
//   const { output, weights } = lab.attention('softmax', { n, d, dv, q, k, v }, { weights: true });
//
// Nothing runs at import time. init() loads one of three modules, cached per build:
//   relaxed  SIMD128 + relaxed-SIMD fused multiply-add (engines that validate it)
//   simd     SIMD128
//   scalar   no SIMD
// The module allocates nothing itself: every call lays its buffers out above the module's static
// data (inputs, output, weights, workspace), grows memory when a call needs more than any call
// before it, and copies the results out into fresh Float32Arrays.

export const version = '0.1.0';

const BUILD_FILES = {
  relaxed: 'attnlab-relaxed.wasm',
  simd: 'attnlab-simd.wasm',
  scalar: 'attnlab-scalar.wasm',
};

/** Thrown for every bad input; `code` says which kind (SPEC §4). */
export class AttnError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'AttnError';
    this.code = code;
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

const STATUS_CODES = [null, 'SHAPE', 'VALUE', 'UNKNOWN', 'UNSUPPORTED', 'MEMORY'];
const PAGE = 65536;
const MAX_MEMORY = 4 * 1024 * 1024 * 1024; // wasm32, and the modules' declared maximum
const CONTROL_BYTES = 512; // dims, input pointers, options and out-parameters of one call
const DIMS_OFFSET = 0; // attn_dims: 8 x int32
const INPUTS_OFFSET = 64; // attn_inputs: 16 x pointer
const OPTIONS_OFFSET = 160; // attn_options: 25 x 4 bytes
const DETAIL_OFFSET = 320; // const char *
const WS_SIZE_OFFSET = 328; // size_t
const STATE_WIDTH_OFFSET = 336; // int32
const MAX_COMPONENTS = 8;
const COMMON_OPTIONS = ['causal', 'weights'];
const ALL_OPTIONS = ['causal', 'weights', 'state', 'scale', 'eps', 'tiling', 'components', 'alpha',
  'alphaLogits', 'pattern', 'window'];

const cache = new Map();

/**
 * Loads (once per build, cached) and returns an attnlab instance.
 * @param {{ simd?: 'auto' | 'relaxed' | boolean, wasmBinary?: ArrayBuffer | Uint8Array,
 *           locateFile?: (file: string) => string | URL }} [options]
 */
export function init(options = {}) {
  if (options === null || typeof options !== 'object') {
    return Promise.reject(new AttnError('UNKNOWN', 'init() takes an options object'));
  }
  for (const key of Object.keys(options)) {
    if (!['simd', 'wasmBinary', 'locateFile'].includes(key)) {
      return Promise.reject(new AttnError('UNKNOWN',
        `unknown init option "${key}"; expected simd, wasmBinary or locateFile`));
    }
  }
  if (options.locateFile !== undefined && typeof options.locateFile !== 'function') {
    return Promise.reject(new AttnError('VALUE', `locateFile must be a function (file name -> URL or path), got ${describe(options.locateFile)}`));
  }
  const bytes = options.wasmBinary;
  if (bytes !== undefined && !(bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes))) {
    return Promise.reject(new AttnError('VALUE', `wasmBinary must be an ArrayBuffer or a Uint8Array, got ${describe(bytes)}`));
  }
  let build;
  try {
    build = chooseBuild(options.simd);
  } catch (err) {
    return Promise.reject(err);
  }
  // Overrides name a particular file or bytes, so they get an instance of their own.
  const cacheable = options.wasmBinary === undefined && options.locateFile === undefined;
  if (cacheable && cache.has(build)) return cache.get(build);
  const pending = load(build, options).then((exports) => new Instance(exports, () => {
    if (cache.get(build) === pending) cache.delete(build);
  }));
  if (cacheable) {
    cache.set(build, pending);
    pending.catch(() => cache.delete(build)); // a failed load may succeed on a later call
  }
  return pending;
}

function chooseBuild(simd = 'auto') {
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

async function load(build, options) {
  const file = BUILD_FILES[build];
  let bytes = options.wasmBinary;
  let where = 'options.wasmBinary';
  if (bytes === undefined) {
    const url = options.locateFile ? options.locateFile(file) : new URL(file, import.meta.url);
    where = String(url);
    try {
      bytes = await readBytes(url);
    } catch (err) {
      throw new AttnError('LOAD', `could not load ${file} from ${where}: ${err.message}. ` +
        'Serve it next to attnlab.js, or pass init({ locateFile: (file) => url }) or ' +
        'init({ wasmBinary: bytes }).');
    }
  }
  try {
    const { instance } = await WebAssembly.instantiate(bytes, {});
    return instance.exports;
  } catch (err) {
    throw new AttnError('LOAD', `${file} (from ${where}) is not a module this engine can run ` +
      `as the ${build} build: ${err.message}`);
  }
}

async function readBytes(url) {
  const href = String(url);
  const isNode = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;
  if (isNode && (href.startsWith('file:') || !/^[a-z][a-z0-9+.-]*:/i.test(href))) {
    const { readFile } = await import('node:fs/promises');
    return readFile(href.startsWith('file:') ? new URL(href) : href);
  }
  const response = await fetch(href);
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
  return response.arrayBuffer();
}

function describe(x) {
  if (typeof x === 'string') return JSON.stringify(x);
  if (Array.isArray(x)) return `an array of ${x.length}`;
  if (x === null) return 'null';
  if (typeof x === 'object') return Object.prototype.toString.call(x).slice(8, -1);
  return String(x);
}

/* ---- metadata ---- */

function parseMetadata(json) {
  const meta = JSON.parse(json);
  const variants = meta.variants.filter(Boolean).map((v) => Object.freeze({
    id: v.id,
    label: v.label,
    family: v.family,
    summary: v.summary,
    formula: v.formula,
    cost: v.cost,
    dims: Object.freeze(v.dims.split(' ')),
    inputs: Object.freeze(v.inputs.split(' ').map((spec) => {
      const [name, shape] = spec.split(':');
      return Object.freeze({ name, shape: Object.freeze(shape.split('*')) });
    })),
    options: Object.freeze(v.options ? v.options.split(' ') : []),
  }));
  return {
    version: meta.version,
    simd: meta.simd === 1,
    fma: meta.fma === 1,
    inputFields: meta.inputFields.trim().split(' '),
    dimFields: meta.dimFields.split(' '),
    patterns: meta.patterns.split(' '),
    tilings: meta.tilings.split(' '),
    variants,
  };
}

/* ---- the instance ---- */

class Instance {
  #exports;
  #memory;
  #meta;
  #byId;
  #heapBase;
  #views = null;
  #onDispose;

  constructor(exports, onDispose) {
    this.#exports = exports;
    this.#memory = exports.memory;
    this.#onDispose = onDispose;
    if (typeof exports._initialize === 'function') exports._initialize(); // static constructors
    this.#heapBase = align(exports.attn_heap_base() >>> 0, 64);
    this.#meta = parseMetadata(this.#cString(exports.attn_metadata_json()));
    this.#byId = new Map(this.#meta.variants.map((v, index) => [v.id, { ...v, index }]));
    // What the module says it is: wasmBinary may hold another build than the one asked for.
    this.build = this.#meta.fma ? 'relaxed' : this.#meta.simd ? 'simd' : 'scalar';
    this.simd = this.build !== 'scalar';
    this.version = version;
    this.variants = Object.freeze(this.#meta.variants);
    this.options = describeOptions(this.#meta);
    this.#checkLayout();
    Object.freeze(this);
  }

  /** Bytes of WebAssembly memory held now. */
  memoryBytes() {
    this.#alive();
    return this.#memory.buffer.byteLength;
  }

  dispose() {
    if (!this.#exports) return;
    this.#exports = null;
    this.#memory = null;
    this.#views = null;
    this.#onDispose();
  }

  /**
   * Runs one variant; see SPEC §2 for the math and §4 for inputs and options.
   * @returns {{ output: Float32Array, weights?: Float32Array, state?: Float32Array, normalizer?: Float32Array }}
   */
  attention(id, inputs, options = {}) {
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
    const opt = this.#readOptions(variant, options);
    const parts = variant.id === 'mixture' ? opt.components.map((c) => this.#byId.get(c)) : [variant];
    const dims = readDims(parts, inputs);
    const arrays = this.#requiredArrays(parts, inputs, dims);
    this.#writeControl(dims, opt);
    this.#check(variant.index, dims);
    return this.#run(variant, dims, opt, arrays);
  }

  #alive() {
    if (!this.#exports) {
      throw new AttnError('DISPOSED', 'this attnlab instance was disposed; call init() again for a new one');
    }
  }

  #readOptions(variant, options) {
    const accepted = new Set([...COMMON_OPTIONS, ...variant.options]);
    for (const key of Object.keys(options)) {
      if (options[key] === undefined) continue;
      if (!ALL_OPTIONS.includes(key)) {
        throw new AttnError('UNKNOWN', `unknown option "${key}"; ${variant.id} accepts ${[...accepted].join(', ')}`);
      }
      if (!accepted.has(key)) {
        throw new AttnError('UNSUPPORTED', `option "${key}" does not apply to ${variant.id}, which accepts ${[...accepted].join(', ')}`);
      }
    }
    const opt = { causal: false, weights: false, state: false, components: [] };
    for (const key of ['causal', 'weights', 'state']) {
      if (options[key] === undefined) continue;
      if (typeof options[key] !== 'boolean') {
        throw new AttnError('VALUE', `option ${key} must be true or false, got ${describe(options[key])}`);
      }
      opt[key] = options[key];
    }
    if (options.scale !== undefined) opt.scale = finiteNumber('scale', options.scale);
    opt.eps = options.eps === undefined ? 1e-6 : finiteNumber('eps', options.eps);
    if (opt.eps < 0) throw new AttnError('VALUE', `option eps must be >= 0, got ${opt.eps}`);
    opt.tiling = oneOf('tiling', options.tiling ?? 'kronecker', this.#meta.tilings);
    opt.pattern = oneOf('pattern', options.pattern ?? 'current', this.#meta.patterns);
    opt.window = options.window ?? 3;
    if (!Number.isInteger(opt.window) || opt.window < 1 || opt.window > 0x7fffffff) {
      throw new AttnError('VALUE', `option window must be a positive integer, got ${describe(options.window)}`);
    }
    if (variant.id === 'fixed' && opt.causal && ['next', 'right', 'last'].includes(opt.pattern)) {
      throw new AttnError('UNSUPPORTED', `pattern "${opt.pattern}" looks ahead, so it cannot be causal; ` +
        'causal fixed patterns are current, previous, left and first');
    }
    if (variant.id === 'mixture') this.#readMixture(options, opt);
    return opt;
  }

  #readMixture(options, opt) {
    const allowed = this.#meta.variants.filter((v) => v.family === 'softmax' || v.family === 'synthesizer')
      .map((v) => v.id).filter((id) => id !== 'mixture');
    const { components } = options;
    if (!Array.isArray(components) || components.length < 1 || components.length > MAX_COMPONENTS) {
      throw new AttnError('VALUE', `option components must be an array of 1 to ${MAX_COMPONENTS} ` +
        `variant ids among ${allowed.join(', ')}, got ${describe(components)}`);
    }
    for (const c of components) {
      if (!this.#byId.has(c)) {
        throw new AttnError('UNKNOWN', `components: unknown variant ${describe(c)}; a mixture combines ${allowed.join(', ')}`);
      }
      if (!allowed.includes(c)) {
        throw new AttnError('UNSUPPORTED', `components: ${c} cannot be mixed; a mixture combines ${allowed.join(', ')}`);
      }
    }
    opt.components = components.slice();
    const hasAlpha = options.alpha !== undefined, hasLogits = options.alphaLogits !== undefined;
    if (hasAlpha === hasLogits) {
      throw new AttnError('VALUE', hasAlpha
        ? 'give alpha or alphaLogits, not both'
        : 'mixture needs alpha (weights summing to 1) or alphaLogits (alpha = softmax(alphaLogits))');
    }
    const name = hasAlpha ? 'alpha' : 'alphaLogits';
    const values = hasAlpha ? options.alpha : options.alphaLogits;
    if (values === null || typeof values !== 'object' || typeof values.length !== 'number' || values.length !== components.length) {
      throw new AttnError('VALUE', `${name} must hold one number per component (${components.length}), got ${describe(values)}`);
    }
    const list = [];
    for (let i = 0; i < components.length; i++) {
      const x = values[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) {
        throw new AttnError('VALUE', `${name}[${i}] must be a finite number, got ${describe(x)}`);
      }
      if (hasAlpha && x < 0) throw new AttnError('VALUE', `alpha[${i}] = ${x} is negative; alpha must be non-negative`);
      list.push(x);
    }
    if (hasAlpha) {
      const sum = list.reduce((s, x) => s + x, 0);
      if (Math.abs(sum - 1) > 1e-5) {
        throw new AttnError('VALUE', `alpha must sum to 1 (within 1e-5), but [${list.join(', ')}] sums to ${sum}`);
      }
    }
    opt.alpha = list;
    opt.alphaIsLogits = !hasAlpha;
  }

  #requiredArrays(parts, inputs, dims) {
    const specs = new Map();
    for (const part of parts) for (const spec of part.inputs) specs.set(spec.name, spec);
    specs.set('v', { name: 'v', shape: ['n', 'dv'] }); // last, as in every list
    const needs = () => [...specs.values()].map((s) => `${s.name} [${s.shape.join(', ')}]`).join(', ');
    const arrays = [];
    for (const spec of specs.values()) {
      const value = inputs[spec.name];
      const expected = spec.shape.reduce((p, dim) => p * dims[dim], 1);
      const formula = `${spec.shape.join('*')} = ${expected}`;
      if (value === undefined || value === null) {
        throw new AttnError('SHAPE', `${spec.name} is missing: ${parts.map((p) => p.id).join(' + ')} needs ${needs()}`);
      }
      const isArrayLike = ArrayBuffer.isView(value) ? !(value instanceof DataView) && !(value instanceof BigInt64Array) && !(value instanceof BigUint64Array)
        : Array.isArray(value);
      if (!isArrayLike) {
        throw new AttnError('SHAPE', `${spec.name} must be a Float32Array or an array of numbers, got ${describe(value)}`);
      }
      if (value.length !== expected) {
        throw new AttnError('SHAPE', `${spec.name} has ${value.length} values, expected ${formula}`);
      }
      if (Array.isArray(value)) { // a typed array holds numbers by construction; a plain one may not
        const bad = value.findIndex((x) => typeof x !== 'number');
        if (bad >= 0) {
          throw new AttnError('VALUE', `${spec.name}[${bad}] is ${describe(value[bad])}, not a number`);
        }
      }
      arrays.push({ name: spec.name, shape: spec.shape, value, count: expected, cols: dims[spec.shape[spec.shape.length - 1]] });
    }
    return arrays;
  }

  // Semantic checks the C core owns (a*b = L, L >= n, ...); it names the input in `detail`.
  #check(index, dims) {
    const e = this.#exports;
    const status = e.attn_check(index, this.#heapBase + DIMS_OFFSET, this.#heapBase + OPTIONS_OFFSET,
      this.#heapBase + DETAIL_OFFSET);
    if (status !== 0) this.#fail(status, dims);
  }

  #fail(status, dims) {
    const detail = this.#cString(this.#u32()[(this.#heapBase + DETAIL_OFFSET) >>> 2]);
    const values = `(n = ${dims.n}${dims.L !== undefined ? `, L = ${dims.L}` : ''}${dims.a !== undefined ? `, a = ${dims.a}, b = ${dims.b}` : ''})`;
    throw new AttnError(STATUS_CODES[status] ?? 'VALUE', `${detail} ${values}`);
  }

  #run(variant, dims, opt, arrays) {
    const e = this.#exports;
    const base = this.#heapBase;
    const status = e.attn_workspace_size(variant.index, base + DIMS_OFFSET, base + OPTIONS_OFFSET,
      opt.weights ? 1 : 0, base + WS_SIZE_OFFSET);
    const n = dims.n;
    const outCount = n * dims.dv;
    const weightCount = opt.weights ? n * n : 0;
    let wsBytes = status === 0 ? this.#u32()[(base + WS_SIZE_OFFSET) >>> 2] : Infinity;
    if (status !== 0 && status !== 5) this.#fail(status, dims);
    let stateWidth = 0;
    if (opt.state) { // the state pass reuses the workspace after the run, so it needs the larger
      const s = e.attn_state_size(variant.index, base + DIMS_OFFSET, base + OPTIONS_OFFSET,
        base + STATE_WIDTH_OFFSET, base + WS_SIZE_OFFSET);
      if (s !== 0 && s !== 5) throw new AttnError(STATUS_CODES[s] ?? 'VALUE', `${variant.id} keeps no state to return`);
      stateWidth = s === 0 ? this.#i32()[(base + STATE_WIDTH_OFFSET) >>> 2] : 0;
      wsBytes = s === 0 ? Math.max(wsBytes, this.#u32()[(base + WS_SIZE_OFFSET) >>> 2]) : Infinity;
    }
    const stateCount = stateWidth * dims.dv;
    // Lay out: control block, inputs, output, weights, workspace; all 64-byte aligned.
    let cursor = base + CONTROL_BYTES;
    for (const a of arrays) {
      a.offset = cursor;
      cursor = align(cursor + a.count * 4, 64);
    }
    const outOffset = cursor;
    cursor = align(cursor + outCount * 4, 64);
    const weightsOffset = cursor;
    cursor = align(cursor + weightCount * 4, 64);
    const stateOffset = cursor;
    cursor = align(cursor + stateCount * 4, 64);
    const normalizerOffset = cursor;
    cursor = align(cursor + stateWidth * 4, 64);
    const wsOffset = cursor;
    const end = cursor + wsBytes;
    if (!(end <= MAX_MEMORY)) {
      const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
      const parts = [`inputs and output ${gb(outOffset - base + outCount * 4)}`];
      if (opt.weights) parts.push(`weights [n, n] ${gb(weightCount * 4)}`);
      if (opt.state) parts.push(`state ${gb((stateCount + stateWidth) * 4)}`);
      if (Number.isFinite(wsBytes)) parts.push(`workspace ${gb(wsBytes)}`);
      throw new AttnError('MEMORY', `${variant.id} with n = ${n} needs ${Number.isFinite(end) ? gb(end) : 'more than 4 GiB'} ` +
        `(${parts.join(', ')}), more than WebAssembly's 4 GiB memory` +
        (opt.weights ? '; request weights only for small n' : '; use a smaller n'));
    }
    if (end > this.#memory.buffer.byteLength) {
      checkFiniteInJs(arrays); // a call that fails must not grow memory, so check before growing
      const pages = Math.ceil((end - this.#memory.buffer.byteLength) / PAGE);
      try {
        this.#memory.grow(pages);
      } catch (err) {
        throw new AttnError('MEMORY', `${variant.id} with n = ${n} needs ${(end / 2 ** 20).toFixed(0)} MiB of ` +
          `WebAssembly memory and the engine refused to grow it (${err.message})`);
      }
    }
    const f32 = this.#f32();
    const u32 = this.#u32();
    const pointers = new Map(arrays.map((a) => [a.name, a.offset]));
    this.#meta.inputFields.forEach((name, i) => { u32[((base + INPUTS_OFFSET) >>> 2) + i] = pointers.get(name) ?? 0; });
    for (const a of arrays) {
      f32.set(a.value, a.offset >>> 2);
      const bad = Number(e.attn_find_nonfinite(a.offset, a.count));
      if (bad >= 0) throw nonFinite(a, bad, a.value[bad]);
    }
    const runStatus = e.attn_run(variant.index, base + DIMS_OFFSET, base + INPUTS_OFFSET,
      base + OPTIONS_OFFSET, outOffset, opt.weights ? weightsOffset : 0, wsOffset, wsBytes,
      base + DETAIL_OFFSET);
    if (runStatus !== 0) this.#fail(runStatus, dims);
    // Finite inputs, yet an intermediate (a logit, exp or normaliser) may have left float32's range.
    const overflowed = (name, offset, count, cols) => {
      const at = Number(e.attn_find_nonfinite(offset, count));
      if (at < 0) return;
      throw new AttnError('VALUE', `${name}[${Math.floor(at / cols)}][${at % cols}] came out ` +
        `${this.#f32()[(offset >>> 2) + at]}: an intermediate (a logit, exp or normaliser) left float32's range; ` +
        'scale the inputs down' + (opt.scale !== undefined ? ` or use a smaller scale than ${opt.scale}` : '') +
        (opt.eps === 0 ? ' or use eps > 0' : ''));
    };
    overflowed('output', outOffset, outCount, dims.dv);
    if (opt.state) {
      const stateStatus = e.attn_state(variant.index, base + DIMS_OFFSET, base + INPUTS_OFFSET,
        base + OPTIONS_OFFSET, stateOffset, normalizerOffset, wsOffset, wsBytes, base + DETAIL_OFFSET);
      if (stateStatus !== 0) this.#fail(stateStatus, dims);
      overflowed('state', stateOffset, stateCount, dims.dv);
      overflowed('normalizer', normalizerOffset, stateWidth, stateWidth);
    }
    const heap = this.#f32();
    const result = { output: heap.slice(outOffset >>> 2, (outOffset >>> 2) + outCount) };
    if (opt.weights) result.weights = heap.slice(weightsOffset >>> 2, (weightsOffset >>> 2) + weightCount);
    if (opt.state) {
      result.state = heap.slice(stateOffset >>> 2, (stateOffset >>> 2) + stateCount);
      result.normalizer = heap.slice(normalizerOffset >>> 2, (normalizerOffset >>> 2) + stateWidth);
    }
    return result;
  }

  #writeControl(dims, opt) {
    const base = this.#heapBase;
    const i32 = this.#i32();
    const f32 = this.#f32();
    i32.fill(0, base >>> 2, (base + CONTROL_BYTES) >>> 2);
    this.#meta.dimFields.forEach((name, i) => { i32[((base + DIMS_OFFSET) >>> 2) + i] = dims[name] ?? 0; });
    const o = (base + OPTIONS_OFFSET) >>> 2;
    i32[o + 0] = opt.causal ? 1 : 0;
    i32[o + 1] = opt.scale !== undefined ? 1 : 0;
    f32[o + 2] = opt.scale ?? 0;
    f32[o + 3] = opt.eps;
    i32[o + 4] = this.#meta.tilings.indexOf(opt.tiling);
    i32[o + 5] = this.#meta.patterns.indexOf(opt.pattern);
    i32[o + 6] = opt.window;
    i32[o + 7] = opt.components.length;
    i32[o + 8] = opt.alphaIsLogits ? 1 : 0;
    opt.components.forEach((c, i) => {
      i32[o + 9 + i] = this.#byId.get(c).index;
      f32[o + 9 + MAX_COMPONENTS + i] = opt.alpha[i];
    });
  }

  // attn_options_default() must fill what this file thinks the layout is.
  #checkLayout() {
    const base = this.#heapBase;
    this.#exports.attn_options_default(base + OPTIONS_OFFSET);
    const o = (base + OPTIONS_OFFSET) >>> 2;
    if (Math.abs(this.#f32()[o + 3] - 1e-6) > 1e-12 || this.#i32()[o + 6] !== 3) {
      throw new AttnError('LOAD', `the ${this.build} module's attn_options layout does not match this binding`);
    }
    if (this.#meta.version !== version) {
      throw new AttnError('LOAD', `the ${this.build} module is version ${this.#meta.version}, the binding ${version}`);
    }
  }

  // Views are re-created whenever memory has grown (growth detaches the old buffer).
  #view() {
    const buffer = this.#memory.buffer;
    if (!this.#views || this.#views.buffer !== buffer) {
      this.#views = { buffer, f32: new Float32Array(buffer), i32: new Int32Array(buffer), u32: new Uint32Array(buffer), u8: new Uint8Array(buffer) };
    }
    return this.#views;
  }
  #f32() { return this.#view().f32; }
  #i32() { return this.#view().i32; }
  #u32() { return this.#view().u32; }

  #cString(ptr) {
    const u8 = this.#view().u8;
    let end = ptr;
    while (u8[end] !== 0) end++;
    return new TextDecoder().decode(u8.subarray(ptr, end));
  }
}

// What each option takes, for forms such as the page's; the checks in #readOptions are the rule.
function describeOptions(meta) {
  const mixable = meta.variants.filter((v) => v.family === 'softmax' || v.family === 'synthesizer')
    .map((v) => v.id).filter((id) => id !== 'mixture');
  const info = {
    causal: { type: 'boolean', default: false, description: 'row i uses only columns j <= i' },
    weights: { type: 'boolean', default: false, description: 'also return the n x n effective attention matrix' },
    state: { type: 'boolean', default: false, description: 'linear, efficient, taylor: also return the state and normaliser they keep instead of A' },
    scale: { type: 'number', default: null, description: 'softmax logit scale; default 1/sqrt(d)' },
    eps: { type: 'number', default: 1e-6, description: 'denominator epsilon (>= 0)' },
    tiling: { type: 'enum', values: meta.tilings, default: 'kronecker', description: 'how factorized-dense combines its a and b factors' },
    components: { type: 'list', values: mixable, default: null, description: 'the variants whose logits a mixture sums (1 to 8)' },
    alpha: { type: 'numbers', default: null, description: 'mixture weights, non-negative, summing to 1' },
    alphaLogits: { type: 'numbers', default: null, description: 'mixture weights as logits: alpha = softmax(alphaLogits)' },
    pattern: { type: 'enum', values: meta.patterns, default: 'current', description: 'which fixed pattern' },
    window: { type: 'integer', default: 3, description: 'window w of the left and right patterns (>= 1)' },
  };
  for (const o of Object.values(info)) {
    if (o.values) Object.freeze(o.values);
    Object.freeze(o);
  }
  return Object.freeze(info);
}

function align(x, to) {
  return Math.ceil(x / to) * to;
}

function finiteNumber(name, x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) {
    throw new AttnError('VALUE', `option ${name} must be a finite number, got ${describe(x)}`);
  }
  return x;
}

function oneOf(name, x, allowed) {
  if (!allowed.includes(x)) {
    throw new AttnError('VALUE', `option ${name} must be one of ${allowed.map((s) => `"${s}"`).join(', ')}, got ${describe(x)}`);
  }
  return x;
}

function readDims(parts, inputs) {
  const names = new Set(['n', 'dv']);
  for (const part of parts) for (const dim of part.dims) names.add(dim);
  const dims = {};
  for (const name of names) {
    const value = inputs[name];
    if (name === 'L' && value === undefined) continue; // L defaults to n
    if (value === undefined) {
      throw new AttnError('SHAPE', `${name} is missing: ${parts.map((p) => p.id).join(' + ')} needs dimensions ${[...names].join(', ')}` +
        (names.has('L') ? ' (L defaults to n)' : ''));
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 0x7fffffff) {
      throw new AttnError('SHAPE', `${name} must be a positive integer, got ${describe(value)}`);
    }
    dims[name] = value;
  }
  if (names.has('L')) {
    if (dims.L === undefined) dims.L = dims.n;
    if (dims.L < dims.n) {
      throw new AttnError('VALUE', `L = ${dims.L} is less than n = ${dims.n}; parameters made for length L serve only n <= L`);
    }
  }
  if (names.has('a') && dims.a * dims.b !== dims.L) {
    throw new AttnError('VALUE', `a*b must equal L, but a*b = ${dims.a}*${dims.b} = ${dims.a * dims.b} and L = ${dims.L}`);
  }
  return dims;
}

function nonFinite(a, index, value) {
  const row = Math.floor(index / a.cols), col = index % a.cols;
  const where = a.shape.length > 1 ? `${a.name}[${row}][${col}] (index ${index})` : `${a.name}[${index}]`;
  const what = Number.isFinite(value) ? `${value}, which overflows float32` : describe(value);
  return new AttnError('VALUE', `${where} is ${what}; inputs must be finite float32 numbers`);
}

function checkFiniteInJs(arrays) {
  for (const a of arrays) {
    const v = a.value;
    for (let i = 0; i < v.length; i++) {
      // fround: 1e39 is a finite double but becomes Infinity as float32.
      if (!Number.isFinite(Math.fround(v[i]))) throw nonFinite(a, i, v[i]);
    }
  }
}
