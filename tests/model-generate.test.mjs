// model.generate and model.attentionMap on every build, for every variant of lab.variants:
// - decoding one position at a time gives forward's logits on the same prefix (the step logits
//   generate returns, each against forward on that prefix alone, padded), so temperature 0 picks
//   forward's argmax; a seed draws the same tokens twice;
// - decoding past seqLen, a model that is not causal and a prompt outside the vocabulary are
//   AttnErrors naming the problem;
// - attentionMap's rows are distributions (nothing above the diagonal when causal) and equal the
//   attention matrices of src/js/reference-model.js, the float64 model written from docs/model.md;
//   for softmax also lab.attention's weights on the head's q, k, v computed here from the
//   parameters;
// - ms per token at every position of a longer model is recorded (a diagnostic), never asserted.
//
//   node --test tests/model-generate.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { forwardLoss } from '../src/js/reference-model.js';
import { mulberry32 } from '../src/js/prng.js';
import { binding, builds, loadBuild, VARIANTS, MODEL_VARIANTS, OPTIONS, isMixture, ABS_TOL, REL_TOL, reseal } from './helpers.mjs';

const { AttnError } = await binding();
const buildList = await builds();
const REGISTRY = { variants: VARIANTS, options: OPTIONS };
const MIX = { components: ['softmax', 'random', 'dense1', 'factorized-dense'] };

// seqLen 9: factorized-dense gets a = b = 3; two heads of two layers: the second layer attends over
// the first's outputs, the path decoding must carry from step to step.
const configFor = (v, extra = {}) => ({
  variant: v.id, vocab: 7, seqLen: 9, dModel: 8, heads: 2, layers: 2, dFF: 12, causal: true, seed: 5,
  options: isMixture(v) ? MIX : {}, ...extra,
});
const describeConfig = (c) => `${c.variant} seqLen=${c.seqLen} ${c.causal ? 'causal' : 'bidirectional'}`;

// The model with its parameters replaced by values of order 1 (through save/loadModel), so that
// attention is far from uniform and the argmax moves from position to position.
function withLargeParameters(lab, config, seed) {
  const base = lab.model(config);
  const bytes = base.save();
  const view = new DataView(bytes.buffer);
  const start = 4 + Math.ceil(view.getUint32(0, true) / 4) * 4;
  const rnd = mulberry32(seed);
  for (let i = 0; i < base.parameterCount; i++) view.setFloat32(start + 4 * i, Math.fround((2 * rnd() - 1) * 0.8), true);
  base.dispose();
  return lab.loadModel(reseal(bytes));
}

const close = (a, e) => Math.abs(a - e) <= ABS_TOL + REL_TOL * Math.abs(e);

function expectError(fn, code, pattern, what) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof AttnError, `${what}: threw ${err}, not an AttnError`);
    assert.equal(err.code, code, `${what}: code ${err.code} (${err.message})`);
    assert.match(err.message, pattern, `${what}: message`);
    return true;
  });
}

// Forward's logits at position p - 1 of tokens[0..p) alone: the rest of the sequence is padding,
// which a causal model's position p - 1 does not see.
function forwardOnPrefix(model, tokens, p) {
  const { seqLen, vocab } = model.config;
  const padded = new Int32Array(seqLen);
  padded.set(tokens.subarray(0, p));
  return model.forward(padded).subarray((p - 1) * vocab, p * vocab);
}

function layerNorm(x, g, b) {
  const D = x.length;
  const mean = x.reduce((s, t) => s + t, 0) / D;
  const variance = x.reduce((s, t) => s + (t - mean) ** 2, 0) / D;
  return x.map((t, c) => ((t - mean) / Math.sqrt(variance + 1e-5)) * g[c] + b[c]);
}

