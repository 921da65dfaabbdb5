// Tests of Explore's scaling chart: d and dv validated, labels that do not overlap, the builds it
// compares by default, computing… on a long run, a cancelled comparison, and a crossing or slope
// stated only when the timings agree.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/scaling.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startEnv, stopEnv, ARTIFACTS, newPage, idle, snapshot, assertNoProblems, checkAgainstBinding } from './harness.mjs';
import { WIDE, SIZES, ui, status, overlaps } from './page-helpers.mjs';

describe("attnlab page: the scaling chart: its fields, its claims and long runs", () => {
  before(startEnv);
  after(stopEnv);

  for (const [label, viewport] of SIZES) {
    test(`scaling: d and dv are validated, and the chart's labels do not overlap (${label})`, async (t) => {
      const page = await newPage(t, { viewport });
      for (const [val, why] of [['0', /whole number from 1 to 256 \(got 0\)/], ['', /empty/], ['9999', /got 9999/]]) {
        await page.fill('#scale-d', val);
        assert.equal(await page.isVisible('#scale-params-error'), true, `d = "${val}": a message`);
        assert.match(await page.textContent('#scale-params-error'), why);
        assert.equal(await page.isDisabled('#scale-run'), true, `d = "${val}": no run`);
        assert.equal(await page.getAttribute('#scale-d', 'aria-invalid'), 'true');
      }
      await page.fill('#scale-d', '16');
      await page.fill('#scale-dv', '0');
      assert.match(await page.textContent('#scale-params-error'), /dv/);
      await page.fill('#scale-dv', '16');
      assert.equal(await page.isVisible('#scale-params-error'), false);
      assert.equal(await page.isDisabled('#scale-run'), false);
      const check = (lay, when) => {
        assert.ok(lay, `${when}: the chart reports its layout`);
        assert.ok(!overlaps(lay.yTitle, lay.yTicks), `${when}: y title ${lay.yTitle} and tick labels ${lay.yTicks} overlap`);
        assert.ok(lay.yTicks[0] >= 0 && lay.yTicks[1] <= lay.plot[0], `${when}: tick labels inside the left margin`);
        if (lay.message) assert.ok(lay.message[0] >= lay.plot[0] && lay.message[1] <= lay.plot[1], `${when}: the empty-state message ${lay.message} stays inside the plot ${lay.plot}`);
        for (let k = 1; k < lay.xTicks.length; k++) assert.ok(!overlaps(lay.xTicks[k - 1], lay.xTicks[k]), `${when}: x labels overlap`);
      };
      check((await page.evaluate(() => window.__attnlab.scaling())).layout, 'before a run');
      await page.locator('#scaling').screenshot({ path: path.join(ARTIFACTS, `fixes-scaling-empty-${label}.png`) });
      await page.selectOption('#scale-max', '256');
      await page.click('#scale-run');
      await page.waitForFunction(() => window.__attnlab.scaling().done, null, { timeout: 60000 });
      const s = await page.evaluate(() => window.__attnlab.scaling());
      assert.ok(s.points.some((p) => p.median > 0));
      check(s.layout, 'after a run');
      await page.locator('#scaling').screenshot({ path: path.join(ARTIFACTS, `fixes-scaling-run-${label}.png`) });
      assertNoProblems(page);
    });
  }

  test('scaling defaults to the page build plus scalar; a long run shows computing…, one sample has no spread, a variant change cancels the comparison', async (t) => {
    const page = await newPage(t);
    const build = await page.evaluate(() => window.__attnlab.build);
    const checked = await page.$$eval('#scale-builds input:checked', (xs) => xs.map((x) => x.dataset.build));
    assert.deepEqual(checked.sort(), [...new Set([build, 'scalar'])].sort());
    // A call of a second or more on any machine (the scalar build, n = 4096, d = dv = 128: 4.3
    // GFLOP) is timed once, so no spread. The indicator shows after 300 ms; an observer records
    // every state it takes, since polling for it can miss a short visible spell (a CI run did).
    await page.selectOption('#build-select', 'scalar');
    await idle(page);
    await page.evaluate(() => {
      const box = document.querySelector('#computing');
      window.__computingSeen = [];
      new MutationObserver(() => { if (!box.hidden) window.__computingSeen.push(box.textContent); })
        .observe(box, { attributes: true, childList: true, characterData: true, subtree: true });
    });
    await page.fill('#dim-d', '128');
    await page.fill('#dim-dv', '128');
    await page.fill('#dim-n', '4096');
    await page.waitForFunction(() => window.__attnlab.status().dims?.n === 4096, null, { timeout: 60000 });
    const seen = await page.evaluate(() => window.__computingSeen);
    assert.ok(seen.some((text) => /computing… \d+\.\d s/.test(text)), `the indicator showed: ${JSON.stringify(seen.slice(0, 3))}`);
    const st = await status(page);
    if (st.samples === 1) {
      const timing = await page.textContent('#timing');
      assert.doesNotMatch(timing, /spread/, `one sample: ${timing}`);
      assert.match(timing, /1 sample/);
    }
    // the comparison of this state runs; switching the variant stops it
    await page.waitForFunction(() => window.__attnlab.status().compareBusy, null, { timeout: 60000 });
    const cancels = (await ui(page)).compareCancels;
    await page.selectOption('#variant', 'linear');
    await page.waitForFunction(() => window.__attnlab.status().variant === 'linear', null, { timeout: 60000 });
    assert.ok((await ui(page)).compareCancels > cancels, 'the stale comparison was cancelled');
    await page.fill('#dim-n', '16');
    await idle(page);
    assert.equal(await page.isVisible('#computing'), false);
    checkAgainstBinding(await snapshot(page), 'after the long run');
    assertNoProblems(page);
  });

  test('the scaling chart states a crossing or a slope only when the timings agree', async (t) => {
    const page = await newPage(t, { viewport: WIDE });
    // the noise of the report: linear 143 µs at n = 128, 85 µs at 256, with repeats that disagree
    const timing = (median, spread = 0.05, samples = 10) => ({ median, min: median * (1 - spread), max: median * (1 + spread), q1: median * (1 - spread / 2), q3: median * (1 + spread / 2), samples });
    const softmax = [[64, 0.07], [128, 0.15], [256, 0.45], [512, 1.6]];
    const linear = [[64, 0.08, 0.05], [128, 0.143, 1.2], [256, 0.085, 0.05], [512, 0.2, 0.05]];
    const series = [
      { key: 'softmax/simd', label: 'softmax', variant: 'softmax', family: 'softmax', points: softmax.map(([n, ms]) => ({ n, ms, point: { timing: timing(ms) } })) },
      { key: 'linear/simd', label: 'linear', variant: 'linear', family: 'linear', points: linear.map(([n, ms, sp]) => ({ n, ms, point: { timing: timing(ms, sp) } })) },
    ];
    const fns = await page.evaluate(async (s) => {
      const m = await import(new URL('chart.js', location.href).href);
      return { crossings: m.crossings(s).length, slopeLinear: m.slope(s[1].points), slopeSoftmax: m.slope(s[0].points) };
    }, series);
    assert.equal(fns.crossings, 0, 'no crossing from noisy timings');
    assert.ok(!Number.isFinite(fns.slopeLinear), `no slope from a series whose time falls (${fns.slopeLinear})`);
    assert.ok(fns.slopeSoftmax > 1.4 && fns.slopeSoftmax < 2.2, `a steady series keeps its slope (${fns.slopeSoftmax})`);
    // the panel says so, drawn from those points
    const points = [];
    for (const [variant, rows] of [['softmax', softmax], ['linear', linear]]) {
      for (const [n, ms, sp] of rows) points.push({ n, variant, build: 'simd', timing: timing(ms, sp), dims: { n, d: 16, dv: 16 }, options: {} });
    }
    await page.evaluate(([p]) => window.__attnlab.scalingReplay({ variants: [{ id: 'softmax' }, { id: 'linear' }], builds: ['simd'], ns: [64, 128, 256, 512] }, p), [points]);
    const report = await page.evaluate(() => window.__attnlab.scaling());
    assert.deepEqual(report.crossings, [], 'no crossing drawn');
    assert.match(await page.textContent('#scale-crossings'), /too noisy/);
    assert.match(await page.textContent('#scale-legend li[data-series="linear/simd"]'), /no slope: the timings are too noisy/);
    assert.match(await page.textContent('#scale-legend li[data-series="softmax/simd"]'), /slope \d\.\d\d/);
    assertNoProblems(page);
  });
});
