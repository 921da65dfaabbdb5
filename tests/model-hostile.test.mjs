// The model API under hostile input (docs/model.md, "Errors" and "Saved models"): configurations and
// files that declare huge models are refused at once and grow nothing; rejected calls keep no
// memory; no array comes back non-finite; a step that would leave a parameter non-finite changes
// nothing; save() after any failure writes a file that loads to the same model; the configuration
// cannot be changed from outside; dispose() from inside a getter; null and misspelt options; step
// counts the optimiser cannot continue from; train()'s aborts; the CRC-32 of format version 2
// (every single-byte flip and every truncation of a file refused), version-1 files still loading;
// and a mutation fuzzer over loadModel from a corpus of valid version-2 files, which fixes the
// checksum after mutating so that mutants reach the parser.
//
//   node --experimental-wasm-relaxed-simd --test tests/model-hostile.test.mjs
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { binding, loadBuild, mulberry32, reseal, savedParts, sealedModelFile, crc32Bitwise } from './helpers.mjs';

const { init, AttnError, tasks } = await binding();
const FIXTURES = new URL('./fixtures/models/', import.meta.url);

const isError = (code, pattern) => (err) => {
  assert.ok(err instanceof AttnError, `expected AttnError ${code}, got ${err?.name}: ${err?.message}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (pattern) assert.match(err.message, pattern);
  return true;
};
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');

// A small causal model and a batch for it.
const SMALL = { vocab: 8, seqLen: 8, dModel: 8, heads: 2, layers: 1, dFF: 8, causal: true, seed: 1 };
function batchFor(config, batch = 2, seed = 1) {
  const rnd = mulberry32(seed);
  const n = batch * config.seqLen;
  return {
    tokens: Int32Array.from({ length: n }, () => Math.floor(rnd() * config.vocab)),
    targets: Int32Array.from({ length: n }, () => Math.floor(rnd() * config.vocab)),
  };
}
// The bytes of a model's saved file with its step (so that two files compare parameters, moments,
// configuration and step; save() is deterministic).
const state = (model) => sha(model.save());

const lab = await init({ threads: 1, simd: true });

describe('configurations and files that declare huge models', () => {
  test('a config of 1e7 or 1e5 layers, or layers x heads over 4096, is MEMORY and grows nothing', () => {
    const before = lab.memoryBytes();
    for (const extra of [{ layers: 1e7 }, { layers: 1e5 }, { layers: 4097 }, { layers: 65, heads: 64, dModel: 64 }]) {
      const config = { vocab: 1, seqLen: 1, dModel: 1, heads: 1, layers: 1, dFF: 1, ...extra };
      assert.throws(() => lab.model(config), isError('MEMORY', /layers \* heads/), JSON.stringify(extra));
    }
    // over WebAssembly's memory: 2^20 x 2^10 embedding floats, four sections
    assert.throws(() => lab.model({ vocab: 2 ** 20, seqLen: 1, dModel: 1024, heads: 1, layers: 1, dFF: 1 }), isError('MEMORY'));
    assert.equal(lab.memoryBytes(), before, 'a refused configuration grew memory');
    const atCap = lab.model({ vocab: 2, seqLen: 2, dModel: 4, heads: 4, layers: 1024, dFF: 1 }); // 4096 heads: allowed
    assert.equal(atCap.config.layers * atCap.config.heads, 4096);
    atCap.dispose();
  });

  test('a small file whose header declares 1e7 layers, or 60000 x 1024 embeddings, is refused and grows nothing', () => {
    const before = lab.memoryBytes();
    const header = (config) => ({ format: 'attnlab-model', version: 2, step: 0,
      config: { variant: 'softmax', vocab: 1, seqLen: 1, dModel: 1, heads: 1, layers: 1, dFF: 1, causal: false, seed: 0,
        freeze: [], weightDecay: 0.01, options: {}, ...config } });
    const huge = sealedModelFile(header({ layers: 1e7 }), new Float32Array(8));
    assert.ok(huge.length < 400);
    assert.throws(() => lab.loadModel(huge), isError('MEMORY', /^loadModel: .*layers \* heads/));
    const wide = sealedModelFile(header({ vocab: 60000, dModel: 1024 }), new Float32Array(8));
    assert.throws(() => lab.loadModel(wide), isError('VALUE', /hold 32 bytes, the configuration needs/));
    // as version 1 (no checksum, four sections): refused the same way before anything is built
    const v1 = sealedModelFile({ ...header({ vocab: 60000, dModel: 1024 }), version: 1 }, new Float32Array(8)).slice(0, -4);
    assert.throws(() => lab.loadModel(v1), isError('VALUE', /the configuration needs/));
    assert.equal(lab.memoryBytes(), before, 'a refused file grew memory');
  });

  test('a file shorter or longer than its header says is VALUE', () => {
    const model = lab.model(SMALL);
    const saved = model.save();
    const { start } = savedParts(saved);
    const short = reseal(saved.slice(0, saved.length - 8)); // one float fewer, checksum fixed
    assert.throws(() => lab.loadModel(short), isError('VALUE', /the configuration needs/));
    const long = new Uint8Array(saved.length + 4);
    long.set(saved.subarray(0, saved.length - 4));
    assert.throws(() => lab.loadModel(reseal(long)), isError('VALUE', /the configuration needs/));
    const headerOnly = reseal(saved.slice(0, start + 4));
    assert.throws(() => lab.loadModel(headerOnly), isError('VALUE', /hold 0 bytes/));
    model.dispose();
  });
});

describe('rejected calls keep no memory', () => {
  test('a misspelt frozen name on a 694 MiB model is UNKNOWN before anything is allocated', () => {
    const before = lab.memoryBytes();
    const config = { vocab: 32000, seqLen: 64, dModel: 512, heads: 8, layers: 4, dFF: 2048, freeze: ['tok_emb '] };
    assert.throws(() => lab.model(config), isError('UNKNOWN', /freeze names "tok_emb "/));
    assert.equal(lab.memoryBytes(), before, `memory grew from ${before} to ${lab.memoryBytes()} bytes`);
  });

  test('a model refused by the core (heads not dividing dModel, a bad option) grows nothing', () => {
    const before = lab.memoryBytes();
    assert.throws(() => lab.model({ ...SMALL, vocab: 50000, dModel: 999, heads: 2 }), isError('SHAPE'));
    assert.throws(() => lab.model({ ...SMALL, variant: 'linear', vocab: 50000, dModel: 512, options: { eps: -1 } }), isError('VALUE'));
    assert.equal(lab.memoryBytes(), before);
  });
});

describe('no array comes back non-finite', () => {
  test('after an lr of 1e20, forward, generate, attentionMap and evaluate are VALUE naming the cause', () => {
    const model = lab.model(SMALL);
    const { tokens, targets } = batchFor(SMALL);
    model.trainStep(tokens, targets, { lr: 1e20 }); // parameters of 1e20: finite, so the step stands
    for (const p of Object.values(model.parameters())) assert.ok(p.every(Number.isFinite));
    assert.throws(() => model.forward(tokens), isError('VALUE', /^forward: logits\[\d+\]\[\d+\].*came out NaN.*float32's range/));
    assert.throws(() => model.generate([1, 2], 3, { temperature: 0 }), isError('VALUE', /^generate: .*came out NaN/));
    assert.throws(() => model.generate([1, 2], 3), isError('VALUE', /^generate: /));
    assert.throws(() => model.attentionMap(tokens.subarray(0, 8)), isError('VALUE', /^attentionMap: A\[/));
    assert.throws(() => model.evaluate(tokens, targets), isError('VALUE', /^evaluate: the loss came out NaN/));
    assert.throws(() => model.gradients(tokens, targets), isError('VALUE', /^gradients: /));
    model.dispose();
  });

  test('weightDecay 1e30: every step either stands with finite parameters or is refused and changes nothing', () => {
    const model = lab.model({ ...SMALL, weightDecay: 1e30 });
    const { tokens, targets } = batchFor(SMALL);
    let refused = 0;
    for (let s = 0; s < 4; s++) {
      const before = state(model), step = model.step;
      try {
        model.trainStep(tokens, targets, { lr: 1e-3 });
        for (const [name, p] of Object.entries(model.parameters())) assert.ok(p.every(Number.isFinite), `step ${s}: ${name} is not finite`);
      } catch (err) {
        isError('VALUE')(err);
        refused++;
        assert.equal(state(model), before, `step ${s}: a refused step changed the model`);
        assert.equal(model.step, step);
      }
    }
    assert.ok(refused > 0, 'a decay of 1e30 overflows within four steps');
    for (const f of [() => model.forward(tokens), () => model.generate([1], 2)]) {
      try {
        const r = f();
        const values = r instanceof Float32Array ? r : r.logits;
        assert.ok(values.every(Number.isFinite));
      } catch (err) { isError('VALUE')(err); }
    }
    model.dispose();
  });

  test('a step whose update would overflow float32 (finite loss) is refused by AdamW and changes nothing', () => {
    // Only the mixture logits train: their softmax keeps the loss finite at any size, so the step
    // itself is what overflows (lr 3e38 pushes a logit past float32's range by the second step).
    const config = { ...SMALL, variant: 'mixture', options: { components: ['softmax', 'random'] } };
    const probe = lab.model(config);
    const freeze = Object.keys(probe.parameters()).filter((name) => !name.endsWith('.alpha'));
    probe.dispose();
    const model = lab.model({ ...config, freeze });
    const { tokens, targets } = batchFor(SMALL);
    let refusal = null;
    for (let s = 0; s < 4 && !refusal; s++) {
      const before = state(model), step = model.step;
      try {
        model.trainStep(tokens, targets, { lr: 3e38 });
      } catch (err) {
        refusal = err;
        assert.equal(state(model), before, 'the refused step changed parameters, moments or step');
        assert.equal(model.step, step);
      }
    }
    assert.ok(refusal, 'a step of lr 3e38 on the mixture logits overflowed without being refused');
    isError('VALUE', /^trainStep: the step would leave a parameter or an AdamW moment non-finite.*nothing was changed/)(refusal);
    const again = lab.loadModel(model.save());
    assert.equal(state(again), state(model));
    again.dispose();
    model.dispose();
  });

  test('a saved model with one column of out at 3e38: forward and generate are VALUE, evaluate too', () => {
    const model = lab.model(SMALL);
    const bytes = model.save();
    const { start, view } = savedParts(bytes);
    // the parameters section follows the table's order; out is [dModel, vocab]: set its column 3
    const names = Object.keys(model.parameters());
    const offset = names.slice(0, names.indexOf('out')).reduce((sum, name) => sum + model.parameters()[name].length, 0);
    for (let r = 0; r < SMALL.dModel; r++) view.setFloat32(start + 4 * (offset + r * SMALL.vocab + 3), 3e38, true);
    const loaded = lab.loadModel(reseal(bytes));
    const { tokens, targets } = batchFor(SMALL);
    assert.throws(() => loaded.forward(tokens), isError('VALUE', /^forward: /));
    assert.throws(() => loaded.generate([1], 2, { temperature: 0 }), isError('VALUE', /^generate: /));
    assert.throws(() => loaded.evaluate(tokens, targets), isError('VALUE'));
    loaded.dispose();
    model.dispose();
  });
});

describe('save() after a failed call', () => {
  test('after a trainStep refused for a NaN loss, save() loads back to the same model', () => {
    const model = lab.model(SMALL);
    const { tokens, targets } = batchFor(SMALL);
    model.trainStep(tokens, targets, { lr: 1e-2 });
    model.trainStep(tokens, targets, { lr: 1e20 });
    const before = state(model);
    assert.throws(() => model.trainStep(tokens, targets, { lr: 1e-3 }), isError('VALUE', /loss came out NaN.*as it was/));
    assert.equal(state(model), before, 'the failed step changed the model');
    const again = lab.loadModel(model.save());
    assert.equal(again.step, model.step);
    assert.equal(state(again), before, 'the reloaded model differs');
    again.dispose();
    model.dispose();
  });
});

describe('the configuration', () => {
  test('model.config is frozen all the way down, and save() writes the model\'s own copy', () => {
    const mixture = lab.model({ ...SMALL, variant: 'mixture', options: { components: ['softmax', 'random'] } });
    const fixed = lab.model({ ...SMALL, variant: 'fixed', options: { patterns: ['previous', 'first'] } });
    for (const model of [mixture, fixed]) {
      const walk = (x, path) => {
        if (x === null || typeof x !== 'object') return;
        assert.ok(Object.isFrozen(x), `${model.config.variant}: config${path} is not frozen`);
        for (const [k, v] of Object.entries(x)) walk(v, `${path}.${k}`);
      };
      walk(model.config, '');
    }
    assert.throws(() => mixture.config.options.components.reverse(), TypeError);
    assert.throws(() => { fixed.config.options.patterns[0] = 'current'; }, TypeError);
    assert.throws(() => { fixed.config.freeze.push('tok_emb'); }, TypeError);
    assert.deepEqual(lab.loadModel(mixture.save()).config.options.components, ['softmax', 'random']);
    assert.deepEqual(lab.loadModel(fixed.save()).config.options.patterns, ['previous', 'first']);
    // the caller's objects are not the model's either
    const options = { components: ['softmax', 'random'] };
    const m = lab.model({ ...SMALL, variant: 'mixture', options });
    options.components.reverse();
    assert.deepEqual(m.config.options.components, ['softmax', 'random']);
    for (const x of [mixture, fixed, m]) x.dispose();
  });
});

describe('dispose() from inside an input getter', () => {
  for (const threads of [1, 2]) {
    test(`attention and attentionGrad throw DISPOSED, not TypeError [${threads} thread${threads > 1 ? 's' : ''}]`, async () => {
      const n = 4, d = 4;
      for (const call of ['attention', 'attentionGrad']) {
        for (const where of ['q', 'v', 'n', 'dOutput']) {
          if (call === 'attention' && where === 'dOutput') continue;
          const own = await init({ threads, simd: true, fresh: true });
          const values = { n, d, dv: d, q: new Float32Array(16), k: new Float32Array(16), v: new Float32Array(16) };
          const inputs = { ...values };
          const dOutput = new Array(16).fill(0);
          const disposeThen = (value) => { own.dispose(); return value; };
          if (where === 'dOutput') Object.defineProperty(dOutput, 3, { get: () => disposeThen(0) });
          else Object.defineProperty(inputs, where, { enumerable: true, get: () => disposeThen(values[where]) });
          const run = () => (call === 'attention' ? own.attention('softmax', inputs) : own.attentionGrad('softmax', inputs, dOutput));
          assert.throws(run, isError('DISPOSED'), `${call}, dispose() in the getter of ${where}`);
        }
      }
    });
  }
});

describe('null and misspelt options', () => {
  test('null options mean the defaults: trainStep needs its lr (VALUE), generate, attentionMap and alpha run', () => {
    const model = lab.model({ ...SMALL, variant: 'mixture', options: { components: ['softmax', 'random'] } });
    const { tokens, targets } = batchFor(SMALL);
    assert.throws(() => model.trainStep(tokens, targets, null), isError('VALUE', /lr/));
    assert.throws(() => model.trainStep(tokens, targets), isError('VALUE', /lr/));
    const [a, b] = [model.generate([1, 2], 2, null), model.generate([1, 2], 2)];
    assert.deepEqual([a.tokens, a.logits], [b.tokens, b.logits]);
    assert.deepEqual(model.attentionMap(tokens.subarray(0, 8), null), model.attentionMap(tokens.subarray(0, 8), { layer: 0, head: 0 }));
    assert.deepEqual(model.alpha(null), model.alpha({ layer: 0, head: 0 }));
    assert.throws(() => model.generate([1], 1, 'cold'), isError('VALUE', /options must be an object/));
    model.dispose();
  });

  test('misspelt option names are UNKNOWN, naming the ones taken', () => {
    const model = lab.model({ ...SMALL, variant: 'mixture', options: { components: ['softmax', 'random'] } });
    const { tokens, targets } = batchFor(SMALL);
    assert.throws(() => model.generate([1], 1, { temprature: 0 }), isError('UNKNOWN', /"temprature".*temperature, seed/));
    assert.throws(() => model.attentionMap(tokens.subarray(0, 8), { layr: 1 }), isError('UNKNOWN', /"layr".*layer, head/));
    assert.throws(() => model.alpha({ heads: 1 }), isError('UNKNOWN', /"heads"/));
    assert.throws(() => model.trainStep(tokens, targets, { lr: 1e-3, learningRate: 1 }), isError('UNKNOWN', /"learningRate"/));
    assert.equal(model.step, 0);
    model.dispose();
  });

  test('loadModel of a detached buffer, and train() with a task whose sample() returns null, are AttnErrors', async () => {
    const buffer = new ArrayBuffer(64);
    structuredClone(buffer, { transfer: [buffer] });
    assert.throws(() => lab.loadModel(buffer), isError('VALUE', /detached/));
    const view = new Uint8Array(new ArrayBuffer(64));
    structuredClone(view.buffer, { transfer: [view.buffer] });
    assert.throws(() => lab.loadModel(view), isError('VALUE', /detached/));
    const model = lab.model(SMALL);
    const task = { name: 'mine', seqLen: 8, vocab: 8, sample: () => null };
    await assert.rejects(lab.train(model, task, { steps: 2, batch: 2, evalBatch: 2 }), isError('VALUE', /task "mine": sample\(2, 0, 'heldout'\) returned null/));
    const half = { name: 'half', seqLen: 8, vocab: 8, sample: (b, seed, split) => (split === 'train' ? { tokens: new Int32Array(8) } : batchFor(SMALL, b)) };
    await assert.rejects(lab.train(model, half, { steps: 2, batch: 2, evalBatch: 2 }), isError('VALUE', /task "half": sample\(2, 0, 'train'\)/));
    assert.equal(model.step, 0);
    // null options: the task's defaults
    const tiny = { name: 'tiny', seqLen: 8, vocab: 8, defaults: { steps: 3, batch: 2, evalBatch: 2 }, sample: (b, seed) => batchFor(SMALL, b, seed + 1) };
    const r = await lab.train(model, tiny, null);
    assert.equal(r.steps, 3);
    model.dispose();
  });
});

describe('step counts', () => {
  test('loadModel refuses a step count AdamW cannot continue from (2^31 - 1 and up, 2^32, 1e300, -1, 1.5)', () => {
    const model = lab.model(SMALL);
    const { header, start } = savedParts(model.save());
    const floats = new Float32Array(model.save().buffer.slice(start, model.save().length - 4));
    for (const step of [2 ** 31 - 1, 2 ** 32, 1e300, -1, 1.5]) {
      assert.throws(() => lab.loadModel(sealedModelFile({ ...header, step }, floats)), isError('VALUE', /step count/), `step ${step}`);
    }
    const last = lab.loadModel(sealedModelFile({ ...header, step: 2 ** 31 - 2 }, floats)); // the most a model takes
    assert.equal(last.step, 2 ** 31 - 2);
    const { tokens, targets } = batchFor(SMALL);
    const before = state(last);
    assert.throws(() => last.trainStep(tokens, targets, { lr: 1e-3 }), isError('VALUE', /as many as AdamW's int32 step count allows/));
    assert.equal(state(last), before);
    const next = lab.loadModel(sealedModelFile({ ...header, step: 2 ** 31 - 3 }, floats));
    next.trainStep(tokens, targets, { lr: 1e-3 });
    assert.equal(next.step, 2 ** 31 - 2);
    for (const m of [model, last, next]) m.dispose();
  });
});

describe('train() and aborts', () => {
  const task = tasks.copy({ seqLen: 8, vocab: 6 });
  const small = { ...SMALL, vocab: 6 };

  test('an aborted signal rejects with its reason; an abort while a pause never settles ends the run', async () => {
    const model = lab.model(small);
    const reason = new Error('stopped by the user');
    await assert.rejects(lab.train(model, task, { steps: 5, batch: 2, evalBatch: 2, signal: AbortSignal.abort(reason) }), (err) => err === reason);
    const controller = new AbortController();
    const run = lab.train(model, task, { steps: 50, batch: 2, evalBatch: 2, evalEvery: 2, signal: controller.signal,
      pause: ({ step }) => (step === 4 ? new Promise(() => {}) : undefined) });
    setTimeout(() => controller.abort(), 30);
    const r = await run;
    assert.equal(r.aborted, true);
    assert.equal(r.steps, 4);
    for (const e of r.history) for (const [k, v] of Object.entries(e)) if (typeof v === 'number') assert.ok(Number.isFinite(v), `history ${k} = ${v}`);
    // aborted while paused before the first step: no step ran, so it rejects too
    const early = new AbortController();
    const first = lab.train(model, task, { steps: 5, batch: 2, evalBatch: 2, signal: early.signal, pause: () => new Promise(() => {}) });
    setTimeout(() => early.abort(reason), 10);
    await assert.rejects(first, (err) => err === reason);
    model.dispose();
  });
});

describe('saved files: format version 2 and its CRC-32', () => {
  test('save() writes version 2: a header, the parameters and moments, and the CRC-32 of both', () => {
    const model = lab.model(SMALL);
    const { tokens, targets } = batchFor(SMALL);
    model.trainStep(tokens, targets, { lr: 1e-2 });
    const bytes = model.save();
    const { header, floats } = savedParts(bytes);
    assert.equal(header.format, 'attnlab-model');
    assert.equal(header.version, 2);
    assert.deepEqual(Object.keys(header), ['format', 'version', 'config', 'step']);
    assert.equal(floats, 3 * model.parameterCount, 'parameters, AdamW m and v');
    const stored = new DataView(bytes.buffer).getUint32(bytes.length - 4, true);
    assert.equal(stored, crc32Bitwise(bytes.subarray(0, bytes.length - 4)), 'the trailer is the CRC-32 of everything before it');
    model.dispose();
  });

  test('every single-byte flip of a small saved model, and every truncation, is refused', () => {
    const model = lab.model({ vocab: 3, seqLen: 2, dModel: 2, heads: 1, layers: 1, dFF: 2, causal: true, seed: 4 });
    const bytes = model.save();
    const before = lab.memoryBytes();
    let refused = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const mask of [0x01, 0x80, 0xff, 1 << (i % 8)]) {
        const flipped = bytes.slice();
        flipped[i] ^= mask;
        assert.throws(() => lab.loadModel(flipped), isError('VALUE'), `byte ${i} ^ ${mask} was accepted`);
        refused++;
      }
    }
    for (let length = 0; length < bytes.length; length++) {
      assert.throws(() => lab.loadModel(bytes.subarray(0, length)), isError('VALUE'), `a truncation to ${length} bytes was accepted`);
    }
    assert.equal(refused, 4 * bytes.length);
    assert.equal(lab.memoryBytes(), before, 'refused files grew memory');
    model.dispose();
  });

  test('10,000 random flips of a larger saved model: each refused or the identical model', () => {
    const model = lab.model({ ...SMALL, variant: 'mixture', options: { components: ['softmax', 'random'] }, vocab: 16, dModel: 16, layers: 2 });
    const { tokens, targets } = batchFor({ ...SMALL, vocab: 16 });
    model.trainStep(tokens, targets, { lr: 1e-2 });
    const bytes = model.save();
    const original = state(model);
    const rnd = mulberry32(2024);
    let refused = 0, same = 0;
    for (let k = 0; k < 10000; k++) {
      const flipped = bytes.slice();
      const flips = 1 + Math.floor(rnd() * 3);
      for (let f = 0; f < flips; f++) flipped[Math.floor(rnd() * flipped.length)] ^= 1 + Math.floor(rnd() * 255);
      try {
        const m = lab.loadModel(flipped);
        assert.equal(state(m), original, `flips ${k} loaded a different model`);
        m.dispose();
        same++;
      } catch (err) {
        isError('VALUE')(err);
        refused++;
      }
    }
    assert.equal(refused + same, 10000);
    model.dispose();
  });

  test('version-1 files (no checksum, gradients saved too) still load, to the recorded model', () => {
    const expected = JSON.parse(readFileSync(new URL('v1-expected.json', FIXTURES), 'utf8'));
    for (const name of ['v1-softmax', 'v1-mixture', 'v1-fixed']) {
      const bytes = new Uint8Array(readFileSync(new URL(`${name}.bin`, FIXTURES)));
      const e = expected[name];
      const model = lab.loadModel(bytes);
      assert.equal(model.step, e.step, name);
      const tokens = Int32Array.from(e.tokens), targets = Int32Array.from(e.targets);
      assert.equal(sha(new Uint8Array(model.forward(tokens).buffer)), e.logitsSha256, `${name}: logits differ from the ones recorded at save`);
      assert.equal(model.trainStep(tokens, targets, { lr: 1e-2 }).loss, e.nextLoss, `${name}: the next step's loss`);
      const params = Buffer.concat(Object.values(model.parameters()).map((a) => Buffer.from(a.buffer)));
      assert.equal(sha(params), e.paramsAfterNextSha256, `${name}: parameters after the next step (so the moments loaded too)`);
      // the same file with NaN in its gradient section (what a failed step left in version 1) loads the same
      const withNan = bytes.slice();
      const length = new DataView(withNan.buffer).getUint32(0, true);
      const start = 4 + Math.ceil(length / 4) * 4;
      const P = (withNan.length - start) / 16;
      for (let i = 0; i < P; i++) new DataView(withNan.buffer).setFloat32(start + 4 * (P + i), NaN, true);
      const again = lab.loadModel(withNan);
      assert.equal(sha(new Uint8Array(again.forward(tokens).buffer)), e.logitsSha256, `${name}: NaN gradients changed the loaded model`);
      model.dispose();
      again.dispose();
    }
  });
});

