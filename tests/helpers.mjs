// Shared helpers for the attnlab Node test suite: the variant registry as the binding publishes
// it (lab.variants), input generation for every variant, build selection and the accuracy check
// (the bar in docs/contract.md).
//
// Inputs are generated per array from an independent stream (seed, array name; src/js/prng.js), so
// two variants called with the same seed and dims see the same q, k, v, x, ... (the mixture tests
// rely on it). Every value is rounded to float32 (Math.fround) before it is stored, so the float64
// reference sees exactly the numbers the WebAssembly module reads.
//
// Nothing here lists variant ids: what each variant reads comes from lab.variants, so a variant
// added to the registry is generated, run and checked by the suite without editing this file.

import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32, uniformArray } from '../src/js/prng.js';
import { recurrentRange } from '../src/js/reference.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export { mulberry32 };

export const BINDING_URL = process.env.ATTNLAB_BINDING
  ? pathToFileURL(process.env.ATTNLAB_BINDING).href
  : new URL('../dist/attnlab.js', import.meta.url).href;
export const BINDING_PATH = fileURLToPath(BINDING_URL);

/** The accuracy bar of docs/contract.md: |a - e| <= ABS_TOL + REL_TOL * |e|. */
export const ABS_TOL = 1e-5;
export const REL_TOL = 1e-4;

/** Sequence lengths / widths around the SIMD width (4 floats) used by the sweeps. */
export const SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65];

/** Float32Array of `len` values uniform in [-magnitude, magnitude], from stream (seed, name). */
export function randomArray(len, seed, name, magnitude = 1) {
  return uniformArray(len, seed, name, magnitude);
}

let bindingPromise;
/** The binding module (dist/attnlab.js, or $ATTNLAB_BINDING). */
export function binding() {
  bindingPromise ??= import(BINDING_URL);
  return bindingPromise;
}

// ---------------------------------------------------------------------------------------------
// The registry, read once from an instance of the binding (the metadata is the same in every build).

const registryLab = await (await binding()).init({ simd: false });

/** lab.variants: { id, family, dims, inputs: [{ name, shape }], options, mixable, ... } per variant. */
export const VARIANTS = registryLab.variants;
/** The variants a model can hold (lab.variants[i].inModels): the model tests' loops. */
export const MODEL_VARIANTS = registryLab.variants.filter((v) => v.inModels);
/** lab.options: { type, default, values?, ... } per option name. */
export const OPTIONS = registryLab.options;
export const VARIANT_IDS = VARIANTS.map((v) => v.id);
const variantById = new Map(VARIANTS.map((v) => [v.id, v]));

/** The registry entry of `id`; throws naming the known ids when there is none. */
export function variantInfo(id) {
  const v = variantById.get(id);
  if (!v) throw new Error(`variant '${id}' is not in lab.variants (${VARIANT_IDS.join(', ')})`);
  return v;
}

/** Whether a mixture may combine variant `v`'s logits (lab.variants[i].mixable). */
export function isMixable(v) {
  return v.mixable === true;
}

/** Whether `v` is a mixture of other variants (lab.variants[i].composite). */
export function isMixture(v) {
  return v.composite === true;
}

/** Shapes of every array, as dimension names (from lab.variants; one shape per array name). */
export const ARRAY_SHAPES = {};
for (const v of VARIANTS) {
  for (const { name, shape } of v.inputs) {
    const known = ARRAY_SHAPES[name];
    if (known && known.join('*') !== shape.join('*')) {
      throw new Error(`lab.variants gives array ${name} two shapes: ${known.join('*')} and ${shape.join('*')} (${v.id})`);
    }
    ARRAY_SHAPES[name] = [...shape];
  }
}

/** Arrays a variant may go without (lab.variants[i].inputs[j].optional): s0. */
export const OPTIONAL_ARRAYS = new Set(VARIANTS.flatMap((v) => v.inputs.filter((s) => s.optional).map((s) => s.name)));

/** The values `causal` may take for variant `v`: only true for a variant causal by construction. */
export function causalValues(v) {
  return v.causalOnly ? [true] : [false, true];
}

/** Arrays each variant reads (a mixture: every array any component may read). */
export const VARIANT_ARRAYS = Object.fromEntries(VARIANTS.map((v) => [v.id, v.inputs.map((s) => s.name)]));

/** Dimensions each variant reads (a mixture: every dimension any component may read). */
export const VARIANT_DIMS = Object.fromEntries(VARIANTS.map((v) => [v.id, [...v.dims]]));

