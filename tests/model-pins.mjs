// model-pins.mjs — the models whose training tests/model-pins.test.mjs pins bit for bit against
// tests/fixtures/models/pins.json, which tests/fixtures/make-model-pins.mjs records. A change that is meant to
// leave training's numbers alone (a faster kernel, a pass that no longer repeats work: the kept
// forward pass of each head) must give the recorded hashes on every thread count; one that changes
// them on purpose records them again and says why in its commit.
//
// The set: every variant of the experiments (src/js/experiment.js: the binding's variants,
// frozen random included), causal, at two shapes: copy (seqLen 16, one key block) with 3 heads and
// batch 8, and a long sequence (seqLen 130: three query blocks of 64) alone in its batch, whose
// attention splits inside a head when threads run. Each trains a few AdamW steps; the hash covers
// the parameters and AdamW moments (the floats of model.save()) and the last loss.
import { createHash } from 'node:crypto';
import { mulberry32 } from '../src/js/prng.js';
import { experimentVariants, modelConfig } from '../src/js/experiment.js';
import { savedParts } from './helpers.mjs';

export const PIN_BUILDS = ['simd', 'scalar']; // relaxed_madd fuses or not by the machine: not pinned
export const PIN_THREADS = [1, 2];

const SHAPES = [
  { name: 'copy', seqLen: 16, vocab: 12, sizes: { dModel: 24, heads: 3, layers: 2, dFF: 32 }, batch: 8, steps: 4 },
  { name: 'long', seqLen: 130, vocab: 12, sizes: { dModel: 16, heads: 2, layers: 2, dFF: 16 }, batch: 1, steps: 3 },
];

/** Tokens uniform over the vocabulary and targets the next token (-1 at the last position), from seed. */
function batchOf(shape, seed) {
  const next = mulberry32(seed);
  const count = shape.batch * shape.seqLen;
  const tokens = new Int32Array(count), targets = new Int32Array(count);
  for (let i = 0; i < count; i++) tokens[i] = Math.floor(next() * shape.vocab);
  for (let i = 0; i < count; i++) targets[i] = (i + 1) % shape.seqLen === 0 ? -1 : tokens[i + 1];
  return { tokens, targets };
}

/** "<shape> <variant>" -> hash, every pinned model trained on lab. */
export function pinHashes(lab) {
  const hashes = {};
  for (const shape of SHAPES) {
    const task = { vocab: shape.vocab, seqLen: shape.seqLen, causal: true };
    for (const v of experimentVariants(lab.variants)) {
      const model = lab.model(modelConfig(task, v, shape.sizes, 3));
      let loss = 0;
      for (let s = 0; s < shape.steps; s++) {
        const { tokens, targets } = batchOf(shape, 1000 + s);
        loss = model.trainStep(tokens, targets, { lr: 3e-3 }).loss;
      }
      const bytes = model.save();
      const { start, floats } = savedParts(bytes);
      hashes[`${shape.name} ${v.name}`] = createHash('sha256').update(bytes.subarray(start, start + 4 * floats))
        .update(new Uint8Array(Float32Array.of(loss).buffer)).digest('hex').slice(0, 16);
      model.dispose();
    }
  }
  return hashes;
}
