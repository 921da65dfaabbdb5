// Browser tests of the Experiment view as the way to the recorded study (issue 19, items 1–3):
// the presets are the study's experiments at its settings and learning rates, say how long they
// take before they start and train exactly the recorded runs; several seeds; each variant's
// verdict beside the study's count and interval; the chance line; the corpus fetched only when
// the text task is chosen, in bits per character; a text of one's own said to differ from the
// study's, and a repetitive one said to be memorised.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/experiment-study.test.mjs
//
// The recorded study is tests/browser/fixtures/summary.json (a study at 2 % of its steps: short
// runs). The page's numbers are checked against lab.train in Node (SIMD build) and against the
// recorded values. No timing assertions.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, SUMMARY_FIXTURE, startEnv, stopEnv, newPage, assertNoProblems } from './harness.mjs';

const DESKTOP = { width: 1440, height: 900 };
const fixture = JSON.parse(fs.readFileSync(SUMMARY_FIXTURE, 'utf8'));
let binding, simdLab, config;

function hashOf(over = {}) {
  const x = { task: 'copy', seqLen: 8, vocab: 6, vars: 'softmax,linear', dModel: 16, heads: 2, layers: 1, dFF: 32, steps: 30, batch: 8, lr: 0.003, warmup: 3, evalEvery: 10, evalBatch: 16, seed: 3, ...over };
  return '#view=experiment&' + Object.entries(x).filter(([, v]) => v != null).map(([k, v]) => `x.${k}=${encodeURIComponent(v).replace(/%2C/g, ',')}`).join('&');
}
const X = (page, fn, arg) => page.evaluate(([f, a]) => new Function('x', 'a', `return (${f})(x, a)`)(window.__attnlab.experiment, a), [fn.toString(), arg]);
const xIdle = (page) => X(page, (x) => x.idle(300000));
const numbers = (history) => history.map(({ step, loss, accuracy, evalLoss, evalAccuracy, evalBits, lr }) => ({ step, loss, accuracy, evalLoss, evalAccuracy, evalBits, lr }));
const six = (x) => Number(x.toPrecision(6));

/** lab.train in Node on the page's config for one run (the SIMD build, as the page and the study). */
async function nodeRun(cfg, name, seed) {
  const task = cfg.task === 'text' && cfg.source === 'corpus' ? binding.tasks.text({ ...cfg.knobs }) : config.makeTask(cfg);
  const model = simdLab.model(config.modelConfig(cfg, task, name, seed));
  const res = await simdLab.train(model, task, config.trainOptions(cfg, name, seed));
  model.dispose();
  return res;
}

