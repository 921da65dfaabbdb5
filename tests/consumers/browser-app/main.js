// Loads attnlab as an app would (the default build, then the SIMD and scalar ones, each from its
// default .wasm location) and writes the results into the page.
import { init, version, AttnError } from 'attnlab';
import { runCalls } from './calls.js';

const show = (id, text) => { document.getElementById(id).textContent = text; };

try {
  const lab = await init();
  show('build', lab.build);
  const results = { [lab.build]: runCalls(lab) };
  for (const simd of [true, false]) {
    const other = await init({ simd });
    results[other.build] = runCalls(other);
  }
  show('output', JSON.stringify({ version, build: lab.build, results }));
  show('status', 'done');
} catch (err) {
  show('output', `${err instanceof AttnError ? `AttnError ${err.code}` : err?.name}: ${err?.message}`);
  show('status', 'error');
  console.error(err);
}
