// Which folder may import which: the package (src/js) stands alone; the page (web/) reads the
// package as it is published, from dist/; the study's and build's scripts (scripts/) and the
// benchmark (bench/) read the package from src/js (or dist/) and never the page; the benchmark
// never reaches into the scripts. So a fact the page, the study and the benchmark share lives in
// the package (src/js/experiment.js, for the experiments), not in one of them.
//
// Every static import, re-export and dynamic import() of a string literal in the JavaScript of
// those folders is resolved against its file and checked against ALLOWED.
//
//   node --test tests/layering.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The top folders each folder's modules may import from (node: builtins and packages aside). */
const ALLOWED = {
  'src': ['src'],
  'web': ['web', 'dist'],
  'scripts': ['scripts', 'src', 'dist'],
  'bench': ['bench', 'src', 'dist'],
};

function sources(dir) {
  const out = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = path.join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.(m?js)$/.test(name)) out.push(rel);
  }
  return out;
}

/** The string specifiers a module imports: import/export ... from '…', import '…', import('…'). */
export function specifiers(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found = [];
  for (const re of [/\b(?:import|export)\s[^'"`;]*?\sfrom\s*(['"])([^'"]+)\1/g, /\bimport\s*(['"])([^'"]+)\1/g, /\bimport\s*\(\s*(['"])([^'"]+)\1\s*\)/g]) {
    for (const m of code.matchAll(re)) found.push(m[2]);
  }
  return found;
}

test('the specifier reader finds static, re-exported and dynamic imports', () => {
  assert.deepEqual(specifiers(`import { a } from './a.js';\nexport { b } from "../b.js";\nimport './c.js';\nconst d = await import('../../d.js');\n// import { e } from './e.js';`),
    ['./a.js', '../b.js', './c.js', '../../d.js']);
});

test('no folder imports from one it may not: src alone, web from dist, scripts and bench never from web, bench never from scripts', () => {
  const bad = [];
  let checked = 0;
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    for (const file of sources(folder)) {
      for (const spec of specifiers(readFileSync(path.join(ROOT, file), 'utf8'))) {
        if (!spec.startsWith('.')) continue; // node: builtins and npm packages
        const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
        const top = target.split(path.sep)[0];
        checked++;
        if (!allowed.includes(top)) bad.push(`${file} imports ${spec} (${target}): ${folder}/ may import from ${allowed.join(', ')} only`);
      }
    }
  }
  assert.ok(checked > 100, `only ${checked} relative imports found: is the reader still reading them?`);
  assert.deepEqual(bad, []);
});
