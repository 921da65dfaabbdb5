// Browser tests of the page's Experiment view (web/experiment/, web/experiment-worker.js) with
// playwright-core and the system Chromium.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/experiment.test.mjs
//
// Tiny models and a few dozen steps, so the whole file takes well under two minutes on two cores.
// The numbers the page shows are checked against lab.train run in Node on the same config and
// the same (SIMD) build: training is deterministic for a build, so they must be equal, bit for
// bit. No timing assertions.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, BINDING, ARTIFACTS, SUMMARY_FIXTURE, startEnv, stopEnv, newPage, assertNoProblems, assertClose } from './harness.mjs';
import { DEFAULT_TEXT } from '../../src/js/tasks.js'; // the page's text when its box is empty

let binding, simdLab;
const fixture = JSON.parse(fs.readFileSync(SUMMARY_FIXTURE, 'utf8'));

/** A hash for the Experiment view: tiny copy-task models unless overridden. */
function hashOf(over = {}) {
  const x = { task: 'copy', seqLen: 8, vocab: 6, vars: 'softmax,linear', dModel: 16, heads: 2, layers: 1, dFF: 32, steps: 30, batch: 8, lr: 0.003, warmup: 3, evalEvery: 10, evalBatch: 16, seed: 3, ...over };
  return '#view=experiment&' + Object.entries(x).map(([k, v]) => `x.${k}=${encodeURIComponent(v).replace(/%2C/g, ',')}`).join('&');
}

const X = (page, fn, arg) => page.evaluate(([f, a]) => new Function('x', 'a', `return (${f})(x, a)`)(window.__attnlab.experiment, a), [fn.toString(), arg]);
const runsOf = (page) => X(page, (x) => x.runs());
const idle = (page) => X(page, (x) => x.idle());

/** What lab.train gives in Node for the page's config of one variant (the SIMD build, as the page). */
async function nodeRun(cfg, name, { stopAt } = {}) {
  const { tasks } = binding;
  const task = tasks[cfg.task]({ ...cfg.knobs, ...(cfg.task === 'text' ? { text: cfg.text || DEFAULT_TEXT } : {}) });
  // the page's own config → lab.model / lab.train arguments (a plain module: Node can load it)
  const { modelConfig, trainOptions, useLabVariants } = await import(pathToFileURL(path.join(ROOT, 'web', 'experiment', 'config.js')).href);
  useLabVariants(simdLab.variants); // as the page does with its binding's
  const config = modelConfig(cfg, task, name);
  const model = simdLab.model(config);
  const controller = new AbortController();
  const res = await simdLab.train(model, task, {
    ...trainOptions(cfg), signal: controller.signal,
    // abort before step stopAt runs, as the page's Cancel did (a settled promise makes train() look)
    pause: stopAt == null ? undefined : ({ step }) => (step === stopAt ? (controller.abort(), Promise.resolve()) : undefined),
  });
  return { res, model };
}

// lr as the model receives it (float32, attn_model_adamw): the schedule's Math.cos is left
// implementation-approximated by ECMAScript, and Chromium's V8 and Node's differ in its last bit
// of a double at some steps (seen at step 250 of 400), which never reaches the training
const numbers = (history) => history.map(({ step, loss, accuracy, evalLoss, evalAccuracy, lr, alpha }) => ({ step, loss, accuracy, evalLoss, evalAccuracy, lr: Math.fround(lr), alpha }));

