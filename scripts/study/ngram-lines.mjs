// ngram-lines.mjs — the character n-gram baselines of the text task: interpolated Witten–Bell
// models of orders 2–5 fitted on the corpus's training chapters and scored on its test chapters,
// both as the study scores its models (each test character once inside its 64-character window)
// and with full context (each test character after the order − 1 characters before it). Writes
// experiments/ngram.json; deterministic (no seed, no timing), a few seconds.
//
//   node scripts/study/ngram-lines.mjs [out.json]

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tasks, prepareCorpus, shippedCorpus } from '../../dist/tasks.js';
import { ngramLines } from '../lib/ngram.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'experiments', 'ngram.json'));
const task = tasks.text();
const parsed = prepareCorpus(shippedCorpus(), 'text');
const orders = [2, 3, 4, 5];
const lines = {};
for (const split of ['heldout', 'validation']) lines[split] = ngramLines(parsed, task, { orders, split });
const record = {
  what: 'character n-gram baselines of the text task: interpolated Witten–Bell, fitted on the training chapters only',
  seqLen: task.seqLen,
  scorings: {
    windows: `each character of the split once, its context only what precedes it inside its ${task.seqLen}-character window (heldOutWindows / validationWindows: the study's scoring of its models)`,
    full: 'each character of the split once, after the order − 1 characters before it in the corpus',
  },
  orders,
  heldout: lines.heldout,
  validation: lines.validation,
};
fs.writeFileSync(out, JSON.stringify(record, null, 2) + '\n');
for (const split of ['heldout', 'validation']) {
  console.log(`${split}: ${orders.map((o) => `${o}-gram ${lines[split][o].windows.toFixed(3)} (windows) / ${lines[split][o].full.toFixed(3)} (full)`).join(', ')} bits/char; ${lines[split].count.windows} characters`);
}
console.log(`wrote ${path.relative(ROOT, out)}`);
