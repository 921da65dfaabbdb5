// Deterministic inputs for the page and its worker: seeded PRNG, presets, dimensions and the
// request (inputs + options) for one variant. No DOM here, so the worker can import it too.
// The random numbers come from the shared PRNG module, so a link's seed gives the same inputs as
// the tests' helpers.

import { normalStream } from '../dist/prng.js';

/** Presets: sizes, options and the way inputs are generated. */
export const PRESETS = {
  random: { label: 'Random (seeded)', n: 16, d: 8, dv: 8, causal: false },
  identity: { label: 'Identity-like queries and keys', n: 16, d: 8, dv: 8, causal: false },
  positional: { label: 'Positional (banded attention)', n: 24, d: 8, dv: 8, causal: false },
  long: { label: 'Long sequence (n = 256)', n: 256, d: 16, dv: 16, causal: false },
  causal: { label: 'Causal example (running averages)', n: 12, d: 4, dv: 4, causal: true },
  // the gated recurrent variants with one decay a token (Mamba-2's, RetNet's, Gated DeltaNet's
  // kind): g's rows constant; the other arrays drawn as random draws them
  perToken: { label: 'Per-token decay (gla, gated-deltanet: g\'s rows constant)', n: 16, d: 8, dv: 8, causal: true },
};
export const DEFAULT_PRESET = 'random';

/** Largest n the interactive page runs (the scaling chart goes further). */
export const MAX_N = 4096;
export const MAX_WIDTH = 256;
/** The scaling run's largest n on the WebAssembly builds; WebGPU is timed past it (web/worker.js, web/scaling.js). */
export const WASM_MAX_N = 16384;
/** The effective attention matrix is requested for display only up to this n. */
export const WEIGHTS_MAX_N = 256;
/** Largest value the page accepts for each dimension (page limits, not the library's). */
export const DIM_LIMITS = { n: MAX_N, d: MAX_WIDTH, dv: MAX_WIDTH, h: 4096, L: 65536, a: 65536, b: 65536, rank: 4096 };

/** The shape of each known array and a gain for its random values. */
const GAIN = {
  q: 1, k: 1, x: 1, v: 1,
  w1: 'fan', b1: 0.1, w2: 'fan2', b2: 0.1, w: 'fan2',
  r: 1.5, wa: 'fan', ba: 0.1, wb: 'fan', bb: 0.1, r1: 'rank', r2: 'rank', g: 1, beta: 1,
};
/** Arrays whose noise is mapped into the range the recurrent family's bar covers: g = −softplus(noise) ≤ 0, beta = sigmoid(noise). */
const SQUASH = {
  g: (t) => -Math.log1p(Math.exp(t)),
  beta: (t) => 1 / (1 + Math.exp(-t)),
};

function largestDivisorUpToSqrt(L) {
  let best = 1;
  for (let a = 1; a * a <= L; a++) if (L % a === 0) best = a;
  return best;
}

/**
 * Resolves every dimension from the page state. `null`/missing extras are "auto":
 * h = 8, L = n, a·b = L with a the largest divisor ≤ √L, rank = 4.
 */
export function resolveDims(s) {
  const n = s.n, d = s.d, dv = s.dv;
  const h = s.h ?? 8;
  const L = s.L ?? n;
  let a = s.a, b = s.b;
  if (a == null && b == null) {
    a = largestDivisorUpToSqrt(L);
    b = L / a;
  } else if (a == null) {
    a = Math.max(1, Math.round(L / b));
  } else if (b == null) {
    b = Math.max(1, Math.round(L / a));
  }
  const rank = s.rank ?? 4;
  return { n, d, dv, h, L, a, b, rank };
}

export function shapeLength(shape, dims) {
  let len = 1;
  for (const s of shape) len *= dims[s];
  return len;
}