describe('attnlab page: the Experiment view', () => {
  before(async () => {
    ({ binding } = await startEnv());
    simdLab = await binding.init({ simd: true });
  });
  after(stopEnv);

  test('two variants train in parallel workers (a third queued); curves, maps and α render; the numbers equal lab.train in Node', async (t) => {
    const page = await newPage(t, { hash: hashOf({ vars: 'softmax,mixture,linear' }) });
    assert.equal(await page.isVisible('#experiment-view'), true, 'the link opens the Experiment view');
    assert.equal(await page.isVisible('#main'), false, 'Explore is hidden');
    await page.click('#x-play');
    await idle(page);
    const runs = await runsOf(page);
    const cfg = await X(page, (x) => x.config());
    assert.deepEqual(runs.map((r) => [r.variant, r.status]), [['softmax', 'done'], ['mixture', 'done'], ['linear', 'done']]);
    const parallel = Math.min(3, await X(page, (x) => x.maxParallel()));
    assert.equal(await X(page, (x) => x.peakRunning()), parallel, `${parallel} workers trained at once`);

    // the page's numbers are lab.train's in Node on the same config and build, exactly
    const inspected = await X(page, (x) => x.inspected());
    for (const r of runs) {
      assert.equal(r.build, 'simd');
      const { res, model } = await nodeRun(cfg, r.variant);
      assert.deepEqual(numbers(r.history), numbers(res.history), `${r.variant}: history`);
      assert.equal(r.parameterCount, model.parameterCount);
      // the maps shown are the trained model's attention on the held-out sequence shown
      const shown = inspected[r.variant];
      for (let l = 0; l < cfg.model.layers; l++) {
        for (let h = 0; h < cfg.model.heads; h++) {
          assertClose(shown.maps[l][h], Array.from(model.attentionMap(Int32Array.from(shown.tokens), { layer: l, head: h })), `${r.variant} L${l} H${h} map`, 0, 0);
        }
      }
      model.dispose();
    }

    // curves: a training and a held-out loss line and an accuracy line per variant; the legend table
    assert.equal(await page.locator('#x-chart-loss svg polyline').count(), 6);
    assert.equal(await page.locator('#x-chart-accuracy svg polyline').count(), 3);
    assert.equal(await page.locator('#x-legend tbody tr').count(), 3);
    const shownAcc = await page.$$eval('#x-legend td.x-acc', (tds) => tds.map((td) => Number(td.dataset.value)));
    assert.deepEqual(shownAcc, runs.map((r) => r.final.evalAccuracy));
    await page.click('input[name="x-axis"][value="time"]');
    assert.match(await page.textContent('#x-chart-loss svg'), /wall time/);
    // the dark theme redraws the charts in its own, lighter colours
    const stroke = () => page.getAttribute('#x-chart-accuracy svg polyline', 'stroke');
    const light = await stroke();
    await page.click('#theme-toggle'); // auto → light → dark
    await page.click('#theme-toggle');
    await page.waitForFunction((was) => document.querySelector('#x-chart-accuracy svg polyline')?.getAttribute('stroke') !== was, light);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.scheme), 'dark');

    // α of the mixture, per head over training
    assert.equal(await page.locator('#x-alpha .x-alpha-fig').count(), cfg.model.layers * cfg.model.heads);
    assert.equal(await page.locator('#x-alpha polygon').count(), 2 * cfg.model.layers * cfg.model.heads);

    // predictions, right / wrong marked, and the layer × head grid of every model
    assert.equal(await page.locator('#x-maps canvas.x-map').count(), 3 * cfg.model.layers * cfg.model.heads);
    const marks = await page.$$eval('#x-predictions tr[data-variant="softmax"] td.tok', (tds) => tds.map((td) => td.className));
    const asked = inspected.softmax.targets.filter((x) => x >= 0).length;
    assert.equal(marks.filter((c) => /right|wrong/.test(c)).length, asked);
    const right = inspected.softmax.predictions.filter((p, i) => p >= 0 && p === inspected.softmax.targets[i]).length;
    assert.equal(marks.filter((c) => /right/.test(c)).length, right);
    // click to enlarge: the map with the tokens as labels
    await page.click('#x-maps canvas.x-map[data-variant="linear"]');
    assert.equal(await page.isVisible('#x-map-dialog canvas.x-map-large'), true);
    assert.match(await page.textContent('#x-map-dialog .x-dialog-title'), /linear/);
    await page.click('#x-map-dialog-close');

    // the recorded study (the test's stand-in, fixtures/summary.json) next to this run; the two
    // questions at the top of the view
    assert.equal(await page.locator('#x-answers-table tbody tr').count(), 3);
    assert.equal(await page.textContent('#x-answers-table tr[data-variant="softmax"] .x-recorded'), `${(100 * fixture.headline.copy.variants.softmax.mean).toFixed(1)} %`);
    assert.match(await page.textContent('#x-study'), /Is token-to-token attention necessary\?[\s\S]*Is softmax necessary\?/);
    assert.ok(await page.evaluate(() => document.querySelector('#x-study').getBoundingClientRect().top < document.querySelector('#x-setup').getBoundingClientRect().top), 'the answers come first');
    await page.screenshot({ path: path.join(ARTIFACTS, 'experiment-desktop.png'), fullPage: true });
    assertNoProblems(page);
  });

  test('pause holds, step runs to the next evaluation, resume and cancel work, and the numbers still equal Node', async (t) => {
    // long enough to pause mid-run; one variant queued behind two running ones on two cores
    const page = await newPage(t, { hash: hashOf({ seqLen: 16, vocab: 8, dModel: 32, heads: 2, layers: 2, dFF: 64, steps: 4000, batch: 16, evalEvery: 5, evalBatch: 32, vars: 'softmax,linear,random' }) });
    await page.click('#x-play');
    await page.waitForFunction(() => window.__attnlab.experiment.runs().some((r) => r.history.length >= 2));
    await page.click('#x-pause');
    assert.equal(await X(page, (x) => x.paused()), true);
    // the curves are live: drawn while training, before any run has finished
    await page.waitForFunction(() => document.querySelectorAll('#x-chart-accuracy svg polyline').length > 0);
    assert.match(await page.textContent('#x-status'), /paused/);
    await page.waitForTimeout(300); // a report already under way may still arrive
    const held = (await runsOf(page)).map((r) => r.history.length);
    await page.waitForTimeout(500);
    assert.deepEqual((await runsOf(page)).map((r) => r.history.length), held, 'nothing trains while paused');
    assert.equal(await page.textContent('#x-play'), '▶ Resume');

    await page.click('#x-step');
    await page.waitForFunction((before) => window.__attnlab.experiment.runs().every((r, i) => r.status !== 'training' && (r.status !== 'paused' || r.history.length > before[i])), held);
    const stepped = (await runsOf(page)).map((r) => r.history.length);
    for (const [i, r] of (await runsOf(page)).entries()) if (r.status === 'paused') assert.equal(stepped[i], held[i] + 1, `${r.variant}: one evaluation further`);
    await page.waitForTimeout(400);
    assert.deepEqual((await runsOf(page)).map((r) => r.history.length), stepped, 'held again after the step');

    await page.click('#x-play');
    await page.waitForFunction((before) => window.__attnlab.experiment.runs().some((r, i) => r.history.length > before[i] + 2), stepped);
    await page.click('#x-cancel');
    await idle(page);
    const runs = await runsOf(page);
    const cfg = await X(page, (x) => x.config());
    for (const r of runs) {
      assert.equal(r.status, 'cancelled', `${r.variant} stopped`);
      if (!r.history.length) continue; // still queued when cancelled
      assert.ok(r.steps < cfg.train.steps);
      // paused, stepped, resumed and cancelled: still exactly what Node computes up to that step
      const { res, model } = await nodeRun(cfg, r.variant, { stopAt: r.steps });
      assert.deepEqual(numbers(r.history), numbers(res.history), `${r.variant}: history`);
      model.dispose();
    }
    assert.ok(runs.some((r) => r.history.length), 'something trained');
    // the status gives each run's length and where each cancelled run stopped (never a sum of runs)
    const status = await page.textContent('#x-status');
    assert.match(status, new RegExp(`^3 runs × ${cfg.train.steps} steps each · 3 cancelled`));
    assert.ok(status.includes(`cancelled at step ${runs.map((r) => r.steps).join(', ')}`), `the steps taken: ${status}`);
    await page.click('#x-reset');
    assert.deepEqual(await runsOf(page), []);
    // the buttons follow the runner on the next animation frame: wait for it, do not race it
    await page.waitForFunction(() => document.querySelector('#x-reset').disabled, null, { timeout: 5000 });
    // the held-out ◀ / ▶ after a reset: they ask no ended worker (that would never answer)
    await page.evaluate(() => {
      document.querySelector('#x-inspect button[aria-label="Next sequence"]').click();
      document.querySelector('#x-inspect button[aria-label="Previous sequence"]').click();
    });
    await page.waitForTimeout(300);
    assert.doesNotMatch(await page.textContent('#x-inspect [role=status]'), /reading/, 'no read of the reset models left hanging');
    assert.match(await page.textContent('#x-inspect [role=status]'), /^Reset: train again/, 'nothing asked of the reset models');
    // and a worker's client refuses calls once it has ended, rather than waiting for ever
    const refused = await page.evaluate(async () => {
      const { TrainClient } = await import(new URL('experiment/runner.js', location.href).href);
      const c = new TrainClient(() => {});
      c.terminate();
      return c.call('inspect', { index: 0 }).then(() => 'answered', (err) => err.code);
    });
    assert.equal(refused, 'CANCELLED');
    assertNoProblems(page);
  });

  test('step then resume at once: the runs still finish; a run cancelled while loading shows no results', async (t) => {
    // paused while loading, then Step and Resume in one go (before the step's evaluation is in)
    const page = await newPage(t, { hash: hashOf({ seqLen: 16, vocab: 8, dModel: 32, heads: 2, layers: 2, dFF: 64, steps: 200, batch: 16, evalEvery: 10, evalBatch: 16, vars: 'softmax,linear' }) });
    await page.evaluate(async () => {
      document.querySelector('#x-play').click();
      await new Promise(requestAnimationFrame); // the buttons follow on the next frame
      document.querySelector('#x-pause').click();
    });
    await page.waitForFunction(() => window.__attnlab.experiment.runs().every((r) => r.status === 'paused'));
    await page.waitForFunction(() => document.querySelector('#x-play').textContent === '▶ Resume' && !document.querySelector('#x-play').disabled);
    await page.evaluate(() => {
      document.querySelector('#x-step').click();
      document.querySelector('#x-play').click();
    });
    await X(page, (x) => x.idle(60000));
    const runs = await runsOf(page);
    assert.deepEqual(runs.map((r) => [r.variant, r.status, r.steps]), [['softmax', 'done', 200], ['linear', 'done', 200]]);
    assert.equal(await page.locator('#x-maps canvas.x-map').count(), 2 * 2 * 2, 'the maps of both models');
    assertNoProblems(page);

    // Cancel before the first training step: lab.train's step-0 evaluation of the untrained model
    // is no result; the runs show as cancelled and not trained, with no maps and no accuracy
    const early = await newPage(t, { hash: hashOf({ vars: 'softmax,linear' }) });
    await early.evaluate(async () => {
      document.querySelector('#x-play').click();
      await new Promise(requestAnimationFrame);
      document.querySelector('#x-cancel').click();
    });
    await idle(early);
    const stopped = await runsOf(early);
    for (const r of stopped) {
      assert.equal(r.status, 'cancelled', `${r.variant}: cancelled`);
      assert.equal(r.steps, 0, `${r.variant}: no step`);
      assert.deepEqual(r.history, [], `${r.variant}: no evaluation shown`);
      assert.equal(r.final, null);
      assert.equal(r.trained, false);
    }
    assert.equal(await early.locator('#x-maps canvas.x-map').count(), 0, 'no maps of untrained models');
    assert.match(await early.textContent('#x-inspect [role=status]'), /No model finished training/);
    assert.deepEqual(await early.$$eval('#x-answers-table td.x-yours', (tds) => tds.map((td) => td.textContent)), ['not trained', 'not trained']);
    assert.match(await early.textContent('#x-legend'), /not trained/);
    assert.match(await early.textContent('#x-status'), /^2 runs × 30 steps each · 2 cancelled · .* cancelled at step 0, 0$/);
    assertNoProblems(early);
  });

  test('the URL restores the config; Explore links still open Explore; the tabs switch views', async (t) => {
    const page = await newPage(t, { hash: hashOf({ task: 'recall', seqLen: 16, pairs: 4, vocab: 12, vars: 'dense,fixed', dModel: 32, heads: 4, layers: 2, dFF: 64, steps: 77, seed: 9, build: 'scalar' }) });
    const cfg = await X(page, (x) => x.config());
    assert.deepEqual(cfg.knobs, { seqLen: 16, pairs: 4, vocab: 12 });
    assert.deepEqual(cfg.variants, ['dense', 'fixed']);
    assert.deepEqual(cfg.model, { dModel: 32, heads: 4, layers: 2, dFF: 64 });
    assert.equal(cfg.train.steps, 77);
    assert.equal(cfg.seed, 9);
    assert.equal(cfg.build, 'scalar');
    assert.equal(await page.inputValue('#x-task'), 'recall');
    assert.equal(await page.inputValue('#x-knob-pairs'), '4');
    assert.equal(await page.inputValue('#x-steps'), '77');
    assert.equal(await page.isChecked('#x-variants input[value="fixed"]'), true);
    assert.equal(await page.isChecked('#x-variants input[value="softmax"]'), false);
    // the header's badge names the experiment's build here (Explore's badge is hidden), and follows the form
    assert.equal(await page.isVisible('#build-badge'), false);
    assert.equal(await page.textContent('#x-build-badge'), 'scalar build');
    await page.selectOption('#x-build', 'relaxed');
    assert.equal(await page.textContent('#x-build-badge'), 'relaxed SIMD build');
    await page.selectOption('#x-build', 'scalar');

    // an edit goes into the link, and the link brings it back in a new page
    await page.fill('#x-seed', '12');
    await page.check('#x-variants input[value="taylor"]');
    const link = await page.evaluate(() => location.hash);
    assert.match(link, /x\.seed=12/);
    assert.match(link, /x\.vars=dense,taylor,fixed/);
    const again = await newPage(t, { hash: link });
    const cfg2 = await X(again, (x) => x.config());
    assert.deepEqual(cfg2, { ...cfg, seed: 12, variants: ['dense', 'taylor', 'fixed'] });

    // a preset sets the task, the variants and the study's settings; the text task reads the corpus
    await page.click('button[data-preset="language"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().task === 'text');
    const cfg3 = await X(page, (x) => x.config());
    assert.deepEqual(cfg3.variants, ['softmax', 'dense', 'random', 'linear']);
    assert.equal(cfg3.source, 'corpus');
    // your own text: a box for it; presets, the task select and "Task defaults" keep what was typed
    await page.click('#x-source-own');
    assert.equal(await page.isVisible('#x-text'), true, 'the box for the user\'s own text');
    await page.fill('#x-text', 'my own words, typed here');
    await page.click('button[data-preset="language"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().source === 'corpus');
    assert.equal((await X(page, (x) => x.config())).text, 'my own words, typed here', 'a preset keeps the text');
    await page.click('#x-source-own');
    assert.equal(await page.inputValue('#x-text'), 'my own words, typed here');
    await page.click('#x-defaults');
    assert.equal(await page.inputValue('#x-text'), 'my own words, typed here', 'Task defaults keeps the text');
    await page.selectOption('#x-task', 'copy');
    await page.selectOption('#x-task', 'text');
    assert.equal(await page.inputValue('#x-text'), 'my own words, typed here', 'another task and back keeps the text');
    assert.equal((await X(page, (x) => x.config())).text, 'my own words, typed here');
    // the short paragraph instead: the text is kept for later, and not trained on
    await page.click('#x-source-paragraph');
    assert.equal(await page.isVisible('#x-text'), false);
    assert.equal(await X(page, (x) => x.text()), DEFAULT_TEXT);
    assert.equal((await X(page, (x) => x.config())).text, 'my own words, typed here');
    // the seed field's bound is decodeConfig's (and lab.train's): 2^32 − 1
    assert.equal(await page.getAttribute('#x-seed', 'max'), '4294967295');
    await page.fill('#x-seed', '4294967296');
    assert.equal(await page.getAttribute('#x-seed', 'aria-invalid'), 'true');
    assert.match(await page.textContent('#x-config-error'), /seed must be a whole number from 0 to 4294967295/);
    assert.equal(await X(page, (x) => x.configError()) != null, true);
    await page.fill('#x-seed', '4294967295');
    assert.equal(await page.getAttribute('#x-seed', 'aria-invalid'), 'false');
    assert.equal((await X(page, (x) => x.config())).seed, 4294967295);
    assert.equal(await X(page, (x) => x.configError()), null);

    // a link with parts the page cannot use says so and keeps the rest
    const bad = await newPage(t, { hash: hashOf({ vars: 'softmax,nosuch', dModel: 'big' }) });
    assert.equal(await bad.isVisible('#hash-warning'), true);
    assert.match(await bad.textContent('#hash-warning'), /nosuch/);
    assert.match(await bad.textContent('#hash-warning'), /x\.dModel=big/);
    assert.deepEqual((await X(bad, (x) => x.config())).variants, ['softmax']);

    // an Explore link (no view) opens Explore as before; the tabs switch, and the hash follows
    const explore = await newPage(t, { hash: '#v=linear&n=8&d=4&dv=4&seed=2&preset=random' });
    assert.equal(await explore.isVisible('#main'), true);
    assert.equal(await explore.isVisible('#experiment-view'), false);
    assert.equal(await explore.isVisible('#build-badge'), true);
    assert.equal(await explore.isVisible('#x-build-badge'), false);
    await explore.click('#tab-experiment');
    assert.equal(await explore.isVisible('#experiment-view'), true);
    assert.equal(await explore.isVisible('#build-badge'), false, 'Explore\'s build is not claimed for the experiment');
    assert.match(await explore.textContent('#x-build-badge'), /^SIMD build$/);
    assert.match(await explore.evaluate(() => location.hash), /^#view=experiment&x\.task=/);
    await explore.click('#tab-explore');
    assert.equal(await explore.isVisible('#main'), true);
    assert.match(await explore.evaluate(() => location.hash), /v=linear&n=8/, 'Explore keeps its state');
    for (const p of [page, again, bad, explore]) assertNoProblems(p);
  });

  test('a config the binding would refuse is caught before anything starts; bad knobs are named; a run that fails shows its AttnError once', async (t) => {
    const page = await newPage(t, { hash: hashOf({ dModel: 18, heads: 4, vars: 'softmax' }) });
    // the binding's rule (model.c: heads must divide dModel), next to Train, before any worker starts
    await page.waitForFunction(() => !document.querySelector('#x-config-error').hidden);
    assert.match(await page.textContent('#x-config-error'), /heads must divide dModel: 18 is not a multiple of 4/);
    assert.equal(await page.getAttribute('#x-heads', 'aria-invalid'), 'true');
    assert.equal(await page.isDisabled('#x-play'), true);
    await page.evaluate(() => document.querySelector('#x-play').click());
    assert.deepEqual(await runsOf(page), [], 'nothing started');
    assert.equal(await page.inputValue('#x-dModel'), '18', 'the form keeps what was typed');
    // knobs that do not fit together: tasks.js's message, and no run starts
    await page.selectOption('#x-task', 'recall');
    await page.fill('#x-knob-pairs', '20');
    await page.fill('#x-knob-vocab', '8');
    assert.match(await page.textContent('#x-config-error'), /pairs = 20 is too many for vocab 8/);
    await page.fill('#x-steps', '');
    assert.equal(await page.getAttribute('#x-steps', 'aria-invalid'), 'true');
    await page.waitForFunction(() => document.querySelector('#x-play').disabled, null, { timeout: 5000 });
    assertNoProblems(page);

    // a run that fails in its worker (here: the scalar build cannot be loaded): its AttnError in
    // the view, once for every run that failed the same way, and the form keeps every value
    const broken = await newPage(t, { hash: hashOf({ build: 'scalar' }) });
    await broken.route('**/dist/attnlab-scalar.wasm', (r) => r.fulfill({ status: 404, body: 'missing' }));
    await broken.click('#x-play');
    await idle(broken);
    const runs = await runsOf(broken);
    assert.deepEqual(runs.map((r) => [r.variant, r.status]), [['softmax', 'error'], ['linear', 'error']]);
    const shown = await broken.textContent('#x-run-error');
    assert.equal(shown.split('\n').length, 1, `one line for one error: ${shown}`);
    assert.ok(shown.startsWith(`softmax, linear (elu+1): ${runs[0].error.code} `), shown);
    assert.equal(await broken.inputValue('#x-steps'), '30');
    assert.deepEqual(broken.problems.filter((p) => !/404|scalar/.test(p)), [], 'no other problem');
  });

  test('text: generate with each trained model, ms per token plotted; export JSON and copy as code reproduce the run in Node', async (t) => {
    const page = await newPage(t, { hash: hashOf({ task: 'text', seqLen: 16, vars: 'softmax,linear', steps: 12, evalEvery: 6, batch: 4 }).replace(/&x\.vocab=[^&]*/, '') });
    await page.click('#x-play');
    await idle(page);
    assert.equal(await page.isVisible('#x-generate'), true);
    await page.fill('#x-gen-prompt', 'the ');
    await page.click('#x-gen-run');
    await page.waitForSelector('#x-gen-chart svg polyline', { state: 'attached' });
    assert.equal(await page.locator('#x-gen-out .x-gen-line').count(), 2);
    assert.equal(await page.locator('#x-gen-chart svg polyline').count(), 2);

    // generation timed to long sequences with untrained models of the same widths: Cancel ends it
    // mid-variant; then a short length (the test hook, so the test stays fast) runs to the end
    assert.match(await page.textContent('#x-longgen-run'), /Time generation to 2048 positions/);
    await page.click('#x-longgen-run');
    await page.waitForFunction(() => /Timing softmax .*generating/.test(document.querySelector('#x-longgen-status').textContent));
    await page.click('#x-longgen-cancel');
    await page.waitForFunction(() => window.__attnlab.experiment.longGeneration()?.cancelled);
    assert.match(await page.textContent('#x-longgen-status'), /Cancelled/);
    assert.equal(await page.isEnabled('#x-longgen-run'), true);
    const positions = 128;
    await X(page, (x, n) => x.setLongGenerationLength(n), positions);
    assert.match(await page.textContent('#x-longgen-run'), /to 128 positions/);
    await page.click('#x-longgen-run');
    await page.waitForFunction(() => window.__attnlab.experiment.longGeneration()?.cancelled === false, null, { timeout: 60000 });
    const long = await X(page, (x) => x.longGeneration());
    assert.deepEqual(long.series.map((s) => s.name), ['softmax', 'linear']);
    assert.deepEqual(long.na, []);
    const windows = Math.ceil((positions - 1) / 32); // medians of 32 steps over the 127 generated tokens
    for (const s of long.series) {
      assert.equal(s.points.length, windows, `${s.name}: one point per window`);
      assert.ok(s.points.every(([x, ms], i) => (i === 0 || x > s.points[i - 1][0]) && ms >= 0), `${s.name}: positions increase`);
      assert.equal(s.points.at(-1)[0], positions - 1);
    }
    const lines = await page.$$eval('#x-longgen-chart svg polyline', (ps) => ps.map((p) => p.getAttribute('points').split(' ').map((xy) => Number(xy.split(',')[0]))));
    assert.equal(lines.length, 2, 'a line per variant');
    for (const xs of lines) {
      assert.equal(xs.length, windows);
      assert.ok(xs.every((x, i) => i === 0 || x > xs[i - 1]), 'drawn left to right');
    }
    assert.equal(await page.locator('#x-longgen-legend li').count(), 2);
    assert.match(await page.textContent('#x-longgen-note'), /speed only: untrained models of the same widths/i);

    // export the run as JSON
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#x-export-json')]);
    const file = path.join(os.tmpdir(), `attnlab-exp-${process.pid}.json`);
    await download.saveAs(file);
    const exported = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.rmSync(file);
    const runs = await runsOf(page);
    assert.deepEqual(exported.runs.map((r) => r.history), runs.map((r) => r.history));
    assert.equal(exported.config.task, 'text');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#x-export-svg')]);
    assert.match(svg.suggestedFilename(), /^attnlab-text-curves-by-step\.svg$/);
    const svgText = fs.readFileSync(await svg.path(), 'utf8');
    assert.match(svgText, /^<svg xmlns/);
    assert.equal((svgText.match(/<polyline/g) ?? []).length, 3 * runs.length, 'both charts: two loss lines and an accuracy line per variant');
    assert.match(svgText, /softmax: /, 'with a legend');
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('#x-export-png')]);
    const pngBytes = fs.readFileSync(await png.path());
    assert.deepEqual([...pngBytes.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG file');

    // copy as code: run the snippet in Node against this build; it gives the page's final numbers
    await page.click('#x-copy-code');
    const code = await page.inputValue('#code-text');
    assert.match(code, /lab\.train\(model, task/);
    const script = path.join(os.tmpdir(), `attnlab-snippet-${process.pid}.mjs`);
    fs.writeFileSync(script, code.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(BINDING).href)}`)
      .replace(/onProgress: \(p\) => console\.log\([^\n]*\),/, '') // quiet: the snippet logs progress
      .replace('console.table(results);', 'export default results;'));
    const { default: results } = await import(pathToFileURL(script).href);
    fs.rmSync(script);
    for (const r of runs) {
      const { loss, accuracy, evalLoss, evalAccuracy, evalBits } = r.final;
      assert.deepEqual(results[r.variant], { loss, accuracy, evalLoss, evalAccuracy, evalBits }, `${r.variant}: the snippet's final numbers`);
    }
    assertNoProblems(page);
  });

  test('phone layout: no horizontal overflow, controls reachable, a run renders', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 10, evalEvery: 5 }), viewport: { width: 390, height: 844 } });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(await overflow() <= 0, `body wider than the phone by ${await overflow()} px`);
    for (const id of ['#tab-explore', '#x-task', '#x-play', '#x-reset', '#x-copy-code']) {
      await page.locator(id).scrollIntoViewIfNeeded();
      assert.equal(await page.isVisible(id), true, `${id} visible`);
    }
    await page.click('#x-play');
    await idle(page);
    assert.ok(await page.locator('#x-maps canvas.x-map').count() > 0);
    assert.ok(await overflow() <= 0, `after a run: wider by ${await overflow()} px`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'experiment-phone.png'), fullPage: true });
    assertNoProblems(page);
  });
});
