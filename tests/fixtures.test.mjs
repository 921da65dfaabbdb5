// Runs every stored fixture (tests/fixtures/*.json, made by tests/fixtures/make-fixtures.mjs from the float64
// reference, src/js/reference.js) on every build and checks output, and weights where stored, against
// the accuracy bar of docs/contract.md.
//
//   node --test tests/fixtures.test.mjs
//   node --experimental-wasm-relaxed-simd --test tests/fixtures.test.mjs   # also the relaxed build

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import {
  binding, builds, loadBuild, makeInputs, inputChecksum, closeTo, caseName, ARRAY_SHAPES, VARIANT_IDS, ABS_TOL, REL_TOL,
} from './helpers.mjs';
import { ACCURACY_BAR } from '../src/js/reference.js';

test('the bar the package publishes (reference.js ACCURACY_BAR, the benchmark\'s unit) is the contract\'s, as these tests hold it', () => {
  assert.deepEqual({ ...ACCURACY_BAR }, { abs: ABS_TOL, rel: REL_TOL });
});

const FIXTURE_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
const files = readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.json')).sort();
const fixtures = files.map((f) => JSON.parse(readFileSync(path.join(FIXTURE_DIR, f), 'utf8')));

const buildList = await builds();
const labs = {};
for (const build of buildList) labs[build] = await loadBuild(build);

test('there is one fixture file per variant in lab.variants, and none for other ids', () => {
  const ids = fixtures.map((f) => f.variant).sort();
  for (const build of buildList) {
    const variantsOfBinding = labs[build].variants.map((v) => v.id).sort();
    assert.deepEqual(variantsOfBinding, [...VARIANT_IDS].sort(), `[${build}]: lab.variants differs between builds`);
  }
  const missing = VARIANT_IDS.filter((id) => !ids.includes(id));
  const stale = ids.filter((id) => !VARIANT_IDS.includes(id));
  assert.deepEqual(missing, [], `variants without a fixture file in tests/fixtures: ${missing.join(', ')}; ` +
    'run npm run fixtures (tests/fixtures/make-fixtures.mjs)');
  assert.deepEqual(stale, [], `fixture files for ids not in lab.variants: ${stale.join(', ')}; ` +
    'run npm run fixtures (tests/fixtures/make-fixtures.mjs), which removes them');
  fixtures.forEach((f, idx) => {
    assert.equal(path.basename(files[idx], '.json'), f.variant, `tests/fixtures/${files[idx]} holds variant ${f.variant}`);
    assert.ok(f.cases.length > 0, `tests/fixtures/${files[idx]} has no cases`);
  });
});

test('init() with simd "auto" picks the best build the engine validates', async (t) => {
  const { init, features } = await binding();
  const f = features();
  const lab = await init();
  assert.equal(lab.build, f.relaxedSimd ? 'relaxed' : f.simd ? 'simd' : 'scalar', `features() = ${JSON.stringify(f)}`);
  if (!buildList.includes('relaxed')) {
    t.diagnostic('features().relaxedSimd is false, so the relaxed build is not tested: run node with --experimental-wasm-relaxed-simd');
  }
});

/** Same values as plain arrays, for the cases that exercise the `ArrayLike<number>` input path. */
function asPlainArrays(inputs) {
  const out = { ...inputs };
  for (const name of Object.keys(ARRAY_SHAPES)) if (out[name]) out[name] = Array.from(out[name]);
  return out;
}

for (const build of buildList) {
  describe(`fixtures [${build}]`, () => {
    for (const fixture of fixtures) {
      for (const c of fixture.cases) {
        // one case in five passes plain arrays instead of Float32Arrays
        const plain = c.seed % 5 === 0;
        const name = `${caseName(c.id, c.dims, c.seed, c.options, c.magnitude !== 1 ? `magnitude=${c.magnitude}` : '')}` +
          `${c.zeroRows ? ' zero-rows' : ''}${c.optional ? ' with-optional' : ''}${plain ? ' plain-arrays' : ''} [${build}]`;
        test(name, () => {
          const lab = labs[build];
          let inputs = makeInputs(c.id, c.dims, c.seed, {
            magnitude: c.magnitude, components: c.options.components, zeroRows: c.zeroRows, optional: c.optional,
          });
          const sum = inputChecksum(inputs);
          assert.ok(Math.abs(sum - c.checksum) <= 1e-9 * Math.max(1, Math.abs(c.checksum)),
            `${name}: regenerated inputs do not match the fixture (checksum ${sum} vs ${c.checksum}); ` +
            'tests/helpers.mjs changed: run node tests/fixtures/make-fixtures.mjs');
          if (plain) inputs = asPlainArrays(inputs);
          const ctx = { variant: c.id, build, dims: c.dims, seed: c.seed, options: c.options, cols: c.dims.dv };

          const r = lab.attention(c.id, inputs, { ...c.options, weights: false });
          assert.ok(r.output instanceof Float32Array, `${name}: output is not a Float32Array`);
          assert.equal(r.weights, undefined, `${name}: weights returned although not requested`);
          closeTo(r.output, c.output, { ...ctx, what: 'output (weights: false)' });

          if (c.weights) {
            const rw = lab.attention(c.id, inputs, { ...c.options, weights: true });
            closeTo(rw.output, c.output, { ...ctx, what: 'output (weights: true)' });
            assert.ok(rw.weights instanceof Float32Array, `${name}: weights is not a Float32Array`);
            closeTo(rw.weights, c.weights, { ...ctx, what: 'weights', cols: c.dims.n });
          }
        });
      }
    }
  });
}
