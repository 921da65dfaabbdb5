// The scaling chart's slope (web/chart.js slopeOf): fitted over the asymptotic regime of the
// largest sizes, stated with its spread, refused only when the repeats of a timing disagree.
// Expectations are written from the curves' own formulas (t = c + b·n^k has slope → k), and from
// two default runs the page recorded on a 2-core machine (tests/browser/fixtures/, with date,
// machine and commit), replayed as data: nothing here is timed.
//
//   node --test tests/scaling-slope.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { slopeOf, crossings } from '../web/chart.js';

const NS = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** A timing whose repeats agree (or, with spread, disagree) around a median. */
const timing = (median, spread = 0.05, samples = 10) => ({ median, min: median * (1 - spread), max: median * (1 + spread), q1: median * (1 - spread / 2), q3: median * (1 + spread / 2), samples });
const series = (f, { shaky = [] } = {}) => NS.map((n) => ({ n, ms: f(n), point: { timing: timing(f(n), shaky.includes(n) ? 1.2 : 0.05) } }));

test('a curve t = c + b·n^k gets slope ≈ k from its largest sizes, the fixed overhead of the small ones not fitted', () => {
  for (const [k, c, b] of [[2, 0.05, 2e-6], [1, 0.05, 2e-4], [2, 0.5, 1e-6], [1, 0.2, 1e-3]]) {
    const fit = slopeOf(series((n) => c + b * n ** k));
    assert.ok(Math.abs(fit.slope - k) < 0.15, `c=${c} b=${b}: slope ${fit.slope} for n^${k}`);
    assert.equal(fit.settled, true);
    assert.equal(fit.to, 16384, 'the regime ends at the largest size');
    assert.ok(fit.from >= 64 && fit.lo <= fit.slope && fit.slope <= fit.hi, `the spread ${fit.lo}–${fit.hi} brackets the slope`);
  }
});

test('the slope is stated, not refused, when the small sizes bend (local slopes 1.37 then 2.01 were "too noisy")', () => {
  // the report: softmax's last local slopes 1.37 and 2.01, every repeat agreeing: one size off the
  // line of the n² its neighbours follow
  const pts = series((n) => 1e-5 * n * n);
  pts[7].ms = pts[6].ms * 2 ** 1.37;
  pts[8].ms = pts[7].ms * 2 ** 2.01;
  for (const p of pts) p.point = { timing: timing(p.ms) };
  const fit = slopeOf(pts);
  assert.equal(fit.why, null);
  assert.ok(Math.abs(fit.slope - 2) < 0.15, `slope ${fit.slope}`);
  assert.equal(fit.offLine, 4096, 'the size off the line is named');
});

test('a curve still bending at its largest sizes is stated as such, with its slope there', () => {
  // overhead large enough that even 4096..16384 have not reached n²
  const fit = slopeOf(series((n) => 40 + 1e-7 * n * n));
  assert.equal(fit.settled, false, `local slopes ${fit.lo}–${fit.hi}`);
  assert.ok(fit.slope > 0.3 && fit.slope < 2);
});

test('"too noisy" is kept for repeats that disagree: at the largest sizes the slope is refused; one such size in a long regime is left out and named', () => {
  const top = slopeOf(series((n) => 1e-5 * n * n, { shaky: [8192, 16384] }));
  assert.ok(Number.isNaN(top.slope));
  assert.match(top.why, /repeats at n = 8192, 16384 disagree/);
  const one = slopeOf(series((n) => 1e-5 * n * n, { shaky: [2048] }));
  assert.ok(Math.abs(one.slope - 2) < 0.05, `slope ${one.slope}`);
  assert.deepEqual(one.left, [2048]);
  // a time that falls inside the regime is no trend
  const falls = series((n) => 1e-4 * n);
  falls[7].ms = falls[6].ms * 0.5;
  falls[7].point = { timing: timing(falls[7].ms) };
  assert.match(slopeOf(falls).why, /falls/);
  assert.ok(Number.isNaN(slopeOf([{ n: 64, ms: 1 }]).slope), 'one size: no slope');
});

test('two default runs recorded in a row: every softmax series states ≈ 2 and every linear series ≈ 1', () => {
  const rec = JSON.parse(fs.readFileSync(new URL('./browser/fixtures/scaling-default-runs.json', import.meta.url), 'utf8'));
  assert.equal(rec.runs.length, 2);
  for (const [r, points] of rec.runs.entries()) {
    for (const variant of ['softmax', 'linear']) {
      for (const build of ['relaxed', 'scalar']) {
        const pts = points.filter((p) => p.variant === variant && p.build === build).map((p) => ({ n: p.n, ms: p.timing.median, point: p }));
        assert.equal(pts.length, NS.length, `run ${r + 1} ${variant}/${build}: every size`);
        const fit = slopeOf(pts);
        const want = variant === 'softmax' ? 2 : 1;
        assert.equal(fit.why, null, `run ${r + 1} ${variant}/${build}: ${fit.why}`);
        assert.ok(Math.abs(fit.slope - want) < 0.25, `run ${r + 1} ${variant}/${build}: slope ${fit.slope}, want ≈ ${want}`);
      }
    }
  }
});

test('crossings still need both curves to be a steady trend', () => {
  const a = { label: 'softmax', variant: 'softmax', family: 'softmax', points: series((n) => 1e-5 * n * n) };
  const b = { label: 'linear', variant: 'linear', family: 'linear', points: series((n) => 0.02 + 1e-3 * n) };
  const found = crossings([a, b]);
  assert.equal(found.length, 1);
  // 1e-5 n² = 0.02 + 1e-3 n  →  n ≈ 119.8
  assert.ok(Math.abs(found[0].n - 119.8) / 119.8 < 0.1, `crossing at ${found[0].n}`);
});
