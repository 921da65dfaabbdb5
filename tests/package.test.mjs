// The npm package as a user gets it: `npm pack` the repo, install the tarball into an empty ES-module
// project (offline: the package has no dependencies), and from there import `attnlab`, run every
// variant, and resolve the wasm subpath exports and the type declarations.
//
//   node --test tests/package.test.mjs
//
// ATTNLAB_SKIP_BUILD=1 is set for `npm pack` so the prepack script (build.sh) reuses dist/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { VARIANT_IDS } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const EXPECTED_FILES = ['dist/attnlab.js', 'dist/loader.js', 'dist/inputs.js', 'dist/builds.js', 'dist/attnlab.d.ts', 'dist/errors.js', 'dist/model.js', 'dist/model-config.js', 'dist/model-file.js', 'dist/registry.js', 'dist/heap.js', 'dist/options.js', 'dist/tasks.js', 'dist/tasks.d.ts', 'dist/reference.d.ts', 'dist/reference-model.d.ts', 'dist/prng.d.ts', 'dist/tasks/args.js', 'dist/tasks/corpus-parse.js', 'dist/tasks/defaults.js', 'dist/tasks/recall.js', 'dist/tasks/sequence.js', 'dist/tasks/text.js', 'dist/tasks/verses.js', 'dist/experiment.js', 'dist/train.js',
  'dist/reference.js', 'dist/reference-model.js', 'dist/prng.js', 'dist/attnlab-simd.wasm', 'dist/attnlab-scalar.wasm',
  'dist/attnlab-relaxed.wasm', 'dist/attnlab-simd-threads.wasm', 'dist/attnlab-scalar-threads.wasm',
  'dist/attnlab-relaxed-threads.wasm', 'dist/pool.js', 'dist/pool-worker.js', 'dist/kjv.txt', 'dist/kjv-index.json',
  'dist/internal.js', 'dist/webgpu.js', 'dist/webgpu-kernels.js', 'dist/webgpu.d.ts', 'package.json'];

