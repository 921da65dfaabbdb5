// The recurrent family's float64 reference (src/js/reference.js recurrence) against values worked
// out by hand from the update rules, and its properties: a sequence in two pieces (the second from
// the first's state) is the whole; a zero decay (g = 0) is the ungated rule; beta = 0 writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recurrence, RECURRENT_RULES } from '../src/js/reference.js';

const close = (got, want, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) <= 1e-12 * (1 + Math.abs(want[i])), `${what}[${i}] = ${x}, by hand ${want[i]}`));
};

test('two tokens, d = 1, dv = 1, scale 1, worked by hand for every rule', () => {
  // q = [1, 2], k = [1, 1], v = [3, 5], g = [ln 0.5, ln 0.5], beta = [0.5, 0.5], s0 = [1]
  const inputs = { n: 2, d: 1, dv: 1, q: [1, 2], k: [1, 1], v: [3, 5], g: [Math.log(0.5), Math.log(0.5)], beta: [0.5, 0.5], s0: [1] };
  // linear: S = 1 + 3 = 4, y0 = 4; S = 4 + 5 = 9, y1 = 18
  close(recurrence('linear', inputs, { scale: 1 }).output, [4, 18], 'linear y');
  // gated: S = 0.5 + 3 = 3.5, y0 = 3.5; S = 1.75 + 5 = 6.75, y1 = 13.5
  close(recurrence('gated', inputs, { scale: 1 }).output, [3.5, 13.5], 'gated y');
  // delta: u = 0.5 (3 - 1) = 1, S = 2, y0 = 2; u = 0.5 (5 - 2) = 1.5, S = 3.5, y1 = 7
  const delta = recurrence('delta', inputs, { scale: 1 });
  close(delta.output, [2, 7], 'delta y');
  close(delta.state, [3.5], 'delta state');
  // gated_delta: S~ = 0.5, u = 0.5 (3 - 0.5) = 1.25, S = 1.75, y0 = 1.75; S~ = 0.875,
  // u = 0.5 (5 - 0.875) = 2.0625, S = 2.9375, y1 = 5.875
  close(recurrence('gated_delta', inputs, { scale: 1 }).output, [1.75, 5.875], 'gated_delta y');
});

test('per-key decay scales each row of the state; the default scale is 1/sqrt(d)', () => {
  // d = 2, dv = 1, one token from s0 = [1, 1]: rows decay by 0.5 and 0.25, then k = [1, 0] writes v = 2 to row 0
  const inputs = { n: 1, d: 2, dv: 1, q: [1, 1], k: [1, 0], v: [2], g: [Math.log(0.5), Math.log(0.25)], s0: [1, 1] };
  const r = recurrence('gated', inputs);
  close(r.state, [2.5, 0.25], 'state');
  close(r.output, [(2.5 + 0.25) / Math.sqrt(2)], 'y');
});

function sample(n, d, dv, seed) {
  let a = seed >>> 0;
  const rnd = () => { a = (a * 1664525 + 1013904223) >>> 0; return a / 2 ** 32 * 2 - 1; };
  const arr = (m, f = rnd) => Array.from({ length: m }, f);
  const k = arr(n * d);
  for (let t = 0; t < n; t++) { // unit keys
    const norm = Math.hypot(...k.slice(t * d, t * d + d));
    for (let i = 0; i < d; i++) k[t * d + i] /= norm;
  }
  return { n, d, dv, q: arr(n * d), k, v: arr(n * dv), g: arr(n * d, () => -Math.abs(rnd())), beta: arr(n, () => Math.abs(rnd())), s0: arr(d * dv) };
}

test('every rule: two pieces, the second from the first\'s state, give the whole', () => {
  for (const rule of Object.keys(RECURRENT_RULES)) {
    const x = sample(9, 3, 2, 11);
    const whole = recurrence(rule, x);
    const cut = 4, slice = (a, w, from, to) => a.slice(from * w, to * w);
    const part = (from, to, s0) => ({ n: to - from, d: 3, dv: 2, q: slice(x.q, 3, from, to), k: slice(x.k, 3, from, to), v: slice(x.v, 2, from, to),
      g: slice(x.g, 3, from, to), beta: x.beta.slice(from, to), s0 });
    const a = recurrence(rule, part(0, cut, x.s0)), b = recurrence(rule, part(cut, 9, a.state));
    close([...a.output, ...b.output], whole.output, `${rule} pieces`);
    close(b.state, whole.state, `${rule} final state`);
  }
});

test('g = 0 gives the ungated rule, and beta = 0 writes nothing (y reads s0 alone)', () => {
  const x = sample(6, 4, 3, 5);
  const zeroG = { ...x, g: x.g.map(() => 0) };
  close(recurrence('gated', zeroG).output, recurrence('linear', x).output, 'gated with g = 0');
  close(recurrence('gated_delta', zeroG).output, recurrence('delta', x).output, 'gated_delta with g = 0');
  const zeroBeta = { ...x, beta: x.beta.map(() => 0) };
  const r = recurrence('delta', zeroBeta);
  close(r.state, x.s0, 'state with beta = 0');
  assert.throws(() => recurrence('softmax', x), /no recurrent update rule/);
});
