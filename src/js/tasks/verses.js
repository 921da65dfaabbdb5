// tasks/verses.js — the verses task of tasks.js: which part of the Bible a verse comes from. A
// plain ES module: no DOM, no Node imports, no work at import time.
// In Node the shipped corpus is read on first use (corpus-parse.js).

import { fail, checkInt, checkKnown, SPLITS, sampler, randInt, checkSequence } from './args.js';
import { NEWLINE, prepareCorpus, shipped } from './corpus-parse.js';
import { DEFAULTS } from './defaults.js';

// verses: which part of the Bible a verse comes from — a supervised task on the corpus whose
// vocabulary and sequence length are those of tasks.text(), so that a model pretrained on the
// corpus can be fine-tuned on it as it is (the Synthesizer paper's transfer setting).
//
// label 'group' (the default): eight classes, the books in canonical order (the 66 books of the
// shipped index):
//   A Law (Genesis–Deuteronomy)             E Minor prophets (Hosea–Malachi)
//   B History (Joshua–Esther)               F Gospels and Acts (Matthew–Acts)
//   C Poetry and wisdom (Job–Song of Songs) G Pauline epistles (Romans–Philemon)
//   D Major prophets (Isaiah–Daniel)        H Hebrews, the general epistles and Revelation
// label 'testament': two classes, O (Old Testament, Genesis–Malachi) and N (New).
// A class is answered with the token of its letter (A..H, O, N: characters of the corpus, so the
// same vocabulary). Chance is 1 / classes (12.5 % and 50 %).
//
// Layout of one sequence of seqLen tokens (seqLen 64 unless given): the verse's characters
// without its "\n" — its first seqLen characters when it is longer (most verses are: the median
// is 123), else left-padded with the padding token "\n" (the corpus's verse separator: to a model
// pretrained on the corpus, "a verse begins here"). Targets: -1 everywhere except the last
// position, whose target is the class's token. A causal model reads the whole (visible) verse
// before it answers.
// Sampling, balanced: each sequence draws its class uniformly, then a verse of that class
// uniformly among the verses of the split: 'train' from the training chapters only, 'heldout'
// from the held-out chapters only (the corpus's split: corpus-parse.js). sample() also returns verses:
// Int32Array [batch], each sequence's verse (its line in the corpus text), and labels: Int32Array
// [batch], its class index. verse(i) describes verse i (book, chapter, verse, text, class, split).

const VERSE_GROUPS = [
  { name: 'Law', letter: 'A', books: [0, 5] },
  { name: 'History', letter: 'B', books: [5, 17] },
  { name: 'Poetry and wisdom', letter: 'C', books: [17, 22] },
  { name: 'Major prophets', letter: 'D', books: [22, 27] },
  { name: 'Minor prophets', letter: 'E', books: [27, 39] },
  { name: 'Gospels and Acts', letter: 'F', books: [39, 44] },
  { name: 'Pauline epistles', letter: 'G', books: [44, 57] },
  { name: 'Hebrews, general epistles and Revelation', letter: 'H', books: [57, 66] },
];
const TESTAMENTS = [
  { name: 'Old Testament', letter: 'O', testament: 'OT' },
  { name: 'New Testament', letter: 'N', testament: 'NT' },
];

