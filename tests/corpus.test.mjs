// The text corpus (data/kjv.txt, data/kjv-index.json) and the tasks built on it: the files are
// the recorded ones; tasks.text() on the corpus never trains on a held-out chapter, evaluates
// every held-out character once (heldOutWindows) or at most once (evalWindows); tasks.verses
// labels verses right, balances its classes, keeps its splits apart and shares text's
// vocabulary; train() reports evalBits = evalLoss / ln 2.
//
//   node --experimental-wasm-relaxed-simd --test tests/corpus.test.mjs
//
// Every expectation here is computed from the data files by this file's own code (its own
// chapter table, its own held-out rule, its own book groups), not by tasks.js.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tasks, HELD_OUT_EVERY } from '../src/js/tasks.js';
import { loadCorpus } from '../src/js/corpus.js';
import { train, evaluateHeldOut } from '../src/js/train.js';
import { binding } from './helpers.mjs';
import { CORPUS_PACKAGES, corpusToolsInstalled } from '../scripts/ensure.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEXT = readFileSync(path.join(ROOT, 'data/kjv.txt'), 'utf8');
const INDEX = JSON.parse(readFileSync(path.join(ROOT, 'data/kjv-index.json'), 'utf8'));

// What data/README.md records.
const RECORDED = {
  sha256: '376f0fd8429cec6cc77659d428b2debd01f069dbfb3917776a09a36a7cfed5c4',
  characters: 4137847, verses: 31102, chapters: 1189, books: 66, distinct: 63,
};

// This file's own chapter table: [book, chapter number, start, end (characters), first verse line, verses].
const CHAPTERS = [];
{
  let line = 0;
  let at = 0;
  for (const [bi, b] of INDEX.books.entries()) {
    for (const [ci, n] of b.verses.entries()) {
      const start = at;
      for (let v = 0; v < n; v++) at = TEXT.indexOf('\n', at) + 1;
      CHAPTERS.push({ book: bi, name: b.name, number: ci + 1, start, end: at, line, verses: n, testament: b.testament });
      line += n;
    }
  }
}
// the documented rule, written again here: every 10th chapter is held out of training, and those
// alternate between validation (c % 20 === 9) and the test set, 'heldout' (c % 20 === 19)
const heldOutChapter = (c) => c % 10 === 9;
const splitOfChapter = (c) => (!heldOutChapter(c) ? 'train' : c % 20 === 9 ? 'validation' : 'heldout');
const HELD = CHAPTERS.filter((_, c) => splitOfChapter(c) === 'heldout');
const VALID = CHAPTERS.filter((_, c) => splitOfChapter(c) === 'validation');
/** The chapter index holding corpus position `at`. */
function chapterAt(at) {
  let lo = 0;
  let hi = CHAPTERS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (CHAPTERS[mid].start <= at) lo = mid; else hi = mid - 1;
  }
  return lo;
}
/** The line (verse index) of book name, chapter, verse, from the index alone. */
function lineOf(book, chapter, verse) {
  const c = CHAPTERS.find((x) => x.name === book && x.number === chapter);
  assert.ok(c, `${book} ${chapter} is in the index`);
  return c.line + verse - 1;
}
const LINE_START = [0];
for (let at = TEXT.indexOf('\n'); at >= 0; at = TEXT.indexOf('\n', at + 1)) LINE_START.push(at + 1);
const lineText = (line) => TEXT.slice(LINE_START[line], LINE_START[line + 1] - 1);

