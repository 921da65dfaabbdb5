// Threads (docs/contract.md, "Threads"): init({ threads }) on every build, at 1, 2 and 3 threads.
//
//   (a) every stored fixture on every build and thread count: within the accuracy bar of the
//       float64 reference, and bit-identical to the same build on one thread;
//   (b) attentionGrad of every variant, causal and not, at sizes that span several query blocks,
//       and of the linear family around its chunk size: within the gradient bar of referenceGrad
//       and bit-identical to one thread (the causal linear family, whose backward regroups its
//       prefix and suffix sums: the same bits run after run at a thread count instead);
//   (c) the threaded module on one thread against the single-threaded module of the same build;
//   (d) the pool: lab.threads, option checks, errors in one call leave the pool working,
//       dispose() ends the workers (Node exits), many pools one after another;
//   (e) training: losses and parameters of trainStep bit-identical across thread counts;
//   (f) the causal linear family (a parallel prefix of states, which regroups the state's sums):
//       within the reference's bar and the same bits on every run at a thread count, at sizes
//       around chunk boundaries and one long sequence. (a) asks these for the same bits as one
//       thread only on one thread;
//   (g) A (weights) of every variant at n = 200, and every fixed pattern's y, A and dv around the
//       block size: bit-identical to one thread.
//
//   node --experimental-wasm-relaxed-simd --test tests/threads.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { reference, referenceGrad } from '../src/js/reference.js';
import {
  binding, builds, makeInputs, closeTo, caseName, randomArray, sameBits, assertSameBits, BINDING_URL, VARIANTS, causalValues,
} from './helpers.mjs';

const { init, AttnError, tasks } = await binding();
const buildList = await builds();
const THREADS = [1, 2, 3];
const simdOf = (build) => (build === 'relaxed' ? 'relaxed' : build === 'simd');
/** Splits that regroup a sum (docs/contract.md, "Threads"): deterministic per thread count, not one thread's bits. */
const regroups = (id, options) => ['linear', 'taylor', 'efficient'].includes(id) && !!options.causal;
/** The same for attentionGrad (output and gradients): the causal backward's prefix and suffix sums. */
const gradRegroups = (id, options) => ['linear', 'taylor', 'efficient'].includes(id) && !!options.causal;

const FIXTURE_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
const fixtures = readdirSync(FIXTURE_DIR).filter((f) => f.endsWith('.json')).sort()
  .map((f) => JSON.parse(readFileSync(path.join(FIXTURE_DIR, f), 'utf8')));

/** The gradient bar of tests/gradients.test.mjs: |got − ref| <= 1e-4 + 1e-3·max|ref|. */
function gradClose(got, ref, where) {
  let max = 0;
  for (const x of ref) max = Math.max(max, Math.abs(x));
  const bar = 1e-4 + 1e-3 * max;
  for (let i = 0; i < ref.length; i++) {
    assert.ok(Math.abs(got[i] - ref[i]) <= bar, `${where}[${i}] = ${got[i]}, reference ${ref[i]} (bar ${bar})`);
  }
}

/** The options a variant is swept with: a mixture of three, the fixed pattern "left". */
function optionsFor(info, causal) {
  const o = info.composite ? { components: ['softmax', 'dense', 'random'], alpha: [0.5, 0.25, 0.25] }
    : info.options.includes('pattern') ? { pattern: 'left', window: 4 } : {};
  return { ...o, causal };
}

/**
 * The causal linear family in float64 by its running state (O(n·d·dv), where reference() builds
 * every row of A): linear and taylor as Σ_j≤i φ(q_i)·φ(k_j) v_j / (Σ_j≤i φ(q_i)·φ(k_j) + eps),
 * efficient as Σ_c ρ_q(q_i)_c Σ_j≤i exp(k_jc) v_j / Σ_j≤i exp(k_jc) (inputs of magnitude 1:
 * no shift needed in float64).
 */
