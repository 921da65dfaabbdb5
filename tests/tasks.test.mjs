// The training tasks (src/js/tasks.js): determinism, layouts, solvability, argument checks, the
// validation split. (The float64 reference model: tests/reference-model.test.mjs.)

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { tasks, DEFAULT_TEXT, TASK_NAMES, TASK_KNOBS } from '../src/js/tasks.js';

const DEFAULT_KEYS = ['dModel', 'heads', 'layers', 'dFF', 'steps', 'batch', 'lr', 'warmup'];

/** Small instances of every task (and the defaults). */
const INSTANCES = [
  () => tasks.recall(),
  () => tasks.recall({ pairs: 3, vocab: 9, seqLen: 10, queries: 2, layout: 'sparse' }),
  () => tasks.recall({ pairs: 1, vocab: 5, seqLen: 4, queries: 1, layout: 'sparse' }),
  () => tasks.recall({ pairs: 3, vocab: 9, seqLen: 11, layout: 'dense' }),
  () => tasks.recall({ pairs: 1, vocab: 5, seqLen: 4, layout: 'dense' }),
  () => tasks.copy(),
  () => tasks.copy({ seqLen: 6, vocab: 3 }),
  () => tasks.reverse(),
  () => tasks.reverse({ seqLen: 10, vocab: 5 }),
  () => tasks.sort(),
  () => tasks.sort({ seqLen: 2, vocab: 40 }),
  () => tasks.text(),
  () => tasks.text({ text: DEFAULT_TEXT }),
  () => tasks.text({ text: 'abcabcabdabcabcabdabcabcabd', seqLen: 2 }),
  () => tasks.verses(),
  () => tasks.verses({ label: 'testament', seqLen: 16 }),
];

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

describe('tasks: every task', () => {
  test('the export holds exactly the tasks of TASK_NAMES, each with numeric defaults and its knobs among its options', () => {
    assert.deepEqual(Object.keys(tasks).sort(), [...TASK_NAMES].sort());
    assert.deepEqual(Object.keys(TASK_KNOBS).sort(), [...TASK_NAMES].sort(), 'TASK_KNOBS has a line for every task');
    for (const name of TASK_NAMES) {
      const t = tasks[name]();
      assert.equal(t.name, name);
      for (const k of TASK_KNOBS[name]) assert.ok(Object.hasOwn(t.options, k), `${name}: knob ${k} is one of its options`);
      assert.equal(typeof t.causal, 'boolean');
      assert.deepEqual(Object.keys(t.defaults).sort(), [...DEFAULT_KEYS].sort(), name);
      for (const k of DEFAULT_KEYS) assert.ok(Number.isFinite(t.defaults[k]) && t.defaults[k] > 0, `${name}.defaults.${k}`);
      assert.equal(t.defaults.dModel % t.defaults.heads, 0, `${name}: heads divide dModel`);
    }
  });

  for (const make of INSTANCES) {
    const t = make();
    const label = `${t.name} ${JSON.stringify({ ...t.options, text: undefined })}`;
    test(`${label}: deterministic for a seed, shapes and ranges`, () => {
      for (const split of ['train', 'heldout']) {
        const a = t.sample(5, 7, split);
        const b = t.sample(5, 7, split);
        const c = t.sample(5, 8, split);
        assert.ok(a.tokens instanceof Int32Array && a.targets instanceof Int32Array);
        assert.equal(a.tokens.length, 5 * t.seqLen);
        assert.equal(a.targets.length, 5 * t.seqLen);
        assert.ok(same(a.tokens, b.tokens) && same(a.targets, b.targets), `${split}: same seed, same arrays`);
        // tiny instances have few distinct sequences; five of them all equal is still unlikely
        assert.ok(!(same(a.tokens, c.tokens) && same(a.targets, c.targets)), `${split}: another seed, other arrays`);
        for (const x of a.tokens) assert.ok(x >= 0 && x < t.vocab, `token ${x} in [0, ${t.vocab})`);
        for (const x of a.targets) assert.ok(x >= -1 && x < t.vocab, `target ${x} in [-1, ${t.vocab})`);
        for (let s = 0; s < 5; s++) {
          assert.ok(a.targets.subarray(s * t.seqLen, (s + 1) * t.seqLen).some((x) => x >= 0), 'each sequence has a target');
          assert.equal(typeof t.describe(a.tokens, s), 'string');
        }
      }
      const tr = t.sample(5, 7, 'train');
      const ho = t.sample(5, 7, 'heldout');
      assert.ok(!(same(tr.tokens, ho.tokens) && same(tr.targets, ho.targets)), 'train and heldout are different streams');
      // a prefix of a larger batch is not required, but a batch of 1 must be valid
      assert.equal(t.sample(1, 0).tokens.length, t.seqLen);
    });
  }

  test('sample() rejects bad batch, seed and split, naming them', () => {
    for (const name of TASK_NAMES) {
      const t = tasks[name]();
      assert.throws(() => t.sample(0, 1), /batch/);
      assert.throws(() => t.sample(1.5, 1), /batch/);
      assert.throws(() => t.sample(2, -1), /seed/);
      assert.throws(() => t.sample(2, 2 ** 32), /seed/);
      assert.throws(() => t.sample(2, 0.5), /seed/);
      assert.throws(() => t.sample(2, 1, 'test'), /split/);
      assert.throws(() => t.describe(t.sample(2, 1).tokens, 2), /\bi\b/);
    }
  });

  test('unknown options are rejected by name', () => {
    for (const name of TASK_NAMES) assert.throws(() => tasks[name]({ seqlen: 8 }), /seqlen/);
  });
});