// This file's own book groups (by name), as the verses task documents them.
const GROUP_OF = {};
for (const [g, names] of [
  ['Law', 'Genesis Exodus Leviticus Numbers Deuteronomy'],
  ['History', 'Joshua Judges Ruth 1_Samuel 2_Samuel 1_Kings 2_Kings 1_Chronicles 2_Chronicles Ezra Nehemiah Esther'],
  ['Poetry and wisdom', 'Job Psalms Proverbs Ecclesiastes Song_of_Solomon'],
  ['Major prophets', 'Isaiah Jeremiah Lamentations Ezekiel Daniel'],
  ['Minor prophets', 'Hosea Joel Amos Obadiah Jonah Micah Nahum Habakkuk Zephaniah Haggai Zechariah Malachi'],
  ['Gospels and Acts', 'Matthew Mark Luke John Acts'],
  ['Pauline epistles', 'Romans 1_Corinthians 2_Corinthians Galatians Ephesians Philippians Colossians 1_Thessalonians 2_Thessalonians 1_Timothy 2_Timothy Titus Philemon'],
  ['Hebrews, general epistles and Revelation', 'Hebrews James 1_Peter 2_Peter 1_John 2_John 3_John Jude Revelation'],
]) for (const n of names.split(' ')) GROUP_OF[n.replace(/_/g, ' ')] = g;

