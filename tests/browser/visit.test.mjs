// Browser tests of what a visitor runs into that once misled: a stopped run set beside the
// recorded study as if it were a full one, and the like. Each test failed on the page before its
// fix.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/visit.test.mjs
//
// No timing assertions: a wait has a timeout, never a bound on the machine's speed.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SUMMARY_FIXTURE, startEnv, stopEnv, newPage, assertNoProblems } from './harness.mjs';

const DESKTOP = { width: 1366, height: 900 };
const fixture = JSON.parse(fs.readFileSync(SUMMARY_FIXTURE, 'utf8'));

const X = (page, fn, arg) => page.evaluate(([f, a]) => new Function('x', 'a', `return (${f})(x, a)`)(window.__attnlab.experiment, a), [fn.toString(), arg]);
const xIdle = (page) => X(page, (x) => x.idle(300000));

describe('attnlab page: what a visitor runs into', () => {
  before(startEnv);
  after(stopEnv);

  test('1. a run cancelled part-way is never called the study\'s settings nor judged against it; a threshold crossed before stopping is marked as such', async (t) => {
    const page = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP });
    // the copy preset on seed 1: every setting is the recorded study's, so only the stop differs
    await page.click('button[data-preset="token-copy"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().task === 'copy');
    await page.fill('#x-seed', '1');
    await page.waitForFunction(() => window.__attnlab.experiment.config().seed === 1);
    const steps = (await X(page, (x) => x.config())).train.steps;
    assert.equal(steps, fixture.headline.copy.settings.steps, 'the preset runs the study\'s steps');
    await page.click('#x-play');
    // cancel once a run is past its first few evaluations, well before the end
    await page.waitForFunction(() => window.__attnlab.experiment.runs().some((r) => r.history.length >= 3), null, { timeout: 120000 });
    await page.click('#x-cancel');
    await xIdle(page);
    const runs = (await X(page, (x) => x.runs())).filter((r) => r.history.length);
    assert.ok(runs.length >= 1, 'something trained before the cancel');
    for (const r of runs) {
      assert.equal(r.status, 'cancelled', `${r.variant}: cancelled`);
      assert.ok(r.steps < steps, `${r.variant}: stopped at step ${r.steps} of ${steps}`);
      const li = page.locator(`#x-verdicts li[data-variant="${r.variant}"]`);
      const text = await li.textContent();
      assert.doesNotMatch(text, /study's settings/, `${r.variant}: a stopped run is not the study's settings: "${text}"`);
      assert.doesNotMatch(text, /the same held-out accuracy as recorded|in the recorded study/, `${r.variant}: not judged against the recorded run: "${text}"`);
      assert.ok(text.includes(`tep ${r.steps} of ${steps} — not comparable with the recorded run`), `${r.variant}: says where it stopped: "${text}"`);
      const crossed = r.final.evalAccuracy >= 0.9;
      const want = crossed ? 'learned early' : 'stopped';
      assert.equal(await li.getAttribute('data-verdict'), want, `${r.variant}: verdict`);
      assert.equal(await page.getAttribute(`#x-legend tr[data-variant="${r.variant}"]`, 'data-verdict'), want);
      const cell = await page.textContent(`#x-legend tr[data-variant="${r.variant}"] .x-verdict`);
      assert.equal(cell, crossed ? 'learned ✓ before it was stopped' : 'stopped: not judged', `${r.variant}: legend`);
      assert.doesNotMatch(text, /not learned/, `${r.variant}: a stopped run is not called not learned`);
      // the table of recorded numbers says the run's number is from a stopped run
      const yours = await page.textContent(`#x-answers-table tr[data-variant="${r.variant}"] .x-yours`);
      assert.match(yours, new RegExp(`stopped at step ${r.steps} of ${steps}`), `${r.variant}: "your run" column`);
    }
    assertNoProblems(page);
  });

  test('2. the scaling chart states the slopes it draws: two default runs recorded in a row give softmax ≈ 2 and linear ≈ 1; no advice the form does not offer', async (t) => {
    const page = await newPage(t, { viewport: DESKTOP });
    const rec = JSON.parse(fs.readFileSync(new URL('./fixtures/scaling-default-runs.json', import.meta.url), 'utf8'));
    const plan = { variants: [{ id: 'softmax' }, { id: 'linear' }], builds: ['relaxed', 'scalar'], ns: [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384] };
    for (const [r, points] of rec.runs.entries()) {
      await page.evaluate(([pl, p]) => window.__attnlab.scalingReplay(pl, p), [plan, points]);
      for (const key of ['softmax/relaxed', 'softmax/scalar', 'linear/relaxed', 'linear/scalar']) {
        const li = page.locator(`#scale-legend li[data-series="${key}"]`);
        const text = await li.textContent();
        assert.doesNotMatch(text, /no slope/, `run ${r + 1} ${key}: "${text}"`);
        const slope = Number(await li.getAttribute('data-slope'));
        const want = key.startsWith('softmax') ? 2 : 1;
        assert.ok(Math.abs(slope - want) < 0.25, `run ${r + 1} ${key}: slope ${slope}, want ≈ ${want}`);
        assert.match(text, new RegExp(`slope ${slope.toFixed(2)} \\(over n = \\S+–16k, local slopes \\d\\.\\d\\d–\\d\\.\\d\\d`), `run ${r + 1} ${key}: its range and spread: "${text}"`);
      }
    }
    // a crossing too noisy to place: "a larger n" is advised only when the form offers one
    const timing = (median) => ({ median, min: median * 0.95, max: median * 1.05, q1: median * 0.975, q3: median * 1.025, samples: 10 });
    const zigzag = (largest) => {
      const ns = plan.ns.filter((n) => n <= largest);
      const pts = [];
      ns.forEach((n, i) => {
        const base = 1e-3 * n;
        pts.push({ n, variant: 'softmax', build: 'simd', timing: timing(base), dims: { n, d: 32, dv: 32 }, options: {} });
        // linear above, below, above softmax: the order changes twice
        pts.push({ n, variant: 'linear', build: 'simd', timing: timing(base * (i % 2 ? 0.8 : 1.25)), dims: { n, d: 32, dv: 32 }, options: {} });
      });
      return [{ variants: plan.variants, builds: ['simd'], ns }, pts];
    };
    await page.evaluate(([pl, p]) => window.__attnlab.scalingReplay(pl, p), zigzag(16384));
    const atLargest = await page.textContent('#scale-crossings');
    assert.match(atLargest, /No crossing is stated/);
    assert.doesNotMatch(atLargest, /larger n/, `16384 is the largest n offered: "${atLargest}"`);
    await page.evaluate(([pl, p]) => window.__attnlab.scalingReplay(pl, p), zigzag(1024));
    assert.match(await page.textContent('#scale-crossings'), /run again, or to a larger n\./);
    assertNoProblems(page);
  });

  test('4. status and labels: the status line counts training and queued runs apart; the badge names the build that ran; the active preset is marked and an edit says it left it', async (t) => {
    const page = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP });
    // presets: the chosen one is marked, the others are not; the seed is the user's and keeps it
    await page.click('button[data-preset="token-copy"]');
    await page.waitForFunction(() => document.querySelector('button[data-preset="token-copy"]').getAttribute('aria-pressed') === 'true');
    const pressed = () => page.$$eval('button[data-preset]', (bs) => bs.filter((b) => b.getAttribute('aria-pressed') === 'true').map((b) => b.dataset.preset));
    assert.deepEqual(await pressed(), ['token-copy']);
    assert.match(await page.textContent('#x-preset-state'), /^Preset: Is token-to-token attention needed\? \(copy\), at the study's settings\.$/);
    await page.fill('#x-seed', '4');
    await page.waitForFunction(() => window.__attnlab.experiment.config().seed === 4);
    assert.deepEqual(await pressed(), ['token-copy'], 'another seed is still the preset');
    const steps = (await X(page, (x) => x.config())).train.steps;
    await page.fill('#x-steps', String(steps + 8));
    await page.waitForFunction((n) => window.__attnlab.experiment.config().train.steps === n, steps + 8);
    assert.deepEqual(await pressed(), [], 'an edited preset is no longer marked');
    assert.match(await page.textContent('#x-preset-state'), /^Edited since the preset Is token-to-token attention needed\? \(copy\): steps differs from the study's settings\.$/);
    await page.fill('#x-steps', String(steps));
    await page.waitForFunction(() => document.querySelector('button[data-preset="token-copy"]').getAttribute('aria-pressed') === 'true');
    assert.match(await page.textContent('#x-preset-state'), /^Preset:/, 'back at the preset\'s settings');

    // the status line while runs train: where the training runs are, and the queued ones apart
    // (runs long enough to pause mid-way: 5 variants, 2 or so at a time)
    await page.fill('#x-steps', '4000');
    await page.fill('#x-evalEvery', '5');
    await page.waitForFunction(() => window.__attnlab.experiment.config().train.evalEvery === 5 && window.__attnlab.experiment.config().train.steps === 4000);
    assert.match(await page.textContent('#x-preset-state'), /steps, evaluate every differ from the study's settings/);
    await page.click('#x-play');
    await page.waitForFunction(() => window.__attnlab.experiment.runs().some((r) => r.history.length >= 2), null, { timeout: 120000 });
    await page.click('#x-pause');
    await page.waitForFunction(() => /paused/.test(document.querySelector('#x-status').textContent), null, { timeout: 10000 });
    const status = await page.textContent('#x-status');
    assert.doesNotMatch(status, /slowest run at step/, status);
    assert.match(status, /\d paused \(step \d+(–\d+)?\)/, `the paused runs' steps: ${status}`);
    assert.match(status, /\d queued/, `the queued runs counted apart: ${status}`);
    await page.click('#x-cancel');
    await xIdle(page);

    // Explore: the header's badge follows the Build menu
    await page.click('#tab-explore');
    await page.selectOption('#build-select', 'scalar');
    await page.waitForFunction(() => document.querySelector('#timing').dataset.build === 'scalar', null, { timeout: 30000 });
    assert.equal(await page.textContent('#build-badge'), 'scalar build');
    assert.equal(await page.getAttribute('#build-badge', 'data-build'), 'scalar');
    assertNoProblems(page);
  });
});
