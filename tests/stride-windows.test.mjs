// The corpus text task's full-context scoring, strideWindows(stride): every character of the test
// (or validation) chapters predicted exactly once, none of a training chapter, each after at least
// seqLen − stride characters of the corpus's own text. Checked against the corpus itself (its
// chapter table and character ids), not against the windows' own construction.
//
//   node --test tests/stride-windows.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tasks, prepareCorpus, shippedCorpus } from '../dist/tasks.js';

const parsed = prepareCorpus(shippedCorpus(), 'text');
const task = tasks.text();
const L = task.seqLen;

/** The corpus positions of a split's chapters, from the chapter table. */
function positionsOf(split) {
  const out = [];
  for (const ch of parsed.chapters) if (ch.split === split) for (let i = ch.start; i < ch.end; i++) out.push(i);
  return out;
}

for (const split of ['heldout', 'validation']) {
  test(`strideWindows on ${split}: each of its characters once, none of training, with at least seqLen − stride before it`, () => {
    const want = positionsOf(split);
    for (const stride of [16, 32, 64]) {
      const w = task.strideWindows(stride, split);
      const seen = new Map();
      for (let s = 0; s < w.starts.length; s++) {
        const start = w.starts[s];
        for (let i = 0; i < L; i++) {
          assert.equal(w.tokens[s * L + i], parsed.ids[start + i], `stride ${stride}: window ${s} position ${i} is the corpus's character`);
          const target = w.targets[s * L + i];
          if (target < 0) continue;
          const at = start + i + 1;
          assert.equal(target, parsed.ids[at], `stride ${stride}: window ${s} position ${i} predicts the next character`);
          assert.ok(i + 1 >= L - stride, `stride ${stride}: character ${at} predicted after ${i + 1} characters, fewer than ${L - stride}`);
          seen.set(at, (seen.get(at) ?? 0) + 1);
        }
      }
      assert.equal(seen.size, want.length, `stride ${stride}: as many characters predicted as the split has`);
      for (const at of want) assert.equal(seen.get(at), 1, `stride ${stride}: character ${at} predicted exactly once`);
      assert.equal(w.starts.length, parsed.runs[split].reduce((n, [a, b]) => n + Math.ceil((b - a) / stride), 0), `stride ${stride}: windows`);
    }
  });
}

test('strideWindows refuses a stride outside 1 … seqLen and an unknown split', () => {
  for (const bad of [0, L + 1, 1.5, '8']) assert.throws(() => task.strideWindows(bad), /stride/);
  assert.throws(() => task.strideWindows(8, 'train'), /split/);
});
