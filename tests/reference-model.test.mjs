// The float64 reference of the small transformer (src/js/reference-model.js), which the model
// tests hold the C engine to: its parameter table against lab.variants, the initialisation against
// the contract, the forward pass and loss, and its gradients against central differences.
//
//   node --test tests/reference-model.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  parameterTable, initParameters, forwardLoss, gradients, adamwStep, resolveConfig, initRule, headPattern, HEAD_PARAMETERS,
} from '../src/js/reference-model.js';
import { mulberry32, streamSeed } from '../src/js/prng.js';
import { tasks } from '../src/js/tasks.js';
import { VARIANTS, MODEL_VARIANTS, ARRAY_SHAPES, MIXTURE_COMPONENTS, OPTIONS, arraysFor, isMixture } from './helpers.mjs';
const MODEL_VARIANT_IDS = MODEL_VARIANTS.map((v) => v.id);

/** What the reference model needs to know of the registry. */
const REGISTRY = { variants: VARIANTS, options: OPTIONS };
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

const PARAM_OF_ARRAY = Object.fromEntries(HEAD_PARAMETERS.filter((p) => p.array).map((p) => [p.array, p.name]));

function configFor(id, extra = {}) {
  const v = VARIANTS.find((x) => x.id === id);
  return {
    registry: REGISTRY, variant: id, vocab: 7, seqLen: 6, dModel: 8, heads: 2, layers: 2, dFF: 12, causal: true, seed: 5,
    options: v && isMixture(v) ? { components: ['softmax', 'random'] } : {},
    ...extra,
  };
}

