// Gradients: lab.attentionGrad(id, inputs, dOutput, options) -> { output, grads } on every build,
// against the float64 gradients of the definitions (referenceGrad in src/js/reference.js).
//
//   (a) the reference's analytic gradients against central differences of reference() in float64,
//       every variant and option at n <= 6: this checks the oracle itself;
//   (b) every build against referenceGrad, every variant in lab.variants, causal and not, every
//       option, sizes around the SIMD width and one n = 256 case per variant; the bar: every
//       element within 1e-4 + 1e-3·max|ref| (max over that array);
//   (c) properties: v's gradient of a softmax-type variant is Aᵀ·dO with A from attention(),
//       α's gradient of a one-hot mixture is Σ dB ⊙ B_c, the SIMD and scalar builds give the same
//       bits, attentionGrad's output is attention()'s output bit for bit;
//   (d) bad input: the errors of attention() plus dOutput's, no memory growth, a working instance.
//
// Variants, their arrays and options come from lab.variants / lab.options: a variant added to the
// registry is swept here without editing this file.
//
//   node --experimental-wasm-relaxed-simd --test tests/gradients.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { reference, referenceGrad, definitions, logits } from '../src/js/reference.js';
import {
  binding, builds, loadBuild, makeInputs, randomArray, closeTo, describeDims, describeOptions,
  ARRAY_SHAPES, VARIANTS, OPTIONS, MIXTURE_COMPONENTS, isMixable, isMixture, causalPatterns, dimsFor,
  withArray, without, oneHotMixtureCases, sameBits,
} from './helpers.mjs';

const { AttnError } = await binding();
const buildList = await builds();
const labs = {};
for (const build of buildList) labs[build] = await loadBuild(build);

/** The gradient bar: |got − ref| <= GRAD_ABS + GRAD_REL·max|ref| over the array. */
const GRAD_ABS = 1e-4;
const GRAD_REL = 1e-3;
/** Central differences against the analytic float64 gradients: FD_ABS + FD_REL·max|analytic|. */
const FD_ABS = 1e-7;
const FD_REL = 1e-6;

const CAUSAL_PATTERNS = new Set(causalPatterns());
/** The dims variant `id` (a mixture: of `components`) reads, taken from `all`. */
const pick = (id, components, all) => Object.fromEntries(dimsFor(id, components).map((k) => [k, all[k]]));
const isSoftmaxType = (id) => typeof definitions[id]?.logits === 'function';

/** Mixture weights over every component: 0.3, 0.1, 0.1, 0.2, 0.2, 0.1, ... normalised to sum 1. */
const ALL_ALPHA = (() => {
  const w = MIXTURE_COMPONENTS.map((_, i) => [3, 1, 1, 2, 2, 1][i % 6]);
  const sum = w.reduce((p, t) => p + t, 0);
  return w.map((t) => t / sum);
})();

/**
 * Option sets for variant `v`, each without and with causal (where the variant can be causal): one
 * per value of each enum option (or the defaults), a non-default scale, eps and window; a mixture
 * of every component with alpha, of two with alphaLogits, and of every component with alphaLogits
 * and the last value of each enum option and a scale.
 */
function optionConfigs(v) {
  const list = [];
  const enums = v.options.filter((o) => OPTIONS[o]?.type === 'enum');
  if (isMixture(v)) {
    const all = [...MIXTURE_COMPONENTS];
    list.push({ components: all, alpha: ALL_ALPHA });
    list.push({ components: [all[0], all[all.length - 1]], alphaLogits: [0.5, -0.5] });
    const extra = {};
    for (const name of enums) extra[name] = OPTIONS[name].values[OPTIONS[name].values.length - 1];
    if (v.options.includes('scale')) extra.scale = 0.3;
    list.push({ components: all, alphaLogits: all.map((_, i) => 0.3 * i - 0.5), ...extra });
  } else if (enums.length) {
    for (const name of enums) for (const value of OPTIONS[name].values) list.push({ [name]: value });
  } else {
    list.push({});
  }
  if (v.options.includes('scale') && !isMixture(v)) list.push({ scale: 0.25 });
  if (v.options.includes('eps')) list.push({ eps: 0.01 });
  if (v.options.includes('window')) list.push({ pattern: 'left', window: 5 }, { pattern: 'left', window: 1 }, { pattern: 'right', window: 2 });
  const out = [];
  for (const options of list) {
    if (!v.causalOnly) out.push({ ...options, causal: false });
    if (options.pattern === undefined || CAUSAL_PATTERNS.has(options.pattern)) out.push({ ...options, causal: true });
  }
  return out;
}

/** Float32Array dOutput (n×dv) from its own stream. */
const dOutputFor = ({ n, dv }, seed, magnitude = 1) => randomArray(n * dv, seed, 'dOutput', magnitude);

/** Columns of gradient `name` (for row/col in messages). */
function colsOf(name, dims, options) {
  if (name === 'alpha' || name === 'alphaLogits') return options.components.length;
  const shape = ARRAY_SHAPES[name];
  const last = shape[shape.length - 1];
  return last === 'L' ? (dims.L ?? dims.n) : dims[last];
}

