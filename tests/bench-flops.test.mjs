// The flop count behind the benchmarks' fractions of peak for a training step (bench/training.mjs
// stepFlops), against counts written out by hand from its definition: 2 flops per multiply-add,
// the step is 3x the forward's matrix products, causal n x n variants read T(T+1)/2 pairs a head.
import test from 'node:test';
import assert from 'node:assert/strict';
import { stepFlops } from '../bench/training.mjs';

const shape = { vocab: 64, seqLen: 128, dModel: 64, heads: 4, layers: 2, dFF: 256, batch: 32, causal: true };
const tokens = shape.batch * shape.seqLen, dh = 16, T = shape.seqLen, heads = shape.batch * shape.layers * shape.heads;
// q, k, v, W_o (4 d x d), the MLP (d x dFF twice) per layer, and the output layer (d x vocab)
const projections = 2 * tokens * (2 * (4 * 64 * 64 + 2 * 64 * 256) + 64 * 64);

test('softmax, causal: q.k and A.v over the T(T+1)/2 pairs of each head', () => {
  const attention = heads * (T * (T + 1) / 2) * dh * 2 * 2;
  assert.equal(stepFlops(shape), 3 * (projections + attention));
  assert.equal(stepFlops(shape, 'softmax', {}, { keepsLse: true }), 3 * (projections + attention));
});

test('softmax, not causal: every one of the T^2 pairs', () => {
  assert.equal(stepFlops({ ...shape, causal: false }), 3 * (projections + heads * T * T * dh * 2 * 2));
});

test('linear family: 4 T dh^2 a head, causal or not (no masked half to skip)', () => {
  for (const v of ['linear', 'efficient', 'taylor']) {
    assert.equal(stepFlops(shape, v, {}, { keepsLse: false }), 3 * (projections + heads * 4 * T * dh * dh), v);
  }
});

test('a variant other than softmax without its lab.variants entry is an error, not a guess', () => {
  assert.throws(() => stepFlops(shape, 'linear'), /entry of linear/);
});

test('random: only A.v (its logits are parameters), over the causal pairs', () => {
  assert.equal(stepFlops(shape, 'random', {}, { keepsLse: true }), 3 * (projections + heads * (T * (T + 1) / 2) * dh * 2));
});

test('a longer sequence at the same tokens a step costs more for softmax and the same for linear', () => {
  const at = (seqLen, v, keepsLse) => stepFlops({ ...shape, seqLen, batch: 4096 / seqLen }, v, {}, { keepsLse });
  // 4,096 tokens a step: batch = 4096 / T sequences, each head's causal pairs T(T+1)/2
  const pairs = (seqLen) => (4096 / seqLen) * shape.layers * shape.heads * (seqLen * (seqLen + 1) / 2);
  assert.equal(at(2048, 'softmax', true) - at(64, 'softmax', true), 3 * (pairs(2048) - pairs(64)) * dh * 2 * 2);
  assert.equal(at(2048, 'linear', false), at(64, 'linear', false));
});