describe('reference model: the parameter table', () => {
  for (const id of MODEL_VARIANT_IDS) { // the variants a model holds
    test(`${id}: names, order, count and shapes follow the contract and lab.variants`, () => {
      const config = configFor(id);
      const c = resolveConfig(config);
      const table = parameterTable(config);
      const names = table.map((p) => p.name);
      assert.equal(new Set(names).size, names.length, 'names are unique');
      const comps = isMixture(VARIANTS.find((x) => x.id === id)) ? config.options.components : MIXTURE_COMPONENTS;
      const arrays = arraysFor(id, comps);
      const headNames = HEAD_PARAMETERS
        .filter((p) => (p.name === 'alpha' ? id === 'mixture' : arrays.includes(p.array)))
        .map((p) => p.name);
      const expected = ['tok_emb', 'pos_emb'];
      for (let l = 0; l < c.layers; l++) {
        expected.push(`l${l}.ln1.g`, `l${l}.ln1.b`);
        for (let h = 0; h < c.heads; h++) for (const n of headNames) expected.push(`l${l}.h${h}.${n}`);
        expected.push(`l${l}.wo`, `l${l}.ln2.g`, `l${l}.ln2.b`, `l${l}.fc1`, `l${l}.fc1b`, `l${l}.fc2`, `l${l}.fc2b`);
      }
      expected.push('lnf.g', 'lnf.b', 'out', 'outb');
      assert.deepEqual(names, expected);
      // every array the variant reads has its parameter (or projection), and only those
      const fromTable = new Set(table.filter((p) => p.name.startsWith('l0.h0.') && !p.name.endsWith('.alpha'))
        .map((p) => HEAD_PARAMETERS.find((h) => `l0.h0.${h.name}` === p.name).array));
      assert.deepEqual([...fromTable].sort(), [...arrays].sort());
      const dims = { n: c.seqLen, d: c.dh, dv: c.dh, h: c.hidden, L: c.seqLen, a: c.a, b: c.b, rank: c.rank };
      for (const p of table) {
        assert.equal(p.size, p.shape.reduce((s, t) => s * t, 1));
        assert.equal(p.matrix, p.shape.length === 2);
        const m = /^l\d+\.h\d+\.(\w+)$/.exec(p.name);
        if (!m) continue;
        const hp = HEAD_PARAMETERS.find((h) => h.name === m[1]);
        if (hp.name === 'alpha') { assert.deepEqual(p.shape, [config.options.components.length]); continue; }
        if (hp.projection) { assert.deepEqual(p.shape, [c.dModel, c.dh]); continue; }
        assert.deepEqual(p.shape, ARRAY_SHAPES[hp.array].map((d) => dims[d]), `${p.name} has the shape lab.variants gives ${hp.array}`);
      }
      assert.equal(PARAM_OF_ARRAY.v, 'wv');
    });
  }

  test('derived sizes: dh, a, b, rank, hidden', () => {
    const c = resolveConfig(configFor('factorized-dense', { seqLen: 12, dModel: 12, heads: 3 }));
    assert.equal(c.dh, 4);
    assert.equal(c.a, 3);
    assert.equal(c.b, 4);
    assert.equal(c.rank, 8);
    assert.equal(c.hidden, 4);
    assert.equal(resolveConfig(configFor('factorized-random', { seqLen: 5 })).rank, 5);
    assert.equal(resolveConfig(configFor('factorized-dense', { seqLen: 7 })).a, 1);
  });

  test('fixed: head h takes the h-th pattern of the cycle; causal models skip the look-ahead ones', () => {
    const causal = resolveConfig(configFor('fixed', { heads: 8, dModel: 8 }));
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((h) => headPattern(causal, h)), ['previous', 'current', 'left', 'first', 'previous', 'current']);
    const full = resolveConfig(configFor('fixed', { heads: 8, dModel: 8, causal: false }));
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map((h) => headPattern(full, h)),
      ['previous', 'current', 'next', 'left', 'right', 'first', 'last', 'previous']);
    const given = resolveConfig(configFor('fixed', { heads: 4, dModel: 8, options: { patterns: ['first', 'left', 'current'] } }));
    assert.deepEqual([0, 1, 2, 3].map((h) => headPattern(given, h)), ['first', 'left', 'current', 'first']);
  });

  test('bad configs throw, naming the problem', () => {
    assert.throws(() => resolveConfig(configFor('softmax', { heads: 3 })), /heads.*divide/);
    assert.throws(() => resolveConfig(configFor('nope')), /variant/);
    assert.throws(() => resolveConfig(configFor('softmax', { freeze: ['l0.h0.r'] })), /freeze.*l0\.h0\.r/);
    assert.throws(() => resolveConfig(configFor('mixture', { options: {} })), /components/);
    assert.throws(() => resolveConfig(configFor('mixture', { options: { components: ['linear'] } })), /linear/);
    assert.throws(() => resolveConfig(configFor('fixed', { options: { pattern: 'next' } })), /options\.patterns/);
    assert.throws(() => resolveConfig(configFor('fixed', { options: { patterns: ['next'] } })), /next.*looks ahead/);
    assert.throws(() => resolveConfig(configFor('softmax', { options: { patterns: ['first'] } })), /fixed heads/);
    const config = configFor('softmax');
    const p = initParameters(config);
    const ok = new Int32Array(6);
    assert.throws(() => forwardLoss(config, p, Int32Array.of(0, 1, 2, 3, 4, 7), ok, 1), /tokens\[5\]/);
    assert.throws(() => forwardLoss(config, p, ok, new Int32Array(5), 1), /targets/);
    assert.throws(() => forwardLoss(config, p, ok, Int32Array.of(0, 0, 0, 0, 0, -2), 1), /targets\[5\]/);
  });
});

