// The "Against the papers" verdicts (scripts/study/papers.mjs) on made-up summaries: a row says
// "agrees" or "disagrees" only when attnlab's side has the numbers the finding is about.
import test from 'node:test';
import assert from 'node:assert/strict';
import { PAPERS } from '../scripts/study/papers.mjs';

const row = (id) => PAPERS.find((p) => p.id === id);
const recall = (cells) => ({ headline: { recall: { variants: Object.fromEntries(Object.entries(cells).map(([v, [learned, n]]) => [v, { learned, n }])) } } });
// text summaries carry the n-gram lines; a 4-gram at 2.5 leaves these made-up models below it
const NGRAM = { windows: { 2: 3.3, 3: 2.9, 4: 2.5, 5: 2.3 } };
const text = (bpc, ngram = NGRAM) => ({ ngram, headline: { text: { variants: Object.fromEntries(Object.entries(bpc).map(([v, mean]) => [v, { mean }])) } } });

test('L1 (Long Range Arena), lookup half: linear learning recall on fewer seeds than softmax agrees; as many disagrees', () => {
  assert.equal(row('L1').verdict(recall({ softmax: [5, 5], linear: [0, 5] })), 'lookup: agrees (linear behind)');
  assert.equal(row('L1').verdict(recall({ softmax: [5, 5], linear: [5, 5] })), 'lookup: disagrees');
});

test('L1: no lookup verdict when softmax never learned recall or a side was not run', () => {
  assert.equal(row('L1').verdict(recall({ softmax: [0, 5], linear: [0, 5] })), 'lookup: not comparable (softmax did not learn recall)');
  assert.equal(row('L1').verdict(recall({ softmax: [0, 0], linear: [0, 0] })), 'not comparable');
  assert.equal(row('L1').verdict({}), 'not comparable');
});

test('L1, text half: a kernel is level unless its interval lies wholly above softmax\'s; without intervals it is not judged', () => {
  const both = (bpc, cells) => ({ ngram: NGRAM, headline: { ...text(bpc).headline, ...recall(cells).headline } });
  const iv = (mean, half) => ({ mean, lo: mean - half, hi: mean + half });
  const withIntervals = { ngram: NGRAM, headline: { text: { variants: { softmax: iv(2.15, 0.02), linear: iv(2.22, 0.02), efficient: iv(2.16, 0.02), taylor: iv(2.10, 0.02) } } } };
  assert.equal(row('L1').verdict(withIntervals), 'text: agrees for efficient, taylor; text: disagrees for linear (interval wholly above softmax\'s)');
  // one seed: no interval, so no text verdict even for a kernel far behind
  assert.equal(row('L1').verdict(text({ softmax: 2.15, linear: 3.0 })), 'not comparable');
  const mixed = both({ softmax: 2.15 }, { softmax: [5, 5], linear: [0, 5] });
  assert.equal(row('L1').verdict(mixed), 'lookup: agrees (linear behind)', 'the lookup half stands without text intervals');
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
  // [gain mean, lo, hi] and, for the mixture half, the fine-tuned score [mean, lo, hi]
  const gains = (g) => ({ transfer: { variants: Object.fromEntries(Object.entries(g).map(([v, [mean, lo, hi, f = [NaN, NaN, NaN]]]) =>
    [v, { gain: { mean, lo, hi }, finetuned: { mean: f[0], lo: f[1], hi: f[2] } }])) } });
  const soft = [0.02, 0.01, 0.03, [0.30, 0.28, 0.32]];
  const random = [-0.14, -0.26, -0.01];
  assert.equal(row('S4').verdict(gains({ softmax: soft, random, mixture: [-0.14, -0.21, -0.08, [0.15, 0.10, 0.20]] })),
    'agrees for Random; disagrees for the mixture (behind softmax after fine-tuning, 15.0 % against 30.0 %)');
  assert.equal(row('S4').verdict(gains({ softmax: soft, random, mixture: [0.0, -0.05, 0.05, [0.31, 0.29, 0.33]] })), 'agrees for Random; agrees for the mixture');
  assert.equal(row('S4').verdict(gains({ softmax: soft, random, mixture: [-0.04, -0.09, 0.01, [0.254, 0.183, 0.325]] })),
    'agrees for Random; not separable for the mixture (behind softmax after fine-tuning, 25.4 % against 30.0 %, intervals overlapping)');
  assert.equal(row('S4').verdict(gains({ softmax: soft, random: [0.05, 0.0, 0.1] })), 'disagrees for Random');
  assert.equal(row('S4').verdict(gains({ softmax: [0.02, 0.01, 0.03] })), 'not comparable');
  assert.equal(row('S4').verdict({}), 'not comparable');
});


