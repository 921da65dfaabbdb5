// Records two default scaling runs in a row (softmax and linear, relaxed and scalar, n = 64 …
// 16384) as the page measures them, with date, machine and commit, for tests that replay them as
// data (tests/scaling-slope.test.mjs, tests/browser/visit.test.mjs). Not a test: run it by hand.
//
//   node tests/browser/record-scaling.mjs tests/browser/fixtures/scaling-default-runs.json
import fs from 'node:fs';
import os from 'node:os';
import { execSync } from 'node:child_process';
import { startEnv, stopEnv, newPage } from './harness.mjs';
await startEnv();
const t = { after: () => {} }; // newPage's test context: the page lives until stopEnv
const page = await newPage(t, {});
const runs = [];
for (let k = 0; k < 2; k++) {
  await page.click('#scale-run');
  await page.waitForFunction(() => { const s = window.__attnlab.scaling(); return s.done && !s.running; }, null, { timeout: 600000 });
  const rep = await page.evaluate(() => window.__attnlab.scaling());
  runs.push(rep.points.map(({ n, variant, build, timing, dims, options }) => ({ n, variant, build, timing, dims, options })));
  console.log(await page.textContent('#scale-legend'));
  console.log(await page.textContent('#scale-crossings'));
}
const out = { what: 'two default scaling runs in a row (softmax and linear, relaxed and scalar, n = 64 … 16384), as the page measured them', date: new Date().toISOString(), machine: `${os.cpus()[0].model}, ${os.cpus().length} cores`, commit: execSync('git rev-parse --short HEAD').toString().trim(), runs };
fs.writeFileSync(process.argv[2], JSON.stringify(out) + '\n');
await stopEnv();
process.exit(0);
