// tasks/sequence.js — the copy, reverse and sort tasks of tasks.js. A plain ES module: no DOM, no
// Node imports, no work at import time.

import { fail, checkInt, checkKnown, sampler, randInt, checkSequence } from './args.js';
import { DEFAULTS } from './defaults.js';

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

export function sequenceTask(name) {
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
