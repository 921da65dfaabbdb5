// The study's character n-gram baselines (scripts/lib/ngram.mjs): interpolated Witten–Bell
// probabilities checked against values worked out by hand on "abracadabra", and the two
// scorings of a corpus's test chapters (each test character exactly once, none of training).
//
//   node --test tests/ngram.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WittenBell, ngramLines } from '../scripts/lib/ngram.mjs';
import { tasks, prepareCorpus } from '../dist/tasks.js';

// a=0 b=1 c=2 d=3 r=4
const ABC = 'abcdr';
const ids = (s) => Array.from(s, (c) => ABC.indexOf(c));
const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a}, by hand ${b}`);

test('Witten–Bell on "abracadabra": counts and probabilities as worked out by hand', () => {
  const m = new WittenBell(3, 5).fit(ids('abracadabra'));
  // counts: unigrams a5 b2 c1 d1 r2; after a: b2 c1 d1; after b: r2; after "ab": r2
  assert.equal(m.counts([]).n, 11);
  assert.deepEqual([...m.counts([]).next].sort(), [[0, 5], [1, 2], [2, 1], [3, 1], [4, 2]]);
  assert.deepEqual([...m.counts(ids('a')).next].sort(), [[1, 2], [2, 1], [3, 1]]);
  assert.deepEqual([...m.counts(ids('b')).next], [[4, 2]]);
  assert.deepEqual([...m.counts(ids('ab')).next], [[4, 2]]);
  assert.deepEqual([...m.counts(ids('ra')).next], [[2, 1]], 'the last "ra" has no follower');
  assert.equal(m.counts(ids('rr')), null);
  // P0(w) = (c(w) + T·(1/V)) / (N + T) = (c(w) + 1) / 16
  near(m.prob(ids('r'), 0, 0, 1), 3 / 16, 'P(r)');
  // P(b | a) = (2 + 3·P0(b)) / (4 + 3) = (2 + 9/16) / 7
  near(m.prob(ids('ab'), 1, 0, 2), 41 / 112, 'P(b | a)');
  near(m.prob(ids('aa'), 1, 0, 2), 9 / 56, 'P(a | a), unseen after a');
  // P(r | b) = (2 + 1·3/16) / 3;  P(r | ab) = (2 + 1·P(r | b)) / 3
  near(m.prob(ids('br'), 1, 0, 2), 35 / 48, 'P(r | b)');
  near(m.prob(ids('abr'), 2, 0, 3), 131 / 144, 'P(r | ab)');
  near(m.prob(ids('abr'), 2, 1, 3), 35 / 48, 'context cut at contextFrom: P(r | b)');
  // an unseen context falls back to the longest seen one: P(a | rr) = P(a | r) = (2 + 6/16) / 3
  near(m.prob(ids('rra'), 2, 0, 3), 19 / 24, 'P(a | rr)');
});

test('every P(· | h) sums to 1 over the vocabulary, seen context or not', () => {
  const m = new WittenBell(4, 5).fit(ids('abracadabra')).fit(ids('cadabra'));
  for (const ctx of ['', 'a', 'ab', 'abr', 'rrr', 'dab', 'c']) {
    for (const order of [1, 2, 3, 4]) {
      let sum = 0;
      for (let w = 0; w < 5; w++) sum += m.prob([...ids(ctx), w], ctx.length, 0, order);
      near(sum, 1, `sum over w of P(w | "${ctx}") at order ${order}`);
    }
  }
  assert.throws(() => new WittenBell(3, 5).fit([0, 5]), /outside the vocabulary/);
});

test('a corpus\'s test chapters: both scorings predict each test character exactly once, none of training, and fit on training chapters only', () => {
  // 40 one-verse chapters; chapter c is a test chapter when c % 20 === 19
  const lines = Array.from({ length: 40 }, (_, c) => `${'abcdr'[c % 5]}${'ab'.repeat(3 + (c % 4))}${c % 3 ? 'ra' : 'cad'}\n`);
  const corpus = { text: lines.join(''), index: { name: 'tiny', books: [{ name: 'One', testament: 'old', verses: Array(40).fill(1) }] } };
  const parsed = prepareCorpus(corpus, 'text');
  const task = tasks.text({ corpus, seqLen: 4 });
  const test = new Set();
  for (const [a, b] of parsed.runs.heldout) for (let i = a; i < b; i++) test.add(i);
  const seen = { windows: [], full: [] };
  const lines5 = ngramLines(parsed, task, { orders: [2, 3], visit: (how, at, from) => {
    seen[how].push(at);
    if (how === 'windows') assert.ok(from >= at - 4 && from < at, `a window's context lies in its window (${from} for ${at})`);
  } });
  for (const how of ['windows', 'full']) {
    assert.equal(seen[how].length, test.size, `${how}: as many scored as test characters`);
    assert.deepEqual([...new Set(seen[how])].sort((x, y) => x - y), [...test].sort((x, y) => x - y), `${how}: each test character once, none of training`);
    assert.equal(lines5.count[how], test.size);
    for (const o of [2, 3]) assert.ok(Number.isFinite(lines5[o][how]) && lines5[o][how] > 0, `${o}-gram ${how}: ${lines5[o][how]}`);
  }
  // the counts come from the training chapters only: a model fitted on them alone agrees
  const m = new WittenBell(3, parsed.chars.length);
  for (const [a, b] of parsed.runs.train) m.fit(parsed.ids, a, b);
  let bits = 0;
  for (const at of seen.full) bits -= Math.log2(m.prob(parsed.ids, at, 0, 3));
  near(bits / seen.full.length, lines5[3].full, '3-gram, full context');
});