describe('the corpus files', () => {
  test('data/kjv.txt is the recorded text: sha256, characters, verses, distinct characters', () => {
    assert.equal(createHash('sha256').update(TEXT, 'utf8').digest('hex'), RECORDED.sha256, 'sha256 of data/kjv.txt');
    assert.equal(TEXT.length, RECORDED.characters);
    assert.equal(TEXT.split('\n').length - 1, RECORDED.verses, 'one verse a line, each ending in \\n');
    assert.ok(TEXT.endsWith('\n'));
    assert.equal(new Set(TEXT).size, RECORDED.distinct);
    assert.doesNotMatch(TEXT, /\d/, 'no verse reference (digit) is left');
    assert.doesNotMatch(TEXT, / {2}|^ | $|\t|\r/m, 'whitespace is normalised');
    assert.equal(INDEX.text.sha256, RECORDED.sha256, 'the index records the same sha256');
    assert.equal(INDEX.text.characters, RECORDED.characters);
    assert.equal(INDEX.books.length, RECORDED.books);
    assert.equal(CHAPTERS.length, RECORDED.chapters);
    assert.equal(CHAPTERS.at(-1).end, TEXT.length, 'the index accounts for every line');
    assert.ok(lineText(0).startsWith('In the beginning God created the heaven and the earth.'));
    assert.equal(lineText(RECORDED.verses - 1), 'The grace of our Lord Jesus Christ be with you all. Amen.');
    const readme = readFileSync(path.join(ROOT, 'data/README.md'), 'utf8');
    assert.ok(readme.includes(RECORDED.sha256), 'data/README.md records the sha256');
  });

  test('the built package carries the same files next to tasks.js', { skip: !existsSync(path.join(ROOT, 'dist/kjv.txt')) && 'dist/ not built' }, () => {
    assert.ok(readFileSync(path.join(ROOT, 'dist/kjv.txt')).equals(readFileSync(path.join(ROOT, 'data/kjv.txt'))), 'dist/kjv.txt');
    assert.ok(readFileSync(path.join(ROOT, 'dist/kjv-index.json')).equals(readFileSync(path.join(ROOT, 'data/kjv-index.json'))), 'dist/kjv-index.json');
  });

  // `npm test` installs the two packages first (scripts/ensure.mjs, ensureCorpusTools); a run of
  // this file alone without them skips the test, except in CI, where that would hide it.
  const haveBible = corpusToolsInstalled();
  test('scripts/prepare-corpus.mjs is deterministic: it writes the committed files byte for byte', { skip: !haveBible && !process.env.CI && 'Debian\'s bible-kjv and bible-kjv-text are not installed (npm test installs them)' }, () => {
    assert.ok(haveBible, `Debian's ${CORPUS_PACKAGES.join(' and ')} are not installed: npm test (scripts/ensure.mjs) should have installed them`);
    const out = mkdtempSync(path.join(tmpdir(), 'attnlab-corpus-'));
    try {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/prepare-corpus.mjs'), '--out', out], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      for (const f of ['kjv.txt', 'kjv-index.json']) {
        assert.ok(readFileSync(path.join(out, f)).equals(readFileSync(path.join(ROOT, 'data', f))), `${f} differs from data/${f}`);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('tasks.text() on the corpus', () => {
  const t = tasks.text();
  const L = t.seqLen;

  test('the vocabulary is the corpus\'s characters; every 10th chapter is held out, half validation, half test', () => {
    assert.equal(HELD_OUT_EVERY, 10);
    assert.deepEqual(t.chars, [...new Set(TEXT)].sort());
    assert.equal(t.vocab, RECORDED.distinct);
    assert.equal(L, 64);
    const heldChars = HELD.reduce((s, c) => s + c.end - c.start, 0);
    const validChars = VALID.reduce((s, c) => s + c.end - c.start, 0);
    assert.equal(t.corpus.heldOutCharacters, heldChars);
    assert.equal(t.corpus.heldOutChapters, HELD.length);
    assert.equal(t.corpus.validationCharacters, validChars);
    assert.equal(t.corpus.validationChapters, VALID.length);
    assert.ok(heldChars >= 100_000, `held out (test): ${heldChars} characters`);
    assert.ok(validChars >= 100_000, `validation: ${validChars} characters`);
    assert.equal(t.corpus.trainCharacters, TEXT.length - heldChars - validChars);
    for (const set of [HELD, VALID]) {
      const testaments = new Set(set.map((c) => c.testament));
      assert.deepEqual([...testaments].sort(), ['NT', 'OT'], 'both testaments are held out');
      assert.ok(set.filter((c) => c.testament === 'NT').length >= 10, 'and not a token few of the New');
    }
    for (const [c, ch] of CHAPTERS.entries()) {
      assert.equal(t.splitOf(ch.start), splitOfChapter(c), `splitOf: ${ch.name} ${ch.number} (chapter ${c})`);
      assert.equal(t.splitOf(ch.end - 1), splitOfChapter(c), `splitOf: ${ch.name} ${ch.number} (chapter ${c}), last character`);
    }
    assert.deepEqual(VALID.slice(0, 2).map((ch) => `${ch.name} ${ch.number}`), ['Genesis 10', 'Genesis 30']);
    for (const at of [0, HELD[0].start - 1, HELD[0].start, HELD[0].end - 1, HELD[0].end, HELD.at(-1).start + 5]) {
      assert.equal(t.isHeldOut(at), heldOutChapter(chapterAt(at)), `isHeldOut(${at})`);
    }
    for (const [c, ch] of CHAPTERS.entries()) {
      assert.equal(t.isHeldOut(ch.start), heldOutChapter(c), `${ch.name} ${ch.number} (chapter ${c})`);
      assert.equal(t.isHeldOut(ch.end - 1), heldOutChapter(c), `${ch.name} ${ch.number} (chapter ${c}), last character`);
    }
    const named = (ch) => `${ch.name} ${ch.number}`;
    assert.deepEqual(HELD.slice(0, 2).map(named), ['Genesis 20', 'Genesis 40']);
  });

  test('no training sample reads or predicts a character of a held-out chapter', () => {
    for (const seed of [0, 1, 2, 3, 99, 12345, 0xffffffff]) {
      const { tokens, targets, starts } = t.sample(256, seed, 'train');
      for (let s = 0; s < 256; s++) {
        const start = starts[s];
        const where = `text train seed ${seed} sequence ${s} (start ${start})`;
        // the window reads start .. start + L - 1 and predicts start + 1 .. start + L: one chapter
        // run with no held-out chapter in it
        const first = chapterAt(start);
        const last = chapterAt(start + L);
        for (let c = first; c <= last; c++) assert.ok(!heldOutChapter(c), `${where}: touches held-out chapter ${c}`);
        for (let i = 0; i < L; i++) {
          assert.equal(t.chars[tokens[s * L + i]], TEXT[start + i], `${where}: token ${i}`);
          assert.equal(t.chars[targets[s * L + i]], TEXT[start + i + 1], `${where}: target ${i}`);
        }
      }
    }
  });

  for (const split of ['heldout', 'validation']) test(`${split} samples count characters of ${split} chapters only`, () => {
    for (const seed of [0, 7]) {
      const { tokens, targets, starts } = t.sample(256, seed, split);
      for (let s = 0; s < 256; s++) {
        const where = `text ${split} seed ${seed} sequence ${s} (start ${starts[s]})`;
        let counted = 0;
        for (let i = 0; i < L; i++) {
          const at = starts[s] + i + 1;
          assert.equal(t.chars[tokens[s * L + i]], TEXT[at - 1], `${where}: token ${i}`);
          const tg = targets[s * L + i];
          if (tg < 0) continue;
          counted++;
          assert.equal(splitOfChapter(chapterAt(at)), split, `${where}: target ${i} at ${at} is not in a ${split} chapter`);
          assert.equal(t.chars[tg], TEXT[at], `${where}: target ${i}`);
        }
        assert.ok(counted > 0, `${where}: predicts a held-out character`);
        assert.ok(targets[s * L + L - 1] >= 0, `${where}: the last position predicts a held-out character`);
      }
    }
  });

  /** position -> how often windows w count it, checking each counted target against the text. */
  function counts(w, label) {
    const hits = new Map();
    for (let s = 0; s < w.starts.length; s++) {
      for (let i = 0; i < L; i++) {
        const tg = w.targets[s * L + i];
        if (tg < 0) continue;
        const at = w.starts[s] + i + 1;
        assert.equal(t.chars[w.tokens[s * L + i]], TEXT[at - 1], `${label} window ${s} token ${i}`);
        assert.equal(t.chars[tg], TEXT[at], `${label} window ${s} target ${i}`);
        hits.set(at, (hits.get(at) ?? 0) + 1);
      }
    }
    return hits;
  }

  for (const [split, windows, chapters] of [['heldout', 'heldOutWindows', HELD], ['validation', 'validationWindows', VALID]]) {
    test(`${windows}() predicts every character of the ${split} chapters exactly once, and nothing else`, () => {
      const hits = counts(t[windows](), windows);
      const chars = chapters.reduce((s, c) => s + c.end - c.start, 0);
      assert.equal(hits.size, chars, `every ${split} character`);
      for (const [at, k] of hits) {
        assert.equal(k, 1, `position ${at} counted ${k} times`);
        assert.equal(splitOfChapter(chapterAt(at)), split, `position ${at} is not in a ${split} chapter`);
      }
    });
  }

  test('evalWindows(): fixed, 128 windows of heldOutWindows(), no character twice, both testaments', () => {
    const a = t.evalWindows();
    const b = tasks.text().evalWindows();
    assert.deepEqual(a, b, 'the same set every time');
    assert.equal(a.starts.length, 128);
    const all = t.heldOutWindows();
    const startsOfAll = new Set(all.starts);
    const hits = counts(a, 'evalWindows');
    for (const [at, k] of hits) {
      assert.equal(k, 1, `position ${at} counted ${k} times`);
      assert.equal(splitOfChapter(chapterAt(at)), 'heldout', `position ${at} is not in a test chapter`);
    }
    for (const s of a.starts) assert.ok(startsOfAll.has(s), `window at ${s} is one of heldOutWindows()`);
    assert.ok(hits.size >= 120 * L, `${hits.size} characters evaluated`);
    const testaments = new Set([...hits.keys()].map((at) => CHAPTERS[chapterAt(at)].testament));
    assert.deepEqual([...testaments].sort(), ['NT', 'OT']);
  });

  test('tasks.text({ corpus }) from loadCorpus() is the same task; a string of your own is not the corpus', async () => {
    const corpus = await loadCorpus();
    assert.equal(corpus.text, TEXT);
    const u = tasks.text({ corpus, seqLen: 32 });
    assert.deepEqual(u.sample(8, 3), tasks.text({ seqLen: 32 }).sample(8, 3));
    assert.throws(() => tasks.text({ text: 'abcabc', corpus }), /corpus/);
    assert.throws(() => tasks.text({ corpus: { text: 'a\nb\n', index: { books: [{ name: 'X', verses: [3] }] } } }), /corpus.*verses/);
    assert.throws(() => tasks.text().encode('7'), /vocabulary/);
    assert.deepEqual(Array.from(tasks.text().encode('A\n')), [t.chars.indexOf('A'), t.chars.indexOf('\n')]);
  });
});

test('loadCorpus() fetches URLs that are not files (as in a browser) and names a file it cannot get', async () => {
  // a server on the loopback address only, serving the two data files
  const server = createServer((req, res) => {
    const name = req.url.slice(1);
    if (name !== 'kjv.txt' && name !== 'kjv-index.json') { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': name.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8' });
    res.end(readFileSync(path.join(ROOT, 'data', name)));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}/`;
  try {
    const corpus = await loadCorpus({ text: `${base}kjv.txt`, index: `${base}kjv-index.json` });
    assert.equal(corpus.text, TEXT);
    assert.deepEqual(corpus.index, INDEX);
    const t = tasks.verses({ corpus, label: 'testament' });
    assert.deepEqual(t.sample(4, 2, 'heldout'), tasks.verses({ label: 'testament' }).sample(4, 2, 'heldout'), 'the same task as the shipped corpus');
    await assert.rejects(loadCorpus({ text: `${base}missing.txt`, index: `${base}kjv-index.json` }), /missing\.txt.*404/);
    await assert.rejects(loadCorpus({ text: `${base}kjv-index.json`, index: `${base}kjv-index.json` }), /corpus.*verses/);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('tasks.verses', () => {
  const group = tasks.verses();
  const testament = tasks.verses({ label: 'testament' });
  const text = tasks.text();

  test('the same vocabulary and sequence length as tasks.text(); chance is 1 / classes', () => {
    for (const v of [group, testament]) {
      assert.equal(v.vocab, text.vocab);
      assert.deepEqual(v.chars, text.chars);
      assert.equal(v.seqLen, text.seqLen);
      assert.equal(v.causal, true);
      assert.equal(v.chance, 1 / v.classes.length);
      for (const c of v.classes) assert.equal(v.chars[c.token], c.letter, `${c.name}: its token is its letter`);
    }
    assert.equal(group.classes.length, 8);
    assert.equal(testament.classes.length, 2);
    assert.equal(group.chars[group.padding], '\n');
    assert.throws(() => tasks.verses({ label: 'book' }), /label/);
    assert.throws(() => tasks.verses({ seqLen: 1 }), /seqLen/);
  });

  test('known verses have their book\'s label (checked against the index)', () => {
    const known = [
      ['Genesis', 1, 1, 'In the beginning God created', 'Law', 'Old Testament'],
      ['John', 3, 16, 'For God so loved the world', 'Gospels and Acts', 'New Testament'],
      ['Psalms', 23, 1, 'The LORD is my shepherd', 'Poetry and wisdom', 'Old Testament'],
      ['Isaiah', 40, 1, 'Comfort ye, comfort ye my people', 'Major prophets', 'Old Testament'],
      ['Malachi', 4, 6, 'And he shall turn the heart', 'Minor prophets', 'Old Testament'],
      ['Ruth', 1, 16, 'And Ruth said, Intreat me not', 'History', 'Old Testament'],
      ['Romans', 8, 28, 'And we know that all things work together', 'Pauline epistles', 'New Testament'],
      ['Hebrews', 11, 1, 'Now faith is the substance', 'Hebrews, general epistles and Revelation', 'New Testament'],
      ['Revelation', 22, 21, 'The grace of our Lord Jesus Christ', 'Hebrews, general epistles and Revelation', 'New Testament'],
    ];
    for (const [book, ch, vs, start, g, tm] of known) {
      const line = lineOf(book, ch, vs);
      const where = `verses: ${book} ${ch}:${vs} (line ${line})`;
      assert.ok(lineText(line).startsWith(start), `${where}: the index points at "${lineText(line).slice(0, 40)}"`);
      assert.equal(GROUP_OF[book], g, `${where}: this file's own table`);
      const a = group.verse(line);
      assert.deepEqual([a.book, a.chapter, a.verse, a.text], [book, ch, vs, lineText(line)], where);
      assert.equal(group.classes[a.label].name, g, `${where}: group`);
      assert.equal(testament.classes[testament.verse(line).label].name, tm, `${where}: testament`);
      const c = CHAPTERS.findIndex((x) => x.name === book && x.number === ch);
      assert.equal(a.heldOut, heldOutChapter(c), `${where}: held out of training`);
      assert.equal(a.split, splitOfChapter(c), `${where}: split`);
    }
  });

  for (const [name, v] of [['group', group], ['testament', testament]]) {
    test(`${name}: every sequence is its verse, its label is its book's, and the splits stay apart`, () => {
      const L = v.seqLen;
      for (const split of ['train', 'validation', 'heldout']) {
        for (const seed of [1, 2]) {
          const { tokens, targets, verses, labels } = v.sample(500, seed, split);
          for (let s = 0; s < 500; s++) {
            const where = `verses(${name}) ${split} seed ${seed} sequence ${s} (verse ${verses[s]})`;
            const c = CHAPTERS.findIndex((x) => verses[s] >= x.line && verses[s] < x.line + x.verses);
            assert.equal(splitOfChapter(c), split, `${where}: chapter ${c} is in the wrong split`);
            const book = CHAPTERS[c].name;
            const expect = name === 'group' ? GROUP_OF[book] : (CHAPTERS[c].testament === 'OT' ? 'Old Testament' : 'New Testament');
            assert.equal(v.classes[labels[s]].name, expect, `${where}: ${book}`);
            const seq = Array.from(tokens.subarray(s * L, (s + 1) * L), (x) => v.chars[x]).join('');
            const verse = lineText(verses[s]);
            const shown = verse.length >= L ? verse.slice(0, L) : '\n'.repeat(L - verse.length) + verse;
            assert.equal(seq, shown, `${where}: tokens`);
            for (let i = 0; i < L - 1; i++) assert.equal(targets[s * L + i], -1, `${where}: target ${i}`);
            assert.equal(targets[s * L + L - 1], v.classes[labels[s]].token, `${where}: the last target is the class`);
            assert.equal(v.describe(tokens, s), verse.slice(0, L), `${where}: describe`);
          }
        }
      }
    });

    test(`${name}: classes are balanced and sampling is deterministic`, () => {
      const n = 8000;
      const { labels } = v.sample(n, 5, 'train');
      const k = v.classes.length;
      const tally = new Array(k).fill(0);
      for (const x of labels) tally[x]++;
      const p = 1 / k;
      const sd = Math.sqrt(n * p * (1 - p));
      for (let c = 0; c < k; c++) {
        assert.ok(Math.abs(tally[c] - n * p) < 5 * sd, `verses(${name}) seed 5: class ${v.classes[c].name} drawn ${tally[c]} of ${n}`);
      }
      assert.deepEqual(v.sample(16, 9, 'heldout'), v.sample(16, 9, 'heldout'));
    });

    test(`${name}: allVerses() holds every verse of a split once, with its label`, () => {
      for (const split of ['heldout', 'validation']) {
        const all = v.allVerses(split);
        const expected = CHAPTERS.flatMap((c, ci) => (splitOfChapter(ci) === split ? Array.from({ length: c.verses }, (_, k) => c.line + k) : []));
        assert.deepEqual([...all.verses].sort((a, b) => a - b), expected, `verses(${name}).allVerses('${split}'): every verse once`);
        for (let s = 0; s < all.verses.length; s += 97) {
          assert.equal(all.targets[(s + 1) * v.seqLen - 1], v.classes[all.labels[s]].token, `allVerses('${split}') sequence ${s}: target`);
          assert.equal(all.labels[s], v.verse(all.verses[s]).label, `allVerses('${split}') sequence ${s}: label`);
        }
      }
      assert.throws(() => v.allVerses('train'), /split/);
    });
  }
});

const { init } = await binding();
const lab = await init({ threads: 1 });

describe('train() on the corpus', () => {
  test('evalBits is evalLoss / ln 2 in every history entry and the final result; the set is evalWindows()', async () => {
    const task = tasks.text({ seqLen: 16 });
    const model = lab.model({ variant: 'softmax', vocab: task.vocab, seqLen: 16, dModel: 8, heads: 2, layers: 1, dFF: 16, causal: true, seed: 3 });
    const res = await train(model, task, { steps: 6, batch: 4, lr: 3e-3, evalEvery: 2, seed: 1 });
    assert.equal(res.history.length, 3);
    for (const h of res.history) assert.equal(h.evalBits, h.evalLoss / Math.LN2, `text seed 1, step ${h.step}`);
    assert.equal(res.final.evalBits, res.final.evalLoss / Math.LN2);
    const ev = task.evalWindows();
    assert.equal(model.evaluate(ev.tokens, ev.targets).loss, res.final.evalLoss, 'train() evaluated evalWindows()');
    // every held-out character, in batches: the same loss as one evaluate() of them all, up to rounding
    const full = evaluateHeldOut(model, task, { batch: 1000 });
    assert.equal(full.counted, task.corpus.heldOutCharacters);
    assert.equal(full.bits, full.loss / Math.LN2);
    const small = evaluateHeldOut(model, task, { batch: 333 });
    assert.ok(Math.abs(small.loss - full.loss) < 1e-5 * full.loss, `batching changes the mean: ${small.loss} vs ${full.loss}`);
    // full context: stride seqLen is the windowed set itself (the same windows, so the same loss);
    // a smaller stride scores the same characters, each after more context
    const same = evaluateHeldOut(model, task, { batch: 1000, stride: 16 });
    assert.equal(same.counted, full.counted);
    assert.ok(Math.abs(same.loss - full.loss) < 1e-6 * full.loss, `stride seqLen: ${same.loss} vs ${full.loss}`);
    const strided = evaluateHeldOut(model, task, { batch: 1000, stride: 4 });
    assert.equal(strided.counted, task.corpus.heldOutCharacters, 'stride 4: every test character once');
    assert.ok(Number.isFinite(strided.loss) && strided.loss > 0);
    assert.throws(() => evaluateHeldOut(model, tasks.copy(), { stride: 4 }), (e) => e.code === 'VALUE' && /strideWindows/.test(e.message));
    assert.throws(() => evaluateHeldOut(model, task, { stride: 0 }), /stride/);
    model.dispose();
  });

  test('a string of your own is still evaluated on every held-out character', async () => {
    const task = tasks.text({ text: 'the cat sat on the mat and the dog sat on the log', seqLen: 5 });
    const model = lab.model({ variant: 'softmax', vocab: task.vocab, seqLen: 5, dModel: 8, heads: 2, layers: 1, dFF: 16, causal: true, seed: 3 });
    const res = await train(model, task, { steps: 2, batch: 4, evalEvery: 2 });
    const all = task.heldOutWindows();
    assert.equal(model.evaluate(all.tokens, all.targets).loss, res.final.evalLoss);
    assert.equal(res.final.evalBits, res.final.evalLoss / Math.LN2);
    model.dispose();
  });
});
