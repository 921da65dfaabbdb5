// Threads in Chromium (README, "Threads"): the page runs several threads when it is cross-origin
// isolated and one when it is not, and says which; in a Worker of an isolated page the binding
// gives the bits of one thread on 2 and 3 threads; a page's main thread, which may not block,
// runs one thread ('auto') and refuses threads: 2 with UNSUPPORTED; a trap on a worker thread in a
// Worker makes that instance BROKEN (and a fresh one works) instead of hanging the page.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/threads.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT, startEnv, stopEnv, idle, withTestHook } from './harness.mjs';
import { startServer } from '../../scripts/serve.mjs';

let env, plain;

before(async () => {
  env = await startEnv();
  plain = await startServer({ port: 0, root: ROOT, quiet: true, isolate: false });
});
after(async () => {
  await plain?.close();
  await stopEnv();
});

async function open(t, url) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  await withTestHook(context);
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => window.__attnlab?.ready || window.__attnlab?.loadError, null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.__attnlab.loadError ?? null), null);
  await idle(page);
  page.problems = problems;
  return page;
}

const badge = (page) => page.$eval('#threads-badge', (b) => ({ text: b.textContent, title: b.title, threads: Number(b.dataset.threads) }));

test('an isolated page runs as many threads as the browser reports cores (up to 8), and says so', async (t) => {
  const page = await open(t, env.server.url);
  const { isolated, cores } = await page.evaluate(() => ({ isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency }));
  assert.equal(isolated, true, 'scripts/serve.mjs sends COOP/COEP');
  const b = await badge(page);
  assert.equal(b.threads, Math.min(8, cores), `badge ${JSON.stringify(b)}`);
  if (cores > 1) assert.match(b.text, /threads/);
  assert.deepEqual(page.problems, []);
});

test('a page that is not cross-origin isolated runs one thread and says why', async (t) => {
  const page = await open(t, plain.url);
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  const b = await badge(page);
  assert.equal(b.threads, 1);
  assert.match(b.text, /not cross-origin isolated/);
  assert.match(b.title, /Cross-Origin-Opener-Policy: same-origin/);
  assert.deepEqual(page.problems, []);
});

test('in a Worker of an isolated page, 2 and 3 threads give the bits of one thread', async (t) => {
  const page = await open(t, env.server.url);
  const result = await page.evaluate(async () => {
    const binding = new URL('../dist/attnlab.js', location.href).href;
    const code = `
      import { init } from ${JSON.stringify(binding)};
      const n = 333, d = 16, dv = 12;
      let s = 7;
      const rand = (len) => Float32Array.from({ length: len }, () => ((s = (s * 16807) % 2147483647) / 2147483647 - 0.5));
      const inputs = { n, d, dv, q: rand(n * d), k: rand(n * d), v: rand(n * dv) };
      const one = await init({ threads: 1 });
      const out = { isolated: crossOriginIsolated, runs: [] };
      for (const threads of [2, 3]) {
        const lab = await init({ threads, fresh: true });
        const same = [false, true].every((causal) => {
          const a = one.attention('softmax', inputs, { causal }).output, b = lab.attention('softmax', inputs, { causal }).output;
          return a.every((x, i) => Object.is(x, b[i]));
        });
        out.runs.push({ threads: lab.threads, build: lab.build, same });
        lab.dispose();
      }
      postMessage(out);`;
    const worker = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })), { type: 'module' });
    return new Promise((resolve, reject) => {
      worker.onmessage = (e) => { worker.terminate(); resolve(e.data); };
      worker.onerror = (e) => reject(new Error(e.message));
    });
  });
  assert.equal(result.isolated, true);
  for (const r of result.runs) assert.ok(r.same, `${r.threads} threads (${r.build}) differ from one thread`);
  assert.deepEqual(result.runs.map((r) => r.threads), [2, 3]);
});

test("a page's main thread runs one thread and refuses threads: 2 with UNSUPPORTED", async (t) => {
  const page = await open(t, env.server.url);
  const r = await page.evaluate(async () => {
    const { init } = await import(new URL('../dist/attnlab.js', location.href).href);
    const auto = await init({ fresh: true });
    let error = null;
    try { await init({ threads: 2, fresh: true }); } catch (e) { error = { code: e.code, message: e.message }; }
    return { threads: auto.threads, error };
  });
  assert.equal(r.threads, 1);
  assert.equal(r.error?.code, 'UNSUPPORTED');
  assert.match(r.error.message, /may not block/);
});

test('in a Worker of an isolated page, a trap on a worker thread makes the instance BROKEN, not hung; a fresh one works', async (t) => {
  const page = await open(t, env.server.url);
  const result = await page.evaluate(async () => {
    const binding = new URL('../dist/attnlab.js', location.href).href;
    const code = `
      import { init } from ${JSON.stringify(binding)};
      const I = Symbol.for('attnlab.internal');
      const caught = (f) => { try { f(); return null; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
      const n = 200, d = 8, dv = 8;
      const fill = (len, s) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * 0.37 + s));
      const inputs = { n, d, dv, q: fill(n * d, 1), k: fill(n * d, 2), v: fill(n * dv, 3) };
      const lab = await init({ threads: 2 });
      const probe = caught(() => lab[I].exports().attn_threads_probe(8, 1)); // a piece on the worker traps
      const later = caught(() => lab.attention('softmax', inputs));
      const model = caught(() => lab.model({ vocab: 4, seqLen: 4, dModel: 4, heads: 1, layers: 1, dFF: 4 }));
      const dispose = caught(() => lab.dispose());
      const cached = await init({ threads: 2 });
      const fresh = await init({ threads: 2, fresh: true });
      const one = await init({ threads: 1, fresh: true });
      const a = fresh.attention('softmax', inputs).output, b = one.attention('softmax', inputs).output;
      postMessage({ probe, later, model, dispose, cachedIsNew: cached !== lab, freshThreads: fresh.threads,
        freshSame: a.every((x, i) => Object.is(x, b[i])) });`;
    const worker = new Worker(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })), { type: 'module' });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker did not answer within 20 s: the trap hung it')), 20000);
      worker.onmessage = (e) => { clearTimeout(timer); worker.terminate(); resolve(e.data); };
      worker.onerror = (e) => { clearTimeout(timer); reject(new Error(e.message)); };
    });
  });
  assert.equal(result.probe?.code, 'BROKEN', `the trapping call threw ${JSON.stringify(result.probe)}`);
  assert.match(result.probe.message, /a worker thread failed/);
  assert.match(result.probe.message, /init\(\{ fresh: true \}\)/);
  assert.equal(result.later?.code, 'BROKEN', `attention() after the trap threw ${JSON.stringify(result.later)}`);
  assert.equal(result.model?.code, 'BROKEN', `lab.model() after the trap threw ${JSON.stringify(result.model)}`);
  assert.equal(result.dispose, null, 'dispose() of a broken instance works');
  assert.ok(result.cachedIsNew, 'init() no longer returns the broken instance');
  assert.equal(result.freshThreads, 2);
  assert.ok(result.freshSame, "a fresh instance gives one thread's bits");
  assert.deepEqual(page.problems, []);
});
