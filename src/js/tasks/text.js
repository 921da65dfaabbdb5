// tasks/text.js — the text task of tasks.js: next-character prediction on a string of your own
// or on the corpus (its parse and split: corpus-parse.js). A plain ES module: no DOM, no Node
// imports, no work at import time. In Node the shipped corpus is read on first use through
// process.getBuiltinModule (bundlers never see an import).

import { fail, checkInt, checkKnown, sampler, randInt, checkSequence } from './args.js';
import { HELD_OUT_EVERY, prepareCorpus, shipped } from './corpus-parse.js';
import { DEFAULTS } from './defaults.js';

// text: next-character prediction on a string of your own (opts.text), or, without one, on the
// corpus (the King James Bible; what it is and its split: corpus-parse.js).
//
// On a string:
// The vocabulary is the string's set of distinct characters (UTF-16 code units) sorted by code;
// token t is chars[t]. The string's character positions 0..T-1 are split once: the held-out part
// is the last 10 %, positions split..T-1 with split = T - max(1, floor(T / 10)); the rest is the
// training part.
//   'train' samples: a window of seqLen + 1 consecutive characters lying entirely inside the
//     training part (start s uniform in [0, split - seqLen - 1]); tokens = window[0..seqLen-1],
//     targets = window[1..seqLen]. No held-out character is ever read or predicted.
//   'heldout' samples: a window whose predicted characters reach into the held-out part (start s
//     uniform in [split - seqLen, T - seqLen - 1]); tokens as above (the context may come from the
//     training part), and the target is -1 at every position whose predicted character lies in
//     the training part: loss and accuracy count held-out characters only.
// sample() also returns starts: Int32Array [batch], the string position of each window's first
// token. heldOutWindows() gives a deterministic evaluation set that predicts every held-out
// character exactly once.
// Requires 2 <= seqLen <= split - 1 (at least one training window).

// A short paragraph (the text task's default before the corpus; the page's example text).
export const DEFAULT_TEXT =
  'Attention lets every token look at the others and decide what matters. A query meets each ' +
  'key, the scores become weights, and the weights mix the values into a new vector. Softmax ' +
  'makes the weights positive and makes them sum to one, so the mix is an average. Some models ' +
  'skip the queries and keys and learn the weights directly, or draw them at random and keep ' +
  'them fixed. Others drop the softmax and keep a running sum instead, so that each new token ' +
  'costs the same. Which of these choices matters is a question for measurement, not for belief.';

