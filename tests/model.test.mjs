// lab.model: the small transformer of docs/model.md, trained in WebAssembly, against the
// independent float64 model of src/js/reference-model.js, on every build:
// - the initial parameters are the contract's, bit for bit;
// - the logits and the loss are the reference's; the gradient of every parameter is the float64
//   central difference of the reference's loss, for every variant, 1-2 layers, 1-2 heads;
// - every variant overfits one fixed batch; training is bit-identical for a seed, and the SIMD
//   and scalar builds train bit for bit alike; save/loadModel round-trips; freeze holds;
// - bad configs and inputs are AttnErrors naming the problem.
//
//   node --test tests/model.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { initParameters, forwardLoss, gradients } from '../src/js/reference-model.js';
import { mulberry32 } from '../src/js/prng.js';
import { binding, builds, loadBuild, VARIANTS, MODEL_VARIANTS, OPTIONS, isMixture, sameBits, reseal } from './helpers.mjs';
import { PLANS_MADE } from '../dist/internal.js';

const { AttnError } = await binding();
const buildList = await builds();
const REGISTRY = { variants: VARIANTS, options: OPTIONS };
const MIX = { components: ['softmax', 'random', 'dense1'] };

const configFor = (v, extra = {}) => ({
  variant: v.id, vocab: 6, seqLen: 5, dModel: 8, heads: 2, layers: 1, dFF: 12, causal: true, seed: 3,
  options: isMixture(v) ? MIX : {}, ...extra,
});
const describeConfig = (c) => `${c.variant} layers=${c.layers} heads=${c.heads} ${c.causal ? 'causal' : 'bidirectional'}${c.rStd ? ` rStd=${c.rStd}` : ''}${c.options?.patterns ? ` patterns=${c.options.patterns.join(',')}` : ''}`;

function batchFor(config, batch, seed) {
  const rnd = mulberry32(seed);
  const n = batch * config.seqLen;
  const tokens = Int32Array.from({ length: n }, () => Math.floor(rnd() * config.vocab));
  const targets = Int32Array.from({ length: n }, (_, i) => (i % 3 === 1 ? -1 : Math.floor(rnd() * config.vocab)));
  return { tokens, targets, batch };
}

// A model whose parameters are replaced by values of order 1 (through save/loadModel), so that
// every gradient stands well above float32's rounding.
function withLargeParameters(lab, model, seed) {
  const bytes = model.save();
  const view = new DataView(bytes.buffer);
  const headerLength = view.getUint32(0, true);
  const start = 4 + Math.ceil(headerLength / 4) * 4;
  const rnd = mulberry32(seed);
  for (let i = 0; i < model.parameterCount; i++) view.setFloat32(start + 4 * i, Math.fround((2 * rnd() - 1) * 0.8), true);
  return lab.loadModel(reseal(bytes));
}

const toF64 = (params) => Object.fromEntries(Object.entries(params).map(([k, a]) => [k, Float64Array.from(a)]));

function closeArrays(actual, expected, what, relTol, absTol) {
  let max = 0;
  for (const x of expected) max = Math.max(max, Math.abs(x));
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    const err = Math.abs(actual[i] - expected[i]);
    assert.ok(err <= absTol + relTol * max, `${what}[${i}] = ${actual[i]}, reference ${expected[i]} (bar ${absTol} + ${relTol}·${max.toExponential(3)})`);
  }
}

// The float64 gradients of every case, computed once (they do not depend on the build).
const CASES = [];
for (const v of MODEL_VARIANTS) {
  for (const [layers, heads, causal] of [[1, 1, true], [1, 2, false], [2, 2, true]]) {
    CASES.push({ v, config: configFor(v, { layers, heads, causal, seed: 3 + layers + heads }) });
  }
}
// fixed heads given their patterns (options.patterns, cycled over the heads)
const FIXED = VARIANTS.find((v) => v.id === 'fixed');
// (4 heads, 3 patterns: the fourth head wraps to the first pattern)
CASES.push({ v: FIXED, config: configFor(FIXED, { layers: 2, heads: 4, causal: true, options: { patterns: ['first', 'left', 'previous'], window: 2 } }) });
CASES.push({ v: FIXED, config: configFor(FIXED, { layers: 1, heads: 4, causal: false, options: { patterns: ['last', 'right', 'next'] } }) });
// rStd (the initial scale of r, r1, r2) passes through the config like any other field
for (const id of ['random', 'factorized-random']) {
  const v = VARIANTS.find((x) => x.id === id);
  CASES.push({ v, config: { ...configFor(v, { layers: 1, heads: 2, causal: true, seed: 5 }), rStd: 1.5 } });
}

