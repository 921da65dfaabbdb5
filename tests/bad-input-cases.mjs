// The bad inputs of tests/bad-input.test.mjs, as data: every case a call that must fail, with the
// code and what its message must name. Also run on the WebGPU path's checks (tests/webgpu.test.mjs).

import { makeInputs, VARIANTS, isMixable, isMixture, withArray, without } from './helpers.mjs';

export const SOFTMAX_DIMS = { n: 4, d: 8, dv: 3 };
export const MIX_DIMS = { n: 6, d: 4, dv: 3, h: 5, L: 8, a: 2, b: 4, rank: 2 };
export const good = {
  softmax: () => makeInputs('softmax', SOFTMAX_DIMS, 1),
  dense: () => makeInputs('dense', { n: 6, d: 4, dv: 3, h: 5, L: 9 }, 2),
  random: () => makeInputs('random', { n: 6, dv: 3, L: 8 }, 3),
  fd: () => makeInputs('factorized-dense', { n: 6, d: 4, dv: 3, a: 2, b: 4, L: 8 }, 4),
  mixture: () => makeInputs('mixture', MIX_DIMS, 5),
  fixed: () => makeInputs('fixed', { n: 6, dv: 3 }, 6),
};
export const MIX = { components: ['softmax', 'random'], alpha: [0.5, 0.5] };
/** A variant a mixture may not combine (the first in lab.variants that is neither mixable nor a mixture). */
export const NOT_MIXABLE = VARIANTS.find((v) => !isMixable(v) && !isMixture(v)).id;
export const mixInputs = () => makeInputs('mixture', MIX_DIMS, 5, { components: MIX.components });

// A problem bigger than any before it in the instance, so that it needs WebAssembly memory to grow,
// with one value that is finite as a float64 but overflows float32: it must fail before memory grows.
export const GROW_DIMS = { n: 100000, d: 4, dv: 4 };
export const growInputs = makeInputs('linear', GROW_DIMS, 11);
export const growBadV = Array.from(growInputs.v, (x, i) => (i === 6 ? 1e39 : x));

// A big problem for the MEMORY case: softmax n = 40000 with weights needs 40000² floats = 6.4 GB.
export const BIG_N = 40000;
export const bigInputs = makeInputs('softmax', { n: BIG_N, d: 1, dv: 1 }, 7);

/**
 * Each case: name, id, inputs (a thunk), options, code(s) expected, and `mentions`: regexps the
 * message must match (the input it names, and for shapes the numbers).
 */
