// Every variant in the registry (lab.variants, from src/c/variants.def) is covered everywhere the
// suite and the page need it: a fixture file with cases (tests/fixtures, made by
// tests/fixtures/make-fixtures.mjs), a definition in src/js/reference.js (logits or weights, explain, flops,
// grad) whose explanation and defaults agree with the reference and the binding, fixtures the generic
// sweep of make-fixtures.mjs can produce; and that the Experiment view's colours name no stale or shared entry.
// A failure says what is missing and which file to edit.
//
//   node --experimental-wasm-relaxed-simd --test tests/registry.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import {
  definitions, hasDefinition, reference, referenceGrad, logits, explain, flopCount,
} from '../src/js/reference.js';
import {
  builds, loadBuild, makeInputs, randomArray, closeTo, caseName, causalValues, MIXTURE_COMPONENTS, isMixable, isMixture,
} from './helpers.mjs';
import { genericCases } from './fixtures/make-fixtures.mjs';
import { experimentVariants } from '../src/js/experiment.js';
import { COLORS, FALLBACK } from '../web/experiment/colors.js';

const FIXTURE_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
const DIMS = { n: 6, d: 4, dv: 3, h: 5, L: 8, a: 2, b: 4, rank: 2 };
const REFERENCE = 'src/js/reference.js';
const FIXTURES = 'run npm run fixtures (tests/fixtures/make-fixtures.mjs)';

const buildList = await builds();
const labs = {};
for (const build of buildList) labs[build] = await loadBuild(build);

/** Options a small call of variant `v` needs (a mixture: every component, equal weights). */
function optionsFor(v, causal = v.causalOnly) {
  const k = MIXTURE_COMPONENTS.length;
  return isMixture(v) ? { causal, components: [...MIXTURE_COMPONENTS], alpha: MIXTURE_COMPONENTS.map(() => 1 / k) } : { causal };
}

const inputsFor = (v, seed) => makeInputs(v.id, DIMS, seed, { components: optionsFor(v).components });

