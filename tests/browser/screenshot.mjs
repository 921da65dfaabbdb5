// Saves the README screenshots of the page (light mode):
//   web/screenshot.png             the Explore view (1200×800)
//   web/screenshot-experiment.png  the Experiment view after a real run (1200×1000, from its
//                                  presets and Train down to the curves and verdicts)
//
//   node tests/browser/screenshot.mjs [out.png] [#hash]
//   node tests/browser/screenshot.mjs --experiment [out.png] [#hash]
//
// Needs dist/ built and Chromium (CHROMIUM, default /usr/bin/chromium). If ImageMagick's
// `convert` is on PATH the PNG is quantised to a palette to keep it small. The experiment run
// is the "Is token-to-token attention needed?" preset on copy at seed 1 (five variants at the
// recorded study's settings and rates, so the runs are the study's seed-1 runs; about a minute on
// two cores), unless a hash is given.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const experiment = args[0] === '--experiment';
if (experiment) args.shift();
const out = path.resolve(args[0] ?? path.join(REPO, 'web', experiment ? 'screenshot-experiment.png' : 'screenshot.png'));
const PRESET = 'token-copy';
const hash = args[1] ?? (experiment ? '#view=experiment' : '#v=softmax&n=24&d=8&dv=8&seed=3&preset=positional&causal=1&cmp=softmax,linear,random');
const usePreset = experiment && args[1] == null;

const server = await startServer({ port: 0, root: REPO, quiet: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: experiment ? 1000 : 800 }, colorScheme: 'light' });
  await page.addInitScript(() => { window.__attnlabTestHook = true; }); // the page's test hook (web/app.js)
  await page.goto(server.url + hash);
  await page.waitForFunction(() => window.__attnlab?.ready);
  await page.evaluate(() => window.__attnlab.idle());
  if (experiment) {
    if (usePreset) {
      await page.click(`button[data-preset="${PRESET}"]`);
      await page.fill('#x-seed', '1');
      await page.waitForFunction(() => window.__attnlab.experiment.config().seed === 1 && !window.__attnlab.experiment.estimating());
    }
    await page.click('#x-play');
    await page.evaluate(() => window.__attnlab.experiment.idle(600000));
    // from the presets and Train down: the curves and the legend table
    await page.evaluate(() => window.scrollTo(0, document.querySelector('#x-run').getBoundingClientRect().top + window.scrollY - 8));
  } else {
    // show a tooltip on A, as a user hovering would see it
    const box = await page.locator('#weights-map canvas.hm-canvas').boundingBox();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.62);
  }
  await page.screenshot({ path: out });
  try {
    execFileSync('convert', [out, '-colors', '192', `PNG8:${out}`], { stdio: 'ignore' });
  } catch {
    /* no ImageMagick: keep the full-colour PNG */
  }
  console.log(`${out}: ${(fs.statSync(out).size / 1024).toFixed(0)} KB`);
} finally {
  await browser.close();
  await server.close();
}
