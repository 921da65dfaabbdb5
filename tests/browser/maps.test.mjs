// Tests of Explore's maps: a locked read-out follows its cell, the A PNG button without A, axis
// names and shared or per-row colour scales, a recurrent variant's diverging scale, compare maps
// large enough and on their own scale where they must be.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/maps.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, idle, snapshot, assertNoProblems, checkAgainstBinding, chooseVariant, cellColour } from './harness.mjs';
import { WIDE, SIZES, tooltip, cellPoint, lockCell } from './page-helpers.mjs';

describe("attnlab page: the attention maps: read-outs, colour scales, compare cards and the PNG export", () => {
  before(startEnv);
  after(stopEnv);

  for (const [label, viewport] of SIZES) {
    test(`a locked read-out follows its cell or goes: new sizes, new results, scrolling, dialogs (${label})`, async (t) => {
      const page = await newPage(t, { viewport });
      // a cell that no longer exists: lock A[4,12], set n = 4
      await lockCell(page, 4, 12);
      await page.fill('#dim-n', '4');
      await idle(page);
      let tip = await tooltip(page);
      assert.equal(tip.locked, false, 'unlocked once A[4,12] is gone');
      assert.equal(tip.visible, false);
      await page.fill('#dim-n', '16');
      await idle(page);
      // new inputs (seed): the read-out goes
      await lockCell(page, 2, 3);
      await page.fill('#seed', '31');
      await idle(page);
      assert.equal((await tooltip(page)).visible, false, 'no read-out of the old inputs');
      // a new result for the same cell (an option changed): the read-out shows the new value
      await lockCell(page, 2, 3);
      const before = await snapshot(page);
      await page.$eval('#opt-scale', (e) => {
        e.value = '0.9';
        e.dispatchEvent(new Event('input', { bubbles: true }));
      });
      await idle(page);
      tip = await tooltip(page);
      const snap = await snapshot(page);
      assert.notEqual(snap.weights[2 * 16 + 3], before.weights[2 * 16 + 3]);
      const fresh = await page.evaluate((x) => window.__attnlab.fullPrecision(x), snap.weights[2 * 16 + 3]);
      assert.equal(tip.visible, true, 'the read-out stays on its cell');
      assert.ok(tip.text.includes(`A[2, 3] = ${fresh}`), `the read-out shows the new A[2,3] = ${fresh}: ${tip.text}`);
      // scrolling: it moves with its cell, and goes when the cell leaves the screen
      await lockCell(page, 8, 8);
      await page.mouse.wheel(0, 120);
      await page.waitForTimeout(100);
      tip = await tooltip(page);
      if (tip.visible) {
        const cell = await cellPoint(page, '#weights-map canvas.hm-canvas', 8, 8);
        const box = await page.locator('#heatmap-tooltip').boundingBox();
        assert.ok(Math.abs(box.y - cell.y) < 80 || Math.abs(box.y + box.height - cell.y) < 80, `the tooltip (y ${box.y}) stays by its cell (y ${cell.y})`);
      }
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.waitForTimeout(100);
      tip = await tooltip(page);
      assert.equal(tip.visible, false, 'no read-out once its cell is off screen');
      // a dialog opens: the read-out goes
      await page.evaluate(() => window.scrollTo(0, 0));
      await lockCell(page, 1, 1);
      await page.evaluate(() => document.querySelector('#copy-code').click()); // no scrolling to the button
      assert.equal(await page.isVisible('#code-dialog'), true);
      tip = await tooltip(page);
      assert.equal(tip.visible, false, 'no read-out over the dialog');
      assert.equal(tip.locked, false);
      await page.keyboard.press('Escape');
      assertNoProblems(page);
    });
  }

  test('the A PNG button is disabled with a reason when A is not drawn (n > 256)', async (t) => {
    const page = await newPage(t);
    assert.equal(await page.isDisabled('[data-export="weights"]'), false);
    await page.fill('#dim-n', '300');
    await idle(page);
    assert.equal(await page.isDisabled('[data-export="weights"]'), true);
    assert.match(await page.getAttribute('[data-export="weights"]', 'title'), /n ≤ 256/);
    assert.equal(await page.isVisible('#weights-note'), true);
    assert.match(await page.textContent('#weights-note'), /no PNG/);
    assert.equal(await page.isDisabled('[data-export="output"]'), false, 'y is still exported');
    await page.fill('#dim-n', '16');
    await idle(page);
    assert.equal(await page.isDisabled('[data-export="weights"]'), false);
    assertNoProblems(page);
  });

  test('heatmaps have axis names and indices; compare shares one colour scale; per-row colours', async (t) => {
    const page = await newPage(t);
    const axes = await page.textContent('#weights-card .hm-frame');
    assert.match(axes, /queries/);
    assert.match(axes, /keys/);
    assert.match(axes, /15/, 'last index n − 1');
    assert.match(await page.textContent('#output-card .hm-frame'), /tokens[\s\S]*channels|channels[\s\S]*tokens/);
    // compare: one scale per kind of map, on by default
    assert.equal(await page.isChecked('#cmp-shared-scale'), true);
    const ranges = (kind) => page.$$eval(`#compare-grid canvas[data-heatmap^="cmp-${kind}-"]`, (cs) => cs.filter((c) => c.offsetParent).map((c) => c.dataset.vmax));
    for (const kind of ['A', 'y', 'diff']) {
      const r = await ranges(kind);
      assert.ok(r.length >= 2, `${kind}: maps to compare`);
      assert.equal(new Set(r).size, 1, `${kind}: one range (${r})`);
    }
    await page.uncheck('#cmp-shared-scale');
    assert.ok(new Set(await ranges('A')).size > 1, 'each A on its own scale when unchecked');
    // per-row colours: row 0 of a causal map (weight 1) no longer squashes the others
    await page.check('#causal');
    await idle(page);
    const snap = await snapshot(page);
    const n = snap.inputs.n;
    const row = 9;
    let arg = 0;
    for (let j = 1; j < n; j++) if (snap.weights[row * n + j] > snap.weights[row * n + arg]) arg = j;
    const top = await cellColour(page, '#weights-map canvas.hm-canvas', 0, 0);
    assert.notEqual((await cellColour(page, '#weights-map canvas.hm-canvas', row, arg)).rgb, top.rgb, 'one scale: the row max is not the top colour');
    await page.check('#row-norm');
    assert.equal((await cellColour(page, '#weights-map canvas.hm-canvas', row, arg)).rgb, top.rgb, 'per row: each row max is the top colour');
    assert.match(await page.textContent('#weights-card .legend'), /own scale/);
    assertNoProblems(page);
  });

  test('a recurrent variant\'s A, whose entries take either sign, is drawn diverging: 0 at the white middle of a symmetric scale, no per-row colours, causal fixed on', async (t) => {
    const page = await newPage(t, { hash: '#v=gated-deltanet&n=16&d=8&dv=8&seed=3' });
    await idle(page);
    const snap = await snapshot(page);
    checkAgainstBinding(snap, 'gated-deltanet n=16 d=8 dv=8 seed=3');
    const canvas = '#weights-map canvas.hm-canvas';
    const { vmin, vmax } = await page.$eval(canvas, (c) => ({ vmin: Number(c.dataset.vmin), vmax: Number(c.dataset.vmax) }));
    assert.ok(vmin < 0 && vmin === -vmax, `a symmetric scale around 0: [${vmin}, ${vmax}]`);
    // the most negative entry is drawn blue, the most positive red (the diverging map's ends)
    const n = snap.inputs.n;
    let lo = 0, hi = 0;
    for (let t = 0; t < n * n; t++) {
      if (t % n > Math.floor(t / n)) continue; // above the diagonal: masked
      if (snap.weights[t] < snap.weights[lo]) lo = t;
      if (snap.weights[t] > snap.weights[hi]) hi = t;
    }
    assert.ok(snap.weights[lo] < 0 && snap.weights[hi] > 0, `A has entries of both signs: ${snap.weights[lo]}, ${snap.weights[hi]}`);
    const rgb = async (t) => (await cellColour(page, canvas, Math.floor(t / n), t % n)).rgb.match(/\d+/g).map(Number);
    const [blue, red] = [await rgb(lo), await rgb(hi)];
    assert.ok(blue[2] > blue[0], `A[${Math.floor(lo / n)},${lo % n}] = ${snap.weights[lo]} is drawn blue: rgb ${blue}`);
    assert.ok(red[0] > red[2], `A[${Math.floor(hi / n)},${hi % n}] = ${snap.weights[hi]} is drawn red: rgb ${red}`);
    assert.equal(await page.isDisabled('#row-norm'), true, 'per-row colours (0 to the row max) are off for signed entries');
    assert.equal(await page.isChecked('#causal'), true);
    assert.equal(await page.isDisabled('#causal'), true, 'causal by construction: the box cannot be unchecked');
    assert.match(await page.textContent('#weights-note'), /either sign/);
    // compare: gla runs causal (by construction) against a baseline the unchecked box left not
    // causal, and its card says so; linear, causal as the baseline, says nothing of it
    const cmp = await newPage(t, { hash: '#v=gated-deltanet&n=16&d=8&dv=8&seed=3&cmp=gla,linear' });
    await idle(cmp);
    await cmp.waitForFunction(() => document.querySelectorAll('#compare-grid .compare-card').length >= 2, null, { timeout: 30000 });
    const stat = (id) => cmp.$eval(`#compare-grid .compare-card[data-variant="${id}"]`, (c) => c.textContent);
    assert.match(await stat('gla'), /causal, softmax not causal/, 'the gla card names the causal mismatch');
    assert.doesNotMatch(await stat('linear'), /softmax not causal/, 'linear runs as the baseline does');
    assertNoProblems(cmp);
    // back to softmax: the sequential map from 0 again, per-row colours available
    await chooseVariant(page, 'softmax');
    assert.equal(await page.$eval(canvas, (c) => Number(c.dataset.vmin)), 0, 'softmax\'s A starts at 0');
    assert.equal(await page.isDisabled('#row-norm'), false);
    assertNoProblems(page);
  });

  test('α sliders at their shares; compare maps big enough, fixed on its own scale, a caveat for untrained Synthesizers', async (t) => {
    const page = await newPage(t, { hash: '#v=mixture&n=16&d=8&dv=8&seed=1&preset=random&cmp=softmax,linear,fixed,random', viewport: WIDE });
    const sliders = await page.$$eval('#variant-options input[type=range]', (rs) => rs.map((r) => Number(r.value)));
    assert.deepEqual(sliders, [0.5, 0.5], 'equal weights sit in the middle');
    await idle(page);
    await page.waitForFunction(() => !window.__attnlab.status().compareBusy && document.querySelectorAll('#compare-grid canvas[data-heatmap^="cmp-A-"]').length >= 4, null, { timeout: 30000 });
    const cards = await page.$$eval('.compare-card', (cs) => cs.map((c) => ({ id: c.dataset.variant, card: c.getBoundingClientRect().width, map: c.querySelector('canvas[data-heatmap^="cmp-A-"]')?.getBoundingClientRect().width ?? 0, vmax: c.querySelector('canvas[data-heatmap^="cmp-A-"]')?.dataset.vmax })));
    for (const c of cards) assert.ok(c.map >= 0.4 * c.card, `${c.id}: A is ${Math.round(c.map)} px in a card of ${Math.round(c.card)}`);
    const byId = Object.fromEntries(cards.map((c) => [c.id, c]));
    assert.notEqual(byId.softmax.vmax, byId.fixed.vmax, 'fixed (weights of 1) does not set the others\' scale');
    assert.equal(byId.softmax.vmax, byId.linear.vmax, 'the others share one');
    assert.match(await page.textContent('.compare-card[data-variant="fixed"]'), /own colour scale/);
    assert.match(await page.textContent('#compare-summary'), /random.*untrained|untrained.*random/is, 'the NMSE of a Synthesizer carries a caveat');
    assertNoProblems(page);
  });
});
