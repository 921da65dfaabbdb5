// A kept forward pass (docs/contract.md, "Gradients"): lab.attention(id, inputs, { keep: true })
// returns lse (softmax-type variants) and backward(dOutput), the backward pass that reads the
// forward pass's y and lse instead of running the forward pass again.
//
//   (a) every softmax-type variant (softmax, the Synthesizer variants, mixtures), causal or not,
//       at n = 1 and around the block size of 64 rows (63, 64, 65, 129), on 1 and 2 threads of
//       every build: output is attention()'s, lse is the float64 log-sum-exp of the reference's
//       logits within the accuracy bar, and backward's output and gradients are attentionGrad's,
//       bit for bit;
//   (b) the linear family and fixed keep nothing but recompute, the recurrent family keeps its
//       state's checkpoints inside the result: the same bits as attentionGrad, and no lse;
//   (c) backward can run again, after other calls that reuse and grow the instance's memory, and
//       after the returned output and lse were overwritten: the same bits each time;
//   (d) bad uses are AttnErrors: keep with weights or state, keep on attentionGrad or in a
//       model's options, a wrong or non-finite dOutput, backward after dispose().
//
//   node --experimental-wasm-relaxed-simd --test tests/kept-grad.test.mjs

import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { logits } from '../src/js/reference.js';
import { binding, builds, makeInputs, randomArray, assertSameBits, VARIANTS, ABS_TOL, REL_TOL } from './helpers.mjs';

const { init, AttnError } = await binding();
const buildList = await builds();
const simdOf = (build) => (build === 'relaxed' ? 'relaxed' : build === 'simd');
const softmaxType = (info) => info.keepsLse; // lab.variants: the families that stream softmax keep lse

/** backward's { output, grads } against attentionGrad's: the same arrays, the same bits. */
function assertSameGrads(got, want, where) {
  assertSameBits(got.output, want.output, `${where}: output`);
  assert.deepEqual(Object.keys(got.grads).sort(), Object.keys(want.grads).sort(), `${where}: gradient names`);
  for (const name of Object.keys(want.grads)) assertSameBits(got.grads[name], want.grads[name], `${where}: grads.${name}`);
}

/** lse against the float64 log-sum-exp of row i of the reference's logits over keys j (<= i when causal). */
function assertLse(lse, id, inputs, options, where) {
  const n = inputs.n, B = logits(id, inputs, options);
  assert.ok(lse instanceof Float32Array && lse.length === n, `${where}: lse is not a Float32Array of n = ${n}`);
  for (let i = 0; i < n; i++) {
    const valid = options.causal ? i + 1 : n;
    let mx = -Infinity, sum = 0;
    for (let j = 0; j < valid; j++) mx = Math.max(mx, B[i * n + j]);
    for (let j = 0; j < valid; j++) sum += Math.exp(B[i * n + j] - mx);
    const want = mx + Math.log(sum);
    assert.ok(Math.abs(lse[i] - want) <= ABS_TOL + REL_TOL * Math.abs(want),
      `${where}: lse[${i}] = ${lse[i]}, float64 log-sum-exp ${want} (bar ${ABS_TOL} + ${REL_TOL}·|ref|)`);
  }
}

/** The options each variant is swept with: two mixtures (weights as probabilities and as logits), fixed's left pattern. */
function optionSets(info) {
  if (info.composite) {
    return [{ components: ['softmax', 'dense', 'random'], alpha: [0.5, 0.25, 0.25] },
      { components: ['factorized-dense', 'dense1', 'factorized-random'], alphaLogits: [1, -0.5, 0.25] }];
  }
  if (info.options.includes('tiling')) return [{}, { tiling: 'tile' }];
  if (info.options.includes('pattern')) return [{ pattern: 'left', window: 4 }];
  return [{}];
}