export const CASES = [
  // --- wrong array lengths
  { name: 'q too short', id: 'softmax', inputs: () => ({ ...good.softmax(), q: new Float32Array(30) }), code: 'SHAPE', mentions: [/\bq\b/, /\b30\b/, /\b32\b/] },
  { name: 'k too long', id: 'softmax', inputs: () => ({ ...good.softmax(), k: new Float32Array(33) }), code: 'SHAPE', mentions: [/\bk\b/, /\b33\b/, /\b32\b/] },
  { name: 'v wrong length (plain array)', id: 'softmax', inputs: () => ({ ...good.softmax(), v: [1, 2, 3] }), code: 'SHAPE', mentions: [/\bv\b/, /\b12\b/] },
  { name: 'w2 sized h×n instead of h×L', id: 'dense', inputs: () => ({ ...good.dense(), w2: new Float32Array(5 * 6) }), code: 'SHAPE', mentions: [/\bw2\b/, /\b45\b/] },
  { name: 'r sized n×n instead of L×L', id: 'random', inputs: () => ({ ...good.random(), r: new Float32Array(36) }), code: 'SHAPE', mentions: [/\br\b/, /\b64\b/] },
  { name: 'bb wrong length', id: 'factorized-dense', inputs: () => ({ ...good.fd(), bb: new Float32Array(3) }), code: 'SHAPE', mentions: [/\bbb\b/] },
  // --- missing arrays
  { name: 'k missing', id: 'softmax', inputs: () => without(good.softmax(), 'k'), code: 'SHAPE', mentions: [/\bk\b/] },
  { name: 'v missing', id: 'fixed', inputs: () => without(good.fixed(), 'v'), options: { pattern: 'first' }, code: 'SHAPE', mentions: [/\bv\b/] },
  { name: 'r missing in a mixture with random', id: 'mixture', inputs: () => without(mixInputs(), 'r'), options: MIX, code: 'SHAPE', mentions: [/\br\b/] },
  { name: 'q is a string', id: 'softmax', inputs: () => ({ ...good.softmax(), q: 'not an array' }), code: 'SHAPE', mentions: [/\bq\b/] },
  // --- bad dimensions
  { name: 'n non-integer', id: 'softmax', inputs: () => ({ ...good.softmax(), n: 2.5 }), code: 'SHAPE', mentions: [/\bn\b/] },
  { name: 'n zero', id: 'softmax', inputs: () => ({ ...good.softmax(), n: 0 }), code: 'SHAPE', mentions: [/\bn\b/] },
  { name: 'n negative', id: 'softmax', inputs: () => ({ ...good.softmax(), n: -4 }), code: 'SHAPE', mentions: [/\bn\b/] },
  { name: 'd NaN', id: 'softmax', inputs: () => ({ ...good.softmax(), d: NaN }), code: 'SHAPE', mentions: [/\bd\b/] },
  { name: 'dv missing', id: 'softmax', inputs: () => without(good.softmax(), 'dv'), code: 'SHAPE', mentions: [/\bdv\b/] },
  { name: 'h zero', id: 'dense', inputs: () => ({ ...good.dense(), h: 0 }), code: 'SHAPE', mentions: [/\bh\b/] },
  { name: 'rank non-integer', id: 'factorized-random', inputs: () => ({ ...makeInputs('factorized-random', { n: 5, dv: 2, rank: 2, L: 5 }, 8), rank: 1.5 }), code: 'SHAPE', mentions: [/\brank\b/] },
  // --- NaN / Infinity inside an array
  { name: 'NaN in q', id: 'softmax', inputs: () => withArray(good.softmax(), 'q', (a) => { a[5] = NaN; }), code: 'VALUE', mentions: [/\bq\b/] },
  { name: 'Infinity in v', id: 'softmax', inputs: () => withArray(good.softmax(), 'v', (a) => { a[a.length - 1] = Infinity; }), code: 'VALUE', mentions: [/\bv\b/] },
  { name: '-Infinity in r', id: 'random', inputs: () => withArray(good.random(), 'r', (a) => { a[0] = -Infinity; }), code: 'VALUE', mentions: [/\br\b/] },
  { name: 'NaN in b1', id: 'dense', inputs: () => withArray(good.dense(), 'b1', (a) => { a[2] = NaN; }), code: 'VALUE', mentions: [/\bb1\b/] },
  { name: 'NaN in b2 beyond column n', id: 'dense', inputs: () => withArray(good.dense(), 'b2', (a) => { a[8] = NaN; }), code: 'VALUE', mentions: [/\bb2\b/] },
  { name: '1e39 (overflows float32) in plain-array v', id: 'softmax', inputs: () => ({ ...good.softmax(), v: Array.from(good.softmax().v, (x, i) => (i === 4 ? 1e39 : x)) }), code: 'VALUE', mentions: [/\bv\b/] },
  { name: `1e39 in plain-array v of a call that needs more memory (linear n=${GROW_DIMS.n})`, id: 'linear', inputs: () => ({ ...growInputs, v: growBadV }), code: 'VALUE', mentions: [/\bv\b/] },
  { name: 'a string inside plain-array q', id: 'softmax', inputs: () => ({ ...good.softmax(), q: Array.from(good.softmax().q, (x, i) => (i === 3 ? '1' : x)) }), code: 'VALUE', mentions: [/\bq\b/] },
  { name: 'NaN in plain-array x', id: 'factorized-dense', inputs: () => ({ ...good.fd(), x: Array.from(good.fd().x, (t, i) => (i === 3 ? NaN : t)) }), code: 'VALUE', mentions: [/\bx\b/] },
  // --- L, a·b
  // (the message names the relation and the values: a = 2, b = 4, L = 9; n = 6, L = 5 or 4)
  { name: 'a·b ≠ L', id: 'factorized-dense', inputs: () => ({ ...good.fd(), L: 9 }), code: 'VALUE', mentions: [/\bL\b/, /a\s*[*·]\s*b/, /\b9\b/] },
  { name: 'L < n', id: 'random', inputs: () => ({ ...good.random(), L: 5, r: new Float32Array(25) }), code: 'VALUE', mentions: [/\bL\b/, /\bn\b/, /\b5\b/] },
  { name: 'L < n (dense1)', id: 'dense1', inputs: () => ({ ...makeInputs('dense1', { n: 6, d: 3, dv: 2, L: 6 }, 9), L: 4, w: new Float32Array(12) }), code: 'VALUE', mentions: [/\bL\b/, /\bn\b/, /\b4\b/] },
  // --- mixture alpha
  { name: 'alpha negative', id: 'mixture', inputs: mixInputs, options: { ...MIX, alpha: [1.5, -0.5] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alpha not summing to 1', id: 'mixture', inputs: mixInputs, options: { ...MIX, alpha: [0.5, 0.4] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alpha wrong length', id: 'mixture', inputs: mixInputs, options: { ...MIX, alpha: [0.2, 0.3, 0.5] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alpha NaN', id: 'mixture', inputs: mixInputs, options: { ...MIX, alpha: [NaN, 0.5] }, code: 'VALUE', mentions: [/\balpha\b/] },
  { name: 'alphaLogits wrong length', id: 'mixture', inputs: mixInputs, options: { components: MIX.components, alphaLogits: [0] }, code: 'VALUE', mentions: [/\balphaLogits\b/] },
  { name: 'alpha and alphaLogits both given', id: 'mixture', inputs: mixInputs, options: { ...MIX, alphaLogits: [0, 0] }, code: 'VALUE', mentions: [/\balpha\b/, /\balphaLogits\b/] },
  { name: 'neither alpha nor alphaLogits', id: 'mixture', inputs: mixInputs, options: { components: MIX.components }, code: 'VALUE', mentions: [/\balpha\b/] },
  // a variant that exists but cannot be mixed: an option value the variant cannot honour
  { name: `non-mixable component (${NOT_MIXABLE})`, id: 'mixture', inputs: mixInputs, options: { components: ['softmax', NOT_MIXABLE], alpha: [0.5, 0.5] }, code: 'UNSUPPORTED', mentions: [new RegExp(`\\b${NOT_MIXABLE}\\b`), /component/] },
  { name: 'misspelt component', id: 'mixture', inputs: mixInputs, options: { components: ['softmax', 'randum'], alpha: [0.5, 0.5] }, code: 'UNKNOWN', mentions: [/\brandum\b/] },
  // --- unknown variant / option
  { name: 'unknown variant id', id: 'softmx', inputs: good.softmax, code: 'UNKNOWN', mentions: [/softmx/] },
  { name: 'variant id not a string', id: 42, inputs: good.softmax, code: 'UNKNOWN', mentions: [/42/] },
  { name: 'unknown option name', id: 'softmax', inputs: good.softmax, options: { casual: true }, code: 'UNKNOWN', mentions: [/\bcasual\b/] },
  { name: 'an option the variant cannot honour (tiling on softmax)', id: 'softmax', inputs: good.softmax, options: { tiling: 'tile' }, code: 'UNSUPPORTED', mentions: [/\btiling\b/] },
  { name: 'an option the variant cannot honour (eps on efficient)', id: 'efficient', inputs: () => makeInputs('efficient', SOFTMAX_DIMS, 12), options: { eps: 0.1 }, code: 'UNSUPPORTED', mentions: [/\beps\b/] },
  { name: 'causal not a boolean', id: 'softmax', inputs: good.softmax, options: { causal: 'yes' }, code: 'VALUE', mentions: [/\bcausal\b/] },
  // --- option values
  { name: 'bad tiling value', id: 'factorized-dense', inputs: good.fd, options: { tiling: 'tiles' }, code: 'VALUE', mentions: [/\btiling\b/, /tiles/] },
  { name: 'bad pattern value', id: 'fixed', inputs: good.fixed, options: { pattern: 'diagonal' }, code: 'VALUE', mentions: [/\bpattern\b/, /diagonal/] },
  { name: 'scale NaN', id: 'softmax', inputs: good.softmax, options: { scale: NaN }, code: 'VALUE', mentions: [/\bscale\b/] },
  { name: 'eps Infinity', id: 'linear', inputs: () => makeInputs('linear', SOFTMAX_DIMS, 10), options: { eps: Infinity }, code: 'VALUE', mentions: [/\beps\b/] },
  { name: 'window negative', id: 'fixed', inputs: good.fixed, options: { pattern: 'left', window: -1 }, code: 'VALUE', mentions: [/\bwindow\b/] },
  // --- causal with patterns that look ahead
  { name: 'causal next', id: 'fixed', inputs: good.fixed, options: { pattern: 'next', causal: true }, code: 'UNSUPPORTED', mentions: [/\bnext\b/, /causal/] },
  { name: 'causal right', id: 'fixed', inputs: good.fixed, options: { pattern: 'right', causal: true }, code: 'UNSUPPORTED', mentions: [/\bright\b/, /causal/] },
  { name: 'causal last', id: 'fixed', inputs: good.fixed, options: { pattern: 'last', causal: true }, code: 'UNSUPPORTED', mentions: [/\blast\b/, /causal/] },
  // --- too large for WebAssembly memory
  { name: `softmax n=${BIG_N} with weights`, id: 'softmax', inputs: () => bigInputs, options: { weights: true }, code: 'MEMORY', mentions: [/\bweights\b|\bn\b/] },
  // --- not an object
  { name: 'inputs null', id: 'softmax', inputs: () => null, code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'inputs a number', id: 'softmax', inputs: () => 42, code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'inputs a string', id: 'softmax', inputs: () => 'q k v', code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'inputs undefined', id: 'softmax', inputs: () => undefined, code: 'SHAPE', mentions: [/\binputs\b/] },
  { name: 'options a number', id: 'softmax', inputs: good.softmax, options: 7, code: 'VALUE', mentions: [/\boptions\b/] },
];