describe('attnlab page: the Experiment view and the recorded study', () => {
  before(async () => {
    ({ binding } = await startEnv());
    simdLab = await binding.init({ simd: true, threads: 1 });
    config = await import(pathToFileURL(path.join(ROOT, 'web', 'experiment', 'config.js')).href);
    config.useLabVariants(simdLab.variants); // as the page does with its binding's
  });
  after(stopEnv);

  test('1. the presets are the study\'s experiments at its settings and learning rates, say how long they take before they start, and train its runs exactly', async (t) => {
    const page = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP });
    const want = {
      'token-copy': ['copy', ['softmax', 'dense', 'random', 'random-frozen', 'fixed']],
      'token-reverse': ['reverse', ['softmax', 'dense', 'random', 'random-frozen', 'fixed']],
      'softmax-copy': ['copy', ['softmax', 'linear', 'efficient', 'taylor']],
      'softmax-recall': ['recall', ['softmax', 'linear', 'efficient', 'taylor']],
      lookup: ['recall', ['softmax', 'dense', 'random', 'linear']],
      language: ['text', ['softmax', 'dense', 'random', 'linear']],
    };
    assert.deepEqual(await page.$$eval('button[data-preset]', (bs) => bs.map((b) => b.dataset.preset)), Object.keys(want));
    for (const [id, [task, vars]] of Object.entries(want)) {
      if (id === 'language') assert.deepEqual(page.requests.filter((u) => /kjv/.test(u)), [], 'the corpus is not fetched before the text task is chosen');
      await page.click(`button[data-preset="${id}"]`);
      await page.waitForFunction(([tk, v]) => { const c = window.__attnlab.experiment.config(); return c.task === tk && c.variants.join() === v; }, [task, vars.join()]);
      const cfg = await X(page, (x) => x.config());
      const h = fixture.headline[task];
      for (const k of ['dModel', 'heads', 'layers', 'dFF']) assert.equal(cfg.model[k], h.settings[k], `${id}: ${k} is the study's`);
      for (const k of ['steps', 'batch', 'warmup', 'evalBatch']) assert.equal(cfg.train[k], h.settings[k], `${id}: ${k} is the study's`);
      assert.equal(cfg.train.evalEvery, h.evalEvery, `${id}: evaluated as often as the study`);
      for (const v of vars) assert.equal(config.lrOf(cfg, v), h.variants[v].lr, `${id}: ${v} trains at the learning rate the study chose for it`);
      // the task at its defaults as tasks.js gives them now (read at run time, not copied)
      if (task !== 'text') assert.deepEqual(config.knobsOf(config.makeTask(cfg)), config.knobsOf(binding.tasks[task]()), `${id}: the task's own defaults`);
      else {
        assert.equal(cfg.source, 'corpus');
        assert.equal(cfg.knobs.seqLen, binding.tasks.text().options.seqLen, 'the corpus\'s sequence length');
        await page.waitForFunction(() => window.__attnlab.experiment.corpus().state === 'ready', null, { timeout: 60000 });
        assert.ok(page.requests.some((u) => /kjv\.txt/.test(u)), 'chosen: the corpus is fetched');
        assert.match(await page.textContent('#x-corpus-status'), /The corpus is here: 4,137,847 characters/);
      }
      // before it starts: how long it will take here
      await page.waitForFunction((n) => new RegExp(`^Before you start: ${n} runs × \\d+ steps, \\d at a time: about .+ here \\(measured`).test(window.__attnlab.experiment.estimate()), vars.length, { timeout: 30000 });
    }

    // the token-to-token preset on copy, seed 1 on the SIMD build: the study's seed-1 runs, exactly
    await page.click('button[data-preset="token-copy"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().task === 'copy' && window.__attnlab.experiment.config().variants.length === 5);
    await page.fill('#x-seed', '1');
    await page.waitForFunction(() => /Before you start/.test(window.__attnlab.experiment.estimate()), null, { timeout: 30000 });
    await page.click('#x-play');
    await xIdle(page);
    const cfg = await X(page, (x) => x.config());
    const runs = await X(page, (x) => x.runs());
    const h = fixture.headline.copy;
    assert.deepEqual(runs.map((r) => [r.variant, r.seed, r.status]), cfg.variants.map((v) => [v, 1, 'done']));
    for (const r of runs) {
      const e = h.variants[r.variant];
      const recorded = e.values[e.seeds.indexOf(1)];
      assert.equal(six(r.final.evalAccuracy), recorded, `${r.variant}: the recorded seed-1 held-out accuracy`);
      const res = await nodeRun(cfg, r.variant, 1);
      assert.deepEqual(numbers(r.history), numbers(res.history), `${r.variant}: lab.train in Node`);
    }
    // verdicts: learned or not learned at the end, beside the study's count and interval
    const pct0 = (x) => `${Math.round(100 * x)}`;
    for (const v of cfg.variants) {
      const e = h.variants[v];
      const li = page.locator(`#x-verdicts li[data-variant="${v}"]`);
      const text = await li.textContent();
      const mine = runs.find((r) => r.variant === v).final.evalAccuracy >= 0.9 ? 'learned' : 'not learned';
      assert.equal(await li.getAttribute('data-verdict'), mine, `${v}: its verdict`);
      assert.ok(text.includes(`learned this on ${e.learned} of ${e.n} seeds (95 % CI ${pct0(e.wilson.lo)}–${pct0(e.wilson.hi)} %)`), `${v}: the recorded count and interval in "${text}"`);
      assert.match(text, /seed 1: the same held-out accuracy as recorded/);
      assert.equal(await page.getAttribute(`#x-legend tr[data-variant="${v}"]`, 'data-verdict'), mine);
    }
    // the chance level on the accuracy chart: one of the 15 content tokens
    const ref = await page.$eval('#x-chart-accuracy g.ref-line', (g) => ({ y: Number(g.dataset.y), text: g.textContent }));
    assert.ok(Math.abs(ref.y - 100 * h.chance.value) < 1e-4, `chance at ${ref.y} %, the study's ${100 * h.chance.value} %`);
    assert.match(ref.text, /chance 6\.7 %/);
    assertNoProblems(page);
  });

  test('1. with the repository\'s own experiments/summary.json: every preset at its recorded settings and rates; the token-to-token preset on seed 1 gives the recorded accuracies and counts', async (t) => {
    // The file a visitor gets, not the fixture: a re-recorded study changes the numbers, not this test.
    const real = JSON.parse(fs.readFileSync(path.join(ROOT, 'experiments', 'summary.json'), 'utf8'));
    const page = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP, summary: null });
    for (const p of config.PRESETS) {
      const h = real.headline[p.task];
      assert.ok(h, `the recorded study has the ${p.id} preset's task ${p.task}`);
      await page.click(`button[data-preset="${p.id}"]`);
      await page.waitForFunction(([tk, v]) => { const c = window.__attnlab.experiment.config(); return c.task === tk && c.variants.join() === v; }, [p.task, p.variants.join()]);
      const cfg = await X(page, (x) => x.config());
      for (const k of ['dModel', 'heads', 'layers', 'dFF']) assert.equal(cfg.model[k], h.settings[k], `${p.id}: ${k} is the recorded study's`);
      for (const k of ['steps', 'batch', 'warmup', 'evalBatch']) assert.equal(cfg.train[k], h.settings[k], `${p.id}: ${k} is the recorded study's`);
      assert.equal(cfg.train.evalEvery, h.evalEvery, `${p.id}: evaluated as often as the recorded study`);
      for (const v of p.variants) {
        assert.ok(h.variants[v], `${p.id}: the recorded study has ${v} on ${p.task}`);
        assert.equal(config.lrOf(cfg, v), h.variants[v].lr, `${p.id}: ${v} at the rate the recorded sweep chose`);
      }
    }
    await page.click('button[data-preset="token-copy"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().task === 'copy' && window.__attnlab.experiment.config().variants.length === 5);
    await page.fill('#x-seed', '1');
    await page.waitForFunction(() => window.__attnlab.experiment.config().seed === 1);
    await page.click('#x-play');
    await xIdle(page);
    const runs = await X(page, (x) => x.runs());
    const h = real.headline.copy;
    const pct0 = (x) => `${Math.round(100 * x)}`;
    for (const r of runs) {
      const e = h.variants[r.variant];
      assert.equal(six(r.final.evalAccuracy), e.values[e.seeds.indexOf(1)], `${r.variant}: the recorded seed-1 held-out accuracy`);
      const text = await page.textContent(`#x-verdicts li[data-variant="${r.variant}"]`);
      assert.ok(text.includes(`learned this on ${e.learned} of ${e.n} seeds (95 % CI ${pct0(e.wilson.lo)}–${pct0(e.wilson.hi)} %)`), `${r.variant}: the recorded count in "${text}"`);
      assert.match(text, /seed 1: the same held-out accuracy as recorded/);
    }
    assertNoProblems(page);
  });

  test('1. several seeds: each variant trains once per seed, each at its own learning rate; link and code carry both', async (t) => {
    const page = await newPage(t, { hash: hashOf({ seeds: 2, lrs: 'linear:0.01' }), viewport: DESKTOP });
    assert.match(await page.textContent('#x-seeds-note'), /seeds 3 to 4/);
    await page.click('#x-play');
    await xIdle(page);
    const cfg = await X(page, (x) => x.config());
    assert.equal(cfg.seeds, 2);
    assert.deepEqual(cfg.lrs, { linear: 0.01 });
    const runs = await X(page, (x) => x.runs());
    assert.deepEqual(runs.map((r) => [r.variant, r.seed, r.lr]), [['softmax', 3, 0.003], ['linear', 3, 0.01], ['softmax', 4, 0.003], ['linear', 4, 0.01]]);
    for (const r of runs) assert.deepEqual(numbers(r.history), numbers((await nodeRun(cfg, r.variant, r.seed)).history), `${r.variant} seed ${r.seed}`);
    assert.equal(await page.locator('#x-legend tbody tr').count(), 4);
    assert.match(await page.textContent('#x-legend thead'), /seed/);
    for (const v of ['softmax', 'linear']) assert.match(await page.textContent(`#x-verdicts li[data-variant="${v}"]`), /on \d of 2 seeds/);
    assert.match(page.url(), /x\.seeds=2/);
    assert.match(page.url(), /x\.lrs=linear:0\.01/);
    const again = await newPage(t, { hash: new URL(page.url()).hash, viewport: DESKTOP });
    assert.deepEqual(await X(again, (x) => x.config()), cfg, 'the link brings the same config back');
    const code = await X(page, (x) => x.codeSnippet());
    assert.match(code, /\["linear seed 4", 4, 0\.01, /);
    assert.match(code, /\["softmax seed 3", 3, 0\.003, /);
    for (const p of [page, again]) assertNoProblems(p);
  });

  test('1–2. language: the corpus in bits per character, no learned mark, beside the study\'s; a corpus that cannot be fetched says so', async (t) => {
    const page = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP });
    await page.click('button[data-preset="language"]');
    await page.waitForFunction(() => window.__attnlab.experiment.corpus().state === 'ready', null, { timeout: 60000 });
    // shorter than the study's runs: the verdict must say they are not the same
    await page.fill('#x-steps', '4');
    await page.fill('#x-evalEvery', '2');
    await page.click('#x-variants input[value="dense"]');
    await page.click('#x-variants input[value="random"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().variants.join() === 'softmax,linear');
    await page.click('#x-play');
    await xIdle(page);
    const cfg = await X(page, (x) => x.config());
    const runs = await X(page, (x) => x.runs());
    for (const r of runs) {
      const res = await nodeRun(cfg, r.variant, cfg.seed);
      assert.deepEqual(numbers(r.history), numbers(res.history), `${r.variant}: the corpus task in the page is Node's`);
      const li = page.locator(`#x-verdicts li[data-variant="${r.variant}"]`);
      assert.equal(await li.getAttribute('data-verdict'), null, `${r.variant}: no learned mark for text`);
      const text = await li.textContent();
      assert.ok(text.includes(`${r.final.evalBits.toFixed(3)} bits per character`), `${r.variant}: its bits per character in "${text}"`);
      const e = fixture.headline.text.variants[r.variant];
      assert.ok(text.includes(`reached ${e.mean.toFixed(2)} bits per character on every test character (mean of ${e.n} seeds`), `${r.variant}: the recorded bits in "${text}"`);
      assert.match(text, /Not the same runs: steps 4, the study 30/);
    }
    assert.match(await page.textContent('#x-chart-accuracy svg'), /bits per character/);
    const ref = await page.$eval('#x-chart-accuracy g.ref-line', (g) => Number(g.dataset.y));
    assert.ok(Math.abs(ref - Math.log2(binding.tasks.text().vocab)) < 1e-9, 'a uniform guess\'s bits per character');
    assert.equal(await page.isVisible('#x-generate'), true, 'the trained models generate');
    assertNoProblems(page);

    // the corpus cannot be fetched: the form and Train say so, and a retry is offered
    const broken = await newPage(t, { hash: '#view=experiment', viewport: DESKTOP });
    await broken.route('**/dist/kjv.txt', (r) => r.fulfill({ status: 503, body: 'unavailable' }));
    await broken.click('button[data-preset="language"]');
    await broken.waitForFunction(() => window.__attnlab.experiment.corpus().state === 'error', null, { timeout: 30000 });
    assert.match(await broken.textContent('#x-corpus-status'), /could not be fetched.*503/);
    assert.equal(await broken.isVisible('#x-corpus-retry'), true);
    await broken.click('#x-play');
    await broken.waitForFunction(() => /could not be fetched/.test(document.querySelector('#x-config-error').textContent));
    assert.deepEqual(await X(broken, (x) => x.runs()), [], 'nothing started');
    assert.deepEqual(broken.problems.filter((p) => !/kjv\.txt|503/.test(p)), [], 'no other problem');
  });

  test('3. a text of one\'s own is said to differ from the study\'s, and a repetitive one to be memorised', async (t) => {
    const page = await newPage(t, { hash: hashOf({ task: 'text', seqLen: 16, vocab: null, steps: 6, evalEvery: 3, batch: 4 }), viewport: DESKTOP });
    await page.click('#x-source-own');
    const text = 'the cat sat on the mat. '.repeat(20);
    await page.fill('#x-text', text);
    await page.waitForFunction(() => /memorisation/.test(document.querySelector('#x-text-note').textContent), null, { timeout: 5000 });
    assert.match(await page.textContent('#x-text-note'), /100 % of the held-out part .* already occurs in the training part/);
    assert.match(page.url(), /x\.source=own&x\.text=the%20cat/, 'a short text goes into the link');
    await page.click('#x-play');
    await xIdle(page);
    const cfg = await X(page, (x) => x.config());
    for (const r of await X(page, (x) => x.runs())) {
      assert.deepEqual(numbers(r.history), numbers((await nodeRun(cfg, r.variant, cfg.seed)).history), `${r.variant}: your text in Node`);
      const li = await page.textContent(`#x-verdicts li[data-variant="${r.variant}"]`);
      assert.match(li, /Your own text is not the corpus the study used: its numbers do not compare with yours/);
    }
    assert.match(await page.textContent('#x-verdicts'), /held-out numbers measure memorisation, not prediction/);
    assertNoProblems(page);
  });
});