/** One generated input array (before the user's edits). */
export function generateArray(name, shape, dims, seed, preset = DEFAULT_PRESET) {
  const len = shapeLength(shape, dims);
  const out = new Float32Array(len);
  const rows = shape.length === 2 ? dims[shape[0]] : 1;
  const cols = shape.length === 2 ? dims[shape[1]] : len;
  const isQK = name === 'q' || name === 'k' || name === 'x';
  if (isQK && preset === 'identity') {
    // q_i = k_i = 3·e_(i mod d): token i matches every token j ≡ i (mod d).
    for (let i = 0; i < rows; i++) out[i * cols + (i % cols)] = 3;
    return out;
  }
  if (isQK && preset === 'positional') {
    // Sinusoidal position codes at frequencies 1, 1/2, 1/4, …: q_i·k_j depends on i − j only and
    // peaks at i = j, so attention is a band around the diagonal.
    const half = Math.max(1, Math.floor(cols / 2));
    for (let i = 0; i < rows; i++) {
      for (let m = 0; m < half; m++) {
        const w = Math.pow(0.5, m);
        out[i * cols + 2 * m] = Math.fround(1.7 * Math.cos(i * w));
        if (2 * m + 1 < cols) out[i * cols + 2 * m + 1] = Math.fround(1.7 * Math.sin(i * w));
      }
    }
    return out;
  }
  if (name === 'v' && preset === 'causal') {
    // A ramp: with causal attention, y_i is a (weighted) running average of the ramp.
    for (let i = 0; i < rows; i++) {
      for (let c = 0; c < cols; c++) {
        const t = rows > 1 ? i / (rows - 1) : 0;
        out[i * cols + c] = Math.fround((c % 2 === 0 ? 2 * t - 1 : 1 - 2 * t) * (1 + c / cols));
      }
    }
    return out;
  }
  const g = GAIN[name] ?? 1;
  let gain = g;
  if (g === 'fan') gain = 1.5 / Math.sqrt(Math.max(1, dims.d));
  else if (g === 'fan2') gain = 2 / Math.sqrt(Math.max(1, shape[0] === 'h' ? dims.h : dims.d));
  else if (g === 'rank') gain = 1.6 / Math.sqrt(Math.sqrt(Math.max(1, dims.rank)));
  if (name === 'g' && preset === 'perToken') { // one decay a token: every key row decays alike
    const rnd = normalStream(seed, `${preset}:${name}`);
    for (let i = 0; i < rows; i++) out.fill(Math.fround(SQUASH.g(rnd())), i * cols, (i + 1) * cols);
    return out;
  }
  const rnd = normalStream(seed, `${preset}:${name}`);
  const squash = SQUASH[name] ?? ((t) => t);
  for (let i = 0; i < len; i++) out[i] = Math.fround(squash(gain * rnd()));
  return out;
}

/** Scales each row of X [rows, cols] to unit norm, in place (a zero row becomes e_0). */
function unitRows(X, rows, cols) {
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let c = 0; c < cols; c++) s += X[i * cols + c] * X[i * cols + c];
    const norm = Math.sqrt(s);
    for (let c = 0; c < cols; c++) X[i * cols + c] = Math.fround(norm > 0 ? X[i * cols + c] / norm : c === 0 ? 1 : 0);
  }
}

/**
 * For a variant id, which dims and arrays a call needs. Mixture needs v plus the arrays of the
 * chosen components (found through their own entries of `variants`, not hard-coded here).
 */
export function requirements(id, variantsById, opts = {}) {
  const info = variantsById[id];
  if (!info) return { dims: ['n', 'dv'], inputs: [] };
  if (Array.isArray(opts.components) && info.composite) {
    const dims = new Set(['n', 'dv']);
    const inputs = new Map();
    for (const c of opts.components) {
      const ci = variantsById[c];
      if (!ci) continue;
      ci.dims.forEach((x) => dims.add(x));
      ci.inputs.forEach((x) => inputs.set(x.name, x));
    }
    const v = info.inputs.find((x) => x.name === 'v');
    if (v) inputs.set('v', v);
    // Keep the order of the mixture's own list.
    const order = info.inputs.map((x) => x.name);
    const list = [...inputs.values()].sort((p, q) => order.indexOf(p.name) - order.indexOf(q.name));
    return { dims: info.dims.filter((x) => dims.has(x)), inputs: list };
  }
  return { dims: info.dims.slice(), inputs: info.inputs.slice() };
}

/**
 * The page's starting values for a variant's options, beyond the library's defaults (which the
 * page leaves to the library): a mixture starts with two components and equal sliders, the fixed
 * pattern starts on a non-identity pattern so the demo shows something. Only options the variant
 * lists, only values lab.options accepts.
 */
export function defaultOptions(info, lab) {
  const o = {};
  const meta = lab?.options ?? {};
  if (info.composite) {
    const mixable = mixableIds(lab);
    o.components = mixable.filter((x) => x === 'softmax' || x === 'random');
    if (o.components.length < 2) o.components = mixable.slice(0, 2);
  }
  if (info.options.includes('alpha') && o.components) o.alpha = o.components.map(() => 1);
  if (info.options.includes('pattern') && meta.pattern?.values?.includes('previous')) o.pattern = 'previous';
  return o;
}