// A mutation fuzzer over loadModel: each mutant of a valid version-2 file either loads to a model
// whose own save() loads back to the same bytes, or is an AttnError of a known kind; nothing
// grows memory unless a model was made. Most mutants get their checksum fixed after mutating, so
// they reach the header and body checks instead of stopping at the CRC.
describe('fuzzing loadModel from a corpus of valid version-2 files', () => {
  const corpusDir = new URL('./fixtures/model-corpus/', import.meta.url);
  const corpus = readdirSync(corpusDir).filter((f) => f.endsWith('.attnmodel')).sort()
    .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(new URL(f, corpusDir))) }));
  const CODES = new Set(['VALUE', 'SHAPE', 'UNKNOWN', 'UNSUPPORTED', 'MEMORY']);
  const EDGE_NUMBERS = [0, -1, 1, 2, 3, 7, 64, 2 ** 30, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 1e7, 1e300, -1e300, 0.5, 1e-45, 3.4e38, 1e39];
  const EDGE_VALUES = [...EDGE_NUMBERS, null, true, false, '', 'softmax', 'mixture', 'fixed', [], {}, ['l0.h0.r'], [1, 2], { eps: 1e-6 }];

  // One mutation of a JSON value at a random path.
  function mutateJson(value, rnd) {
    const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
    if (value === null || typeof value !== 'object') return pick(EDGE_VALUES);
    const keys = Object.keys(value);
    const r = rnd();
    if (r < 0.1 && keys.length) { // delete a key
      const copy = Array.isArray(value) ? value.slice() : { ...value };
      if (Array.isArray(copy)) copy.splice(Number(pick(keys)), 1); else delete copy[pick(keys)];
      return copy;
    }
    if (r < 0.2) return Array.isArray(value) ? [...value, pick(EDGE_VALUES)] : { ...value, [pick(['extra', 'layers', 'rStd', 'bias', '__proto__'])]: pick(EDGE_VALUES) };
    if (!keys.length) return pick(EDGE_VALUES);
    const key = pick(keys);
    const copy = Array.isArray(value) ? value.slice() : { ...value };
    copy[key] = mutateJson(value[key], rnd);
    return copy;
  }

  function mutant(file, rnd) {
    const { header, start } = savedParts(file);
    const body = file.subarray(start, file.length - 4);
    const r = rnd();
    if (r < 0.55) { // the header, structurally, checksum fixed
      let h = header;
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) h = mutateJson(h, rnd);
      return sealedModelFile(h, new Float32Array(body.slice().buffer));
    }
    const bytes = file.slice();
    if (r < 0.75) { // the body's floats: NaN, infinities, negative second moments, huge values
      const view = new DataView(bytes.buffer);
      const floats = (bytes.length - 4 - start) / 4;
      for (let k = 1 + Math.floor(rnd() * 4); k > 0; k--) {
        view.setFloat32(start + 4 * Math.floor(rnd() * floats), [NaN, Infinity, -Infinity, -1, 3.4e38, 0][Math.floor(rnd() * 6)], true);
      }
      return reseal(bytes);
    }
    if (r < 0.85) { // the header length word, checksum fixed
      new DataView(bytes.buffer).setUint32(0, [0, 1, 3, 4096, 2 ** 31, 0xffffffff, bytes.length][Math.floor(rnd() * 7)], true);
      return reseal(bytes);
    }
    if (r < 0.93) { // truncated or extended, checksum fixed
      const length = Math.max(4, Math.floor(rnd() * (bytes.length + 64)));
      const out = new Uint8Array(length);
      out.set(bytes.subarray(0, Math.min(length, bytes.length - 4)));
      return reseal(out);
    }
    for (let k = 1 + Math.floor(rnd() * 8); k > 0; k--) bytes[Math.floor(rnd() * bytes.length)] ^= 1 + Math.floor(rnd() * 255); // raw, checksum not fixed
    return bytes;
  }

  test(`${corpus.length} seed files each load, and 4,000 mutants each load consistently or are an AttnError`, () => {
    assert.ok(corpus.length >= 8, 'the corpus holds a valid file of every kind of model');
    for (const { name, bytes } of corpus) {
      const m = lab.loadModel(bytes);
      assert.deepEqual(m.save(), bytes, `${name}: a corpus file does not round-trip`);
      m.dispose();
    }
    const rnd = mulberry32(17);
    const counts = { loaded: 0 };
    for (let k = 0; k < 4000; k++) {
      const seed = corpus[k % corpus.length];
      const bytes = mutant(seed.bytes, rnd);
      const before = lab.memoryBytes();
      let model = null;
      try {
        model = lab.loadModel(bytes);
      } catch (err) {
        assert.ok(err instanceof AttnError && CODES.has(err.code), `mutant ${k} of ${seed.name}: ${err?.name} ${err?.code}: ${err?.message}`);
        assert.equal(lab.memoryBytes(), before, `mutant ${k} of ${seed.name} was refused (${err.message}) but grew memory`);
        counts[err.code] = (counts[err.code] ?? 0) + 1;
        continue;
      }
      counts.loaded++;
      const again = lab.loadModel(model.save());
      assert.deepEqual(again.save(), model.save(), `mutant ${k} of ${seed.name} loaded, but its save does not round-trip`);
      for (const p of Object.values(model.parameters())) assert.ok(p.every(Number.isFinite), `mutant ${k}: a non-finite parameter loaded`);
      again.dispose();
      model.dispose();
    }
    // the fuzzer reached past the checksum: header mutants were refused by the configuration
    // checks, and some mutants still made models
    assert.ok(counts.loaded > 0 && (counts.UNKNOWN ?? 0) + (counts.SHAPE ?? 0) + (counts.MEMORY ?? 0) > 0, JSON.stringify(counts));
  });
});