describe('tasks.recall', () => {
  /**
   * The lookup solver, written from the layout and independent of the sampling code: read the
   * pairs at 0..2P-1, then answer every key token of the query region with its pair's value.
   */
  function solve(t, tokens, s) {
    const { pairs } = t.options;
    const [k0, k1] = t.layout.keys;
    const seq = tokens.subarray(s * t.seqLen, (s + 1) * t.seqLen);
    const map = new Map();
    for (let p = 0; p < pairs; p++) map.set(seq[2 * p], seq[2 * p + 1]);
    const answer = new Int32Array(t.seqLen).fill(-1);
    for (let i = 2 * pairs; i < t.seqLen; i++) {
      if (seq[i] >= k0 && seq[i] <= k1) {
        assert.ok(map.has(seq[i]), `the key ${seq[i]} asked at ${i} is one of the pairs`);
        answer[i] = map.get(seq[i]);
      }
    }
    return answer;
  }

  /** A small FNV-1a of the arrays (two bytes per value): pins what sample() draws. */
  function fnv(...arrays) {
    let h = 0x811c9dc5;
    for (const a of arrays) {
      for (const x of a) {
        h ^= x & 0xff; h = Math.imul(h, 16777619);
        h ^= (x >>> 8) & 0xff; h = Math.imul(h, 16777619);
      }
    }
    return (h >>> 0).toString(16);
  }

  const CASES = [
    { layout: 'sparse' },
    { pairs: 3, vocab: 9, seqLen: 10, queries: 2, layout: 'sparse' },
    { pairs: 16, vocab: 64, seqLen: 64, queries: 16, layout: 'sparse' },
    { pairs: 4, vocab: 64, seqLen: 24, layout: 'sparse' },
    {},
    { layout: 'dense' },
    { pairs: 3, vocab: 9, seqLen: 11, layout: 'dense' },
    { pairs: 4, vocab: 64, seqLen: 16, layout: 'dense' },
    { pairs: 8, vocab: 17, seqLen: 17, layout: 'dense' },
    { pairs: 16, vocab: 64, seqLen: 64, layout: 'dense' },
  ];
  for (const opts of CASES) {
    test(`the targets are what a lookup of the pairs gives ${JSON.stringify(opts)}`, () => {
      const t = tasks.recall(opts);
      const { pairs, queries } = t.options;
      const [k0, k1] = t.layout.keys;
      const [v0, v1] = t.layout.values;
      assert.ok(k1 < v0, 'keys and values are disjoint token ranges');
      assert.equal(v1, t.vocab - 1);
      for (const split of ['train', 'heldout']) {
        const { tokens, targets } = t.sample(50, 3, split);
        for (let s = 0; s < 50; s++) {
          const seq = tokens.subarray(s * t.seqLen, (s + 1) * t.seqLen);
          const tg = targets.subarray(s * t.seqLen, (s + 1) * t.seqLen);
          const keys = new Set();
          const vals = new Set();
          for (let p = 0; p < pairs; p++) {
            assert.ok(seq[2 * p] >= k0 && seq[2 * p] <= k1, 'a key at an even position');
            assert.ok(seq[2 * p + 1] >= v0 && seq[2 * p + 1] <= v1, 'a value after it');
            keys.add(seq[2 * p]);
            vals.add(seq[2 * p + 1]);
          }
          assert.equal(keys.size, pairs, 'distinct keys');
          assert.equal(vals.size, pairs, 'distinct values');
          assert.deepEqual(Array.from(solve(t, tokens, s)), Array.from(tg), 'the lookup solves it');
          const asked = [];
          for (let i = 2 * pairs; i < t.seqLen; i++) if (seq[i] >= k0 && seq[i] <= k1) asked.push(seq[i]);
          assert.equal(asked.length, queries, 'the number of queries');
          assert.equal(new Set(asked).size, queries, 'each key asked at most once');
          for (let i = 0; i < 2 * pairs; i++) assert.equal(tg[i], -1, 'no loss on the pairs');
          for (let i = 2 * pairs; i < t.seqLen; i++) {
            if (tg[i] < 0) continue;
            // a causal model predicting at i reads 0..i: the answer is in the pairs, and nowhere
            // in the query region up to i (no earlier query gives it away)
            assert.ok(!Array.from(seq.subarray(2 * pairs, i + 1)).includes(tg[i]), `the answer at ${i} is not in the query region before it`);
          }
        }
      }
    });
  }

  test('the sparse layout: queries amid filler, at varying positions of the query region', () => {
    const t = tasks.recall({ pairs: 4, vocab: 20, seqLen: 20, queries: 2, layout: 'sparse' });
    assert.equal(t.options.layout, 'sparse');
    const { tokens, targets } = t.sample(200, 1);
    const seen = new Set();
    for (let i = 0; i < tokens.length; i++) {
      if (i % t.seqLen < 8) continue;
      if (tokens[i] !== 0) seen.add(i % t.seqLen);
      assert.equal(targets[i] >= 0, tokens[i] !== 0, 'a target exactly where a query key is');
    }
    assert.equal(seen.size, 12, 'every position of the query region holds a query sometimes');
  });

  test('the sparse layout draws what it drew before the dense layout existed (same options, same seeds)', () => {
    // pinned from the sampling code of commit 12803fd, which had only this layout
    const pins = [
      [{}, 'ad78ba9', 'ab27490d'],
      [{ pairs: 4, vocab: 64, seqLen: 24 }, '7d9c5321', 'b27a223d'],
      [{ pairs: 3, vocab: 9, seqLen: 10, queries: 2 }, '9edee420', 'a3b42c8'],
    ];
    for (const [opts, train, heldout] of pins) {
      // the old defaults of pairs, vocab and seqLen, stated, so that the pin outlives new defaults
      const t = tasks.recall({ pairs: 8, vocab: 32, seqLen: 32, ...opts, layout: 'sparse' });
      for (const [split, pin] of [['train', train], ['heldout', heldout]]) {
        const r = t.sample(64, 12345, split);
        assert.equal(fnv(r.tokens, r.targets), pin, `${JSON.stringify(opts)} ${split}`);
      }
    }
    const r = tasks.recall({ pairs: 3, vocab: 9, seqLen: 10, queries: 2, layout: 'sparse' }).sample(2, 5);
    assert.deepEqual(Array.from(r.tokens), [1, 7, 2, 5, 4, 8, 2, 0, 0, 1, 4, 8, 1, 6, 3, 7, 3, 0, 0, 1]);
    assert.deepEqual(Array.from(r.targets), [-1, -1, -1, -1, -1, -1, 5, -1, -1, 7, -1, -1, -1, -1, -1, -1, 7, -1, -1, 6]);
  });

  test('the dense layout: key, value, key, value ... after the pairs; targets at the keys only', () => {
    for (const [opts, queries] of [[{ pairs: 4, vocab: 20, seqLen: 16 }, 4], [{ pairs: 4, vocab: 20, seqLen: 15 }, 4],
      [{ pairs: 4, vocab: 20, seqLen: 9 }, 1], [{ pairs: 4, vocab: 20, seqLen: 12 }, 2], [{ pairs: 5, vocab: 11 }, 5]]) {
      const t = tasks.recall({ ...opts, layout: 'dense' });
      assert.equal(t.options.layout, 'dense');
      assert.equal(t.options.queries, queries, `${JSON.stringify(opts)}: ceil((seqLen - 2·pairs) / 2) queries`);
      if (opts.seqLen === undefined) assert.equal(t.seqLen, 4 * opts.pairs, 'seqLen defaults to 2·pairs + 2·queries');
      const P = t.options.pairs;
      const [k0, k1] = t.layout.keys;
      const [v0, v1] = t.layout.values;
      const { tokens, targets } = t.sample(40, 9, 'heldout');
      for (let s = 0; s < 40; s++) {
        const seq = tokens.subarray(s * t.seqLen, (s + 1) * t.seqLen);
        const tg = targets.subarray(s * t.seqLen, (s + 1) * t.seqLen);
        assert.ok(!seq.includes(0), 'no filler');
        for (let i = 2 * P; i < t.seqLen; i++) {
          if ((i - 2 * P) % 2 === 0) {
            assert.ok(seq[i] >= k0 && seq[i] <= k1, `a query key at ${i}`);
            assert.ok(tg[i] >= v0 && tg[i] <= v1, `a target at ${i}`);
            if (i + 1 < t.seqLen) assert.equal(seq[i + 1], tg[i], 'the value follows its key (teacher forcing)');
          } else {
            assert.ok(seq[i] >= v0 && seq[i] <= v1, `a value at ${i}`);
            assert.equal(tg[i], -1, 'no target on the values of the query region');
          }
        }
      }
    }
  });

  test('the dense layout asks every key of the pairs equally often, in every order', () => {
    const t = tasks.recall({ pairs: 4, vocab: 20, seqLen: 12, layout: 'dense' }); // 2 of the 4 keys per sequence
    const { tokens } = t.sample(4000, 2);
    const count = [0, 0, 0, 0];
    for (let s = 0; s < 4000; s++) {
      const seq = tokens.subarray(s * 12, (s + 1) * 12);
      for (const i of [8, 10]) for (let p = 0; p < 4; p++) if (seq[2 * p] === seq[i]) count[p]++;
    }
    for (const c of count) assert.ok(Math.abs(c - 2000) < 150, `pair asked ${c} times of 8000 queries, expected about 2000`);
  });

  test('the defaults: 8 pairs, vocab 64, the sparse layout without filler (experiments/pilots/recall.md)', () => {
    const t = tasks.recall();
    assert.deepEqual(t.options, { pairs: 8, seqLen: 24, vocab: 64, queries: 8, layout: 'sparse' });
    const { tokens } = t.sample(20, 1);
    for (let i = 0; i < tokens.length; i++) assert.notEqual(tokens[i], 0, 'no filler: every query-region position is a query');
    assert.equal(tasks.recall({ pairs: 4, queries: 2 }).seqLen, 10, 'seqLen defaults to 2·pairs + queries');
  });

  test('bad arguments throw, naming the argument', () => {
    assert.throws(() => tasks.recall({ pairs: 5, vocab: 10 }), /pairs.*too many for vocab 10/);
    assert.throws(() => tasks.recall({ pairs: 5, vocab: 10, layout: 'dense' }), /pairs.*too many for vocab 10/);
    assert.throws(() => tasks.recall({ pairs: 4, seqLen: 10, queries: 4, layout: 'sparse' }), /seqLen.*too short/);
    assert.throws(() => tasks.recall({ pairs: 4, queries: 5 }), /queries/);
    assert.throws(() => tasks.recall({ pairs: 4, queries: 5, layout: 'dense' }), /queries/);
    assert.throws(() => tasks.recall({ pairs: 0 }), /pairs/);
    assert.throws(() => tasks.recall({ vocab: 2 }), /vocab/);
    assert.throws(() => tasks.recall({ queries: 0 }), /queries/);
    assert.throws(() => tasks.recall({ seqLen: 'long' }), /seqLen/);
    assert.throws(() => tasks.recall({ layout: 'Dense' }), /layout must be 'sparse' or 'dense', got Dense/);
    assert.throws(() => tasks.recall({ layout: 2 }), /layout/);
    assert.throws(() => tasks.recall({ pairs: 4, seqLen: 17, layout: 'dense' }), /seqLen = 17 does not fit the dense layout.*\[9, 16\]/);
    assert.throws(() => tasks.recall({ pairs: 4, seqLen: 8, layout: 'dense' }), /seqLen = 8 does not fit/);
    assert.throws(() => tasks.recall({ pairs: 4, seqLen: 12, queries: 4, layout: 'dense' }), /queries = 4 does not match seqLen 12/);
    assert.throws(() => tasks.recall({ pairs: 4, seqLen: 'long', layout: 'dense' }), /seqLen/);
  });
});