/** Ids a mixture may combine: the registry's `mixable` flag. */
export function mixableIds(lab) {
  return (lab?.variants ?? []).filter((v) => v.mixable).map((v) => v.id);
}

/**
 * Options of a variant with `components` (a mixture) that belong to its components (a mixable
 * variant lists them, e.g. softmax's scale): they matter only when a chosen component takes them.
 * Returns { name: true when a chosen component takes it }.
 */
export function componentOptions(info, variantsById, components) {
  const out = {};
  if (!info?.composite) return out;
  const mixable = Object.values(variantsById).filter((v) => v.mixable);
  for (const name of info.options) {
    if (!mixable.some((v) => v.options.includes(name))) continue;
    out[name] = (components ?? []).some((c) => variantsById[c]?.options.includes(name));
  }
  return out;
}

/**
 * The mixture sliders (raw, non-negative) as weights that sum to 1; all zero means equal weights.
 * Returns { alpha, uniform } (uniform: they were all zero), or null when they cannot be normalised.
 */
export function normaliseAlpha(val) {
  const raw = Array.from(val ?? [], Number);
  if (!raw.length || !raw.every((t) => Number.isFinite(t) && t >= 0)) return null;
  const sum = raw.reduce((p, t) => p + t, 0);
  if (sum > 0) return { alpha: raw.map((t) => t / sum), uniform: false };
  return { alpha: raw.map(() => 1 / raw.length), uniform: true };
}

/**
 * Turns page options into API options for one variant: drops unset values and a mixture's
 * component options no chosen component takes, normalises the alpha sliders.
 */
export function apiOptions(info, opts, causal, variantsById = {}) {
  const out = { causal: !!causal || !!info.causalOnly };
  const comp = componentOptions(info, variantsById, opts?.components);
  for (const name of info.options) {
    const val = opts?.[name];
    if (val == null || val === '' || comp[name] === false) continue;
    if (name === 'alpha') {
      out.alpha = normaliseAlpha(val)?.alpha ?? Array.from(val, Number);
      continue;
    }
    out[name] = Array.isArray(val) ? val.slice() : val;
  }
  if (out.alpha && out.alphaLogits) delete out.alphaLogits;
  return out;
}

/**
 * Builds { inputs, options, arrays } for `attention(id, inputs, options)`.
 * `edits`: { name: { len, cells: { index: value } } } applied over the generated arrays.
 */
export function buildRequest({ id, dimsState, seed, preset, edits, opts, causal }, variantsById) {
  const info = variantsById[id];
  const dims = resolveDims(dimsState);
  const req = requirements(id, variantsById, opts);
  const inputs = {};
  for (const k of req.dims) inputs[k] = dims[k];
  if (!('n' in inputs)) inputs.n = dims.n;
  if (!('dv' in inputs)) inputs.dv = dims.dv;
  const arrays = [];
  // the delta rules (they read beta) take unit-norm keys, as DeltaNet normalises them: each
  // transition I − β·k·kᵀ then never grows the state
  const unitKeys = req.inputs.some((x) => x.name === 'beta');
  for (const spec of req.inputs) {
    if (spec.optional) continue; // s0: the page starts every sequence from the zero state
    const arr = generateArray(spec.name, spec.shape, dims, seed, preset);
    if (spec.name === 'k' && unitKeys) unitRows(arr, dims[spec.shape[0]], dims[spec.shape[1]]);
    const e = edits?.[spec.name];
    if (e && e.full) {
      inputs[spec.name] = Float32Array.from(e.full);
    } else {
      if (e && e.len === arr.length) {
        for (const [i, val] of Object.entries(e.cells)) {
          const idx = Number(i);
          if (idx >= 0 && idx < arr.length) arr[idx] = val;
        }
      }
      inputs[spec.name] = arr;
    }
    arrays.push({ name: spec.name, shape: spec.shape, rows: spec.shape.length === 2 ? dims[spec.shape[0]] : 1, cols: spec.shape.length === 2 ? dims[spec.shape[1]] : inputs[spec.name].length });
  }
  const options = info ? apiOptions(info, opts, causal, variantsById) : { causal: !!causal };
  return { inputs, options, arrays, dims };
}

/** Shortest decimal string that reads back as the same float32. */
export function f32str(x) {
  if (!Number.isFinite(x)) return String(x);
  const f = Math.fround(x);
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  for (let p = 1; p <= 9; p++) {
    const s = Number(f.toPrecision(p));
    if (Math.fround(s) === f) return String(s);
  }
  return String(f);
}