function causalLinearReference(id, { n, d, dv, q, k, v }, eps = 1e-6) {
  const F = id === 'taylor' ? d + 1 : d;
  const phi = (x, r) => {
    const f = new Float64Array(F);
    if (id === 'linear') for (let c = 0; c < d; c++) { const t = x[r * d + c]; f[c] = t > 0 ? t + 1 : Math.exp(t); }
    else if (id === 'taylor') {
      let ss = 0;
      for (let c = 0; c < d; c++) ss += x[r * d + c] ** 2;
      const norm = Math.max(Math.sqrt(ss), 1e-12);
      f[0] = 1;
      for (let c = 0; c < d; c++) f[1 + c] = x[r * d + c] / norm;
    } else {
      let m = -Infinity, sum = 0;
      for (let c = 0; c < d; c++) m = Math.max(m, x[r * d + c]);
      for (let c = 0; c < d; c++) sum += (f[c] = Math.exp(x[r * d + c] - m));
      for (let c = 0; c < d; c++) f[c] /= sum;
    }
    return f;
  };
  const S = new Float64Array(F * dv), z = new Float64Array(F), y = new Float64Array(n * dv);
  for (let i = 0; i < n; i++) {
    const fk = id === 'efficient' ? Array.from({ length: d }, (_, c) => Math.exp(k[i * d + c])) : phi(k, i);
    for (let f = 0; f < F; f++) {
      z[f] += fk[f];
      for (let o = 0; o < dv; o++) S[f * dv + o] += fk[f] * v[i * dv + o];
    }
    const fq = phi(q, i);
    if (id === 'efficient') {
      for (let c = 0; c < d; c++) for (let o = 0; o < dv; o++) y[i * dv + o] += fq[c] * S[c * dv + o] / z[c];
    } else {
      let den = eps;
      for (let f = 0; f < F; f++) den += fq[f] * z[f];
      for (let f = 0; f < F; f++) for (let o = 0; o < dv; o++) y[i * dv + o] += fq[f] * S[f * dv + o] / den;
    }
  }
  return y;
}

