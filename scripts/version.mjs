// version.mjs — package.json's "version" is the version; ATTN_VERSION in src/c/attnlab.h and the
// binding's `version` (src/js/attnlab.js) are copies of it that a C or JS consumer reads without
// loading anything, so they stay literals, written from package.json here.
//
//   node scripts/version.mjs           writes package.json's version into both copies
//   node scripts/version.mjs --check   exits 1, naming each copy that differs (build.sh runs it)
//   npm version <new>                  sets package.json's and runs this (package.json's "version"
//                                      script), so the commit npm makes holds all three
//
// [--root DIR] works on another tree (the tests use a copy).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Each copy: its file, and the one line that holds the version (its first group). */
export const COPIES = [
  { file: 'src/c/attnlab.h', line: /^#define ATTN_VERSION "([^"]*)"$/m, write: (v) => `#define ATTN_VERSION "${v}"` },
  { file: 'src/js/attnlab.js', line: /^export const version = '([^']*)';$/m, write: (v) => `export const version = '${v}';` },
];

/** [{ file, found, wanted }] for every copy that is not package.json's version. */
export function versionDrift(root) {
  const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const drift = [];
  for (const { file, line } of COPIES) {
    const m = readFileSync(join(root, file), 'utf8').match(line);
    if (!m) throw new Error(`${file} has no version line (${line})`);
    if (m[1] !== wanted) drift.push({ file, found: m[1], wanted });
  }
  return drift;
}

/** Writes package.json's version into every copy that differs; returns the files written. */
export function writeVersion(root) {
  const written = [];
  for (const { file, found, wanted } of versionDrift(root)) {
    const copy = COPIES.find((c) => c.file === file);
    const path = join(root, file);
    writeFileSync(path, readFileSync(path, 'utf8').replace(copy.line, copy.write(wanted)));
    written.push(`${file}: ${found} -> ${wanted}`);
  }
  return written;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, root: { type: 'string' } } });
  const root = values.root ?? join(dirname(fileURLToPath(import.meta.url)), '..');
  try {
    if (values.check) {
      const drift = versionDrift(root);
      for (const d of drift) console.error(`version: ${d.file} says ${d.found}, package.json ${d.wanted} (node scripts/version.mjs writes it)`);
      process.exit(drift.length ? 1 : 0);
    }
    for (const line of writeVersion(root)) console.log(`version: ${line}`);
  } catch (err) {
    console.error(`version: ${err.message}`);
    process.exit(1);
  }
}
