// The binding's surface beyond attention(): caching, overrides, load failures, option metadata.
import test, { describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { init, AttnError, features, version } from '../dist/attnlab.js';
import { builds, causalValues, closeTo, loadBuild, makeInputs, variantInfo, VARIANTS } from './helpers.mjs';
import { reference, definitions } from '../src/js/reference.js';

const distUrl = new URL('../dist/', import.meta.url);

test('init() is cached per build and dispose() makes the next init() load a new instance', async () => {
  const a = await init({ simd: false });
  const b = await init({ simd: false });
  assert.equal(a, b);
  a.dispose();
  assert.throws(() => a.attention('fixed', { n: 1, dv: 1, v: [1] }), (e) => e instanceof AttnError && e.code === 'DISPOSED');
  const c = await init({ simd: false });
  assert.notEqual(c, a);
  assert.equal(c.attention('fixed', { n: 1, dv: 1, v: [2] }).output[0], 2);
});

test('wasmBinary and locateFile load the named build, uncached', async () => {
  const bytes = await readFile(new URL('attnlab-scalar.wasm', distUrl));
  const fromBytes = await init({ simd: false, wasmBinary: bytes });
  assert.equal(fromBytes.build, 'scalar');
  assert.notEqual(fromBytes, await init({ simd: false }));
  const seen = [];
  const located = await init({ simd: true, threads: 1, locateFile: (file) => { seen.push(file); return fileURLToPath(new URL(file, distUrl)); } });
  assert.deepEqual(seen, ['attnlab-simd.wasm']);
  assert.equal(located.build, 'simd');
  const inputs = makeInputs('softmax', { n: 5, d: 3, dv: 2 }, 7);
  const expected = reference('softmax', inputs, {}).output;
  for (const lab of [fromBytes, located]) {
    const { output } = lab.attention('softmax', inputs);
    output.forEach((y, i) => assert.ok(Math.abs(y - expected[i]) <= 1e-5 + 1e-4 * Math.abs(expected[i]), `[${lab.build}] y[${i}] = ${y}, expected ${expected[i]}`));
  }
});

test('a module that cannot be found or run fails with LOAD and says how to fix it', async () => {
  await assert.rejects(init({ simd: false, locateFile: () => '/nonexistent/attnlab-scalar.wasm' }),
    (e) => e instanceof AttnError && e.code === 'LOAD' && /nonexistent/.test(e.message) && /locateFile|wasmBinary/.test(e.message));
  await assert.rejects(init({ simd: false, wasmBinary: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) }),
    (e) => e instanceof AttnError && e.code === 'LOAD' && /scalar/.test(e.message));
  // a failed load is not cached: the next call succeeds
  assert.equal((await init({ simd: false })).build, 'scalar');
});

test('bad init options are rejected with a code', async () => {
  await assert.rejects(init({ simd: 'yes' }), (e) => e.code === 'VALUE' && /simd/.test(e.message));
  await assert.rejects(init({ smd: true }), (e) => e.code === 'UNKNOWN' && /smd/.test(e.message));
  if (!features().relaxedSimd) {
    await assert.rejects(init({ simd: 'relaxed' }), (e) => e.code === 'UNSUPPORTED' && /relaxed/.test(e.message));
  }
});