test('the rule: a text finding is not judged while no model is below the 4-gram line', () => {
  const above = { windows: { 4: 1.99 } };
  for (const id of ['S2', 'K1']) {
    assert.equal(row(id).verdict(text({ softmax: 2.15, random: 2.05, dense: 2.12, linear: 2.22 }, above)),
      'not comparable yet: no model is below the 4-gram line (1.990 bits/char; the best, 2.050)', id);
  }
  const iv = (mean, half) => ({ mean, lo: mean - half, hi: mean + half });
  assert.equal(row('L1').verdict({ ngram: above, headline: { text: { variants: { softmax: iv(2.15, 0.02), linear: iv(2.22, 0.02), efficient: iv(2.16, 0.02), taylor: iv(2.48, 0.02) } } } }),
    'text: not comparable yet: no model is below the 4-gram line (1.990 bits/char; the best, 2.150)');
  assert.equal(row('S2').verdict(text({ softmax: 2.0, random: 2.1, dense: 2.05 }, null)), 'not comparable (no n-gram line recorded)');
  // with the full-context scoring recorded, its numbers stand beside the windowed judgement
  const lines = { windows: { 4: 1.99 }, full: { 4: 1.96, 5: 1.67 } };
  const both = (mean, strided) => ({ mean, lo: mean, hi: mean, strided: { mean: strided } });
  assert.equal(row('S2').verdict({ ngram: lines, headline: { text: { variants: { softmax: both(2.15, 2.12), random: both(2.05, 2.01), dense: both(2.12, 2.08), fixed: both(2.004, 1.958) } } } }),
    'not comparable yet: no model is below the 4-gram line (1.990 bits/char; the best, 2.004); with full context the best is 1.958, against the 4-gram\'s 1.960 and the 5-gram\'s 1.670');
});

test('the rule: a pretraining finding is not judged without a positive control (some gain wholly above 0)', () => {
  const gains = (g) => ({ transfer: { variants: Object.fromEntries(Object.entries(g).map(([v, [mean, lo, hi]]) => [v, { gain: { mean, lo, hi }, finetuned: { mean: 0.3, lo: 0.28, hi: 0.32 } }])) } });
  // the recorded study: softmax -2.6 [-6.5, 1.3], random -17.3 [-19.7, -14.8], linear +8.7 across 0
  assert.equal(row('S4').verdict(gains({ softmax: [-0.026, -0.065, 0.013], random: [-0.173, -0.197, -0.148], linear: [0.087, -0.02, 0.19] })),
    'no positive control: not comparable yet (no variant gains from pretraining, interval above 0)');
});

test('S1 (Synthesizer WMT) is judged on copy and reverse, its analogue here', () => {
  const pos = (cells) => ({ headline: { copy: recall(cells).headline.recall, reverse: recall(cells).headline.recall } });
  // the recorded study: softmax, random, dense 5/5 on each; frozen 0/5; the mixture 4/5 on each
  assert.equal(row('S1').verdict(pos({ softmax: [5, 5], random: [5, 5], dense: [5, 5], 'random-frozen': [0, 5], mixture: [4, 5] })),
    'agrees for Random and Dense; agrees for Fixed Random (0 of 10); disagrees for the mixture (8 of 10 against softmax\'s 10)');
  assert.match(row('S1').ours(pos({ softmax: [5, 5], random: [5, 5], dense: [5, 5], 'random-frozen': [0, 5], mixture: [4, 5] })), /^softmax 10\/10, random 10\/10, dense 10\/10, random-frozen 0\/10, mixture 8\/10 seeds/);
  assert.equal(row('S1').verdict(pos({ softmax: [5, 5], random: [3, 5], dense: [5, 5], 'random-frozen': [0, 5] })), 'agrees for Dense; disagrees for Random (6 of 10 against 10); agrees for Fixed Random (0 of 10)');
  assert.equal(row('S1').verdict(text({ softmax: 2.0 })), 'not comparable');
});

test('Z2 (Zoology) says its verdict is at this study\'s budget', () => {
  assert.equal(row('Z2').verdict({ capacity: { verdict: 'disagrees: softmax itself did not solve every cell' } }),
    'not Zoology\'s budget (recall at this study\'s, 2,000 steps: disagrees: softmax itself did not solve every cell)');
  assert.equal(row('Z2').verdict({}), 'not comparable');
});
