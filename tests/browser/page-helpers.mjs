// page-helpers.mjs — small helpers the page's browser tests share (the environment itself —
// server, Chromium, pages — is harness.mjs's): viewports, a hash for the Experiment view, calls
// into the page's test hook, heatmap cells as points, and the colour arithmetic of the palette
// checks.

import assert from 'node:assert/strict';

export const WIDE = { width: 1440, height: 900 };
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const SIZES = [['desktop', DESKTOP], ['phone', PHONE]];

/** A hash for the Experiment view: tiny copy-task models unless overridden. */
export function hashOf(over = {}) {
  const x = { task: 'copy', seqLen: 8, vocab: 6, vars: 'softmax,linear', dModel: 16, heads: 2, layers: 1, dFF: 32, steps: 30, batch: 8, lr: 0.003, warmup: 3, evalEvery: 10, evalBatch: 16, seed: 3, ...over };
  return '#view=experiment&' + Object.entries(x).map(([k, v]) => `x.${k}=${encodeURIComponent(v).replace(/%2C/g, ',')}`).join('&');
}

/** Runs fn(x, arg) in the page with x = the Experiment view's test hook. */
export const X = (page, fn, arg) => page.evaluate(([f, a]) => new Function('x', 'a', `return (${f})(x, a)`)(window.__attnlab.experiment, a), [fn.toString(), arg]);
export const xIdle = (page) => X(page, (x) => x.idle());
export const top = (page, sel) => page.$eval(sel, (e) => e.getBoundingClientRect().top + window.scrollY);
export const focusedId = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);

// Explore's test hook
export const ui = (page) => page.evaluate(() => window.__attnlab.ui());
export const tooltip = (page) => page.evaluate(() => window.__attnlab.tooltip());
export const status = (page) => page.evaluate(() => window.__attnlab.status());

/** Viewport point of the centre of cell (i, j) of a heatmap canvas. */
export async function cellPoint(page, selector, i, j) {
  const box = await page.locator(selector).boundingBox();
  const { rows, cols } = await page.$eval(selector, (c) => ({ rows: Number(c.dataset.rows), cols: Number(c.dataset.cols) }));
  return { x: box.x + ((j + 0.5) / cols) * box.width, y: box.y + ((i + 0.5) / rows) * box.height };
}

/** Clicks A[i, j] of Explore's map, which locks the read-out on it. */
export async function lockCell(page, i, j) {
  const sel = '#weights-map canvas.hm-canvas';
  await page.locator(sel).scrollIntoViewIfNeeded();
  const p = await cellPoint(page, sel, i, j);
  await page.mouse.click(p.x, p.y);
  const tip = await tooltip(page);
  assert.equal(tip.locked, true, `A[${i},${j}] locked`);
  assert.match(tip.text, new RegExp(`A\\[${i}, ${j}\\]`));
}

export const overlaps = (a, b) => a[0] < b[1] && b[0] < a[1];

// colour arithmetic for the palette checks (WCAG relative luminance; CIE L*a*b* distance)
export const rgbOf = (css) => css.match(/[\d.]+/g).slice(0, 3).map(Number);
const lin = (c) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const luminance = (rgb) => { const [r, g, b] = rgb.map(lin); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
export const contrast = (p, q) => { const [a, b] = [luminance(p), luminance(q)].sort((x, y) => y - x); return (a + 0.05) / (b + 0.05); };
function lab(rgb) {
  const [r, g, b] = rgb.map(lin);
  const f = (t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const X = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047), Y = f(0.2126 * r + 0.7152 * g + 0.0722 * b), Z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * Y - 16, 500 * (X - Y), 200 * (Y - Z)];
}
export const deltaE = (p, q) => { const a = lab(p), b = lab(q); return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); };
