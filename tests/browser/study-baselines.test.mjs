// Browser tests of the study's baselines in the Experiment view: on the corpus, the text chart
// draws the character n-gram lines and the verdicts name them, from the repository's own
// experiments/summary.json (written from experiments/ngram.json by the study's report).
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/study-baselines.test.mjs
//
// A tiny model and a few steps; no timing assertions.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, startEnv, stopEnv, newPage, assertNoProblems } from './harness.mjs';

const ngram = JSON.parse(fs.readFileSync(path.join(ROOT, 'experiments', 'ngram.json'), 'utf8'));
const X = (page, fn) => page.evaluate((f) => new Function('x', `return (${f})(x)`)(window.__attnlab.experiment), fn.toString());

describe('attnlab page: the study\'s n-gram baselines', () => {
  before(startEnv);
  after(stopEnv);

  test('text on the corpus: the bits chart draws the 3-, 4- and 5-gram lines and the verdicts name them; another text has none', async (t) => {
    const hash = '#view=experiment&x.task=text&x.source=corpus&x.seqLen=64&x.vars=softmax&x.dModel=16&x.heads=2&x.layers=1&x.dFF=32&x.steps=4&x.batch=4&x.evalEvery=2&x.evalBatch=8&x.seed=1';
    const page = await newPage(t, { hash, viewport: { width: 1366, height: 900 }, summary: null });
    await page.waitForFunction(() => window.__attnlab.experiment.corpus().state === 'ready', null, { timeout: 60000 });
    await page.waitForFunction(() => [...document.querySelectorAll('#x-chart-accuracy g.ref-line')].some((g) => /4-gram/.test(g.textContent)), null, { timeout: 30000 });
    const refs = await page.$$eval('#x-chart-accuracy g.ref-line', (gs) => gs.map((g) => ({ y: Number(g.dataset.y), text: g.textContent })));
    for (const o of [3, 4, 5]) {
      const r = refs.find((x) => x.text.startsWith(`${o}-gram`));
      assert.ok(r, `the ${o}-gram line: ${JSON.stringify(refs)}`);
      assert.ok(Math.abs(r.y - ngram.heldout[o].windows) < 1e-5, `${o}-gram at ${r.y}, recorded ${ngram.heldout[o].windows}`);
    }
    await page.click('#x-play');
    await X(page, (x) => x.idle(300000));
    const text = await page.textContent('#x-verdicts');
    assert.ok(text.includes(`4-gram ${ngram.heldout[4].windows.toFixed(3)}`), text);
    assert.ok(text.includes(`a 5-gram reaches ${ngram.heldout[5].windows.toFixed(3)}`), text);
    // the short paragraph is not the corpus: no lines from the corpus beside it
    await page.click('#x-reset');
    await page.check('input[name="x-source"][value="paragraph"]');
    await page.waitForFunction(() => window.__attnlab.experiment.config().source === 'paragraph');
    await page.waitForFunction(() => ![...document.querySelectorAll('#x-chart-accuracy g.ref-line')].some((g) => /gram/.test(g.textContent)), null, { timeout: 10000 });
    assertNoProblems(page);
  });
});
