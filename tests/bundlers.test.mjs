// The package in a web developer's toolchain: `npm pack` the repo, install the tarball (offline)
// into a copy of tests/consumers/browser-app (a page that imports `attnlab`, runs a few calls on
// each build and writes the numbers into the DOM), bundle it with esbuild and with Vite, serve
// each output statically and run it in Chromium. The page must show the numbers the binding gives
// in Node, with no console error, and every .wasm it fetched must have come back 200.
//
//   node --experimental-wasm-relaxed-simd --test tests/bundlers.test.mjs
//
// esbuild: its JS API (bundle, format esm, platform browser), plus the one documented step of
// copying node_modules/attnlab/dist/*.wasm next to the bundle. Vite: `vite build` with no
// configuration and no copying: Vite must emit the three .wasm files itself; and `vite` (the dev
// server, whose dependency optimizer rewrites the package) serving the same app.
// esbuild and vite are devDependencies of the repo and run from its node_modules; nothing here
// uses the network. Env: CHROMIUM (default /usr/bin/chromium); ATTNLAB_PACKAGE_BINDING replaces the
// installed package's attnlab.js (to try a binding change in the temp copy only);
// ATTNLAB_KEEP_TMP=1 keeps the temp directory.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { startServer } from '../scripts/serve.mjs';
import { CALLS, runCalls } from './consumers/browser-app/calls.js';
import {
  ABS_TOL, REL_TOL, REPO_ROOT, BINDING_PATH, packTarball, installTarball, devDependencyDir, runCommand,
} from './helpers.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run'];
const APP_FIXTURE = path.join(REPO_ROOT, 'tests', 'consumers', 'browser-app');
const WASM_FILES = ['attnlab-relaxed.wasm', 'attnlab-simd.wasm', 'attnlab-scalar.wasm'];

let tmp, app, installed, browser, expected, nodeBuilds;

before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: npm test installs it (apt-get install chromium)`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-bundlers-'));
  const tarball = packTarball(tmp);
  app = path.join(tmp, 'app');
  fs.cpSync(APP_FIXTURE, app, { recursive: true });
  installed = installTarball(app, tarball);
  if (process.env.ATTNLAB_PACKAGE_BINDING) fs.copyFileSync(process.env.ATTNLAB_PACKAGE_BINDING, path.join(installed, 'dist', 'attnlab.js'));

  // The same calls in Node, through dist/attnlab.js, on every build this Node runs.
  const binding = await import(pathToFileURL(BINDING_PATH).href);
  const { relaxedSimd } = binding.features();
  expected = {};
  for (const simd of [relaxedSimd ? 'relaxed' : null, true, false].filter((x) => x !== null)) {
    const lab = await binding.init({ simd });
    expected[lab.build] = runCalls(lab);
  }
  nodeBuilds = Object.keys(expected);

  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
});

after(async () => {
  await browser?.close();
  if (tmp && !process.env.ATTNLAB_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Serves `root` on 127.0.0.1, opens index.html in Chromium and returns what the page showed. */
async function runPage(root) {
  const server = await startServer({ port: 0, root, quiet: true });
  try {
    return await openPage(`http://127.0.0.1:${server.port}/`);
  } finally {
    await server.close();
  }
}

