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
// for the corpus and verses, disjoint sets of chapters (see the corpus below).
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

import { fail, checkInt, checkKnown, SPLITS, sampler, randInt, choose, checkSequence } from './task-args.js';
import { CORPUS_FILES, HELD_OUT_EVERY, NEWLINE, chapterSplit, prepareCorpus, shipped, shippedCorpus } from './corpus-parse.js';

// The corpus's parse (corpus-parse.js), as its importers have always found it here.
export { CORPUS_FILES, HELD_OUT_EVERY, chapterSplit, prepareCorpus, shippedCorpus };

// ---------------------------------------------------------------------------------------------
// Defaults: chosen by pilot runs of softmax alone (the goal: >= 90 % held-out accuracy within 60 s of
// one-thread training; text: <= 2.4 held-out bits per character within 3 minutes), never by how
// another variant does; the experiments (scripts/experiments.mjs) train them all with these. The
// pilot runs, their settings and results, task by task: experiments/pilots/defaults.md. evalBatch
// (256 held-out sequences) and evalEvery (steps / 20) are train()'s own defaults.

const DEFAULTS = {
  recall: { dModel: 64, heads: 2, layers: 2, dFF: 256, steps: 2000, batch: 32, lr: 3e-4, warmup: 1000 },
  copy: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 400, batch: 32, lr: 3e-3, warmup: 40 },
  reverse: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 400, batch: 32, lr: 3e-3, warmup: 40 },
  sort: { dModel: 64, heads: 2, layers: 2, dFF: 128, steps: 800, batch: 32, lr: 3e-3, warmup: 80 },
  text: { dModel: 64, heads: 4, layers: 2, dFF: 256, steps: 1500, batch: 16, lr: 5e-3, warmup: 100 },
  verses: { dModel: 64, heads: 4, layers: 2, dFF: 256, steps: 1000, batch: 32, lr: 3e-3, warmup: 50 },
};

// ---------------------------------------------------------------------------------------------
// recall: multi-query associative recall (MQAR; Zoology, Arora et al. 2023).
//
// Vocabulary (vocab V): token 0 is the filler "·"; keys are 1..K with K = floor((V - 1) / 2);
// values are K+1..V-1 (V - 1 - K >= K of them). Keys and values never share a token.
// Every sequence of seqLen tokens, with P = pairs and Q = queries, starts with
//   positions 0 .. 2P-1       the pairs: k_1 v_1 k_2 v_2 ... k_P v_P, the P keys drawn without
//                             replacement from 1..K and the P values without replacement from
//                             K+1..V-1 (as in Zoology: distinct keys, distinct values);
// then the query region, positions 2P .. seqLen-1, which asks Q distinct keys of the P pairs
// (drawn without replacement, in random order: each key is asked at most once). Two layouts:
//   layout 'sparse':  Q of the region's positions, chosen at random, hold a query key; the others
//                     hold the filler 0. Requires 1 <= Q <= P and seqLen >= 2P + Q; seqLen
//                     defaults to 2P + Q (no filler: the queries back to back), Q to P.
//   layout 'dense':   no filler: the region is the queries back to back, each key followed by its
//                     value, q_1 a_1 q_2 a_2 ... (query j = 1..Q: its key at 2P + 2j - 2, its
//                     value at 2P + 2j - 1; the last value is dropped when seqLen is odd). So
//                     Q = ceil((seqLen - 2P) / 2), and it requires 2P + 1 <= seqLen <= 4P (Q <= P);
//                     seqLen defaults to 2P + 2Q, Q to P, and a queries option given with seqLen
//                     must equal ceil((seqLen - 2P) / 2).
// Targets: at a query key, the value paired with it; -1 everywhere else (no loss on the pairs,
// the filler, nor the values of the dense query region). Every pair precedes every query, so a
// causal model sees the answer. In the dense layout a query's value is the input one position
// after its key (teacher forcing, as in copy): the model predicting at the key cannot see it, and
// later queries can read it, so keys are never asked twice — a repeated key could copy its
// answer from the earlier query instead of looking it up in the pairs. (Without repeats, the
// values already shown do tell a model which values remain: one that skips the lookup and
// guesses among the remaining ones scores (1/Q)·sum_{j=1..Q} 1/(P - j + 1), 34 % at
// P = Q = 8, against 1/P for the sparse layout. Zoology's MQAR shows values the same way.)
// Requires K >= P (pairs fit the vocab) in both layouts. Defaults: 8 pairs, vocab 64 (31 keys, 32
// values), layout 'sparse', 8 queries, seqLen 24 (the pilots behind them: DEFAULTS above).