for (const build of buildList) {
  describe(`every variant in lab.variants is covered [${build}]`, () => {
    const lab = labs[build];
    let seed = 9900;
    for (const v of lab.variants) {
      const s = seed++;
      test(`${v.id} has a fixture file with cases [${build}]`, () => {
        const file = path.join(FIXTURE_DIR, `${v.id}.json`);
        assert.ok(existsSync(file), `variant '${v.id}' has no fixture (tests/fixtures/${v.id}.json): ${FIXTURES}`);
        const fixture = JSON.parse(readFileSync(file, 'utf8'));
        assert.equal(fixture.variant, v.id, `tests/fixtures/${v.id}.json holds variant '${fixture.variant}': ${FIXTURES}`);
        assert.ok(Array.isArray(fixture.cases) && fixture.cases.length > 0,
          `variant '${v.id}' has a fixture file without cases: ${FIXTURES}`);
      });

      test(`${v.id} has a definition (logits or weights, explain, flops) [${build}]`, () => {
        assert.ok(hasDefinition(v.id),
          `variant '${v.id}' has no definition: add an entry '${v.id}' to \`definitions\` in ${REFERENCE} ` +
          '(softmaxType({ logitRow, logitSteps, logitFlops }) or rowwise({ weightRow, explain, flops }))');
        const def = definitions[v.id];
        assert.ok(typeof def.logits === 'function' || typeof def.weights === 'function',
          `variant '${v.id}' has neither logits nor weights in ${REFERENCE}`);
        assert.equal(typeof def.explain, 'function', `variant '${v.id}' has no explain() in ${REFERENCE} (the page's hover read-out)`);
        assert.equal(typeof def.flops, 'function', `variant '${v.id}' has no flops() in ${REFERENCE} (the page's and the benchmark's GFLOP/s)`);
        const { flops, formula } = flopCount(v.id, DIMS, optionsFor(v));
        assert.ok(Number.isFinite(flops) && flops > 0, `variant '${v.id}': flops() in ${REFERENCE} gives ${flops}`);
        assert.ok(typeof formula === 'string' && formula.length > 0, `variant '${v.id}': flops() in ${REFERENCE} gives no formula`);
      });

      test(`${v.id} has a gradient (grad) in its definition, for every array the binding's attentionGrad reads [${build}]`, () => {
        assert.ok(hasDefinition(v.id), `variant '${v.id}' has no definition in ${REFERENCE}`);
        const def = definitions[v.id];
        assert.equal(typeof def.grad, 'function',
          `variant '${v.id}' has no grad() in ${REFERENCE} (the float64 gradients tests/gradients.test.mjs checks attentionGrad against): ` +
          'give a softmaxType entry a logitBackward(inputs, options, dB, grad), a rowwise entry a weightBackward(inputs, options, A, dA, grad)');
        const inputs = inputsFor(v, s);
        const options = optionsFor(v);
        const dO = randomArray(DIMS.n * DIMS.dv, s, 'dOutput');
        const { output, grads } = referenceGrad(v.id, inputs, dO, options);
        closeTo(output, reference(v.id, inputs, options).output,
          { variant: v.id, dims: DIMS, seed: s, options, cols: DIMS.dv, what: `referenceGrad output (${REFERENCE})` }, 1e-14, 1e-12);
        // the arrays attentionGrad returns gradients for: those the call reads, and α's form for a mixture
        const { grads: bound } = lab.attentionGrad(v.id, inputs, dO, options);
        assert.deepEqual(Object.keys(grads).sort(), Object.keys(bound).sort(),
          `variant '${v.id}': grad() in ${REFERENCE} gives gradients of [${Object.keys(grads).sort().join(', ')}], ` +
          `attentionGrad of [${Object.keys(bound).sort().join(', ')}]`);
        for (const [name, g] of Object.entries(grads)) {
          assert.equal(g.length, bound[name].length, `variant '${v.id}': grad() in ${REFERENCE} gives ${name} ${g.length} values, attentionGrad ${bound[name].length}`);
          assert.ok(g.every(Number.isFinite), `variant '${v.id}': grad() in ${REFERENCE} gives a non-finite ${name}`);
        }
      });

      if (isMixable(v)) {
        test(`${v.id} is mixable, so its definition has logits [${build}]`, () => {
          assert.ok(hasDefinition(v.id) && typeof definitions[v.id].logits === 'function',
            `variant '${v.id}' is mixable but its definition in ${REFERENCE} has no logits: write it with softmaxType({ logitRow, ... })`);
          assert.equal(typeof definitions[v.id].logitBackward, 'function',
            `variant '${v.id}' is mixable but its definition in ${REFERENCE} has no logitBackward (a mixture's gradient pushes α_c·dB through it)`);
          const B = logits(v.id, inputsFor(v, s), {});
          assert.equal(B.length, DIMS.n * DIMS.n, `variant '${v.id}': logits() in ${REFERENCE} has ${B.length} values, expected n² = ${DIMS.n ** 2}`);
        });
      }

      test(`${v.id}: explain() gives Steps ending with A[i,j] as the reference computes it [${build}]`, () => {
        assert.ok(hasDefinition(v.id), `variant '${v.id}' has no definition in ${REFERENCE}`);
        const inputs = inputsFor(v, s);
        for (const causal of causalValues(v)) {
          const options = optionsFor(v, causal);
          const { weights } = reference(v.id, inputs, options);
          for (const [i, j] of [[0, 0], [2, 4], [5, 1], [DIMS.n - 1, DIMS.n - 1]]) {
            const where = `${caseName(v.id, DIMS, s, options)} A[${i},${j}]`;
            const steps = explain(v.id, inputs, options, i, j);
            assert.ok(Array.isArray(steps) && steps.length > 0,
              `variant '${v.id}': explain() in ${REFERENCE} returned no Step for ${where}`);
            for (const step of steps) {
              assert.ok(typeof step.label === 'string' && typeof step.formula === 'string' && typeof step.value === 'number',
                `${where}: a Step must be { label, formula, value, terms? }, got ${JSON.stringify(step)}`);
              if (step.terms) {
                assert.ok(step.terms.every((t) => t.length === 2 && t.every(Number.isFinite)),
                  `${where}: Step ${step.label} has terms that are not [number, number] pairs`);
              }
            }
            const last = steps[steps.length - 1];
            assert.equal(last.label, `A[${i},${j}]`, `${where}: the last Step is ${last.label}, expected A[${i},${j}]`);
            assert.ok(Math.abs(last.value - weights[i * DIMS.n + j]) <= 1e-12,
              `${where}: explain() gives ${last.value}, reference() ${weights[i * DIMS.n + j]} (${REFERENCE})`);
          }
        }
      });

      test(`${v.id}: the definition's defaults are those of lab.options [${build}]`, () => {
        const inputs = inputsFor(v, s);
        const defaults = {};
        for (const name of v.options) {
          const d = lab.options[name]?.default;
          if (d !== null && d !== undefined) defaults[name] = d;
        }
        const base = optionsFor(v);
        const a = reference(v.id, inputs, base);
        const b = reference(v.id, inputs, { ...base, ...defaults });
        assert.deepEqual(Array.from(a.output), Array.from(b.output),
          `variant '${v.id}': ${REFERENCE} without options differs from it with lab.options defaults ${JSON.stringify(defaults)}`);
      });

      test(`${v.id}: the generic fixture sweep gives cases the binding meets [${build}]`, () => {
        // what `npm run fixtures` produces for a variant without a hand-written table
        const cases = [];
        let t = 0;
        genericCases(v, (id, dims, options = {}, extra = {}) => cases.push({ id, dims, options, seed: 50000 + t++, magnitude: extra.magnitude ?? 1 }));
        assert.ok(cases.length > 0, `tests/fixtures/make-fixtures.mjs genericCases gives no case for '${v.id}'`);
        for (const c of cases.filter((x) => x.dims.n <= 9)) {
          const inputs = makeInputs(c.id, c.dims, c.seed, { magnitude: c.magnitude, components: c.options.components });
          const expected = reference(c.id, inputs, c.options).output;
          const got = lab.attention(c.id, inputs, c.options).output;
          closeTo(got, expected, { variant: c.id, build, dims: c.dims, seed: c.seed, options: c.options, cols: c.dims.dv, extra: '(generic fixture sweep)' });
        }
      });
    }
  });
}