for (const build of buildList) {
  describe(`threads [${build}]`, async () => {
    const labs = {};
    for (const threads of THREADS) labs[threads] = await init({ simd: simdOf(build), threads, fresh: true });

    // `steps` training steps of a model of `config` on each thread count: the same losses and
    // parameters, bit for bit, as on one thread
    const trainsAlikeOnEveryCount = (config, tokens, targets, steps, what) => {
      const runs = THREADS.map((threads) => {
        const model = labs[threads].model(config);
        const losses = [];
        for (let s = 0; s < steps; s++) losses.push(model.trainStep(tokens, targets, { lr: 3e-3 }).loss);
        const params = Object.values(model.parameters()).map((p) => p.slice());
        model.dispose();
        return { threads, losses, params };
      });
      for (const r of runs.slice(1)) {
        assert.deepEqual(r.losses, runs[0].losses, `${what}: losses on ${r.threads} threads`);
        r.params.forEach((p, i) => assert.ok(sameBits(p, runs[0].params[i]), `${what}: parameter ${i} on ${r.threads} threads`));
      }
    };

    // attentionGrad on every thread count: within referenceGrad's bar, and the bits of one thread,
    // or (a split that regroups sums) the same bits on a second run at that thread count
    const gradsAgree = (labsOf, id, inputs, dOutput, options, ref, where) => {
      const one = labsOf[1].attentionGrad(id, inputs, dOutput, options);
      for (const threads of THREADS) {
        const r = labsOf[threads].attentionGrad(id, inputs, dOutput, options);
        const again = gradRegroups(id, options) ? labsOf[threads].attentionGrad(id, inputs, dOutput, options) : one;
        const against = gradRegroups(id, options) ? 'a second run' : 'one thread';
        assertSameBits(r.output, again.output, `${where}: output on ${threads} threads against ${against}`);
        // the contract: attentionGrad's output is attention()'s, bit for bit, on the same instance
        const { weights: _w, ...forward } = options ?? {};
        assertSameBits(r.output, labsOf[threads].attention(id, inputs, forward).output,
          `${where}: attentionGrad's output on ${threads} threads against attention()'s`);
        closeTo(r.output, ref.output, { variant: id, build, dims: { n: inputs.n, d: inputs.d, dv: inputs.dv }, options, cols: inputs.dv, what: `attentionGrad's output, ${threads} threads` });
        for (const [name, g] of Object.entries(r.grads)) {
          assertSameBits(g, again.grads[name], `${where}: d${name} on ${threads} threads against ${against}`);
          gradClose(g, ref.grads[name], `${where}, ${threads} threads: d${name}`);
        }
      }
    };

    test(`lab.threads and lab.build [${build}]`, () => {
      for (const threads of THREADS) {
        assert.equal(labs[threads].threads, threads);
        assert.equal(labs[threads].build, build);
      }
    });

    test(`every fixture on 1, 2, 3 threads: the reference's bar, and the bits of one thread [${build}]`, () => {
      for (const fixture of fixtures) {
        for (const c of fixture.cases) {
          const inputs = makeInputs(c.id, c.dims, c.seed, { magnitude: c.magnitude, components: c.options.components, zeroRows: c.zeroRows, optional: c.optional });
          const name = `${caseName(c.id, c.dims, c.seed, c.options)} [${build}]`;
          const ctx = { variant: c.id, build, dims: c.dims, seed: c.seed, options: c.options, cols: c.dims.dv };
          const one = labs[1].attention(c.id, inputs, { ...c.options, weights: !!c.weights });
          for (const threads of THREADS) {
            const r = labs[threads].attention(c.id, inputs, { ...c.options, weights: !!c.weights });
            closeTo(r.output, c.output, { ...ctx, what: `output, ${threads} threads` });
            if (regroups(c.id, c.options)) {
              const again = labs[threads].attention(c.id, inputs, { ...c.options, weights: !!c.weights });
              assert.ok(sameBits(r.output, again.output), `${name}: output on ${threads} threads differs between two runs`);
            } else {
              assert.ok(sameBits(r.output, one.output), `${name}: output on ${threads} threads differs from one thread`);
            }
            if (c.weights) assert.ok(sameBits(r.weights, one.weights), `${name}: weights on ${threads} threads differ from one thread`);
          }
        }
      }
    });

    test(`attentionGrad of every variant on 1, 2, 3 threads: referenceGrad's bar, the bits of one thread [${build}]`, () => {
      let seed = 4200;
      for (const info of VARIANTS) {
        for (const causal of causalValues(info)) {
          const options = optionsFor(info, causal);
          const n = info.family === 'linear' ? 70 : 150; // 3 query blocks of 64
          const inputs = makeInputs(info.id, { n, d: 12, dv: 10, h: 6, L: n + 3, a: 1, b: n + 3, rank: 4 }, seed++,
            { components: options.components });
          const dOutput = randomArray(n * 10, seed++, 'dOutput');
          const where = `${info.id} n=${n}${causal ? ' causal' : ''} [${build}]`;
          const ref = referenceGrad(info.id, inputs, dOutput, options);
          gradsAgree(labs, info.id, inputs, dOutput, options, ref, where);
        }
      }
    });

    test(`attentionGrad of linear, taylor and efficient around the chunk size (n = 63 ... 300) on 1, 2, 3 threads [${build}]`, () => {
      // the split starts above one chunk of 64 rows; 4+ chunks give each causal block more than one
      let seed = 5300;
      for (const id of ['linear', 'taylor', 'efficient']) {
        for (const causal of [false, true]) {
          for (const n of [63, 64, 65, 129, 200, 300]) {
            const dims = { n, d: 9, dv: 7 };
            const inputs = makeInputs(id, dims, seed++);
            const dOutput = randomArray(n * dims.dv, seed++, 'dOutput');
            const options = { causal };
            gradsAgree(labs, id, inputs, dOutput, options, referenceGrad(id, inputs, dOutput, options),
              `${id} n=${n} d=9 dv=7${causal ? ' causal' : ''} [${build}]`);
          }
        }
      }
      // efficient, causal, with its running maximum moving (magnitude 3), and with two chunks whose
      // last row raises feature 0's maximum beyond exp's range (k = 100 at row 127, 200 at row 255:
      // the earlier rows' prefix sums Z underflow, so those chunks go row by row, in the forward
      // and in both sweeps of the backward, in a block past the first on 2 and 3 threads)
      for (const spread of [false, true]) {
        const n = 300, dims = { n, d: 9, dv: 7 };
        const inputs = makeInputs('efficient', dims, seed++, { magnitude: spread ? 1 : 3 });
        if (spread) inputs.k[127 * dims.d] = 100, inputs.k[255 * dims.d] = 200;
        const dOutput = randomArray(n * dims.dv, seed++, 'dOutput');
        const options = { causal: true };
        gradsAgree(labs, 'efficient', inputs, dOutput, options, referenceGrad('efficient', inputs, dOutput, options),
          `efficient n=${n} d=9 dv=7 causal ${spread ? 'k jumps to 100, 200' : 'magnitude 3'} [${build}]`);
      }
    });

    test(`attentionGrad of random, factorized-dense and mixtures around the block size (n = 63 ... 129) on 1, 2, 3 threads: the bits of one thread [${build}]`, () => {
      // the query and key passes split above one block of 64 rows
      let seed = 6100;
      const cases = [
        ['random', {}], ['factorized-dense', {}], ['factorized-dense', { tiling: 'tile' }],
        ['mixture', { components: ['factorized-dense', 'random', 'softmax'], alpha: [0.2, 0.3, 0.5] }],
        ['mixture', { components: ['dense1', 'factorized-random', 'random'], alphaLogits: [1, -0.5, 0.25] }],
      ];
      for (const [id, extra] of cases) {
        for (const causal of [false, true]) {
          for (const n of [63, 64, 65, 129]) {
            const options = { ...extra, causal };
            const b = Math.ceil(n / 4) + 1, dims = { n, d: 7, dv: 5, h: 6, L: 4 * b, a: 4, b, rank: 3 };
            const inputs = makeInputs(id, dims, seed++, { components: options.components });
            const dOutput = randomArray(n * dims.dv, seed++, 'dOutput');
            gradsAgree(labs, id, inputs, dOutput, options, referenceGrad(id, inputs, dOutput, options),
              `${id}${extra.components ? ` of ${extra.components.join(', ')}` : ''}${extra.tiling ? ` tiling ${extra.tiling}` : ''} n=${n}${causal ? ' causal' : ''} [${build}]`);
          }
        }
      }
    });

    test(`causal linear, taylor and efficient on 1, 2, 3 threads: the reference's bar, the same bits run after run [${build}]`, () => {
      let seed = 9100;
      for (const id of ['linear', 'taylor', 'efficient']) {
        for (const n of [1, 63, 64, 65, 127, 129, 200, 1000, 16500]) {
          // the large n against the running-state reference (reference() is O(n²)); magnitude 3 moves
          // efficient's running maximum
          const dims = n > 10000 ? { n, d: 8, dv: 4 } : { n, d: 12, dv: 10 };
          const magnitude = id === 'efficient' && n === 1000 ? 3 : 1;
          const inputs = makeInputs(id, dims, seed++, { magnitude });
          const options = { causal: true };
          const expected = n > 10000 ? causalLinearReference(id, inputs) : reference(id, inputs, options).output;
          for (const threads of THREADS) {
            const a = labs[threads].attention(id, inputs, options).output;
            const b = labs[threads].attention(id, inputs, options).output;
            closeTo(a, expected, { variant: id, build, dims, seed: seed - 1, options, cols: dims.dv, what: `output, ${threads} threads` });
            assert.ok(sameBits(a, b), `${id} n=${n} causal [${build}]: two runs on ${threads} threads differ`);
          }
        }
      }
    });

    test(`the threaded module on one thread gives the single-threaded module's bits [${build}]`, async () => {
      const single = await init({ simd: simdOf(build), threads: 1, fresh: true });
      const bytes = readFileSync(new URL(`attnlab-${build}-threads.wasm`, BINDING_URL));
      const threaded = await init({ simd: simdOf(build), threads: 'auto', wasmBinary: bytes });
      // and the threaded module with no workers at all (its pool of one: the leader alone)
      const alone = await init({ simd: simdOf(build), threads: 1, wasmBinary: bytes });
      try {
        let seed = 77;
        for (const info of VARIANTS) {
          for (const causal of causalValues(info)) {
            const options = optionsFor(info, causal);
            const inputs = makeInputs(info.id, { n: 100, d: 9, dv: 7, h: 5, L: 100, a: 4, b: 25, rank: 3 }, seed++, { components: options.components });
            const a = single.attention(info.id, inputs, options).output;
            const b = threaded.attention(info.id, inputs, options).output;
            assert.ok(sameBits(a, b), `${info.id}${causal ? ' causal' : ''}: the ${build} threaded module (${threaded.threads} threads) differs from the single-threaded one`);
            assert.ok(sameBits(a, alone.attention(info.id, inputs, options).output), `${info.id}${causal ? ' causal' : ''}: the ${build} threaded module on one thread differs from the single-threaded one`);
          }
        }
      } finally {
        single.dispose();
        threaded.dispose();
        alone.dispose();
      }
    });

    test(`A with weights at n = 200 (four query blocks) on 1, 2, 3 threads: the bits of one thread [${build}]`, () => {
      let seed = 900;
      for (const info of VARIANTS) {
        for (const causal of causalValues(info)) {
          const options = { ...optionsFor(info, causal), weights: true };
          const inputs = makeInputs(info.id, { n: 200, d: 8, dv: 6, h: 5, L: 200, a: 8, b: 25, rank: 3 }, seed++, { components: options.components });
          const one = labs[1].attention(info.id, inputs, options);
          for (const threads of THREADS.slice(1)) {
            const r = labs[threads].attention(info.id, inputs, options);
            const where = `${info.id} n=200${causal ? ' causal' : ''} weights, ${threads} threads [${build}]`;
            if (regroups(info.id, options)) { // y by the parallel prefix (f); A row by row as one thread
              assertSameBits(r.output, labs[threads].attention(info.id, inputs, options).output, `${where}: output against a second run`);
              closeTo(r.output, one.output, { variant: info.id, build, dims: { n: 200, d: 8, dv: 6 }, options, cols: 6, what: `output against one thread, ${threads} threads` });
            } else {
              assertSameBits(r.output, one.output, `${where}: output against one thread`);
            }
            assertSameBits(r.weights, one.weights, `${where}: A against one thread`);
          }
        }
      }
    });

    test(`fixed patterns around the block size (n = 63 ... 129) on 1, 2, 3 threads: y, A and dv, the bits of one thread [${build}]`, () => {
      let seed = 7300;
      for (const pattern of ['current', 'previous', 'next', 'left', 'right', 'first', 'last']) {
        for (const window of [1, 3, 70]) {
          if (window > 1 && pattern !== 'left' && pattern !== 'right') continue;
          for (const n of [63, 64, 65, 129]) {
            const dims = { n, dv: 5 }, options = { pattern, window };
            const inputs = makeInputs('fixed', dims, seed++);
            const dOutput = randomArray(n * dims.dv, seed++, 'dOutput');
            const where = `fixed ${pattern} window=${window} n=${n} dv=5 [${build}]`;
            const one = labs[1].attention('fixed', inputs, { ...options, weights: true });
            gradsAgree(labs, 'fixed', inputs, dOutput, options, referenceGrad('fixed', inputs, dOutput, options), where);
            for (const threads of THREADS.slice(1)) {
              const r = labs[threads].attention('fixed', inputs, { ...options, weights: true });
              assertSameBits(r.output, one.output, `${where}: output on ${threads} threads against one thread`);
              assertSameBits(r.weights, one.weights, `${where}: A on ${threads} threads against one thread`);
            }
          }
        }
      }
    });

    test(`a training step of one long sequence (batch 1, seqLen 96: attention split inside a head) on 1, 2, 3 threads [${build}]`, () => {
      const task = tasks.copy({ seqLen: 96, vocab: 8 });
      const { tokens, targets } = task.sample(1, 5);
      trainsAlikeOnEveryCount({ variant: 'softmax', vocab: task.vocab, seqLen: 96, dModel: 32, heads: 2, layers: 1, dFF: 32, causal: true, seed: 9 },
        tokens, targets, 2, 'softmax');
    });

    test(`an error in one call leaves the pool working [${build}]`, () => {
      const lab = labs[3];
      const n = 300, d = 16, dv = 8;
      const inputs = makeInputs('softmax', { n, d, dv }, 11);
      const expected = labs[1].attention('softmax', inputs).output;
      const bad = { ...inputs, q: inputs.q.slice() };
      bad.q[5] = NaN;
      assert.throws(() => lab.attention('softmax', bad), (e) => e instanceof AttnError && e.code === 'VALUE');
      assert.throws(() => lab.attention('softmax', { ...inputs, n: n + 1 }), (e) => e instanceof AttnError && e.code === 'SHAPE');
      const huge = { ...inputs, q: inputs.q.map((x) => x * 1e20), k: inputs.k.map((x, i) => (i % 2 ? -1e20 : 1e20)) };
      assert.throws(() => lab.attention('softmax', huge), (e) => e instanceof AttnError && e.code === 'VALUE');
      assert.ok(sameBits(lab.attention('softmax', inputs).output, expected), 'after the errors, softmax gives the bits of one thread');
    });

    test(`training steps give the same losses and parameters on 1, 2 and 3 threads [${build}]`, () => {
      const task = tasks.copy({ seqLen: 16, vocab: 8 });
      const { tokens, targets } = task.sample(6, 3);
      for (const variant of ['softmax', 'random', 'linear']) {
        trainsAlikeOnEveryCount({ variant, vocab: task.vocab, seqLen: task.seqLen, dModel: 48, heads: 2, layers: 2, dFF: 64, causal: true, seed: 5 },
          tokens, targets, 3, variant);
      }
    });

    test(`dispose() ends the pool: later calls throw DISPOSED [${build}]`, () => {
      for (const threads of THREADS) {
        labs[threads].dispose();
        assert.throws(() => labs[threads].attention('fixed', { n: 1, dv: 1, v: [1] }), (e) => e.code === 'DISPOSED');
      }
    });
  });
}

