// Tests of Explore's input editor and variant options: a cell that is not a number never reaches
// the link, pasted CSV, cells sized to their content, a mixture's α sliders as shares and its
// components' options.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/inputs.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startEnv, stopEnv, ARTIFACTS, newPage, idle, snapshot, assertNoProblems, checkAgainstBinding, chooseVariant } from './harness.mjs';
import { SIZES } from './page-helpers.mjs';

describe("attnlab page: editing the inputs: cells, pasted matrices, cell widths, a mixture's weights and components", () => {
  let env;
  before(async () => {
    env = await startEnv();
  });
  after(stopEnv);

  test('a cell that is not a number never goes into the link; pasted CSV is read by rows and columns', async (t) => {
    const page = await newPage(t);
    const before = await snapshot(page);
    for (const typed of ['abc', '1,5']) {
      const cell = page.locator('input.cell[data-array="q"][data-index="3"]');
      await cell.fill(typed);
      await cell.press('Enter');
      await idle(page);
      assert.equal(await page.isVisible('#cell-error'), true, `${typed}: a message`);
      assert.ok((await page.textContent('#cell-error')).includes(`“${typed}”`));
      if (typed === '1,5') assert.match(await page.textContent('#cell-error'), /1\.5/);
      assert.doesNotMatch(page.url(), /NaN|e\.q=/, `${typed}: not in the link (${page.url()})`);
      // one message names the cell (the page's, in the editor's notation); the banner says the output is stale
      assert.equal(await page.isVisible('#inputs-error'), false, `${typed}: not said again in the binding's notation`);
      assert.match(await page.textContent('#run-error'), /stale.*a cell of q is not a number/);
    }
    // the link opens a page that computes
    const fresh = await newPage(t, { hash: new URL(page.url()).hash });
    assert.equal((await snapshot(fresh)).error, null);
    const cell = page.locator('input.cell[data-array="q"][data-index="3"]');
    await cell.fill('');
    await cell.press('Enter');
    await idle(page);
    assert.equal(await page.isVisible('#cell-error'), false);
    // pasted CSV: q is n×d = 16×8
    const { n, d } = before.inputs;
    const rows = Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, c) => ((i * 3 + c) % 5) / 4 - 0.5));
    await page.click('#array-panel details.paste summary');
    const paste = async (text) => {
      await page.fill('#paste-q', text);
      await page.click('#array-panel button:has-text("Apply to q")');
      await idle(page);
    };
    // ragged rows with the right total count: refused, naming the row
    const ragged = rows.map((r) => r.slice());
    ragged[4].push(ragged[3].pop());
    await paste(ragged.map((r) => r.join(',')).join('\n'));
    assert.equal(await page.isVisible('#paste-error-q'), true);
    assert.match(await page.textContent('#paste-error-q'), /row 3 .*7 values, expected 8/);
    assert.deepEqual((await snapshot(page)).inputs.q, before.inputs.q, 'nothing applied');
    // a value that is not a number: row and column named
    const bad = rows.map((r) => r.slice());
    bad[2][5] = 'x';
    await paste(bad.map((r) => r.join(',')).join('\n'));
    assert.match(await page.textContent('#paste-error-q'), /row 2, column 5/);
    // all values on one line: refused with the shape it needs
    await paste(rows.flat().join(','));
    assert.match(await page.textContent('#paste-error-q'), /one row of 8 values per line/);
    // a header row is skipped, and the toast says so
    await paste([Array.from({ length: d }, (_, c) => `q${c}`).join(','), ...rows.map((r) => r.join(','))].join('\n'));
    assert.equal(await page.isVisible('#paste-error-q'), false);
    assert.match(await page.textContent('#global-status'), /header/);
    const pasted = await snapshot(page);
    assert.deepEqual(pasted.inputs.q, rows.flat().map(Math.fround));
    checkAgainstBinding(pasted, 'after a paste with a header');
    assertNoProblems(page);
  });

  for (const [label, viewport] of SIZES) {
    test(`the input editor sizes cells to their content (${label})`, async (t) => {
      const page = await newPage(t, { viewport });
      const cell = page.locator('input.cell[data-array="q"][data-index="1"]');
      await cell.fill('-0.05964');
      await cell.press('Enter');
      await idle(page);
      const cells = await page.$$eval('#array-panel input.cell', (xs) => xs.map((x) => ({ text: x.value, sw: x.scrollWidth, cw: x.clientWidth, col: Number(x.dataset.col), right: x.getBoundingClientRect().right })));
      assert.ok(cells.some((c) => c.text === '-0.05964'));
      for (const c of cells) assert.ok(c.sw <= c.cw, `"${c.text}" is clipped (${c.sw} > ${c.cw})`);
      const box = await page.locator('#array-panel .matrix-scroll').boundingBox();
      const cols = Math.max(...cells.map((c) => c.col)) + 1;
      const visible = new Set(cells.filter((c) => c.right <= box.x + box.width).map((c) => c.col));
      if (label === 'desktop') assert.equal(visible.size, cols, `all ${cols} columns of q visible at 1280 px (${visible.size})`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
      await page.locator('#inputs-card').screenshot({ path: path.join(ARTIFACTS, `fixes-inputs-${label}.png`) });
      assertNoProblems(page);
    });
  }

  test('mixture: the α sliders are shares that sum to 1, all-zero α means equal weights, and component options show only for a component that takes them', async (t) => {
    const mix = env.nodeLab.variants.find((v) => v.composite);
    assert.ok(mix, 'the registry has a mixture');
    // all-zero α (from a link: the sliders themselves always sum to 1) means equal weights
    const zero = await newPage(t, { hash: `#v=${mix.id}&n=16&d=8&dv=8&seed=1&preset=random&o.${mix.id}.components=softmax,random&o.${mix.id}.alpha=0,0` });
    let snap = await snapshot(zero);
    assert.equal(snap.error, null, `no error for all-zero α: ${JSON.stringify(snap.error)}`);
    assert.deepEqual(snap.options.alpha, [0.5, 0.5]);
    assert.match(await zero.textContent('#variant-options .alpha-note'), /equal weights/);
    assert.deepEqual(await zero.$$eval('#variant-options input[type=range]', (rs) => rs.map((r) => Number(r.value))), [0.5, 0.5], 'the sliders show the shares used');
    checkAgainstBinding(snap, 'mixture, α all zero');
    assertNoProblems(zero);
    const page = await newPage(t);
    await chooseVariant(page, mix.id);
    const comps = await page.$$eval('#variant-options [data-option="components"] input:checked', (cs) => cs.map((c) => c.dataset.value));
    assert.ok(comps.length >= 2);
    // moving one slider moves the others: the shares still sum to 1
    await page.$eval(`#opt-alpha-${comps[0]}`, (r) => {
      r.value = '0.8';
      r.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await idle(page);
    snap = await snapshot(page);
    assert.ok(Math.abs(snap.options.alpha[0] - 0.8) < 1e-9, `the moved share: ${snap.options.alpha}`);
    assert.ok(Math.abs(snap.options.alpha.reduce((a, b) => a + b, 0) - 1) < 1e-9, `the shares sum to 1: ${snap.options.alpha}`);
    const shown = await page.$$eval('#variant-options input[type=range]', (rs) => rs.map((r) => Number(r.value)));
    assert.ok(shown.every((x, i) => Math.abs(x - snap.options.alpha[i]) < 0.011), `each slider sits at its share: ${shown}`);
    checkAgainstBinding(snap, 'mixture, α moved');
    // options of components: tiling (factorized-dense), scale (softmax), from lab.options.appliesTo
    const meta = env.nodeLab.options;
    const owned = mix.options.filter((o) => (meta[o].appliesTo ?? []).some((id) => id !== mix.id && env.nodeLab.variants.find((v) => v.id === id)?.mixable));
    assert.ok(owned.includes('tiling'));
    const fieldIds = () => page.$$eval('#variant-options [data-option]', (els) => els.map((e) => e.dataset.option));
    const owners = (o) => meta[o].appliesTo.filter((id) => id !== mix.id);
    for (const o of owned) assert.equal((await fieldIds()).includes(o), owners(o).some((c) => comps.includes(c)), `${o}: shown iff a chosen component takes it`);
    assert.match(await page.textContent('#component-options-note'), /tiling/);
    await page.check('#opt-comp-factorized-dense');
    await idle(page);
    assert.ok((await fieldIds()).includes('tiling'), 'tiling appears with factorized-dense');
    await page.selectOption('#opt-tiling', 'tile');
    await idle(page);
    assert.equal((await snapshot(page)).options.tiling, 'tile');
    await page.uncheck('#opt-comp-factorized-dense');
    await idle(page);
    assert.ok(!(await fieldIds()).includes('tiling'), 'and goes without it');
    const after = await snapshot(page);
    assert.equal(after.options.tiling, undefined, 'a hidden option is not sent');
    checkAgainstBinding(after, 'mixture without factorized-dense');
    assertNoProblems(page);
  });
});
