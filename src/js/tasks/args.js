// tasks/args.js — what every task of tasks.js shares: the checks of its arguments (an Error that
// names the argument), sample()'s splits and its PRNG stream per (seed, task, split), and the
// small random helpers. A plain ES module: no DOM, no Node imports, no work at import time.

import { mulberry32, streamSeed } from '../prng.js';

export function fail(task, arg, msg) {
  throw new Error(`tasks.${task}: ${arg} ${msg}`);
}

export function checkInt(task, arg, value, min, max = Number.MAX_SAFE_INTEGER) {
  if (!Number.isInteger(value)) fail(task, arg, `must be an integer, got ${String(value)}`);
  if (value < min) fail(task, arg, `must be >= ${min}, got ${value}`);
  if (value > max) fail(task, arg, `must be <= ${max}, got ${value}`);
  return value;
}

export function checkKnown(task, opts, known) {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
    throw new Error(`tasks.${task}: options must be an object, got ${opts === null ? 'null' : typeof opts}`);
  }
  for (const k of Object.keys(opts)) {
    if (!known.includes(k)) fail(task, k, `is not an option of this task (known: ${known.join(', ')})`);
  }
}

/**
 * The splits sample() takes: 'train'; 'validation', where a study chooses its settings (a learning
 * rate); 'heldout', where it reports. For the synthetic tasks each is an independent stream; for
 * the corpus, disjoint sets of chapters (corpus-parse.js).
 */
export const SPLITS = ['train', 'validation', 'heldout'];

/** Checks sample()'s arguments; returns the PRNG of (seed, task, split). */
export function sampler(task, batch, seed, split) {
  checkInt(task, 'batch', batch, 1, 1 << 20);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    fail(task, 'seed', `must be an integer in [0, 2^32), got ${String(seed)}`);
  }
  if (!SPLITS.includes(split)) fail(task, 'split', `must be 'train', 'validation' or 'heldout', got ${String(split)}`);
  return mulberry32(streamSeed(seed, `${task}:${split}`));
}

/** An integer uniform in [0, k). */
export const randInt = (rnd, k) => Math.floor(rnd() * k);

/** The first m entries of a uniform random permutation of 0..k-1 (partial Fisher–Yates). */
export function choose(rnd, k, m) {
  const a = Array.from({ length: k }, (_, i) => i);
  for (let i = 0; i < m; i++) {
    const j = i + randInt(rnd, k - i);
    const t = a[i]; a[i] = a[j]; a[j] = t;
  }
  return a.slice(0, m);
}

export function checkSequence(tokens, i, seqLen, task) {
  if (!tokens || typeof tokens.length !== 'number') throw new Error(`tasks.${task}.describe: tokens must be an array`);
  const count = Math.floor(tokens.length / seqLen);
  if (!Number.isInteger(i) || i < 0 || i >= count) {
    throw new Error(`tasks.${task}.describe: i must be an integer in [0, ${count}), got ${String(i)}`);
  }
  return Array.from(tokens.subarray ? tokens.subarray(i * seqLen, (i + 1) * seqLen) : tokens.slice(i * seqLen, (i + 1) * seqLen));
}