export function text(opts = {}) {
  checkKnown('text', opts, ['text', 'seqLen', 'corpus']);
  if (opts.text == null) return corpusText(opts);
  if (opts.corpus != null) fail('text', 'corpus', 'cannot be given with text: the task reads one or the other');
  const str = opts.text;
  if (typeof str !== 'string') fail('text', 'text', `must be a string, got ${typeof str}`);
  if (str.length === 0) fail('text', 'text', 'is empty');
  const chars = [...new Set(str.split(''))].sort((p, q) => p.charCodeAt(0) - q.charCodeAt(0));
  if (chars.length < 2) fail('text', 'text', `must contain at least 2 distinct characters, got ${chars.length}`);
  const total = str.length;
  const split = total - Math.max(1, Math.floor(total / 10));
  const seqLen = checkInt('text', 'seqLen', opts.seqLen ?? Math.min(32, split - 1), 2);
  if (seqLen > split - 1) {
    fail('text', 'seqLen', `= ${seqLen} is too long for a text of ${total} characters: a training window needs seqLen + 1 ` +
      `characters of the first ${split} (the last 10 % are held out), so seqLen must be <= ${split - 1}`);
  }
  const index = new Map(chars.map((c, i) => [c, i]));
  const ids = Int32Array.from(str.split(''), (c) => index.get(c));
  const vocab = chars.length;

  function fill(tokens, targets, starts, s, start, heldout) {
    const o = s * seqLen;
    starts[s] = start;
    for (let i = 0; i < seqLen; i++) {
      tokens[o + i] = ids[start + i];
      const at = start + i + 1;
      targets[o + i] = heldout && at < split ? -1 : ids[at];
    }
  }

  const show = (t) => (t >= 0 && t < vocab ? chars[t] : '\uFFFD');
  return {
    name: 'text',
    vocab,
    seqLen,
    causal: true,
    options: { text: str, seqLen },
    chars,
    split,
    length: total,
    defaults: { ...DEFAULTS.text },
    sample(batch, seed, which = 'train') {
      const rnd = sampler('text', batch, seed, which);
      if (which === 'validation') {
        fail('text', 'split', "'validation' does not exist for a text of your own (its last 10 % is the only held-out part); use 'train' or 'heldout'");
      }
      const tokens = new Int32Array(batch * seqLen);
      const targets = new Int32Array(batch * seqLen);
      const starts = new Int32Array(batch);
      const heldout = which === 'heldout';
      const lo = heldout ? split - seqLen : 0;
      const hi = heldout ? total - seqLen - 1 : split - seqLen - 1; // inclusive
      for (let s = 0; s < batch; s++) fill(tokens, targets, starts, s, lo + randInt(rnd, hi - lo + 1), heldout);
      return { tokens, targets, starts };
    },
    /**
     * The evaluation set: every held-out character predicted exactly once. Window s owns the
     * held-out positions split + s·seqLen .. split + (s+1)·seqLen - 1 (fewer in the last one) and
     * starts one position before the first (the last window: at T - seqLen - 1); its targets are -1
     * except at the positions it owns.
     */
    heldOutWindows() {
      const batch = Math.ceil((total - split) / seqLen);
      const tokens = new Int32Array(batch * seqLen);
      const targets = new Int32Array(batch * seqLen);
      const starts = new Int32Array(batch);
      for (let s = 0; s < batch; s++) {
        const from = split + s * seqLen;
        const to = Math.min(from + seqLen, total); // owned: from..to-1
        fill(tokens, targets, starts, s, Math.min(from - 1, total - 1 - seqLen), true);
        for (let i = 0; i < seqLen; i++) {
          const at = starts[s] + i + 1;
          if (at < from || at >= to) targets[s * seqLen + i] = -1;
        }
      }
      return { tokens, targets, starts };
    },
    describe(tokens, i) {
      return checkSequence(tokens, i, seqLen, 'text').map(show).join('');
    },
    tokenName: show,
    /** The token ids of a string of the vocabulary's characters. */
    encode(s) {
      return Int32Array.from(String(s).split(''), (c) => {
        if (!index.has(c)) throw new Error(`tasks.text.encode: character ${JSON.stringify(c)} is not in the vocabulary`);
        return index.get(c);
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// text on the corpus (vocabulary: the corpus's characters sorted by code, "\n" among them;
// seqLen 64 unless given; starts are positions in the corpus text):
//   'train' samples: a window of seqLen + 1 consecutive characters inside one run of consecutive
//     training chapters, uniform over every such window; tokens = window[0..seqLen-1], targets =
//     window[1..seqLen].
//   'heldout' (and 'validation') samples: a character p of a test (validation) chapter drawn
//     uniformly; the window starts at p - seqLen, so that its last position predicts p (its
//     context may reach back into the chapter before); the target is -1 at every position whose
//     predicted character is not in p's chapter.
//   heldOutWindows(): every test character predicted exactly once (validationWindows(): every
//     validation character, the same way). Each such chapter
//     (characters a..b-1) is cut as a string's held-out part is: window s owns a + s·seqLen ..
//     a + (s+1)·seqLen - 1 (fewer in the last one) and starts one position before the first it
//     owns (the last one of a chapter: at b - 1 - seqLen); targets -1 except where it owns
//     (3,187 windows at seqLen 64; 3,105 for validation).
//   evalWindows(): what train() evaluates on as it goes: EVAL_WINDOWS = 128 windows of
//     heldOutWindows(), evenly spaced (window floor(i · W / 128) of its W, i = 0..127), so no
//     character is counted twice and the set spans the test chapters of both testaments
//     (8,142 characters at seqLen 64). Timings, measured when the test set was all 118 held-out
//     chapters (twice today's) (dModel 64, 2 layers, 4 heads, dFF 256, seqLen 64,
//     softmax, one thread, simd build, the 2-core Xeon at load average 3 from other people's
//     jobs): one evaluation of evalWindows() takes 0.11-0.17 s (the very first 0.9 s, while the
//     model's memory grows); all of heldOutWindows() (398,939 characters, 256 windows a batch:
//     evaluateHeldOut() of train.js) takes 6.0-6.6 s (4.5-19 s in the pilots, by load), as much as
//     ~140 training steps (batch 16: 40-49 ms a step). So train()'s 20 evaluations of the subset
//     cost 3-5 % of a 1500-step run, where 20 full ones would cost more than the training.
//   For a string of your own there is no evalWindows(): train() evaluates every held-out
//   character (heldOutWindows()), as before.

const EVAL_WINDOWS = 128;

/** The first index i of a non-decreasing cumulative array with cum[i] > r. */
function bisect(cum, r) {
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cum[mid] > r) hi = mid; else lo = mid + 1;
  }
  return lo;
}

function corpusText(opts) {
  const c = prepareCorpus(opts.corpus ?? shipped('text'), 'text');
  const seqLen = checkInt('text', 'seqLen', opts.seqLen ?? 64, 2);
  const { ids, chars, runs } = c;
  const vocab = chars.length;
  if (vocab < 2) fail('text', 'corpus', `must contain at least 2 distinct characters, got ${vocab}`);
  // training windows: start s in [a, b - seqLen - 1] of a training run [a, b)
  const trainCum = [];
  let trainWindows = 0;
  for (const [a, b] of runs.train) trainCum.push(trainWindows += Math.max(0, b - a - seqLen));
  if (trainWindows === 0) fail('text', 'seqLen', `= ${seqLen} is too long: no run of training chapters holds seqLen + 1 characters`);
  // the characters p of the validation and held-out chapters (window start p - seqLen >= 0 needs
  // the first such chapter at >= seqLen)
  const held = {};
  for (const split of ['validation', 'heldout']) {
    const cum = [];
    let chars = 0;
    for (const [a, b] of runs[split]) cum.push(chars += b - a);
    if (!runs[split].length) fail('text', 'corpus', `has no ${split} chapter`);
    if (runs[split][0][0] < seqLen) {
      fail('text', 'seqLen', `= ${seqLen} is too long: the first ${split} chapter starts at character ${runs[split][0][0]}`);
    }
    held[split] = { cum, chars, windows: null };
  }
  const heldChars = held.heldout.chars;
  const trainChars = c.T - held.validation.chars - heldChars;

  // the evaluation sets: every character of the split's chapters once
  function windows(split) {
    if (held[split].windows) return held[split].windows;
    const list = [];
    for (const [a, b] of runs[split]) {
      for (let from = a; from < b; from += seqLen) list.push([Math.min(from - 1, b - 1 - seqLen), from, Math.min(from + seqLen, b)]);
    }
    held[split].windows = windowSet(list);
    return held[split].windows;
  }
  // Full context: each window owns the `stride` characters at its end, so every character of the
  // split is predicted once after at least seqLen - stride characters (the corpus's own, reaching
  // into the chapter before where the window starts a chapter), at most seqLen - 1.
  function strideWindows(split, stride) {
    const list = [];
    for (const [a, b] of runs[split]) {
      for (let from = a; from < b; from += stride) {
        const to = Math.min(from + stride, b);
        list.push([to - 1 - seqLen, from, to]);
      }
    }
    return windowSet(list);
  }
  // [start, from, to] per window: tokens from `start`, targets only at corpus positions from..to-1
  function windowSet(list) {
    const n = list.length;
    const tokens = new Int32Array(n * seqLen);
    const targets = new Int32Array(n * seqLen);
    const starts = new Int32Array(n);
    for (const [s, [start, from, to]] of list.entries()) {
      starts[s] = start;
      for (let i = 0; i < seqLen; i++) {
        tokens[s * seqLen + i] = ids[start + i];
        const at = start + i + 1;
        targets[s * seqLen + i] = at >= from && at < to ? ids[at] : -1;
      }
    }
    return { tokens, targets, starts };
  }
  const copy = (w) => ({ tokens: w.tokens.slice(), targets: w.targets.slice(), starts: w.starts.slice() });

  const show = (t) => (t >= 0 && t < vocab ? chars[t] : '\uFFFD');
  return {
    name: 'text',
    vocab,
    seqLen,
    causal: true,
    options: opts.corpus != null ? { corpus: opts.corpus, seqLen } : { seqLen },
    chars,
    length: c.T,
    /** What the corpus is and how it is split (characters, verses, chapters). */
    corpus: {
      name: c.name,
      characters: c.T,
      verses: c.verseStart.length - 1,
      chapters: c.chapters.length,
      heldOutEvery: HELD_OUT_EVERY,
      trainChapters: c.chapters.filter((ch) => ch.split === 'train').length,
      validationChapters: c.chapters.filter((ch) => ch.split === 'validation').length,
      heldOutChapters: c.chapters.filter((ch) => ch.split === 'heldout').length,
      trainCharacters: trainChars,
      validationCharacters: held.validation.chars,
      heldOutCharacters: heldChars,
    },
    /** Whether corpus position `at` lies in a chapter held out of training (validation or test). */
    isHeldOut(at) {
      return this.splitOf(at) !== 'train' && this.splitOf(at) !== null;
    },
    /** The split of the chapter of corpus position `at` ('train', 'validation', 'heldout'), or null. */
    splitOf(at) {
      if (!Number.isInteger(at) || at < 0 || at >= c.T) return null;
      return c.chapters[c.verseChapter[bisect(c.verseStart, at) - 1]].split;
    },
    defaults: { ...DEFAULTS.text },
    sample(batch, seed, which = 'train') {
      const rnd = sampler('text', batch, seed, which);
      const tokens = new Int32Array(batch * seqLen);
      const targets = new Int32Array(batch * seqLen);
      const starts = new Int32Array(batch);
      const from = which === 'train' ? null : held[which];
      for (let s = 0; s < batch; s++) {
        const o = s * seqLen;
        let start;
        let lo = 0; // predicted characters before lo get no target
        if (from) {
          const r = randInt(rnd, from.chars);
          const k = bisect(from.cum, r);
          const [a] = runs[which][k];
          const p = a + r - (k ? from.cum[k - 1] : 0);
          start = p - seqLen;
          lo = a;
        } else {
          const r = randInt(rnd, trainWindows);
          const k = bisect(trainCum, r);
          start = runs.train[k][0] + r - (k ? trainCum[k - 1] : 0);
        }
        starts[s] = start;
        for (let i = 0; i < seqLen; i++) {
          tokens[o + i] = ids[start + i];
          targets[o + i] = start + i + 1 >= lo ? ids[start + i + 1] : -1;
        }
      }
      return { tokens, targets, starts };
    },
    /** Every held-out (test) character predicted exactly once (see above). */
    heldOutWindows: () => copy(windows('heldout')),
    /** Every validation character predicted exactly once, as heldOutWindows() does for the test chapters. */
    validationWindows: () => copy(windows('validation')),
    /**
     * Every character of the split ('heldout' or 'validation') predicted exactly once with full
     * context: window s owns its last `stride` positions (1 … seqLen), so each prediction sees at
     * least seqLen − stride characters before it (heldOutWindows() is stride seqLen with a window
     * starting one character before the first it owns). seqLen / stride times the windows.
     */
    strideWindows(stride, split = 'heldout') {
      if (!Number.isInteger(stride) || stride < 1 || stride > seqLen) fail('text', 'stride', `must be a whole number from 1 to seqLen (${seqLen}), got ${String(stride)}`);
      if (split !== 'heldout' && split !== 'validation') fail('text', 'split', `must be 'heldout' or 'validation', got ${String(split)}`);
      return strideWindows(split, stride);
    },
    /** EVAL_WINDOWS evenly spaced windows of heldOutWindows(): train()'s evaluation set. */
    evalWindows() {
      const w = windows('heldout');
      const n = w.starts.length;
      const k = Math.min(EVAL_WINDOWS, n);
      const tokens = new Int32Array(k * seqLen);
      const targets = new Int32Array(k * seqLen);
      const starts = new Int32Array(k);
      for (let i = 0; i < k; i++) {
        const j = Math.floor((i * n) / k);
        tokens.set(w.tokens.subarray(j * seqLen, (j + 1) * seqLen), i * seqLen);
        targets.set(w.targets.subarray(j * seqLen, (j + 1) * seqLen), i * seqLen);
        starts[i] = w.starts[j];
      }
      return { tokens, targets, starts };
    },
    describe(tokens, i) {
      return checkSequence(tokens, i, seqLen, 'text').map(show).join('');
    },
    tokenName: show,
    /** The token ids of a string of the vocabulary's characters. */
    encode(s) {
      return Int32Array.from(String(s).split(''), (ch) => {
        const id = ch.charCodeAt(0) < 65536 ? c.idOf[ch.charCodeAt(0)] : -1;
        if (id < 0) throw new Error(`tasks.text.encode: character ${JSON.stringify(ch)} is not in the vocabulary`);
        return id;
      });
    },
  };
}