describe('evaluateHeldOut', () => {
  test('null options mean the defaults; a misspelt option is UNKNOWN; a bad task is VALUE', async () => {
    const { evaluateHeldOut } = await binding();
    const task = tasks.copy({ seqLen: 8, vocab: 6 });
    const model = lab.model({ ...SMALL, vocab: 6 });
    assert.deepEqual({ ...evaluateHeldOut(model, task, null), ms: 0 }, { ...evaluateHeldOut(model, task), ms: 0 });
    assert.throws(() => evaluateHeldOut(model, task, { bacth: 8 }), isError('UNKNOWN', /"bacth"/));
    assert.throws(() => evaluateHeldOut(model, null), isError('VALUE', /task/));
    model.dispose();
  });
});

describe('fine-tuning a trained model', () => {
  test('loadModel(saved, { resetOptimizer: true }) keeps the parameters, starts at step 0 with fresh moments', () => {
    const copy = tasks.copy({ seqLen: 8, vocab: 6 }), reverse = tasks.reverse({ seqLen: 8, vocab: 6 });
    const config = { ...SMALL, vocab: 6, freeze: ['l0.h0.wq'] };
    const pre = lab.model(config);
    for (let s = 0; s < 5; s++) { const b = copy.sample(4, s); pre.trainStep(b.tokens, b.targets, { lr: 1e-2 }); }
    const tuned = lab.loadModel(pre.save(), { resetOptimizer: true });
    assert.equal(tuned.step, 0);
    assert.deepEqual(tuned.parameters(), pre.parameters(), 'the parameters are the trained ones');
    assert.deepEqual(tuned.config, pre.config, 'the configuration (frozen list included)');
    // A fresh model given these parameters through a file with zero moments and step 0 takes the same step.
    const { header, start } = savedParts(pre.save());
    const saved = pre.save();
    const P = pre.parameterCount;
    const floats = new Float32Array(saved.buffer.slice(start, start + 12 * P));
    floats.fill(0, P);
    const byHand = lab.loadModel(sealedModelFile({ ...header, step: 0 }, floats));
    const b = reverse.sample(4, 9);
    assert.equal(tuned.trainStep(b.tokens, b.targets, { lr: 3e-3 }).loss, byHand.trainStep(b.tokens, b.targets, { lr: 3e-3 }).loss);
    assert.equal(state(tuned), state(byHand), 'resetOptimizer is: step 0 and zero moments');
    assert.deepEqual(tuned.parameters()['l0.h0.wq'], pre.parameters()['l0.h0.wq'], 'a frozen parameter stays frozen');
    assert.throws(() => lab.loadModel(pre.save(), { resetOptimiser: true }), isError('UNKNOWN', /"resetOptimiser"/));
    assert.throws(() => lab.loadModel(pre.save(), { resetOptimizer: 'yes' }), isError('VALUE', /resetOptimizer/));
    for (const m of [pre, tuned, byHand]) m.dispose();
  });
});
