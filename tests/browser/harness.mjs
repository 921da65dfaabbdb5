// What the browser tests of the page share: the server, Chromium, the binding in Node, a fresh
// page per test, the checks of what it shows, and the accessibility check (axe-core). Used by
// every test file of tests/browser/.
//
// The recorded study: every page is served tests/browser/fixtures/summary.json as
// experiments/summary.json (a small study run at 2 % of the steps, its settings those it really
// ran; fixtures/make-summary.mjs wrote it), so the tests do not depend on the study in the repository, which is
// rerun from time to time. newPage(t, { summary: null }) serves the repository's own file.
// Env: CHROMIUM (default /usr/bin/chromium); ATTNLAB_ROOT serves another tree that has web/ and
// dist/ (for developing the page against a stand-in binding).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ROOT = process.env.ATTNLAB_ROOT ? path.resolve(process.env.ATTNLAB_ROOT) : REPO;
export const ARTIFACTS = path.join(REPO, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const BINDING = path.join(ROOT, 'dist', 'attnlab.js');
export const SUMMARY_FIXTURE = path.join(REPO, 'tests', 'browser', 'fixtures', 'summary.json');
const AXE = path.join(REPO, 'node_modules', 'axe-core', 'axe.min.js');
const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const haveChromium = fs.existsSync(CHROMIUM);
const haveBinding = fs.existsSync(BINDING);

let chromium, browser, server, nodeLab, AttnError, binding;

/** Starts the server and Chromium and loads the binding in Node; returns what the tests use. */
export async function startEnv() {
  assert.ok(haveChromium, `no Chromium at ${CHROMIUM}: npm test installs it (apt-get install chromium)`);
  assert.ok(haveBinding, `${BINDING} is missing: run \`npm run build\` first`);
  ({ chromium } = await import('playwright-core'));
  binding = await import(pathToFileURL(BINDING).href);
  AttnError = binding.AttnError;
  nodeLab = await binding.init();
  server = await startServer({ port: 0, root: ROOT, quiet: true, followSymlinks: !!process.env.ATTNLAB_ROOT });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return { browser, server, nodeLab, AttnError, binding };
}

export async function stopEnv() {
  await browser?.close();
  await server?.close();
}

/** Within the accuracy bar of each other (each build is within 1e-5 + 1e-4·|ref| of float64; docs/contract.md). */
export function assertClose(actual, expected, what, abs = 3e-5, rel = 3e-4) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0, at = -1;
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i] - expected[i]) - (abs + rel * Math.abs(expected[i]));
    if (!(err <= 0) && (at < 0 || err > worst)) {
      worst = err;
      at = i;
    }
  }
  assert.ok(at < 0, `${what}: element ${at} is ${actual[at]}, expected ${expected[at]}`);
}

export function toF32Inputs(inputs) {
  const out = {};
  for (const [k, v] of Object.entries(inputs)) out[k] = Array.isArray(v) ? Float32Array.from(v) : v;
  return out;
}

/** Asks the page for its test hook (window.__attnlab), which a visitor's page does not load. */
export function withTestHook(context) {
  return context.addInitScript(() => { window.__attnlabTestHook = true; });
}

export async function newPage(t, { hash = '', viewport = { width: 1280, height: 900 }, colorScheme = 'light', summary = SUMMARY_FIXTURE } = {}) {
  const context = await browser.newContext({ viewport, colorScheme, acceptDownloads: true });
  await withTestHook(context);
  const page = await context.newPage();
  if (summary) await page.route('**/experiments/summary.json', (route) => route.fulfill({ path: summary, contentType: 'application/json' }));
  page.requests = [];
  page.on('request', (r) => page.requests.push(r.url()));
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  await page.goto(server.url + hash);
  await page.waitForFunction(() => window.__attnlab?.ready || window.__attnlab?.loadError, null, { timeout: 30000 });
  const loadError = await page.evaluate(() => window.__attnlab.loadError ?? null);
  assert.equal(loadError, null, `the binding did not load in the page: ${JSON.stringify(loadError)}`);
  await idle(page);
  t.after(async () => {
    await context.close();
  });
  page.problems = problems;
  return page;
}

export function rawGet(port, rawPath) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

export const idle = (page) => page.evaluate(() => window.__attnlab.idle());
export const snapshot = (page) => page.evaluate(() => window.__attnlab.snapshot());

export function assertNoProblems(page) {
  assert.deepEqual(page.problems, [], 'console errors / page errors / failed requests');
}

/** Runs the binding in Node on the page's inputs and compares output (and weights). */
export function checkAgainstBinding(snap, label) {
  const opts = { ...snap.options, weights: !!snap.weights };
  const ref = nodeLab.attention(snap.variant, toF32Inputs(snap.inputs), opts);
  assertClose(snap.output, Array.from(ref.output), `${label}: y`);
  if (snap.weights) assertClose(snap.weights, Array.from(ref.weights), `${label}: A`);
  return ref;
}

export async function chooseVariant(page, id) {
  await page.selectOption('#variant', id);
  await idle(page);
  const snap = await snapshot(page);
  assert.equal(snap.variant, id, `page shows ${id}`);
  return snap;
}

/** Colour of the centre of heatmap cell (i, j), in device pixels. */
export async function cellColour(page, canvasSelector, i, j) {
  return page.evaluate(([sel, i, j]) => {
    const c = document.querySelector(sel);
    const rows = Number(c.dataset.rows), cols = Number(c.dataset.cols);
    const x = Math.floor(((j + 0.5) / cols) * c.width), y = Math.floor(((i + 0.5) / rows) * c.height);
    const d = c.getContext('2d').getImageData(x, y, 1, 1).data;
    return { rgb: `rgb(${d[0]},${d[1]},${d[2]})`, mask: c.dataset.maskColor };
  }, [canvasSelector, i, j]);
}


/**
 * The accessibility violations axe-core finds on the page as it is now, of impact serious or
 * critical: [{ id, impact, help, nodes: [selector: why] }].
 */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations);
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${(n.failureSummary ?? '').split('\n').slice(1).join(' ').trim()}`),
  }));
}