test('threads must be "auto" or an integer from 1 to 16', async () => {
  for (const threads of [0, 17, 2.5, '2', null, true]) {
    await assert.rejects(init({ threads, fresh: true }), (e) => e instanceof AttnError && e.code === 'VALUE', String(threads));
  }
  const lab = await init({ threads: 'auto', fresh: true });
  assert.ok(lab.threads >= 1 && lab.threads <= 8, `auto gave ${lab.threads}`);
  lab.dispose();
});

test('threads: N with a single-threaded wasmBinary is UNSUPPORTED; threads "auto" runs it on one thread', async () => {
  const bytes = readFileSync(new URL('attnlab-simd.wasm', BINDING_URL));
  await assert.rejects(init({ simd: true, threads: 2, wasmBinary: bytes }), (e) => e.code === 'UNSUPPORTED' && /single-threaded/.test(e.message));
  const lab = await init({ simd: true, wasmBinary: bytes });
  assert.equal(lab.threads, 1);
  lab.dispose();
});

test('threads "auto" runs one thread when the threaded module cannot load (a locateFile that knows only the single-threaded files)', async () => {
  const seen = [];
  const known = new Set(['attnlab-simd.wasm', 'attnlab-scalar.wasm', 'attnlab-relaxed.wasm']);
  const lab = await init({ simd: true, locateFile: (file) => {
    seen.push(file);
    if (!known.has(file)) throw new Error(`no such file ${file}`);
    return fileURLToPath(new URL(file, BINDING_URL));
  } });
  assert.equal(lab.threads, 1);
  assert.equal(lab.build, 'simd');
  assert.deepEqual(seen, ['attnlab-simd-threads.wasm', 'attnlab-simd.wasm']);
  lab.dispose();
  // asked for explicitly, the same failure is an error
  await assert.rejects(init({ simd: true, threads: 2, locateFile: () => { throw new Error('no such file'); } }), (e) => e.code === 'LOAD');
});

