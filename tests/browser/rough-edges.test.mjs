// Browser tests of the rough edges a new user hit (issue 19, items 4–12): the skip link, a setup
// the binding would refuse, work lost on leaving, the form during a run, noisy scaling timings,
// the phone layout, links that are too big or name unknown keys, the keyboard, and the smaller
// ones (edits and sizes, aligned fields, presets, axis ticks, colours, α sliders, compare maps,
// untrained Synthesizers, the status line, the loss chart's wording, empty charts, what Explore
// fetches). Each test failed on the page before these fixes.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/rough-edges.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, idle, snapshot, assertNoProblems } from './harness.mjs';

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

/** A hash for the Experiment view: tiny copy-task models unless overridden. */
function hashOf(over = {}) {
  const x = { task: 'copy', seqLen: 8, vocab: 6, vars: 'softmax,linear', dModel: 16, heads: 2, layers: 1, dFF: 32, steps: 30, batch: 8, lr: 0.003, warmup: 3, evalEvery: 10, evalBatch: 16, seed: 3, ...over };
  return '#view=experiment&' + Object.entries(x).map(([k, v]) => `x.${k}=${encodeURIComponent(v).replace(/%2C/g, ',')}`).join('&');
}

const X = (page, fn, arg) => page.evaluate(([f, a]) => new Function('x', 'a', `return (${f})(x, a)`)(window.__attnlab.experiment, a), [fn.toString(), arg]);
const xIdle = (page) => X(page, (x) => x.idle());
const top = (page, sel) => page.$eval(sel, (e) => e.getBoundingClientRect().top + window.scrollY);
const focusedId = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);

// colour arithmetic for the palette checks (WCAG relative luminance; CIE L*a*b* distance)
const rgbOf = (css) => css.match(/[\d.]+/g).slice(0, 3).map(Number);
const lin = (c) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const luminance = (rgb) => { const [r, g, b] = rgb.map(lin); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const contrast = (p, q) => { const [a, b] = [luminance(p), luminance(q)].sort((x, y) => y - x); return (a + 0.05) / (b + 0.05); };
function lab(rgb) {
  const [r, g, b] = rgb.map(lin);
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const X = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047), Y = f(0.2126 * r + 0.7152 * g + 0.0722 * b), Z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
}
const deltaE = (p, q) => { const a = lab(p), b = lab(q); return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); };

