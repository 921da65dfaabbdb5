// Shared helpers for the attnlab Node test suite: a deterministic PRNG, input generation for every
// variant, build selection and the SPEC §3 accuracy check.
//
// Inputs are generated per array from an independent stream (seed, array name), so two variants
// called with the same seed and dims see the same q, k, v, x, ... (the mixture tests rely on it).
// Every value is rounded to float32 (Math.fround) before it is stored, so the float64 reference
// sees exactly the numbers the WebAssembly module reads.

import { fileURLToPath, pathToFileURL } from 'node:url';

export const BINDING_URL = process.env.ATTNLAB_BINDING
  ? pathToFileURL(process.env.ATTNLAB_BINDING).href
  : new URL('../dist/attnlab.js', import.meta.url).href;
export const BINDING_PATH = fileURLToPath(BINDING_URL);

/** The SPEC §3 bar: |a - e| <= ABS_TOL + REL_TOL * |e|. */
export const ABS_TOL = 1e-5;
export const REL_TOL = 1e-4;

/** Sequence lengths / widths around the SIMD width (4 floats) used by the sweeps. */
export const SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65];

/** mulberry32: a small, fast 32-bit PRNG. Returns a function giving floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a hash of a string, used to derive one stream per array name. */
function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Float32Array of `len` values uniform in [-magnitude, magnitude], from stream (seed, name). */
export function randomArray(len, seed, name, magnitude = 1) {
  const rnd = mulberry32((hashString(name) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0);
  const out = new Float32Array(len);
  for (let i = 0; i < len; i++) out[i] = Math.fround((2 * rnd() - 1) * magnitude);
  return out;
}

/** Shapes of every array, as dimension names (SPEC §2 and attnlab.d.ts). */
export const ARRAY_SHAPES = {
  q: ['n', 'd'], k: ['n', 'd'], v: ['n', 'dv'], x: ['n', 'd'],
  w1: ['d', 'h'], b1: ['h'], w2: ['h', 'L'], b2: ['L'],
  w: ['d', 'L'], r: ['L', 'L'],
  wa: ['d', 'a'], ba: ['a'], wb: ['d', 'b'], bb: ['b'],
  r1: ['L', 'rank'], r2: ['L', 'rank'],
};

/** Arrays each variant reads (mixture: only those of its components, plus v). */
export const VARIANT_ARRAYS = {
  softmax: ['q', 'k', 'v'],
  dense: ['x', 'w1', 'b1', 'w2', 'b2', 'v'],
  dense1: ['x', 'w', 'v'],
  random: ['r', 'v'],
  'factorized-dense': ['x', 'wa', 'ba', 'wb', 'bb', 'v'],
  'factorized-random': ['r1', 'r2', 'v'],
  linear: ['q', 'k', 'v'],
  efficient: ['q', 'k', 'v'],
  taylor: ['q', 'k', 'v'],
  fixed: ['v'],
};

/** Dimensions each variant reads (mixture: union over its components). */
export const VARIANT_DIMS = {
  softmax: ['n', 'd', 'dv'],
  dense: ['n', 'd', 'dv', 'h', 'L'],
  dense1: ['n', 'd', 'dv', 'L'],
  random: ['n', 'dv', 'L'],
  'factorized-dense': ['n', 'd', 'dv', 'a', 'b', 'L'],
  'factorized-random': ['n', 'dv', 'rank', 'L'],
  linear: ['n', 'd', 'dv'],
  efficient: ['n', 'd', 'dv'],
  taylor: ['n', 'd', 'dv'],
  fixed: ['n', 'dv'],
};

export const MIXTURE_COMPONENTS = ['softmax', 'dense', 'dense1', 'random', 'factorized-dense', 'factorized-random'];

export function arraysFor(id, components = MIXTURE_COMPONENTS) {
  if (id !== 'mixture') return VARIANT_ARRAYS[id];
  const set = new Set();
  for (const c of components) for (const a of VARIANT_ARRAYS[c]) set.add(a);
  set.add('v');
  return [...set];
}

export function dimsFor(id, components = MIXTURE_COMPONENTS) {
  if (id !== 'mixture') return VARIANT_DIMS[id];
  const set = new Set();
  for (const c of components) for (const a of VARIANT_DIMS[c]) set.add(a);
  return [...set];
}

/** Length of array `name` under `dims` (L defaults to n). */
export function arrayLength(name, dims) {
  return ARRAY_SHAPES[name].reduce((p, dim) => p * (dim === 'L' ? (dims.L ?? dims.n) : dims[dim]), 1);
}

/**
 * Every input a variant needs: the dimensions it reads plus its arrays (Float32Array).
 * `dims` holds n, dv and whichever of d, h, L, a, b, rank the variant reads (L defaults to n).
 * opts.magnitude: entries uniform in [-magnitude, magnitude] (default 1).
 * opts.components: for mixture, which components (default all six).
 * opts.zeroRows: { q: [rows...], k: [...] } sets those rows to 0 (edge cases for taylor/linear).
 */
export function makeInputs(id, dims, seed, opts = {}) {
  const { magnitude = 1, components, zeroRows } = opts;
  const inputs = {};
  for (const dim of dimsFor(id, components)) {
    const value = dim === 'L' ? (dims.L ?? dims.n) : dims[dim];
    if (!(Number.isInteger(value) && value > 0)) {
      throw new Error(`makeInputs(${id}): dimension ${dim} = ${value} is missing or not a positive integer`);
    }
    inputs[dim] = value;
  }
  for (const name of arraysFor(id, components)) {
    inputs[name] = randomArray(arrayLength(name, inputs), seed, name, magnitude);
  }
  if (zeroRows) {
    for (const [name, rows] of Object.entries(zeroRows)) {
      const cols = inputs[ARRAY_SHAPES[name][1]];
      for (const r of rows) inputs[name].fill(0, r * cols, (r + 1) * cols);
    }
  }
  return inputs;
}

/** A checksum of the generated inputs, stored in the fixtures to detect PRNG drift. */
export function inputChecksum(inputs) {
  let s = 0;
  for (const name of Object.keys(ARRAY_SHAPES).sort()) {
    const a = inputs[name];
    if (!a) continue;
    for (let i = 0; i < a.length; i++) s += a[i] * ((i % 7) + 1);
  }
  return s;
}

let bindingPromise;
/** The binding module (dist/attnlab.js). */
export function binding() {
  bindingPromise ??= import(BINDING_URL);
  return bindingPromise;
}

/**
 * Build names to test: always 'scalar' and 'simd'; 'relaxed' too when the engine validates relaxed
 * SIMD (Node 20 needs --experimental-wasm-relaxed-simd for that).
 */
export async function builds() {
  const { features } = await binding();
  const list = ['scalar', 'simd'];
  if (features().relaxedSimd) list.push('relaxed');
  return list;
}

/** Loads build `name` and checks that the instance really is that build. */
export async function loadBuild(name) {
  const { init } = await binding();
  const lab = await init({ simd: name === 'relaxed' ? 'relaxed' : name === 'simd' });
  if (lab.build !== name) {
    throw new Error(`init for build '${name}' returned an instance with build '${lab.build}' (simd=${lab.simd})`);
  }
  if (lab.simd !== (name !== 'scalar')) {
    throw new Error(`build '${name}' reports simd=${lab.simd}`);
  }
  return lab;
}

/** "n=17 d=16 dv=5" from the dims actually read. */
export function describeDims(dims) {
  const order = ['n', 'd', 'dv', 'h', 'L', 'a', 'b', 'rank'];
  return order.filter((k) => dims[k] !== undefined).map((k) => `${k}=${dims[k]}`).join(' ');
}

/** "causal tiling=tile" etc. from the options (weights excluded). */
export function describeOptions(options = {}) {
  const parts = [];
  for (const [k, v] of Object.entries(options)) {
    if (k === 'weights') continue;
    if (k === 'causal') { if (v) parts.push('causal'); continue; }
    parts.push(`${k}=${Array.isArray(v) || ArrayBuffer.isView(v) ? `[${Array.from(v).join(',')}]` : v}`);
  }
  return parts.join(' ');
}

/** A readable case name, e.g. `softmax n=17 d=16 dv=5 causal seed=3`. */
export function caseName(id, dims, seed, options = {}, extra = '') {
  return [id, describeDims(dims), describeOptions(options), extra, `seed=${seed}`].filter(Boolean).join(' ');
}

/**
 * Checks |actual - expected| <= 1e-5 + 1e-4·|expected| for every element (SPEC §3), and the length.
 * ctx: { variant, build, dims, seed, options, what ('output' | 'weights' | ...), cols, extra }.
 * Throws an Error naming variant, build, shape, seed, options, (row, col) and both values.
 */
export function closeTo(actual, expected, ctx = {}, absTol = ABS_TOL, relTol = REL_TOL) {
  const where = () => {
    const dims = ctx.dims ? describeDims(ctx.dims) : '';
    const opts = describeOptions(ctx.options);
    return [ctx.variant, dims, opts && `options{${opts}}`, ctx.seed !== undefined && `seed=${ctx.seed}`,
      ctx.build && `[${ctx.build}]`, ctx.extra].filter(Boolean).join(' ');
  };
  const what = ctx.what ?? 'output';
  if (!actual || typeof actual.length !== 'number') {
    throw new Error(`${where()}: ${what} is ${actual === undefined ? 'undefined' : typeof actual}, expected ${expected.length} values`);
  }
  if (actual.length !== expected.length) {
    throw new Error(`${where()}: ${what} has ${actual.length} values, expected ${expected.length}`);
  }
  const cols = ctx.cols ?? expected.length;
  let bad = 0;
  let first = -1;
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    const tol = absTol + relTol * Math.abs(e);
    const err = Math.abs(a - e);
    if (!(err <= tol)) { // also catches NaN
      bad++;
      if (first < 0) first = i;
      const excess = Number.isNaN(err) ? Infinity : err / tol;
      if (excess > worstExcess) { worstExcess = excess; worst = i; }
    }
  }
  if (bad) {
    const at = (i) => `(row ${Math.floor(i / cols)}, col ${i % cols}): got ${actual[i]}, expected ${expected[i]}` +
      ` (|diff| = ${Math.abs(actual[i] - expected[i]).toExponential(3)}, allowed ${(absTol + relTol * Math.abs(expected[i])).toExponential(3)})`;
    let msg = `${where()}: ${what} differs from the reference at ${bad} of ${expected.length} elements; first at ${at(first)}`;
    if (worst !== first) msg += `; worst at ${at(worst)}`;
    throw new Error(msg);
  }
}

/** Float64 y = A·v from an n×n matrix (any array type) and v (n×dv). */
export function matVec(A, v, n, dv) {
  const y = new Float64Array(n * dv);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const a = A[i * n + j];
      if (a === 0) continue;
      for (let c = 0; c < dv; c++) y[i * dv + c] += a * v[j * dv + c];
    }
  }
  return y;
}

/** Round to `digits` significant digits (fixture storage). */
export function roundSig(x, digits = 9) {
  if (x === 0 || !Number.isFinite(x)) return x;
  return Number(x.toPrecision(digits));
}