/** "softmax n=17 d=4 dv=8 options{causal scale=0.25} seed=3 [simd]". */
function where(ctx) {
  const opts = describeOptions(ctx.options);
  return [ctx.variant, ctx.dims && describeDims(ctx.dims), opts && `options{${opts}}`,
    ctx.seed !== undefined && `seed=${ctx.seed}`, ctx.build && `[${ctx.build}]`, ctx.extra].filter(Boolean).join(' ');
}

/**
 * Every element of `actual` within abs + rel·max|expected| of `expected`; throws naming the case,
 * the array, the count of bad elements, the first and the worst (index, row, col, both values).
 */
function gradClose(actual, expected, ctx, abs = GRAD_ABS, rel = GRAD_REL) {
  const what = `grads.${ctx.array}`;
  if (!actual || typeof actual.length !== 'number') {
    throw new Error(`${where(ctx)}: ${what} is ${actual === undefined ? 'missing' : typeof actual}, expected ${expected.length} values`);
  }
  if (actual.length !== expected.length) {
    throw new Error(`${where(ctx)}: ${what} has ${actual.length} values, expected ${expected.length}`);
  }
  let max = 0;
  for (let i = 0; i < expected.length; i++) max = Math.max(max, Math.abs(expected[i]));
  const tol = abs + rel * max;
  let bad = 0;
  let first = -1;
  let worst = -1;
  let worstErr = -1;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i] - expected[i]);
    if (!(err <= tol)) {
      bad++;
      if (first < 0) first = i;
      const e = Number.isNaN(err) ? Infinity : err;
      if (e > worstErr) { worstErr = e; worst = i; }
    }
  }
  if (bad) {
    const cols = ctx.cols ?? expected.length;
    const at = (i) => `index ${i} (row ${Math.floor(i / cols)}, col ${i % cols}): got ${actual[i]}, expected ${expected[i]} ` +
      `(|diff| = ${Math.abs(actual[i] - expected[i]).toExponential(3)})`;
    let msg = `${where(ctx)}: ${what} differs from ${ctx.against ?? 'the reference'} at ${bad} of ${expected.length} elements ` +
      `(allowed ${tol.toExponential(3)} = ${abs} + ${rel}·max|ref| ${max.toExponential(3)}); first at ${at(first)}`;
    if (worst !== first) msg += `; worst at ${at(worst)}`;
    throw new Error(msg);
  }
}

/** Both gradient sets name the same arrays, and each matches. */
function gradsClose(got, expected, ctx) {
  const a = Object.keys(got).sort();
  const e = Object.keys(expected).sort();
  assert.deepEqual(a, e, `${where(ctx)}: attentionGrad returns grads for [${a.join(', ')}], expected [${e.join(', ')}]`);
  for (const name of e) {
    const g = got[name];
    assert.ok(g instanceof Float32Array, `${where(ctx)}: grads.${name} is not a Float32Array`);
    gradClose(g, expected[name], { ...ctx, array: name, cols: colsOf(name, ctx.dims, ctx.options) });
  }
}

/** The first index where two Float32Arrays differ in bits, or -1. */
function firstBitDifference(a, b) {
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return a.length === b.length ? -1 : Math.min(a.length, b.length);
}

// ---------------------------------------------------------------------------------------------
// (a) The float64 reference's analytic gradients against central differences of reference().

/** Small shapes: L > n, L = n (a·b = L for factorized-dense), and n = 1. */
const FD_DIMS = [
  { n: 5, d: 3, dv: 2, h: 3, a: 2, b: 3, L: 6, rank: 2 },
  { n: 6, d: 2, dv: 3, h: 4, a: 3, b: 2, L: 6, rank: 3 },
  { n: 1, d: 2, dv: 2, h: 2, a: 1, b: 2, L: 2, rank: 1 },
];

/** Σ dO ⊙ y in float64. */
function objective(id, inputs, dO, options) {
  const y = reference(id, inputs, options).output;
  let s = 0;
  for (let i = 0; i < y.length; i++) s += y[i] * dO[i];
  return s;
}