describe('attnlab page: the rough edges of issue 19', () => {
  before(startEnv);
  after(stopEnv);

  test('4. "Skip to …" moves the focus only, to each view\'s own target; the page keeps its state', async (t) => {
    const page = await newPage(t, { hash: '#v=linear&n=12&d=4&dv=4&seed=7&preset=random', viewport: DESKTOP });
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

    const x = await newPage(t, { hash: hashOf({ steps: 77 }), viewport: DESKTOP });
    await x.keyboard.press('Tab');
    await x.keyboard.press('Enter');
    assert.equal(await x.isVisible('#experiment-view'), true, 'the Experiment view stays');
    assert.equal((await X(x, (e) => e.config())).train.steps, 77, 'its setup is kept');
    assert.equal(await focusedId(x), 'x-run', 'the focus is on the training controls');
    assert.match(await x.textContent('.skip-link'), /Train/);
    for (const p of [page, x]) assertNoProblems(p);
  });

  test('5. a setup the binding would refuse is named next to Train as it is typed, and nothing starts', async (t) => {
    // each typed as a user would, on a setup that was fine
    const cases = [
      [{ task: 'recall', seqLen: 96, pairs: 8, vocab: 32 }, (p) => p.fill('#x-knob-pairs', '40'), /pairs = 40 is too many for vocab 32/, '#x-knob-pairs'],
      [{ task: 'sort' }, (p) => p.fill('#x-knob-seqLen', '1'), /sequence length must be a whole number from 2/, '#x-knob-seqLen'],
      [{ dModel: 8, heads: 2 }, (p) => p.fill('#x-dModel', '7'), /heads must divide dModel/, '#x-heads'],
      [{ task: 'text', seqLen: 16 }, async (p) => { await p.click('#x-source-own'); await p.fill('#x-text', 'ab'); }, /your text has 2 characters; it needs at least/, '#x-text'],
    ];
    for (const [over, type, why, field] of cases) {
      const h = hashOf(over).replace(over.task === 'text' ? /&x\.vocab=[^&]*/ : /^$/, '');
      const page = await newPage(t, { hash: h, viewport: DESKTOP });
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
    const page = await newPage(t, { hash: hashOf({ dModel: 7, heads: 2 }), viewport: DESKTOP });
    await page.fill('#x-dModel', '8');
    await page.waitForFunction(() => document.querySelector('#x-config-error').hidden && !document.querySelector('#x-play').disabled, null, { timeout: 5000 });
    assert.equal(await page.getAttribute('#x-heads', 'aria-invalid'), 'false');
    assertNoProblems(page);
  });

  test('6. "All the numbers" opens rendered in the page; leaving with trained models asks first', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 6, evalEvery: 3 }), viewport: DESKTOP });
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

  test('7. the form is locked while the runs it describes train; the link stays theirs', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 4000, evalEvery: 1000, seqLen: 16, dModel: 32 }), viewport: DESKTOP });
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

  test('8. the scaling chart states a crossing or a slope only when the timings agree', async (t) => {
    const page = await newPage(t, { viewport: DESKTOP });
    // the noise of the report: linear 143 µs at n = 128, 85 µs at 256, with repeats that disagree
    const timing = (median, spread = 0.05, samples = 10) => ({ median, min: median * (1 - spread), max: median * (1 + spread), q1: median * (1 - spread / 2), q3: median * (1 + spread / 2), samples });
    const softmax = [[64, 0.07], [128, 0.15], [256, 0.45], [512, 1.6]];
    const linear = [[64, 0.08, 0.05], [128, 0.143, 1.2], [256, 0.085, 0.05], [512, 0.2, 0.05]];
    const series = [
      { key: 'softmax/simd', label: 'softmax', variant: 'softmax', family: 'softmax', points: softmax.map(([n, ms]) => ({ n, ms, point: { timing: timing(ms) } })) },
      { key: 'linear/simd', label: 'linear', variant: 'linear', family: 'linear', points: linear.map(([n, ms, sp]) => ({ n, ms, point: { timing: timing(ms, sp) } })) },
    ];
    const fns = await page.evaluate(async (s) => {
      const m = await import(new URL('chart.js', location.href).href);
      return { crossings: m.crossings(s).length, slopeLinear: m.slope(s[1].points), slopeSoftmax: m.slope(s[0].points) };
    }, series);
    assert.equal(fns.crossings, 0, 'no crossing from noisy timings');
    assert.ok(!Number.isFinite(fns.slopeLinear), `no slope from a series whose time falls (${fns.slopeLinear})`);
    assert.ok(fns.slopeSoftmax > 1.4 && fns.slopeSoftmax < 2.2, `a steady series keeps its slope (${fns.slopeSoftmax})`);
    // the panel says so, drawn from those points
    const points = [];
    for (const [variant, rows] of [['softmax', softmax], ['linear', linear]]) {
      for (const [n, ms, sp] of rows) points.push({ n, variant, build: 'simd', timing: timing(ms, sp), dims: { n, d: 16, dv: 16 }, options: {} });
    }
    await page.evaluate(([p]) => window.__attnlab.scalingReplay({ variants: [{ id: 'softmax' }, { id: 'linear' }], builds: ['simd'], ns: [64, 128, 256, 512] }, p), [points]);
    const report = await page.evaluate(() => window.__attnlab.scaling());
    assert.deepEqual(report.crossings, [], 'no crossing drawn');
    assert.match(await page.textContent('#scale-crossings'), /too noisy/);
    assert.match(await page.textContent('#scale-legend li[data-series="linear/simd"]'), /no slope: the timings are too noisy/);
    assert.match(await page.textContent('#scale-legend li[data-series="softmax/simd"]'), /slope \d\.\d\d/);
    assertNoProblems(page);
  });

  test('9. phone: chart text at a readable size, the held-out column and the predictions on screen, Train near the top, Explore\'s heading first', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 10, evalEvery: 5, seqLen: 16 }), viewport: PHONE });
    const fontSizes = () => page.$$eval('#x-curves svg', (svgs) => svgs.flatMap((svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')].map((tx) => Number(getComputedStyle(tx).fontSize.replace('px', '')) * scale);
    }));
    await page.waitForFunction(() => document.querySelector('#x-curves svg')?.getBoundingClientRect().width > 0);
    const sizes = await fontSizes();
    assert.ok(sizes.length > 10, 'the charts have text');
    assert.ok(Math.min(...sizes) >= 10, `chart text renders at ${Math.min(...sizes).toFixed(1)} px, under 10 px`);
    const playTop = await top(page, '#x-play');
    assert.ok(playTop < 1.25 * PHONE.height, `Train is ${Math.round(playTop)} px down`);
    await page.click('#x-play');
    await xIdle(page);
    const right = await page.$$eval('#x-legend td.x-acc', (tds) => tds.map((td) => td.getBoundingClientRect().right));
    assert.ok(right.length === 2 && right.every((r) => r <= PHONE.width), `the held-out accuracy column ends at ${right} px`);
    const marks = await page.$$eval('#x-predictions td.right, #x-predictions td.wrong', (tds) => tds.map((td) => td.getBoundingClientRect().right));
    assert.ok(marks.length > 0, 'predictions are shown');
    assert.ok(Math.max(...marks) <= PHONE.width, `a ✓/✗ ends at ${Math.max(...marks)} px, past the screen`);
    assert.ok(Math.min(...(await fontSizes())) >= 10, 'after a run too');
    assertNoProblems(page);

    const explore = await newPage(t, { viewport: PHONE });
    assert.ok(await top(explore, '#controls-h') < await top(explore, '#outputs'), '"Set up" comes before the outputs');
    assert.ok(await explore.isVisible('.tagline'), 'the tagline that states the two questions shows on a phone');
    assertNoProblems(explore);
  });

  test('10. links: steps are bounded, a cut-off escape gets one banner, unknown keys are named, a long text stays out of the link and off the keystroke path', async (t) => {
    const big = await newPage(t, { hash: hashOf({ steps: '1e9' }), viewport: DESKTOP });
    assert.equal(await big.isVisible('#hash-warning'), true);
    assert.match(await big.textContent('#hash-warning'), /x\.steps=1e9 \(steps must be a whole number from 1 to 20000/);
    assert.equal((await X(big, (x) => x.config())).train.steps, 400, 'the task\'s default instead');
    assert.equal(await big.getAttribute('#x-steps', 'max'), '20000');
    assertNoProblems(big);

    const cut = await newPage(t, { hash: `${hashOf({ seed: 5 })}&x.evalBatch=1%`, viewport: DESKTOP });
    const banners = await cut.$$eval('.warn-banner, [role=status].page-error', (bs) => bs.filter((b) => b.offsetParent).map((b) => b.textContent));
    assert.equal(banners.length, 1, `one banner, not ${banners.length}: ${banners.join(' | ')}`);
    assert.match(banners[0], /x\.evalBatch/);
    assert.equal((await X(cut, (x) => x.config())).seed, 5, 'the rest of the link is kept');
    assertNoProblems(cut);

    const unknown = await newPage(t, { hash: `${hashOf()}&x.variants=softmax,dense`, viewport: DESKTOP });
    assert.equal(await unknown.isVisible('#hash-warning'), true, 'an unknown key is named');
    assert.match(await unknown.textContent('#hash-warning'), /x\.variants=softmax,dense \(unknown key/);
    assertNoProblems(unknown);

    const page = await newPage(t, { hash: hashOf(), viewport: DESKTOP });
    await page.selectOption('#x-task', 'text');
    await page.click('#x-source-own');
    const text = 'The quick brown fox jumps over the lazy dog, then naps in the warm sun. '.repeat(2800).slice(0, 200000);
    await page.fill('#x-text', text);
    await page.waitForFunction(() => /too long for a link/.test(document.querySelector('#x-text-note')?.textContent ?? ''), null, { timeout: 10000 });
    const hash = await page.evaluate(() => location.hash);
    assert.ok(hash.length < 4000, `the link holds ${hash.length} characters`);
    assert.equal((await X(page, (x) => x.text())).length, 200000, 'the text itself is kept for training');
    // twenty keystrokes: the form is read once the typing pauses, not twenty times (counted in
    // the link's writes: one for the form read, one when its estimate ends; the estimate of the
    // text filled in above has ended first, so that its end is not counted)
    await page.waitForFunction(() => !window.__attnlab.experiment.estimating(), null, { timeout: 30000 });
    const writes = await page.evaluate(async () => {
      let n = 0;
      const replace = history.replaceState.bind(history);
      history.replaceState = (...a) => { n++; return replace(...a); };
      const box = document.querySelector('#x-text');
      for (let i = 0; i < 20; i++) {
        box.value += 'x';
        box.dispatchEvent(new Event('input', { bubbles: true }));
      }
      const during = n;
      await new Promise((r) => setTimeout(r, 1000));
      history.replaceState = replace;
      return { during, after: n };
    });
    assert.equal(writes.during, 0, 'no link written per keystroke');
    assert.ok(writes.after <= 2, `the link written ${writes.after} times after twenty keystrokes`);
    assertNoProblems(page);
  });

  test('11. keyboard: Train and Pause keep the focus on the controls, the matrix is one Tab stop with arrow keys, Train comes early', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 4000, evalEvery: 1000, seqLen: 16, dModel: 32 }), viewport: DESKTOP });
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
    const fresh = await newPage(t, { hash: hashOf(), viewport: DESKTOP });
    let stops = 0;
    while (stops < 60 && (await focusedId(fresh)) !== 'x-play') {
      await fresh.keyboard.press('Tab');
      stops++;
    }
    assert.ok(stops <= 16, `Train is Tab stop ${stops}`);

    // the matrix editor: one Tab stop; the arrows move between cells
    const explore = await newPage(t, { viewport: DESKTOP });
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

  test('12a. an edit that no longer fits its array after a size change leaves the tab and the link', async (t) => {
    const page = await newPage(t, { viewport: DESKTOP });
    const cell = page.locator('input.cell[data-array="q"][data-index="2"]');
    await cell.fill('1.5');
    await cell.press('Enter');
    await idle(page);
    assert.match(page.url(), /e\.q=/);
    assert.equal(await page.evaluate(() => document.querySelector('#tab-q').classList.contains('edited')), true);
    await page.fill('#dim-n', '20');
    await idle(page);
    assert.equal(await page.evaluate(() => document.querySelector('#tab-q').classList.contains('edited')), false, 'the tab is no longer marked edited');
    assert.doesNotMatch(page.url(), /e\.q=/, 'the link no longer holds the edit');
    assertNoProblems(page);
  });

  test('12b–e. fields line up, presets sit in an even grid, the last x tick fits, variant colours are distinct with 3:1 contrast', async (t) => {
    const page = await newPage(t, { hash: hashOf({ task: 'recall', seqLen: 32, pairs: 8, vocab: 32, steps: 2000, evalEvery: 100 }).replace('#', '#'), viewport: DESKTOP });
    const [a, b] = await page.$$eval('#x-knob-seqLen, #x-knob-vocab', (xs) => xs.map((x) => x.getBoundingClientRect().top));
    assert.ok(Math.abs(a - b) <= 1, `"sequence length" and "vocabulary" inputs at ${a} and ${b}`);
    const presets = await page.$$eval('button[data-preset]', (bs) => bs.map((b) => { const r = b.getBoundingClientRect(); return { w: Math.round(r.width), x: Math.round(r.left) }; }));
    assert.ok(presets.length >= 6, 'the presets');
    assert.equal(new Set(presets.map((p) => p.w)).size, 1, `the presets have one width: ${presets.map((p) => p.w)}`);
    for (const svg of ['#x-chart-loss svg', '#x-chart-accuracy svg']) {
      const fit = await page.$eval(svg, (s) => {
        const width = s.viewBox.baseVal.width;
        return [...s.querySelectorAll('text')].filter((tx) => !tx.hasAttribute('transform')).map((tx) => ({ text: tx.textContent, right: tx.getBBox().x + tx.getBBox().width, left: tx.getBBox().x })).filter((x) => x.right > width || x.left < 0).concat([{ width }]);
      });
      assert.deepEqual(fit.slice(0, -1), [], `${svg}: text past the chart's edge (width ${fit.at(-1).width})`);
    }
    assert.match(await page.textContent('#x-chart-accuracy svg'), /2000|2k/);
    // colours: every variant's line 3:1 or more on its panel, and no two alike, in both themes
    for (const scheme of ['light', 'dark']) {
      if (scheme === 'dark') {
        await page.click('#theme-toggle');
        await page.click('#theme-toggle');
        await page.waitForFunction(() => document.documentElement.dataset.scheme === 'dark');
        await page.selectOption('#x-task', 'copy'); // the form is drawn again in the dark colours
      }
      const { panel, colours } = await page.evaluate(() => ({
        panel: getComputedStyle(document.querySelector('.x-setup-panel')).backgroundColor,
        colours: [...document.querySelectorAll('#x-variants label')].map((l) => [l.querySelector('input').value, getComputedStyle(l.querySelector('.swatch')).backgroundColor]),
      }));
      for (const [name, c] of colours) assert.ok(contrast(rgbOf(c), rgbOf(panel)) >= 3, `${scheme}: ${name} ${c} has ${contrast(rgbOf(c), rgbOf(panel)).toFixed(2)}:1 on ${panel}`);
      for (let i = 0; i < colours.length; i++) {
        for (let j = i + 1; j < colours.length; j++) {
          const d = deltaE(rgbOf(colours[i][1]), rgbOf(colours[j][1]));
          assert.ok(d >= 15, `${scheme}: ${colours[i][0]} and ${colours[j][0]} look alike (ΔE ${d.toFixed(1)})`);
        }
      }
    }
    assertNoProblems(page);
  });

  test('12f–h. α sliders at their shares; compare maps big enough, fixed on its own scale, a caveat for untrained Synthesizers', async (t) => {
    const page = await newPage(t, { hash: '#v=mixture&n=16&d=8&dv=8&seed=1&preset=random&cmp=softmax,linear,fixed,random', viewport: DESKTOP });
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

  test('12i–k. the status line counts steps per run; the loss chart says what the training line is; an empty chart\'s axis follows the steps', async (t) => {
    const page = await newPage(t, { hash: hashOf({ steps: 30 }), viewport: DESKTOP });
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

  test('12l. Explore fetches nothing of the recorded study; the Experiment view fetches it when first shown', async (t) => {
    const page = await newPage(t, { viewport: DESKTOP });
    await idle(page);
    assert.deepEqual(page.requests.filter((u) => /\/experiments\//.test(u)), [], 'no request for experiments/ in Explore');
    await page.click('#tab-experiment');
    await page.waitForFunction(() => document.querySelector('#x-answers-table'), null, { timeout: 10000 });
    assert.equal(page.requests.filter((u) => /experiments\/summary\.json/.test(u)).length, 1, 'the summary, once');
    assert.deepEqual(page.requests.filter((u) => /results\.json|kjv\.txt/.test(u)), [], 'no results.json, no corpus');
    assertNoProblems(page);
  });
});
