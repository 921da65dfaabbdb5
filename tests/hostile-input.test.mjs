// Hostile and edge input to the binding, on every build:
// - every array a call returns (output, weights, state, normalizer) is finite or the call is a
//   VALUE error, whatever finite inputs it got;
// - inputs are read once, into the binding's own copies, before anything shared is written:
//   getters, proxies, a faked `length`, a buffer detached mid-call and re-entrant calls can neither
//   corrupt the call nor make it fail falsely;
// - null is the default for every option; an input name no variant reads is UNKNOWN;
//   a locateFile that throws rejects init() with LOAD; init({ fresh: true }) is independent.
//
//   node --test tests/hostile-input.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mulberry32 } from '../src/js/prng.js';
import { binding, builds, loadBuild, makeInputs, VARIANTS, OPTIONS, isMixture } from './helpers.mjs';

const { init, AttnError } = await binding();
const buildList = await builds();

const SMALL = { n: 5, d: 3, dv: 2, h: 2, L: 6, a: 2, b: 3, rank: 2 };
const MIX = { components: ['softmax', 'random'], alpha: [0.5, 0.5] };
const optionsFor = (v, extra = {}) => ({ ...(isMixture(v) ? MIX : {}), ...extra });
const inputsFor = (v, seed = 1) => makeInputs(v.id, SMALL, seed, isMixture(v) ? { components: MIX.components } : {});
const allFinite = (result) => Object.entries(result).filter(([, a]) => a.some((x) => !Number.isFinite(x))).map(([k]) => k);
const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

