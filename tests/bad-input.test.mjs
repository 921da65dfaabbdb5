// Bad input: every case must throw an AttnError with the right `code` and a message naming the input;
// afterwards the instance must still give correct answers, and 1000 failing calls must not grow its
// WebAssembly memory. Calling after dispose() must throw a clear error.
//
//   node --test tests/bad-input.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { reference } from '../src/js/reference.js';
import { binding, builds, loadBuild, makeInputs, closeTo } from './helpers.mjs';
import { CASES, good, MIX, mixInputs, SOFTMAX_DIMS } from './bad-input-cases.mjs';

const { AttnError } = await binding();
const buildList = await builds();

/** Runs one bad case; returns the error (checked) or throws an assertion naming the case. */
function expectAttnError(lab, c, build) {
  const where = `${c.name}: attention(${JSON.stringify(c.id)}, …${c.options !== undefined ? `, ${JSON.stringify(c.options)}` : ''}) [${build}]`;
  let err;
  try {
    lab.attention(c.id, c.inputs(), c.options);
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${where}: did not throw`);
  assert.ok(err instanceof AttnError, `${where}: threw ${err?.constructor?.name}: ${err?.message}, expected an AttnError`);
  assert.ok(err instanceof Error, `${where}: AttnError is not an Error`);
  assert.equal(err.name, 'AttnError', `${where}: error name`);
  const codes = Array.isArray(c.code) ? c.code : [c.code];
  assert.ok(codes.includes(err.code), `${where}: code ${err.code} (message: "${err.message}"), expected ${codes.join(' or ')}`);
  for (const re of c.mentions) {
    assert.match(err.message, re, `${where}: message "${err.message}" does not mention ${re}`);
  }
  return err;
}

/** A correct call of each kind, checked against the reference. */
function checkStillCorrect(lab, build, after) {
  const runs = [
    ['softmax', good.softmax(), { causal: true }],
    ['mixture', mixInputs(), MIX],
    ['factorized-dense', good.fd(), { tiling: 'tile' }],
    ['fixed', good.fixed(), { pattern: 'left' }],
    ['linear', makeInputs('linear', SOFTMAX_DIMS, 10), {}],
  ];
  for (const [id, inputs, options] of runs) {
    const { output } = lab.attention(id, inputs, options);
    closeTo(output, reference(id, inputs, options).output, {
      variant: id, build, dims: inputs, options, cols: inputs.dv, extra: `after "${after}"`,
    });
  }
}

for (const build of buildList) {
  describe(`bad input [${build}]`, () => {
    let lab;
    test(`load [${build}]`, async () => {
      lab = await loadBuild(build);
      lab.attention('softmax', good.softmax(), {}); // warm-up
    });

    for (const c of CASES) {
      test(`${c.name} [${build}]`, () => {
        const before = lab.memoryBytes();
        expectAttnError(lab, c, build);
        assert.equal(lab.memoryBytes(), before, `${c.name} [${build}]: memoryBytes grew from ${before} to ${lab.memoryBytes()} during the failed call`);
        checkStillCorrect(lab, build, c.name);
      });
    }

    test(`1000 failing calls do not grow memory [${build}]`, async () => {
      // a fresh instance (memory at its initial size), one successful call as warm-up
      lab.dispose();
      lab = await loadBuild(build);
      checkStillCorrect(lab, build, 'warm-up');
      const before = lab.memoryBytes();
      const inputs = CASES.map((c) => c.inputs()); // build the inputs once, outside the measured loop
      const growth = []; // which cases grew memory, for the failure message
      let last = before;
      for (let i = 0; i < 1000; i++) {
        const t = i % CASES.length;
        const c = CASES[t];
        let threw = false;
        try { lab.attention(c.id, inputs[t], c.options); } catch (e) { threw = e instanceof AttnError; }
        assert.ok(threw, `${c.name} [${build}]: call ${i} did not throw an AttnError`);
        const now = lab.memoryBytes();
        if (now !== last) growth.push(`call ${i} ("${c.name}") ${last} -> ${now}`);
        last = now;
      }
      assert.equal(lab.memoryBytes(), before,
        `[${build}]: memoryBytes grew from ${before} to ${lab.memoryBytes()} over 1000 failing calls: ${growth.join('; ')}`);
      checkStillCorrect(lab, build, '1000 failing calls');
    });

    test(`calling after dispose() throws a clear error [${build}]`, async () => {
      lab.dispose();
      let err;
      try { lab.attention('softmax', good.softmax(), {}); } catch (e) { err = e; }
      assert.ok(err instanceof AttnError, `[${build}]: attention after dispose() threw ${err?.constructor?.name ?? 'nothing'}, expected an AttnError`);
      assert.equal(err.code, 'DISPOSED', `[${build}]: code of the error after dispose() (message "${err.message}")`);
      assert.match(err.message, /dispos/i, `[${build}]: message "${err.message}" does not say the instance was disposed`);
      assert.throws(() => lab.attention('fixed', good.fixed(), { pattern: 'first' }), AttnError,
        `[${build}]: a second call after dispose() did not throw`);
      // the next init() makes a new, working instance
      const fresh = await loadBuild(build);
      assert.notEqual(fresh, lab, `[${build}]: init() after dispose() returned the disposed instance`);
      checkStillCorrect(fresh, build, 'dispose() and init()');
    });
  });
}

test('AttnError is exported and constructible', () => {
  const e = new AttnError('VALUE', 'x has NaN');
  assert.ok(e instanceof Error);
  assert.equal(e.code, 'VALUE');
  assert.equal(e.name, 'AttnError');
  assert.equal(e.message, 'x has NaN');
});

