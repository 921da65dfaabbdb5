// The README's examples run as written, against the built package, and say what they print: each
// ```js block that is a whole program (it imports the package; the Threads block is a fragment,
// the WebGPU one needs a GPU and runs in tests/browser/webgpu.test.mjs) is run as a module, its
// `from 'attnlab…'` pointed at dist/, and every line of the form `expression; // literal` (a
// quoted string, true, false or a number, and nothing after it) is checked: the expression must
// equal the literal there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** Every ```js block of the README: { line, code }. */
function jsBlocks(text) {
  const out = [];
  const re = /^( *)```js\n([\s\S]*?)^\1```$/gm;
  for (const m of text.matchAll(re)) {
    const indent = m[1].length;
    out.push({ line: text.slice(0, m.index).split('\n').length, code: m[2].split('\n').map((l) => l.slice(indent)).join('\n') });
  }
  return out;
}

const SUBPATHS = { 'attnlab': 'dist/attnlab.js', 'attnlab/corpus': 'dist/corpus.js', 'attnlab/tasks': 'dist/tasks.js' };
const CLAIM = /^(\s*)(.+?);\s*\/\/\s*('(?:[^'\\]|\\.)*'|true|false|-?\d+(?:\.\d+)?)\s*$/;

/** The block as a module: imports pointed at dist/, each claim a check. */
function runnable(code) {
  let claims = 0;
  const body = code.split('\n').map((line) => {
    const m = line.match(CLAIM);
    if (!m || /^\s*(const|let|var|import)\b/.test(line)) return line;
    claims++;
    return `${m[1]}__claim(${JSON.stringify(m[2])}, ${m[2]}, ${m[3]});`;
  }).join('\n').replace(/from '(attnlab(?:\/[a-z]+)?)'/g, (all, spec) => {
    assert.ok(SUBPATHS[spec], `the README imports ${spec}, which this test does not map to dist/`);
    return `from ${JSON.stringify(pathToFileURL(path.join(ROOT, SUBPATHS[spec])).href)}`;
  });
  const prologue = 'const __claims = globalThis.__readmeClaims; const __claim = (text, got, want) => __claims.push({ text, got, want });\n';
  return { source: prologue + body, claims };
}

const programs = jsBlocks(README).filter((b) => /^import .* from 'attnlab(\/corpus|\/tasks)?';$/m.test(b.code) && !/attnlab\/webgpu/.test(b.code));

test('the README has the programs this test runs: the package\'s use and the corpus', () => {
  assert.equal(programs.length, 2, `README blocks run: ${programs.map((b) => `line ${b.line}`).join(', ')}`);
  // the checker still reads the claims (the first example states an AttnError's code and message)
  assert.ok(runnable(programs[0].code).claims >= 3, 'the first example\'s "// value" claims are read');
});

for (const block of programs) {
  test(`README.md line ${block.line}: the example runs and every "// value" it states is what it gets`, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-readme-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { source, claims } = runnable(block.code);
    const file = path.join(dir, `block-${block.line}.mjs`);
    writeFileSync(file, source);
    globalThis.__readmeClaims = [];
    await import(pathToFileURL(file).href);
    const seen = globalThis.__readmeClaims;
    assert.equal(seen.length, claims, `every claim was reached (${seen.length} of ${claims})`);
    for (const c of seen) assert.deepEqual(c.got, c.want, `README.md line ${block.line}: ${c.text} is ${JSON.stringify(c.got)}, the README says ${JSON.stringify(c.want)}`);
  });
}