/** Opens `base`index.html in Chromium and returns what the page showed, with every .wasm response. */
async function openPage(base) {
  const context = await browser.newContext();
  const problems = [];
  const wasm = [];
  try {
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('response', (r) => {
      if (new URL(r.url()).pathname.endsWith('.wasm')) wasm.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] });
      else if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
    });
    await page.goto(`${base}index.html`);
    try {
      await page.waitForFunction(() => document.getElementById('status')?.textContent !== 'loading…', null, { timeout: 30_000 });
    } catch (err) {
      problems.push(`the page never finished loading (${err.message.split('\n')[0]})`);
    }
    const shown = await page.evaluate(() => ({
      status: document.getElementById('status')?.textContent,
      build: document.getElementById('build')?.textContent,
      output: document.getElementById('output')?.textContent,
    }));
    return { ...shown, problems, wasm, base };
  } finally {
    await context.close();
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Checks what the page showed against the same calls in Node. */
function checkPage(shown, bundler) {
  const where = `${bundler} bundle in Chromium`;
  const context = `\npage status: ${shown.status}\npage output: ${String(shown.output).slice(0, 2000)}\n` +
    `problems:\n  ${shown.problems.join('\n  ') || '(none)'}\nwasm responses: ${JSON.stringify(shown.wasm)}`;
  assert.equal(shown.status, 'done', `${where}: the app did not finish${context}`);
  assert.deepEqual(shown.problems, [], `${where}: console errors or failed requests${context}`);
  const report = JSON.parse(shown.output);
  assert.equal(report.build, shown.build, `${where}: #build`);
  assert.ok(['relaxed', 'simd'].includes(report.build), `${where}: init() picked ${report.build} in Chromium${context}`);
  const builds = Object.keys(report.results).sort();
  assert.deepEqual(builds, [...new Set([report.build, 'simd', 'scalar'])].sort(), `${where}: builds run${context}`);

  // every build's .wasm was fetched once, from where the bundle put it, and came back 200
  const fetched = shown.wasm.map((w) => path.posix.basename(new URL(w.url).pathname));
  for (const b of builds) {
    const hits = shown.wasm.filter((w) => path.posix.basename(new URL(w.url).pathname).startsWith(`attnlab-${b}`));
    assert.ok(hits.length >= 1, `${where}: the ${b} build ran but no attnlab-${b}*.wasm was fetched (fetched: ${fetched.join(', ')})`);
  }
  assert.equal(shown.wasm.length, builds.length, `${where}: .wasm responses ${JSON.stringify(shown.wasm)}`);
  for (const w of shown.wasm) {
    assert.equal(w.status, 200, `${where}: ${w.url} came back ${w.status}`);
    assert.match(w.type ?? '', /^application\/wasm\b/, `${where}: ${w.url} came back as ${w.type}, not application/wasm (a fallback page?)`);
    assert.ok(w.url.startsWith(shown.base), `${where}: ${w.url} is not on the app's server`);
  }

  for (const b of builds) {
    const ref = expected[b] ?? expected.simd; // a Node without relaxed SIMD: the simd build's numbers
    const refBuild = expected[b] ? b : 'simd';
    const got = report.results[b];
    assert.equal(got.length, CALLS.length, `${where} [${b}]: number of calls`);
    for (let c = 0; c < CALLS.length; c++) {
      for (const what of ['output', 'weights']) {
        const a = got[c][what];
        const e = ref[c][what];
        const label = `${where} [${b}] ${CALLS[c].id} ${what} vs Node [${refBuild}]`;
        if (e === null) { assert.equal(a, null, `${label}: unexpected array`); continue; }
        assert.ok(Array.isArray(a), `${label}: missing`);
        assert.equal(a.length, e.length, `${label}: length`);
        for (let i = 0; i < e.length; i++) {
          assert.ok(Math.abs(a[i] - e[i]) <= ABS_TOL + REL_TOL * Math.abs(e[i]),
            `${label}: element ${i} is ${a[i]}, expected ${e[i]}`);
        }
      }
    }
  }
}

describe('attnlab bundled into a browser app', () => {
  test('esbuild (JS API, bundle, format esm, platform browser) + the .wasm files copied next to the bundle', async () => {
    const esbuild = await import(pathToFileURL(path.join(devDependencyDir('esbuild'), 'lib', 'main.js')).href);
    const out = path.join(app, 'out-esbuild');
    let result;
    try {
      result = await esbuild.build({
        absWorkingDir: app, entryPoints: ['main.js'], outdir: out, bundle: true, format: 'esm', platform: 'browser',
        logLevel: 'silent',
      });
    } catch (err) {
      const messages = (err.errors ?? []).map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''} ${m.text}`);
      assert.fail(`esbuild failed: ${messages.join('\n') || err.message}`);
    }
    const text = (list) => list.map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''} ${m.text}`).join('\n');
    assert.deepEqual(result.errors, [], `esbuild errors:\n${text(result.errors)}`);
    assert.deepEqual(result.warnings, [], `esbuild warnings:\n${text(result.warnings)}`);
    // the documented step: the .wasm files go next to the bundle
    fs.copyFileSync(path.join(app, 'index.html'), path.join(out, 'index.html'));
    for (const f of WASM_FILES) fs.copyFileSync(path.join(installed, 'dist', f), path.join(out, f));
    checkPage(await runPage(out), 'esbuild');
  });

  test('Vite (`vite build`, no configuration, no copying): it emits the three .wasm files and the app finds them', async () => {
    const vitePkg = devDependencyDir('vite');
    const bin = JSON.parse(fs.readFileSync(path.join(vitePkg, 'package.json'), 'utf8')).bin.vite;
    assert.ok(!['vite.config.js', 'vite.config.mjs', 'vite.config.ts'].some((f) => fs.existsSync(path.join(app, f))),
      'the app has a Vite config; this test is about zero configuration');
    const r = runCommand(process.execPath, [path.join(vitePkg, bin), 'build', '--logLevel', 'info'], app,
      { NO_COLOR: '1', CI: '1' }, 120_000);
    assert.equal(r.status, 0, `vite build failed\n${r.show}`);
    assert.doesNotMatch(r.stdout + r.stderr, /\berror\b/i, `vite build printed an error\n${r.show}`);
    // e.g. 'Module "node:fs/promises" has been externalized for browser compatibility'
    assert.doesNotMatch(r.stdout + r.stderr, /externalized|\bwarn/i, `vite build printed a warning\n${r.show}`);
    const out = path.join(app, 'dist');
    const assets = fs.readdirSync(path.join(out, 'assets'));
    for (const f of WASM_FILES) {
      const stem = f.replace(/\.wasm$/, '');
      const emitted = assets.filter((a) => a.startsWith(`${stem}-`) && !a.startsWith(`${stem}-threads-`) && a.endsWith('.wasm'));
      assert.equal(emitted.length, 1, `Vite emitted ${emitted.length} files for ${f}; dist/assets holds ${assets.join(', ')}\n${r.show}`);
      assert.ok(fs.readFileSync(path.join(out, 'assets', emitted[0])).equals(fs.readFileSync(path.join(installed, 'dist', f))),
        `dist/assets/${emitted[0]} differs from the package's ${f}`);
    }
    assert.ok(!WASM_FILES.some((f) => fs.existsSync(path.join(out, f))), 'nothing copied .wasm files by hand');
    // the 4.1 MB corpus is emitted only for apps that import 'attnlab/corpus', and this one does not
    assert.ok(!assets.some((a) => /^kjv/.test(a)), `Vite emitted the corpus for an app that never loads it: ${assets.join(', ')}`);
    checkPage(await runPage(out), 'Vite');
  });

  test('Vite dev server (`vite`, no configuration): the app finds the .wasm files through the dependency optimizer', async (t) => {
    const vitePkg = devDependencyDir('vite');
    const bin = JSON.parse(fs.readFileSync(path.join(vitePkg, 'package.json'), 'utf8')).bin.vite;
    const port = await freePort();
    const dev = spawn(process.execPath, [path.join(vitePkg, bin), '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
      { cwd: app, env: { ...process.env, NO_COLOR: '1', CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    dev.stdout.on('data', (c) => { log += c; });
    dev.stderr.on('data', (c) => { log += c; });
    const exited = new Promise((resolve) => dev.on('exit', resolve));
    t.after(async () => {
      if (dev.exitCode === null && dev.signalCode === null) {
        dev.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (dev.exitCode === null && dev.signalCode === null) dev.kill('SIGKILL');
      }
    });
    const base = `http://127.0.0.1:${port}/`;
    const deadline = Date.now() + 30_000;
    while (!log.includes(base)) {
      assert.ok(dev.exitCode === null, `vite (dev) exited with ${dev.exitCode}\n${log}`);
      assert.ok(Date.now() < deadline, `vite (dev) did not report ${base} within 30 s\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const shown = await openPage(base);
    assert.doesNotMatch(log, /externalized|error/i, `vite (dev) printed an error or warning\n${log}`);
    checkPage(shown, 'Vite dev server');
  });
});
