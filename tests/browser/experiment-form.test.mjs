// Tests of the Experiment view's form around a run: a setup the binding would refuse is named
// before anything starts, leaving with trained models asks first, the form is locked while its runs
// train, the status line and the loss chart say what they count.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/experiment-form.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, assertNoProblems } from './harness.mjs';
import { WIDE, hashOf, X, xIdle, top } from './page-helpers.mjs';

describe("attnlab page: the Experiment view's form: what it refuses, locks and says", () => {
  before(startEnv);
  after(stopEnv);

  test('a setup the binding would refuse is named next to Train as it is typed, and nothing starts', async (t) => {
    // each typed as a user would, on a setup that was fine
    const cases = [
      [{ task: 'recall', seqLen: 96, pairs: 8, vocab: 32 }, (p) => p.fill('#x-knob-pairs', '40'), /pairs = 40 is too many for vocab 32/, '#x-knob-pairs'],
      [{ task: 'sort' }, (p) => p.fill('#x-knob-seqLen', '1'), /sequence length must be a whole number from 2/, '#x-knob-seqLen'],
      [{ dModel: 8, heads: 2 }, (p) => p.fill('#x-dModel', '7'), /heads must divide dModel/, '#x-heads'],
      [{ task: 'text', seqLen: 16 }, async (p) => { await p.click('#x-source-own'); await p.fill('#x-text', 'ab'); }, /your text has 2 characters; it needs at least/, '#x-text'],
    ];
    for (const [over, type, why, field] of cases) {
      const h = hashOf(over).replace(over.task === 'text' ? /&x\.vocab=[^&]*/ : /^$/, '');
      const page = await newPage(t, { hash: h, viewport: WIDE });
      assert.equal(await page.isVisible('#x-config-error'), false, `${JSON.stringify(over)}: fine at first`);
      await type(page);
      const box = page.locator('#x-config-error');
      await page.waitForFunction(([src, flags]) => { const b = document.querySelector('#x-config-error'); return b && !b.hidden && new RegExp(src, flags).test(b.textContent); }, [why.source, why.flags], { timeout: 5000 }).catch(() => {});
      assert.equal(await box.isVisible(), true, `${JSON.stringify(over)}: a message is shown`);
      assert.match(await box.textContent(), why, `${JSON.stringify(over)}: the message`);
      const [errTop, playTop] = [await top(page, '#x-config-error'), await top(page, '#x-play')];
      assert.ok(Math.abs(errTop - playTop) < 150, `${JSON.stringify(over)}: the message is next to Train (${errTop} against ${playTop})`);
      assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true', `${JSON.stringify(over)}: ${field} is marked`);
      assert.equal(await page.isDisabled('#x-play'), true, `${JSON.stringify(over)}: Train is disabled`);
      await page.evaluate(() => document.querySelector('#x-play').click());
      assert.deepEqual(await X(page, (x) => x.runs()), [], `${JSON.stringify(over)}: no run started`);
      assertNoProblems(page);
    }
    // fixed as it is typed: the message goes, Train comes back
    const page = await newPage(t, { hash: hashOf({ dModel: 7, heads: 2 }), viewport: WIDE });
    await page.fill('#x-dModel', '8');
    await page.waitForFunction(() => document.querySelector('#x-config-error').hidden && !document.querySelector('#x-play').disabled, null, { timeout: 5000 });
    assert.equal(await page.getAttribute('#x-heads', 'aria-invalid'), 'false');
    assertNoProblems(page);
  });

  test('"All the numbers" opens rendered in the page; leaving with trained models asks first', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 6, evalEvery: 3 }), viewport: WIDE });
    const url = page.url();
    await page.getByText('All the numbers', { exact: false }).first().click();
    const dialog = page.locator('#x-results-dialog');
    await dialog.waitFor({ state: 'visible', timeout: 5000 });
    await page.waitForFunction(() => document.querySelectorAll('#x-results-dialog h3, #x-results-dialog table').length > 0, null, { timeout: 10000 });
    assert.equal(page.url(), url, 'still the page, not the raw file');
    assert.doesNotMatch(await dialog.textContent(), /^\s*#|\|---/m, 'rendered, not raw Markdown');
    await page.click('#x-results-dialog-close');

    // nothing trained: leaving asks nothing
    const dialogs = [];
    page.on('dialog', (d) => { dialogs.push(d.type()); d.dismiss(); });
    await page.click('#x-play');
    await xIdle(page);
    // trained models: closing the tab asks first (beforeunload); dismissing it keeps the page
    await page.close({ runBeforeUnload: true });
    await page.waitForEvent('dialog', { timeout: 5000 }).catch(() => null);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(dialogs, ['beforeunload'], 'the page asks before it goes');
    assert.equal(page.isClosed(), false, 'and stays when the user says no');
  });

  test('the form is locked while the runs it describes train; the link stays theirs', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 4000, evalEvery: 1000, seqLen: 16, dModel: 32 }), viewport: WIDE });
    await page.click('#x-play');
    await page.waitForFunction(() => window.__attnlab.experiment.runs().some((r) => r.status === 'training'), null, { timeout: 20000 });
    const link = await page.evaluate(() => location.hash);
    assert.equal(await page.isDisabled('#x-steps'), true, 'steps cannot change mid-run');
    assert.equal(await page.isDisabled('#x-task'), true, 'nor the task');
    assert.equal(await page.isDisabled('#x-variants input[value="taylor"]'), true, 'nor the variants');
    assert.equal(await page.isDisabled('button[data-preset]'), true, 'nor a preset');
    assert.equal(await page.isVisible('#x-lock-note'), true, 'and the page says why');
    await page.evaluate(() => {
      const s = document.querySelector('#x-steps');
      s.value = '5';
      s.dispatchEvent(new Event('input', { bubbles: true }));
    });
    assert.equal(await page.evaluate(() => location.hash), link, 'the link still describes the running models');
    await page.click('#x-cancel');
    await xIdle(page);
    assert.equal(await page.isDisabled('#x-steps'), false, 'unlocked once the runs end');
    assertNoProblems(page);
  });

  test('the status line counts steps per run; the loss chart says what the training line is; an empty chart\'s axis follows the steps', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 30 }), viewport: WIDE });
    assert.match(await page.textContent('#x-chart-loss svg'), /mean .*since the last evaluation/);
    await page.fill('#x-steps', '1000');
    await page.waitForFunction(() => [...document.querySelectorAll('#x-chart-accuracy svg text')].some((tx) => tx.textContent === '1000'), null, { timeout: 5000 });
    await page.fill('#x-steps', '30');
    await page.click('#x-play');
    await xIdle(page);
    const status = await page.textContent('#x-status');
    assert.match(status, /2 runs × 30 steps each/);
    assert.doesNotMatch(status, /60 \/ 60|60 steps/, `no sum of the runs' steps: ${status}`);
    assertNoProblems(page);
  });
});
