// Keyboard tests: "Skip to …" moves the focus only, Train and Pause keep the focus on the controls,
// the matrix is one Tab stop with arrow keys.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/keyboard.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, idle, snapshot, assertNoProblems } from './harness.mjs';
import { WIDE, hashOf, X, xIdle, focusedId } from './page-helpers.mjs';

describe("attnlab page: the keyboard: skip links, focus and the matrix", () => {
  before(startEnv);
  after(stopEnv);

  test('"Skip to …" moves the focus only, to each view\'s own target; the page keeps its state', async (t) => {
    const page = await newPage(t, { hash: '#v=linear&n=12&d=4&dv=4&seed=7&preset=random', viewport: WIDE });
    const before = await page.evaluate(() => location.hash);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.classList.contains('skip-link')), true, 'the first Tab stop is the skip link');
    await page.keyboard.press('Enter');
    await idle(page);
    assert.equal(await page.evaluate(() => location.hash), before, 'the link is unchanged');
    const snap = await snapshot(page);
    assert.equal(snap.variant, 'linear', 'the variant is kept');
    assert.equal(snap.inputs.n, 12, 'n is kept');
    assert.equal(await page.inputValue('#seed'), '7', 'the seed is kept');
    assert.equal(await focusedId(page), 'outputs', 'the focus is on the outputs');
    assert.equal(await page.isVisible('#hash-warning'), false, 'no "ignored" banner');

    const x = await newPage(t, { hash: hashOf({ steps: 77 }), viewport: WIDE });
    await x.keyboard.press('Tab');
    await x.keyboard.press('Enter');
    assert.equal(await x.isVisible('#experiment-view'), true, 'the Experiment view stays');
    assert.equal((await X(x, (e) => e.config())).train.steps, 77, 'its setup is kept');
    assert.equal(await focusedId(x), 'x-run', 'the focus is on the training controls');
    assert.match(await x.textContent('.skip-link'), /Train/);
    for (const p of [page, x]) assertNoProblems(p);
  });

  test('keyboard: Train and Pause keep the focus on the controls, the matrix is one Tab stop with arrow keys, Train comes early', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 4000, evalEvery: 1000, seqLen: 16, dModel: 32 }), viewport: WIDE });
    await page.focus('#x-play');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#x-play').disabled);
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
    let focused = await page.evaluate(() => ({ tag: document.activeElement.tagName, id: document.activeElement.id, inControls: !!document.activeElement.closest('.x-actions') }));
    assert.ok(focused.inControls && focused.tag === 'BUTTON', `after Train the focus is on ${focused.tag}#${focused.id}, not on the training controls`);
    await page.keyboard.press(' '); // the focused button now: Pause
    await page.waitForFunction(() => window.__attnlab.experiment.paused());
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
    focused = await page.evaluate(() => ({ tag: document.activeElement.tagName, id: document.activeElement.id, inControls: !!document.activeElement.closest('.x-actions') }));
    assert.ok(focused.inControls && focused.tag === 'BUTTON', `after Pause the focus is on ${focused.tag}#${focused.id}`);
    await page.click('#x-cancel');
    await xIdle(page);

    // Train within the first Tab stops of the view
    const fresh = await newPage(t, { hash: hashOf(), viewport: WIDE });
    let stops = 0;
    while (stops < 60 && (await focusedId(fresh)) !== 'x-play') {
      await fresh.keyboard.press('Tab');
      stops++;
    }
    assert.ok(stops <= 16, `Train is Tab stop ${stops}`);

    // the matrix editor: one Tab stop; the arrows move between cells
    const explore = await newPage(t, { viewport: WIDE });
    await explore.focus('input.cell[data-array="q"][data-row="0"][data-col="0"]');
    await explore.keyboard.press('Tab');
    assert.equal(await explore.evaluate(() => document.activeElement.classList.contains('cell')), false, 'Tab leaves the grid');
    await explore.focus('input.cell[data-array="q"][data-row="0"][data-col="0"]');
    await explore.evaluate(() => document.activeElement.select());
    await explore.keyboard.press('ArrowRight');
    assert.deepEqual(await explore.evaluate(() => [document.activeElement.dataset.row, document.activeElement.dataset.col]), ['0', '1'], '→ moves right');
    await explore.keyboard.press('ArrowDown');
    assert.deepEqual(await explore.evaluate(() => [document.activeElement.dataset.row, document.activeElement.dataset.col]), ['1', '1'], '↓ moves down');
    assert.equal(await explore.$$eval('#array-panel input.cell[tabindex="0"]', (xs) => xs.length), 1, 'one cell in the Tab order');
    for (const p of [page, fresh, explore]) assertNoProblems(p);
  });
});