test('lab.options describes every option, and every listed value is accepted', async () => {
  const lab = await init({ simd: true });
  assert.equal(lab.version, version);
  assert.deepEqual(Object.keys(lab.options).sort(),
    ['alpha', 'alphaLogits', 'causal', 'components', 'eps', 'keep', 'pattern', 'scale', 'state', 'tiling', 'weights', 'window']);
  const fixed = { n: 6, dv: 2, v: Float32Array.from({ length: 12 }, (_, i) => i) };
  for (const pattern of lab.options.pattern.values) {
    assert.equal(lab.attention('fixed', fixed, { pattern }).output.length, 12, pattern);
  }
  const fd = makeInputs('factorized-dense', { n: 6, d: 3, dv: 2, a: 2, b: 3, L: 6 }, 3);
  for (const tiling of lab.options.tiling.values) {
    assert.equal(lab.attention('factorized-dense', fd, { tiling }).output.length, 12, tiling);
  }
  const variantsById = new Map(lab.variants.map((v) => [v.id, v]));
  for (const component of lab.options.components.values) {
    assert.ok(variantsById.has(component), component);
    const dims = { n: 4, d: 3, dv: 2, h: 3, L: 4, a: 2, b: 2, rank: 2 };
    const inputs = makeInputs('mixture', dims, 5, { components: [component] });
    const mixed = lab.attention('mixture', inputs, { components: [component], alpha: [1] }).output;
    const alone = lab.attention(component, inputs).output;
    assert.deepEqual(Array.from(mixed), Array.from(alone), `mixture of ${component} alone`);
  }
});

test('edge values give the exact answer: a window near INT_MAX, taylor with opposite unit vectors', async () => {
  const lab = await init({ simd: true });
  // fixed right with a window near INT_MAX: i + w must not overflow and empty the row
  assert.deepEqual(Array.from(lab.attention('fixed', { n: 3, dv: 1, v: [1, 2, 4] }, { pattern: 'right', window: 2147483647 }).output), [3, 4, 4]);
  // taylor with d = 1 and opposite query/key: the similarity is exactly 0, so y0 = 0, not ~0.06
  const taylor = lab.attention('taylor', { n: 2, d: 1, dv: 1, q: [1.7, 1], k: [-0.5, 1], v: [1, 0] }, { causal: true });
  assert.deepEqual(Array.from(taylor.output), [0, 0]);
});

test('malformed values and float32 overflow are AttnErrors naming the input, never a TypeError or NaN', async () => {
  const lab = await init({ simd: true });
  // a Symbol in alpha is a VALUE error, not a TypeError
  assert.throws(() => lab.attention('mixture', { n: 2, d: 1, dv: 1, q: [1, 1], k: [1, 1], v: [1, 0] }, { components: ['softmax'], alpha: [Symbol('a')] }),
    (e) => e instanceof AttnError && e.code === 'VALUE' && /alpha\[0\]/.test(e.message));
  assert.throws(() => lab.attention('softmax', { n: 2, d: 2, dv: 1, q: [1, 2], k: [1, 2, 3, 4], v: [1, 2] }),
    (e) => e.code === 'SHAPE' && /\bq\b/.test(e.message) && /\b2\b/.test(e.message) && /n\*d|\b4\b/.test(e.message));
  // finite inputs whose logits overflow float32: an error, never NaN in the output
  assert.throws(() => lab.attention('softmax', { n: 2, d: 1, dv: 1, q: [2, 1], k: [2, 1], v: [1, 0] }, { scale: 1e38 }),
    (e) => e.code === 'VALUE' && /float32/.test(e.message) && /scale/.test(e.message));
  assert.throws(() => lab.attention('linear', { n: 2, d: 1, dv: 1, q: [1, 1], k: [-90, -95], v: [1, 0] }, { eps: 0 }),
    (e) => e.code === 'VALUE' && /eps > 0/.test(e.message));
});

test('the metadata the binding validates against cannot be changed from outside', async () => {
  const lab = await init({ simd: true });
  assert.throws(() => lab.variants[0].inputs[0].shape.pop(), TypeError);
});

test('init options of the wrong type are VALUE errors, and lab.build names the module actually loaded', async () => {
  // init options of the wrong type
  await assert.rejects(init({ locateFile: 'attnlab-simd.wasm' }), (e) => e instanceof AttnError && e.code === 'VALUE' && /locateFile/.test(e.message));
  await assert.rejects(init({ wasmBinary: 'bytes' }), (e) => e instanceof AttnError && e.code === 'VALUE' && /wasmBinary/.test(e.message));
  // lab.build says which module was loaded, whatever was asked for
  const scalarBytes = await readFile(new URL('attnlab-scalar.wasm', distUrl));
  const mislabelled = await init({ simd: true, wasmBinary: scalarBytes });
  assert.equal(mislabelled.build, 'scalar');
  assert.equal(mislabelled.simd, false);
});

