// The training tasks of attnlab's small transformer: synthetic sequence tasks that separate the
// attention variants, and next-character prediction on a string. Deterministic from a seed.
//
//   tasks.recall({ pairs, seqLen, vocab, queries, layout })   multi-query associative recall
//   tasks.copy({ seqLen, vocab }), tasks.reverse(...), tasks.sort(...)
//   tasks.text({ seqLen })                           next character of the King James Bible (the
//                                                    shipped corpus; in a browser: { corpus })
//   tasks.text({ text, seqLen })                     next character on a string of your own
//   tasks.verses({ label, seqLen })                  which part of the Bible a verse comes from
//   loadCorpus() (attnlab/corpus)                     the corpus, fetched (browsers) or read (Node)
//   TASK_NAMES, TASK_KNOBS                           the tasks' names and the knobs a form shows
//
// Each factory returns a task
//   { name, vocab, seqLen, causal, defaults: { dModel, heads, layers, dFF, steps, batch, lr, warmup },
//     options,                                        the resolved arguments
//     sample(batch, seed, split = 'train') -> { tokens: Int32Array [batch*seqLen],
//                                              targets: Int32Array [batch*seqLen] (-1 = no loss) },
//     describe(tokens, i) -> string,                   sequence i of a batch, readable
//     tokenName(t) -> string }
// `split` is 'train', 'validation' (where a study chooses settings such as a learning rate) or
// 'heldout' (where it reports). For the synthetic tasks each is an independent stream (sequences
// are drawn afresh; at the defaults a repeat of a training sequence is astronomically unlikely);
// for text on a string the held-out split is a fixed part of the string (no validation split);
// for the corpus and verses, disjoint sets of chapters (tasks/corpus-parse.js).
//
// Conventions shared by every task:
// * the target at position t is the token the model must output there (next-token style): a
//   causal model sees positions 0..t when it predicts targets[t], and every task is laid out so
//   that this is enough. `causal` is true for every task: the copy, reverse, sort and text layouts
//   put the answer in the input one position later (teacher forcing), so a model that looks ahead
//   would read it; verses answers at its last position, causal like text so that a model
//   pretrained on text is fine-tuned on it unchanged.
// * random numbers: mulberry32 (src/js/prng.js) seeded with streamSeed(seed, '<task>:<split>'),
//   integers as floor(u * k): the same arrays on every engine.
// * bad arguments throw an Error that names the argument.
//
// A plain ES module: no DOM, no Node imports, no work at import time. In Node the shipped corpus
// is read on first use through process.getBuiltinModule (browser bundlers never see an import).
//
// One task family a file, in tasks/: recall.js; sequence.js (copy, reverse, sort); text.js (a
// string or the corpus); verses.js; what they share: args.js (argument checks, splits, the PRNG
// stream), defaults.js (each task's model and training defaults) and corpus-parse.js (the corpus's
// files, parse and split). This module lists them.

import { recall } from './tasks/recall.js';
import { sequenceTask } from './tasks/sequence.js';
import { text, DEFAULT_TEXT } from './tasks/text.js';
import { verses } from './tasks/verses.js';
import { CORPUS_FILES, HELD_OUT_EVERY, chapterSplit, prepareCorpus, shippedCorpus } from './tasks/corpus-parse.js';

// The corpus's parse, and the page's example text, as their importers have always found them here.
export { CORPUS_FILES, HELD_OUT_EVERY, chapterSplit, prepareCorpus, shippedCorpus, DEFAULT_TEXT };

/** The task factories, by name. */
export const tasks = Object.freeze({
  recall,
  copy: sequenceTask('copy'),
  reverse: sequenceTask('reverse'),
  sort: sequenceTask('sort'),
  text,
  verses,
});

/** Every task's name, in the order above: what the page, the study and the tests loop over. */
export const TASK_NAMES = Object.freeze(Object.keys(tasks));

/**
 * Each task's knobs: the options a form always shows a field for, in the form's order. The others
 * follow from these unless given (recall's queries and layout), and the text and the corpus are
 * the data, not knobs. A new task adds its line here, and the page's Experiment view offers it.
 */
export const TASK_KNOBS = Object.freeze({
  recall: Object.freeze(['seqLen', 'pairs', 'vocab']),
  copy: Object.freeze(['seqLen', 'vocab']),
  reverse: Object.freeze(['seqLen', 'vocab']),
  sort: Object.freeze(['seqLen', 'vocab']),
  text: Object.freeze(['seqLen']),
  verses: Object.freeze(['label', 'seqLen']),
});

export default tasks;
