// Saves the README screenshot of the page: web/screenshot.png (1200×800, light mode).
//
//   node tests/browser/screenshot.mjs [out.png] [#hash]
//
// Needs dist/ built and Chromium (CHROMIUM, default /usr/bin/chromium). If ImageMagick's
// `convert` is on PATH the PNG is quantised to a palette to keep it small.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = path.resolve(process.argv[2] ?? path.join(REPO, 'web', 'screenshot.png'));
const hash = process.argv[3] ?? '#v=softmax&n=24&d=8&dv=8&seed=3&preset=positional&causal=1&cmp=softmax,linear,random';

const server = await startServer({ port: 0, root: REPO, quiet: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 }, colorScheme: 'light' });
  await page.goto(server.url + hash);
  await page.waitForFunction(() => window.__attnlab?.ready);
  await page.evaluate(() => window.__attnlab.idle());
  // show a tooltip on A, as a user hovering would see it
  const box = await page.locator('#weights-map canvas.hm-canvas').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.62);
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