test('buffers above 2 GiB of WebAssembly memory are addressed correctly', async () => {
  // r is L x L = 2.3 GB, so v, the output and the workspace lie above 2^31: byte offsets must be
  // turned into indices with an unsigned shift.
  const lab = await init({ simd: false, wasmBinary: await readFile(new URL('attnlab-scalar.wasm', distUrl)) });
  try {
    const L = 24000;
    const { output } = lab.attention('random', { n: 4, dv: 1, L, r: new Float32Array(L * L), v: Float32Array.of(1, 2, 3, 4) });
    assert.deepEqual(Array.from(output), [2.5, 2.5, 2.5, 2.5]);
  } finally {
    lab.dispose();
  }
});

const STATE_IDS = VARIANTS.filter((v) => v.options.includes('state')).map((v) => v.id);

describe(`state: true returns what ${STATE_IDS.join(', ')} keep instead of A`, async () => {
  // The state over all n keys in float64, from the sums of docs/contract.md: S = Σ_j φ(k_j)·v_jᵀ and
  // z = Σ_j φ(k_j) with the feature map φ of the variant's definition (src/js/reference.js); a
  // variant without one (efficient) keeps ρ_k(k)ᵀ·v and the column log-sum-exp.
  function expectedState(id, { n, d, dv, k, v }) {
    const kernel = definitions[id].features ? definitions[id].features(k, n, d) : null;
    const F = kernel ? kernel.m : d;
    const S = new Float64Array(F * dv), z = new Float64Array(F);
    const maxima = new Float64Array(d).fill(-Infinity);
    if (!kernel) for (let j = 0; j < n; j++) for (let c = 0; c < d; c++) maxima[c] = Math.max(maxima[c], k[j * d + c]);
    for (let j = 0; j < n; j++) {
      const features = kernel
        ? Array.from(kernel.F.subarray(j * F, (j + 1) * F))
        : Array.from(k.subarray(j * d, j * d + d), (t, c) => Math.exp(t - maxima[c]));
      features.forEach((f, c) => {
        z[c] += f;
        for (let e = 0; e < dv; e++) S[c * dv + e] += f * v[j * dv + e];
      });
    }
    if (!kernel) {
      for (let c = 0; c < d; c++) for (let e = 0; e < dv; e++) S[c * dv + e] /= z[c];
      for (let c = 0; c < d; c++) z[c] = maxima[c] + Math.log(z[c]);
    }
    return { S, z, F };
  }
  for (const build of await builds()) {
    let seed = 9100;
    for (const id of STATE_IDS) {
      for (const [n, d, dv] of [[1, 1, 1], [5, 3, 4], [17, 8, 9], [130, 9, 16]]) {
        for (const causal of [false, true]) {
          const s = seed++;
          const dims = { n, d, dv };
          if (!causalValues(variantInfo(id)).includes(causal)) continue; // the seed still handed out
          test(`${id} n=${n} d=${d} dv=${dv}${causal ? ' causal' : ''} seed=${s} state [${build}]`, async () => {
            const lab = await loadBuild(build); // here, not at collection: another test disposes instances
            const inputs = makeInputs(id, dims, s, { optional: n % 2 === 1 });
            const r = lab.attention(id, inputs, { causal, state: true });
            const ctx = { variant: id, build, dims, seed: s, options: { causal, state: true } };
            if (definitions[id].finalState) { // the recurrent family: S after the last token, no normaliser
              closeTo(r.state, definitions[id].finalState(inputs, { causal }), { ...ctx, what: 'state', cols: dv });
              assert.equal(r.normalizer, undefined, `${id} returned a normalizer`);
              assert.deepEqual(Array.from(r.output), Array.from(lab.attention(id, inputs, { causal }).output));
              return;
            }
            const { S, z, F } = expectedState(id, inputs);
            assert.equal(r.state.length, F * dv);
            assert.equal(r.normalizer.length, F);
            closeTo(r.state, S, { ...ctx, what: 'state', cols: dv });
            closeTo(r.normalizer, z, { ...ctx, what: 'normalizer', cols: F });
            // and the output is unchanged by asking for the state
            assert.deepEqual(Array.from(r.output), Array.from(lab.attention(id, inputs, { causal }).output));
          });
        }
      }
    }
  }
  test('state on a variant without one is UNSUPPORTED', async () => {
    const lab = await init({ simd: true });
    assert.throws(() => lab.attention('softmax', makeInputs('softmax', { n: 3, d: 2, dv: 2 }, 1), { state: true }),
      (e) => e instanceof AttnError && e.code === 'UNSUPPORTED' && /state/.test(e.message));
  });
});