const describeOptions = (o) => Object.entries(o).filter(([k]) => k !== 'causal')
  .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`).join(' ');

for (const build of buildList) {
  describe(`kept forward pass [${build}]`, () => {
    const labs = [];
    const lab = (threads) => labs.find((l) => l.threads === threads);
    after(() => { for (const l of labs) l.dispose(); });

    test(`load 1 and 2 threads [${build}]`, async () => {
      for (const threads of [1, 2]) labs.push(await init({ simd: simdOf(build), threads, fresh: true }));
      assert.deepEqual(labs.map((l) => l.threads), [1, 2]);
    });

    test(`every softmax-type variant at n = 1, 63, 64, 65, 129, causal or not, on 1 and 2 threads: attention()'s output, the float64 lse, attentionGrad's gradients bit for bit [${build}]`, () => {
      let seed = 7100;
      for (const info of VARIANTS.filter(softmaxType)) {
        for (const extra of optionSets(info)) {
          for (const causal of [false, true]) {
            for (const n of [1, 63, 64, 65, 129]) {
              const options = { ...extra, causal };
              const b = Math.ceil(n / 4) + 1, dims = { n, d: 7, dv: 5, h: 6, L: 4 * b, a: 4, b, rank: 3 };
              const inputs = makeInputs(info.id, dims, seed, { components: options.components });
              const dOutput = randomArray(n * dims.dv, seed + 1, 'dOutput');
              for (const threads of [1, 2]) {
                const where = `${info.id}${extra.components || extra.tiling ? ` (${describeOptions(extra)})` : ''} n=${n} d=7 dv=5` +
                  `${causal ? ' causal' : ''} seed=${seed} threads=${threads} [${build}]`;
                const l = lab(threads);
                const kept = l.attention(info.id, inputs, { ...options, keep: true });
                assertSameBits(kept.output, l.attention(info.id, inputs, options).output, `${where}: attention() output`);
                assertLse(kept.lse, info.id, inputs, options, where);
                assertSameGrads(kept.backward(dOutput), l.attentionGrad(info.id, inputs, dOutput, options), where);
              }
              seed += 2;
            }
          }
        }
      }
    });

    test(`the linear and recurrent families and fixed keep no lse (recurrent: its checkpoints, inside): attentionGrad's bits on 1 and 2 threads [${build}]`, () => {
      let seed = 7900;
      for (const info of VARIANTS.filter((v) => !softmaxType(v))) {
        for (const extra of optionSets(info)) {
          for (const causal of [false, true]) {
            for (const n of [1, 65, 200]) {
              if (!causal && info.causalOnly) continue;
              const options = { ...extra, causal }, dims = { n, d: 9, dv: 7 };
              const inputs = makeInputs(info.id, dims, seed, { optional: n !== 65 });
              const dOutput = randomArray(n * dims.dv, seed + 1, 'dOutput');
              for (const threads of [1, 2]) {
                const where = `${info.id} n=${n} d=9 dv=7${causal ? ' causal' : ''} seed=${seed} threads=${threads} [${build}]`;
                const kept = lab(threads).attention(info.id, inputs, { ...options, keep: true });
                assert.equal(kept.lse, undefined, `${where}: lse returned`);
                assertSameBits(kept.output, lab(threads).attention(info.id, inputs, options).output, `${where}: attention() output`);
                assertSameGrads(kept.backward(dOutput), lab(threads).attentionGrad(info.id, inputs, dOutput, options), where);
              }
              seed += 2;
            }
          }
        }
      }
    });

    test(`backward runs again with the same bits: after other calls grow memory, after output and lse are overwritten, interleaved with another variant's kept pass [${build}]`, () => {
      const l = lab(1);
      const n = 70, inputs = makeInputs('softmax', { n, d: 8, dv: 6 }, 8100), dOutput = randomArray(n * 6, 8101, 'dOutput');
      const want = l.attentionGrad('softmax', inputs, dOutput, { causal: true });
      const kept = l.attention('softmax', inputs, { causal: true, keep: true });
      const other = makeInputs('dense', { n: 33, d: 5, dv: 4, h: 3, L: 40 }, 8102);
      const otherKept = l.attention('dense', other, { keep: true });
      const otherDout = randomArray(33 * 4, 8103, 'dOutput');
      assertSameGrads(kept.backward(dOutput), want, 'softmax n=70 causal seed=8100, first backward');
      const big = makeInputs('softmax', { n: 600, d: 32, dv: 32 }, 8104); // grows memory past the kept call's layout
      l.attentionGrad('softmax', big, randomArray(600 * 32, 8105, 'dOutput'));
      kept.output.fill(Number.NaN), kept.lse.fill(0);
      inputs.q.fill(0); // the caller's arrays: backward has its own copies
      assertSameGrads(kept.backward(dOutput), want, 'softmax n=70 causal seed=8100, after other calls and overwritten arrays');
      assertSameGrads(otherKept.backward(otherDout), l.attentionGrad('dense', other, otherDout), 'dense n=33 seed=8102, after softmax\'s backward');
      assertSameGrads(kept.backward(dOutput), want, 'softmax n=70 causal seed=8100, third backward');
      // a recurrent variant's kept checkpoints (inside the result, not returned) survive the same
      const rin = makeInputs('gated-deltanet', { n: 90, d: 8, dv: 6 }, 8106), rdy = randomArray(90 * 6, 8107, 'dOutput');
      const rwant = l.attentionGrad('gated-deltanet', rin, rdy);
      const rkept = l.attention('gated-deltanet', rin, { keep: true });
      assert.deepEqual(Object.keys(rkept).sort(), ['backward', 'output'], 'gated-deltanet: a kept result has output and backward alone');
      l.attentionGrad('softmax', big, randomArray(600 * 32, 8108, 'dOutput'));
      rkept.output.fill(Number.NaN), rin.k.fill(0);
      assertSameGrads(rkept.backward(rdy), rwant, 'gated-deltanet n=90 seed=8106, after other calls and overwritten arrays');
    });

    test(`bad uses are AttnErrors naming the problem, and leave the instance working [${build}]`, () => {
      const l = lab(1);
      const n = 5, inputs = makeInputs('softmax', { n, d: 3, dv: 2 }, 8200), dOutput = randomArray(n * 2, 8201, 'dOutput');
      const is = (code, pattern) => (err) => err instanceof AttnError && err.code === code && pattern.test(err.message);
      assert.throws(() => l.attention('softmax', inputs, { keep: true, weights: true }), is('UNSUPPORTED', /"keep" and "weights"/));
      assert.throws(() => l.attention('linear', inputs, { keep: true, state: true }), is('UNSUPPORTED', /"keep" and "state"/));
      assert.throws(() => l.attention('softmax', inputs, { keep: 'yes' }), is('VALUE', /keep must be true or false/));
      assert.throws(() => l.attentionGrad('softmax', inputs, dOutput, { keep: true }), is('UNSUPPORTED', /keep.*result\.backward/));
      assert.throws(() => l.model({ variant: 'softmax', vocab: 4, seqLen: 4, dModel: 4, heads: 1, layers: 1, dFF: 4, options: { keep: true } }),
        is('UNSUPPORTED', /keep/));
      const kept = l.attention('softmax', inputs, { keep: true });
      assert.throws(() => kept.backward(dOutput.subarray(1)), is('SHAPE', /dOutput has 9 values, expected n\*dv = 10/));
      assert.throws(() => kept.backward(undefined), is('SHAPE', /dOutput is missing/));
      const nan = dOutput.slice();
      nan[3] = Number.NaN;
      assert.throws(() => kept.backward(nan), is('VALUE', /dOutput\[1\]\[1\]/));
      assertSameGrads(kept.backward(dOutput), l.attentionGrad('softmax', inputs, dOutput), 'softmax n=5 seed=8200 after the bad calls');
      assert.equal(l.options.keep.type, 'boolean');
      assert.equal(l.options.keep.grad, false, 'lab.options.keep.grad: attentionGrad does not take keep');
      assert.deepEqual([...l.options.keep.appliesTo], VARIANTS.map((v) => v.id), 'keep applies to every variant');
    });

    test(`backward after dispose() throws DISPOSED [${build}]`, async () => {
      const own = await init({ simd: simdOf(build), threads: 1, fresh: true });
      const inputs = makeInputs('random', { n: 9, dv: 3, L: 9 }, 8300);
      const kept = own.attention('random', inputs, { keep: true });
      own.dispose();
      assert.throws(() => kept.backward(randomArray(27, 8301, 'dOutput')), (err) => err instanceof AttnError && err.code === 'DISPOSED');
    });
  });
}