describe('tasks.copy, reverse, sort', () => {
  const expect = {
    copy: (x) => x.slice(),
    reverse: (x) => x.slice().reverse(),
    sort: (x) => x.slice().sort((p, q) => p - q),
  };
  for (const name of ['copy', 'reverse', 'sort']) {
    for (const opts of [{}, { seqLen: 8, vocab: 4 }, { seqLen: 2, vocab: 3 }]) {
      test(`${name} ${JSON.stringify(opts)}: the targets are the transformation, next-token style`, () => {
        const t = tasks[name](opts);
        const N = t.seqLen / 2;
        const { tokens, targets } = t.sample(40, 11);
        for (let s = 0; s < 40; s++) {
          const seq = Array.from(tokens.subarray(s * t.seqLen, (s + 1) * t.seqLen));
          const tg = Array.from(targets.subarray(s * t.seqLen, (s + 1) * t.seqLen));
          const x = seq.slice(0, N);
          for (const v of x) assert.ok(v >= 1 && v < t.vocab, 'content tokens are 1..vocab-1');
          assert.equal(seq[N], 0, 'the separator');
          const y = expect[name](x);
          assert.deepEqual(tg.slice(0, N), new Array(N).fill(-1), 'no loss on the first half');
          assert.deepEqual(tg.slice(N), y, 'the target at N + i is y_i');
          assert.deepEqual(seq.slice(N + 1), y.slice(0, N - 1), 'the model reads y_i where it must output y_(i+1)');
          assert.deepEqual(t.transform(x), y);
        }
      });
    }
    test(`${name}: bad arguments throw, naming the argument`, () => {
      assert.throws(() => tasks[name]({ seqLen: 7 }), /seqLen.*even/);
      assert.throws(() => tasks[name]({ seqLen: 0 }), /seqLen/);
      assert.throws(() => tasks[name]({ vocab: 2 }), /vocab/);
      assert.throws(() => tasks[name]({ vocab: 3.5 }), /vocab/);
    });
  }
  test('copy and reverse are position-based: the target at N + i is a fixed earlier position', () => {
    for (const name of ['copy', 'reverse']) {
      const t = tasks[name]({ seqLen: 12, vocab: 30 });
      const N = 6;
      const { tokens, targets } = t.sample(20, 5);
      for (let s = 0; s < 20; s++) {
        for (let i = 0; i < N; i++) {
          const from = name === 'copy' ? i : N - 1 - i;
          assert.ok(from <= N + i);
          assert.equal(targets[s * 12 + N + i], tokens[s * 12 + from]);
        }
      }
    }
  });
});