describe('the recurrent family: a sequence in two pieces, the second from the first\'s state, is the whole, bit for bit', async () => {
  const RECURRENT = VARIANTS.filter((v) => v.family === 'recurrent');
  for (const build of await builds()) {
    for (const v of RECURRENT) {
      for (const [n, d, dv, cut] of [[2, 1, 1, 1], [9, 5, 3, 4], [130, 8, 67, 65]]) {
        const seed = 9300 + n;
        test(`${v.id} n=${n} d=${d} dv=${dv}, pieces [0, ${cut}) and [${cut}, ${n}) seed=${seed} [${build}]`, async () => {
          const lab = await loadBuild(build);
          const inputs = makeInputs(v.id, { n, d, dv }, seed, { optional: true });
          const whole = lab.attention(v.id, inputs, { state: true });
          const part = (a, b) => {
            const out = { n: b - a, d, dv };
            for (const s of v.inputs) {
              if (s.name === 's0') continue;
              const cols = s.shape.length > 1 ? inputs[s.shape[1]] : 1;
              out[s.name] = inputs[s.name].slice(a * cols, b * cols);
            }
            return out;
          };
          const first = lab.attention(v.id, { ...part(0, cut), s0: inputs.s0 }, { state: true });
          const second = lab.attention(v.id, { ...part(cut, n), s0: first.state }, { state: true, causal: true });
          const joined = new Float32Array(n * dv);
          joined.set(first.output, 0);
          joined.set(second.output, cut * dv);
          const at = joined.findIndex((x, i) => !Object.is(x, whole.output[i]));
          assert.equal(at, -1, `${v.id} n=${n} seed=${seed} [${build}]: y[${Math.floor(at / dv)}][${at % dv}] in pieces ${joined[at]}, whole ${whole.output[at]}`);
          assert.deepEqual(Array.from(second.state), Array.from(whole.state), `${v.id} n=${n} seed=${seed} [${build}]: the final states differ`);
        });
      }
    }
  }
  // plain-linear and the delta rules with d, dv >= 32 and a state of 64 x 64 floats or more, and gla
  // from 128 x 128, run in chunks of tokens (docs/contract.md, "The recurrent family"), whose sums are grouped
  // otherwise than the scan's: pieces are the whole within the bar there, not bit for bit
  for (const build of await builds()) {
    for (const [id, n, d, dv, cut] of [['plain-linear', 70, 64, 64, 37], ['plain-linear', 33, 131, 127, 16], ['plain-linear', 20, 33, 260, 19],
      ['gla', 40, 128, 128, 21], ['gla', 33, 131, 129, 16], ['deltanet', 70, 64, 64, 37], ['deltanet', 20, 33, 260, 19],
      ['gated-deltanet', 70, 64, 64, 37], ['gated-deltanet', 33, 131, 127, 16]]) {
      const seed = 9350 + n + d;
      test(`${id}'s chunked form, n=${n} d=${d} dv=${dv} seed=${seed}: the reference's output and state, pieces [0, ${cut}) and [${cut}, ${n}) within the bar; keep, attentionGrad and 2 or 3 threads give its bits [${build}]`, async () => {
        const lab = await loadBuild(build);
        const inputs = makeInputs(id, { n, d, dv }, seed, { optional: n % 2 === 0 });
        const ctx = { variant: id, build, dims: { n, d, dv }, seed, cols: dv };
        const whole = lab.attention(id, inputs, { state: true });
        closeTo(whole.output, reference(id, inputs).output, { ...ctx, what: 'output' });
        closeTo(whole.state, definitions[id].finalState(inputs, {}), { ...ctx, what: 'state' });
        const rows = (name, a, b) => inputs[name].slice(a * inputs[name].length / n, b * inputs[name].length / n);
        const piece = (a, b) => Object.fromEntries(['q', 'k', 'v', 'g', 'beta'].filter((x) => inputs[x]).map((x) => [x, rows(x, a, b)]));
        const first = lab.attention(id, { n: cut, d, dv, ...piece(0, cut), s0: inputs.s0 }, { state: true });
        const second = lab.attention(id, { n: n - cut, d, dv, ...piece(cut, n), s0: first.state }, { state: true });
        closeTo(Float32Array.of(...first.output, ...second.output), whole.output, { ...ctx, what: 'output in pieces' });
        closeTo(second.state, whole.state, { ...ctx, what: 'state in pieces' });
        const same = (a, b, what) => {
          const at = a.findIndex((x, i) => !Object.is(x, b[i]));
          assert.equal(at, -1, `${id} n=${n} seed=${seed} [${build}]: ${what}[${at}] ${a[at]}, attention() ${b[at]}`);
        };
        const dOutput = Float32Array.from({ length: n * dv }, (_, i) => Math.sin(i));
        const kept = lab.attention(id, inputs, { keep: true }), grad = lab.attentionGrad(id, inputs, dOutput);
        same(kept.output, whole.output, 'the kept output');
        same(grad.output, whole.output, "attentionGrad's output");
        const fromKept = kept.backward(dOutput);
        for (const name of Object.keys(grad.grads)) same(fromKept.grads[name], grad.grads[name], `kept backward's d${name} vs attentionGrad's`);
        for (const threads of [2, 3]) {
          const pool = await init({ simd: build === 'relaxed' ? 'relaxed' : build === 'simd', threads, fresh: true });
          try {
            const r = pool.attention(id, inputs, { state: true });
            same(r.output, whole.output, `the output on ${threads} threads`);
            same(r.state, whole.state, `the state on ${threads} threads`);
          } finally {
            pool.dispose();
          }
        }
      });
    }
  }
  test('causal defaults to true for them, and false is UNSUPPORTED saying why', async () => {
    const lab = await init({ simd: true });
    for (const v of RECURRENT) {
      const inputs = makeInputs(v.id, { n: 5, d: 3, dv: 2 }, 9400);
      assert.deepEqual(Array.from(lab.attention(v.id, inputs).output), Array.from(lab.attention(v.id, inputs, { causal: true }).output));
      assert.throws(() => lab.attention(v.id, inputs, { causal: false }),
        (e) => e instanceof AttnError && e.code === 'UNSUPPORTED' && /causal by construction/.test(e.message), v.id);
      assert.throws(() => lab.attentionGrad(v.id, inputs, new Float32Array(10), { causal: false }),
        (e) => e instanceof AttnError && e.code === 'UNSUPPORTED', `${v.id} attentionGrad`);
    }
  });
  test('a decay above 1 that overflows the state is VALUE naming the state, never NaN returned', async () => {
    const lab = await init({ simd: true });
    for (const v of RECURRENT.filter((x) => x.inputs.some((s) => s.name === 'g'))) {
      const inputs = makeInputs(v.id, { n: 300, d: 4, dv: 2 }, 9401);
      inputs.g = new Float32Array(300 * 4).fill(0.5); // e^0.5 a token: e^150 after 300
      assert.throws(() => lab.attention(v.id, inputs),
        (e) => e instanceof AttnError && e.code === 'VALUE' && /recurrent state/.test(e.message) && /g <= 0/.test(e.message), v.id);
    }
  });
});