for (const build of buildList) {
  const lab = await loadBuild(build);

  describe(`model.generate and model.attentionMap [${build}]`, () => {
    for (const v of MODEL_VARIANTS) {
      test(`${v.id}: each step's logits are forward's on the prefix, and temperature 0 takes their argmax`, () => {
        const config = configFor(v);
        const model = withLargeParameters(lab, config, 31);
        const prompt = [3, 0];
        const count = config.seqLen - prompt.length;
        const { tokens, msPerToken, logits } = model.generate(prompt, count, { temperature: 0 });
        assert.equal(tokens.length, config.seqLen);
        assert.deepEqual(Array.from(tokens.subarray(0, prompt.length)), prompt, 'the prompt leads the tokens');
        assert.equal(msPerToken.length, count);
        assert.equal(logits.length, count * config.vocab);
        for (let g = 0; g < count; g++) {
          const p = prompt.length + g;
          const expected = forwardOnPrefix(model, tokens, p);
          const step = logits.subarray(g * config.vocab, (g + 1) * config.vocab);
          for (let c = 0; c < config.vocab; c++) {
            assert.ok(close(step[c], expected[c]), `${describeConfig(config)}: position ${p - 1} logit ${c}: step ${step[c]}, forward ${expected[c]}`);
          }
          const max = Math.max(...expected);
          // the argmax of forward, unless two logits tie within the step's rounding
          assert.ok(expected[tokens[p]] >= max - (ABS_TOL + REL_TOL * Math.abs(max)),
            `${describeConfig(config)}: token ${p} is ${tokens[p]} (forward logit ${expected[tokens[p]]}), forward's argmax scores ${max}`);
        }
        const drawn = model.generate(prompt, count, { temperature: 0.8, seed: 12 });
        assert.deepEqual(drawn.tokens, model.generate(prompt, count, { temperature: 0.8, seed: 12 }).tokens, 'the same seed draws the same tokens');
        assert.ok(drawn.tokens.every((t) => t >= 0 && t < config.vocab), 'drawn tokens are in the vocabulary');
        model.dispose();
      });

      test(`${v.id}: attentionMap rows are distributions and equal the float64 reference's attention`, () => {
        for (const causal of [true, false]) {
          const config = configFor(v, { causal });
          const model = withLargeParameters(lab, config, 43);
          const rnd = mulberry32(7);
          const tokens = Int32Array.from({ length: config.seqLen }, () => Math.floor(rnd() * config.vocab));
          const params = Object.fromEntries(Object.entries(model.parameters()).map(([k, a]) => [k, Float64Array.from(a)]));
          const ref = forwardLoss({ ...config, registry: REGISTRY }, params, tokens, new Int32Array(config.seqLen).fill(-1), 1, { attention: true });
          const n = config.seqLen;
          for (let layer = 0; layer < config.layers; layer++) {
            for (let head = 0; head < config.heads; head++) {
              const where = `${describeConfig(config)} layer ${layer} head ${head}`;
              const A = model.attentionMap(tokens, { layer, head });
              assert.equal(A.length, n * n, `${where}: length`);
              const expected = ref.attention[0][layer][head];
              for (let i = 0; i < n; i++) {
                let sum = 0;
                for (let j = 0; j < n; j++) {
                  const a = A[i * n + j];
                  sum += a;
                  assert.ok(a >= 0, `${where}: A[${i}, ${j}] = ${a} < 0`);
                  if (causal && j > i) assert.equal(a, 0, `${where}: A[${i}, ${j}] = ${a} above the diagonal`);
                  assert.ok(Math.abs(a - expected[i * n + j]) <= 1e-4, `${where}: A[${i}, ${j}] = ${a}, reference ${expected[i * n + j]}`);
                }
                assert.ok(Math.abs(sum - 1) <= 1e-4, `${where}: row ${i} sums to ${sum}`);
              }
            }
          }
          model.dispose();
        }
      });
    }

    test("softmax: attentionMap equals lab.attention's weights on the head's own q, k, v", () => {
      const config = configFor(VARIANTS.find((x) => x.id === 'softmax'), { layers: 1 });
      const model = withLargeParameters(lab, config, 59);
      const P = model.parameters();
      const tokens = Int32Array.from([4, 1, 1, 6, 0, 2, 5, 3, 3]);
      const { dModel: D, heads, seqLen: n } = config;
      const dh = D / heads;
      for (let head = 0; head < heads; head++) {
        const project = (w) => {
          const out = new Float32Array(n * dh);
          for (let i = 0; i < n; i++) {
            const h = Array.from({ length: D }, (_, c) => P.tok_emb[tokens[i] * D + c] + P.pos_emb[i * D + c]);
            const a = layerNorm(h, P['l0.ln1.g'], P['l0.ln1.b']);
            for (let j = 0; j < dh; j++) out[i * dh + j] = a.reduce((s, x, c) => s + x * w[c * dh + j], 0);
          }
          return out;
        };
        const q = project(P[`l0.h${head}.wq`]), k = project(P[`l0.h${head}.wk`]), v = project(P[`l0.h${head}.wv`]);
        const { weights } = lab.attention('softmax', { n, d: dh, dv: dh, q, k, v }, { causal: true, weights: true });
        const A = model.attentionMap(tokens, { layer: 0, head });
        for (let i = 0; i < n * n; i++) {
          assert.ok(close(A[i], weights[i]), `head ${head}: A[${Math.floor(i / n)}, ${i % n}] = ${A[i]}, lab.attention ${weights[i]}`);
        }
      }
      model.dispose();
    });

    test('errors: past seqLen, a model that is not causal, a prompt outside the vocabulary, bad options', () => {
      const softmax = VARIANTS.find((x) => x.id === 'softmax');
      const model = lab.model(configFor(softmax));
      expectError(() => model.generate([1, 2, 3], 7), 'VALUE', /past seqLen = 9/, 'prompt 3 + count 7 > seqLen 9');
      assert.equal(model.generate([1, 2, 3], 6).tokens.length, 9, 'prompt 3 + count 6 = seqLen 9 is fine');
      expectError(() => model.generate([1, 7], 2), 'VALUE', /prompt\[1\].*vocab/, 'a prompt token = vocab');
      expectError(() => model.generate([-1], 2), 'VALUE', /prompt\[0\]/, 'a negative prompt token');
      expectError(() => model.generate([], 2), 'SHAPE', /at least one token/, 'an empty prompt');
      expectError(() => model.generate([1], 2, { temperature: -1 }), 'VALUE', /temperature/, 'a negative temperature');
      expectError(() => model.generate([1], 1.5), 'VALUE', /count/, 'a fractional count');
      expectError(() => model.attentionMap(new Int32Array(8)), 'SHAPE', /seqLen = 9/, 'a short sequence');
      expectError(() => model.attentionMap(new Int32Array(9), { layer: 2 }), 'VALUE', /layer/, 'layer = layers');
      expectError(() => model.attentionMap(new Int32Array(9), { head: -1 }), 'VALUE', /head/, 'a negative head');
      expectError(() => model.attentionMap(new Int32Array(9).fill(7)), 'VALUE', /vocab/, 'a token = vocab');
      model.dispose();
      expectError(() => model.generate([1], 1), 'DISPOSED', /disposed/, 'a disposed model');
      for (const v of MODEL_VARIANTS) {
        const bidirectional = lab.model(configFor(v, { causal: false }));
        expectError(() => bidirectional.generate([1], 2), 'UNSUPPORTED', /not causal/, `${v.id} bidirectional`);
        bidirectional.dispose();
      }
    });

    test('ms per token along a longer sequence, recorded for softmax and the linear family (never asserted)', (t) => {
      for (const id of ['softmax', 'linear', 'efficient', 'taylor']) {
        const config = { variant: id, vocab: 16, seqLen: 2048, dModel: 16, heads: 2, layers: 1, dFF: 32, causal: true, seed: 1 };
        const model = lab.model(config);
        const { msPerToken } = model.generate([1], config.seqLen - 1, { temperature: 0 });
        const mean = (from, to) => msPerToken.subarray(from, to).reduce((s, x) => s + x, 0) / (to - from);
        const q = Math.floor(msPerToken.length / 4);
        t.diagnostic(`${build} ${id}: ${mean(0, q).toFixed(4)} ms/token over the first quarter, ` +
          `${mean(msPerToken.length - q, msPerToken.length).toFixed(4)} over the last (seqLen ${config.seqLen})`);
        model.dispose();
      }
    });
  });
}
