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

  test('a run cancelled part-way is never called the study\'s settings nor judged against it; a threshold crossed before stopping is marked as such', async (t) => {
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

  test('the scaling chart states the slopes it draws: two default runs recorded in a row give softmax ≈ 2 and linear ≈ 1; no advice the form does not offer', async (t) => {
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

  test('status and labels: the status line counts training and queued runs apart; the badge names the build that ran; the active preset is marked and an edit says it left it', async (t) => {
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

  test('history: switching views is a step Back undoes; each view keeps its own state in the link', async (t) => {
    const page = await newPage(t, { hash: '#v=linear&n=12', viewport: DESKTOP });
    const view = () => page.evaluate(() => document.body.dataset.currentView);
    const depth = await page.evaluate(() => history.length);
    await page.click('#tab-experiment');
    await page.waitForFunction(() => window.__attnlab.experiment.config());
    assert.equal(await page.evaluate(() => history.length), depth + 1, 'a new history entry, not a replaced one');
    assert.match(page.url(), /#view=experiment&x\./);
    assert.match(page.url(), /[#&]v=linear(&|$)/, `Explore's settings stay in the Experiment view's link: ${page.url()}`);
    assert.match(page.url(), /[#&]n=12(&|$)/);
    // an edit in the Experiment view is kept in its link, and then in Explore's
    await page.fill('#x-steps', '77');
    await page.waitForFunction(() => /x\.steps=77/.test(location.hash));
    // Back: Explore as it was, the page still open
    await page.goBack();
    await page.waitForFunction(() => document.body.dataset.currentView === 'explore');
    assert.match(page.url(), /^http:\/\/localhost:\d+\/web\/#/, 'still the page');
    assert.equal((await page.evaluate(() => window.__attnlab.snapshot())).variant, 'linear');
    assert.equal(await page.inputValue('#dim-n'), '12');
    // Forward: the Experiment view with its edit
    await page.goForward();
    await page.waitForFunction(() => document.body.dataset.currentView === 'experiment');
    assert.equal((await X(page, (x) => x.config())).train.steps, 77);
    assert.equal(await page.isHidden('#hash-warning'), true, 'nothing in the links was ignored');
    // switching back by the tab: Explore's link carries the Experiment view's edited config
    await page.click('#tab-explore');
    assert.equal(await view(), 'explore');
    assert.match(page.url(), /[#&]v=linear/);
    assert.match(page.url(), /x\.steps=77/, `the Experiment view's config stays in Explore's link: ${page.url()}`);
    assert.doesNotMatch(page.url(), /view=experiment/);
    // that link opened afresh restores both views
    const again = await newPage(t, { hash: new URL(page.url()).hash, viewport: DESKTOP });
    assert.equal(await again.evaluate(() => document.body.dataset.currentView), 'explore');
    assert.equal((await again.evaluate(() => window.__attnlab.snapshot())).variant, 'linear');
    assert.equal((await X(again, (x) => x.config())).train.steps, 77);
    assert.equal(await again.isHidden('#hash-warning'), true);
    assertNoProblems(page);
    assertNoProblems(again);
  });

  test('the estimate before training schedules what the run does: its runs on the lanes it shows, each run\'s steps and evaluations', async (t) => {
    // three runs on two lanes or more, evaluated often: every part of the schedule counts
    const hash = '#view=experiment&' + Object.entries({ task: 'copy', seqLen: 16, vocab: 8, vars: 'softmax,linear,dense', dModel: 32, heads: 2, layers: 2, dFF: 64, steps: 300, batch: 16, lr: 0.003, warmup: 10, evalEvery: 10, evalBatch: 128, seed: 3 })
      .map(([k, v]) => `x.${k}=${v}`).join('&');
    const page = await newPage(t, { hash, viewport: DESKTOP });
    await page.waitForFunction(() => document.querySelector('#x-estimate').dataset.ms, null, { timeout: 60000 });
    const estimate = Number(await page.getAttribute('#x-estimate', 'data-ms'));
    assert.match(await page.textContent('#x-estimate'), /^Before you start: 3 runs × 300 steps, \d at a time: about .+ here \(measured: .+ at once, on this machine\)\.$/);
    assert.ok(estimate > 0, `estimate ${estimate}`);
    // The schedule without a clock (timings compared across minutes on a shared machine made this
    // test flaky): with the same timings for every variant, one more ms a step must add a run's
    // steps once for each run on the busiest lane, and one more ms an evaluation its evaluations,
    // which must be as many as each run then records.
    const lanes = Number((await page.textContent('#x-estimate')).match(/(\d) at a time/)[1]);
    const perLane = Math.ceil(3 / lanes);
    const at = (msPerStep, evalMs) => X(page, (x, m) => x.estimateMsFor(m),
      Object.fromEntries(['softmax', 'linear', 'dense'].map((n) => [n, { msPerStep, evalMs, startMs: 100 }])));
    const base = await at(1, 1);
    assert.equal(await at(2, 1) - base, 300 * perLane, `one ms more a step, ${lanes} lanes`);
    const evalsPerRun = (await at(1, 2) - base) / perLane;
    await page.evaluate(async () => { // Train, then wait for the runs to start and to end
      const x = window.__attnlab.experiment;
      document.querySelector('#x-play').click();
      while (!x.active()) await new Promise((r) => setTimeout(r, 10));
      while (x.active()) await new Promise((r) => setTimeout(r, 10));
    });
    await xIdle(page);
    const runs = await X(page, (x) => x.runs());
    assert.equal(runs.length, 3);
    for (const r of runs) {
      assert.equal(r.steps, 300, `${r.variant}: steps`);
      assert.equal(r.history.length, evalsPerRun, `${r.variant}: the run evaluated ${r.history.length} times, the estimate counts ${evalsPerRun}`);
    }
    // the legend's losses say their unit (nats), beside accuracy or bits per character
    const heads = await page.$$eval('#x-legend th[scope=col]', (ths) => ths.map((th) => th.textContent));
    assert.ok(heads.includes('train loss (nats)') && heads.includes('held-out loss (nats)'), heads.join(' | '));
    assertNoProblems(page);
  });

  test('labels: the fixed pattern the page starts on is in the link and the menu names the library\'s default; an empty chart has a plain axis clear of its title; losses say nats', async (t) => {
    const page = await newPage(t, { hash: '#v=fixed', viewport: DESKTOP });
    assert.equal(await page.inputValue('#opt-pattern'), 'previous');
    assert.match(page.url(), /o\.fixed\.pattern=previous/, `the link records the pattern that ran: ${page.url()}`);
    const labels = await page.$$eval('#opt-pattern option', (os) => Object.fromEntries(os.map((o) => [o.value, o.textContent])));
    assert.equal(labels.current, 'current (library default)');
    assert.equal(labels.previous, 'previous');
    // a link with another pattern keeps it
    const next = await newPage(t, { hash: '#v=fixed&o.fixed.pattern=next', viewport: DESKTOP });
    assert.equal(await next.inputValue('#opt-pattern'), 'next');
    assert.match(next.url(), /o\.fixed\.pattern=next/);
    assert.doesNotMatch(next.url(), /pattern=previous/);

    // your own text, not typed yet: the charts are empty
    const x = await newPage(t, { hash: '#view=experiment&x.task=text&x.source=own&x.vars=softmax,linear', viewport: DESKTOP });
    await x.waitForFunction(() => document.querySelectorAll('#x-curves svg').length === 2);
    const charts = await x.$$eval('#x-curves svg', (svgs) => svgs.map((svg) => {
      const texts = [...svg.querySelectorAll('text')];
      const title = texts.find((tx) => /rotate/.test(tx.getAttribute('transform') ?? ''));
      const tb = title.getBoundingClientRect();
      const yTicks = texts.filter((tx) => tx.getAttribute('text-anchor') === 'end');
      return { title: title.textContent, titleRight: tb.right, ticks: yTicks.map((tx) => ({ text: tx.textContent, left: tx.getBoundingClientRect().left })) };
    }));
    for (const c of charts) {
      assert.ok(c.ticks.length >= 2, `${c.title}: a y axis with ticks`);
      for (const tk of c.ticks) {
        assert.doesNotMatch(tk.text, /e-/, `${c.title}: a plain tick, not ${tk.text}`);
        assert.ok(tk.left >= c.titleRight, `${c.title}: tick ${tk.text} (left ${tk.left}) clear of the axis title (right ${c.titleRight})`);
      }
    }
    assert.equal(charts[0].title, 'cross-entropy (nats)');
    assertNoProblems(page);
    assertNoProblems(next);
    assertNoProblems(x);
  });

  test('maps: Tab onto the y heatmap opens no tooltip over A (the read-out says the cell; the arrows open it); the enlarged map has its colour legend; a bad cell is said once', async (t) => {
    const page = await newPage(t, { viewport: DESKTOP });
    await page.focus('#output-map canvas.hm-canvas');
    const tip = () => page.evaluate(() => window.__attnlab.tooltip());
    assert.equal((await tip()).visible, false, 'no tooltip on arriving by Tab');
    assert.match(await page.textContent('#output-map'), /y\[0, 0\]/, 'the read-out names the cell');
    await page.keyboard.press('ArrowRight');
    assert.equal((await tip()).visible, true, 'the arrows open it');
    assert.match((await tip()).text, /y\[0, 1\]/);
    // a cell typed as no number: one message, in the editor's notation
    const cell = page.locator('input.cell[data-array="q"][data-index="1"]');
    await cell.fill('abc');
    await cell.press('Enter');
    await page.waitForFunction(() => !document.querySelector('#cell-error').hidden);
    await page.evaluate(() => window.__attnlab.idle());
    const said = await page.evaluate(() => [...document.querySelectorAll('[role=alert]')].filter((e) => !e.hidden && e.textContent.trim()).map((e) => e.textContent));
    assert.equal(said.filter((x) => /abc|NaN|q\[0/.test(x)).length, 1, `one message names the cell: ${JSON.stringify(said)}`);
    assert.ok(said.every((x) => !/q\[0\]\[1\]|index 1/.test(x)), `one notation: ${JSON.stringify(said)}`);

    // the Experiment view: a tiny run, then a map enlarged
    const x = await newPage(t, { hash: '#view=experiment&x.task=copy&x.seqLen=8&x.vocab=6&x.vars=softmax&x.dModel=16&x.heads=2&x.layers=1&x.dFF=32&x.steps=20&x.batch=8&x.evalEvery=10&x.evalBatch=16&x.seed=3', viewport: DESKTOP });
    await x.click('#x-play');
    await xIdle(x);
    await x.click('#x-inspect canvas.x-map');
    await x.waitForFunction(() => document.querySelector('#x-map-dialog').open);
    const legend = x.locator('#x-map-dialog .legend');
    assert.equal(await legend.count(), 1, 'a colour legend in the dialog');
    assert.match(await legend.textContent(), /attention weight/);
    assert.equal(await x.locator('#x-map-dialog .legend canvas.legend-bar').count(), 1);
    assertNoProblems(page);
    assertNoProblems(x);
  });
});
