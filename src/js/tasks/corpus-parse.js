// tasks/corpus-parse.js — the corpus as the tasks read it: the shipped files (read from disk in
// Node, on first use), and a corpus { text, index } parsed once per object into its vocabulary,
// verses, chapters and their split (train, validation, heldout: below). tasks.text and
// tasks.verses sample from the parse; corpus.js (the subpath attnlab/corpus) checks a fetched
// corpus with it. A plain ES module: no DOM,
// no Node imports (Node's fs through process.getBuiltinModule), no work at import time.
//
// The corpus: the King James Bible, 4,137,847 characters of 63 distinct ones, one verse a line
// (data/kjv.txt, written by scripts/prepare-corpus.mjs from Debian's bible-kjv-text; provenance
// in data/README.md), and its index (data/kjv-index.json: each book's name, testament and
// number of verses per chapter, in canonical order). Verse i of the Bible is line i of the text
// (its "\n" included); a chapter is a run of lines.
//
// A corpus, as tasks.text({ corpus }) and tasks.verses({ corpus }) take it, is { text, index }:
// the text and the parsed index. In Node both tasks read the shipped corpus by themselves, once,
// on first use (next to dist/tasks.js in the package, in data/ in the source tree). A browser
// fetches it first:
//   const corpus = await loadCorpus();   // kjv.txt and kjv-index.json next to tasks.js (4.1 MB)
//   const task = tasks.text({ corpus }); // its parse is kept for the next task of the same object
// loadCorpus({ text, index }) takes other URLs (in Node also file paths).
//
// The split, shared by text and verses: chapters are numbered 0..1188 in canonical order
// (Genesis 1 is chapter 0, Revelation 22 chapter 1188), and chapter c is held out of training when
// c % 10 === 9 (Genesis 10, Genesis 20, ..., Revelation 13: 118 chapters, 398,939 characters, 9.6 %
// of the text). Those alternate between two sets: 'validation', c % 20 === 9 (Genesis 10, Genesis
// 30, ...: 59 chapters, 196,904 characters, 1,484 verses), where a study chooses its settings, and
// 'heldout', the test set, c % 20 === 19 (Genesis 20, Genesis 40, ...: 59 chapters, 202,035
// characters, 1,573 verses), where it reports; both span both testaments and every book group of
// the verses task (verses.js). The other 1,071 chapters are the training chapters. No sample of the 'train' split
// reads or predicts a character of a validation or test chapter.

import { fail } from './args.js';

/** The corpus files, next to tasks.js in dist/, and in data/ of the source tree. */
export const CORPUS_FILES = Object.freeze({ text: 'kjv.txt', index: 'kjv-index.json' });
/** Chapter c (0-based, canonical order) is held out of training when c % HELD_OUT_EVERY === HELD_OUT_EVERY - 1. */
export const HELD_OUT_EVERY = 10;
/**
 * The split of chapter c: the chapters held out of training alternate between 'validation'
 * (c % 20 === 9: Genesis 10, Genesis 30, ...) and 'heldout', the test set (c % 20 === 19: Genesis
 * 20, Genesis 40, ...); every other chapter is 'train'.
 */
export function chapterSplit(c) {
  if (c % HELD_OUT_EVERY !== HELD_OUT_EVERY - 1) return 'train';
  return c % (2 * HELD_OUT_EVERY) === HELD_OUT_EVERY - 1 ? 'validation' : 'heldout';
}
export const NEWLINE = 10; // the verse separator, "\n"

let shippedCache = null; // read on first use (Node)
const preparedCorpora = new WeakMap(); // corpus object -> its parse

const isFileUrl = () => String(import.meta.url).startsWith('file:');

/** The shipped corpus, read from disk once (Node); in a browser, an Error saying what to do. */
export function shipped(task) {
  if (shippedCache) return shippedCache;
  const fs = globalThis.process?.getBuiltinModule?.('node:fs');
  if (!fs || !isFileUrl()) {
    throw new Error(`tasks.${task}: without a text of your own this task reads the shipped corpus, which a browser ` +
      `must fetch first: tasks.${task}({ corpus: await loadCorpus() }), with loadCorpus from 'attnlab/corpus'`);
  }
  // A computed URL, not a literal one: bundlers must not try to follow it.
  for (const dir of ['../', '../../../data/']) {
    const textUrl = new URL(dir + CORPUS_FILES.text, import.meta.url);
    if (!fs.existsSync(textUrl)) continue;
    const text = fs.readFileSync(textUrl, 'utf8');
    const index = JSON.parse(fs.readFileSync(new URL(dir + CORPUS_FILES.index, import.meta.url), 'utf8'));
    shippedCache = Object.freeze({ text, index });
    return shippedCache;
  }
  throw new Error(`tasks.${task}: the corpus (${CORPUS_FILES.text}) is neither next to tasks.js nor in data/; ` +
    'run node scripts/prepare-corpus.mjs, or pass { corpus }');
}