describe('(a) referenceGrad is the gradient of reference(): central differences in float64', () => {
  let seed = 20000;
  for (const v of VARIANTS) {
    for (const options of optionConfigs(v)) {
      for (const all of FD_DIMS) {
        const s = seed++;
        const dims = Object.fromEntries(dimsFor(v.id, options.components).map((k) => [k, all[k]]));
        const ctx = { variant: v.id, dims, seed: s, options, build: 'float64 reference' };
        test(where(ctx), () => {
          const f32 = makeInputs(v.id, dims, s, { magnitude: 2, components: options.components, optional: s % 2 === 0 });
          const inputs = {};
          for (const [k, x] of Object.entries(f32)) inputs[k] = ArrayBuffer.isView(x) ? Float64Array.from(x) : x;
          const dO = Float64Array.from(dOutputFor(dims, s, 2));
          const { output, grads } = referenceGrad(v.id, inputs, dO, options);
          closeTo(output, reference(v.id, inputs, options).output, { ...ctx, what: 'referenceGrad output vs reference()' }, 1e-14, 1e-12);
          // which arrays: those the call reads (a mixture: its components' and v), plus α's form
          const expectedNames = isMixture(v)
            ? [...new Set([...options.components.flatMap((c) => VARIANTS.find((x) => x.id === c).inputs.map((i) => i.name)), 'v']),
              options.alphaLogits ? 'alphaLogits' : 'alpha']
            : v.inputs.filter((i) => f32[i.name] !== undefined).map((i) => i.name);
          assert.deepEqual(Object.keys(grads).sort(), [...expectedNames].sort(), `${where(ctx)}: referenceGrad's arrays`);
          for (const [name, g] of Object.entries(grads)) {
            const inOptions = name === 'alpha' || name === 'alphaLogits';
            const base = inOptions ? Float64Array.from(options[name]) : inputs[name];
            assert.equal(g.length, base.length, `${where(ctx)}: grads.${name} length`);
            const fd = new Float64Array(base.length);
            for (let t = 0; t < base.length; t++) {
              const x = base[t];
              const h = 1e-5 * Math.max(1, Math.abs(x));
              const at = (value) => {
                const arr = Float64Array.from(base);
                arr[t] = value;
                return inOptions
                  ? objective(v.id, inputs, dO, { ...options, [name]: Array.from(arr) })
                  : objective(v.id, { ...inputs, [name]: arr }, dO, options);
              };
              fd[t] = (at(x + h) - at(x - h)) / (2 * h);
            }
            // the analytic gradient plays the role of the reference here, the differences of the result
            gradClose(fd, g, { ...ctx, array: name, cols: colsOf(name, dims, options), against: 'the analytic gradient (central differences as got)' }, FD_ABS, FD_REL);
          }
        });
      }
    }
  }
});

// ---------------------------------------------------------------------------------------------
// (b) attentionGrad on every build against referenceGrad.

const N_SWEEP = [1, 3, 4, 5, 15, 16, 17, 33, 64, 65];
const WIDTHS = [1, 3, 4, 8, 17];

/**
 * The dims of sweep case t at length n: d, dv, h, rank and b cycle through WIDTHS; a·b >= n
 * (a one larger on odd t); L = a·b where the variant reads a and b, else n or a little more.
 */
function sweepDims(id, components, n, t) {
  const all = { n, d: WIDTHS[t % 5], dv: WIDTHS[(t + 2) % 5], h: WIDTHS[(t + 1) % 5], rank: WIDTHS[(t + 3) % 5], b: WIDTHS[(t + 4) % 5] };
  all.a = Math.ceil(n / all.b) + (t % 2);
  const names = dimsFor(id, components);
  all.L = names.includes('a') ? all.a * all.b : t % 3 === 0 ? n : n + 1 + (t % 4);
  return Object.fromEntries(names.map((k) => [k, all[k]]));
}

/** Every sweep case: { id, dims, options, seed }, with the big n = 256 case of each variant. */
function sweepCases() {
  const cases = [];
  let seed = 30000;
  VARIANTS.forEach((v, vi) => {
    optionConfigs(v).forEach((options, ci) => {
      N_SWEEP.forEach((n, ni) => cases.push({ id: v.id, dims: sweepDims(v.id, options.components, n, ni + ci + vi), options, seed: seed++ }));
    });
    const configs = optionConfigs(v);
    const options = configs.find((o) => o.causal === (vi % 2 === 1)) ?? configs[0];
    const all = { n: 256, d: 17, dv: 4, h: 8, rank: 3, a: 16, b: 16 };
    const names = dimsFor(v.id, options.components);
    all.L = names.includes('a') ? 256 : 260;
    cases.push({ id: v.id, dims: Object.fromEntries(names.map((k) => [k, all[k]])), options, seed: seed++, big: true });
  });
  // plain-linear and the delta rules with d, dv >= 32 and a state of 64 x 64 floats or more, gla from 128 x 128: their
  // chunked forms (and the backward's own forward pass in them), around the chunk of 16 tokens
  for (const [id, n, d, dv] of [['plain-linear', 17, 64, 64], ['plain-linear', 40, 131, 127], ['plain-linear', 33, 128, 32],
    ['gla', 17, 128, 128], ['gla', 40, 131, 129], ['deltanet', 17, 64, 64], ['deltanet', 40, 33, 130], ['gated-deltanet', 17, 64, 64], ['gated-deltanet', 40, 131, 33]]) {
    cases.push({ id, dims: { n, d, dv }, options: {}, seed: seed++, extra: 'chunked form' });
  }
  // Running maxima: k rows a ramp from -4 to 4 (or back), so a streaming softmax (forward and
  // backward) and causal efficient's prefix column softmax meet a new maximum at every key block.
  // Every variant that reads k; a mixture through softmax with a component that does not.
  for (const v of VARIANTS.filter((x) => x.inputs.some((i) => i.name === 'k') && x.family !== 'recurrent')) {
    for (const dir of ['rising', 'falling']) {
      for (const causal of [false, true]) {
        const options = isMixture(v) ? { causal, components: ['softmax', 'random'], alpha: [0.7, 0.3] } : { causal };
        const dims = pick(v.id, options.components, { n: 70, d: 4, dv: 3, L: 70 });
        const mutate = (inputs) => {
          for (let j = 0; j < dims.n; j++) {
            const t = -4 + (8 * j) / (dims.n - 1);
            for (let c = 0; c < dims.d; c++) inputs.k[j * dims.d + c] = dir === 'rising' ? t : -t;
          }
          if (isSoftmaxType(v.id)) inputs.q.fill(4); // logits up to ±32
        };
        cases.push({ id: v.id, dims, options, seed: seed++, mutate, extra: `k ${dir}` });
      }
    }
  }
  // causal efficient: a k column jumps by 200 inside a chunk (exp(-100) underflows float32), so the
  // forward falls back to its exact row-by-row update there; the backward must follow it
  for (const spikes of [[3], [70, 100], [5, 70, 140, 195]]) {
    const dims = { n: 200, d: 5, dv: 3 };
    const mutate = (inputs) => {
      for (const j of spikes) {
        inputs.k[j * dims.d + 1] = 100;
        inputs.k[(j - 1) * dims.d + 1] = -100;
        inputs.k[j * dims.d + 3] = -100;
      }
    };
    cases.push({ id: 'efficient', dims, options: { causal: true }, seed: seed++, mutate, extra: `k spikes at ${spikes}` });
  }
  return cases;
}
const SWEEP = sweepCases();