describe('overflow from finite inputs is an error on every build, never a silent answer', async () => {
  for (const build of await builds()) {
    test(`a NaN logit (1e20·1e20 - 1e20·1e20) gives VALUE [${build}]`, async () => {
      const lab = await loadBuild(build);
      const n = 10, d = 2, dv = 1;
      const q = new Float32Array(n * d).fill(0.5), k = new Float32Array(n * d).fill(0.5);
      q.set([1e20, 1e20], 0);
      k.set([1e20, -1e20], 3 * d); // q0·k3 = inf - inf
      const v = Float32Array.from({ length: n }, (_, i) => i);
      for (const options of [{}, { weights: true }]) {
        assert.throws(() => lab.attention('softmax', { n, d, dv, q, k, v }, options),
          (e) => e instanceof AttnError && e.code === 'VALUE' && /float32/.test(e.message), JSON.stringify(options));
      }
    });
    test(`taylor with entries near 1e19..1e38 keeps unit vectors [${build}]`, async () => {
      const lab = await loadBuild(build);
      for (const s of [2e19, 3e38]) {
        const inputs = { n: 2, d: 2, dv: 1, q: [s, 0, s, 0], k: [s, 0, -s, 0], v: [0, 1] };
        const expected = reference('taylor', inputs, {}).output;
        const { output } = lab.attention('taylor', inputs);
        output.forEach((y, i) => assert.ok(Math.abs(y - expected[i]) <= 1e-5 + 1e-4 * Math.abs(expected[i]), `s=${s}: y[${i}] = ${y}, expected ${expected[i]}`));
      }
    });
    test(`a state that overflows float32 gives VALUE [${build}]`, async () => {
      const lab = await loadBuild(build);
      assert.throws(() => lab.attention('linear', { n: 4, d: 1, dv: 1, q: [1, 1, 1, 1], k: [3e38, 3e38, 1, 1], v: [1, -1, 1, 1] }, { state: true }),
        (e) => e instanceof AttnError && e.code === 'VALUE' && /normalizer|state/.test(e.message));
    });
  }
});

test('the SIMD and scalar builds give bit-identical results (same operations in the same order)', async () => {
  const scalar = await init({ simd: false });
  const simd = await init({ simd: true });
  let seed = 9700;
  for (const info of simd.variants) {
    const id = info.id;
    const dims = { n: 77, d: 13, dv: 9, h: 6, L: 80, a: 8, b: 10, rank: 5 };
    const options = info.composite ? { components: ['softmax', 'dense', 'factorized-dense'], alpha: [0.5, 0.25, 0.25] }
      : info.options.includes('pattern') ? { pattern: 'left', window: 4 } : {};
    for (const causal of [false, true]) {
      const s = seed++;
      if (!causalValues(info).includes(causal)) continue;
      const inputs = makeInputs(id, dims, s, { components: options.components, optional: true });
      const x = scalar.attention(id, inputs, { ...options, causal }).output;
      const y = simd.attention(id, inputs, { ...options, causal }).output;
      const at = x.findIndex((value, i) => !Object.is(value, y[i]));
      assert.equal(at, -1, `${id}${causal ? ' causal' : ''} seed=${s}: y[${Math.floor(at / dims.dv)}][${at % dims.dv}] scalar ${x[at]}, simd ${y[at]}`);
    }
  }
});