function recall(opts = {}) {
  checkKnown('recall', opts, ['pairs', 'seqLen', 'vocab', 'queries', 'layout']);
  const layout = opts.layout ?? 'sparse';
  if (layout !== 'sparse' && layout !== 'dense') fail('recall', 'layout', `must be 'sparse' or 'dense', got ${String(layout)}`);
  const pairs = checkInt('recall', 'pairs', opts.pairs ?? 8, 1);
  const vocab = checkInt('recall', 'vocab', opts.vocab ?? 64, 3, 1 << 24);
  const keys = (vocab - 1) >> 1;
  if (pairs > keys) {
    fail('recall', 'pairs', `= ${pairs} is too many for vocab ${vocab}: it has ${keys} keys (tokens 1..${keys}); ` +
      `vocab must be >= ${2 * pairs + 1}`);
  }
  let queries, seqLen;
  if (layout === 'sparse') {
    queries = checkInt('recall', 'queries', opts.queries ?? pairs, 1, pairs);
    seqLen = checkInt('recall', 'seqLen', opts.seqLen ?? 2 * pairs + queries, 1);
    if (seqLen < 2 * pairs + queries) {
      fail('recall', 'seqLen', `= ${seqLen} is too short for ${pairs} pairs and ${queries} queries: it must be >= 2·pairs + queries = ${2 * pairs + queries}`);
    }
  } else {
    if (opts.queries != null) checkInt('recall', 'queries', opts.queries, 1, pairs);
    seqLen = checkInt('recall', 'seqLen', opts.seqLen ?? 2 * pairs + 2 * (opts.queries ?? pairs), 1);
    if (seqLen < 2 * pairs + 1 || seqLen > 4 * pairs) {
      fail('recall', 'seqLen', `= ${seqLen} does not fit the dense layout with ${pairs} pairs: it must be in ` +
        `[2·pairs + 1, 4·pairs] = [${2 * pairs + 1}, ${4 * pairs}] (each key asked at most once)`);
    }
    queries = Math.ceil((seqLen - 2 * pairs) / 2);
    if (opts.queries != null && opts.queries !== queries) {
      fail('recall', 'queries', `= ${opts.queries} does not match seqLen ${seqLen} in the dense layout: ` +
        `${pairs} pairs leave room for ceil((seqLen - 2·pairs) / 2) = ${queries} queries`);
    }
  }
  const values = vocab - 1 - keys;
  const region = seqLen - 2 * pairs;
  const tokenName = (t) => (t === 0 ? '·' : t <= keys ? `k${t}` : t < vocab ? `v${t - keys}` : `?${t}`);
  return {
    name: 'recall',
    vocab,
    seqLen,
    causal: true,
    options: { pairs, seqLen, vocab, queries, layout },
    layout: { filler: 0, keys: [1, keys], values: [keys + 1, vocab - 1], pairsEnd: 2 * pairs },
    defaults: { ...DEFAULTS.recall },
    sample(batch, seed, split = 'train') {
      const rnd = sampler('recall', batch, seed, split);
      const tokens = new Int32Array(batch * seqLen);
      const targets = new Int32Array(batch * seqLen).fill(-1);
      for (let s = 0; s < batch; s++) {
        const o = s * seqLen;
        const ks = choose(rnd, keys, pairs).map((k) => k + 1);
        const vs = choose(rnd, values, pairs).map((v) => v + keys + 1);
        for (let p = 0; p < pairs; p++) {
          tokens[o + 2 * p] = ks[p];
          tokens[o + 2 * p + 1] = vs[p];
        }
        const asked = choose(rnd, pairs, queries);
        if (layout === 'dense') {
          for (let j = 0; j < queries; j++) {
            const t = o + 2 * pairs + 2 * j;
            tokens[t] = ks[asked[j]];
            targets[t] = vs[asked[j]];
            if (2 * pairs + 2 * j + 1 < seqLen) tokens[t + 1] = vs[asked[j]];
          }
          continue;
        }
        const where = choose(rnd, region, queries);
        for (let j = 0; j < queries; j++) {
          const t = o + 2 * pairs + where[j];
          tokens[t] = ks[asked[j]];
          targets[t] = vs[asked[j]];
        }
      }
      return { tokens, targets };
    },
    describe(tokens, i) {
      const seq = checkSequence(tokens, i, seqLen, 'recall');
      const head = [];
      for (let p = 0; p < pairs; p++) head.push(`${tokenName(seq[2 * p])}:${tokenName(seq[2 * p + 1])}`);
      return `${head.join(' ')} | ${seq.slice(2 * pairs).map(tokenName).join(' ')}`;
    },
    tokenName,
  };
}

