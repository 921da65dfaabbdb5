// Layout tests at desktop and phone sizes: the first heatmap on the first screen, chart text
// readable on a phone with the held-out column and Train in reach, fields that line up, presets in
// an even grid, the last axis tick inside the chart, variant colours distinct with 3:1 contrast.
// Screenshots go to test-artifacts/.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/layout.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startEnv, stopEnv, ARTIFACTS, newPage, idle, assertNoProblems } from './harness.mjs';
import { WIDE, PHONE, SIZES, hashOf, xIdle, top, rgbOf, contrast, deltaE } from './page-helpers.mjs';

describe("attnlab page: layout: the first screen, the phone, aligned fields and distinct colours", () => {
  before(startEnv);
  after(stopEnv);

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

  test('phone: chart text at a readable size, the held-out column and the predictions on screen, Train near the top, Explore\'s heading first', async (t) => {
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

  test('fields line up, presets sit in an even grid, the last x tick fits, variant colours are distinct with 3:1 contrast', async (t) => {
    const page = await newPage(t, { hash: hashOf({ task: 'recall', seqLen: 32, pairs: 8, vocab: 32, steps: 2000, evalEvery: 100 }).replace('#', '#'), viewport: WIDE });
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
  test('phone: the comparison\'s table stacks each variant\'s numbers under its name, every one labelled and on screen; a desktop keeps the header row', async (t) => {
    const hash = '#v=softmax&n=16&d=8&dv=8&seed=1&cmp=softmax,linear,fixed,random,factorized-random';
    const read = async (page) => {
      await idle(page);
      await page.waitForFunction(() => !window.__attnlab.status().compareBusy && document.querySelectorAll('#compare-table tbody tr').length === 5, null, { timeout: 30000 });
      return page.evaluate(() => {
        const box = document.querySelector('#compare-summary');
        const cells = [...document.querySelectorAll('#compare-table tbody td')].map((td) => {
          const r = td.getBoundingClientRect();
          return { text: td.textContent, label: td.dataset.label, before: getComputedStyle(td, '::before').content, left: r.left, right: r.right };
        });
        return { scrolls: box.scrollWidth > box.clientWidth + 1, width: window.innerWidth, cells, headVisible: document.querySelector('#compare-table thead').getBoundingClientRect().width > 2 };
      });
    };
    const phone = await read(await newPage(t, { hash, viewport: PHONE }));
    assert.equal(phone.scrolls, false, 'the summary does not scroll sideways on a phone');
    assert.equal(phone.cells.length, 25);
    for (const c of phone.cells) {
      assert.ok(c.left >= 0 && c.right <= phone.width, `"${c.text}" lies at ${Math.round(c.left)}..${Math.round(c.right)}, outside the ${phone.width} px screen`);
      assert.ok(c.label && c.before.includes(c.label), `"${c.text}" is shown after its column's name (${c.label}; ::before ${c.before})`);
    }
    assert.equal(phone.headVisible, false, 'the header row is not shown on a phone: each cell names its column');
    const desk = await read(await newPage(t, { hash, viewport: WIDE }));
    assert.equal(desk.headVisible, true, 'a desktop shows the header row');
    assert.ok(desk.cells.every((c) => c.before === 'none' || c.before === 'normal'), 'and no per-cell labels');
  });
});
