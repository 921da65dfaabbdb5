// Training is pinned: every model of tests/model-pins.mjs (every experiment variant at two shapes,
// one of them a long sequence whose attention splits inside a head) trains to the parameters,
// AdamW moments and loss recorded in tests/fixtures/models/pins.json, bit for bit, on the SIMD and
// scalar builds at 1 and 2 threads. They were recorded with the binding of the commit before each
// head's backward pass read its forward pass's y and lse instead of running that forward pass
// again (tests/fixtures/make-model-pins.mjs says how to record them), so this shows that change moved no bit.
//
//   node --test tests/model-pins.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { binding } from './helpers.mjs';
import { pinHashes, PIN_BUILDS, PIN_THREADS } from './model-pins.mjs';

const { init } = await binding();
const recorded = JSON.parse(readFileSync(new URL('./fixtures/models/pins.json', import.meta.url), 'utf8'));

for (const build of PIN_BUILDS) {
  for (const threads of PIN_THREADS) {
    const key = `${build} threads=${threads}`;
    test(`training steps give the recorded parameters, moments and loss: every experiment variant, seqLen 16 and 130 [${key}]`, async () => {
      const want = recorded.hashes[key];
      assert.ok(want, `tests/fixtures/models/pins.json has no hashes for ${key}`);
      const lab = await init({ simd: build === 'simd', threads, fresh: true });
      try {
        const got = pinHashes(lab);
        const unpinned = Object.keys(got).filter((m) => !Object.hasOwn(want, m)), gone = Object.keys(want).filter((m) => !Object.hasOwn(got, m));
        assert.ok(unpinned.length === 0 && gone.length === 0, `${key}: the pinned models differ from the recorded set:` +
          (unpinned.length ? ` no pin for ${unpinned.join(', ')} (a new variant's models: record them with node tests/fixtures/make-model-pins.mjs)` : '') +
          (gone.length ? ` pinned but no longer trained: ${gone.join(', ')}` : ''));
        const moved = Object.keys(want).filter((name) => got[name] !== want[name]);
        assert.deepEqual(moved, [], `${key}: ${moved.length} model(s) trained to other bits than recorded (${recorded.recordedWith}): ` +
          `${moved.map((m) => `${m}: ${got[m]}, recorded ${want[m]}`).join('; ')}`);
      } finally {
        lab.dispose();
      }
    });
  }
}