let tmp;
let tarball;
let packedFiles;
let project;

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, {
    cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 300_000, maxBuffer: 64 * 1024 * 1024,
  });
  const show = `${cmd} ${args.join(' ')} (in ${cwd}) exited with ${r.status}${r.error ? ` (${r.error.message})` : ''}\n` +
    `--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
  return { ...r, show };
}

before(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'attnlab-pack-'));
});
after(() => {
  if (tmp && !process.env.ATTNLAB_KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
});

test('npm pack produces a tarball with the binding, the three wasm builds and the .d.ts', () => {
  const r = run(NPM, ['pack', '--json', '--pack-destination', tmp], ROOT, { ATTNLAB_SKIP_BUILD: '1' });
  assert.equal(r.status, 0, r.show);
  // lifecycle-script output may precede the JSON array on stdout
  const start = r.stdout.search(/^\[\s*$/m);
  assert.ok(start >= 0, `no JSON in npm pack output\n${r.show}`);
  const info = JSON.parse(r.stdout.slice(start))[0];
  tarball = path.join(tmp, info.filename);
  assert.ok(existsSync(tarball), `tarball ${tarball} missing; files in ${tmp}: ${readdirSync(tmp).join(', ')}`);
  packedFiles = info.files.map((f) => f.path);
  for (const f of EXPECTED_FILES) assert.ok(packedFiles.includes(f), `${f} is not in the package; it holds ${packedFiles.join(', ')}`);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(info.name, 'attnlab');
  assert.equal(info.version, pkg.version);
});

test('the tarball installs offline into an empty ES-module project', () => {
  assert.ok(tarball, 'needs the tarball from the previous test');
  project = path.join(tmp, 'project');
  const mk = run('mkdir', ['-p', project], tmp);
  assert.equal(mk.status, 0, mk.show);
  const init = run(NPM, ['init', '-y'], project);
  assert.equal(init.status, 0, init.show);
  const pkgPath = path.join(project, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.type = 'module';
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  const inst = run(NPM, ['install', tarball, '--no-audit', '--no-fund', '--offline'], project);
  assert.equal(inst.status, 0, inst.show);
  const installed = path.join(project, 'node_modules', 'attnlab');
  for (const f of EXPECTED_FILES) assert.ok(existsSync(path.join(installed, f)), `node_modules/attnlab/${f} missing after install`);
  const installedPkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.ok(installedPkg.types && existsSync(path.join(installed, installedPkg.types)),
    `package.json "types" (${installedPkg.types}) does not point at a file in the installed package`);
  const dts = readFileSync(path.join(installed, installedPkg.types), 'utf8');
  for (const name of ['export function init', 'export function features', 'export class AttnError', 'export const version']) {
    assert.ok(dts.includes(name), `the packaged .d.ts does not declare "${name}"`);
  }
});

const CHECK_SCRIPT = String.raw`
import { init, features, version, AttnError, tasks } from 'attnlab';
import { reference } from 'attnlab/reference';
import { initWebGPU, AttnError as GpuError } from 'attnlab/webgpu';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const report = { version, features: features(), builds: {}, resolve: {} };
const dims = { n: 9, d: 4, dv: 3, h: 5, L: 12, a: 3, b: 4, rank: 2 };
let state = 12345;
const rnd = () => { state = (Math.imul(state, 1103515245) + 12345) >>> 0; return state / 2 ** 32 * 2 - 1; };
for (const simd of ['auto', false, true]) {
  const lab = await init({ simd });
  // every variant a mixture may combine, as the package publishes them
  const components = lab.variants.filter((v) => v.mixable).map((v) => v.id);
  const entry = { build: lab.build, simd: lab.simd, version: lab.version, variants: {} };
  for (const info of lab.variants) {
    const inputs = {};
    for (const dim of info.dims) inputs[dim] = dims[dim];
    for (const spec of info.inputs) {
      const len = spec.shape.reduce((p, s) => p * dims[s], 1);
      inputs[spec.name] = Float32Array.from({ length: len }, rnd);
      for (const s of spec.shape) inputs[s] = dims[s];
    }
    const options = {};
    if (info.composite) { options.components = components; options.alpha = components.map(() => 1 / components.length); }
    if (info.options.includes('pattern')) options.pattern = 'left';
    const result = {};
    for (const causal of info.causalOnly ? [true] : [false, true]) {
      try {
        const { output, weights } = lab.attention(info.id, inputs, { ...options, causal, weights: true });
        result[causal ? 'causal' : 'plain'] = {
          length: output.length, finite: output.every(Number.isFinite),
          weightsLength: weights.length, weightsFinite: weights.every(Number.isFinite),
          isFloat32: output instanceof Float32Array,
        };
      } catch (e) {
        result[causal ? 'causal' : 'plain'] = { error: String(e && e.message), attnError: e instanceof AttnError };
      }
    }
    entry.variants[info.id] = result;
  }
  report.builds[String(simd)] = entry;
}