const refCache = new Map();
/** referenceGrad of a sweep case, computed once for all builds. */
function sweepReference(c, key) {
  if (!refCache.has(key)) {
    // every other case with the arrays a variant may go without (the recurrent family's s0)
    const inputs = makeInputs(c.id, c.dims, c.seed, { components: c.options.components, optional: c.seed % 2 === 0 });
    if (c.mutate) c.mutate(inputs);
    const dO = dOutputFor(c.dims, c.seed);
    refCache.set(key, { inputs, dO, ref: referenceGrad(c.id, inputs, dO, c.options) });
  }
  return refCache.get(key);
}

for (const build of buildList) {
  describe(`(b) attentionGrad against referenceGrad [${build}]`, () => {
    const lab = labs[build];
    SWEEP.forEach((c, key) => {
      const ctx = { variant: c.id, dims: c.dims, seed: c.seed, options: c.options, build, extra: c.extra };
      test(where(ctx), () => {
        const { inputs, dO, ref } = sweepReference(c, key);
        const r = lab.attentionGrad(c.id, inputs, dO, c.options);
        assert.ok(r.output instanceof Float32Array, `${where(ctx)}: output is not a Float32Array`);
        closeTo(r.output, ref.output, { ...ctx, what: 'attentionGrad output', cols: c.dims.dv });
        gradsClose(r.grads, ref.grads, ctx);
        if (build === buildList[buildList.length - 1]) refCache.delete(key);
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// (c) Properties.

const PROP_DIMS = [
  { n: 5, d: 3, dv: 4, h: 4, a: 2, b: 3, L: 6, rank: 2 },
  { n: 17, d: 8, dv: 3, h: 5, a: 5, b: 4, L: 20, rank: 3 },
  { n: 64, d: 4, dv: 17, h: 3, a: 8, b: 8, L: 64, rank: 4 },
];

for (const build of buildList) {
  describe(`(c) properties [${build}]`, () => {
    const lab = labs[build];

    describe('v\'s gradient of a softmax-type variant is Aᵀ·dO, A from attention(…, { weights: true })', () => {
      let seed = 40000;
      for (const v of VARIANTS.filter((x) => isSoftmaxType(x.id))) {
        for (const options of optionConfigs(v)) {
          for (const all of PROP_DIMS) {
            const s = seed++;
            const dims = pick(v.id, options.components, all);
            const ctx = { variant: v.id, dims, seed: s, options, build };
            test(where(ctx), () => {
              const inputs = makeInputs(v.id, dims, s, { components: options.components });
              const dO = dOutputFor(dims, s);
              const { weights } = lab.attention(v.id, inputs, { ...options, weights: true });
              const { n, dv } = dims;
              const expected = new Float64Array(n * dv);
              for (let i = 0; i < n; i++) {
                for (let j = 0; j < n; j++) {
                  const a = weights[i * n + j];
                  for (let c = 0; c < dv; c++) expected[j * dv + c] += a * dO[i * dv + c];
                }
              }
              const { grads } = lab.attentionGrad(v.id, inputs, dO, options);
              gradClose(grads.v, expected, { ...ctx, array: 'v', cols: dv, against: 'Aᵀ·dO (A from attention())' });
            });
          }
        }
      }
    });

    for (const mix of VARIANTS.filter(isMixture)) {
      describe(`${mix.id}: α's gradient with one-hot α is Σ dB ⊙ B_c over every component c`, () => {
        for (const { comp, causal, form, seed: s, dims, options } of oneHotMixtureCases(41000)) {
          const ctx = { variant: mix.id, dims, seed: s, options, build, extra: `one-hot ${comp}` };
          test(where(ctx), () => {
            const inputs = makeInputs(mix.id, dims, s);
            const dO = dOutputFor(dims, s);
            // dB = A ⊙ (dP − rowsum(dP ⊙ A)), dP = dO·vᵀ, A the component's own (float64)
            const { n, dv } = dims;
            const A = reference(comp, inputs, { causal }).weights;
            const dB = new Float64Array(n * n);
            for (let i = 0; i < n; i++) {
              const dP = new Float64Array(n);
              let g = 0;
              for (let j = 0; j < n; j++) {
                for (let c = 0; c < dv; c++) dP[j] += dO[i * dv + c] * inputs.v[j * dv + c];
                g += dP[j] * A[i * n + j];
              }
              for (let j = 0; j < n; j++) dB[i * n + j] = A[i * n + j] * (dP[j] - g);
            }
            const expected = MIXTURE_COMPONENTS.map((c) => {
              const B = logits(c, inputs, { causal });
              let t = 0;
              for (let x = 0; x < n * n; x++) t += dB[x] * B[x];
              return t;
            });
            const wanted = form === 'alpha' ? Float64Array.from(expected) : new Float64Array(expected.length);
            // the reference agrees (a check of the oracle), then the build
            const ref = referenceGrad(mix.id, inputs, dO, options).grads[form];
            gradClose(ref, wanted, { ...ctx, build: 'float64 reference', array: form, cols: wanted.length, against: 'Σ dB ⊙ B_c' }, 1e-12, 1e-9);
            const { grads } = lab.attentionGrad(mix.id, inputs, dO, options);
            gradClose(grads[form], wanted, { ...ctx, array: form, cols: wanted.length, against: 'Σ dB ⊙ B_c' });
          });
        }
      });
    }

    describe('attentionGrad\'s output is attention()\'s output, bit for bit', () => {
      let seed = 42000;
      for (const v of VARIANTS) {
        for (const options of optionConfigs(v)) {
          const s = seed++;
          const dims = pick(v.id, options.components, PROP_DIMS[s % 2 ? 1 : 2]);
          const ctx = { variant: v.id, dims, seed: s, options, build };
          test(where(ctx), () => {
            const inputs = makeInputs(v.id, dims, s, { components: options.components });
            const forward = lab.attention(v.id, inputs, options).output;
            const { output } = lab.attentionGrad(v.id, inputs, dOutputFor(dims, s), options);
            const at = firstBitDifference(output, forward);
            assert.ok(at < 0, `${where(ctx)}: attentionGrad output differs from attention() output at index ${at} ` +
              `(row ${Math.floor(at / dims.dv)}, col ${at % dims.dv}): ${output[at]} vs ${forward[at]}`);
          });
        }
      }
    });
  });
}

describe('(c) the SIMD and scalar builds give bit-identical gradients', () => {
  const pair = ['scalar', 'simd'].filter((b) => buildList.includes(b));
  let seed = 43000;
  for (const v of VARIANTS) {
    for (const options of optionConfigs(v)) {
      for (const all of [PROP_DIMS[0], PROP_DIMS[2]]) {
        const s = seed++;
        const dims = pick(v.id, options.components, all);
        const ctx = { variant: v.id, dims, seed: s, options, build: pair.join(' vs ') };
        test(where(ctx), () => {
          const inputs = makeInputs(v.id, dims, s, { components: options.components, optional: true });
          const dO = dOutputFor(dims, s);
          const [a, b] = pair.map((build) => labs[build].attentionGrad(v.id, inputs, dO, options));
          assert.ok(sameBits(a.output, b.output), `${where(ctx)}: output differs in bits`);
          assert.deepEqual(Object.keys(a.grads).sort(), Object.keys(b.grads).sort(), `${where(ctx)}: grads name different arrays`);
          for (const name of Object.keys(a.grads)) {
            const at = firstBitDifference(a.grads[name], b.grads[name]);
            assert.ok(at < 0, `${where(ctx)}: grads.${name}[${at}] differs in bits: ${a.grads[name][at]} [${pair[0]}] vs ${b.grads[name][at]} [${pair[1]}]`);
          }
        });
      }
    }
  }
});

// ---------------------------------------------------------------------------------------------
// (d) Bad input to attentionGrad.

const SOFTMAX_DIMS = { n: 4, d: 8, dv: 3 };
const MIX_DIMS = { n: 6, d: 4, dv: 3, h: 5, L: 8, a: 2, b: 4, rank: 2 };
const MIX = { components: ['softmax', 'random'], alpha: [0.5, 0.5] };
const NOT_MIXABLE = VARIANTS.find((v) => !isMixable(v) && !isMixture(v)).id;
const good = {
  softmax: () => makeInputs('softmax', SOFTMAX_DIMS, 1),
  random: () => makeInputs('random', { n: 6, dv: 3, L: 8 }, 3),
  fd: () => makeInputs('factorized-dense', { n: 6, d: 4, dv: 3, a: 2, b: 4, L: 8 }, 4),
  fixed: () => makeInputs('fixed', { n: 6, dv: 3 }, 6),
  linear: () => makeInputs('linear', SOFTMAX_DIMS, 10),
  mixture: () => makeInputs('mixture', MIX_DIMS, 5, { components: MIX.components }),
};
const dO43 = () => dOutputFor(SOFTMAX_DIMS, 1); // n×dv = 12
const dO63 = () => dOutputFor({ n: 6, dv: 3 }, 2); // 18

// A call bigger than any before it, so that it would need memory to grow, whose dOutput holds a value
// finite in float64 that overflows float32 (or a NaN): it must fail before memory grows.
const GROW_DIMS = { n: 100000, d: 4, dv: 4 };
const growInputs = makeInputs('linear', GROW_DIMS, 11);
const growDO = dOutputFor(GROW_DIMS, 11);
const growBadPlain = Array.from(growDO, (x, i) => (i === 7 ? 1e39 : x));
const growBadTyped = Float32Array.from(growDO, (x, i) => (i === growDO.length - 1 ? NaN : x));

/** name, id, inputs (thunk), dOutput (thunk; default: a good one for softmax), options, code, mentions. */
const CASES = [
  // --- the variant and the containers
  { name: 'unknown variant id', id: 'softmx', inputs: good.softmax, code: 'UNKNOWN', mentions: [/softmx/] },
  { name: 'variant id not a string', id: 42, inputs: good.softmax, code: 'UNKNOWN', mentions: [/42/] },
  { name: 'inputs null', id: 'softmax', inputs: () => null, code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'inputs a string', id: 'softmax', inputs: () => 'q k v', code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'options a number', id: 'softmax', inputs: good.softmax, options: 7, code: 'VALUE', mentions: [/\boptions\b/] },
  { name: 'unknown input name', id: 'softmax', inputs: () => ({ ...good.softmax(), kk: new Float32Array(32) }), code: 'UNKNOWN', mentions: [/\bkk\b/] },
  // --- arrays the variant reads
  { name: 'q missing', id: 'softmax', inputs: () => without(good.softmax(), 'q'), code: 'SHAPE', mentions: [/\bq\b/] },
  { name: 'k too short', id: 'softmax', inputs: () => ({ ...good.softmax(), k: new Float32Array(30) }), code: 'SHAPE', mentions: [/\bk\b/, /\b30\b/, /\b32\b/] },
  { name: 'v wrong length (plain array)', id: 'softmax', inputs: () => ({ ...good.softmax(), v: [1, 2, 3] }), code: 'SHAPE', mentions: [/\bv\b/, /\b12\b/] },
  { name: 'r missing in a mixture with random', id: 'mixture', inputs: () => without(good.mixture(), 'r'), dOutput: dO63, options: MIX, code: 'SHAPE', mentions: [/\br\b/] },
  { name: 'bb wrong length', id: 'factorized-dense', inputs: () => ({ ...good.fd(), bb: new Float32Array(3) }), dOutput: dO63, code: 'SHAPE', mentions: [/\bbb\b/] },
  { name: 'n non-integer', id: 'softmax', inputs: () => ({ ...good.softmax(), n: 2.5 }), code: 'SHAPE', mentions: [/\bn\b/] },
  { name: 'dv missing', id: 'softmax', inputs: () => without(good.softmax(), 'dv'), code: 'SHAPE', mentions: [/\bdv\b/] },
  { name: 'NaN in q', id: 'softmax', inputs: () => withArray(good.softmax(), 'q', (a) => { a[5] = NaN; }), code: 'VALUE', mentions: [/\bq\b/] },
  { name: 'Infinity in v', id: 'fixed', inputs: () => withArray(good.fixed(), 'v', (a) => { a[2] = Infinity; }), dOutput: dO63, code: 'VALUE', mentions: [/\bv\b/] },
  // --- dOutput
  { name: 'dOutput missing', id: 'softmax', inputs: good.softmax, dOutput: () => undefined, code: 'SHAPE', mentions: [/\bdOutput\b/] },
  { name: 'dOutput null', id: 'softmax', inputs: good.softmax, dOutput: () => null, code: 'SHAPE', mentions: [/\bdOutput\b/] },
  { name: 'dOutput a string', id: 'softmax', inputs: good.softmax, dOutput: () => 'dO', code: 'SHAPE', mentions: [/\bdOutput\b/] },
  { name: 'dOutput a number', id: 'linear', inputs: good.linear, dOutput: () => 1, code: 'SHAPE', mentions: [/\bdOutput\b/] },
  { name: 'dOutput too short', id: 'softmax', inputs: good.softmax, dOutput: () => new Float32Array(11), code: 'SHAPE', mentions: [/\bdOutput\b/, /\b11\b/, /\b12\b/] },
  { name: 'dOutput too long (plain array)', id: 'softmax', inputs: good.softmax, dOutput: () => Array.from({ length: 13 }, () => 0.5), code: 'SHAPE', mentions: [/\bdOutput\b/, /\b13\b/, /\b12\b/] },
  { name: 'dOutput n×d instead of n×dv', id: 'softmax', inputs: good.softmax, dOutput: () => new Float32Array(32), code: 'SHAPE', mentions: [/\bdOutput\b/, /\b32\b/, /\b12\b/] },
  { name: 'dOutput n×dv of another variant\'s n', id: 'fixed', inputs: good.fixed, dOutput: dO43, code: 'SHAPE', mentions: [/\bdOutput\b/, /\b18\b/] },
  { name: 'NaN in dOutput', id: 'softmax', inputs: good.softmax, dOutput: () => withArray({ a: dO43() }, 'a', (a) => { a[3] = NaN; }).a, code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: '-Infinity in dOutput', id: 'mixture', inputs: good.mixture, options: MIX, dOutput: () => withArray({ a: dO63() }, 'a', (a) => { a[17] = -Infinity; }).a, code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: '1e39 (overflows float32) in plain-array dOutput', id: 'linear', inputs: good.linear, dOutput: () => Array.from(dO43(), (x, i) => (i === 4 ? 1e39 : x)), code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: 'a string inside plain-array dOutput', id: 'softmax', inputs: good.softmax, dOutput: () => Array.from(dO43(), (x, i) => (i === 2 ? '1' : x)), code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: 'NaN in Float64Array dOutput', id: 'softmax', inputs: good.softmax, dOutput: () => Float64Array.from(dO43(), (x, i) => (i === 0 ? NaN : x)), code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: `1e39 in plain-array dOutput of a call that needs more memory (linear n=${GROW_DIMS.n})`, id: 'linear', inputs: () => growInputs, dOutput: () => growBadPlain, code: 'VALUE', mentions: [/\bdOutput\b/] },
  { name: `NaN in Float32Array dOutput of a call that needs more memory (linear n=${GROW_DIMS.n})`, id: 'linear', inputs: () => growInputs, dOutput: () => growBadTyped, code: 'VALUE', mentions: [/\bdOutput\b/] },
  // --- options attentionGrad does not take
  { name: 'weights: true', id: 'softmax', inputs: good.softmax, options: { weights: true }, code: 'UNSUPPORTED', mentions: [/\bweights\b/] },
  { name: 'weights: true on fixed', id: 'fixed', inputs: good.fixed, dOutput: dO63, options: { weights: true, pattern: 'first' }, code: 'UNSUPPORTED', mentions: [/\bweights\b/] },
  { name: 'state: true on linear', id: 'linear', inputs: good.linear, options: { state: true }, code: 'UNSUPPORTED', mentions: [/\bstate\b/] },
  { name: 'state: true on softmax', id: 'softmax', inputs: good.softmax, options: { state: true }, code: 'UNSUPPORTED', mentions: [/\bstate\b/] },
  // --- options as attention() checks them
  { name: 'unknown option name', id: 'softmax', inputs: good.softmax, options: { casual: true }, code: 'UNKNOWN', mentions: [/\bcasual\b/] },
  { name: 'an option the variant cannot honour (tiling on softmax)', id: 'softmax', inputs: good.softmax, options: { tiling: 'tile' }, code: 'UNSUPPORTED', mentions: [/\btiling\b/] },
  { name: 'causal not a boolean', id: 'softmax', inputs: good.softmax, options: { causal: 'yes' }, code: 'VALUE', mentions: [/\bcausal\b/] },
  { name: 'scale NaN', id: 'softmax', inputs: good.softmax, options: { scale: NaN }, code: 'VALUE', mentions: [/\bscale\b/] },
  { name: 'eps Infinity', id: 'linear', inputs: good.linear, options: { eps: Infinity }, code: 'VALUE', mentions: [/\beps\b/] },
  { name: 'bad tiling value', id: 'factorized-dense', inputs: good.fd, dOutput: dO63, options: { tiling: 'tiles' }, code: 'VALUE', mentions: [/\btiling\b/, /tiles/] },
  { name: 'window negative', id: 'fixed', inputs: good.fixed, dOutput: dO63, options: { pattern: 'left', window: -1 }, code: 'VALUE', mentions: [/\bwindow\b/] },
  { name: 'causal next', id: 'fixed', inputs: good.fixed, dOutput: dO63, options: { pattern: 'next', causal: true }, code: 'UNSUPPORTED', mentions: [/\bnext\b/, /causal/] },
  { name: 'a·b ≠ L', id: 'factorized-dense', inputs: () => ({ ...good.fd(), L: 9 }), dOutput: dO63, code: 'VALUE', mentions: [/\bL\b/, /a\s*[*·]\s*b/, /\b9\b/] },
  { name: 'L < n', id: 'random', inputs: () => ({ ...good.random(), L: 5, r: new Float32Array(25) }), dOutput: dO63, code: 'VALUE', mentions: [/\bL\b/, /\bn\b/, /\b5\b/] },
  { name: 'alpha not summing to 1', id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { ...MIX, alpha: [0.5, 0.4] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alpha negative', id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { ...MIX, alpha: [1.5, -0.5] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alphaLogits wrong length', id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { components: MIX.components, alphaLogits: [0] }, code: 'VALUE', mentions: [/\balphaLogits\b/] },
  { name: 'neither alpha nor alphaLogits', id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { components: MIX.components }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: `non-mixable component (${NOT_MIXABLE})`, id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { components: ['softmax', NOT_MIXABLE], alpha: [0.5, 0.5] }, code: 'UNSUPPORTED', mentions: [new RegExp(`\\b${NOT_MIXABLE}\\b`), /component/] },
  { name: 'misspelt component', id: 'mixture', inputs: good.mixture, dOutput: dO63, options: { components: ['softmax', 'randum'], alpha: [0.5, 0.5] }, code: 'UNKNOWN', mentions: [/\brandum\b/] },
];

function describeCall(c, build) {
  return `${c.name}: attentionGrad(${JSON.stringify(c.id)}, …${c.options !== undefined ? `, ${JSON.stringify(c.options)}` : ''}) [${build}]`;
}

/** Runs one bad case: an AttnError with the code and a message naming the input, or a failed assertion. */
function expectAttnError(lab, c, build, inputs = c.inputs(), dOutput = (c.dOutput ?? dO43)()) {
  const at = describeCall(c, build);
  let err;
  try {
    lab.attentionGrad(c.id, inputs, dOutput, c.options);
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${at}: did not throw`);
  assert.ok(err instanceof AttnError, `${at}: threw ${err?.constructor?.name}: ${err?.message}, expected an AttnError`);
  assert.equal(err.code, c.code, `${at}: code ${err.code} (message: "${err.message}"), expected ${c.code}`);
  for (const re of c.mentions) assert.match(err.message, re, `${at}: message "${err.message}" does not mention ${re}`);
}

/** Correct calls after an error: attention() of softmax and a mixture, attentionGrad of fixed. */
function checkStillWorking(lab, build, after) {
  for (const [id, inputs, options] of [['softmax', good.softmax(), { causal: true }], ['mixture', good.mixture(), MIX]]) {
    const { output } = lab.attention(id, inputs, options);
    closeTo(output, reference(id, inputs, options).output, { variant: id, build, dims: inputs, options, cols: inputs.dv, extra: `after "${after}"` });
  }
  const inputs = good.fixed();
  const options = { pattern: 'left', window: 2 };
  const dO = dO63();
  const r = lab.attentionGrad('fixed', inputs, dO, options);
  gradsClose(r.grads, referenceGrad('fixed', inputs, dO, options).grads, { variant: 'fixed', build, dims: { n: 6, dv: 3 }, options, extra: `after "${after}"` });
}

for (const build of buildList) {
  describe(`(d) bad input to attentionGrad [${build}]`, () => {
    let lab;
    test(`load [${build}]`, async () => {
      lab = await loadBuild(build);
      checkStillWorking(lab, build, 'warm-up');
    });

    for (const c of CASES) {
      test(`${c.name} [${build}]`, () => {
        const inputs = c.inputs();
        const dOutput = (c.dOutput ?? dO43)();
        const before = lab.memoryBytes();
        expectAttnError(lab, c, build, inputs, dOutput);
        assert.equal(lab.memoryBytes(), before, `${describeCall(c, build)}: memoryBytes grew from ${before} to ${lab.memoryBytes()} during the failed call`);
        checkStillWorking(lab, build, c.name);
      });
    }

    test(`weights: false and null, state: false are accepted [${build}]`, () => {
      const inputs = good.linear();
      const dO = dO43();
      const plain = lab.attentionGrad('linear', inputs, dO, {});
      for (const options of [{ weights: false }, { weights: null, state: null }, { state: false }]) {
        const r = lab.attentionGrad('linear', inputs, dO, options);
        assert.ok(sameBits(r.output, plain.output), `linear options ${JSON.stringify(options)} [${build}]: output differs from the call without options`);
        for (const name of Object.keys(plain.grads)) {
          assert.ok(sameBits(r.grads[name], plain.grads[name]), `linear options ${JSON.stringify(options)} [${build}]: grads.${name} differs from the call without options`);
        }
      }
    });

    test(`after every bad call, attentionGrad of every variant still matches referenceGrad [${build}]`, () => {
      let seed = 44000;
      for (const v of VARIANTS) {
        const options = optionConfigs(v)[0];
        const s = seed++;
        const dims = pick(v.id, options.components, PROP_DIMS[1]);
        const inputs = makeInputs(v.id, dims, s, { components: options.components });
        const dO = dOutputFor(dims, s);
        const r = lab.attentionGrad(v.id, inputs, dO, options);
        const ref = referenceGrad(v.id, inputs, dO, options);
        const ctx = { variant: v.id, dims, seed: s, options, build, extra: 'after the bad calls' };
        closeTo(r.output, ref.output, { ...ctx, cols: dims.dv });
        gradsClose(r.grads, ref.grads, ctx);
      }
    });

    test(`1000 failing calls do not grow memory [${build}]`, async () => {
      lab.dispose();
      lab = await loadBuild(build);
      checkStillWorking(lab, build, 'warm-up');
      const before = lab.memoryBytes();
      const args = CASES.map((c) => [c.inputs(), (c.dOutput ?? dO43)()]); // built once, outside the loop
      const growth = [];
      let last = before;
      for (let i = 0; i < 1000; i++) {
        const t = i % CASES.length;
        const c = CASES[t];
        let threw = false;
        try { lab.attentionGrad(c.id, args[t][0], args[t][1], c.options); } catch (e) { threw = e instanceof AttnError; }
        assert.ok(threw, `${describeCall(c, build)}: call ${i} did not throw an AttnError`);
        const now = lab.memoryBytes();
        if (now !== last) growth.push(`call ${i} ("${c.name}") ${last} -> ${now}`);
        last = now;
      }
      assert.equal(lab.memoryBytes(), before,
        `[${build}]: memoryBytes grew from ${before} to ${lab.memoryBytes()} over 1000 failing attentionGrad calls: ${growth.join('; ')}`);
      checkStillWorking(lab, build, '1000 failing calls');
    });

    test(`attentionGrad after dispose() throws DISPOSED [${build}]`, () => {
      lab.dispose();
      let err;
      try { lab.attentionGrad('fixed', good.fixed(), dO63(), {}); } catch (e) { err = e; }
      assert.ok(err instanceof AttnError, `[${build}]: attentionGrad after dispose() threw ${err?.constructor?.name ?? 'nothing'}, expected an AttnError`);
      assert.equal(err.code, 'DISPOSED', `[${build}]: code of the error after dispose() (message "${err.message}")`);
    });
  });
}