test('lab.variants says what each variant keeps, and the calls do it: lse from a kept pass, a state, components', () => {
  const lab = labs[buildList[0]];
  for (const v of lab.variants) {
    const inputs = inputsFor(v, 71);
    const kept = lab.attention(v.id, inputs, { ...optionsFor(v), keep: true });
    assert.equal(kept.lse !== undefined, v.keepsLse, `${v.id}: keepsLse ${v.keepsLse}, but a kept pass ${kept.lse ? 'returned' : 'did not return'} lse`);
    if (v.keepsState) {
      const r = lab.attention(v.id, inputs, { ...optionsFor(v), state: true });
      assert.ok(r.state?.length > 0, `${v.id}: keepsState, but state: true returned no state`);
      assert.equal(r.normalizer !== undefined, v.keepsNormalizer, `${v.id}: keepsNormalizer ${v.keepsNormalizer}, but state: true ${r.normalizer ? 'returned' : 'did not return'} a normalizer`);
    } else {
      assert.throws(() => lab.attention(v.id, inputs, { ...optionsFor(v), state: true }), (e) => e.code === 'UNSUPPORTED', `${v.id}: keeps no state, so state: true is refused`);
    }
    // signedWeights: a map of A may start at 0 exactly when no entry can be negative
    const { weights } = lab.attention(v.id, inputs, { ...optionsFor(v), weights: true });
    const lowest = weights.reduce((m, x) => Math.min(m, x), Infinity);
    if (v.signedWeights) assert.ok(lowest < 0, `${v.id}: signedWeights, but A (seed 71) has no negative entry`);
    else assert.ok(lowest >= 0, `${v.id}: signedWeights false, but A (seed 71) has ${lowest}`);
    // inputFree: A is the same for other inputs of the same shape exactly when it reads none of them
    const other = lab.attention(v.id, inputsFor(v, 72), { ...optionsFor(v), weights: true }).weights;
    const same = other.length === weights.length && other.every((x, i) => x === weights[i]);
    assert.equal(same, v.inputFree, `${v.id}: inputFree ${v.inputFree}, but A for seeds 71 and 72 is ${same ? 'the same' : 'different'}`);
    // learnedLogits: the logits are parameters (r, projections of x) rather than q·k — a variant
    // that reads no q; the mixture mixes such logits with softmax's
    const readsQ = v.inputs.some((x) => x.name === 'q');
    assert.equal(v.learnedLogits, v.composite || (!readsQ && !v.inputFree), `${v.id}: learnedLogits ${v.learnedLogits}, reads q: ${readsQ}`);
    assert.equal(v.composite, v.options.includes('components'), `${v.id}: composite is the variant that takes components`);
    // the cost column, written by hand per variant, agrees with the family's fact
    assert.equal(v.quadratic, /n\^2/.test(v.cost) || v.composite, `${v.id}: quadratic ${v.quadratic}, cost ${v.cost}`);
  }
  // the contract (docs/contract.md): softmax and the Synthesizers stream softmax and keep lse; the linear family keeps a state
  const ids = (f) => lab.variants.filter(f).map((v) => v.id).sort();
  assert.deepEqual(ids((v) => v.keepsLse), lab.variants.filter((v) => ['softmax', 'synthesizer'].includes(v.family)).map((v) => v.id).sort());
  assert.deepEqual(ids((v) => v.keepsState), lab.variants.filter((v) => ['linear', 'recurrent'].includes(v.family)).map((v) => v.id).sort());
  assert.deepEqual(ids((v) => v.keepsNormalizer), lab.variants.filter((v) => v.family === 'linear').map((v) => v.id).sort());
  // the recurrent family is causal by construction, and no model holds it yet
  assert.deepEqual(ids((v) => v.causalOnly), lab.variants.filter((v) => v.family === 'recurrent').map((v) => v.id).sort());
  assert.deepEqual(ids((v) => !v.inModels), lab.variants.filter((v) => v.family === 'recurrent').map((v) => v.id).sort());
  assert.deepEqual(ids((v) => v.signedWeights), lab.variants.filter((v) => v.family === 'recurrent').map((v) => v.id).sort());
  assert.deepEqual(ids((v) => v.inputFree), ['fixed']);
  assert.deepEqual(ids((v) => v.learnedLogits), ['dense', 'dense1', 'factorized-dense', 'factorized-random', 'mixture', 'random']);
  assert.deepEqual(ids((v) => v.composite), ['mixture']);
});

