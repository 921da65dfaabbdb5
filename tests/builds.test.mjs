// The one manifest of builds (src/js/builds.js) against the places that must name the modules
// themselves: the binding's literal module URLs (bundlers such as Vite find the .wasm files only
// through `new URL('./file', import.meta.url)` literals), package.json's files and exports (static
// JSON), and a built dist/. The page, scripts/ensure.mjs and build.sh read the manifest itself.
//
//   node --test tests/builds.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILDS, BUILD_FILES, BUILD_BY_NAME } from '../src/js/builds.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const sorted = (xs) => [...xs].sort();

test('the manifest: three builds, each with its words, init() options and two distinct modules', () => {
  assert.deepEqual(BUILDS.map((b) => b.name), ['relaxed', 'simd', 'scalar']);
  for (const b of BUILDS) {
    assert.ok(b.label && typeof b.init === 'object', `${b.name}: label and init`);
    assert.match(b.file, /^attnlab-[a-z]+\.wasm$/, `${b.name}: file`);
    assert.equal(b.threadsFile, b.file.replace('.wasm', '-threads.wasm'), `${b.name}: threadsFile`);
    assert.equal(BUILD_BY_NAME[b.name], b);
  }
  assert.equal(new Set(BUILD_FILES).size, 2 * BUILDS.length);
});

test('the binding\'s literal module URLs are exactly the manifest\'s modules', () => {
  const source = readFileSync(path.join(ROOT, 'src/js/loader.js'), 'utf8'); // where init() finds them
  const literals = [...source.matchAll(/new URL\('\.\/(attnlab-[^']+\.wasm)', import\.meta\.url\)/g)].map((m) => m[1]);
  assert.deepEqual(sorted(literals), sorted(BUILD_FILES));
});

test('package.json publishes every module and its subpath, and exports no other module', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  // files: names or globs of one directory ("dist/*.wasm"); npm packs what any of them matches
  const patterns = pkg.files.map((f) => new RegExp(`^${f.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`));
  const published = (file) => patterns.some((re) => re.test(file));
  for (const f of [...BUILD_FILES, 'builds.js']) assert.ok(published(`dist/${f}`), `package.json files does not publish dist/${f}`);
  const exported = Object.entries(pkg.exports).filter(([k]) => k.endsWith('.wasm'));
  assert.deepEqual(sorted(exported.map(([k, v]) => `${k} ${v}`)), sorted(BUILD_FILES.map((f) => `./${f} ./dist/${f}`)), 'package.json exports');
});

test('a built dist/ holds every module the manifest lists', { skip: !existsSync(path.join(ROOT, 'dist/.stamp')) && 'dist/ not built' }, () => {
  for (const f of BUILD_FILES) assert.ok(existsSync(path.join(ROOT, 'dist', f)), `dist/${f}`);
});
