// The "Against the papers" verdicts (scripts/study/papers.mjs) on made-up summaries: a row says
// "agrees" or "disagrees" only when attnlab's side has the numbers the finding is about.
import test from 'node:test';
import assert from 'node:assert/strict';
import { PAPERS } from '../scripts/study/papers.mjs';

const row = (id) => PAPERS.find((p) => p.id === id);
const recall = (cells) => ({ headline: { recall: { variants: Object.fromEntries(Object.entries(cells).map(([v, [learned, n]]) => [v, { learned, n }])) } } });
const text = (bpc) => ({ headline: { text: { variants: Object.fromEntries(Object.entries(bpc).map(([v, mean]) => [v, { mean }])) } } });

test('L1 (Long Range Arena): linear learning recall on fewer seeds than softmax agrees; as many disagrees', () => {
  assert.equal(row('L1').verdict(recall({ softmax: [5, 5], linear: [0, 5] })), 'agrees in direction');
  assert.equal(row('L1').verdict(recall({ softmax: [5, 5], linear: [5, 5] })), 'disagrees in direction');
});

test('L1: no verdict when softmax never learned recall or a side was not run', () => {
  assert.match(row('L1').verdict(recall({ softmax: [0, 5], linear: [0, 5] })), /^not comparable/);
  assert.equal(row('L1').verdict(recall({ softmax: [0, 0], linear: [0, 0] })), 'not comparable');
  assert.equal(row('L1').verdict({}), 'not comparable');
});

test('B3 (Based) states the seeds actually run, and never a verdict (another kernel)', () => {
  assert.match(row('B3').ours(recall({ taylor: [1, 3], linear: [0, 3] })), /taylor 1\/3, linear 0\/3/);
  assert.equal(row('B3').verdict(recall({ taylor: [5, 5], linear: [0, 5] })), 'not comparable');
});

test('S2 (Synthesizer LM1B): random and dense both worse than softmax agrees; either better disagrees; missing is not comparable', () => {
  assert.equal(row('S2').verdict(text({ softmax: 2.0, random: 2.1, dense: 2.05 })), 'agrees in direction');
  assert.equal(row('S2').verdict(text({ softmax: 2.0, random: 2.1, dense: 1.95 })), 'disagrees in direction');
  assert.equal(row('S2').verdict(text({ softmax: 2.0 })), 'not comparable');
});

test('K1 (Transformers are RNNs): linear worse at equal steps agrees', () => {
  assert.match(row('K1').verdict(text({ softmax: 2.0, linear: 2.2 })), /^agrees/);
  assert.match(row('K1').verdict(text({ softmax: 2.0, linear: 1.9 })), /^disagrees/);
});

test('S4 (Synthesizer, pretraining): each half of the finding gets its own verdict', () => {
  const gains = (g) => ({ transfer: { variants: Object.fromEntries(Object.entries(g).map(([v, [mean, lo, hi]]) => [v, { gain: { mean, lo, hi } }])) } });
  assert.equal(row('S4').verdict(gains({ softmax: [0.02, 0.01, 0.03], random: [-0.14, -0.26, -0.01], mixture: [-0.14, -0.21, -0.08] })),
    'agrees for Random; disagrees for the mixture (it lost as Random did)');
  assert.equal(row('S4').verdict(gains({ softmax: [0.02, 0.01, 0.03], random: [-0.14, -0.26, -0.01], mixture: [0.0, -0.05, 0.05] })), 'agrees for Random; agrees for the mixture');
  assert.equal(row('S4').verdict(gains({ softmax: [0.02, 0.01, 0.03], random: [0.05, 0.0, 0.1] })), 'disagrees for Random');
  assert.equal(row('S4').verdict(gains({ softmax: [0.02, 0.01, 0.03] })), 'not comparable');
  assert.equal(row('S4').verdict({}), 'not comparable');
});