describe('reference model: initialisation', () => {
  test('deterministic for a seed; another seed gives other values', () => {
    const config = configFor('mixture');
    const a = initParameters(config);
    const b = initParameters(config);
    const c = initParameters({ ...config, seed: 6 });
    for (const { name } of parameterTable(config)) {
      assert.ok(same(a[name], b[name]), name);
      const rule = initRule(name, config);
      if (rule.std !== undefined) assert.ok(!same(a[name], c[name]), `${name} depends on the seed`);
      for (const x of a[name]) assert.equal(x, Math.fround(x), `${name} holds float32 values`);
    }
  });

  test('values are fround(Irwin–Hall normal · std) from the stream (seed, name)', () => {
    const config = configFor('dense', { layers: 3 });
    const p = initParameters(config);
    for (const { name, size } of parameterTable(config)) {
      const rule = initRule(name, config);
      if (rule.std === undefined) continue;
      const u = mulberry32(streamSeed(5, name));
      for (let i = 0; i < Math.min(size, 20); i++) {
        const normal = (u() + u() + u() + u() - 2) * Math.sqrt(3);
        assert.equal(p[name][i], Math.fround(normal * rule.std), `${name}[${i}]`);
      }
    }
    assert.equal(initRule('l2.wo', config).std, 0.02 / Math.sqrt(6));
    assert.equal(initRule('l0.fc2', config).std, 0.02 / Math.sqrt(6));
  });

  test('means and stds of large tensors match the contract', () => {
    const config = {
      registry: REGISTRY, variant: 'mixture', vocab: 64, seqLen: 64, dModel: 64, heads: 1, layers: 2, dFF: 128, seed: 99,
      options: { components: ['softmax', 'dense', 'random', 'factorized-random'] }, hidden: 64,
    };
    const p = initParameters(config);
    const expectStd = {
      tok_emb: 0.02, pos_emb: 0.02, 'l0.h0.wq': 0.02, 'l0.h0.wk': 0.02, 'l0.h0.wx': 0.02, 'l0.h0.wv': 0.02,
      'l0.h0.w1': 0.02, 'l0.h0.w2': 0.02, 'l0.h0.r': 0.2, 'l1.h0.r1': 0.2, 'l1.h0.r2': 0.2,
      'l0.wo': 0.01, 'l1.fc1': 0.02, 'l1.fc2': 0.01, out: 0.02,
    };
    for (const [name, std] of Object.entries(expectStd)) {
      const a = p[name];
      assert.ok(a.length >= 512, `${name} is large enough (${a.length})`);
      const mean = a.reduce((s, x) => s + x, 0) / a.length;
      const sd = Math.sqrt(a.reduce((s, x) => s + (x - mean) ** 2, 0) / a.length);
      assert.ok(Math.abs(mean) < 4 * std / Math.sqrt(a.length), `${name}: mean ${mean}`);
      assert.ok(Math.abs(sd / std - 1) < 0.08, `${name}: std ${sd}, expected ${std}`);
      assert.ok(Math.max(...a.map(Math.abs)) <= Math.sqrt(12) * std * (1 + 1e-6), `${name}: bounded by √12·std`);
    }
    for (const name of ['l0.ln1.g', 'l1.ln2.g', 'lnf.g']) assert.ok(p[name].every((x) => x === 1), name);
    for (const name of ['l0.ln1.b', 'l0.h0.b1', 'l0.h0.b2', 'l0.h0.alpha', 'l0.fc1b', 'l1.fc2b', 'lnf.b', 'outb']) {
      assert.ok(p[name].every((x) => x === 0), name);
    }
    assert.deepEqual(Array.from(initParameters({ ...config, options: { ...config.options, alphaLogits: [1, 0, 0, 0.5] } })['l1.h0.alpha']), [1, 0, 0, 0.5]);
  });
});