/** The shipped corpus, read from disk (Node only; corpus.js's loadCorpus() uses it there). */
export const shippedCorpus = () => shipped('text');

export function prepareCorpus(corpus, task) {
  const bad = (msg) => fail(task, 'corpus', msg);
  if (corpus === null || typeof corpus !== 'object') bad(`must be { text, index } (see loadCorpus()), got ${corpus === null ? 'null' : typeof corpus}`);
  const hit = preparedCorpora.get(corpus);
  if (hit) return hit;
  const { text, index } = corpus;
  if (typeof text !== 'string' || text.length === 0 || text.charCodeAt(text.length - 1) !== NEWLINE) {
    bad('text must be a string of verses, each ending in "\\n"');
  }
  if (index === null || typeof index !== 'object' || !Array.isArray(index.books) || index.books.length === 0) {
    bad('index must be an object with a list of books');
  }
  const T = text.length;
  // the vocabulary: the distinct UTF-16 code units, sorted by code
  const seen = new Uint8Array(65536);
  let lines = 0;
  for (let i = 0; i < T; i++) {
    const code = text.charCodeAt(i);
    seen[code] = 1;
    if (code === NEWLINE) lines++;
  }
  const chars = [];
  const idOf = new Int32Array(65536).fill(-1);
  for (let code = 0; code < 65536; code++) if (seen[code]) { idOf[code] = chars.length; chars.push(String.fromCharCode(code)); }
  const ids = new Uint16Array(T);
  const verseStart = new Int32Array(lines + 1);
  for (let i = 0, v = 0; i < T; i++) {
    const code = text.charCodeAt(i);
    ids[i] = idOf[code];
    if (code === NEWLINE) verseStart[++v] = i + 1;
  }
  // chapters: { book, number, first verse, verses, start, end (characters), heldOut }
  const chapters = [];
  const verseChapter = new Int32Array(lines);
  const books = index.books.map((b, bi) => {
    if (b === null || typeof b !== 'object' || typeof b.name !== 'string' || !Array.isArray(b.verses) ||
        !b.verses.every((n) => Number.isInteger(n) && n > 0)) {
      bad(`index.books[${bi}] must be { name, testament, verses: [verses per chapter] }`);
    }
    const firstChapter = chapters.length;
    for (const [ci, n] of b.verses.entries()) {
      const first = chapters.length === 0 ? 0 : chapters[chapters.length - 1].first + chapters[chapters.length - 1].verses;
      if (first + n > lines) bad(`index counts more verses than the text has lines (${lines}), at ${b.name} ${ci + 1}`);
      verseChapter.fill(chapters.length, first, first + n);
      chapters.push({
        book: bi, number: ci + 1, first, verses: n, start: verseStart[first], end: verseStart[first + n],
        heldOut: chapters.length % HELD_OUT_EVERY === HELD_OUT_EVERY - 1,
        split: chapterSplit(chapters.length),
      });
    }
    return { name: b.name, testament: b.testament, firstChapter, chapters: b.verses.length };
  });
  const counted = chapters.reduce((s, c) => s + c.verses, 0);
  if (counted !== lines) bad(`index counts ${counted} verses, the text has ${lines} lines`);
  if (!chapters.some((c) => c.heldOut)) bad(`needs at least ${HELD_OUT_EVERY} chapters (one held out)`);
  // runs of consecutive chapters of one split, in characters [start, end)
  const runs = { train: [], validation: [], heldout: [] };
  for (const c of chapters) {
    const list = runs[c.split];
    const last = list[list.length - 1];
    if (last && last[1] === c.start) last[1] = c.end;
    else list.push([c.start, c.end]);
  }
  const p = { name: index.name, text, T, chars, idOf, ids, verseStart, verseChapter, chapters, books, runs };
  preparedCorpora.set(corpus, p);
  return p;
}
