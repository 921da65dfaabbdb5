// The page checked by a tool: axe-core (a devDependency) injected into both views, in the light
// and the dark theme, at desktop (1440×900) and phone (390×844) size — the Experiment view also
// after a short run, when its charts, tables and maps are there. No violation of impact serious
// or critical may remain.
//
//   node --experimental-wasm-relaxed-simd --test tests/browser/accessibility.test.mjs

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startEnv, stopEnv, newPage, idle, axeViolations, assertNoProblems } from './harness.mjs';

const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };
const RUN = '#view=experiment&x.task=copy&x.seqLen=8&x.vocab=6&x.vars=softmax,mixture&x.dModel=16&x.heads=2&x.layers=1&x.dFF=32&x.steps=10&x.batch=8&x.lr=0.003&x.warmup=2&x.evalEvery=5&x.evalBatch=16&x.seed=3';

const show = (vs) => vs.map((v) => `${v.impact} ${v.id} (${v.help}):\n    ${v.nodes.join('\n    ')}`).join('\n  ');

describe('attnlab page: accessibility (axe-core)', () => {
  before(startEnv);
  after(stopEnv);

  for (const scheme of ['light', 'dark']) {
    for (const [size, viewport] of Object.entries(SIZES)) {
      test(`no serious or critical violations: both views, ${scheme}, ${size}`, async (t) => {
        const explore = await newPage(t, { viewport, colorScheme: scheme });
        await idle(explore);
        const e = await axeViolations(explore);
        assert.deepEqual(e, [], `Explore, ${scheme}, ${size}:\n  ${show(e)}`);
        assertNoProblems(explore);

        const page = await newPage(t, { hash: RUN, viewport, colorScheme: scheme });
        await page.waitForFunction(() => document.querySelector('#x-answers-table'), null, { timeout: 10000 });
        let v = await axeViolations(page);
        assert.deepEqual(v, [], `Experiment, ${scheme}, ${size}:\n  ${show(v)}`);
        await page.click('#x-play');
        await page.evaluate(() => window.__attnlab.experiment.idle());
        v = await axeViolations(page);
        assert.deepEqual(v, [], `Experiment after a run, ${scheme}, ${size}:\n  ${show(v)}`);
        assertNoProblems(page);
      });
    }
  }
});