describe('reference model: forward and loss', () => {
  test('uniform logits give loss log(vocab); an untrained model is close to it, for every variant', () => {
    const t = tasks.copy({ seqLen: 6, vocab: 7 });
    const { tokens, targets } = t.sample(3, 1);
    for (const id of MODEL_VARIANT_IDS) { // the variants a model holds
      const config = configFor(id);
      const p = initParameters(config);
      const r = forwardLoss(config, p, tokens, targets, 3);
      assert.equal(r.logits.length, 3 * 6 * 7);
      assert.equal(r.count, 9);
      assert.ok(r.logits.every(Number.isFinite), id);
      assert.ok(Math.abs(r.loss - Math.log(7)) < 0.02, `${id}: untrained loss ${r.loss}, log(vocab) ${Math.log(7)}`);
      p.out.fill(0);
      const u = forwardLoss(config, p, tokens, targets, 3);
      assert.ok(Math.abs(u.loss - Math.log(7)) < 1e-12, `${id}: uniform logits`);
      assert.equal(u.accuracy, 0, 'argmax of a uniform row is token 0, which is never a copy target');
    }
  });

  test('loss and accuracy count only targets >= 0; batch sequences are independent', () => {
    const config = configFor('softmax');
    const p = initParameters(config);
    const t = tasks.reverse({ seqLen: 6, vocab: 7 });
    const { tokens, targets } = t.sample(2, 4);
    const both = forwardLoss(config, p, tokens, targets, 2);
    const one = forwardLoss(config, p, tokens.subarray(6), targets.subarray(6), 1);
    assert.deepEqual(Array.from(both.logits.subarray(42)), Array.from(one.logits));
    const none = forwardLoss(config, p, tokens, new Int32Array(12).fill(-1), 2);
    assert.equal(none.loss, 0);
    assert.equal(none.count, 0);
    // the loss at one position, by hand
    const tg = new Int32Array(12).fill(-1);
    tg[7] = 3;
    const r = forwardLoss(config, p, tokens, tg, 2);
    const row = Array.from(r.logits.subarray(7 * 7, 8 * 7));
    const lse = Math.log(row.reduce((s, x) => s + Math.exp(x), 0));
    assert.ok(Math.abs(r.loss - (lse - row[3])) < 1e-12);
    assert.equal(r.accuracy, row.indexOf(Math.max(...row)) === 3 ? 1 : 0);
  });

  test('causal: a later token does not change earlier logits', () => {
    for (const id of MODEL_VARIANT_IDS) { // the variants a model holds
      const config = configFor(id);
      const p = initParameters(config);
      const a = Int32Array.of(1, 2, 3, 4, 5, 6);
      const b = Int32Array.of(1, 2, 3, 4, 5, 0);
      const tg = new Int32Array(6).fill(-1);
      const la = forwardLoss(config, p, a, tg, 1).logits;
      const lb = forwardLoss(config, p, b, tg, 1).logits;
      assert.deepEqual(Array.from(la.subarray(0, 35)), Array.from(lb.subarray(0, 35)), id);
      assert.notDeepEqual(Array.from(la.subarray(35)), Array.from(lb.subarray(35)), id);
    }
  });
});

