// Tests of how the page is served and what it fetches: no test hook for a visitor, a page opened
// from file:// says to serve it, Explore fetches nothing of the recorded study.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/serving.test.mjs
//
// Tiny models and a few steps; no timing assertions (a wait has a timeout, never a bound on speed).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEnv, stopEnv, ROOT, ARTIFACTS, newPage, idle, assertNoProblems } from './harness.mjs';
import { WIDE, DESKTOP } from './page-helpers.mjs';

describe("attnlab page: serving: what a visitor's page fetches, and a page opened from disk", () => {
  let env;
  before(async () => {
    env = await startEnv();
  });
  after(stopEnv);

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

  test('Explore fetches nothing of the recorded study; the Experiment view fetches it when first shown', async (t) => {
    const page = await newPage(t, { viewport: WIDE });
    await idle(page);
    assert.deepEqual(page.requests.filter((u) => /\/experiments\//.test(u)), [], 'no request for experiments/ in Explore');
    await page.click('#tab-experiment');
    await page.waitForFunction(() => document.querySelector('#x-answers-table'), null, { timeout: 10000 });
    assert.equal(page.requests.filter((u) => /experiments\/summary\.json/.test(u)).length, 1, 'the summary, once');
    assert.deepEqual(page.requests.filter((u) => /results\.json|kjv\.txt/.test(u)), [], 'no results.json, no corpus');
    assertNoProblems(page);
  });
});