export function verses(opts = {}) {
  checkKnown('verses', opts, ['label', 'seqLen', 'corpus']);
  const label = opts.label ?? 'group';
  if (label !== 'group' && label !== 'testament') fail('verses', 'label', `must be 'group' or 'testament', got ${String(label)}`);
  const c = prepareCorpus(opts.corpus ?? shipped('verses'), 'verses');
  const seqLen = checkInt('verses', 'seqLen', opts.seqLen ?? 64, 2);
  const { chars, idOf, ids, verseStart, verseChapter, chapters, books } = c;
  const vocab = chars.length;
  if (label === 'group' && books.length !== 66) fail('verses', 'corpus', `must have the Bible's 66 books for label 'group', has ${books.length}`);
  const defs = label === 'group' ? VERSE_GROUPS : TESTAMENTS;
  const classOfBook = books.map((b, bi) => defs.findIndex((d) => (d.books ? bi >= d.books[0] && bi < d.books[1] : b.testament === d.testament)));
  const unlabelled = classOfBook.indexOf(-1);
  if (unlabelled >= 0) fail('verses', 'corpus', `book ${books[unlabelled].name} has no ${label} (testament must be 'OT' or 'NT')`);
  const classes = defs.map((d) => {
    const token = idOf[d.letter.charCodeAt(0)];
    if (token < 0) fail('verses', 'corpus', `has no character ${d.letter} for the class ${d.name}`);
    return Object.freeze({ name: d.name, letter: d.letter, token });
  });
  const pad = idOf[NEWLINE];
  const lists = Object.fromEntries(SPLITS.map((split) => [split, classes.map(() => [])]));
  for (let v = 0; v < verseChapter.length; v++) {
    const ch = chapters[verseChapter[v]];
    lists[ch.split][classOfBook[ch.book]].push(v);
  }
  for (const split of SPLITS) {
    for (const [k, list] of lists[split].entries()) if (!list.length) fail('verses', 'corpus', `has no ${split} verse of class ${classes[k].name}`);
  }
  const pools = Object.fromEntries(SPLITS.map((split) => [split, lists[split].map((l) => Int32Array.from(l))]));
  const fill = (tokens, targets, s, v, k) => {
    const start = verseStart[v];
    const len = Math.min(verseStart[v + 1] - 1 - start, seqLen); // without its "\n"
    const o = s * seqLen;
    tokens.fill(pad, o, o + seqLen - len);
    for (let i = 0; i < len; i++) tokens[o + seqLen - len + i] = ids[start + i];
    targets[o + seqLen - 1] = classes[k].token;
  };
  const show = (t) => (t >= 0 && t < vocab ? chars[t] : '\uFFFD');

  return {
    name: 'verses',
    vocab,
    seqLen,
    causal: true,
    options: opts.corpus != null ? { label, seqLen, corpus: opts.corpus } : { label, seqLen },
    chars,
    classes,
    chance: 1 / classes.length,
    padding: pad,
    /** How many verses each class has in each split. */
    counts: Object.fromEntries(SPLITS.map((split) => [split, pools[split].map((p) => p.length)])),
    defaults: { ...DEFAULTS.verses },
    sample(batch, seed, split = 'train') {
      const rnd = sampler('verses', batch, seed, split);
      const tokens = new Int32Array(batch * seqLen);
      const targets = new Int32Array(batch * seqLen).fill(-1);
      const chosen = new Int32Array(batch);
      const labels = new Int32Array(batch);
      for (let s = 0; s < batch; s++) {
        const k = randInt(rnd, classes.length);
        const pool = pools[split][k];
        const v = pool[randInt(rnd, pool.length)];
        fill(tokens, targets, s, v, k);
        chosen[s] = v;
        labels[s] = k;
      }
      return { tokens, targets, verses: chosen, labels };
    },
    /**
     * Every verse of a split once ('heldout' or 'validation'), class by class in canonical order:
     * { tokens, targets, verses, labels }. Its classes are as unbalanced as the Bible is, so a
     * study reports the mean of the per-class accuracies (balanced accuracy; chance 1 / classes).
     */
    allVerses(split = 'heldout') {
      if (split !== 'heldout' && split !== 'validation') fail('verses', 'split', `of allVerses must be 'heldout' or 'validation', got ${String(split)}`);
      const count = pools[split].reduce((n, p) => n + p.length, 0);
      const tokens = new Int32Array(count * seqLen);
      const targets = new Int32Array(count * seqLen).fill(-1);
      const chosen = new Int32Array(count);
      const labels = new Int32Array(count);
      let s = 0;
      for (const [k, pool] of pools[split].entries()) {
        for (const v of pool) {
          fill(tokens, targets, s, v, k);
          chosen[s] = v;
          labels[s] = k;
          s++;
        }
      }
      return { tokens, targets, verses: chosen, labels };
    },
    /** Verse i of the corpus (its line): where it is, its text, its class and its split. */
    verse(i) {
      if (!Number.isInteger(i) || i < 0 || i >= verseChapter.length) {
        throw new Error(`tasks.verses.verse: i must be an integer in [0, ${verseChapter.length}), got ${String(i)}`);
      }
      const ch = chapters[verseChapter[i]];
      const b = books[ch.book];
      return {
        index: i, book: b.name, chapter: ch.number, verse: i - ch.first + 1, testament: b.testament,
        text: c.text.slice(verseStart[i], verseStart[i + 1] - 1), label: classOfBook[ch.book], heldOut: ch.heldOut, split: ch.split,
      };
    },
    describe(tokens, i) {
      const seq = checkSequence(tokens, i, seqLen, 'verses');
      let first = 0;
      while (first < seq.length - 1 && seq[first] === pad) first++;
      return seq.slice(first).map(show).join('');
    },
    tokenName: show,
  };
}