describe('tasks.text', () => {
  test('DEFAULT_TEXT, the example paragraph: a few hundred plain characters; the vocabulary is its sorted set', () => {
    assert.ok(DEFAULT_TEXT.length >= 300 && DEFAULT_TEXT.length <= 1000, `${DEFAULT_TEXT.length} characters`);
    assert.match(DEFAULT_TEXT, /^[A-Za-z ,.]+$/);
    assert.notEqual(tasks.text().length, DEFAULT_TEXT.length, 'without a text, the task is the corpus (tests/corpus.test.mjs)');
    const t = tasks.text({ text: DEFAULT_TEXT });
    assert.deepEqual(t.chars, [...new Set(DEFAULT_TEXT)].sort());
    assert.equal(t.vocab, t.chars.length);
    assert.equal(t.split, DEFAULT_TEXT.length - Math.floor(DEFAULT_TEXT.length / 10));
  });

  for (const opts of [{ text: DEFAULT_TEXT }, { text: 'the cat sat on the mat and the dog sat on the log', seqLen: 5 }]) {
    test(`windows read the string; train and held-out are disjoint ${opts.seqLen ?? ''}`, () => {
      const t = tasks.text(opts);
      const str = t.options.text;
      const L = t.seqLen;
      const decode = (arr) => Array.from(arr, (x) => t.chars[x]).join('');
      const train = t.sample(200, 2, 'train');
      for (let s = 0; s < 200; s++) {
        const start = train.starts[s];
        assert.equal(decode(train.tokens.subarray(s * L, (s + 1) * L)), str.slice(start, start + L));
        assert.equal(decode(train.targets.subarray(s * L, (s + 1) * L)), str.slice(start + 1, start + L + 1));
        assert.ok(start + L < t.split, 'a training window never reads nor predicts a held-out character');
        assert.equal(t.describe(train.tokens, s), str.slice(start, start + L));
      }
      const held = t.sample(200, 2, 'heldout');
      for (let s = 0; s < 200; s++) {
        const start = held.starts[s];
        assert.equal(decode(held.tokens.subarray(s * L, (s + 1) * L)), str.slice(start, start + L));
        let counted = 0;
        for (let i = 0; i < L; i++) {
          const at = start + i + 1;
          const tg = held.targets[s * L + i];
          if (at < t.split) assert.equal(tg, -1, 'no loss on a training character');
          else { assert.equal(t.chars[tg], str[at]); counted++; }
        }
        assert.ok(counted > 0, 'each held-out window predicts a held-out character');
      }
      const ev = t.heldOutWindows();
      const hits = new Map();
      for (let s = 0; s < ev.starts.length; s++) {
        for (let i = 0; i < L; i++) {
          const tg = ev.targets[s * L + i];
          if (tg < 0) continue;
          const at = ev.starts[s] + i + 1;
          assert.equal(t.chars[tg], str[at]);
          hits.set(at, (hits.get(at) ?? 0) + 1);
        }
      }
      assert.equal(hits.size, str.length - t.split, 'every held-out character is evaluated');
      for (const [at, k] of hits) {
        assert.ok(at >= t.split, 'only held-out characters');
        assert.equal(k, 1, 'each exactly once');
      }
    });
  }

  test('bad arguments throw, naming the argument', () => {
    assert.throws(() => tasks.text({ text: '' }), /text.*empty/);
    assert.throws(() => tasks.text({ text: 'aaaa' }), /text/);
    assert.throws(() => tasks.text({ text: 42 }), /text/);
    assert.throws(() => tasks.text({ text: 'abcdefghijkl', seqLen: 11 }), /seqLen.*too long/);
    assert.throws(() => tasks.text({ seqLen: 1 }), /seqLen/);
    assert.throws(() => tasks.text({ text: DEFAULT_TEXT }).encode('Z!'), /vocabulary/);
  });
});

describe('the validation split', () => {
  for (const name of ['recall', 'copy', 'reverse', 'sort']) {
    test(`${name}: 'validation' is a deterministic stream of its own, apart from 'train' and 'heldout'`, () => {
      const t = tasks[name]();
      const v = t.sample(64, 3, 'validation');
      assert.deepEqual(v, t.sample(64, 3, 'validation'), `${name}: the same seed gives the same validation batch`);
      for (const other of ['train', 'heldout']) {
        assert.notDeepEqual(v.tokens, t.sample(64, 3, other).tokens, `${name} seed 3: validation equals ${other}`);
      }
    });
  }
  test("a text of one's own has no validation split", () => {
    const t = tasks.text({ text: 'the cat sat on the mat and the dog sat on the log', seqLen: 5 });
    assert.throws(() => t.sample(4, 1, 'validation'), /validation/);
  });
  test('an unknown split names the three', () => {
    assert.throws(() => tasks.copy().sample(4, 1, 'test'), /'train', 'validation' or 'heldout'/);
  });
});