test('locateFile is asked for the threaded module when threads > 1', async () => {
  const seen = [];
  const lab = await init({ simd: true, threads: 2, locateFile: (file) => { seen.push(file); return fileURLToPath(new URL(file, BINDING_URL)); } });
  assert.deepEqual(seen, ['attnlab-simd-threads.wasm']);
  assert.equal(lab.threads, 2);
  lab.dispose();
});

test('twenty pools started and disposed one after another', async () => {
  const inputs = makeInputs('softmax', { n: 130, d: 8, dv: 8 }, 5);
  const expected = reference('softmax', inputs, {}).output;
  for (let i = 0; i < 20; i++) {
    const lab = await init({ threads: 2 + (i % 2), fresh: true });
    closeTo(lab.attention('softmax', inputs).output, expected, { variant: 'softmax', what: `pool ${i}`, cols: 8 });
    lab.dispose();
  }
});

test('dispose() ends the worker threads (Linux: the process\'s threads in /proc/self/task)', { skip: process.platform !== 'linux' }, () => {
  const script = `import { init } from ${JSON.stringify(String(BINDING_URL))};
    import { readdirSync } from 'node:fs';
    const tasks = () => readdirSync('/proc/self/task').length;
    const before = tasks();
    const lab = await init({ threads: 3, fresh: true });
    const alive = tasks();
    lab.dispose();
    let after = tasks();
    for (let i = 0; i < 100 && after > before; i++) { await new Promise((r) => setTimeout(r, 20)); after = tasks(); }
    console.log(JSON.stringify({ before, alive, after }));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const { before, alive, after } = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.ok(alive >= before + 2, `a pool of 3 threads added ${alive - before} OS threads, expected at least 2 workers`);
  assert.equal(after, before, `after dispose() the process has ${after} threads, ${before} before init`);
});

test('Node exits with a pool alive (its workers are unref\'d) and after dispose()', () => {
  for (const dispose of [false, true]) {
    const script = `import { init } from ${JSON.stringify(String(BINDING_URL))};
      const lab = await init({ threads: 3 });
      const n = 200, q = new Float32Array(n * 8).fill(0.1);
      lab.attention('softmax', { n, d: 8, dv: 8, q, k: q, v: q });
      ${dispose ? 'lab.dispose();' : ''}
      console.log('threads', lab.threads);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, `dispose ${dispose}: exit ${r.status} signal ${r.signal}\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /threads 3/);
  }
});
