// Browser tests of the page's edge cases: links that cannot be read, opening the page from disk,
// the hover read-out's lifetime, the PNG export without A, invalid cells and pasted matrices, the
// scaling chart's fields and layout, mixture options, the input editor's width, shared and per-row
// colour scales, long runs and cancelled comparisons, and the phone layout.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/page-fixes.test.mjs
//
// Layout checks run at a desktop (1280×800) and a phone (390×844) viewport; screenshots go to
// test-artifacts/. No timing assertions.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, ARTIFACTS, startEnv, stopEnv, newPage, idle, snapshot, assertNoProblems, checkAgainstBinding, chooseVariant, cellColour } from './harness.mjs';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SIZES = [['desktop', DESKTOP], ['phone', PHONE]];

let env;

const ui = (page) => page.evaluate(() => window.__attnlab.ui());
const tooltip = (page) => page.evaluate(() => window.__attnlab.tooltip());
const status = (page) => page.evaluate(() => window.__attnlab.status());

/** Viewport point of the centre of cell (i, j) of a heatmap canvas. */
async function cellPoint(page, selector, i, j) {
  const box = await page.locator(selector).boundingBox();
  const { rows, cols } = await page.$eval(selector, (c) => ({ rows: Number(c.dataset.rows), cols: Number(c.dataset.cols) }));
  return { x: box.x + ((j + 0.5) / cols) * box.width, y: box.y + ((i + 0.5) / rows) * box.height };
}

async function lockCell(page, i, j) {
  const sel = '#weights-map canvas.hm-canvas';
  await page.locator(sel).scrollIntoViewIfNeeded();
  const p = await cellPoint(page, sel, i, j);
  await page.mouse.click(p.x, p.y);
  const tip = await tooltip(page);
  assert.equal(tip.locked, true, `A[${i},${j}] locked`);
  assert.match(tip.text, new RegExp(`A\\[${i}, ${j}\\]`));
}

const overlaps = (a, b) => a[0] < b[1] && b[0] < a[1];

describe('attnlab page: edge cases', () => {
  before(async () => {
    env = await startEnv();
  });

  after(stopEnv);

  test('a link with a cut-off % escape or unknown values loads the defaults and says what was ignored', async (t) => {
    const cases = [
      ['#v=softmax%', { variant: 'softmax' }, /v/],
      ['#n=%', { variant: 'softmax', n: 16 }, /n=/],
      ['#v=nope', { variant: 'softmax' }, /nope/],
      ['#v=linear&n=12&seed=5&preset=nope&o.linear.eps=abc&e.q=96~3:0.5,7:NaN', { variant: 'linear', n: 12 }, /preset=nope.*eps|eps.*preset=nope/],
      ['#v=taylor&n=10&seed=9&e.q=80~3:0.5,7:-1%2', { variant: 'taylor', n: 10 }, /e\.q/],
      ['#n=0&d=1.5&dv=99999&zz=1', { variant: 'softmax', n: 16 }, /zz/],
      // a bare word is an unknown key too (the Experiment view's link is view=experiment)
      ['#experiment', { variant: 'softmax', n: 16 }, /experiment=\(empty\) \(unknown key\)/],
    ];
    for (const [hash, want, says] of cases) {
      const page = await newPage(t, { hash });
      const snap = await snapshot(page);
      assert.equal(snap.variant, want.variant, `${hash}: variant`);
      if (want.n) assert.equal(snap.inputs.n, want.n, `${hash}: n`);
      assert.equal(snap.error, null, `${hash}: the page computes`);
      assert.equal(await page.isVisible('#hash-warning'), true, `${hash}: a visible message`);
      const text = await page.textContent('#hash-warning');
      assert.match(text, /ignored/i);
      assert.match(text, says, `${hash}: the message names what was ignored: ${text}`);
      assert.ok((await ui(page)).hashIgnored.length >= 1);
      assert.doesNotMatch(page.url(), /%$|NaN|nope|zz=/, `${hash}: the URL no longer has the bad part (${page.url()})`);
      checkAgainstBinding(snap, hash);
      assertNoProblems(page);
    }
    // valid parts of a link whose last part was cut off are kept
    const kept = await newPage(t, { hash: '#v=taylor&n=10&seed=9&e.q=80~3:0.5,7:-1%2' });
    assert.equal(await kept.inputValue('#seed'), '9');
    // a bad hash typed into a page that is already open
    const page = await newPage(t);
    await page.evaluate(() => (location.hash = '#v=dense&n=%'));
    await page.waitForFunction(() => !document.querySelector('#hash-warning').hidden);
    await idle(page);
    assert.equal((await snapshot(page)).variant, 'dense');
    assertNoProblems(page);
  });

  test("a visitor's page does not fetch the test hook (web/test-hook.js) and has no window.__attnlab, and runs as usual", async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      const requests = [];
      const problems = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
      // the Experiment view's own link (its key is view=experiment); Explore still runs its call
      await page.goto(env.server.url + '#view=experiment');
      // a timing is shown: waited on by the attribute the page sets, not by the text's unit
      // (a fast machine times the default call in µs)
      await page.waitForSelector('#timing[data-median]', { state: 'attached', timeout: 30000 });
      assert.equal(await page.evaluate(() => document.body.dataset.currentView), 'experiment');
      assert.equal(await page.isVisible('#experiment-view'), true, 'the Experiment view is shown');
      assert.equal(await page.isHidden('#hash-warning'), true, 'nothing in the link was ignored');
      assert.equal(await page.evaluate(() => typeof window.__attnlab), 'undefined');
      assert.deepEqual(requests.filter((u) => /test-hook/.test(u)), []);
      assert.ok(requests.some((u) => u.endsWith('/web/experiment/index.js')), 'the Experiment view loaded (its hook is skipped too)');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('opened from file://, the page says to serve it (npm start or a static server)', async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP });
    try {
      const page = await context.newPage();
      await page.goto(pathToFileURL(path.join(ROOT, 'web', 'index.html')).href);
      await page.locator('#load-error').waitFor({ state: 'visible', timeout: 15000 });
      const text = await page.textContent('#load-error');
      assert.match(text, /file:\/\//);
      assert.match(text, /npm start/);
      assert.match(text, /static server/);
      assert.equal(await page.textContent('#build-badge'), 'not loaded');
      await page.screenshot({ path: path.join(ARTIFACTS, 'fixes-file-url.png') });
      // served, but a module of the page fails to load: the same advice, not "loading…" forever
      const served = await context.newPage();
      await served.route('**/dist/reference.js', (r) => r.abort());
      await served.goto(env.server.url);
      await served.locator('#load-error').waitFor({ state: 'visible', timeout: 15000 });
      assert.match(await served.textContent('#load-error'), /did not load.*npm start/s);
    } finally {
      await context.close();
    }
  });

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

  for (const [label, viewport] of SIZES) {
    test(`the first heatmap is on the first screen; screenshots of the main view, compare and scaling (${label})`, async (t) => {
      const page = await newPage(t, { viewport });
      const box = await page.locator('#weights-map canvas.hm-canvas').boundingBox();
      assert.ok(box.y < viewport.height - 100, `A starts at y = ${box.y}, below the first screen`);
      const variant = await page.locator('#variant').boundingBox();
      assert.ok(variant.y < box.y, 'the variant picker comes before the outputs');
      await page.screenshot({ path: path.join(ARTIFACTS, `fixes-main-${label}.png`) });
      await page.locator('#compare').screenshot({ path: path.join(ARTIFACTS, `fixes-compare-${label}.png`) });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
      assertNoProblems(page);
    });
  }
});