const require = createRequire(import.meta.url);
for (const file of ['attnlab-simd.wasm', 'attnlab-scalar.wasm', 'attnlab-relaxed.wasm',
  'attnlab-simd-threads.wasm', 'attnlab-scalar-threads.wasm', 'attnlab-relaxed-threads.wasm']) {
  const viaImport = fileURLToPath(import.meta.resolve('attnlab/' + file));
  const viaRequire = require.resolve('attnlab/' + file);
  const bytes = readFileSync(viaImport);
  report.resolve[file] = { viaImport, viaRequire, magic: bytes.subarray(0, 4).toString('hex'), size: bytes.length };
}
report.resolve.main = fileURLToPath(import.meta.resolve('attnlab'));
{ // the corpus ships next to tasks.js: tasks.text() reads it, and it is a subpath
  const text = tasks.text();
  report.corpus = { vocab: text.vocab, characters: text.length, heldOut: text.corpus.heldOutCharacters,
    file: fileURLToPath(import.meta.resolve('attnlab/kjv.txt')), verses: tasks.verses().classes.length };
}
{ // a model trained on a task, and the float64 reference, through the package's own exports
  const lab = await init();
  const task = tasks.copy({ seqLen: 8, vocab: 6 });
  const model = lab.model({ variant: 'softmax', vocab: task.vocab, seqLen: task.seqLen, dModel: 8, heads: 2, layers: 1, dFF: 16, causal: true });
  const { tokens, targets } = task.sample(4, 1);
  const before = model.evaluate(tokens, targets).loss;
  for (let s = 0; s < 60; s++) model.trainStep(tokens, targets, { lr: 1e-2 });
  report.model = { before, after: model.evaluate(tokens, targets).loss, parameters: model.parameterCount };
  model.dispose();
  report.reference = reference('fixed', { n: 2, dv: 1, v: [1, 3] }, { pattern: 'first' }).output[1];
}
{ // the WebGPU subpath loads in Node and says why it cannot run there
  try {
    await initWebGPU();
    report.webgpu = { resolved: true };
  } catch (e) {
    report.webgpu = { code: e.code, message: e.message, sameClass: GpuError === AttnError };
  }
}
console.log(JSON.stringify(report));
`;

test('from the installed package: init() and every variant, on every build; wasm subpaths resolve', () => {
  assert.ok(project, 'needs the installed project from the previous test');
  writeFileSync(path.join(project, 'check.mjs'), CHECK_SCRIPT);
  const r = run(process.execPath, ['check.mjs'], project);
  assert.equal(r.status, 0, r.show);
  const report = JSON.parse(r.stdout.trim().split('\n').pop());
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(report.version, pkg.version, 'exported version equals package.json version');
  assert.equal(report.builds.false.build, 'scalar');
  assert.ok(['simd', 'relaxed'].includes(report.builds.true.build), `init({ simd: true }) loaded ${report.builds.true.build}`);
  const auto = report.builds.auto.build;
  assert.equal(auto, report.features.relaxedSimd ? 'relaxed' : 'simd', `init() picked ${auto} with features ${JSON.stringify(report.features)}`);
  const n = 9;
  const dv = 3;
  for (const [simd, entry] of Object.entries(report.builds)) {
    assert.equal(entry.version, pkg.version, `lab.version [${entry.build}]`);
    const ids = Object.keys(entry.variants).sort();
    assert.deepEqual(ids, [...VARIANT_IDS].sort(), `lab.variants of the installed package [${entry.build}] differs from dist/`);
    for (const [id, res] of Object.entries(entry.variants)) {
      for (const [kind, x] of Object.entries(res)) {
        const where = `installed package, init({ simd: ${simd} }) → ${entry.build}, ${id} n=${n} dv=${dv} ${kind}`;
        assert.ok(!x.error, `${where}: threw ${x.attnError ? 'AttnError' : 'error'} "${x.error}"`);
        assert.ok(x.isFloat32, `${where}: output is not a Float32Array`);
        assert.equal(x.length, n * dv, `${where}: output length`);
        assert.ok(x.finite, `${where}: output has non-finite values`);
        assert.equal(x.weightsLength, n * n, `${where}: weights length`);
        assert.ok(x.weightsFinite, `${where}: weights have non-finite values`);
      }
    }
  }
  assert.ok(report.model.after < report.model.before / 2, `a model trained through the package: loss ${report.model.before} -> ${report.model.after}`);
  assert.equal(report.reference, 1, 'attnlab/reference from the package');
  assert.equal(report.webgpu.code, 'UNSUPPORTED', `attnlab/webgpu in Node: ${JSON.stringify(report.webgpu)}`);
  assert.match(report.webgpu.message, /no navigator\.gpu/, 'attnlab/webgpu in Node says why');
  assert.ok(report.webgpu.sameClass, 'attnlab/webgpu throws the AttnError of attnlab');
  const installed = path.join(project, 'node_modules', 'attnlab');
  for (const [file, x] of Object.entries(report.resolve)) {
    if (file === 'main') {
      assert.deepEqual(report.corpus, { vocab: 63, characters: 4137847, heldOut: 202035, file: path.join(installed, 'dist', 'kjv.txt'), verses: 8 },
        'the corpus from the installed package');
      assert.ok(x.startsWith(installed), `attnlab resolves to ${x}, outside ${installed}`);
      continue;
    }
    assert.equal(x.viaImport, path.join(installed, 'dist', file), `import.meta.resolve('attnlab/${file}')`);
    assert.equal(x.viaRequire, x.viaImport, `require.resolve('attnlab/${file}')`);
    assert.equal(x.magic, '0061736d', `attnlab/${file} does not start with the wasm magic number`);
  }
});