test('src/js/reference.js defines no variant that lab.variants lacks', () => {
  const ids = labs[buildList[0]].variants.map((v) => v.id);
  const extra = Object.keys(definitions).filter((id) => !ids.includes(id));
  assert.deepEqual(extra, [], `definitions in ${REFERENCE} for ids not in lab.variants: ${extra.join(', ')} ` +
    '(remove them, or add the variant to src/c/variants.def)');
});

test('the Experiment view\'s colours (web/experiment/colors.js): each named one a variant it races, no two alike, the fallback unlike any', () => {
  // A variant without an entry is drawn in FALLBACK (a new variant needs no edit there to show);
  // a named colour must not be stale, shared, or the fallback's.
  const names = new Set(experimentVariants(labs[buildList[0]].variants).map((v) => v.name));
  const stale = Object.keys(COLORS).filter((name) => !names.has(name));
  assert.deepEqual(stale, [], `COLORS in web/experiment/colors.js names ${stale.join(', ')}, which the Experiment view does not race (remove the entry)`);
  const taken = new Map([[FALLBACK.join('/'), 'the fallback']]);
  for (const [name, pair] of Object.entries(COLORS)) {
    const key = pair.join('/');
    assert.ok(!taken.has(key), `web/experiment/colors.js gives ${name} the colours of ${taken.get(key)}`);
    taken.set(key, name);
  }
});
