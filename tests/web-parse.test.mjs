// Every script the page loads parses, checked in Node in a second (node --check, as ES modules:
// package.json's "type"), so that a syntax slip in one file is named here rather than found as
// every browser test timing out on a page that never starts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scripts = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? scripts(path.join(dir, e.name)) : e.name.endsWith('.js') ? [path.join(dir, e.name)] : []);

test('every script under web/ parses as an ES module', () => {
  const files = scripts(path.join(root, 'web'));
  assert.ok(files.length > 20, `web/ has its scripts (found ${files.length})`);
  for (const file of files) {
    const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${path.relative(root, file)} does not parse:\n${r.stderr}`);
  }
});