describe('reference model: central-difference gradients', () => {
  const tiny = { registry: REGISTRY, variant: 'softmax', vocab: 5, seqLen: 4, dModel: 4, heads: 2, layers: 1, dFF: 8, causal: true, seed: 3 };
  const tokens = Int32Array.of(1, 2, 3, 0, 4, 4, 1, 2);
  const targets = Int32Array.of(2, 3, -1, 1, 4, 1, 2, 0);

  test('tiny softmax model: a gradient step lowers the loss; directional derivatives agree', () => {
    const p = initParameters(tiny);
    // make the model less trivial than its init so the gradients are not all tiny
    for (const [name, arr] of Object.entries(p)) {
      const u = mulberry32(streamSeed(1, name));
      for (let i = 0; i < arr.length; i++) arr[i] += 0.3 * (u() - 0.5);
    }
    const g = gradients(tiny, p, tokens, targets, 2);
    assert.deepEqual(Object.keys(g), parameterTable(tiny).map((q) => q.name));
    const loss0 = forwardLoss(tiny, p, tokens, targets, 2).loss;
    let norm2 = 0;
    for (const a of Object.values(g)) for (const x of a) norm2 += x * x;
    assert.ok(norm2 > 1e-6, 'non-trivial gradient');
    // directional derivative along a random direction d: (L(p + e d) − L(p − e d)) / 2e ≈ g·d
    const d = {};
    let gd = 0;
    for (const [name, arr] of Object.entries(p)) {
      const u = mulberry32(streamSeed(2, name));
      d[name] = Float64Array.from(arr, () => u() - 0.5);
      for (let i = 0; i < arr.length; i++) gd += g[name][i] * d[name][i];
    }
    const moved = (e) => Object.fromEntries(Object.entries(p).map(([n, a]) => [n, Float64Array.from(a, (x, i) => x + e * d[n][i])]));
    const e = 1e-4;
    const dd = (forwardLoss(tiny, moved(e), tokens, targets, 2).loss - forwardLoss(tiny, moved(-e), tokens, targets, 2).loss) / (2 * e);
    assert.ok(Math.abs(dd - gd) < 1e-6 * (1 + Math.abs(gd)), `directional ${dd} vs g·d ${gd}`);
    // a small step against the gradient lowers the loss by about lr·|g|²
    const lr = 0.05 / Math.sqrt(norm2);
    const stepped = Object.fromEntries(Object.entries(p).map(([n, a]) => [n, Float64Array.from(a, (x, i) => x - lr * g[n][i])]));
    const loss1 = forwardLoss(tiny, stepped, tokens, targets, 2).loss;
    assert.ok(loss1 < loss0, `loss ${loss0} -> ${loss1}`);
    assert.ok(Math.abs((loss0 - loss1) / (lr * norm2) - 1) < 0.05, 'first-order decrease');
    // step-size independence: a coarser step gives the same gradient to O(h²)
    const g2 = gradients(tiny, p, tokens, targets, 2, { step: 1e-3, names: ['l0.h1.wq', 'out'] });
    for (const n of ['l0.h1.wq', 'out']) for (let i = 0; i < g2[n].length; i++) assert.ok(Math.abs(g2[n][i] - g[n][i]) < 1e-6, `${n}[${i}]`);
  });

  test('every variant: central differences agree with a directional derivative; frozen parameters get none', () => {
    for (const id of MODEL_VARIANT_IDS) { // the variants a model holds
      const config = { ...configFor(id, { layers: 1, seqLen: 4, dModel: 4, dFF: 4, vocab: 5 }), freeze: ['pos_emb'] };
      const p = initParameters(config);
      for (const [name, arr] of Object.entries(p)) {
        const u = mulberry32(streamSeed(4, name));
        for (let i = 0; i < arr.length; i++) arr[i] += 0.3 * (u() - 0.5);
      }
      const g = gradients(config, p, tokens, targets, 2);
      assert.ok(!('pos_emb' in g), `${id}: a frozen parameter has no gradient`);
      let gd = 0;
      const d = {};
      for (const [name, arr] of Object.entries(p)) {
        d[name] = name in g ? Float64Array.from(arr, (_, i) => (i % 3) - 1) : new Float64Array(arr.length);
        if (name in g) for (let i = 0; i < arr.length; i++) gd += g[name][i] * d[name][i];
      }
      const e = 1e-6; // the step of the central differences is 1e-5 per element; along d all move
      const at = (s) => forwardLoss(config, Object.fromEntries(Object.entries(p).map(([n, a]) => [n, Float64Array.from(a, (x, i) => x + s * d[n][i])])), tokens, targets, 2).loss;
      const dd = (at(e) - at(-e)) / (2 * e);
      assert.ok(Math.abs(dd - gd) < 1e-6 * (1 + Math.abs(gd)), `${id}: directional ${dd} vs g·d ${gd}`);
    }
  });

  test('AdamW from the reference gradients lowers the loss of a fixed batch', () => {
    const p = initParameters(tiny);
    const first = forwardLoss(tiny, p, tokens, targets, 2).loss;
    let state = {};
    let norm = 0;
    for (let s = 0; s < 8; s++) {
      const g = gradients(tiny, p, tokens, targets, 2);
      ({ state, norm } = adamwStep(tiny, p, g, state, { lr: 0.02 }));
      assert.ok(Number.isFinite(norm));
    }
    assert.equal(state.t, 8);
    const last = forwardLoss(tiny, p, tokens, targets, 2).loss;
    assert.ok(last < first - 0.1, `loss ${first} -> ${last}`);
  });
});
