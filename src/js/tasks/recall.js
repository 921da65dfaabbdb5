// tasks/recall.js — the recall task of tasks.js. A plain ES module: no DOM, no Node imports, no
// work at import time.

import { fail, checkInt, checkKnown, sampler, choose, checkSequence } from './args.js';
import { DEFAULTS } from './defaults.js';

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
// values), layout 'sparse', 8 queries, seqLen 24 (the pilots behind them: tasks/defaults.js).

export function recall(opts = {}) {
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
