// The version's one home: package.json. scripts/version.mjs writes it into attnlab.h's ATTN_VERSION
// and the binding's `version` and finds copies that differ (build.sh stops on them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

import { versionDrift, writeVersion } from '../scripts/version.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FILES = ['package.json', 'src/c/attnlab.h', 'src/js/attnlab.js'];

test('the repository\'s copies of the version are package.json\'s', () => {
  assert.deepEqual(versionDrift(ROOT), []);
});

test('a new version in package.json is found in both copies, written into them, and then agrees', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-version-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of FILES) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    copyFileSync(path.join(ROOT, f), path.join(dir, f));
  }
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const old = pkg.version;
  pkg.version = '12.34.5-rc.1';
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');

  const check = spawnSync(process.execPath, [path.join(ROOT, 'scripts/version.mjs'), '--check', '--root', dir], { encoding: 'utf8' });
  assert.equal(check.status, 1, 'the check fails on a copy that differs');
  assert.match(check.stderr, /src\/c\/attnlab\.h says .*, package\.json 12\.34\.5-rc\.1/);
  assert.match(check.stderr, /src\/js\/attnlab\.js says .*, package\.json 12\.34\.5-rc\.1/);

  assert.equal(writeVersion(dir).length, 2);
  assert.match(readFileSync(path.join(dir, 'src/c/attnlab.h'), 'utf8'), /^#define ATTN_VERSION "12\.34\.5-rc\.1"$/m);
  assert.match(readFileSync(path.join(dir, 'src/js/attnlab.js'), 'utf8'), /^export const version = '12\.34\.5-rc\.1';$/m);
  assert.deepEqual(versionDrift(dir), []);
  // nothing but the version line changed
  for (const f of FILES.slice(1)) {
    const before = readFileSync(path.join(ROOT, f), 'utf8').split('\n');
    const after = readFileSync(path.join(dir, f), 'utf8').split('\n');
    assert.equal(after.length, before.length, f);
    const changed = after.filter((line, i) => line !== before[i]);
    assert.equal(changed.length, 1, `${f}: ${changed.join(' | ')}`);
    assert.ok(before.some((line) => line.includes(old)), `${f} held ${old}`);
  }
});