for (const build of buildList) {
  const lab = await loadBuild(build);

  describe(`results are finite or a VALUE error [${build}]`, () => {
    // Entries with magnitudes from 1 to 3e38 drawn per array: logits, exps, feature maps, states
    // and normalisers overflow in every combination the variants have.
    for (const v of VARIANTS) {
      test(`${v.id}: 300 random calls with entries up to 3e38, weights and state requested`, () => {
        const rnd = mulberry32(7 + VARIANTS.indexOf(v));
        let finite = 0, errors = 0;
        for (let trial = 0; trial < 300; trial++) {
          const n = 1 + Math.floor(rnd() * 6), d = 1 + Math.floor(rnd() * 4), dv = 1 + Math.floor(rnd() * 3);
          const inputs = { ...makeInputs(v.id, { ...SMALL, n, d, dv, L: n + 1, a: 1, b: n + 1 }, trial, isMixture(v) ? { components: MIX.components } : {}) };
          const scales = {};
          for (const spec of v.inputs) {
            if (!inputs[spec.name]) continue;
            const exponent = [0, 10, 19, 20, 30, 38][Math.floor(rnd() * 6)];
            scales[spec.name] = exponent;
            inputs[spec.name] = inputs[spec.name].map((x) => Math.fround(Math.min(3e38, Math.max(-3e38, x * 10 ** exponent))));
          }
          const options = optionsFor(v, { weights: true, causal: rnd() < 0.5 || v.causalOnly });
          if (v.options.includes('state')) options.state = true;
          try {
            const result = lab.attention(v.id, inputs, options);
            const bad = allFinite(result);
            assert.deepEqual(bad, [], `${v.id} n=${n} d=${d} dv=${dv} trial ${trial} scales ${JSON.stringify(scales)}: non-finite ${bad.join(', ')} returned`);
            finite++;
          } catch (err) {
            if (err instanceof assert.AssertionError) throw err;
            assert.ok(err instanceof AttnError && err.code === 'VALUE', `${v.id} trial ${trial}: ${err.code} ${err.message}`);
            errors++;
          }
        }
        assert.ok(finite > 0, `${v.id}: no call succeeded, so the test says nothing about finite results`);
        // (efficient, random and fixed never overflow: their rows are convex combinations of v.)
        if (['softmax', 'linear', 'taylor', 'dense'].includes(v.id)) assert.ok(errors > 0, `${v.id}: no call overflowed, so the check was never exercised`);
      });
    }

    test('linear weights that overflow (q = 1, k = 3e38) are a VALUE error naming weights, though y is finite', () => {
      const inputs = { n: 1, d: 1, dv: 1, q: [1], k: [3e38], v: [1e-30] };
      const { output } = lab.attention('linear', inputs);
      assert.ok(output.every(Number.isFinite), 'the output alone is finite');
      assert.throws(() => lab.attention('linear', inputs, { weights: true }),
        (err) => err.code === 'VALUE' && /^weights\[0\]\[0\]/.test(err.message), 'weights are checked');
    });
  });

  describe(`an overflowing recurrent state is named with advice for the arrays the variant reads [${build}]`, () => {
    // n = 2, d = dv = 1. plain-linear: q = k = v = 1e20, so S = k v = 1e40 is past float32's range
    // at the first token; gla: S = 1e30 after the first token, then a decay e^g = e^88 (1.7e38)
    // multiplies it past the range at the second.
    const cases = {
      'plain-linear': { inputs: { n: 2, d: 1, dv: 1, q: [1e20, 1e20], k: [1e20, 1e20], v: [1e20, 1e20] }, advice: [], not: [/\bg\b/, /beta/] },
      gla: { inputs: { n: 2, d: 1, dv: 1, q: [1, 1], k: [1, 1], v: [1e30, 1e30], g: [88, 88] }, advice: [/keep g <= 0/], not: [/beta/] },
    };
    for (const [id, c] of Object.entries(cases)) {
      test(`${id}: the message says the state overflowed and advises ${c.advice.length ? 'on ' + c.advice.map(String).join(', ') : 'scaling the inputs alone'}`, () => {
        assert.throws(() => lab.attention(id, c.inputs), (err) => {
          assert.equal(err.code, 'VALUE', err.message);
          assert.match(err.message, /came out .*: the recurrent state left float32's range; .*scale the inputs down$/, `${id}: ${err.message}`);
          for (const re of c.advice) assert.match(err.message, re, `${id}: ${err.message}`);
          for (const re of c.not) assert.doesNotMatch(err.message, re, `${id} reads no such array: ${err.message}`);
          return true;
        });
      });
    }
    test('deltanet and gated-deltanet advise on beta and unit keys (and gated-deltanet on g), from the arrays they read', async () => {
      const { overflowError } = await import(new URL('../src/js/errors.js', import.meta.url).href);
      const byId = Object.fromEntries(lab.variants.map((v) => [v.id, v]));
      const delta = overflowError(byId.deltanet, {}, 'output', 0, 1, Infinity).message;
      assert.match(delta, /beta in \[0, 1\] and keys of unit norm/);
      assert.doesNotMatch(delta, /\bg <= 0/);
      const gated = overflowError(byId['gated-deltanet'], {}, 'output', 0, 1, Infinity).message;
      assert.match(gated, /keep g <= 0.*beta in \[0, 1\]/);
      const soft = overflowError(byId.softmax, { scale: 2 }, 'output', 0, 1, NaN).message;
      assert.match(soft, /an intermediate .* or use a smaller scale than 2$/);
    });
  });

  describe(`inputs are read once, before the call is committed [${build}]`, () => {
    const v = VARIANTS.find((x) => x.id === 'softmax');
    const base = inputsFor(v, 3);
    const expected = lab.attention('softmax', base).output;

    test('a getter on an array element that calls attention() again leaves both calls right', () => {
      const q = Array.from(base.q);
      let inner = null, reads = 0;
      Object.defineProperty(q, 2, {
        get() {
          reads++;
          inner = lab.attention('linear', makeInputs('linear', { n: 40, d: 7, dv: 5 }, 9)).output; // grows memory
          return base.q[2];
        },
      });
      const { output } = lab.attention('softmax', { ...base, q });
      assert.ok(same(output, expected), 'the outer call is unchanged by the inner one');
      assert.equal(reads, 1, 'the element was read exactly once');
      const again = lab.attention('linear', makeInputs('linear', { n: 40, d: 7, dv: 5 }, 9)).output;
      assert.ok(same(inner, again), 'the inner call is right too');
    });

    test('a Proxy over the inputs object and over an array is read once per name and element', () => {
      const counts = new Map();
      const count = (key) => counts.set(key, (counts.get(key) ?? 0) + 1);
      const k = new Proxy(Array.from(base.k), { get(target, key) { count(`k.${String(key)}`); return target[key]; } });
      const inputs = new Proxy({ ...base, k }, { get(target, key) { count(String(key)); return target[key]; } });
      const { output } = lab.attention('softmax', inputs);
      assert.ok(same(output, expected));
      for (const [key, c] of counts) if (key !== 'k.constructor') assert.equal(c, 1, `${key} read ${c} times`);
    });

    test('a typed array whose own length lies is measured by its true length', () => {
      const short = base.q.slice(0, 6);
      Object.defineProperty(short, 'length', { value: base.q.length });
      assert.throws(() => lab.attention('softmax', { ...base, q: short }), (err) => err.code === 'SHAPE' && /q has 6 values/.test(err.message));
      const long = Float32Array.from(base.q);
      Object.defineProperty(long, 'length', { value: 1e9 });
      assert.ok(same(lab.attention('softmax', { ...base, q: long }).output, expected), 'a length faked long changes nothing');
    });

    test('a getter that detaches a typed array before it is read gives SHAPE, not stale data', () => {
      const k = Float32Array.from(base.k);
      const q = Array.from(base.q);
      Object.defineProperty(q, 0, { get() { structuredClone(k.buffer, { transfer: [k.buffer] }); return base.q[0]; } });
      assert.throws(() => lab.attention('softmax', { ...base, q, k }), (err) => err.code === 'SHAPE' && /k has 0 values/.test(err.message));
      assert.ok(same(lab.attention('softmax', base).output, expected), 'the instance keeps working');
    });

    test('every option, and every entry of a list option, is read exactly once', () => {
      const reads = new Map();
      const count = (key) => reads.set(key, (reads.get(key) ?? 0) + 1);
      const components = new Proxy(['softmax', 'random'], { get(t, k) { count(`components.${String(k)}`); return t[k]; } });
      const alpha = new Proxy([0.5, 0.5], { get(t, k) { count(`alpha.${String(k)}`); return t[k]; } });
      const options = new Proxy({ components, alpha, causal: true }, { get(t, k) { count(String(k)); return t[k]; } });
      const mix = VARIANTS.find(isMixture);
      lab.attention(mix.id, inputsFor(mix), options);
      for (const [key, n] of reads) assert.equal(n, 1, `${key} was read ${n} times`);
      assert.ok(reads.has('components.1') && reads.has('alpha.1') && reads.has('causal'));
    });

    test('a getter on an option that calls attention() again leaves the outer call right', () => {
      const options = {};
      Object.defineProperty(options, 'causal', { enumerable: true, get() { lab.attention('softmax', base, { causal: true }); return false; } });
      assert.ok(same(lab.attention('softmax', base, options).output, expected));
    });
  });

  describe(`small edges [${build}]`, () => {
    for (const [name, info] of Object.entries(OPTIONS)) {
      const v = VARIANTS.find((x) => info.appliesTo.includes(x.id) && (x.id !== 'mixture' || name === 'scale'));
      if (!v || info.default === null) continue;
      test(`option ${name}: null means its default (${JSON.stringify(info.default)}), like leaving it out`, () => {
        const inputs = inputsFor(v);
        const omitted = lab.attention(v.id, inputs, optionsFor(v));
        const nulled = lab.attention(v.id, inputs, optionsFor(v, { [name]: null }));
        const explicit = lab.attention(v.id, inputs, optionsFor(v, { [name]: info.default }));
        assert.ok(same(nulled.output, omitted.output) && same(explicit.output, omitted.output), `${v.id} with ${name}: null`);
      });
    }
    test('option scale: null is the default 1/sqrt(d), like leaving it out', () => {
      const inputs = inputsFor(VARIANTS.find((x) => x.id === 'softmax'));
      assert.ok(same(lab.attention('softmax', inputs, { scale: null }).output, lab.attention('softmax', inputs).output));
    });

    for (const typo of ['zz', 'kk', 'Q', 'dV']) {
      test(`an input named ${typo} is UNKNOWN, naming it`, () => {
        const inputs = { ...inputsFor(VARIANTS.find((x) => x.id === 'softmax')), [typo]: 1 };
        assert.throws(() => lab.attention('softmax', inputs), (err) => err.code === 'UNKNOWN' && err.message.includes(`"${typo}"`));
      });
    }
    test('inputs another variant reads (x, h, r) are allowed, so one object can drive several variants', () => {
      const all = Object.assign({}, ...VARIANTS.map((v) => makeInputs(v.id, SMALL, 4, { optional: true })));
      for (const v of VARIANTS) {
        const options = optionsFor(v);
        assert.doesNotThrow(() => lab.attention(v.id, all, options), v.id);
      }
    });
  });
}

describe('init', () => {
  test('a locateFile that throws rejects init() with LOAD, quoting the error', async () => {
    await assert.rejects(init({ locateFile: () => { throw new Error('no CDN here'); } }),
      (err) => err instanceof AttnError && err.code === 'LOAD' && /no CDN here/.test(err.message));
  });
  test('init({ fresh: true }) is an instance of its own: disposing it leaves the shared one working', async () => {
    const shared = await init({ simd: true });
    const own = await init({ simd: true, fresh: true });
    assert.notEqual(own, shared);
    own.dispose();
    assert.throws(() => own.attention('fixed', { n: 1, dv: 1, v: [1] }), (err) => err.code === 'DISPOSED');
    assert.deepEqual(Array.from(shared.attention('fixed', { n: 1, dv: 1, v: [1] }).output), [1]);
    assert.equal(await init({ simd: true }), shared, 'the cached instance is still the one init() returns');
  });
  test('fresh must be a boolean', async () => {
    await assert.rejects(init({ fresh: 'yes' }), (err) => err.code === 'VALUE' && /fresh/.test(err.message));
  });
});