for (const build of buildList) {
  const lab = await loadBuild(build);

  describe(`model [${build}]`, () => {
    for (const v of MODEL_VARIANTS) {
      test(`${v.id}: the initial parameters are the contract's, bit for bit`, () => {
        const config = configFor(v, { layers: 2 });
        const model = lab.model(config);
        const mine = model.parameters();
        const ref = initParameters({ ...config, registry: REGISTRY });
        assert.deepEqual(Object.keys(mine), Object.keys(ref), `${describeConfig(config)}: parameter names and order`);
        for (const [name, a] of Object.entries(mine)) {
          assert.ok(sameBits(a, Float32Array.from(ref[name])), `${describeConfig(config)}: ${name} differs from the contract's initialisation`);
        }
        model.dispose();
      });
    }

    test('rStd sets the initial scale of r, r1 and r2, bit for bit as the contract says; it is saved and loaded', () => {
      for (const id of ['random', 'factorized-random', 'mixture']) {
        const v = VARIANTS.find((x) => x.id === id);
        for (const rStd of [1, 0.7, 3.25e-3]) {
          const config = { ...configFor(v, { layers: 1, seed: 9 }), rStd };
          const model = lab.model(config);
          assert.equal(model.config.rStd, rStd);
          const ref = initParameters({ ...config, registry: REGISTRY });
          const mine = model.parameters();
          for (const [name, a] of Object.entries(mine)) {
            assert.ok(sameBits(a, Float32Array.from(ref[name])), `${describeConfig(config)} rStd ${rStd}: ${name} differs from the contract's initialisation`);
          }
          const again = lab.loadModel(model.save());
          assert.equal(again.config.rStd, rStd, `${id}: rStd after save/load`);
          assert.ok(Object.entries(again.parameters()).every(([name, a]) => sameBits(a, mine[name])), `${id}: parameters after save/load`);
          again.dispose();
          model.dispose();
        }
      }
      const softmax = lab.model(configFor(VARIANTS.find((x) => x.id === 'softmax'), {}));
      assert.equal(softmax.config.rStd, 0.2, 'the default');
      assert.ok(!('rStd' in JSON.parse(new TextDecoder().decode(softmax.save().subarray(4, 4 + new DataView(softmax.save().buffer).getUint32(0, true)))).config),
        'a default rStd is not written, so files of default models keep their bytes');
      softmax.dispose();
      for (const bad of [0, -1, NaN, Infinity, 2e6, '1']) {
        assert.throws(() => lab.model({ ...configFor(VARIANTS.find((x) => x.id === 'random'), {}), rStd: bad }),
          (err) => err.code === 'VALUE' && /rStd/.test(err.message), `rStd ${String(bad)}`);
      }
    });

    for (const { v, config } of CASES) {
      test(`${describeConfig(config)}: logits, loss and every parameter's gradient match the float64 reference`, () => {
        const base = lab.model(config);
        const model = withLargeParameters(lab, base, 17);
        base.dispose();
        const { tokens, targets, batch } = batchFor(config, 2, 29);
        const params = toF64(model.parameters());
        const rc = { ...config, registry: REGISTRY };
        const ref = forwardLoss(rc, params, tokens, targets, batch);
        closeArrays(model.forward(tokens), ref.logits, `${describeConfig(config)} logits`, 1e-4, 1e-5);
        const { loss } = model.evaluate(tokens, targets);
        assert.ok(Math.abs(loss - ref.loss) <= 1e-4 * Math.max(1, Math.abs(ref.loss)), `${describeConfig(config)}: loss ${loss}, reference ${ref.loss}`);
        const expected = gradients(rc, params, tokens, targets, batch);
        const got = model.gradients(tokens, targets);
        for (const [name, g] of Object.entries(expected)) {
          closeArrays(got[name], g, `${describeConfig(config)} d loss / d ${name}`, 2e-3, 1e-6);
        }
        model.dispose();
      });
    }

    for (const v of MODEL_VARIANTS) {
      test(`${v.id}: overfits one fixed batch (the loss falls 10x)`, () => {
        const config = configFor(v, { vocab: 8, seqLen: 8, dModel: 16, dFF: 32, seed: 11 });
        const model = lab.model(config);
        const { tokens, targets } = batchFor(config, 4, 5);
        const first = model.evaluate(tokens, targets).loss;
        for (let s = 0; s < 300; s++) model.trainStep(tokens, targets, { lr: 1e-2 });
        const last = model.evaluate(tokens, targets).loss;
        assert.ok(last < first / 10, `${describeConfig(config)}: loss ${first} -> ${last} after 300 steps`);
        model.dispose();
      });
    }

    test('the same seed trains to the same bits; another seed does not', () => {
      const config = configFor(VARIANTS.find((x) => x.id === 'softmax'), { seed: 21 });
      const run = (seed) => {
        const model = lab.model({ ...config, seed });
        const losses = [];
        for (let s = 0; s < 12; s++) {
          const { tokens, targets } = batchFor(config, 3, s);
          losses.push(model.trainStep(tokens, targets, { lr: 3e-3 }).loss);
        }
        model.dispose();
        return Float32Array.from(losses);
      };
      assert.ok(sameBits(run(21), run(21)), 'two runs with seed 21 differ');
      assert.ok(!sameBits(run(21), run(22)), 'seeds 21 and 22 train alike');
    });

    test('save and loadModel round-trip: same evaluation, and training continues the same', () => {
      const config = configFor(VARIANTS.find((x) => isMixture(x)), { seed: 8 });
      const a = lab.model(config);
      const data = batchFor(config, 2, 1);
      for (let s = 0; s < 5; s++) a.trainStep(data.tokens, data.targets, { lr: 3e-3 });
      const b = lab.loadModel(a.save());
      assert.equal(b.step, 5);
      assert.deepEqual(b.config.options, a.config.options);
      assert.equal(b.evaluate(data.tokens, data.targets).loss, a.evaluate(data.tokens, data.targets).loss);
      const la = a.trainStep(data.tokens, data.targets, { lr: 3e-3 }).loss;
      const lb = b.trainStep(data.tokens, data.targets, { lr: 3e-3 }).loss;
      assert.equal(lb, la, 'the optimizer state did not round-trip');
      assert.ok(sameBits(a.alpha({ layer: 0, head: 1 }), b.alpha({ layer: 0, head: 1 })));
      a.dispose(), b.dispose();
    });

    test('save and loadModel keep a fixed model\'s options.patterns: the same maps, head by head', () => {
      const config = configFor(FIXED, { heads: 4, causal: false, options: { patterns: ['last', 'first', 'next'] } });
      const a = lab.model(config);
      const b = lab.loadModel(a.save());
      assert.deepEqual(b.config.options.patterns, ['last', 'first', 'next']);
      const tokens = batchFor(config, 1, 2).tokens;
      for (let head = 0; head < 4; head++) {
        const map = a.attentionMap(tokens, { head });
        assert.ok(sameBits(b.attentionMap(tokens, { head }), map), `head ${head}: the reloaded model's map differs`);
        // head 3 wraps to the first pattern, 'last': every row puts its weight on the last column
        if (head === 3) for (let i = 0; i < config.seqLen; i++) assert.equal(map[i * config.seqLen + config.seqLen - 1], 1, `head 3 row ${i}`);
      }
      a.dispose(), b.dispose();
    });

    test('frozen parameters keep their bits; the others move', () => {
      const config = configFor(VARIANTS.find((x) => x.id === 'random'), { freeze: ['l0.h0.r', 'tok_emb'] });
      const model = lab.model(config);
      const before = model.parameters();
      const data = batchFor(config, 2, 3);
      for (let s = 0; s < 4; s++) model.trainStep(data.tokens, data.targets, { lr: 1e-2 });
      const after = model.parameters();
      assert.ok(sameBits(before['l0.h0.r'], after['l0.h0.r']) && sameBits(before.tok_emb, after.tok_emb));
      assert.ok(!sameBits(before['l0.h1.r'], after['l0.h1.r']), 'an unfrozen r did not move');
      assert.ok(model.gradients(data.tokens, data.targets)['l0.h0.r'].every((x) => x === 0), 'a frozen gradient is not 0');
      model.dispose();
    });

    test('bad configs and inputs are AttnErrors naming the problem; a failed model leaves no memory', () => {
      const softmax = VARIANTS.find((x) => x.id === 'softmax');
      const ok = configFor(softmax);
      const cases = [
        [{ ...ok, heads: 3 }, 'SHAPE', /heads must divide dModel/],
        [{ ...ok, variant: 'nope' }, 'UNKNOWN', /unknown variant "nope"/],
        [{ ...ok, freeze: ['l0.h0.zz'] }, 'UNKNOWN', /freeze names "l0\.h0\.zz"/],
        [{ ...ok, dModel: 0 }, 'SHAPE', /dModel must be a positive integer/],
        [{ ...ok, colour: 'red' }, 'UNKNOWN', /unknown field "colour"/],
        [{ ...ok, options: { causal: true } }, 'UNSUPPORTED', /causal/],
        [{ ...configFor(VARIANTS.find(isMixture)), options: { components: ['softmax'], alpha: [1] } }, 'UNSUPPORTED', /learns its mixture weights/],
        [{ ...configFor(VARIANTS.find((x) => x.id === 'factorized-dense')), seqLen: 7, options: { tiling: 'zigzag' } }, 'VALUE', /tiling/],
        [{ ...configFor(FIXED), options: { pattern: 'first' } }, 'UNSUPPORTED', /options\.patterns/],
        [{ ...configFor(FIXED), options: { patterns: ['next'] } }, 'VALUE', /causal model cannot take a pattern that looks ahead/],
        [{ ...configFor(FIXED), options: { patterns: ['first', 'sideways'] } }, 'UNKNOWN', /patterns\[1\] is "sideways"/],
        [{ ...configFor(FIXED), options: { patterns: [] } }, 'VALUE', /1 to 16 pattern names/],
        [{ ...configFor(FIXED), options: { patterns: Array(17).fill('first') } }, 'VALUE', /1 to 16 pattern names/],
        [{ ...ok, options: { patterns: ['first'] } }, 'VALUE', /patterns are for fixed heads/],
      ];
      for (const [config, code, pattern] of cases) {
        assert.throws(() => lab.model(config), (err) => err instanceof AttnError && err.code === code && pattern.test(err.message),
          `${JSON.stringify(config)} should be ${code} ${pattern}`);
      }
      const model = lab.model(ok);
      const { tokens, targets } = batchFor(ok, 2, 1);
      // a call rejected for its tokens grows nothing, even when its batch would need more memory
      const big = new Int32Array(ok.seqLen * 4096);
      big[17] = ok.vocab;
      const grown = lab.memoryBytes();
      assert.throws(() => model.forward(big), (err) => err.code === 'VALUE' && /tokens\[17\] = 6 is outside/.test(err.message));
      assert.throws(() => model.evaluate(big, new Int32Array(big.length)), (err) => err.code === 'VALUE');
      assert.equal(lab.memoryBytes(), grown, 'a call rejected for its tokens grew memory');
      const faked = Int32Array.from(tokens);
      Object.defineProperty(faked, 'length', { value: ok.seqLen });
      assert.equal(model.forward(faked).length, tokens.length * ok.vocab, 'a faked length changed how many tokens were read');
      assert.throws(() => model.trainStep(tokens, targets, { lr: -1 }), (err) => err.code === 'VALUE' && /lr/.test(err.message));
      assert.throws(() => model.evaluate(tokens.subarray(1), targets.subarray(1)), (err) => err.code === 'SHAPE' && /multiple of seqLen/.test(err.message));
      assert.throws(() => model.evaluate(tokens, targets.subarray(1)), (err) => err.code === 'SHAPE' && /targets has/.test(err.message));
      assert.throws(() => model.evaluate(Int32Array.from(tokens, () => 99), targets), (err) => err.code === 'VALUE' && /tokens\[0\] = 99 is outside/.test(err.message));
      assert.throws(() => model.evaluate(tokens, Int32Array.from(targets, () => -2)), (err) => err.code === 'VALUE' && /targets\[0\] = -2 is outside/.test(err.message));
      assert.throws(() => model.forward([0.5, 1, 2, 3, 4]), (err) => err.code === 'VALUE' && /not an integer/.test(err.message));
      assert.throws(() => model.alpha(), (err) => err.code === 'UNKNOWN' && /alpha/.test(err.message));
      assert.throws(() => lab.loadModel(new Uint8Array(12)), (err) => err.code === 'VALUE' && /not a saved attnlab model/.test(err.message));
      const saved = model.save();
      const trailing = new Uint8Array(saved.length + 1);
      trailing.set(saved);
      assert.throws(() => lab.loadModel(trailing), (err) => err.code === 'VALUE' && /bytes/.test(err.message));
      const nan = saved.slice();
      new DataView(nan.buffer).setFloat32(nan.length - 8, NaN, true);
      assert.throws(() => lab.loadModel(reseal(nan)), (err) => err.code === 'VALUE' && /finite/.test(err.message));
      model.dispose();
      assert.throws(() => model.forward(tokens), (err) => err.code === 'DISPOSED');
      assert.equal(lab.memoryBytes(), grown, 'failed configs, rejected calls and failed loads grew memory');
    });
  });
}

