// Records tests/fixtures/models/pins.json: the hashes of tests/model-pins.mjs's models on each
// pinned build and thread count, from the binding ATTNLAB_BINDING names (default dist/attnlab.js).
// Run it with the binding whose numbers are to be pinned (say a build of the commit before a change
// that must not move them):
//
//   ATTNLAB_BINDING=/path/to/old/dist/attnlab.js ATTNLAB_PINS_FROM="dist/ of commit abc1234" node tests/make-model-pins.mjs
import { writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { binding } from './helpers.mjs';
import { pinHashes, PIN_BUILDS, PIN_THREADS } from './model-pins.mjs';

const { init } = await binding();
const from = process.env.ATTNLAB_PINS_FROM ?? `dist/ of commit ${execSync('git rev-parse --short HEAD').toString().trim()}`;
const out = { recordedWith: from, hashes: {} };
for (const build of PIN_BUILDS) {
  for (const threads of PIN_THREADS) {
    const lab = await init({ simd: build === 'simd', threads, fresh: true });
    out.hashes[`${build} threads=${threads}`] = pinHashes(lab);
    lab.dispose();
  }
}
writeFileSync(new URL('./fixtures/models/pins.json', import.meta.url), JSON.stringify(out, null, 1) + '\n');
console.log(`tests/fixtures/models/pins.json: ${Object.values(out.hashes).reduce((s, h) => s + Object.keys(h).length, 0)} hashes`);