// ---------------------------------------------------------------------------------------------
// copy, reverse, sort: a sequence, a separator, then its transformation.
//
// Vocabulary (vocab V): token 0 is the separator "|"; the content tokens are 1..V-1. seqLen must
// be even; N = seqLen / 2. With x_0..x_{N-1} the content (uniform over 1..V-1, repeats allowed)
// and y = f(x) (copy: y = x; reverse: y_i = x_{N-1-i}; sort: y = x sorted ascending), the full
// string is x_0 .. x_{N-1} | y_0 .. y_{N-1} (2N + 1 tokens) and, next-token style, the model reads
// its first 2N tokens and predicts the next one at each position:
//   tokens:  positions 0..N-1 = x, position N = | , positions N+1..2N-1 = y_0..y_{N-2}
//   targets: -1 at positions 0..N-1; at position N + i (i = 0..N-1) the target is y_i.
// So a causal model outputs y_0 at the separator and y_{i+1} where it reads y_i. copy and reverse
// are position-based (the target at N + i is x_i resp. x_{N-1-i}, a fixed earlier position);
// sort is content-based (the next larger remaining token of x).

const TRANSFORMS = {
  copy: (x) => x.slice(),
  reverse: (x) => x.slice().reverse(),
  sort: (x) => x.slice().sort((p, q) => p - q),
};

function sequenceTask(name) {
  const f = TRANSFORMS[name];
  return function task(opts = {}) {
    checkKnown(name, opts, ['seqLen', 'vocab']);
    const seqLen = checkInt(name, 'seqLen', opts.seqLen ?? 32, 2);
    if (seqLen % 2 !== 0) fail(name, 'seqLen', `must be even (N content tokens, the separator, N - 1 answer tokens), got ${seqLen}`);
    const vocab = checkInt(name, 'vocab', opts.vocab ?? 16, 3, 1 << 24);
    const half = seqLen / 2;
    const tokenName = (t) => (t === 0 ? '|' : String(t));
    return {
      name,
      vocab,
      seqLen,
      causal: true,
      options: { seqLen, vocab },
      layout: { separator: 0, content: [1, vocab - 1], half },
      defaults: { ...DEFAULTS[name] },
      /** y = f(x) for a content array x (the rule the targets follow). */
      transform: (x) => f(Array.from(x)),
      sample(batch, seed, split = 'train') {
        const rnd = sampler(name, batch, seed, split);
        const tokens = new Int32Array(batch * seqLen);
        const targets = new Int32Array(batch * seqLen).fill(-1);
        for (let s = 0; s < batch; s++) {
          const o = s * seqLen;
          const x = Array.from({ length: half }, () => 1 + randInt(rnd, vocab - 1));
          const y = f(x);
          for (let i = 0; i < half; i++) tokens[o + i] = x[i];
          tokens[o + half] = 0;
          for (let i = 0; i < half - 1; i++) tokens[o + half + 1 + i] = y[i];
          for (let i = 0; i < half; i++) targets[o + half + i] = y[i];
        }
        return { tokens, targets };
      },
      describe(tokens, i) {
        const seq = checkSequence(tokens, i, seqLen, name);
        return seq.map(tokenName).join(' ');
      },
      tokenName,
    };
  };
}

// ---------------------------------------------------------------------------------------------
// text: next-character prediction on a string of your own (opts.text), or, without one, on the
// corpus (the King James Bible; see "The corpus" below, which also gives its split).
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

function text(opts = {}) {
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
// verses below. The other 1,071 chapters are the training chapters. No sample of the 'train' split
// reads or predicts a character of a validation or test chapter.
//
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

// ---------------------------------------------------------------------------------------------
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
// from the held-out chapters only (the corpus's split above). sample() also returns verses:
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

function verses(opts = {}) {
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
