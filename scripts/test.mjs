// test.mjs — `npm test`: installs what is missing (npm packages, compilers, Chromium, the corpus's
// Debian text and reader), rebuilds when a source changed (always under CI; build.sh also runs
// the native ASan/UBSan C tests), then runs every Node and browser test in one node:test run. Node gets
// --experimental-wasm-relaxed-simd so the suites cover the relaxed build next to SIMD and scalar.
// Extra arguments are passed to node --test (e.g. --test-name-pattern=softmax).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuild, ensureChromium, ensureCorpusTools, ensureDeps, isBuildFresh, nativeTestsRan, root } from './ensure.mjs';

try {
  ensureDeps();
  // A quick loop for people working on the code: without a source change since a full build
  // (isBuildFresh: src, build.sh, tests/c, package.json, data against dist/.stamp; and that build
  // ran its native C tests) the build and those tests are not run again. CI always rebuilds
  // (CI=true), so its run is the full one.
  const rebuild = Boolean(process.env.CI) || !isBuildFresh() || !nativeTestsRan();
  if (rebuild) ensureBuild({ force: true });
  else console.log('npm test: dist/ is newer than every source and its build ran the native C tests: not rebuilding (CI=true rebuilds)');
  ensureChromium();
  ensureCorpusTools(); // the corpus test re-makes data/kjv.txt from Debian's text
} catch (err) {
  console.error(`npm test: ${err.message}`);
  process.exit(1);
}

const files = (dir) => (existsSync(join(root, dir)) ? readdirSync(join(root, dir)) : []).filter((f) => f.endsWith('.test.mjs')).map((f) => join(dir, f));
const testFiles = [...files('tests'), ...files('tests/browser')];
const result = spawnSync(process.execPath,
  ['--experimental-wasm-relaxed-simd', '--test', '--test-reporter=spec', ...process.argv.slice(2), ...testFiles],
  { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