describe('SIMD and scalar builds', () => {
  test('train bit for bit alike (the same operations in the same order)', async () => {
    const [scalar, simd] = [await loadBuild('scalar'), await loadBuild('simd')];
    for (const v of MODEL_VARIANTS) {
      const config = configFor(v, { seed: 13 });
      const a = scalar.model(config), b = simd.model(config);
      for (let s = 0; s < 3; s++) {
        const { tokens, targets } = batchFor(config, 2, s);
        const la = a.trainStep(tokens, targets, { lr: 3e-3 }).loss, lb = b.trainStep(tokens, targets, { lr: 3e-3 }).loss;
        assert.ok(Object.is(la, lb), `${v.id} step ${s}: scalar loss ${la}, SIMD ${lb}`);
      }
      a.dispose(), b.dispose();
    }
  });
});

test('a model makes its heads\' plans once, when it is made: no trainStep, evaluate, forward, gradients or generate makes another', async () => {
  const lab = await loadBuild('simd');
  for (const v of MODEL_VARIANTS) {
    const config = configFor(v, { layers: 2, seed: 5 });
    const before = lab[PLANS_MADE]();
    const model = lab.model(config);
    const made = lab[PLANS_MADE]() - before;
    assert.ok(made >= config.layers * config.heads, `${v.id}: making a model of ${config.layers} x ${config.heads} heads made ${made} plans`);
    const opened = lab[PLANS_MADE]();
    const losses = [];
    for (let s = 0; s < 4; s++) {
      const { tokens, targets } = batchFor(config, 2, s);
      losses.push(model.trainStep(tokens, targets, { lr: 1e-2 }).loss);
      model.evaluate(tokens, targets);
      model.forward(tokens);
      model.gradients(tokens, targets);
      model.generate([1, 2], config.seqLen - 2, { temperature: 0 });
    }
    assert.ok(losses.every(Number.isFinite), `${v.id}: losses ${losses}`);
    assert.equal(lab[PLANS_MADE]() - opened, 0, `${v.id}: the steps after making the model made plans`);
    model.dispose();
  }
});

test('lab.model refuses the variants no model layer holds yet (the recurrent family): UNSUPPORTED, saying why', async () => {
  const lab = await loadBuild('simd');
  const refused = VARIANTS.filter((v) => !v.inModels);
  assert.ok(refused.length > 0, 'lab.variants has no variant with inModels false: is the recurrent family still refused?');
  for (const v of refused) {
    assert.throws(() => lab.model({ variant: v.id, vocab: 4, seqLen: 4, dModel: 4, heads: 1, layers: 1, dFF: 4, causal: true }),
      (e) => e.code === 'UNSUPPORTED' && /recurrent variant cannot be a model's attention yet/.test(e.message), v.id);
  }
});