/** The ids a mixture may combine, in registry order. */
export const MIXTURE_COMPONENTS = VARIANTS.filter(isMixable).map((v) => v.id);

/** The fixed patterns the binding accepts with causal: true (those that never look past row i). */
export function causalPatterns() {
  return [...OPTIONS.pattern.causalValues];
}

/** Arrays variant `id` reads; for a mixture, those of `components` (default: all) plus v. */
export function arraysFor(id, components = MIXTURE_COMPONENTS) {
  if (!isMixture(variantInfo(id))) return VARIANT_ARRAYS[id];
  const set = new Set();
  for (const c of components) for (const a of VARIANT_ARRAYS[c]) set.add(a);
  set.add('v');
  return [...set];
}

/** Dimensions variant `id` reads; for a mixture, the union over `components` (default: all). */
export function dimsFor(id, components = MIXTURE_COMPONENTS) {
  if (!isMixture(variantInfo(id))) return VARIANT_DIMS[id];
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
 * opts.components: for a mixture, which components (default: every mixable variant).
 * opts.zeroRows: { q: [rows...], k: [...] } sets those rows to 0 (edge cases for taylor/linear).
 * opts.optional: also the arrays a variant may go without (s0); left out otherwise.
 * The recurrent family's g, beta and keys are then moved into the range its bar covers
 * (recurrentRange of src/js/reference.js: g <= 0, beta in (0, 1), unit keys for the delta rules).
 */
export function makeInputs(id, dims, seed, opts = {}) {
  const { magnitude = 1, components, zeroRows, optional = false } = opts;
  const inputs = {};
  for (const dim of dimsFor(id, components)) {
    const value = dim === 'L' ? (dims.L ?? dims.n) : dims[dim];
    if (!(Number.isInteger(value) && value > 0)) {
      throw new Error(`makeInputs(${id}): dimension ${dim} = ${value} is missing or not a positive integer`);
    }
    inputs[dim] = value;
  }
  for (const name of arraysFor(id, components)) {
    if (!optional && OPTIONAL_ARRAYS.has(name)) continue;
    inputs[name] = randomArray(arrayLength(name, inputs), seed, name, magnitude);
  }
  if (variantInfo(id).family === 'recurrent') recurrentRange(inputs);
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
 * Checks |actual - expected| <= 1e-5 + 1e-4·|expected| for every element (the accuracy bar of
 * docs/contract.md), and the length.
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

// ---------------------------------------------------------------------------------------------
// The npm package as a user gets it (tests/bundlers.test.mjs, tests/types.test.mjs).

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM_BIN = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** spawnSync with the output captured; `show` describes the run for an assertion message. */
export function runCommand(cmd, args, cwd, env = {}, timeout = 300_000) {
  const r = spawnSync(cmd, args, {
    cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout, maxBuffer: 64 * 1024 * 1024,
  });
  const show = `${cmd} ${args.join(' ')} (in ${cwd}) exited with ${r.status}${r.error ? ` (${r.error.message})` : ''}` +
    `${r.signal ? ` by ${r.signal}` : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  return { ...r, show };
}

/**
 * `npm pack`s the repository into `dest` (ATTNLAB_SKIP_BUILD=1: the prepack build reuses dist/)
 * and returns the tarball's path. Throws with npm's output when it fails.
 */
export function packTarball(dest) {
  const r = runCommand(NPM_BIN, ['pack', '--json', '--pack-destination', dest], REPO_ROOT, { ATTNLAB_SKIP_BUILD: '1' });
  if (r.status !== 0) throw new Error(`npm pack failed\n${r.show}`);
  const start = r.stdout.search(/^\[\s*$/m); // lifecycle-script output may precede the JSON
  if (start < 0) throw new Error(`no JSON in the npm pack output\n${r.show}`);
  const tarball = path.join(dest, JSON.parse(r.stdout.slice(start))[0].filename);
  if (!existsSync(tarball)) throw new Error(`npm pack reported ${tarball}, which is missing; ${dest} holds ${readdirSync(dest).join(', ')}`);
  return tarball;
}

/**
 * Installs `tarball` into `project` (created, with an ES-module package.json, when it has none),
 * offline: the package has no dependencies. Returns the installed package's directory.
 */
export function installTarball(project, tarball) {
  mkdirSync(project, { recursive: true });
  const pkgPath = path.join(project, 'package.json');
  if (!existsSync(pkgPath)) {
    writeFileSync(pkgPath, JSON.stringify({ name: 'attnlab-consumer', private: true, version: '0.0.0', type: 'module' }, null, 2));
  }
  const r = runCommand(NPM_BIN, ['install', tarball, '--offline', '--no-audit', '--no-fund', '--no-package-lock'], project);
  if (r.status !== 0) throw new Error(`installing ${tarball} failed\n${r.show}`);
  const installed = path.join(project, 'node_modules', 'attnlab');
  const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  if (pkg.name !== 'attnlab') throw new Error(`${installed}/package.json names ${pkg.name}`);
  return installed;
}

/** The directory of a devDependency of the repository (esbuild, vite, typescript, ...). */
export function devDependencyDir(name) {
  const dir = path.join(REPO_ROOT, 'node_modules', name);
  if (!existsSync(path.join(dir, 'package.json'))) {
    throw new Error(`${name} is not installed in ${path.join(REPO_ROOT, 'node_modules')}: run npm install (it is a devDependency)`);
  }
  return dir;
}

/** A copy of inputs whose array `name` is a fresh Float32Array that f may change. */
export const withArray = (inputs, name, f) => {
  const a = Float32Array.from(inputs[name]);
  f(a);
  return { ...inputs, [name]: a };
};

/** A copy of obj without key. */
export const without = (obj, key) => {
  const o = { ...obj };
  delete o[key];
  return o;
};

/**
 * The one-hot mixtures over every mixable component, causal or not, with the weights given as
 * alpha or as alphaLogits (one-hot up to float64 rounding: e^-800 underflows to 0), seeds from seed0.
 */
export function oneHotMixtureCases(seed0) {
  const cases = [];
  let seed = seed0;
  const dims = { n: 11, d: 5, dv: 4, h: 6, L: 15, a: 3, b: 5, rank: 2 };
  for (const comp of MIXTURE_COMPONENTS) {
    for (const causal of [false, true]) {
      for (const form of ['alpha', 'alphaLogits']) {
        const onehot = MIXTURE_COMPONENTS.map((x) => (x === comp ? 1 : 0));
        const options = form === 'alpha'
          ? { causal, components: [...MIXTURE_COMPONENTS], alpha: onehot }
          : { causal, components: [...MIXTURE_COMPONENTS], alphaLogits: onehot.map((x) => (x ? 0 : -800)) };
        cases.push({ comp, causal, form, seed: seed++, dims: { ...dims }, options });
      }
    }
  }
  return cases;
}

/** Index of the first element whose bits differ (-1: none; the shorter length when the lengths differ). */
export function firstBitDiff(a, b) {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}

/** Whether two Float32Arrays hold the same bits (NaNs and signed zeros included). */
export const sameBits = (a, b) => firstBitDiff(a, b) < 0;

/** Asserts the same bits, naming the first index that differs, its two values and the lengths. */
export function assertSameBits(got, want, what) {
  assert.ok(got instanceof Float32Array, `${what}: not a Float32Array`);
  const i = firstBitDiff(got, want);
  assert.ok(i < 0, `${what}: index ${i} is ${got[i]}, expected ${want[i]} (lengths ${got.length}, ${want.length}; the same bits expected)`);
}

// ---------------------------------------------------------------------------------------------
// Saved models (docs/model.md, "Saved models"), written here from the format's description so that
// tests can make files of their own: a version-2 file is [u32 header length][JSON header][zero
// padding to 4 bytes][floats][u32 CRC-32 of everything before it].

/** CRC-32 (IEEE, reflected 0xEDB88320), bit by bit: independent of the binding's table-driven one. */
export function crc32Bitwise(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ 0xffffffff) >>> 0;
}

/** The parts of a version-2 saved model: header (parsed), where the floats start, their count. */
export function savedParts(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headerLength)));
  const start = 4 + Math.ceil(headerLength / 4) * 4;
  return { header, start, floats: (bytes.length - 4 - start) / 4, view };
}

/** Writes the CRC-32 of everything before the last 4 bytes into them (after a test edited a file). */
export function reseal(bytes) {
  new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).setUint32(bytes.length - 4, crc32Bitwise(bytes.subarray(0, bytes.length - 4)), true);
  return bytes;
}

/** A version-2 file with the given header object and floats, sealed. */
export function sealedModelFile(header, floats) {
  const text = new TextEncoder().encode(JSON.stringify(header));
  const start = 4 + Math.ceil(text.length / 4) * 4;
  const bytes = new Uint8Array(start + 4 * floats.length + 4);
  new DataView(bytes.buffer).setUint32(0, text.length, true);
  bytes.set(text, 4);
  new Uint8Array(bytes.buffer, start, 4 * floats.length).set(new Uint8Array(Float32Array.from(floats).buffer));
  return reseal(bytes);
}
